"""embervision.datasets on small files the tests write in the published formats; downloads
go through file:// URLs, so nothing touches the network."""

import gzip
import hashlib
import io
import os
import pickle
import tarfile
import zipfile

import numpy as np
import pytest
from PIL import Image

import ember
import embervision.datasets as D
from embervision.datasets import utils
from embervision.datasets.mnist import read_idx


def _md5(path):
    return hashlib.md5(open(path, "rb").read()).hexdigest()


# ----------------------------------------------------------------------------- folders

def _write_folder(root, layout):
    for cls, names in layout.items():
        os.makedirs(root / cls, exist_ok=True)
        for i, name in enumerate(names):
            Image.fromarray(np.full((4, 5, 3), i * 40, np.uint8)).save(root / cls / name)


def test_image_folder(tmp_path):
    _write_folder(tmp_path, {"dog": ["b.png", "a.jpg"], "cat": ["z.png"], "ant": ["x.bmp"]})
    (tmp_path / "dog" / "notes.txt").write_text("not an image")
    ds = D.ImageFolder(tmp_path)
    assert ds.classes == ["ant", "cat", "dog"]
    assert ds.class_to_idx == {"ant": 0, "cat": 1, "dog": 2}
    assert [os.path.basename(p) for p, _ in ds.samples] == ["x.bmp", "z.png", "a.jpg", "b.png"]
    assert ds.targets == [0, 1, 2, 2] and ds.imgs == ds.samples and len(ds) == 4
    img, target = ds[3]
    assert isinstance(img, Image.Image) and img.mode == "RGB" and target == 2
    only_png = D.ImageFolder(tmp_path, is_valid_file=lambda p: p.endswith(".png"),
                             allow_empty=True)
    assert len(only_png) == 2
    with pytest.raises(FileNotFoundError, match="ant"):
        D.ImageFolder(tmp_path, is_valid_file=lambda p: p.endswith(".png"))
    ds2 = D.ImageFolder(tmp_path, transform=lambda im: im.size, target_transform=lambda t: -t)
    assert ds2[0] == ((5, 4), 0)
    assert "Number of datapoints: 4" in repr(ds2)


def test_dataset_folder_and_errors(tmp_path):
    os.makedirs(tmp_path / "a")
    (tmp_path / "a" / "1.npy").write_bytes(b"x")
    ds = D.DatasetFolder(tmp_path, loader=lambda p: open(p, "rb").read(), extensions=(".npy",))
    assert ds[0] == (b"x", 0)
    with pytest.raises(ValueError, match="Both extensions and is_valid_file"):
        D.DatasetFolder(tmp_path, loader=open)
    with pytest.raises(FileNotFoundError, match="class folder"):
        D.ImageFolder(tmp_path / "a")
    with pytest.raises(ValueError, match="Only transforms"):
        D.VisionDataset(tmp_path, transforms=print, transform=print)


def test_fake_data_is_repeatable_and_leaves_the_global_rng():
    ds = D.FakeData(size=5, image_size=(3, 8, 6), num_classes=4)
    ember.manual_seed(0)
    before = ember.rand(1).item()
    ember.manual_seed(0)
    a, ta = ds[2]
    after = ember.rand(1).item()
    assert before == after
    b, tb = ds[2]
    assert np.array_equal(np.asarray(a), np.asarray(b)) and ta == tb and 0 <= ta < 4
    assert a.size == (6, 8) and len(ds) == 5
    with pytest.raises(IndexError):
        ds[5]


# ----------------------------------------------------------------------------- MNIST

def _idx_bytes(arr, code):
    header = bytes([0, 0, code, arr.ndim]) + np.array(arr.shape, ">i4").tobytes()
    return header + arr.astype(arr.dtype.newbyteorder(">")).tobytes()


def _gz(path, data):
    with gzip.open(path, "wb") as f:
        f.write(data)


def _mnist_mirror(tmp_path, n_train=6, n_test=3):
    rng = np.random.default_rng(0)
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    arrays = {}
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, n).astype(np.uint8)
        _gz(mirror / f"{prefix}-images-idx3-ubyte.gz", _idx_bytes(images, 0x08))
        _gz(mirror / f"{prefix}-labels-idx1-ubyte.gz", _idx_bytes(labels, 0x08))
        arrays[prefix] = (images, labels)
    return mirror, arrays


@pytest.mark.parametrize("cls", [D.MNIST, D.FashionMNIST, D.KMNIST])
def test_mnist_family_download_and_read(tmp_path, monkeypatch, cls):
    mirror, arrays = _mnist_mirror(tmp_path)
    resources = [(name, _md5(mirror / name)) for name, _ in cls.resources]
    monkeypatch.setattr(cls, "mirrors", ["http://127.0.0.1:9/unreachable/", mirror.as_uri() + "/"])
    monkeypatch.setattr(cls, "resources", resources)
    root = tmp_path / "data"
    with pytest.raises(RuntimeError, match="download=True"):
        cls(root)
    train = cls(root, download=True)
    assert len(train) == 6 and train.data.dtype == ember.uint8
    img, target = train[1]
    assert img.mode == "L" and img.size == (28, 28)
    np.testing.assert_array_equal(np.asarray(img), arrays["train"][0][1])
    assert target == int(arrays["train"][1][1]) and train.targets.dtype == ember.int64
    test = cls(root, train=False)
    np.testing.assert_array_equal(test.data.numpy(), arrays["t10k"][0])
    assert len(test.classes) == 10 and "Split: Test" in repr(test)


def test_mnist_corrupt_download_is_refused(tmp_path, monkeypatch):
    mirror, _ = _mnist_mirror(tmp_path)
    monkeypatch.setattr(D.MNIST, "mirrors", [mirror.as_uri() + "/"])
    monkeypatch.setattr(D.MNIST, "resources", [(n, "0" * 32) for n, _ in D.MNIST.resources])
    with pytest.raises(RuntimeError, match="corrupt or incomplete"):
        D.MNIST(tmp_path / "data", download=True)
    raw = tmp_path / "data" / "MNIST" / "raw"
    assert not any(raw.iterdir())


def test_read_idx_types_and_errors(tmp_path):
    arr = np.arange(12, dtype=np.int32).reshape(3, 4) - 5
    (tmp_path / "a").write_bytes(_idx_bytes(arr, 0x0C))
    np.testing.assert_array_equal(read_idx(tmp_path / "a").numpy(), arr)
    f = np.linspace(0, 1, 5).astype(np.float32)
    _gz(tmp_path / "f.gz", _idx_bytes(f, 0x0D))
    np.testing.assert_array_equal(read_idx(tmp_path / "f.gz").numpy(), f)
    (tmp_path / "bad").write_bytes(b"\x01\x02\x03\x04")
    with pytest.raises(RuntimeError, match="not an IDX file"):
        read_idx(tmp_path / "bad")
    (tmp_path / "short").write_bytes(_idx_bytes(arr, 0x0C)[:-4])
    with pytest.raises(RuntimeError, match="truncated"):
        read_idx(tmp_path / "short")


def test_emnist_from_zip(tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    images = rng.integers(0, 256, (4, 28, 28), dtype=np.uint8)
    labels = np.array([1, 2, 3, 4], np.uint8)
    zpath = tmp_path / "gzip.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        for kind in ("train", "test"):
            zf.writestr(f"gzip/emnist-letters-{kind}-images-idx3-ubyte.gz",
                        gzip.compress(_idx_bytes(images, 0x08)))
            zf.writestr(f"gzip/emnist-letters-{kind}-labels-idx1-ubyte.gz",
                        gzip.compress(_idx_bytes(labels, 0x08)))
    monkeypatch.setattr(D.EMNIST, "url", zpath.as_uri())
    monkeypatch.setattr(D.EMNIST, "md5", _md5(zpath))
    ds = D.EMNIST(tmp_path / "data", split="letters", download=True)
    np.testing.assert_array_equal(np.asarray(ds[0][0]), images[0].T)
    assert ds.classes[:3] == ["N/A", "a", "b"] and ds[2][1] == 3
    assert not (tmp_path / "data" / "EMNIST" / "raw" / "gzip").exists()
    with pytest.raises(ValueError, match="split"):
        D.EMNIST(tmp_path / "data", split="vowels")


def test_qmnist_subsets(tmp_path):
    raw = tmp_path / "QMNIST" / "raw"
    raw.mkdir(parents=True)
    images = np.random.default_rng(2).integers(0, 256, (12, 28, 28), dtype=np.uint8)
    labels = np.arange(96, dtype=np.int32).reshape(12, 8)
    (raw / "qmnist-test-images-idx3-ubyte").write_bytes(_idx_bytes(images, 0x08))
    (raw / "qmnist-test-labels-idx2-int").write_bytes(_idx_bytes(labels, 0x0C))
    ds = D.QMNIST(tmp_path, what="test")
    assert len(ds) == 12 and ds[1][1] == 8
    full = D.QMNIST(tmp_path, what="test", compat=False)
    np.testing.assert_array_equal(full[1][1].numpy(), labels[1])
    assert len(D.QMNIST(tmp_path, what="test10k")) == 12
    assert len(D.QMNIST(tmp_path, what="test50k")) == 0


# ----------------------------------------------------------------------------- CIFAR

def _cifar_archive(tmp_path, cls, n=4):
    rng = np.random.default_rng(3)
    folder = tmp_path / "build" / cls.base_folder
    folder.mkdir(parents=True)
    label_key = "labels" if cls is D.CIFAR10 else "fine_labels"
    expected = {}
    for name, _ in cls.train_list + cls.test_list:
        data = rng.integers(0, 256, (n, 3072), dtype=np.uint8)
        labels = rng.integers(0, 10, n).tolist()
        with open(folder / name, "wb") as f:
            pickle.dump({"batch_label": name, label_key: labels, "data": data}, f, protocol=2)
        expected[name] = (data, labels)
    names = [f"class{i}" for i in range(10 if cls is D.CIFAR10 else 100)]
    with open(folder / cls.meta["filename"], "wb") as f:
        pickle.dump({cls.meta["key"]: names}, f, protocol=2)
    archive = tmp_path / cls.filename
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder, arcname=cls.base_folder)
    md5s = {name: _md5(folder / name) for name, _ in cls.train_list + cls.test_list}
    return archive, md5s, _md5(folder / cls.meta["filename"]), expected, names


@pytest.mark.parametrize("cls", [D.CIFAR10, D.CIFAR100])
def test_cifar_download_and_read(tmp_path, monkeypatch, cls):
    archive, md5s, meta_md5, expected, names = _cifar_archive(tmp_path, cls)
    monkeypatch.setattr(cls, "url", archive.as_uri())
    monkeypatch.setattr(cls, "tgz_md5", _md5(archive))
    monkeypatch.setattr(cls, "train_list", [[n, md5s[n]] for n, _ in cls.train_list])
    monkeypatch.setattr(cls, "test_list", [[n, md5s[n]] for n, _ in cls.test_list])
    monkeypatch.setattr(cls, "meta", {**cls.meta, "md5": meta_md5})
    root = tmp_path / "root"
    with pytest.raises(RuntimeError, match="download=True"):
        cls(root)
    train = cls(root, download=True)
    first = cls.train_list[0][0]
    assert len(train) == 4 * len(cls.train_list) and train.classes == names
    img, target = train[1]
    np.testing.assert_array_equal(np.asarray(img),
                                  expected[first][0][1].reshape(3, 32, 32).transpose(1, 2, 0))
    assert target == expected[first][1][1]
    test = cls(root, train=False)
    assert len(test) == 4 and test.class_to_idx["class3"] == 3


def test_cifar_pickle_with_code_is_refused(tmp_path, monkeypatch):
    class Evil:
        def __reduce__(self):
            return (os.system, ("echo pwned > " + str(tmp_path / "pwned"),))

    folder = tmp_path / D.CIFAR10.base_folder
    folder.mkdir()
    lists = []
    for name, _ in D.CIFAR10.train_list + D.CIFAR10.test_list:
        with open(folder / name, "wb") as f:
            pickle.dump({"data": Evil(), "labels": []}, f, protocol=2)
        lists.append([name, _md5(folder / name)])
    monkeypatch.setattr(D.CIFAR10, "train_list", lists[:5])
    monkeypatch.setattr(D.CIFAR10, "test_list", lists[5:])
    with pytest.raises(RuntimeError, match="not allowed"):
        D.CIFAR10(tmp_path)
    assert not (tmp_path / "pwned").exists()


# ----------------------------------------------------------------------------- extraction

def _tar_with(path, member, linkname=None):
    with tarfile.open(path, "w") as tar:
        info = tarfile.TarInfo(member)
        if linkname is not None:
            info.type = tarfile.SYMTYPE
            info.linkname = linkname
            tar.addfile(info)
        else:
            info.size = 2
            tar.addfile(info, io.BytesIO(b"hi"))


@pytest.mark.parametrize("member, link", [("../evil.txt", None), ("/tmp/abs.txt", None),
                                          ("ok/../../evil.txt", None), ("link", "../../etc")])
def test_extract_refuses_paths_out_of_the_root(tmp_path, member, link):
    archive = tmp_path / "a.tar"
    _tar_with(archive, member, link)
    out = tmp_path / "out"
    with pytest.raises(RuntimeError, match="outside"):
        utils.extract_archive(archive, out)
    assert not (tmp_path / "evil.txt").exists()
    zpath = tmp_path / "a.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        zf.writestr("../evil.txt", "x")
    with pytest.raises(RuntimeError, match="outside"):
        utils.extract_archive(zpath, out)


def test_extract_archive_kinds(tmp_path):
    archive = tmp_path / "a.tgz"
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "f.txt").write_text("hello")
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tmp_path / "src" / "f.txt", arcname="d/f.txt")
    utils.extract_archive(archive, tmp_path / "out", remove_finished=True)
    assert (tmp_path / "out" / "d" / "f.txt").read_text() == "hello" and not archive.exists()
    _gz(tmp_path / "g.txt.gz", b"zz")
    assert open(utils.extract_archive(tmp_path / "g.txt.gz"), "rb").read() == b"zz"
    with pytest.raises(RuntimeError, match="Unknown compression"):
        utils.extract_archive(tmp_path / "x.rar")


def test_download_url_skips_a_verified_file(tmp_path):
    src = tmp_path / "s.bin"
    src.write_bytes(b"abc")
    utils.download_url(src.as_uri(), tmp_path / "d", md5=_md5(src))
    dest = tmp_path / "d" / "s.bin"
    assert dest.read_bytes() == b"abc" and utils.check_integrity(dest, _md5(src))
    src.write_bytes(b"changed")  # a second call must not fetch again
    utils.download_url(src.as_uri(), tmp_path / "d", md5=_md5(dest))
    assert dest.read_bytes() == b"abc"
    assert utils.verify_str_arg("a", "x", ("a", "b")) == "a"
    with pytest.raises(ValueError, match="Unknown value"):
        utils.verify_str_arg("c", "x", ("a", "b"))

"""ImageNet on a tiny devkit (a meta.mat written with SciPy) and tiny train/val archives in
the published layout."""

import hashlib
import io
import os
import tarfile

import numpy as np
import pytest
from PIL import Image

import ember
import embervision.datasets as D
from embervision.datasets import imagenet

# (ILSVRC2012_ID, WNID, words, num_children): three leaves (the classes) and an inner node
SYNSETS = [(1, "n01440764", "tench, Tinca tinca", 0),
           (2, "n01443537", "goldfish, Carassius auratus", 0),
           (3, "n01484850", "great white shark", 0),
           (1001, "n00001740", "entity", 3)]
VAL_IDS = [2, 1, 3, 2, 2]  # the ground-truth class ids of the five validation images
TRAIN_COUNTS = {"n01440764": 2, "n01443537": 1, "n01484850": 3}


def _md5(path):
    return hashlib.md5(open(path, "rb").read()).hexdigest()


def _jpeg(colour):
    buf = io.BytesIO()
    Image.new("RGB", (6, 4), colour).save(buf, "JPEG")
    return buf.getvalue()


def _add(tar, name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def write_meta_mat(path, synsets=SYNSETS):
    sio = pytest.importorskip("scipy.io")
    fields = ["ILSVRC2012_ID", "WNID", "words", "gloss", "num_children", "children",
              "wordnet_height", "num_train_images"]
    rec = np.zeros((len(synsets), 1), dtype=[(f, object) for f in fields])
    for i, (idx, wnid, words, n_children) in enumerate(synsets):
        rec[i, 0] = (np.array([[idx]], np.uint16), wnid, words, f"gloss of {wnid}",
                     np.array([[n_children]], np.uint8), np.zeros((1, n_children), np.uint16),
                     np.array([[0]], np.uint8), np.array([[1300]], np.uint16))
    sio.savemat(path, {"synsets": rec})


def write_archives(root, synsets=SYNSETS, val_ids=VAL_IDS):
    """The three archives in ``root``; ARCHIVE_META with their md5s."""
    root.mkdir(parents=True, exist_ok=True)
    devkit = root / "ILSVRC2012_devkit_t12.tar.gz"
    mat = root / "meta.mat.tmp"
    write_meta_mat(mat, synsets)
    with tarfile.open(devkit, "w:gz") as tar:
        _add(tar, "ILSVRC2012_devkit_t12/data/meta.mat", mat.read_bytes())
        _add(tar, "ILSVRC2012_devkit_t12/data/ILSVRC2012_validation_ground_truth.txt",
             "".join(f"{i}\n" for i in val_ids).encode())
        _add(tar, "ILSVRC2012_devkit_t12/COPYING", b"devkit")
    mat.unlink()
    train = root / "ILSVRC2012_img_train.tar"
    with tarfile.open(train, "w") as outer:
        for c, (wnid, n) in enumerate(TRAIN_COUNTS.items()):
            inner = io.BytesIO()
            with tarfile.open(fileobj=inner, mode="w") as tar:
                for k in range(n):
                    _add(tar, f"{wnid}_{k + 1}.JPEG", _jpeg((40 * c, 10 * k, 0)))
            _add(outer, f"{wnid}.tar", inner.getvalue())
    val = root / "ILSVRC2012_img_val.tar"
    with tarfile.open(val, "w") as tar:
        for k in range(len(val_ids)):
            _add(tar, f"ILSVRC2012_val_{k + 1:08d}.JPEG", _jpeg((0, 0, 40 * k)))
    return {"devkit": (devkit.name, _md5(devkit)), "train": (train.name, _md5(train)),
            "val": (val.name, _md5(val))}


@pytest.fixture
def archives(tmp_path, monkeypatch):
    meta = write_archives(tmp_path / "imagenet")
    for key, value in meta.items():
        monkeypatch.setitem(imagenet.ARCHIVE_META, key, value)
    return tmp_path / "imagenet"


def test_published_archive_names_and_md5s():
    assert imagenet.ARCHIVE_META == {
        "train": ("ILSVRC2012_img_train.tar", "1d675b47d978889d74fa0da5fadfb00e"),
        "val": ("ILSVRC2012_img_val.tar", "29b22e2961454d5413ddabcf34fc5622"),
        "devkit": ("ILSVRC2012_devkit_t12.tar.gz", "fa75699e90414af021442c21a62c3abf")}


def test_parse_devkit_archive_writes_a_safe_meta_file(archives):
    imagenet.parse_devkit_archive(archives)
    wnid_to_classes, val_wnids = ember.load(archives / "meta.bin", weights_only=True)
    assert wnid_to_classes == {"n01440764": ("tench", "Tinca tinca"),
                               "n01443537": ("goldfish", "Carassius auratus"),
                               "n01484850": ("great white shark",)}
    assert val_wnids == ["n01443537", "n01440764", "n01484850", "n01443537", "n01443537"]
    assert imagenet.load_meta_file(archives) == (wnid_to_classes, val_wnids)
    assert not any(name.startswith("ILSVRC2012_devkit_t12") and not name.endswith(".gz")
                   for name in os.listdir(archives))


def test_imagenet_train_and_val(archives):
    train = D.ImageNet(archives, split="train")
    assert train.wnids == sorted(TRAIN_COUNTS)
    assert train.wnid_to_idx == {w: i for i, w in enumerate(sorted(TRAIN_COUNTS))}
    assert train.classes == [("tench", "Tinca tinca"), ("goldfish", "Carassius auratus"),
                             ("great white shark",)]
    assert train.class_to_idx == {"tench": 0, "Tinca tinca": 0, "goldfish": 1,
                                  "Carassius auratus": 1, "great white shark": 2}
    assert len(train) == 6 and train.targets == [0, 0, 1, 2, 2, 2]
    assert train.root == str(archives) and train.split == "train"
    image, target = train[3]
    assert image.size == (6, 4) and target == 2
    assert os.path.basename(train.imgs[3][0]) == "n01484850_1.JPEG"
    assert sorted(os.listdir(archives / "train")) == sorted(TRAIN_COUNTS)  # inner tars removed
    assert "Split: train" in repr(train)

    val = D.ImageNet(archives, split="val", transform=lambda im: np.asarray(im)[0, 0, 2])
    assert len(val) == len(VAL_IDS) and val.wnids == train.wnids
    # ILSVRC2012_val_00000001.JPEG has ground truth 2 (goldfish), and so on
    by_name = {os.path.basename(p): t for p, t in val.samples}
    assert [by_name[f"ILSVRC2012_val_{k + 1:08d}.JPEG"] for k in range(5)] == \
        [i - 1 for i in VAL_IDS]
    assert abs(int(val[val.samples.index(
        (str(archives / "val" / "n01484850" / "ILSVRC2012_val_00000003.JPEG"), 2))][0])
        - 80) <= 3
    # a second use reads the extracted folders: the archives are no longer needed
    for name, _ in imagenet.ARCHIVE_META.values():
        os.remove(archives / name)
    assert len(D.ImageNet(archives, split="val")) == 5


def test_imagenet_errors(tmp_path, archives):
    with pytest.raises(ValueError, match="Unknown value 'test' for argument split"):
        D.ImageNet(archives, split="test")
    with pytest.raises(RuntimeError, match="ILSVRC2012_devkit_t12.tar.gz is not present in "
                                           "the root directory or is corrupted. You need to "
                                           "download it externally"):
        D.ImageNet(tmp_path / "empty")
    with pytest.raises(RuntimeError, match="meta file"):
        imagenet.load_meta_file(tmp_path / "empty")
    train = archives / "ILSVRC2012_img_train.tar"
    good = train.read_bytes()
    train.write_bytes(good + b"\0" * 512)  # not the published (here: the fixture's) md5
    with pytest.raises(RuntimeError, match="ILSVRC2012_img_train.tar is not present"):
        D.ImageNet(archives)
    assert not (archives / "train").exists()
    train.write_bytes(good)
    with pytest.raises(TypeError, match="download"):  # it never downloads
        D.ImageNet(archives, download=True)


def test_parse_val_archive_with_given_wnids_and_folder(archives):
    wnids = ["b", "a", "b", "c", "a"]
    imagenet.parse_val_archive(archives, wnids=wnids, folder="v2")
    assert sorted(os.listdir(archives / "v2")) == ["a", "b", "c"]
    assert sorted(os.listdir(archives / "v2" / "a")) == ["ILSVRC2012_val_00000002.JPEG",
                                                          "ILSVRC2012_val_00000005.JPEG"]
    imagenet.parse_train_archive(archives, folder="t2")
    assert sorted(os.listdir(archives / "t2" / "n01440764")) == ["n01440764_1.JPEG",
                                                                  "n01440764_2.JPEG"]


def test_a_meta_mat_without_synsets_is_refused(tmp_path, monkeypatch):
    sio = pytest.importorskip("scipy.io")
    root = tmp_path / "r"
    root.mkdir()
    sio.savemat(tmp_path / "meta.mat", {"other": np.ones(3)})
    devkit = root / "ILSVRC2012_devkit_t12.tar.gz"
    with tarfile.open(devkit, "w:gz") as tar:
        _add(tar, "ILSVRC2012_devkit_t12/data/meta.mat", (tmp_path / "meta.mat").read_bytes())
    monkeypatch.setitem(imagenet.ARCHIVE_META, "devkit", (devkit.name, _md5(devkit)))
    with pytest.raises(RuntimeError, match="no struct array 'synsets'"):
        imagenet.parse_devkit_archive(root)


def test_a_single_synset_devkit(tmp_path, monkeypatch):
    # squeeze_me turns a one-element struct array into a scalar record
    meta = write_archives(tmp_path / "one", synsets=SYNSETS[:1], val_ids=[1])
    monkeypatch.setitem(imagenet.ARCHIVE_META, "devkit", meta["devkit"])
    imagenet.parse_devkit_archive(tmp_path / "one")
    assert imagenet.load_meta_file(tmp_path / "one") == (
        {"n01440764": ("tench", "Tinca tinca")}, ["n01440764"])


def test_without_scipy_the_devkit_error_says_so(tmp_path, monkeypatch):
    import sys

    root = tmp_path / "r"
    root.mkdir()
    devkit = root / "ILSVRC2012_devkit_t12.tar.gz"
    with tarfile.open(devkit, "w:gz") as tar:
        _add(tar, "ILSVRC2012_devkit_t12/data/meta.mat", b"MATLAB 5.0 MAT-file")
    monkeypatch.setitem(imagenet.ARCHIVE_META, "devkit", (devkit.name, _md5(devkit)))
    monkeypatch.setitem(sys.modules, "scipy", None)
    with pytest.raises(ImportError, match="needs SciPy"):
        D.ImageNet(root)

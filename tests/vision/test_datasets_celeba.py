"""CelebA on small files in the published formats, and the Google Drive download it uses,
against a stand-in for Drive on 127.0.0.1."""

import hashlib
import io
import os
import zipfile

import numpy as np
import pytest
from PIL import Image

import ember
import embervision.datasets as D
from embervision import _download
from embervision.datasets import utils

from ._gdrive import FakeDrive

ATTR_NAMES = [f"Attr_{i}" for i in range(40)]
SPLITS = [0, 0, 1, 2, 0, 1, 2]  # train 3, valid 2, test 2


def _md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def celeba_files(seed=0):
    """name -> bytes of the CelebA files for ``len(SPLITS)`` images, and the values written."""
    rng = np.random.default_rng(seed)
    n = len(SPLITS)
    names = [f"{i + 1:06d}.jpg" for i in range(n)]
    attr = rng.choice([-1, 1], (n, 40))
    identity = rng.integers(1, 10178, n)
    bbox = rng.integers(0, 500, (n, 4))
    landmarks = rng.integers(0, 218, (n, 10))
    colours = rng.integers(0, 256, (n, 3))

    def rows(values, width):
        # the files' layout: the name, then right-aligned numbers
        return "".join(name + "".join(f"{v:>{width}d}" for v in np.atleast_1d(row)) + "\n"
                       for name, row in zip(names, values))

    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        for name, colour in zip(names, colours):
            buf = io.BytesIO()
            Image.new("RGB", (12, 10), tuple(int(c) for c in colour)).save(buf, "JPEG")
            zf.writestr(f"img_align_celeba/{name}", buf.getvalue())
    files = {
        "img_align_celeba.zip": archive.getvalue(),
        "list_attr_celeba.txt": f"{n}\n{' '.join(ATTR_NAMES)} \n{rows(attr, 3)}",
        "identity_CelebA.txt": "".join(f"{name} {i}\n" for name, i in zip(names, identity)),
        "list_bbox_celeba.txt": f"{n}\nimage_id x_1 y_1 width height\n{rows(bbox, 5)}",
        "list_landmarks_align_celeba.txt": (
            f"{n}\nlefteye_x lefteye_y righteye_x righteye_y nose_x nose_y leftmouth_x "
            f"leftmouth_y rightmouth_x rightmouth_y\n{rows(landmarks, 5)}"),
        "list_eval_partition.txt": "".join(f"{name} {s}\n" for name, s in zip(names, SPLITS)),
    }
    files = {k: v.encode() if isinstance(v, str) else v for k, v in files.items()}
    values = dict(names=names, attr=attr, identity=identity, bbox=bbox, landmarks=landmarks,
                  colours=colours)
    return files, values


def write_celeba(root, files, monkeypatch):
    """The files under ``root/celeba``, the images extracted, and ``CelebA.file_list`` with
    the files' md5s in place of the published ones."""
    folder = root / "celeba"
    folder.mkdir(parents=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    utils.extract_archive(folder / "img_align_celeba.zip", remove_finished=True)
    monkeypatch.setattr(D.CelebA, "file_list",
                        [(f"id_{name}", _md5(data), name) for name, data in files.items()])


@pytest.fixture
def drive(monkeypatch):
    with FakeDrive() as fake:
        monkeypatch.setattr(_download, "GOOGLE_DRIVE_URL", fake.base + "/uc")
        yield fake


def _serve_celeba(drive, monkeypatch, files, ways):
    file_list = []
    for i, (name, data) in enumerate(files.items()):
        file_id = f"id{i}_{name.split('.')[0]}"
        drive.files[file_id] = (data, ways.get(name, "direct"))
        file_list.append((file_id, _md5(data), name))
    monkeypatch.setattr(D.CelebA, "file_list", file_list)
    return file_list


# ----------------------------------------------------------------------- Google Drive


@pytest.mark.parametrize("way", ["direct", "form", "cookie", "title"])
def test_google_drive_download_answers_the_confirmation(tmp_path, drive, way):
    data = os.urandom(1536 * 1024)  # more than the first read, which is looked at
    drive.files["abc"] = (data, way)
    utils.download_file_from_google_drive("abc", tmp_path / "d", "f.bin", _md5(data))
    assert (tmp_path / "d" / "f.bin").read_bytes() == data
    assert not (tmp_path / "d" / "f.bin.partial").exists()
    assert drive.requests[0] == ("/uc", {"id": "abc", "export": "download"})
    assert len(drive.requests) == (1 if way == "direct" else 2)
    if way == "form":
        assert drive.requests[1] == ("/download", {"id": "abc", "export": "download",
                                                   "confirm": "t", "uuid": "0f1e2d3c"})
    elif way == "cookie":
        assert drive.requests[1][1]["confirm"] == "Xy7_token"
    # a verified file is not fetched again
    utils.download_file_from_google_drive("abc", tmp_path / "d", "f.bin", _md5(data))
    assert len(drive.requests) == (1 if way == "direct" else 2)


def test_google_drive_filename_defaults_to_the_id_and_md5_is_optional(tmp_path, drive):
    drive.files["xyz"] = (b"hello", "form")
    utils.download_file_from_google_drive("xyz", str(tmp_path))
    assert (tmp_path / "xyz").read_bytes() == b"hello"


def test_google_drive_bad_md5_is_refetched_or_raised(tmp_path, drive):
    data = b"the real contents"
    drive.files["abc"] = (data, "form")
    target = tmp_path / "f.bin"
    target.write_bytes(b"stale")  # a file with the wrong md5 is fetched again
    utils.download_file_from_google_drive("abc", tmp_path, "f.bin", _md5(data))
    assert target.read_bytes() == data and len(drive.requests) == 2
    with pytest.raises(RuntimeError, match="corrupt or incomplete"):
        utils.download_file_from_google_drive("abc", tmp_path, "g.bin", "0" * 32)
    assert not (tmp_path / "g.bin").exists() and not (tmp_path / "g.bin.partial").exists()


@pytest.mark.parametrize("way, message", [
    ("quota", "daily quota of the file f.bin"),
    ("page", r"page \('Google Drive - Sign-in'\) instead of")])
def test_google_drive_pages_in_place_of_the_file_raise(tmp_path, drive, way, message):
    drive.files["abc"] = (b"data", way)
    with pytest.raises(RuntimeError, match=message):
        utils.download_file_from_google_drive("abc", tmp_path, "f.bin")
    assert os.listdir(tmp_path) == []


def test_google_drive_download_errors(tmp_path, drive):
    import urllib.error

    with pytest.raises(urllib.error.HTTPError):  # Drive knows no such file
        utils.download_file_from_google_drive("missing", tmp_path, "f.bin")
    assert os.listdir(tmp_path) == []


def test_the_page_parser_reads_title_and_forms():
    page = _download._DrivePage()
    page.feed('<html><head><title> Google Drive -\n Virus scan warning</title></head>'
              '<form id="other" action="/x"><input name="a" value="1"></form>'
              '<form id="download-form" action="https://h/download">'
              '<input type="hidden" name="confirm" value="t"><input name="empty"></form>')
    assert " ".join(page.title.split()) == "Google Drive - Virus scan warning"
    assert page.forms == [("other", "/x", {"a": "1"}),
                          ("download-form", "https://h/download", {"confirm": "t", "empty": ""})]


# ----------------------------------------------------------------------------- CelebA


def test_celeba_targets_and_splits(tmp_path, monkeypatch):
    files, v = celeba_files()
    write_celeba(tmp_path, files, monkeypatch)
    ds = D.CelebA(tmp_path, split="train", target_type="attr")
    train = [i for i, s in enumerate(SPLITS) if s == 0]
    assert len(ds) == 3 and ds.filename == [v["names"][i] for i in train]
    assert ds.attr_names == ATTR_NAMES
    image, attr = ds[1]
    assert image.size == (12, 10) and image.mode == "RGB"
    np.testing.assert_allclose(np.asarray(image.convert("RGB")).mean((0, 1)),
                               v["colours"][train[1]], atol=3)
    assert attr.dtype == ember.int64 and tuple(attr.shape) == (40,)
    np.testing.assert_array_equal(attr.numpy(), (v["attr"][train[1]] + 1) // 2)
    assert set(np.unique(ds.attr.numpy())) <= {0, 1}

    ds = D.CelebA(tmp_path, split="all", target_type=["identity", "bbox", "landmarks", "attr"])
    assert len(ds) == len(SPLITS) and ds.filename == v["names"]
    for i in range(len(ds)):
        _, (identity, bbox, landmarks, attr) = ds[i]
        assert identity.dim() == 0 and int(identity) == v["identity"][i]
        np.testing.assert_array_equal(bbox.numpy(), v["bbox"][i])
        np.testing.assert_array_equal(landmarks.numpy(), v["landmarks"][i])
        np.testing.assert_array_equal(attr.numpy(), (v["attr"][i] + 1) // 2)
    assert ds.bbox.dtype == ember.int64 and tuple(ds.landmarks_align.shape) == (7, 10)
    for split, n in (("valid", 2), ("test", 2), ("TRAIN", 3)):
        assert len(D.CelebA(tmp_path, split=split)) == n
    _, bbox = D.CelebA(tmp_path, split="test", target_type="bbox")[1]
    np.testing.assert_array_equal(bbox.numpy(), v["bbox"][6])


def test_celeba_transforms_empty_target_and_repr(tmp_path, monkeypatch):
    files, v = celeba_files()
    write_celeba(tmp_path, files, monkeypatch)
    ds = D.CelebA(tmp_path, split="valid", target_type=[],
                  transform=lambda im: np.asarray(im).shape)
    assert ds[0] == ((10, 12, 3), None)
    ds = D.CelebA(tmp_path, target_type="identity", target_transform=lambda t: int(t) + 1)
    assert ds[0][1] == v["identity"][0] + 1
    with pytest.raises(RuntimeError, match="target_type is empty"):
        D.CelebA(tmp_path, target_type=[], target_transform=int)
    text = repr(D.CelebA(tmp_path, split="test", target_type=["attr", "bbox"]))
    assert "Number of datapoints: 2" in text and "Target type: ['attr', 'bbox']" in text
    assert "Split: test" in text


def test_celeba_errors(tmp_path, monkeypatch):
    with pytest.raises(RuntimeError, match="download=True"):
        D.CelebA(tmp_path)
    files, _ = celeba_files()
    write_celeba(tmp_path, files, monkeypatch)
    with pytest.raises(ValueError, match="Unknown value 'training' for argument split"):
        D.CelebA(tmp_path, split="training")
    ds = D.CelebA(tmp_path, target_type="landmark")
    with pytest.raises(ValueError, match="argument target_type"):
        ds[0]
    # a hand-edited annotation file does not pass the md5 check
    with open(tmp_path / "celeba" / "identity_CelebA.txt", "a") as f:
        f.write("000008.jpg 1\n")
    with pytest.raises(RuntimeError, match="Dataset not found or corrupted"):
        D.CelebA(tmp_path)


def test_celeba_reader_checks_its_files(tmp_path, monkeypatch):
    files, _ = celeba_files()
    files["list_bbox_celeba.txt"] = files["list_bbox_celeba.txt"].replace(b"000002.jpg",
                                                                          b"000009.jpg")
    write_celeba(tmp_path, files, monkeypatch)
    monkeypatch.setattr(D.CelebA, "file_list", [("", None, n) for n in files])  # no md5s
    with pytest.raises(RuntimeError, match="list_bbox_celeba.txt does not list the images"):
        D.CelebA(tmp_path)
    bad = files["list_eval_partition.txt"].replace(b"000003.jpg 1", b"000003.jpg x")
    (tmp_path / "celeba" / "list_eval_partition.txt").write_bytes(bad)
    with pytest.raises(RuntimeError, match="list_eval_partition.txt: invalid literal"):
        D.CelebA(tmp_path)


def test_celeba_download(tmp_path, drive, monkeypatch):
    files, v = celeba_files()
    _serve_celeba(drive, monkeypatch, files, {"img_align_celeba.zip": "form",
                                              "list_attr_celeba.txt": "cookie"})
    ds = D.CelebA(tmp_path, split="all", target_type=["attr", "identity"], download=True)
    assert len(ds) == len(SPLITS) and ds.attr_names == ATTR_NAMES
    assert sorted(os.listdir(tmp_path / "celeba" / "img_align_celeba")) == v["names"]
    _, (attr, identity) = ds[3]
    np.testing.assert_array_equal(attr.numpy(), (v["attr"][3] + 1) // 2)
    assert int(identity) == v["identity"][3]
    n = len(drive.requests)
    assert n == 6 + 2  # two confirmation pages
    D.CelebA(tmp_path, download=True)  # everything is there: nothing is fetched
    assert len(drive.requests) == n
    # a corrupted annotation file is fetched again
    (tmp_path / "celeba" / "list_bbox_celeba.txt").write_text("corrupt")
    D.CelebA(tmp_path, download=True)
    assert (tmp_path / "celeba" / "list_bbox_celeba.txt").read_bytes() == \
        files["list_bbox_celeba.txt"]


def test_celeba_download_with_a_wrong_md5_raises(tmp_path, drive, monkeypatch):
    files, _ = celeba_files()
    file_list = _serve_celeba(drive, monkeypatch, files, {})
    file_list[2] = (file_list[2][0], "0" * 32, file_list[2][2])
    with pytest.raises(RuntimeError, match="corrupt or incomplete"):
        D.CelebA(tmp_path, download=True)
    assert not (tmp_path / "celeba" / file_list[2][2]).exists()


def test_celeba_with_no_images(tmp_path, monkeypatch):
    folder = tmp_path / "celeba"
    (folder / "img_align_celeba").mkdir(parents=True)
    headers = {"list_attr_celeba.txt": f"0\n{' '.join(ATTR_NAMES)}\n",
               "list_bbox_celeba.txt": "0\nimage_id x_1 y_1 width height\n",
               "list_landmarks_align_celeba.txt": "0\nlefteye_x lefteye_y\n",
               "identity_CelebA.txt": "", "list_eval_partition.txt": ""}
    for name, text in headers.items():
        (folder / name).write_text(text)
    monkeypatch.setattr(D.CelebA, "file_list", [("", None, n) for n in headers])
    for split in ("train", "all"):
        ds = D.CelebA(tmp_path, split=split, target_type=["attr", "bbox"])
        assert len(ds) == 0 and ds.filename == [] and ds.attr_names == ATTR_NAMES
        assert tuple(ds.attr.shape)[0] == 0

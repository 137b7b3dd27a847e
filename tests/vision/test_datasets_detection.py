"""STL10, Food101, OxfordIIITPet, VOCDetection / VOCSegmentation, CocoDetection / CocoCaptions,
read offline from small files the tests write in the published layouts."""

import json

import numpy as np
import pytest
from PIL import Image

from embervision import datasets as D


def _jpg(path, color, size=(6, 4)):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, color).save(path)


def test_stl10(tmp_path, monkeypatch):
    base = tmp_path / "stl10_binary"
    base.mkdir()
    rng = np.random.default_rng(0)
    # Column-major 3x96x96 images, as in the binary release; labels 1-based.
    train = rng.integers(0, 256, (4, 3, 96, 96), dtype=np.uint8)
    test = rng.integers(0, 256, (2, 3, 96, 96), dtype=np.uint8)
    unlabeled = rng.integers(0, 256, (3, 3, 96, 96), dtype=np.uint8)
    for name, arr in (("train_X.bin", train), ("test_X.bin", test),
                      ("unlabeled_X.bin", unlabeled)):
        arr.transpose(0, 1, 3, 2).tofile(base / name)
    np.array([1, 10, 3, 4], np.uint8).tofile(base / "train_y.bin")
    np.array([2, 5], np.uint8).tofile(base / "test_y.bin")
    (base / "class_names.txt").write_text("\n".join(f"c{i}" for i in range(10)))
    (base / "fold_indices.txt").write_text("0 2\n1 3\n" + "0\n" * 8)
    with pytest.raises(RuntimeError, match="not found or corrupted"):
        D.STL10(tmp_path)  # the md5s of the real files do not match these
    # Without the md5s, the files written above are read.
    monkeypatch.setattr(D.STL10, "train_list", [[n, None] for n, _ in D.STL10.train_list])
    monkeypatch.setattr(D.STL10, "test_list", [[n, None] for n, _ in D.STL10.test_list])
    ds = D.STL10(tmp_path, split="train")
    img, label = ds[1]
    assert len(ds) == 4 and label == 9 and img.size == (96, 96)
    np.testing.assert_array_equal(np.asarray(img), train[1].transpose(1, 2, 0))
    assert ds.classes[9] == "c9"
    fold = D.STL10(tmp_path, split="train", folds=1)
    assert [t for _, t in fold] == [9, 3]
    both = D.STL10(tmp_path, split="train+unlabeled")
    assert len(both) == 7 and both[6][1] == -1
    assert [t for _, t in D.STL10(tmp_path, split="test")] == [1, 4]
    with pytest.raises(ValueError, match="folds"):
        D.STL10(tmp_path, folds=10)
    with pytest.raises(ValueError, match="split"):
        D.STL10(tmp_path, split="val")


def test_food101(tmp_path):
    base = tmp_path / "food-101"
    meta = {"train": {"pizza": ["pizza/1", "pizza/2"], "apple_pie": ["apple_pie/7"]},
            "test": {"pizza": ["pizza/3"], "apple_pie": []}}
    (base / "meta").mkdir(parents=True)
    for split, content in meta.items():
        (base / "meta" / f"{split}.json").write_text(json.dumps(content))
        for paths in content.values():
            for p in paths:
                _jpg(base / "images" / f"{p}.jpg", (10, 20, 30))
    ds = D.Food101(tmp_path, split="train", transform=lambda im: im.size)
    assert ds.classes == ["apple_pie", "pizza"] and len(ds) == 3
    assert sorted(t for _, t in ds) == [0, 1, 1] and ds[0][0] == (6, 4)
    assert len(D.Food101(tmp_path, split="test")) == 1
    with pytest.raises(RuntimeError, match="not found"):
        D.Food101(tmp_path / "missing")


def test_oxford_iiit_pet(tmp_path):
    base = tmp_path / "oxford-iiit-pet"
    (base / "annotations" / "trimaps").mkdir(parents=True)
    lines = ["Abyssinian_1 1 1 1", "american_bulldog_10 2 2 1", "Abyssinian_2 1 1 1"]
    (base / "annotations" / "trainval.txt").write_text("\n".join(lines) + "\n")
    (base / "annotations" / "test.txt").write_text(lines[1] + "\n")
    for line in lines:
        image_id = line.split()[0]
        _jpg(base / "images" / f"{image_id}.jpg", (1, 2, 3))
        Image.fromarray(np.full((4, 6), 2, np.uint8)).save(
            base / "annotations" / "trimaps" / f"{image_id}.png")
    ds = D.OxfordIIITPet(tmp_path)
    assert ds.classes == ["Abyssinian", "American Bulldog"] and len(ds) == 3
    assert [t for _, t in ds] == [0, 1, 0]
    ds = D.OxfordIIITPet(tmp_path, split="test",
                         target_types=["binary-category", "segmentation", "category"])
    img, (binary, seg, cat) = ds[0]
    assert img.mode == "RGB" and binary == 1 and cat == 1 and np.asarray(seg).max() == 2
    assert D.OxfordIIITPet(tmp_path, target_types=[])[0][1] is None
    with pytest.raises(ValueError, match="target_types"):
        D.OxfordIIITPet(tmp_path, target_types="breed")


_XML = """<annotation><folder>VOC2012</folder><filename>{name}.jpg</filename>
<size><width>6</width><height>4</height><depth>3</depth></size>{objects}</annotation>"""
_OBJ = ("<object><name>{cls}</name><difficult>0</difficult><bndbox><xmin>1</xmin><ymin>1</ymin>"
        "<xmax>4</xmax><ymax>3</ymax></bndbox></object>")


def test_voc_detection_and_segmentation(tmp_path):
    voc = tmp_path / "VOCdevkit" / "VOC2012"
    (voc / "ImageSets" / "Main").mkdir(parents=True)
    (voc / "ImageSets" / "Segmentation").mkdir(parents=True)
    (voc / "Annotations").mkdir()
    (voc / "SegmentationClass").mkdir()
    (voc / "ImageSets" / "Main" / "train.txt").write_text("a\nb\n")
    (voc / "ImageSets" / "Segmentation" / "val.txt").write_text("b\n")
    for name, objects in (("a", ["dog"]), ("b", ["cat", "person"])):
        _jpg(voc / "JPEGImages" / f"{name}.jpg", (5, 5, 5))
        xml = _XML.format(name=name, objects="".join(_OBJ.format(cls=c) for c in objects))
        (voc / "Annotations" / f"{name}.xml").write_text(xml)
        mask = Image.fromarray(np.array([[0, 1, 255, 0, 0, 0]] * 4, np.uint8), "L").convert("P")
        mask.save(voc / "SegmentationClass" / f"{name}.png")
    det = D.VOCDetection(tmp_path, image_set="train")
    img, target = det[0]
    ann = target["annotation"]
    assert len(det) == 2 and img.size == (6, 4) and ann["filename"] == "a.jpg"
    assert [o["name"] for o in ann["object"]] == ["dog"]
    assert ann["object"][0]["bndbox"] == {"xmin": "1", "ymin": "1", "xmax": "4", "ymax": "3"}
    assert [o["name"] for o in det[1][1]["annotation"]["object"]] == ["cat", "person"]
    seg = D.VOCSegmentation(tmp_path, image_set="val")
    img, mask = seg[0]
    assert len(seg) == 1 and mask.mode == "P" and np.asarray(mask)[0, 2] == 255
    with pytest.raises(ValueError, match="image_set"):
        D.VOCDetection(tmp_path, image_set="test")
    with pytest.raises(RuntimeError, match="not found"):
        D.VOCDetection(tmp_path, year="2011")


def test_coco_detection_and_captions(tmp_path):
    _jpg(tmp_path / "img" / "2.jpg", (9, 9, 9))
    _jpg(tmp_path / "img" / "1.jpg", (1, 1, 1), size=(3, 5))
    ann = {"images": [{"id": 2, "file_name": "2.jpg"}, {"id": 1, "file_name": "1.jpg"}],
           "annotations": [
               {"id": 10, "image_id": 2, "bbox": [0, 0, 2, 2], "category_id": 3,
                "caption": "a grey square"},
               {"id": 11, "image_id": 1, "bbox": [1, 1, 1, 1], "category_id": 1,
                "caption": "dark"},
               {"id": 12, "image_id": 2, "bbox": [1, 0, 1, 1], "category_id": 1,
                "caption": "still grey"}],
           "categories": [{"id": 1, "name": "a"}, {"id": 3, "name": "c"}]}
    path = tmp_path / "ann.json"
    path.write_text(json.dumps(ann))
    det = D.CocoDetection(tmp_path / "img", str(path))
    assert len(det) == 2 and det.ids == [1, 2]
    img, target = det[1]
    assert img.size == (6, 4) and [a["id"] for a in target] == [10, 12]
    assert det[0][0].size == (3, 5) and det.cats[3]["name"] == "c"
    caps = D.CocoCaptions(tmp_path / "img", str(path))
    assert caps[1][1] == ["a grey square", "still grey"]
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(RuntimeError, match="could not parse"):
        D.CocoDetection(tmp_path, str(bad))


def test_voc_download_from_a_mirror(tmp_path, monkeypatch):
    import hashlib
    import tarfile

    from embervision.datasets import voc

    src = tmp_path / "src"
    base = src / "VOCdevkit" / "VOC2007"
    (base / "ImageSets" / "Segmentation").mkdir(parents=True)
    (base / "ImageSets" / "Segmentation" / "test.txt").write_text("x\n")
    _jpg(base / "JPEGImages" / "x.jpg", (0, 0, 0))
    (base / "SegmentationClass").mkdir()
    Image.new("P", (6, 4)).save(base / "SegmentationClass" / "x.png")
    archive = tmp_path / "VOCtest_06-Nov-2007.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(src / "VOCdevkit", arcname="VOCdevkit")
    md5 = hashlib.md5(archive.read_bytes()).hexdigest()
    entry = dict(voc.DATASET_YEAR_DICT["2007-test"], url=archive.as_uri(), md5=md5)
    monkeypatch.setitem(voc.DATASET_YEAR_DICT, "2007-test", entry)
    ds = D.VOCSegmentation(tmp_path / "data", year="2007", image_set="test", download=True)
    assert len(ds) == 1 and ds[0][0].size == (6, 4)
    bad = dict(entry, md5="0" * 32)
    monkeypatch.setitem(voc.DATASET_YEAR_DICT, "2007-test", bad)
    with pytest.raises(RuntimeError):
        D.VOCSegmentation(tmp_path / "other", year="2007", image_set="test", download=True)


def test_svhn(tmp_path, monkeypatch):
    sio = pytest.importorskip("scipy.io")
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (32, 32, 3, 4), dtype=np.uint8)  # (H, W, C, N) as in the files
    y = np.array([[10], [1], [9], [10]], np.uint8)
    sio.savemat(tmp_path / "test_32x32.mat", {"X": x, "y": y})
    with pytest.raises(RuntimeError, match="not found or corrupted"):
        D.SVHN(tmp_path, split="test")
    monkeypatch.setitem(D.SVHN.split_list, "test", ["unused", "test_32x32.mat", None])
    ds = D.SVHN(tmp_path, split="test")
    assert len(ds) == 4 and [t for _, t in ds] == [0, 1, 9, 0]
    np.testing.assert_array_equal(np.asarray(ds[2][0]), x[:, :, :, 2])
    (tmp_path / "test_32x32.mat").write_bytes(b"not a mat file")
    with pytest.raises(RuntimeError, match="MATLAB"):
        D.SVHN(tmp_path, split="test")


def test_flowers102(tmp_path, monkeypatch):
    sio = pytest.importorskip("scipy.io")
    base = tmp_path / "flowers-102"
    for i in range(1, 6):
        _jpg(base / "jpg" / f"image_{i:05d}.jpg", (i, i, i))
    sio.savemat(base / "imagelabels.mat", {"labels": np.array([[3, 1, 102, 3, 2]], np.uint8)})
    sio.savemat(base / "setid.mat", {"trnid": np.array([[1, 3]], np.uint16),
                                     "valid": np.array([[2]], np.uint16),
                                     "tstid": np.array([[5, 4]], np.uint16)})
    monkeypatch.setattr(D.Flowers102, "_file_dict", {
        "image": ("102flowers.tgz", None), "label": ("imagelabels.mat", None),
        "setid": ("setid.mat", None)})
    train = D.Flowers102(tmp_path)
    assert [t for _, t in train] == [2, 101] and len(train) == 2
    assert [t for _, t in D.Flowers102(tmp_path, split="val")] == [0]
    test = D.Flowers102(tmp_path, split="test", transform=lambda im: np.asarray(im)[0, 0, 0])
    assert [int(im) for im, _ in test] == [5, 4]

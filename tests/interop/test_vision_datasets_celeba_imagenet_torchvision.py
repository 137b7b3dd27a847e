"""CelebA and ImageNet read the same small files as torchvision 0.29 does and give the same
samples, targets and class tables; ImageNet's meta.bin crosses between ember and torch
(``nox -s vision_torch``). The files are the ones tests/vision writes."""

import os
import shutil
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")

import ember  # noqa: E402
import embervision.datasets as D  # noqa: E402
from embervision.datasets import imagenet  # noqa: E402

# tests/vision's builders of the published file formats (the package ``vision`` under tests/)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from vision import test_datasets_celeba as celeba_files  # noqa: E402
from vision import test_datasets_imagenet as imagenet_files  # noqa: E402


@pytest.mark.parametrize("split", ["train", "valid", "test", "all"])
def test_celeba_agrees(tmp_path, monkeypatch, split):
    files, _ = celeba_files.celeba_files()
    celeba_files.write_celeba(tmp_path, files, monkeypatch)
    monkeypatch.setattr(torchvision.datasets.CelebA, "file_list", D.CelebA.file_list)
    kinds = ["attr", "identity", "bbox", "landmarks"]
    ref = torchvision.datasets.CelebA(tmp_path, split=split, target_type=kinds)
    out = D.CelebA(tmp_path, split=split, target_type=kinds)
    assert len(out) == len(ref) and out.filename == list(ref.filename)
    assert out.attr_names[:40] == ref.attr_names[:40]
    for name in ("attr", "identity", "bbox", "landmarks_align"):
        np.testing.assert_array_equal(getattr(out, name).numpy(), getattr(ref, name).numpy())
    for i in range(len(ref)):
        (ref_image, ref_target), (image, target) = ref[i], out[i]
        np.testing.assert_array_equal(np.asarray(image), np.asarray(ref_image))
        for a, b in zip(target, ref_target):
            assert tuple(a.shape) == tuple(b.shape) and a.numpy().dtype == b.numpy().dtype
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_imagenet_agrees_and_meta_files_cross(tmp_path, monkeypatch):
    from torchvision.datasets import imagenet as tv_imagenet

    meta = imagenet_files.write_archives(tmp_path / "ours")
    shutil.copytree(tmp_path / "ours", tmp_path / "ref")
    for key, value in meta.items():
        monkeypatch.setitem(imagenet.ARCHIVE_META, key, value)
        monkeypatch.setitem(tv_imagenet.ARCHIVE_META, key, value)
    for split in ("train", "val"):
        ref = torchvision.datasets.ImageNet(tmp_path / "ref", split=split)
        out = D.ImageNet(tmp_path / "ours", split=split)
        assert (out.wnids, out.wnid_to_idx, out.classes, out.class_to_idx, out.targets) == (
            ref.wnids, ref.wnid_to_idx, ref.classes, ref.class_to_idx, ref.targets)
        assert [os.path.relpath(p, tmp_path / "ours") for p, _ in out.samples] == \
            [os.path.relpath(p, tmp_path / "ref") for p, _ in ref.samples]
    # each library's meta.bin loads in the other, with weights_only=True
    ours = ember.load(tmp_path / "ref" / "meta.bin", weights_only=True)
    theirs = torch.load(tmp_path / "ours" / "meta.bin", weights_only=True)
    assert ours == theirs == tv_imagenet.load_meta_file(tmp_path / "ref")

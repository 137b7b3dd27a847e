"""ImageNet 2012 classification (ILSVRC2012): 1.28 million training and 50,000 validation
images in 1,000 classes, read from the archives that image-net.org hands out."""

from __future__ import annotations

import os
import shutil
import tempfile

import numpy as np

import ember
from embervision.datasets._mat import loadmat
from embervision.datasets.folder import ImageFolder
from embervision.datasets.utils import check_integrity, extract_archive, verify_str_arg

__all__ = [
    "ImageNet",
    "load_meta_file",
    "parse_devkit_archive",
    "parse_train_archive",
    "parse_val_archive",
]

ARCHIVE_META = {
    "train": ("ILSVRC2012_img_train.tar", "1d675b47d978889d74fa0da5fadfb00e"),
    "val": ("ILSVRC2012_img_val.tar", "29b22e2961454d5413ddabcf34fc5622"),
    "devkit": ("ILSVRC2012_devkit_t12.tar.gz", "fa75699e90414af021442c21a62c3abf"),
}

META_FILE = "meta.bin"


class ImageNet(ImageFolder):
    """`ImageNet <https://image-net.org/>`_ 2012 classification.

    The dataset is not downloaded: get ``ILSVRC2012_devkit_t12.tar.gz`` and
    ``ILSVRC2012_img_train.tar`` and/or ``ILSVRC2012_img_val.tar`` from image-net.org and put
    them in ``root``. The first use of a split extracts its archive into ``root/<split>``
    (one folder per WordNet id) and the devkit's class names into ``root/meta.bin``; reading
    the devkit's ``meta.mat`` needs SciPy.

    Args:
        root (str or ``pathlib.Path``): the folder of the archives.
        split (str): ``"train"`` or ``"val"``. Default: ``"train"``.
        **kwargs: :class:`ImageFolder`'s ``transform``, ``target_transform``, ``loader``,
            ``is_valid_file`` and ``allow_empty``.

    Attributes:
        classes (list): the class names of each class, a tuple of synonyms each.
        class_to_idx (dict): each synonym -> class index.
        wnids (list): the WordNet ids of the classes, sorted.
        wnid_to_idx (dict): WordNet id -> class index.
        imgs (list): ``(image path, class_index)`` pairs.
        targets (list): the class index of each image.
    """

    def __init__(self, root, split: str = "train", **kwargs):
        root = self.root = os.path.expanduser(os.fspath(root))
        self.split = verify_str_arg(split, "split", ("train", "val"))
        self.parse_archives()
        wnid_to_classes = load_meta_file(self.root)[0]
        super().__init__(self.split_folder, **kwargs)
        self.root = root
        self.wnids = self.classes
        self.wnid_to_idx = self.class_to_idx
        self.classes = [wnid_to_classes[wnid] for wnid in self.wnids]
        self.class_to_idx = {name: idx for idx, names in enumerate(self.classes)
                             for name in names}

    def parse_archives(self) -> None:
        """Writes ``meta.bin`` and extracts the split's archive when they are not there."""
        if not check_integrity(os.path.join(self.root, META_FILE)):
            parse_devkit_archive(self.root)
        if not os.path.isdir(self.split_folder):
            if self.split == "train":
                parse_train_archive(self.root)
            else:
                parse_val_archive(self.root)

    @property
    def split_folder(self) -> str:
        return os.path.join(self.root, self.split)

    def extra_repr(self) -> str:
        return f"Split: {self.split}"


def load_meta_file(root, file: str | None = None):
    """``(wnid_to_classes, val_wnids)`` from ``root/meta.bin`` (written by
    :func:`parse_devkit_archive`), read with ``ember.load(weights_only=True)``."""
    path = os.path.join(os.fspath(root), file or META_FILE)
    if not check_integrity(path):
        raise RuntimeError(f"The meta file {path} is not present in the root directory or is "
                           "corrupted. This file is automatically created by the ImageNet "
                           "dataset.")
    return ember.load(path, weights_only=True)


def _verified_archive(root, kind: str, file: str | None) -> str:
    """The path of ``root/file`` (default: the published name of the ``kind`` archive),
    checked against the published md5."""
    root = os.fspath(root)
    default_file, md5 = ARCHIVE_META[kind]
    file = file or default_file
    path = os.path.join(root, file)
    if not check_integrity(path, md5):
        raise RuntimeError(f"The archive {file} is not present in the root directory or is "
                           f"corrupted. You need to download it externally and place it in "
                           f"{root}.")
    return path


def _parse_meta_mat(devkit_root: str):
    """``(idx_to_wnid, wnid_to_classes)`` of the leaf synsets (the 1,000 classes) of the
    devkit's ``data/meta.mat``, a MATLAB struct array ``synsets`` with the fields
    ``ILSVRC2012_ID``, ``WNID``, ``words`` ("name, synonym, ...") and ``num_children``."""
    path = os.path.join(devkit_root, "data", "meta.mat")
    synsets = loadmat(path, squeeze_me=True).get("synsets")
    names = getattr(getattr(synsets, "dtype", None), "names", None) or ()
    missing = {"ILSVRC2012_ID", "WNID", "words", "num_children"} - set(names)
    if missing:
        raise RuntimeError(f"{path} holds no struct array 'synsets' with the fields "
                           f"ILSVRC2012_ID, WNID, words and num_children (missing: "
                           f"{', '.join(sorted(missing))})")
    synsets = np.atleast_1d(synsets)  # squeeze_me makes a one-synset array a scalar
    leaves = [s for s in synsets if int(s["num_children"]) == 0]
    idx_to_wnid = {int(s["ILSVRC2012_ID"]): str(s["WNID"]) for s in leaves}
    wnid_to_classes = {str(s["WNID"]): tuple(str(s["words"]).split(", ")) for s in leaves}
    return idx_to_wnid, wnid_to_classes


def _parse_val_groundtruth(devkit_root: str) -> list:
    path = os.path.join(devkit_root, "data", "ILSVRC2012_validation_ground_truth.txt")
    with open(path) as f:
        return [int(line) for line in f if line.strip()]


def parse_devkit_archive(root, file: str | None = None) -> None:
    """Reads the devkit archive's class names and validation labels into ``root/meta.bin``
    (written with ``ember.save``; ``torch.load`` reads it too).

    Args:
        root (str): the folder of the devkit archive.
        file (str, optional): its name. Default: ``"ILSVRC2012_devkit_t12.tar.gz"``.

    Raises:
        RuntimeError: the archive is missing or has not the published md5.
    """
    archive = _verified_archive(root, "devkit", file)
    with tempfile.TemporaryDirectory() as tmp_dir:
        extract_archive(archive, tmp_dir)
        devkit_root = os.path.join(tmp_dir, "ILSVRC2012_devkit_t12")
        idx_to_wnid, wnid_to_classes = _parse_meta_mat(devkit_root)
        val_idcs = _parse_val_groundtruth(devkit_root)
    unknown = sorted(set(val_idcs) - set(idx_to_wnid))
    if unknown:
        raise RuntimeError(f"the validation ground truth of {os.path.basename(archive)} names "
                           f"class ids that meta.mat has not: {unknown[:5]}")
    val_wnids = [idx_to_wnid[idx] for idx in val_idcs]
    ember.save((wnid_to_classes, val_wnids), os.path.join(os.fspath(root), META_FILE))


def parse_train_archive(root, file: str | None = None, folder: str = "train") -> None:
    """Extracts the training archive (one tar per class) into ``root/folder/<wnid>/``.

    Args:
        root (str): the folder of the training archive.
        file (str, optional): its name. Default: ``"ILSVRC2012_img_train.tar"``.
        folder (str): Default: ``"train"``.

    Raises:
        RuntimeError: the archive is missing or has not the published md5.
    """
    archive = _verified_archive(root, "train", file)
    train_root = os.path.join(os.fspath(root), folder)
    extract_archive(archive, train_root)
    for name in sorted(os.listdir(train_root)):
        archive = os.path.join(train_root, name)
        extract_archive(archive, os.path.splitext(archive)[0], remove_finished=True)


def parse_val_archive(root, file: str | None = None, wnids=None, folder: str = "val") -> None:
    """Extracts the validation archive into ``root/folder/<wnid>/``, the images (in file
    name order) going to the classes of ``wnids``.

    Args:
        root (str): the folder of the validation archive.
        file (str, optional): its name. Default: ``"ILSVRC2012_img_val.tar"``.
        wnids (list of str, optional): the WordNet id of each image. Default: those of
            ``root/meta.bin``.
        folder (str): Default: ``"val"``.

    Raises:
        RuntimeError: the archive is missing or has not the published md5.
    """
    if wnids is None:
        wnids = load_meta_file(root)[1]
    archive = _verified_archive(root, "val", file)
    val_root = os.path.join(os.fspath(root), folder)
    extract_archive(archive, val_root)
    images = sorted(os.path.join(val_root, name) for name in os.listdir(val_root))
    for wnid in set(wnids):
        os.mkdir(os.path.join(val_root, wnid))
    for wnid, image in zip(wnids, images):
        shutil.move(image, os.path.join(val_root, wnid, os.path.basename(image)))

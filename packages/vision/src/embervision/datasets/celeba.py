"""CelebA: 202,599 aligned and cropped face images of 10,177 people, with 40 binary
attributes, identities, boxes and five landmarks each."""

from __future__ import annotations

import os
from collections import namedtuple

import numpy as np
from PIL import Image

import ember
from embervision.datasets.utils import (
    check_integrity,
    download_file_from_google_drive,
    extract_archive,
    verify_str_arg,
)
from embervision.datasets.vision import VisionDataset

__all__ = ["CelebA"]

CSV = namedtuple("CSV", ["header", "index", "data"])

_TARGET_TYPES = ("attr", "identity", "bbox", "landmarks")
_SPLITS = {"train": 0, "valid": 1, "test": 2, "all": None}


class CelebA(VisionDataset):
    """`Large-scale CelebFaces Attributes (CelebA)
    <http://mmlab.ie.cuhk.edu.hk/projects/CelebA.html>`_ (Liu et al., 2015): the aligned and
    cropped images.

    Args:
        root (str or ``pathlib.Path``): holds ``celeba/`` (``img_align_celeba/`` and the
            annotation files).
        split (str): ``"train"``, ``"valid"``, ``"test"`` or ``"all"``.
        target_type (str or list of str): ``"attr"`` (an int64 tensor of 40 labels in
            {0, 1}), ``"identity"`` (an int64 tensor scalar), ``"bbox"`` (x, y, width,
            height: 4 ints, in the coordinates of the original uncropped images, so they do
            not fit the aligned ones) or ``"landmarks"`` (10 ints: left eye, right eye, nose,
            left and right mouth corners, x then y). A list gives a tuple of them; an empty
            list gives ``None``. Default: ``"attr"``.
        transform (callable, optional): transforms the PIL image.
        target_transform (callable, optional): transforms the target.
        download (bool): download the files from Google Drive (md5-checked) and extract the
            images. Default: False.

    Attributes:
        attr_names (list of str): the names of the 40 attributes.
        filename (list of str): the image file of each sample.
        attr, identity, bbox, landmarks_align (Tensor): the annotations of the split.
    """

    base_folder = "celeba"
    # (Google Drive file id, md5, file name). The in-the-wild images and the PNG ones are
    # only published as 7z archives, which the standard library cannot open.
    file_list = [
        ("0B7EVK8r0v71pZjFTYXZWM3FlRnM", "00d2c5bc6d35e252742224ab0c1e8fcb",
         "img_align_celeba.zip"),
        ("0B7EVK8r0v71pblRyaVFSWGxPY0U", "75e246fa4810816ffd6ee81facbd244c",
         "list_attr_celeba.txt"),
        ("1_ee_0u7vcNLOfNLegJRHmolfH5ICW-XS", "32bd1bd63d3c78cd57e08160ec5ed1e2",
         "identity_CelebA.txt"),
        ("0B7EVK8r0v71pbThiMVRxWXZ4dU0", "00566efa6fedff7a56946cd1c10f1c16",
         "list_bbox_celeba.txt"),
        ("0B7EVK8r0v71pd0FJY3Blby1HUTQ", "cc24ecafdb5b50baae59b03474781f8c",
         "list_landmarks_align_celeba.txt"),
        ("0B7EVK8r0v71pY0NSMzRuSXJEVkk", "d32c9cbf5e040fd4025c592c306e6668",
         "list_eval_partition.txt"),
    ]

    def __init__(self, root, split: str = "train", target_type="attr", transform=None,
                 target_transform=None, download: bool = False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = split
        self.target_type = list(target_type) if isinstance(target_type, list) else [target_type]
        if not self.target_type and self.target_transform is not None:
            raise RuntimeError("target_transform is specified but target_type is empty")
        if download:
            self.download()
        if not self._check_integrity():
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to "
                               "download it")
        split_ = _SPLITS[verify_str_arg(split.lower() if isinstance(split, str) else split,
                                        "split", tuple(_SPLITS))]
        splits = self._load_csv("list_eval_partition.txt")
        identity = self._load_csv("identity_CelebA.txt")
        bbox = self._load_csv("list_bbox_celeba.txt", header=1)
        landmarks_align = self._load_csv("list_landmarks_align_celeba.txt", header=1)
        attr = self._load_csv("list_attr_celeba.txt", header=1)
        for name, table in (("identity_CelebA.txt", identity), ("list_bbox_celeba.txt", bbox),
                            ("list_landmarks_align_celeba.txt", landmarks_align),
                            ("list_attr_celeba.txt", attr)):
            if table.index != splits.index:
                raise RuntimeError(f"{name} does not list the images of list_eval_partition.txt "
                                   "in the same order")
        if split_ is None:
            rows = np.arange(len(splits.index))
        else:
            rows = np.flatnonzero(splits.data[:, :1].ravel() == split_)
        self.filename = [splits.index[i] for i in rows]
        self.identity = ember.from_numpy(identity.data[rows])
        self.bbox = ember.from_numpy(bbox.data[rows])
        self.landmarks_align = ember.from_numpy(landmarks_align.data[rows])
        # the file's -1/1 as 0/1
        self.attr = ember.from_numpy((attr.data[rows] + 1) // 2)
        self.attr_names = attr.header

    def _load_csv(self, filename: str, header: int | None = None) -> CSV:
        """A space-separated annotation file: ``header`` is the row of column names (the
        rows before it are skipped); each later row is a file name and integers."""
        path = os.path.join(self.root, self.base_folder, filename)
        with open(path) as f:
            rows = [line.split() for line in f]
        headers = []
        if header is not None:
            headers, rows = rows[header], rows[header + 1:]
        rows = [row for row in rows if row]
        widths = {len(row) for row in rows}
        if len(widths) > 1:
            raise RuntimeError(f"{path}: the rows have different numbers of fields "
                               f"({sorted(widths)})")
        try:
            data = np.array([[int(v) for v in row[1:]] for row in rows], dtype=np.int64)
        except ValueError as error:
            raise RuntimeError(f"{path}: {error}") from error
        width = widths.pop() - 1 if widths else 0
        return CSV(headers, [row[0] for row in rows], data.reshape(len(rows), width))

    def _check_integrity(self) -> bool:
        for _, md5, filename in self.file_list:
            # the image archive may be deleted once extracted
            if os.path.splitext(filename)[1] in (".zip", ".7z"):
                continue
            if not check_integrity(os.path.join(self.root, self.base_folder, filename), md5):
                return False
        return os.path.isdir(os.path.join(self.root, self.base_folder, "img_align_celeba"))

    def download(self) -> None:
        """Downloads the files from Google Drive and extracts the images."""
        if self._check_integrity():
            return
        folder = os.path.join(self.root, self.base_folder)
        for file_id, md5, filename in self.file_list:
            download_file_from_google_drive(file_id, folder, filename, md5)
        extract_archive(os.path.join(folder, "img_align_celeba.zip"))

    def __getitem__(self, index: int):
        image = Image.open(os.path.join(self.root, self.base_folder, "img_align_celeba",
                                        self.filename[index]))
        target = []
        for t in self.target_type:
            t = verify_str_arg(t, "target_type", _TARGET_TYPES)
            if t == "attr":
                target.append(self.attr[index, :])
            elif t == "identity":
                target.append(self.identity[index, 0])
            elif t == "bbox":
                target.append(self.bbox[index, :])
            else:
                target.append(self.landmarks_align[index, :])
        if self.transform is not None:
            image = self.transform(image)
        if not target:
            return image, None
        target = tuple(target) if len(target) > 1 else target[0]
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target

    def __len__(self) -> int:
        return len(self.attr)

    def extra_repr(self) -> str:
        return f"Target type: {self.target_type}\nSplit: {self.split}"

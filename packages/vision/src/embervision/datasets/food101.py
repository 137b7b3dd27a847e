"""Food-101: 101,000 food images in 101 classes."""

from __future__ import annotations

import json
import os

from embervision.datasets.folder import default_loader
from embervision.datasets.utils import download_and_extract_archive, verify_str_arg
from embervision.datasets.vision import VisionDataset

__all__ = ["Food101"]


class Food101(VisionDataset):
    """Food-101 (Bossard et al., 2014): 750 training and 250 test images per class.

    Args:
        root (str or ``pathlib.Path``): holds ``food-101`` (``images/`` and ``meta/``).
        split (str): ``"train"`` or ``"test"``.
        transform (callable, optional): transforms the PIL image.
        target_transform (callable, optional): transforms the label.
        download (bool): download and extract the archive (md5-checked). Default: False.
        loader (callable): loads an image from its path. Default: the PIL loader.
    """

    _URL = "http://data.vision.ee.ethz.ch/cvl/food-101.tar.gz"
    _MD5 = "85eeb15f3717b99a5da872d97d918f87"

    def __init__(self, root, split: str = "train", transform=None, target_transform=None,
                 download: bool = False, loader=default_loader):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "test"))
        self._base_folder = os.path.join(self.root, "food-101")
        self._meta_folder = os.path.join(self._base_folder, "meta")
        self._images_folder = os.path.join(self._base_folder, "images")
        if download:
            self._download()
        if not self._check_exists():
            raise RuntimeError("Dataset not found. You can use download=True to download it")
        with open(os.path.join(self._meta_folder, f"{split}.json")) as f:
            metadata = json.load(f)
        self.classes = sorted(metadata.keys())
        self.class_to_idx = dict(zip(self.classes, range(len(self.classes))))
        self._labels, self._image_files = [], []
        for class_label, im_rel_paths in metadata.items():
            self._labels += [self.class_to_idx[class_label]] * len(im_rel_paths)
            self._image_files += [os.path.join(self._images_folder, *f"{p}.jpg".split("/"))
                                  for p in im_rel_paths]
        self.loader = loader

    def __len__(self) -> int:
        return len(self._image_files)

    def __getitem__(self, idx: int):
        image = self.loader(self._image_files[idx])
        label = self._labels[idx]
        if self.transform:
            image = self.transform(image)
        if self.target_transform:
            label = self.target_transform(label)
        return image, label

    def extra_repr(self) -> str:
        return f"split={self._split}"

    def _check_exists(self) -> bool:
        return os.path.isdir(self._meta_folder) and os.path.isdir(self._images_folder)

    def _download(self) -> None:
        if self._check_exists():
            return
        download_and_extract_archive(self._URL, download_root=self.root, md5=self._MD5)

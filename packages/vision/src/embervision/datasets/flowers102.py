"""Oxford 102 Flowers: 8,189 flower images in 102 classes."""

from __future__ import annotations

import os

import numpy as np

from embervision.datasets._mat import loadmat
from embervision.datasets.folder import default_loader
from embervision.datasets.utils import (
    check_integrity,
    download_and_extract_archive,
    download_url,
    verify_str_arg,
)
from embervision.datasets.vision import VisionDataset

__all__ = ["Flowers102"]


class Flowers102(VisionDataset):
    """Oxford 102 Flowers (Nilsback and Zisserman, 2008); labels 0-101. Reading the .mat
    label and split files needs SciPy.

    Args:
        root (str or ``pathlib.Path``): holds ``flowers-102`` (``jpg/``, ``imagelabels.mat``,
            ``setid.mat``).
        split (str): ``"train"``, ``"val"`` or ``"test"``.
        transform (callable, optional): transforms the PIL image.
        target_transform (callable, optional): transforms the label.
        download (bool): download the files (md5-checked). Default: False.
        loader (callable): loads an image from its path. Default: the PIL loader.
    """

    _download_url_prefix = "https://www.robots.ox.ac.uk/~vgg/data/flowers/102/"
    _file_dict = {
        "image": ("102flowers.tgz", "52808999861908f626f3c1f4e79d11fa"),
        "label": ("imagelabels.mat", "e0620be6f572b9609742df49c70aed4d"),
        "setid": ("setid.mat", "a5357ecc9cb78c4bef273ce3793fc85c"),
    }
    _splits_map = {"train": "trnid", "val": "valid", "test": "tstid"}

    def __init__(self, root, split: str = "train", transform=None, target_transform=None,
                 download: bool = False, loader=default_loader):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "val", "test"))
        self._base_folder = os.path.join(self.root, "flowers-102")
        self._images_folder = os.path.join(self._base_folder, "jpg")
        if download:
            self.download()
        if not self._check_integrity():
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to "
                               "download it")
        set_ids = loadmat(os.path.join(self._base_folder, self._file_dict["setid"][0]),
                          squeeze_me=True)
        # squeeze_me makes a one-element array a scalar
        image_ids = np.atleast_1d(set_ids[self._splits_map[self._split]]).tolist()
        labels = loadmat(os.path.join(self._base_folder, self._file_dict["label"][0]),
                         squeeze_me=True)
        image_id_to_label = dict(enumerate((np.atleast_1d(labels["labels"]).astype(np.int64)
                                            - 1).tolist(), 1))
        self._labels, self._image_files = [], []
        for image_id in image_ids:
            self._labels.append(int(image_id_to_label[int(image_id)]))
            self._image_files.append(os.path.join(self._images_folder,
                                                  f"image_{int(image_id):05d}.jpg"))
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

    def _check_integrity(self) -> bool:
        if not os.path.isdir(self._images_folder):
            return False
        return all(check_integrity(os.path.join(self._base_folder, self._file_dict[k][0]),
                                   self._file_dict[k][1]) for k in ("label", "setid"))

    def download(self) -> None:
        if self._check_integrity():
            return
        download_and_extract_archive(self._download_url_prefix + self._file_dict["image"][0],
                                     self._base_folder, md5=self._file_dict["image"][1])
        for key in ("label", "setid"):
            filename, md5 = self._file_dict[key]
            download_url(self._download_url_prefix + filename, self._base_folder, md5=md5)

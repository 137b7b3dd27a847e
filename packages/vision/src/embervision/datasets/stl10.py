"""STL-10: 96x96 colour images in 10 classes, with 100,000 unlabeled images."""

from __future__ import annotations

import os

import numpy as np
from PIL import Image

from embervision.datasets.utils import (
    check_integrity,
    download_and_extract_archive,
    verify_str_arg,
)
from embervision.datasets.vision import VisionDataset

__all__ = ["STL10"]


class STL10(VisionDataset):
    """STL-10 (Coates et al., 2011), read from the binary release.

    Args:
        root (str or ``pathlib.Path``): holds ``stl10_binary``.
        split (str): ``"train"``, ``"train+unlabeled"``, ``"unlabeled"`` or ``"test"``.
            Unlabeled images have the target ``-1``.
        folds (int, optional): one of the ten predefined training folds (0-9) of
            ``fold_indices.txt``; all training images when ``None``.
        transform (callable, optional): transforms the PIL image.
        target_transform (callable, optional): transforms the label.
        download (bool): download and extract the archive (md5-checked). Default: False.
    """

    base_folder = "stl10_binary"
    url = "http://ai.stanford.edu/~acoates/stl10/stl10_binary.tar.gz"
    filename = "stl10_binary.tar.gz"
    tgz_md5 = "91f7769df0f17e558f3565bffb0c7dfb"
    class_names_file = "class_names.txt"
    folds_list_file = "fold_indices.txt"
    train_list = [
        ["train_X.bin", "918c2871b30a85fa023e0c44e0bee87f"],
        ["train_y.bin", "5a34089d4802c674881badbb80307741"],
        ["unlabeled_X.bin", "5242ba1fed5e4be9e1e742405eb56ca4"],
    ]
    test_list = [["test_X.bin", "7f263ba9f9e0b06b93213547f721ac82"],
                 ["test_y.bin", "36f9794fa4beb8a2c72628de14fa638e"]]
    splits = ("train", "train+unlabeled", "unlabeled", "test")

    def __init__(self, root, split: str = "train", folds=None, transform=None,
                 target_transform=None, download: bool = False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = verify_str_arg(split, "split", self.splits)
        self.folds = self._verify_folds(folds)
        if download:
            self.download()
        elif not self._check_integrity():
            raise RuntimeError(f"Dataset not found or corrupted in {self.root}. You can use "
                               "download=True to download it")
        if self.split == "train":
            self.data, self.labels = self._load("train_X.bin", "train_y.bin")
            self._load_folds(self.folds)
        elif self.split == "train+unlabeled":
            self.data, self.labels = self._load("train_X.bin", "train_y.bin")
            self._load_folds(self.folds)
            unlabeled, _ = self._load("unlabeled_X.bin")
            self.data = np.concatenate((self.data, unlabeled))
            self.labels = np.concatenate((self.labels, np.full(unlabeled.shape[0], -1)))
        elif self.split == "unlabeled":
            self.data, _ = self._load("unlabeled_X.bin")
            self.labels = np.full(self.data.shape[0], -1)
        else:
            self.data, self.labels = self._load("test_X.bin", "test_y.bin")
        class_file = os.path.join(self.root, self.base_folder, self.class_names_file)
        if os.path.isfile(class_file):
            with open(class_file) as f:
                self.classes = f.read().splitlines()

    @staticmethod
    def _verify_folds(folds):
        if folds is None:
            return folds
        if isinstance(folds, int):
            if folds in range(10):
                return folds
            raise ValueError(f"Value for argument folds should be in the range [0, 10), but "
                             f"got {folds}.")
        raise ValueError(f"Expected type None or int for argument folds, but got type "
                         f"{type(folds)}.")

    def _load(self, data_file, labels_file=None):
        labels = None
        if labels_file:
            path = os.path.join(self.root, self.base_folder, labels_file)
            labels = np.fromfile(path, dtype=np.uint8).astype(np.int64) - 1  # 0-based
        path = os.path.join(self.root, self.base_folder, data_file)
        raw = np.fromfile(path, dtype=np.uint8)
        if raw.size % (3 * 96 * 96):
            raise RuntimeError(f"{path} is not a whole number of 3x96x96 images")
        # The images are stored column-major: (N, C, W, H) -> (N, C, H, W).
        images = raw.reshape(-1, 3, 96, 96).transpose(0, 1, 3, 2)
        if labels is not None and labels.shape[0] != images.shape[0]:
            raise RuntimeError(f"{labels_file} has {labels.shape[0]} labels for "
                               f"{images.shape[0]} images")
        return images, labels

    def _load_folds(self, folds):
        if folds is None:
            return
        path = os.path.join(self.root, self.base_folder, self.folds_list_file)
        with open(path) as f:
            line = f.read().splitlines()[folds]
        index = np.array(line.split(), dtype=np.int64)
        self.data, self.labels = self.data[index], self.labels[index]

    def __getitem__(self, index: int):
        img = Image.fromarray(np.ascontiguousarray(self.data[index].transpose(1, 2, 0)))
        target = int(self.labels[index]) if self.labels is not None else None
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self) -> int:
        return self.data.shape[0]

    def _check_integrity(self) -> bool:
        return all(check_integrity(os.path.join(self.root, self.base_folder, name), md5)
                   for name, md5 in self.train_list + self.test_list)

    def download(self) -> None:
        if self._check_integrity():
            return
        download_and_extract_archive(self.url, self.root, filename=self.filename,
                                     md5=self.tgz_md5)

    def extra_repr(self) -> str:
        return "Split: {split}".format(**self.__dict__)

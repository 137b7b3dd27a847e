"""SVHN: 32x32 crops of house numbers from Google Street View."""

from __future__ import annotations

import os

import numpy as np
from PIL import Image

from embervision.datasets._mat import loadmat
from embervision.datasets.utils import check_integrity, download_url, verify_str_arg
from embervision.datasets.vision import VisionDataset

__all__ = ["SVHN"]


class SVHN(VisionDataset):
    """SVHN (Netzer et al., 2011), the cropped-digits format. The label of the digit 0 is 0
    (the files say 10). Reading the .mat files needs SciPy.

    Args:
        root (str or ``pathlib.Path``): holds ``train_32x32.mat`` etc.
        split (str): ``"train"``, ``"test"`` or ``"extra"``.
        transform (callable, optional): transforms the PIL image.
        target_transform (callable, optional): transforms the label.
        download (bool): download the split's file (md5-checked). Default: False.
    """

    split_list = {
        "train": ["http://ufldl.stanford.edu/housenumbers/train_32x32.mat", "train_32x32.mat",
                  "e26dedcc434d2e4c54c9b2d4a06d8373"],
        "test": ["http://ufldl.stanford.edu/housenumbers/test_32x32.mat", "test_32x32.mat",
                 "eb5a983be6a315427106f1b164d9cef3"],
        "extra": ["http://ufldl.stanford.edu/housenumbers/extra_32x32.mat", "extra_32x32.mat",
                  "a93ce644f1a588dc4d68dda5feec44a7"],
    }

    def __init__(self, root, split: str = "train", transform=None, target_transform=None,
                 download: bool = False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = verify_str_arg(split, "split", tuple(self.split_list.keys()))
        self.url, self.filename, self.file_md5 = self.split_list[split]
        if download:
            self.download()
        if not self._check_integrity():
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to "
                               "download it")
        loaded = loadmat(os.path.join(self.root, self.filename))
        if "X" not in loaded or "y" not in loaded:
            raise RuntimeError(f"{self.filename} has no 'X' and 'y' arrays")
        self.labels = loaded["y"].astype(np.int64).squeeze(-1) if loaded["y"].ndim > 1 \
            else loaded["y"].astype(np.int64)
        self.labels = np.where(self.labels == 10, 0, self.labels)
        # (H, W, C, N) in the file -> (N, C, H, W)
        self.data = np.transpose(loaded["X"], (3, 2, 0, 1))

    def __getitem__(self, index: int):
        img = Image.fromarray(np.ascontiguousarray(np.transpose(self.data[index], (1, 2, 0))))
        target = int(self.labels[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self) -> int:
        return len(self.data)

    def _check_integrity(self) -> bool:
        return check_integrity(os.path.join(self.root, self.filename), self.file_md5)

    def download(self) -> None:
        download_url(self.url, self.root, self.filename, self.file_md5)

    def extra_repr(self) -> str:
        return "Split: {split}".format(**self.__dict__)

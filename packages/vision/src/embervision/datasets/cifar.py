"""CIFAR-10 and CIFAR-100, read from the python pickles without running pickled code."""

from __future__ import annotations

import io
import os
import pickle

import numpy as np
from PIL import Image

from embervision.datasets.utils import check_integrity, download_and_extract_archive
from embervision.datasets.vision import VisionDataset

__all__ = ["CIFAR10", "CIFAR100"]

# NOTE [ Reading the CIFAR pickles safely ]
# The batches are pickled dicts of lists, strings and NumPy arrays. Unpickling may call any
# importable function a file names; this unpickler lets through only what rebuilds an ndarray
# (NumPy's _reconstruct, ndarray, dtype: the same set torch.load's weights_only mode allows
# for NumPy; and _codecs.encode, with which Python 3's protocol-2 pickles spell bytes) and
# refuses everything else, so a tampered file cannot run code.
_ALLOWED = {
    ("numpy.core.multiarray", "_reconstruct"), ("numpy._core.multiarray", "_reconstruct"),
    ("numpy", "ndarray"), ("numpy", "dtype"),
    ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
    ("_codecs", "encode"),
}


class _RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) in _ALLOWED:
            import importlib

            return getattr(importlib.import_module(module), name)
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed in a CIFAR batch file")


def load_pickle(path):
    """Loads a CIFAR batch (latin1-decoded, as the files are Python 2 pickles), refusing any
    global but NumPy's array constructors."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        return _RestrictedUnpickler(io.BytesIO(data), encoding="latin1").load()
    except (pickle.UnpicklingError, EOFError, ValueError) as error:
        raise RuntimeError(f"could not read the CIFAR batch {path}: {error}") from error


class CIFAR10(VisionDataset):
    """CIFAR-10: 50,000 training and 10,000 test 32x32 colour images in 10 classes.

    Args:
        root (str or ``pathlib.Path``): holds ``cifar-10-batches-py``.
        train (bool): the training batches, else the test batch. Default: True.
        transform (callable, optional): transforms the PIL image.
        target_transform (callable, optional): transforms the label.
        download (bool): download and extract the archive (md5-checked) when the batches are
            missing or corrupt. Default: False.
    """

    base_folder = "cifar-10-batches-py"
    url = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
    filename = "cifar-10-python.tar.gz"
    tgz_md5 = "c58f30108f718f92721af3b95e74349a"
    train_list = [
        ["data_batch_1", "c99cafc152244af753f735de768cd75f"],
        ["data_batch_2", "d4bba439e000b95fd0a9bffe97cbabec"],
        ["data_batch_3", "54ebc095f3ab1f0389bbae665268c751"],
        ["data_batch_4", "634d18415352ddfa80567beed471001a"],
        ["data_batch_5", "482c414d41f54cd18b22e5b47cb7c3cb"],
    ]
    test_list = [["test_batch", "40351d587109b95175f43aff81a1287e"]]
    meta = {"filename": "batches.meta", "key": "label_names",
            "md5": "5ff9c542aee3614f3951f8cda6e48888"}

    def __init__(self, root, train: bool = True, transform=None, target_transform=None,
                 download: bool = False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if download:
            self.download()
        if not self._check_integrity():
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to "
                               "download it")
        data, targets = [], []
        for name, _ in (self.train_list if train else self.test_list):
            entry = load_pickle(os.path.join(self.root, self.base_folder, name))
            data.append(np.asarray(entry["data"], dtype=np.uint8))
            targets.extend(entry["labels"] if "labels" in entry else entry["fine_labels"])
        self.data = np.vstack(data).reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1).copy()
        self.targets = [int(t) for t in targets]
        self._load_meta()

    def _load_meta(self) -> None:
        path = os.path.join(self.root, self.base_folder, self.meta["filename"])
        if not check_integrity(path, self.meta["md5"]):
            raise RuntimeError("Dataset metadata file not found or corrupted. You can use "
                               "download=True to download it")
        self.classes = list(load_pickle(path)[self.meta["key"]])
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}

    def _check_integrity(self) -> bool:
        return all(check_integrity(os.path.join(self.root, self.base_folder, name), md5)
                   for name, md5 in self.train_list + self.test_list)

    def download(self) -> None:
        """Downloads and extracts the archive unless the batches are there and intact."""
        if self._check_integrity():
            return
        download_and_extract_archive(self.url, self.root, filename=self.filename,
                                     md5=self.tgz_md5)

    def __getitem__(self, index: int):
        img, target = Image.fromarray(self.data[index]), self.targets[index]
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self) -> int:
        return len(self.data)

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train else 'Test'}"


class CIFAR100(CIFAR10):
    """CIFAR-100: like :class:`CIFAR10` with 100 fine classes."""

    base_folder = "cifar-100-python"
    url = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
    filename = "cifar-100-python.tar.gz"
    tgz_md5 = "eb9058c3a382ffc7106e4002c42a8d85"
    train_list = [["train", "16019d7e3df5f24257cddd939b257f8d"]]
    test_list = [["test", "f0ef6b0ae62326f3e7ffdfab6717acfc"]]
    meta = {"filename": "meta", "key": "fine_label_names",
            "md5": "7973b15100ade9c7d40fb424638fde48"}

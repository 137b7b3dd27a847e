"""MNIST and its relatives (FashionMNIST, KMNIST, EMNIST, QMNIST), read from IDX files."""

from __future__ import annotations

import gzip
import lzma
import os
import shutil
import string
from urllib.error import URLError

import numpy as np
from PIL import Image

import ember
from embervision.datasets.utils import (
    check_integrity,
    download_and_extract_archive,
    extract_archive,
    verify_str_arg,
)
from embervision.datasets.vision import VisionDataset

__all__ = ["EMNIST", "KMNIST", "MNIST", "QMNIST", "FashionMNIST", "read_idx"]

_IDX_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path) -> ember.Tensor:
    """Reads an IDX file (LeCun's format; ``.gz`` and ``.xz`` files are decompressed).

    Raises:
        RuntimeError: the header is not IDX's or the data is shorter than it says.
    """
    path = os.fspath(path)
    opener = gzip.open if path.endswith(".gz") else lzma.open if path.endswith(".xz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] not in _IDX_TYPES:
        raise RuntimeError(f"{path} is not an IDX file: its magic number is {data[:4]!r}")
    ndim = data[3]
    header = 4 + 4 * ndim
    if len(data) < header:
        raise RuntimeError(f"{path} is truncated: its header needs {header} bytes")
    shape = tuple(int(v) for v in np.frombuffer(data, ">i4", ndim, 4))
    dtype = np.dtype(_IDX_TYPES[data[2]])
    count = int(np.prod(shape)) if shape else 1
    if len(data) - header < count * dtype.itemsize:
        raise RuntimeError(f"{path} is truncated: its header announces shape {shape}")
    arr = np.frombuffer(data, dtype, count, header).reshape(shape)
    return ember.from_numpy(arr.astype(dtype.newbyteorder("=")))


def _read_images(path) -> ember.Tensor:
    x = read_idx(path)
    if x.dtype != ember.uint8 or x.dim() != 3:
        raise RuntimeError(f"{path} should hold uint8 images of shape (N, H, W), "
                           f"got {x.dtype} {tuple(x.shape)}")
    return x


def _read_labels(path) -> ember.Tensor:
    x = read_idx(path)
    if x.dtype != ember.uint8 or x.dim() != 1:
        raise RuntimeError(f"{path} should hold uint8 labels of shape (N,), "
                           f"got {x.dtype} {tuple(x.shape)}")
    return x.long()


class MNIST(VisionDataset):
    """The MNIST handwritten digits: 60,000 training and 10,000 test images of 28x28.

    Args:
        root (str or ``pathlib.Path``): files go in ``root/MNIST/raw``.
        train (bool): the training set, else the test set. Default: True.
        transform (callable, optional): transforms the PIL image.
        target_transform (callable, optional): transforms the label.
        download (bool): download the files (checked by md5) when missing. Default: False.
    """

    mirrors = ["https://ossci-datasets.s3.amazonaws.com/mnist/",
               "http://yann.lecun.com/exdb/mnist/"]
    resources = [
        ("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
        ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
        ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
        ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c"),
    ]
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six",
               "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root, train: bool = True, transform=None, target_transform=None,
                 download: bool = False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if download:
            self.download()
        if not self._check_exists():
            raise RuntimeError(f"Dataset not found in {self.raw_folder}. You can use "
                               "download=True to download it")
        self.data, self.targets = self._load_data()

    @property
    def raw_folder(self) -> str:
        return os.path.join(self.root, self.__class__.__name__, "raw")

    @property
    def class_to_idx(self) -> dict[str, int]:
        return {c: i for i, c in enumerate(self.classes)}

    def _files(self):
        prefix = "train" if self.train else "t10k"
        return (os.path.join(self.raw_folder, f"{prefix}-images-idx3-ubyte"),
                os.path.join(self.raw_folder, f"{prefix}-labels-idx1-ubyte"))

    def _load_data(self):
        images, labels = self._files()
        return _read_images(images), _read_labels(labels)

    def _check_exists(self) -> bool:
        return all(check_integrity(os.path.join(self.raw_folder, os.path.splitext(name)[0]))
                   for name, _ in self.resources)

    def download(self) -> None:
        """Downloads the gzipped IDX files (md5-checked) and decompresses them."""
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        for filename, md5 in self.resources:
            errors = []
            for mirror in self.mirrors:
                try:
                    download_and_extract_archive(f"{mirror}{filename}", self.raw_folder,
                                                 filename=filename, md5=md5)
                    break
                except (URLError, OSError) as error:
                    errors.append(f"{mirror}: {error}")
            else:
                raise RuntimeError(f"Error downloading {filename}:\n" + "\n".join(errors))

    def __getitem__(self, index: int):
        img = Image.fromarray(self.data[index].numpy(), mode="L")
        target = int(self.targets[index])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self) -> int:
        return len(self.data)

    def extra_repr(self) -> str:
        return f"Split: {'Train' if self.train else 'Test'}"


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST: 28x28 grayscale images of ten kinds of clothing."""

    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    resources = [
        ("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
        ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
        ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
        ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310"),
    ]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot"]


class KMNIST(MNIST):
    """Kuzushiji-MNIST: 28x28 images of ten cursive Japanese characters."""

    mirrors = ["http://codh.rois.ac.jp/kmnist/dataset/kmnist/"]
    resources = [
        ("train-images-idx3-ubyte.gz", "bdb82020997e1d708af4cf47b453dcf7"),
        ("train-labels-idx1-ubyte.gz", "e144d726b3acfaa3e44228e80efcd344"),
        ("t10k-images-idx3-ubyte.gz", "5c965bf0a639b31b8f53240b1b52f4d7"),
        ("t10k-labels-idx1-ubyte.gz", "7320c461ea6c1c855c0b718fb2a4b134"),
    ]
    classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]


class EMNIST(MNIST):
    """EMNIST: handwritten digits and letters in six splits.

    Args:
        root (str or ``pathlib.Path``): files go in ``root/EMNIST/raw``.
        split (str): ``byclass``, ``bymerge``, ``balanced``, ``letters``, ``digits`` or
            ``mnist``.
        **kwargs: ``train``, ``transform``, ``target_transform``, ``download``.
    """

    url = "https://biometrics.nist.gov/cs_links/EMNIST/gzip.zip"
    md5 = "58c8d27c78d21e728a6bc7b3cc06412e"
    splits = ("byclass", "bymerge", "balanced", "letters", "digits", "mnist")
    _merged_classes = {"c", "i", "j", "k", "l", "m", "o", "p", "s", "u", "v", "w", "x", "y", "z"}
    _all_classes = set(string.digits + string.ascii_letters)
    classes_split_dict = {
        "byclass": sorted(_all_classes),
        "bymerge": sorted(_all_classes - _merged_classes),
        "balanced": sorted(_all_classes - _merged_classes),
        "letters": ["N/A"] + list(string.ascii_lowercase),
        "digits": list(string.digits),
        "mnist": list(string.digits),
    }

    def __init__(self, root, split: str, **kwargs):
        self.split = verify_str_arg(split, "split", self.splits)
        self.classes = self.classes_split_dict[self.split]
        super().__init__(root, **kwargs)

    def _files(self):
        prefix = f"emnist-{self.split}-{'train' if self.train else 'test'}"
        return (os.path.join(self.raw_folder, f"{prefix}-images-idx3-ubyte"),
                os.path.join(self.raw_folder, f"{prefix}-labels-idx1-ubyte"))

    def _load_data(self):
        images, labels = self._files()
        # EMNIST stores images transposed relative to MNIST.
        return _read_images(images).transpose(1, 2).contiguous(), _read_labels(labels)

    def _check_exists(self) -> bool:
        return all(check_integrity(f) for f in self._files())

    def download(self) -> None:
        """Downloads ``gzip.zip`` (md5-checked) and decompresses its IDX files."""
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        download_and_extract_archive(self.url, self.raw_folder, md5=self.md5)
        gzip_folder = os.path.join(self.raw_folder, "gzip")
        for name in sorted(os.listdir(gzip_folder)):
            if name.endswith(".gz"):
                extract_archive(os.path.join(gzip_folder, name), self.raw_folder)
        shutil.rmtree(gzip_folder)


class QMNIST(MNIST):
    """QMNIST: MNIST reconstructed from NIST, with the full 60,000-image test set and extra
    label information.

    Args:
        root (str or ``pathlib.Path``): files go in ``root/QMNIST/raw``.
        what (str, optional): ``train``, ``test``, ``test10k``, ``test50k`` or ``nist``;
            ``train`` or ``test`` from ``train`` when None.
        compat (bool): targets are class indices (else the 8 label columns). Default: True.
        train (bool): used when ``what`` is None. Default: True.
        **kwargs: ``transform``, ``target_transform``, ``download``.
    """

    subsets = {"train": "train", "test": "test", "test10k": "test", "test50k": "test",
               "nist": "nist"}
    _BASE = "https://raw.githubusercontent.com/facebookresearch/qmnist/master/"
    resources = {
        "train": [(_BASE + "qmnist-train-images-idx3-ubyte.gz", "ed72d4157d28c017586c42bc6afe6370"),
                  (_BASE + "qmnist-train-labels-idx2-int.gz", "0058f8dd561b90ffdd0f734c6a30e5e4")],
        "test": [(_BASE + "qmnist-test-images-idx3-ubyte.gz", "1394631089c404de565df7b7aeaf9412"),
                 (_BASE + "qmnist-test-labels-idx2-int.gz", "5b5b05890a5e13444e108efe57b788aa")],
        "nist": [(_BASE + "xnist-images-idx3-ubyte.xz", "7f124b3b8ab81486c9d8c2749c17f834"),
                 (_BASE + "xnist-labels-idx2-int.xz", "5ed0e788978e45d4a8bd4b7caec3d79d")],
    }

    def __init__(self, root, what: str | None = None, compat: bool = True, train: bool = True,
                 **kwargs):
        if what is None:
            what = "train" if train else "test"
        self.what = verify_str_arg(what, "what", tuple(self.subsets))
        self.compat = compat
        super().__init__(root, train, **kwargs)

    def _files(self):
        return tuple(os.path.join(self.raw_folder, os.path.splitext(os.path.basename(url))[0])
                     for url, _ in self.resources[self.subsets[self.what]])

    def _check_exists(self) -> bool:
        return all(check_integrity(f) for f in self._files())

    def _load_data(self):
        images_file, labels_file = self._files()
        data = _read_images(images_file)
        targets = read_idx(labels_file)
        if targets.dim() != 2:
            raise RuntimeError(f"{labels_file} should hold labels of shape (N, 8)")
        targets = targets.long()
        if self.what == "test10k":
            data, targets = data[:10000].clone(), targets[:10000].clone()
        elif self.what == "test50k":
            data, targets = data[10000:].clone(), targets[10000:].clone()
        return data, targets

    def download(self) -> None:
        """Downloads the compressed IDX files (md5-checked) of the subset and decompresses them."""
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        for url, md5 in self.resources[self.subsets[self.what]]:
            download_and_extract_archive(url, self.raw_folder, md5=md5)

    def __getitem__(self, index: int):
        img = Image.fromarray(self.data[index].numpy(), mode="L")
        target = self.targets[index]
        target = int(target[0]) if self.compat else target
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def extra_repr(self) -> str:
        return f"Split: {self.what}"

"""``embervision.datasets``: vision datasets on :class:`VisionDataset`, with torchvision's
names, arguments, file layouts and download addresses."""

from embervision.datasets.cifar import CIFAR10, CIFAR100
from embervision.datasets.fakedata import FakeData
from embervision.datasets.folder import DatasetFolder, ImageFolder
from embervision.datasets.mnist import EMNIST, KMNIST, MNIST, QMNIST, FashionMNIST
from embervision.datasets.vision import VisionDataset

__all__ = [
    "CIFAR10",
    "CIFAR100",
    "EMNIST",
    "KMNIST",
    "MNIST",
    "QMNIST",
    "DatasetFolder",
    "FakeData",
    "FashionMNIST",
    "ImageFolder",
    "VisionDataset",
]

"""``embervision.datasets``: vision datasets on :class:`VisionDataset`, with torchvision's
names, arguments, file layouts and download addresses."""

from embervision.datasets.celeba import CelebA
from embervision.datasets.cifar import CIFAR10, CIFAR100
from embervision.datasets.coco import CocoCaptions, CocoDetection
from embervision.datasets.fakedata import FakeData
from embervision.datasets.flowers102 import Flowers102
from embervision.datasets.folder import DatasetFolder, ImageFolder
from embervision.datasets.food101 import Food101
from embervision.datasets.imagenet import ImageNet
from embervision.datasets.mnist import EMNIST, KMNIST, MNIST, QMNIST, FashionMNIST
from embervision.datasets.oxford_iiit_pet import OxfordIIITPet
from embervision.datasets.stl10 import STL10
from embervision.datasets.svhn import SVHN
from embervision.datasets.vision import VisionDataset
from embervision.datasets.voc import VOCDetection, VOCSegmentation

__all__ = [
    "CIFAR10",
    "CIFAR100",
    "EMNIST",
    "KMNIST",
    "MNIST",
    "QMNIST",
    "STL10",
    "SVHN",
    "VOCDetection",
    "VOCSegmentation",
    "CelebA",
    "CocoCaptions",
    "CocoDetection",
    "DatasetFolder",
    "FakeData",
    "FashionMNIST",
    "Flowers102",
    "Food101",
    "ImageFolder",
    "ImageNet",
    "OxfordIIITPet",
    "VisionDataset",
]

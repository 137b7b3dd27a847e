"""The base of the datasets: ``VisionDataset`` with root, transform and target_transform."""

from __future__ import annotations

import os

from ember.utils.data import Dataset

__all__ = ["StandardTransform", "VisionDataset"]


class StandardTransform:
    """Applies ``transform`` to the input and ``target_transform`` to the target."""

    def __init__(self, transform=None, target_transform=None):
        self.transform = transform
        self.target_transform = target_transform

    def __call__(self, input, target):
        if self.transform is not None:
            input = self.transform(input)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return input, target

    def __repr__(self) -> str:
        body = [self.__class__.__name__]
        if self.transform is not None:
            body.append(f"Transform: {self.transform!r}")
        if self.target_transform is not None:
            body.append(f"Target transform: {self.target_transform!r}")
        return "\n".join(body)


class VisionDataset(Dataset):
    """Base class of the vision datasets.

    Args:
        root (str or ``pathlib.Path``, optional): the dataset's folder.
        transforms (callable, optional): takes input and target, returns both transformed.
        transform (callable, optional): transforms the input (a PIL image, usually).
        target_transform (callable, optional): transforms the target.

    ``transforms`` and the pair ``transform``/``target_transform`` exclude each other.
    """

    _repr_indent = 4

    def __init__(self, root=None, transforms=None, transform=None, target_transform=None):
        if isinstance(root, (str, os.PathLike)):
            root = os.path.expanduser(os.fspath(root))
        self.root = root
        has_transforms = transforms is not None
        has_separate = transform is not None or target_transform is not None
        if has_transforms and has_separate:
            raise ValueError("Only transforms or transform/target_transform can be passed as "
                             "argument")
        self.transform = transform
        self.target_transform = target_transform
        if has_separate:
            transforms = StandardTransform(transform, target_transform)
        self.transforms = transforms

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = [f"Number of datapoints: {len(self)}"]
        if self.root is not None:
            lines.append(f"Root location: {self.root}")
        lines += self.extra_repr().splitlines()
        if self.transforms is not None:
            lines += repr(self.transforms).splitlines()
        body = [" " * self._repr_indent + line for line in lines]
        return "\n".join([f"Dataset {self.__class__.__name__}", *body])

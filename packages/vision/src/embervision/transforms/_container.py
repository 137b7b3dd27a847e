"""Transforms that combine other transforms."""

from __future__ import annotations

import ember
from ember import nn

__all__ = ["Compose", "Lambda", "RandomApply", "RandomChoice", "RandomOrder"]


class Compose:
    """Applies ``transforms`` one after the other.

    Args:
        transforms (list of transforms): the transforms to apply, in order.

    Examples::

        >>> Compose([CenterCrop(10), PILToTensor(), ConvertImageDtype(ember.float32)])
    """

    def __init__(self, transforms):
        self.transforms = list(transforms)

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def __repr__(self) -> str:
        lines = "".join(f"\n    {t}" for t in self.transforms)
        return f"{self.__class__.__name__}({lines}\n)"


class Lambda:
    """Applies a user function as a transform.

    Args:
        lambd (callable): the function.
    """

    def __init__(self, lambd):
        if not callable(lambd):
            raise TypeError(f"Argument lambd should be callable, got {type(lambd).__name__!r}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}()"


class RandomApply(nn.Module):
    """Applies the list of ``transforms`` with probability ``p``.

    Args:
        transforms (sequence or nn.Module): the transforms.
        p (float): the probability. Default: 0.5.
    """

    def __init__(self, transforms, p: float = 0.5):
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, img):
        if self.p < ember.rand(1).item():
            return img
        for t in self.transforms:
            img = t(img)
        return img

    def extra_repr(self) -> str:
        return f"p={self.p}, transforms={list(self.transforms)}"


class RandomOrder:
    """Applies the ``transforms`` in a random order."""

    def __init__(self, transforms):
        self.transforms = list(transforms)

    def __call__(self, img):
        for i in ember.randperm(len(self.transforms)).tolist():
            img = self.transforms[i](img)
        return img

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.transforms})"


class RandomChoice:
    """Applies one transform picked at random from ``transforms``, with weights ``p``."""

    def __init__(self, transforms, p=None):
        if p is not None and len(p) != len(transforms):
            raise ValueError(
                f"Length of p doesn't match the number of transforms: {len(p)} != {len(transforms)}"
            )
        self.transforms = list(transforms)
        self.p = p

    def __call__(self, *args):
        if self.p is None:
            i = int(ember.randint(0, len(self.transforms), (1,)).item())
        else:
            weights = ember.tensor([float(w) for w in self.p], dtype=ember.float64)
            i = int(ember.multinomial(weights, 1).item())
        return self.transforms[i](*args)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(transforms={self.transforms}, p={self.p})"

"""Containers of v2 transforms: Compose, RandomApply, RandomChoice, RandomOrder."""

from __future__ import annotations

from collections.abc import Sequence

import ember
from ember import nn
from embervision.transforms.v2._transform import Transform
from embervision.transforms.v2._utils import _rand

__all__ = ["Compose", "RandomApply", "RandomChoice", "RandomOrder"]


def _run(transforms, inputs):
    needs_unpacking = len(inputs) > 1
    outputs = inputs if needs_unpacking else inputs[0]
    for transform in transforms:
        outputs = transform(*inputs)
        inputs = outputs if needs_unpacking else (outputs,)
    return outputs


class Compose(Transform):
    """Applies ``transforms`` one after the other to any inputs.

    Args:
        transforms (sequence of callables): the transforms.

    Examples::

        >>> Compose([v2.RandomHorizontalFlip(), v2.ToDtype(ember.float32, scale=True)])
    """

    def __init__(self, transforms):
        super().__init__()
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence of callables")
        if not transforms:
            raise ValueError("Pass at least one transform")
        self.transforms = list(transforms)

    def forward(self, *inputs):
        return _run(self.transforms, inputs)

    def extra_repr(self) -> str:
        return "\n".join(f"    {t}" for t in self.transforms)


class RandomApply(Transform):
    """Applies all of ``transforms`` with probability ``p``, else none.

    Args:
        transforms (sequence or ModuleList): the transforms.
        p (float): Default: 0.5.
    """

    def __init__(self, transforms, p=0.5):
        super().__init__()
        if not isinstance(transforms, (Sequence, nn.ModuleList)):
            raise TypeError("Argument transforms should be a sequence of callables or a "
                            "`nn.ModuleList`")
        if not 0.0 <= p <= 1.0:
            raise ValueError("`p` should be a floating point value in the interval [0.0, 1.0].")
        self.transforms = transforms
        self.p = p

    def forward(self, *inputs):
        if _rand() >= self.p:
            return inputs if len(inputs) > 1 else inputs[0]
        return _run(self.transforms, inputs)

    def extra_repr(self) -> str:
        return "\n".join(f"    {t}" for t in self.transforms)


class RandomChoice(Transform):
    """Applies one of ``transforms``, chosen with probabilities ``p`` (uniform by default)."""

    def __init__(self, transforms, p=None):
        super().__init__()
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence of callables")
        if p is None:
            p = [1] * len(transforms)
        elif len(p) != len(transforms):
            raise ValueError(f"Length of p doesn't match the number of transforms: {len(p)} != "
                             f"{len(transforms)}")
        super().__init__()
        self.transforms = transforms
        total = sum(p)
        self.p = [prob / total for prob in p]

    def forward(self, *inputs):
        idx = int(ember.multinomial(ember.tensor(self.p), 1))
        return self.transforms[idx](*inputs)


class RandomOrder(Transform):
    """Applies ``transforms`` in a random order."""

    def __init__(self, transforms):
        super().__init__()
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence of callables")
        self.transforms = transforms

    def forward(self, *inputs):
        order = ember.randperm(len(self.transforms)).tolist()
        return _run([self.transforms[i] for i in order], inputs)

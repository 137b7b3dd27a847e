"""Flatten and Unflatten: reshape modules for use inside ``nn.Sequential``."""

from __future__ import annotations

from ember._tensor import Tensor
from ember.nn.modules.module import Module

__all__ = ["Flatten", "Unflatten"]


class Flatten(Module):
    r"""Flattens a contiguous range of dims into one (``input.flatten(start_dim, end_dim)``).

    Args:
        start_dim: first dim to flatten (default = 1).
        end_dim: last dim to flatten (default = -1).

    Shape:
        - Input: :math:`(*, S_{\text{start}},..., S_{i}, ..., S_{\text{end}}, *)`
        - Output: :math:`(*, \prod_{i=\text{start}}^{\text{end}} S_{i}, *)`.

    Examples::

        >>> m = nn.Flatten()
        >>> m(ember.randn(32, 1, 5, 5)).size()
        ember.Size([32, 25])
    """

    __constants__ = ["start_dim", "end_dim"]
    start_dim: int
    end_dim: int

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    r"""Unflattens dim ``dim`` of the input into the shape ``unflattened_size``.

    Args:
        dim (int): dimension to be unflattened
        unflattened_size (tuple, list or Size of ints): new shape of that dimension

    Shape:
        - Input: :math:`(*, S_{\text{dim}}, *)`
        - Output: :math:`(*, U_1, ..., U_n, *)` with :math:`\prod_{i=1}^n U_i = S_{\text{dim}}`.

    Examples::

        >>> m = nn.Unflatten(1, (2, 5, 5))
        >>> m(ember.randn(2, 50)).size()
        ember.Size([2, 2, 5, 5])
    """

    __constants__ = ["dim", "unflattened_size"]
    dim: int
    unflattened_size: tuple

    def __init__(self, dim: int, unflattened_size) -> None:
        super().__init__()
        self._require_tuple_int(unflattened_size)
        self.dim = dim
        self.unflattened_size = unflattened_size

    def _require_tuple_int(self, input) -> None:
        if isinstance(input, (tuple, list)):
            for idx, elem in enumerate(input):
                if not isinstance(elem, int):
                    raise TypeError("unflattened_size must be tuple of ints, but found element "
                                    f"of type {type(elem).__name__} at pos {idx}")
            return
        raise TypeError("unflattened_size must be a tuple of ints, but found type "
                        f"{type(input).__name__}")

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"

"""``Embedding`` and ``EmbeddingBag``: lookup tables of learnable vectors."""

from __future__ import annotations

from ember.nn import functional as F
from ember.nn.modules.linear import _init
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = ["Embedding", "EmbeddingBag"]


def _padding_idx(padding_idx, num_embeddings):
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = num_embeddings + padding_idx
    return padding_idx


def _check_sparse(sparse):
    if sparse:
        raise NotImplementedError(
            "ember produces dense gradients only: sparse=True is not supported (use "
            "sparse=False)")


def _make_weight(num_embeddings, embedding_dim, _weight, _freeze, device, dtype):
    from ember._ops.creation import empty

    if _weight is None:
        return Parameter(empty((num_embeddings, embedding_dim), device=device, dtype=dtype),
                         requires_grad=not _freeze), True
    if list(_weight.shape) != [num_embeddings, embedding_dim]:
        raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
    return Parameter(_weight, requires_grad=not _freeze), False


class Embedding(Module):
    """A lookup table of ``num_embeddings`` vectors of size ``embedding_dim``.

    Args:
        num_embeddings: the size of the table.
        embedding_dim: the size of each vector.
        padding_idx: the entry at this index gets no gradient (and starts at zeros).
        max_norm: vectors looked up whose norm exceeds it are renormalized to it, in place.
        norm_type: the p of the norm for ``max_norm``. Default: 2.
        scale_grad_by_freq: scale gradients by the inverse frequency of the indices in the
            mini-batch. Default: ``False``.
        sparse: must be ``False`` (ember has no sparse gradients).

    Attributes:
        weight: ``(num_embeddings, embedding_dim)``, initialized from N(0, 1).

    Shape:
        - Input: any shape of integer indices; Output: ``(*, embedding_dim)``.

    Examples::

        >>> emb = nn.Embedding(10, 3)
        >>> emb(ember.tensor([[1, 2, 4, 5], [4, 3, 2, 9]])).shape
        ember.Size([2, 4, 3])
    """

    __constants__ = ["num_embeddings", "embedding_dim", "padding_idx", "max_norm",
                     "norm_type", "scale_grad_by_freq", "sparse"]

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 max_norm: float | None = None, norm_type: float = 2.0,
                 scale_grad_by_freq: bool = False, sparse: bool = False, _weight=None,
                 _freeze: bool = False, device=None, dtype=None) -> None:
        super().__init__()
        _check_sparse(sparse)
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = _padding_idx(padding_idx, num_embeddings)
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.weight, fresh = _make_weight(num_embeddings, embedding_dim, _weight, _freeze,
                                          device, dtype)
        if fresh:
            self.reset_parameters()
        self.sparse = sparse

    def reset_parameters(self) -> None:
        _init("normal_")(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            from ember.autograd.grad_mode import no_grad

            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm,
                           self.norm_type, self.scale_grad_by_freq, self.sparse)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, padding_idx: int | None = None,
                        max_norm: float | None = None, norm_type: float = 2.0,
                        scale_grad_by_freq: bool = False, sparse: bool = False) -> Embedding:
        """An Embedding whose table is ``embeddings`` (2-d); ``freeze`` (default True)
        keeps it out of training."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings,
                   _freeze=freeze, padding_idx=padding_idx, max_norm=max_norm,
                   norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


class EmbeddingBag(Module):
    """Sums, means or maxes of bags of embeddings, without materializing the lookups.

    Args:
        num_embeddings: the size of the table.
        embedding_dim: the size of each vector.
        max_norm, norm_type, scale_grad_by_freq: as in :class:`Embedding`.
        mode: ``'sum'``, ``'mean'`` or ``'max'``. Default: ``'mean'``.
        sparse: must be ``False``.
        include_last_offset: ``offsets`` has one more entry, the end of the last bag.
        padding_idx: entries equal to it are left out of their bags.

    Attributes:
        weight: ``(num_embeddings, embedding_dim)``, initialized from N(0, 1).

    Inputs: ``input`` (2-d ``(B, N)``, or 1-d with ``offsets``), ``offsets``,
    ``per_sample_weights`` (``mode='sum'`` only).
    """

    __constants__ = ["num_embeddings", "embedding_dim", "max_norm", "norm_type",
                     "scale_grad_by_freq", "mode", "sparse", "include_last_offset",
                     "padding_idx"]

    def __init__(self, num_embeddings: int, embedding_dim: int, max_norm: float | None = None,
                 norm_type: float = 2.0, scale_grad_by_freq: bool = False, mode: str = "mean",
                 sparse: bool = False, _weight=None, include_last_offset: bool = False,
                 padding_idx: int | None = None, device=None, dtype=None) -> None:
        super().__init__()
        _check_sparse(sparse)
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.padding_idx = _padding_idx(padding_idx, num_embeddings)
        self.weight, fresh = _make_weight(num_embeddings, embedding_dim, _weight, False,
                                          device, dtype)
        if fresh:
            self.reset_parameters()
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    def reset_parameters(self) -> None:
        _init("normal_")(self.weight)
        self._fill_padding_idx_with_zero()

    _fill_padding_idx_with_zero = Embedding._fill_padding_idx_with_zero

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze: bool = True, max_norm: float | None = None,
                        norm_type: float = 2.0, scale_grad_by_freq: bool = False,
                        mode: str = "mean", sparse: bool = False,
                        include_last_offset: bool = False,
                        padding_idx: int | None = None) -> EmbeddingBag:
        """An EmbeddingBag whose table is ``embeddings`` (2-d); ``freeze`` (default True)
        keeps it out of training."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings,
                  max_norm=max_norm, norm_type=norm_type,
                  scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag

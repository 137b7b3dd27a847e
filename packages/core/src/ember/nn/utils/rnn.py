"""``PackedSequence`` and the padding/packing utilities of ``ember.nn.utils.rnn``.

A packed sequence holds a batch of variable-length sequences time-major: the rows of
``data`` are the first elements of every sequence (longest first), then the second
elements of the sequences that have one, and so on; ``batch_sizes[t]`` is the number of
sequences that have a ``t``-th element. Packing and padding are single graph nodes (a
gather and a scatter on the rows), so gradients flow through them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

from ember._C._core import Node
from ember._ops._util import TensorBase, apply, wrap, xp_of

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_sequence",
    "unpack_sequence",
]


class PackedSequence_(NamedTuple):
    data: TensorBase
    batch_sizes: TensorBase
    sorted_indices: TensorBase | None
    unsorted_indices: TensorBase | None


def bind(optional, fn):
    if optional is None:
        return None
    return fn(optional)


class PackedSequence(PackedSequence_):
    """Holds the data and ``batch_sizes`` of a packed batch of sequences.

    Made by :func:`pack_padded_sequence` or :func:`pack_sequence`, never by hand.

    Attributes:
        data (Tensor): the packed rows, ``(sum of lengths, *)``.
        batch_sizes (Tensor): int64 on the CPU, the number of sequences at each time step.
        sorted_indices (Tensor, optional): the permutation that sorted the sequences by
            decreasing length (None when they were given sorted).
        unsorted_indices (Tensor, optional): its inverse.
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        return super().__new__(
            cls, *_packed_sequence_init_args(data, batch_sizes, sorted_indices,
                                             unsorted_indices))

    def pin_memory(self):
        return type(self)(self.data.pin_memory(), self.batch_sizes,
                          bind(self.sorted_indices, lambda t: t.pin_memory()),
                          bind(self.unsorted_indices, lambda t: t.pin_memory()))

    def to(self, *args, **kwargs):
        """``data.to(*args, **kwargs)``; the indices follow data's device."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self

        def call_to(t):
            return t.to(data.device)

        return type(self)(data, self.batch_sizes, bind(self.sorted_indices, call_to),
                          bind(self.unsorted_indices, call_to))

    def cuda(self, *args, **kwargs):
        kwargs.setdefault("device", "cuda")
        return self.to(*args, **kwargs)

    def cpu(self, *args, **kwargs):
        kwargs["device"] = "cpu"
        return self.to(*args, **kwargs)

    def double(self):
        import ember
        return self.to(dtype=ember.double)

    def float(self):
        import ember
        return self.to(dtype=ember.float)

    def half(self):
        import ember
        return self.to(dtype=ember.half)

    def long(self):
        import ember
        return self.to(dtype=ember.long)

    def int(self):
        import ember
        return self.to(dtype=ember.int)

    def short(self):
        import ember
        return self.to(dtype=ember.short)

    def char(self):
        import ember
        return self.to(dtype=ember.int8)

    def byte(self):
        import ember
        return self.to(dtype=ember.uint8)

    @property
    def is_cuda(self):
        """True if ``data`` is on a CUDA device."""
        return self.data.is_cuda

    def is_pinned(self):
        """True if ``data`` is in pinned memory."""
        f = getattr(self.data, "is_pinned", None)
        return bool(f()) if f is not None else False


def _packed_sequence_init_args(data, batch_sizes=None, sorted_indices=None,
                               unsorted_indices=None):
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    if batch_sizes is not None:
        if batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should "
                "never be created manually. They should be instantiated by functions like "
                "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return data, batch_sizes, sorted_indices, unsorted_indices
    if not (isinstance(data, (list, tuple)) and len(data) == 2):
        raise AssertionError("Expected data to be a list or tuple of length 2")
    return data[0], data[1], sorted_indices, unsorted_indices


def invert_permutation(permutation):
    """The inverse of a permutation (an int64 tensor), or None for None."""
    if permutation is None:
        return None
    p = permutation._data
    xp = xp_of(p)
    out = xp.empty_like(p)
    out[p] = xp.arange(p.shape[0], dtype=p.dtype)
    return wrap(out)


# ---------------------------------------------------------------------------
# the gather/scatter nodes

class _PackRows(Node):
    """``input.reshape(-1, *feat)[idx]``: the packed rows of a padded tensor."""

    def forward(self, x, idx, nlead):
        self.x_shape = x.shape
        self.idx = idx
        self.nlead = nlead
        feat = x.shape[nlead:]
        return x.reshape((-1,) + feat)[idx]

    def backward(self, g):
        ga = g._data
        xp = xp_of(ga)
        rows = int(np.prod(self.x_shape[:self.nlead]))
        out = xp.zeros((rows,) + ga.shape[1:], ga.dtype)
        out[self.idx] = ga
        return wrap(out.reshape(self.x_shape))


class _PadRows(Node):
    """Scatter packed rows into a padded tensor of ``shape`` filled with ``value``."""

    def forward(self, data, idx, shape, value):
        xp = xp_of(data)
        self.idx = idx
        out = xp.full(shape, value, dtype=data.dtype)
        out.reshape((-1,) + data.shape[1:])[idx] = data
        return out

    def backward(self, g):
        ga = g._data
        rows = ga.reshape((-1,) + ga.shape[2:])
        return wrap(rows[self.idx])


class _PadSequence(Node):
    """Stack sequences of different lengths into one padded tensor."""

    def forward(self, batch_first, padding_value, left, *seqs):
        xp = xp_of(seqs[0])
        L = max(s.shape[0] for s in seqs)
        feat = seqs[0].shape[1:]
        B = len(seqs)
        out = xp.full((B, L) + feat, padding_value, dtype=seqs[0].dtype)
        spans = []
        for i, s in enumerate(seqs):
            n = s.shape[0]
            start = L - n if left else 0
            out[i, start:start + n] = s
            spans.append((start, n))
        self.spans = spans
        self.batch_first = batch_first
        if not batch_first:
            out = xp.ascontiguousarray(out.swapaxes(0, 1))
        return out

    def backward(self, g):
        ga = g._data
        if not self.batch_first:
            ga = ga.swapaxes(0, 1)
        grads = [wrap(ga[i, start:start + n].copy()) if self.needs_input_grad[3 + i] else None
                 for i, (start, n) in enumerate(self.spans)]
        return (None, None, None, *grads)


# ---------------------------------------------------------------------------
# the public functions

def _lengths_array(lengths):
    if isinstance(lengths, TensorBase):
        a = np.asarray(lengths.detach().cpu()._data if lengths.is_cuda else lengths._data)
        if a.ndim != 1:
            raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                               f"{a.ndim}D cpu Long tensor")
        return a.astype(np.int64)
    a = np.asarray(lengths, dtype=np.int64)
    if a.ndim != 1:
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{a.ndim}D cpu Long tensor")
    return a


def _int_tensor(a):
    import ember
    return ember.tensor(np.ascontiguousarray(a, dtype=np.int64))


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch of variable-length sequences.

    Args:
        input: ``(T, B, *)``, or ``(B, T, *)`` with ``batch_first=True``.
        lengths: the length of each sequence (a list of ints or a 1D tensor).
        batch_first: whether ``input`` is batch-major.
        enforce_sorted: if True, ``lengths`` must be in decreasing order; if False, the
            sequences are sorted here and the permutation kept in the result.

    Returns:
        a :class:`PackedSequence`.
    """
    lens = _lengths_array(lengths)
    if enforce_sorted:
        sorted_indices = None
    else:
        order = np.argsort(-lens, kind="stable")
        lens = lens[order]
        sorted_indices = _int_tensor(order)
        if input.is_cuda:
            sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if input.dim() < 2:
        raise RuntimeError(f"pack_padded_sequence(): expected input of at least 2 dimensions, "
                           f"got {input.dim()}")
    T_in, B = (input.shape[1], input.shape[0]) if batch_first else (input.shape[0],
                                                                     input.shape[1])
    if lens.shape[0] != B:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{lens.shape[0]} (batch_size={B})")
    if B == 0 or lens[-1] <= 0 or (lens <= 0).any():
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if (np.diff(lens) > 0).any():
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
            "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
            "pack_sequence to sidestep this requirement if you do not need ONNX "
            "exportability.")
    if lens[0] > T_in:
        raise RuntimeError(f"pack_padded_sequence(): a length ({int(lens[0])}) is larger "
                           f"than the padded input's sequence length ({T_in})")
    T = int(lens[0])
    mask = np.arange(T)[:, None] < lens[None, :]
    batch_sizes = mask.sum(1).astype(np.int64)
    ts, bs = np.nonzero(mask)
    idx = bs * T_in + ts if batch_first else ts * B + bs
    xp = xp_of(input._data)
    if xp is not np:
        idx = xp.asarray(idx)
    data = apply(_PackRows, input, idx, 2)
    return PackedSequence(data, _int_tensor(batch_sizes), sorted_indices, None)


def _lengths_from_batch_sizes(bs):
    B = int(bs[0])
    return (bs[None, :] > np.arange(B)[:, None]).sum(1).astype(np.int64)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo :func:`pack_padded_sequence`: a padded batch and the lengths.

    Args:
        sequence: a :class:`PackedSequence`.
        batch_first: return ``(B, T, *)`` instead of ``(T, B, *)``.
        padding_value: the value of the padded elements.
        total_length: pad to this length (at least the longest sequence's).

    Returns:
        ``(padded, lengths)``; ``lengths`` is an int64 tensor in the original batch order.
    """
    bs = np.asarray(sequence.batch_sizes._data, dtype=np.int64)
    max_seq_length = bs.shape[0]
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{max_seq_length}")
        max_seq_length = total_length
    B = int(bs[0])
    lens = _lengths_from_batch_sizes(bs)
    T = bs.shape[0]
    mask = np.arange(T)[:, None] < lens[None, :]
    ts, bsel = np.nonzero(mask)
    data = sequence.data
    feat = tuple(data.shape[1:])
    if batch_first:
        idx = bsel * max_seq_length + ts
        shape = (B, max_seq_length) + feat
    else:
        idx = ts * B + bsel
        shape = (max_seq_length, B) + feat
    xp = xp_of(data._data)
    if xp is not np:
        idx = xp.asarray(idx)
    padded = apply(_PadRows, data, idx, shape, padding_value)
    lengths = _int_tensor(lens)
    unsorted = sequence.unsorted_indices
    if unsorted is not None:
        padded = padded.index_select(0 if batch_first else 1, unsorted)
        lengths = _int_tensor(lens[np.asarray(unsorted.detach().cpu()._data)])
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Pad a list of variable-length tensors ``(L_i, *)`` to one tensor.

    Args:
        sequences: the tensors.
        batch_first: return ``(B, T, *)`` instead of ``(T, B, *)``.
        padding_value: the value of the padded elements.
        padding_side: ``"right"`` (default) or ``"left"``.

    Returns:
        ``(T, B, *)`` (or ``(B, T, *)``) with ``T`` the longest length.
    """
    if isinstance(sequences, TensorBase):
        sequences = list(sequences.unbind(0))
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")
    sequences = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    if len(sequences) == 0:
        raise RuntimeError("received an empty list of sequences")
    feat = tuple(sequences[0].shape[1:])
    for s in sequences:
        if s.dim() == 0:
            raise RuntimeError("pad_sequence: every sequence must have at least 1 dimension")
        sf = tuple(s.shape[1:])
        if len(sf) != len(feat):
            raise RuntimeError(f"The expanded size of the tensor ({feat}) must match the "
                               f"existing size ({sf})")
        for d, (a, b) in enumerate(zip(sf, feat, strict=True)):
            if a != b:
                raise RuntimeError(f"The size of tensor a ({b}) must match the size of tensor "
                                   f"b ({a}) at non-singleton dimension {d + 1}")
    dt = sequences[0].dtype
    seqs = [s if s.dtype == dt else s.to(dt) for s in sequences]
    return apply(_PadSequence, batch_first, padding_value, padding_side == "left", *seqs)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Split a padded batch back into a list of tensors of the given lengths.

    Unlike PyTorch's, ``padded_sequences`` is not transposed in place.
    """
    lens = _lengths_array(lengths)
    out = []
    for i, n in enumerate(lens.tolist()):
        if batch_first:
            out.append(padded_sequences[i, :n])
        else:
            out.append(padded_sequences[:n, i])
    return out


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of variable-length tensors ``(L_i, *)``.

    Args:
        sequences: the tensors, in decreasing length if ``enforce_sorted``.
        enforce_sorted: see :func:`pack_padded_sequence`.
    """
    lengths = [v.size(0) for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """Undo :func:`pack_sequence`: the list of tensors."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)

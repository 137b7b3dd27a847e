"""Collation: ``default_collate`` (samples -> a batch) and ``default_convert`` (arrays ->
tensors), with PyTorch's rules for nested mappings, namedtuples, sequences, numbers,
strings, NumPy arrays and tensors.

In a DataLoader worker, tensors are stacked straight into shared-memory segments (see
NOTE [ Shared-memory segments ] in ember/multiprocessing/_shm.py), so that the batch
reaches the main process without being copied through a pipe.
"""

from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Callable

import numpy as np

from ember._C._core import TensorBase, make_tensor_from_array

__all__ = ["collate", "default_collate", "default_convert", "default_collate_fn_map",
           "collate_tensor_fn", "collate_numpy_array_fn", "collate_numpy_scalar_fn",
           "collate_float_fn", "collate_int_fn", "collate_str_fn"]

np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, "
    "dicts or lists; found {}")

# Set in a DataLoader worker: (shape, dtype) -> a NumPy array in a shared-memory segment.
_shared_empty: Callable | None = None


def default_convert(data):
    """Convert each NumPy array (and NumPy scalar) in ``data`` to a tensor, recursing into
    mappings, namedtuples and sequences (tuples become lists); anything else is returned
    unchanged. The DataLoader's collate function when batching is off."""
    import ember

    elem_type = type(data)
    if isinstance(data, TensorBase):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" \
                and np_str_obj_array_pattern.search(data.dtype.str) is not None:
            return data
        return ember.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({key: default_convert(data[key]) for key in data})
                return clone
            return elem_type({key: default_convert(data[key]) for key in data})
        except TypeError:
            return {key: default_convert(data[key]) for key in data}
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


def collate(batch, *, collate_fn_map: dict | None = None):
    """Collate a list of samples, recursing into mappings, namedtuples and sequences; the
    leaves go to ``collate_fn_map[type]`` (exact type first, then the first key the element
    is an instance of)."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update({key: collate([d[key] for d in batch],
                                           collate_fn_map=collate_fn_map) for key in elem})
                return clone
            return elem_type({key: collate([d[key] for d in batch],
                                           collate_fn_map=collate_fn_map) for key in elem})
        except TypeError:
            return {key: collate([d[key] for d in batch], collate_fn_map=collate_fn_map)
                    for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(collate(samples, collate_fn_map=collate_fn_map)
                           for samples in zip(*batch, strict=False)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch, strict=False))
        if isinstance(elem, tuple):
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, samples in enumerate(transposed):
                    clone[i] = collate(samples, collate_fn_map=collate_fn_map)
                return clone
            return elem_type([collate(samples, collate_fn_map=collate_fn_map)
                              for samples in transposed])
        except TypeError:
            return [collate(samples, collate_fn_map=collate_fn_map) for samples in transposed]
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map: dict | None = None):
    """Stack tensors along a new first dim (into shared memory in a DataLoader worker)."""
    import ember

    elem = batch[0]
    shape = elem._data.shape
    dtype = elem._data.dtype
    fast = True
    for i, t in enumerate(batch):
        a = t._data
        if a.shape != shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(shape)} at entry 0 "
                f"and {list(a.shape)} at entry {i}")
        if type(a) is not np.ndarray or a.dtype != dtype or t.requires_grad:
            fast = False
    if not fast:  # other devices, mixed dtypes (PyTorch's promotion), autograd
        out = ember.stack(batch, 0)
        # batches cross to the main process in shared host memory: CPU arrays only
        if _shared_empty is not None and type(out._data) is np.ndarray:
            shared = _shared_empty(out._data.shape, out._data.dtype)
            np.copyto(shared, out._data)
            out = make_tensor_from_array(shared)
        return out
    full = (len(batch), *shape)
    out = np.empty(full, dtype) if _shared_empty is None else _shared_empty(full, dtype)
    np.stack([t._data for t in batch], out=out)
    return make_tensor_from_array(out)


def collate_numpy_array_fn(batch, *, collate_fn_map: dict | None = None):
    import ember

    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([ember.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map: dict | None = None):
    import ember

    return ember.as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map: dict | None = None):
    import ember

    return ember.tensor(batch, dtype=ember.float64)


def collate_int_fn(batch, *, collate_fn_map: dict | None = None):
    import ember

    return ember.tensor(batch)


def collate_str_fn(batch, *, collate_fn_map: dict | None = None):
    return batch


default_collate_fn_map: dict = {
    TensorBase: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """Put a list of samples together into a batch with a new outer dim.

    Tensors are stacked; NumPy arrays and NumPy scalars become tensors (then stacked);
    Python floats become a float64 tensor, ints an int64 tensor; strings and bytes stay a
    list; mappings, namedtuples and sequences are collated element-wise and keep their
    type (tuples become lists), exactly as ``torch.utils.data.default_collate``.

    Examples::

        >>> default_collate([0, 1, 2, 3])
        tensor([0, 1, 2, 3])
        >>> default_collate([{"A": 0, "B": 1}, {"A": 100, "B": 100}])
        {'A': tensor([  0, 100]), 'B': tensor([  1, 100])}
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)

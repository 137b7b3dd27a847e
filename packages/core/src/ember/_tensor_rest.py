"""Tensor methods and attributes of ``torch.Tensor`` that are no math op: ``apply_``,
``map_``, ``map2_`` (Python callables on CPU tensors), ``bfloat16``, ``const_data_ptr``,
``dim_order``, ``fill_diagonal_``, ``grad_dtype``, ``is_set_to``, ``set_``, ``resize_``,
``resize_as_``, ``resize``, ``resize_as``, ``module_load``, ``as_subclass``, ``name``, ``to_dense``,
``to_mkldnn``, ``is_xla``, ``is_distributed``, ``hash_tensor``, ``ipu``/``xpu``/``mtia``
(PyTorch's errors without those devices) and the removed ``reinforce``, ``volatile``,
``eig``, ``lstsq``, ``solve``, ``symeig`` (they raise PyTorch's messages). Installed on
:class:`ember.Tensor` by :func:`install`.
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["install"]


def _check_cpu_no_grad(self, name):
    if not self.is_cpu:
        raise TypeError(f"{name} is only implemented on CPU tensors")
    if self.requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.")


def apply_(self, callable):
    """Apply ``callable`` to every element in place (CPU tensors only; slow: a Python call
    per element)."""
    _check_cpu_no_grad(self, "apply_")
    data = self._data
    out = np.array([callable(v) for v in data.reshape(-1).tolist()], dtype=object)
    data[...] = out.reshape(data.shape).astype(data.dtype) if data.size else data
    self._bump_version()
    return self


def map_(self, tensor, callable):
    """``self[i] = callable(self[i], tensor[i])`` in place, ``tensor`` broadcast to
    ``self`` (CPU tensors only)."""
    _check_cpu_no_grad(self, "map_")
    data = self._data
    other = np.broadcast_to(tensor.detach().numpy(), data.shape)
    vals = [callable(a, b) for a, b in zip(data.reshape(-1).tolist(),
                                           other.reshape(-1).tolist())]
    if data.size:
        data[...] = np.array(vals, dtype=object).reshape(data.shape).astype(data.dtype)
    self._bump_version()
    return self


def map2_(self, x, y, callable):
    """``self[i] = callable(self[i], x[i], y[i])`` in place, ``x`` and ``y`` broadcast to
    ``self`` (CPU tensors only)."""
    _check_cpu_no_grad(self, "map2_")
    data = self._data
    xs = np.broadcast_to(x.detach().numpy(), data.shape).reshape(-1).tolist()
    ys = np.broadcast_to(y.detach().numpy(), data.shape).reshape(-1).tolist()
    vals = [callable(a, b, c) for a, b, c in zip(data.reshape(-1).tolist(), xs, ys)]
    if data.size:
        data[...] = np.array(vals, dtype=object).reshape(data.shape).astype(data.dtype)
    self._bump_version()
    return self


def bfloat16(self, memory_format=None):
    """``self.to(ember.bfloat16)``."""
    from ember._dtype import bfloat16 as bf16

    return self.to(bf16)


def const_data_ptr(self) -> int:
    """The address of the first element (as :meth:`data_ptr`; for reading)."""
    return self.data_ptr()


def dim_order(self, *, ambiguity_check=False):
    """The dimensions from outermost to innermost in memory (by stride, ties kept in
    order): ``(0, 1, 2, 3)`` for a contiguous tensor, ``(0, 2, 3, 1)`` for channels-last.

    Args:
        ambiguity_check (bool or list of memory_format): raise a ``RuntimeError`` if the
            order is not uniquely determined (two dimensions of equal stride, or size 1).
    """
    strides = self.stride()
    order = tuple(sorted(range(self.dim()), key=lambda i: -strides[i]))
    if ambiguity_check is not False:
        if not isinstance(ambiguity_check, (bool, list)):
            raise TypeError("The ambiguity_check argument must be a bool or a list of memory "
                            "formats.")
        sizes = self.shape
        if len(set(strides)) != len(strides) or any(s == 1 for s in sizes):
            raise RuntimeError("The tensor does not have unique dim order, or cannot map to "
                               "exact one of the given memory formats.")
    return order


def fill_diagonal_(self, fill_value, wrap: bool = False):
    """Fill the main diagonal with ``fill_value`` in place. All dimensions must be equal for
    more than two dimensions; a tall matrix with ``wrap=True`` restarts the diagonal after
    every ``N + 1`` rows (NumPy's ``fill_diagonal``)."""
    from ember._ops.creation import tensor as make

    if self.dim() < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.dim() > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    mask = np.zeros(self.shape, dtype=bool)
    np.fill_diagonal(mask, True, wrap=wrap)
    return self.masked_fill_(make(mask, device=self.device), fill_value)


def _get_grad_dtype(self):
    if self.grad_fn is not None:
        raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
    return self.dtype


def _set_grad_dtype(self, value):
    if self.grad_fn is not None:
        raise RuntimeError("grad_dtype can only be set on leaf tensors.")
    if value is not self.dtype:
        raise RuntimeError(f"ember's autograd accumulates gradients in the tensor's own dtype "
                           f"({self.dtype}); grad_dtype={value} is not supported")


def is_set_to(self, tensor) -> bool:
    """True if both tensors view the same memory with the same offset, sizes and strides."""
    return (self.data_ptr() == tensor.data_ptr() and self.shape == tensor.shape
            and self.stride() == tensor.stride() and self.dtype is tensor.dtype
            and self.device == tensor.device)


def set_(self, source=None, storage_offset: int = 0, size=None, stride=None):
    """Make this tensor view ``source``'s memory: ``set_()`` an empty tensor, ``set_(t)``
    the memory, sizes and strides of tensor ``t``, ``set_(storage, offset, size, stride)``
    a strided view of a storage (strides in elements)."""
    from ember._legacy import TypedStorage, UntypedStorage
    from ember._tensor import Tensor

    if source is None:
        self._data = self._data[:0].reshape(0) if self._data.size else self._data.reshape(0)
    elif isinstance(source, Tensor):
        if source.dtype is not self.dtype:
            raise RuntimeError(f"Expected object of scalar type {self.dtype} but got scalar "
                               f"type {source.dtype} for argument 'source'")
        self._data = source._data
    elif isinstance(source, (TypedStorage, UntypedStorage)):
        from ember._backend import backend_of

        raw = source.untyped()._bytes if isinstance(source, TypedStorage) else source._bytes
        xp = backend_of(raw).xp
        flat = raw.view(self._data.dtype)
        size = tuple(size) if size is not None else (flat.size - storage_offset,)
        if stride is None:
            stride = tuple(int(np.prod(size[i + 1:])) for i in range(len(size)))
        item = flat.itemsize
        self._data = xp.lib.stride_tricks.as_strided(
            flat[storage_offset:], shape=size, strides=tuple(s * item for s in stride))
    else:
        raise TypeError(f"set_(): source must be a Tensor or a storage, not "
                        f"{type(source).__name__}")
    self._bump_version()
    return self


def _sizes(sizes):
    if len(sizes) == 1 and not isinstance(sizes[0], int):
        return tuple(sizes[0])
    return tuple(sizes)


def resize_(self, *sizes, memory_format=None):
    """Resize in place to ``sizes`` (contiguous). The first elements keep their values in
    memory order; new elements are uninitialized. Raises for a tensor that requires grad."""
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    shape = _sizes(sizes)
    if any(s < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(shape)}")
    n = int(np.prod(shape))
    data = self._data
    from ember._backend import backend_of

    xp = backend_of(data).xp
    if n <= data.size and data.flags.c_contiguous:
        self._data = data.reshape(-1)[:n].reshape(shape)
    else:
        new = xp.empty(n, dtype=data.dtype)
        k = min(n, data.size)
        new[:k] = data.reshape(-1)[:k]
        self._data = new.reshape(shape)
    self._bump_version()
    return self


def resize_as_(self, the_template, memory_format=None):
    """``self.resize_(the_template.shape)``."""
    return self.resize_(tuple(the_template.shape), memory_format=memory_format)


def resize(self, *sizes):
    """Deprecated non-in-place resize: a view of the same number of elements in the new
    shape (autograd flows through it)."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    shape = _sizes(sizes)
    n = int(np.prod(shape))
    if n != self.numel():
        raise RuntimeError(
            f"requested resize to {'x'.join(map(str, shape))} ({n} elements in total), but "
            f"the given tensor has a size of {'x'.join(map(str, self.shape))} "
            f"({self.numel()} elements). autograd's resize can only change the shape of a "
            "given tensor, while preserving the number of elements. ")
    return self.contiguous().view(shape)


def resize_as(self, tensor):
    """Deprecated non-in-place ``resize_as``: ``self.resize(tensor.shape)``."""
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return self.contiguous().view(tuple(tensor.shape)) if tensor.numel() == self.numel() \
        else resize(self, tuple(tensor.shape))


def module_load(self, other, assign=False):
    """What ``nn.Module.load_state_dict`` puts in place of this parameter or buffer:
    ``self.copy_(other).detach()``, or ``other.detach()`` if ``assign``."""
    if assign:
        return other.detach()
    return self.copy_(other).detach()


def to_dense(self, dtype=None, *, masked_grad=None):
    """This (strided) tensor, cast to ``dtype`` if given."""
    return self if dtype is None or dtype is self.dtype else self.to(dtype)


def to_mkldnn(self, dtype=None):
    """oneDNN's blocked layout; ember has strided tensors only, so this raises."""
    raise RuntimeError("to_mkldnn: ember has no oneDNN (mkldnn) tensor layout; its tensors "
                       "are strided")


def to_padded_tensor(self, padding, output_size=None):
    """Only nested tensors have a padded form; ember's tensors are strided, so this raises,
    as PyTorch does for a strided tensor."""
    raise RuntimeError("to_padded_tensor: only nested tensors have a padded form; ember has "
                       "strided tensors only (PyTorch raises for strided tensors too)")


def _ipu(self, device=None, non_blocking=False, memory_format=None):
    raise RuntimeError("PyTorch is not linked with support for ipu devices")


def _xpu(self, device=None, non_blocking=False, memory_format=None):
    raise AssertionError("Torch not compiled with XPU enabled")


def _mtia(self, device=None, non_blocking=False, memory_format=None):
    raise AssertionError("Torch not compiled with MTIA enabled")


_DEPRECATED_19 = "This function was deprecated since version 1.9 and is now removed. "
_REMOVED = {
    "reinforce": "reinforce() was removed.\nUse torch.distributions instead.\nSee "
                 "https://pytorch.org/docs/main/distributions.html",
    "eig": _DEPRECATED_19 + "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or "
                            "`cdouble` rather than real tensors mimicking complex tensors.",
    "lstsq": _DEPRECATED_19 + "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.",
    "solve": _DEPRECATED_19 + "`torch.solve` is deprecated in favor of `torch.linalg.solve`. "
                              "`torch.linalg.solve` has its arguments reversed and does not "
                              "return the LU factorization.",
    "symeig": _DEPRECATED_19 + "The default behavior has changed from using the upper "
                               "triangular portion of the matrix by default to using the lower "
                               "triangular portion.",
}


def reinforce(self, reward):
    """Removed from PyTorch (use ``ember.distributions``): raises PyTorch's message."""
    raise RuntimeError(_REMOVED["reinforce"])


def eig(self, eigenvectors=False):
    """Removed from PyTorch (use ``ember.linalg.eig``): raises PyTorch's message."""
    raise RuntimeError(_REMOVED["eig"])


def lstsq(self, other):
    """Removed from PyTorch (use ``ember.linalg.lstsq``): raises PyTorch's message."""
    raise RuntimeError(_REMOVED["lstsq"])


def solve(self, other):
    """Removed from PyTorch (use ``ember.linalg.solve``): raises PyTorch's message."""
    raise RuntimeError(_REMOVED["solve"])


def symeig(self, eigenvectors=False):
    """Removed from PyTorch (use ``ember.linalg.eigh``): raises PyTorch's message."""
    raise RuntimeError(_REMOVED["symeig"])


def as_subclass(self, cls):
    """This tensor as an instance of ``cls`` (a subclass of :class:`ember.Tensor`): an alias
    sharing the data, attached to the autograd graph (a view of the whole tensor), as
    PyTorch's. ember has no ``__torch_function__``, so ops on the result return plain
    tensors."""
    from ember._tensor import Tensor

    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                        "Tensor is not possible. Make sure your class inherits from Tensor.")
    out = self.view_as(self)
    out.__class__ = cls
    return out


def _get_name(self):
    return self.__dict__.get("_surface_name")


def _set_name(self, value):
    self.__dict__["_surface_name"] = value


def _volatile(self):
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                  stacklevel=2)
    return False


def _hash_tensor(self, dim=None, *, keepdim=False, mode=0):
    from ember._surface_rest import hash_tensor

    return hash_tensor(self, dim, keepdim=keepdim, mode=mode)


def install(Tensor) -> None:
    """Put the methods and attributes on ``Tensor``."""
    for fn in (apply_, map_, map2_, bfloat16, const_data_ptr, dim_order, fill_diagonal_,
               is_set_to, set_, resize_, resize_as_, resize, resize_as, module_load, to_dense,
               to_mkldnn, as_subclass, to_padded_tensor):
        setattr(Tensor, fn.__name__, fn)
    Tensor.ipu, Tensor.xpu, Tensor.mtia = _ipu, _xpu, _mtia
    Tensor.hash_tensor = _hash_tensor
    Tensor.is_distributed = lambda self: False
    Tensor.grad_dtype = property(_get_grad_dtype, _set_grad_dtype, doc=(
        "The dtype of this leaf's gradients: its own dtype (ember accumulates gradients in "
        "the tensor's dtype; setting another raises)."))
    Tensor.name = property(_get_name, _set_name, doc=(
        "A name a program gives the tensor (None until set), as torch's settable ``name``."))
    Tensor.is_xla = property(lambda self: False, doc="False: ember has no XLA device.")
    Tensor.volatile = property(_volatile, doc="Removed from PyTorch: always False.")
    for fn in (reinforce, eig, lstsq, solve, symeig):
        setattr(Tensor, fn.__name__, fn)

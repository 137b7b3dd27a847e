"""The Python face of ``ember.Tensor``.

The compiled base (``ember._C._core.TensorBase``) holds the array and the autograd
fields. This class adds the attributes and conversions of ``torch.Tensor``; the op
methods (``add``, ``sum``, ``view``, ``__getitem__``, ...) are installed from the op
families in ``ember._ops`` at the bottom of this file, in one visible place.
"""

from __future__ import annotations

import numpy as np

from ember import _dtype
from ember._backend import backend_of
from ember._C import _core
from ember._device import device as _device_cls

__all__ = ["Tensor", "Size"]


class Size(tuple):
    """A tensor's shape: a tuple of ints with PyTorch's repr (``ember.Size([2, 3])``)."""

    def __repr__(self) -> str:
        return f"ember.Size({list(self)})"

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, item):
        r = tuple.__getitem__(self, item)
        return Size(r) if isinstance(item, slice) else r


_TYPE_NAMES = {
    "float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
    "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor", "int8": "CharTensor",
    "uint8": "ByteTensor", "bool": "BoolTensor", "complex64": "ComplexFloatTensor",
    "complex128": "ComplexDoubleTensor", "bfloat16": "BFloat16Tensor",
    "uint16": "UInt16Tensor", "uint32": "UInt32Tensor", "uint64": "UInt64Tensor",
    "float8_e4m3fn": "Float8_e4m3fnTensor", "float8_e5m2": "Float8_e5m2Tensor",
    "float8_e4m3fnuz": "Float8_e4m3fnuzTensor", "float8_e5m2fnuz": "Float8_e5m2fnuzTensor",
    "float8_e8m0fnu": "Float8_e8m0fnuTensor",
}


def _rebuild_tensor(array, requires_grad, cls=None, state=None):
    """Unpickle a tensor (``Tensor.__reduce_ex__``): of class ``cls`` (a subclass) and with
    ``state`` (its ``__dict__``) where given."""
    t = _core.make_tensor_from_array(array, requires_grad)
    if cls is not None:
        t.__class__ = cls
    if state:
        _set_state(t, state)
    return t


def _pickled_class_and_state(t, base):
    """The ``(cls, state)`` arguments that a pickled ``t`` adds for its rebuild function: its
    class where it is a subclass of ``base``, its ``__dict__`` where not empty; none in the
    common case, so those pickles stay as they were."""
    cls = type(t) if type(t) is not base else None
    state = dict(t.__dict__) or None
    return (cls, state) if cls is not None or state else ()


def _set_state(t, state):
    """Give ``t`` the pickled ``state`` of its ``__dict__``, through the class's own
    ``__setstate__`` where it has one (as PyTorch does)."""
    setstate = getattr(type(t), "__setstate__", None)
    if setstate is not None and setstate is not getattr(_core.TensorBase, "__setstate__", None):
        setstate(t, state)
    else:
        t.__dict__.update(state)


def _cast(self, dtype):
    """``self.to(dtype)`` for the dtype methods (``float()``, ``long()`` ...): ``self`` itself
    when it already has that dtype, without parsing ``to``'s arguments. Their
    ``memory_format`` is ``preserve_format``'s: the cast keeps the layout."""
    if self.dtype is dtype:
        return self
    return self.to(dtype)


class Tensor(_core.TensorBase):
    """A multi-dimensional array with autograd, ``torch.Tensor``'s counterpart.

    ``ember.Tensor(data)`` makes a tensor of the default float dtype from data, and
    ``ember.Tensor(*sizes)`` an uninitialized one; prefer :func:`ember.tensor`.
    """

    def __new__(cls, *args, device=None):
        from ember._ops.creation import empty, tensor

        if len(args) == 1 and not isinstance(args[0], int):
            return tensor(args[0], dtype=_dtype.get_default_dtype(), device=device)
        if all(isinstance(a, int) for a in args):
            return empty(*args, dtype=_dtype.get_default_dtype(), device=device)
        raise TypeError(f"Tensor(): invalid arguments {args!r}")

    # -- attributes ---------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    @property
    def dtype(self) -> _dtype.dtype:
        return _dtype.from_numpy(self._data.dtype)

    @property
    def device(self) -> _device_cls:
        return backend_of(self._data).device_of(self._data)

    @property
    def is_cuda(self) -> bool:
        return backend_of(self._data).type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return backend_of(self._data).type == "cpu"

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def data(self) -> Tensor:
        return self.detach()

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, _core.TensorBase):
            raise TypeError(f"data must be a Tensor, not {type(value).__name__}")
        self._data = value._data

    @property
    def layout(self):
        from ember._misc import strided

        return strided

    @property
    def is_sparse(self) -> bool:
        return False

    @property
    def is_quantized(self) -> bool:
        return False

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    def dim(self) -> int:
        return self._data.ndim

    def ndimension(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    nelement = numel

    def element_size(self) -> int:
        return self._data.itemsize

    def stride(self, dim=None):
        item = self._data.itemsize
        strides = tuple(s // item for s in self._data.strides)
        if self._data.size <= 1 or 0 in self._data.shape:
            strides = _contiguous_strides(self._data.shape)
        if dim is None:
            return strides
        return strides[_wrap_dim(dim, self._data.ndim)]

    def storage_offset(self) -> int:
        arr = self._data
        root = arr
        while isinstance(getattr(root, "base", None), type(arr)):
            root = root.base
        if root is arr:
            return 0
        return (_data_ptr(arr) - _data_ptr(root)) // arr.itemsize

    def data_ptr(self) -> int:
        return _data_ptr(self._data)

    def is_contiguous(self, memory_format=None) -> bool:
        """Whether the tensor is dense in ``memory_format``'s order (row-major by default;
        NOTE [ Memory formats ])."""
        if memory_format is None:
            return bool(self._data.flags.c_contiguous)
        from ember._ops._memory_format import check_format, is_contiguous_as

        return is_contiguous_as(self._data, check_format(memory_format, "is_contiguous"))

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point  # bfloat16 and float8 (ml_dtypes) included

    def is_complex(self) -> bool:
        return self._data.dtype.kind == "c"

    def is_signed(self) -> bool:
        return self._data.dtype.kind in "ifc"

    def get_device(self) -> int:
        dev = self.device
        return -1 if dev.type == "cpu" else (dev.index or 0)

    def type(self, dtype=None, non_blocking=False, **kwargs):
        """The legacy type name (``'torch.FloatTensor'``, PyTorch's spelling, which programs
        compare with) without ``dtype``; else a copy converted to ``dtype``: an ember dtype,
        a legacy type (``ember.DoubleTensor``) or its name (``'torch.cuda.LongTensor'``)."""
        if dtype is None:
            prefix = "torch.cuda." if self.is_cuda else "torch."
            return prefix + _TYPE_NAMES[self.dtype.name]
        legacy = getattr(dtype, "_legacy_dtype", None)
        if legacy is not None:
            return self.to(legacy, device=dtype._legacy_device)
        if isinstance(dtype, str):
            names = {v: k for k, v in _TYPE_NAMES.items()}
            parts = dtype.split(".")
            if parts[-1] not in names or parts[0] not in ("torch", "ember") or \
                    parts[1:-1] not in ([], ["cuda"]):
                raise ValueError(f"invalid type: '{dtype}'")
            return self.to(getattr(_dtype, names[parts[-1]]),
                           device="cuda" if parts[1:-1] == ["cuda"] else self.device)
        return self.to(dtype)

    # -- conversion to Python and NumPy -------------------------------------
    def item(self):
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self._data.reshape(()).item()

    def share_memory_(self) -> Tensor:
        """Move the data to shared memory (a no-op if it is there already); returns self.
        The tensor then travels to other processes (ember.multiprocessing) without a copy."""
        from ember.multiprocessing.reductions import share_memory_

        return share_memory_(self)

    def is_shared(self) -> bool:
        """True if the data is in shared memory."""
        from ember.multiprocessing.reductions import is_shared

        return is_shared(self)

    def tolist(self):
        return backend_of(self._data).to_numpy(self._data).tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        if self.requires_grad and not force and _core.is_grad_enabled():
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead.")
        if not self.is_cpu:
            if not force:
                raise TypeError(
                    f"can't convert {self.device} device type tensor to numpy. Use "
                    "Tensor.cpu() to copy the tensor to host memory first.")
            return backend_of(self._data).to_numpy(self._data)
        return self._data

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy()
        if dtype is not None:
            arr = arr.astype(dtype, copy=False)
        return arr.copy() if copy else arr

    def __dlpack__(self, *args, **kwargs):
        if self.requires_grad:
            raise RuntimeError(
                "Can't export tensors that require gradient, use tensor.detach()")
        return self._data.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(
                "Boolean value of Tensor with more than one value is ambiguous"
                if self._data.size > 1 else "Boolean value of Tensor with no values is ambiguous")
        return bool(self._data.reshape(()).item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "biu" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __hash__(self) -> int:
        return id(self)

    def __reduce_ex__(self, protocol):
        # a subclass (an embervision TVTensor, a user's class) and attributes set on the
        # tensor survive pickling and copy.copy, as in PyTorch
        return (_rebuild_tensor, (backend_of(self._data).to_numpy(self._data).copy(),
                                  bool(self.requires_grad and self.is_leaf))
                + _pickled_class_and_state(self, Tensor))

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the "
                "deepcopy protocol at the moment.")
        if id(self) in memo:
            return memo[id(self)]
        new = _core.make_tensor_from_array(self._data.copy(), self._requires_grad)
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        if type(self) is not Tensor:
            new.__class__ = type(self)
        new.__dict__.update({k: v for k, v in self.__dict__.items()})
        memo[id(self)] = new
        return new

    def __repr__(self, *, tensor_contents=None) -> str:
        from ember._tensor_str import tensor_repr

        return tensor_repr(self)

    def __format__(self, spec):
        if self._data.ndim == 0 and spec:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    # -- autograd -----------------------------------------------------------
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate the gradient of this tensor into the leaves' ``.grad``."""
        if (create_graph is False and inputs is None
                and _core.backward_one(self, gradient, bool(retain_graph))):
            return
        from ember.autograd import backward

        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self) -> Tensor:
        """A tensor sharing this one's data (and version counter), outside the graph."""
        out = _core.make_tensor_from_array(self._data)
        if self._vc is None:
            self._bump_version()
            self._vc.value -= 1
        out._vc = self._vc
        return out

    def detach_(self) -> Tensor:
        if self._base is not None and self._grad_fn is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        return self

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self.requires_grad = requires_grad
        return self

    def retain_grad(self) -> None:
        if self._grad_fn is None:
            if not self._requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        self._retains_grad = True
        self._grad_fn._register_retain(self._output_nr, self)

    @property
    def retains_grad(self) -> bool:
        return bool(self._retains_grad)

    def register_hook(self, hook):
        """Register ``hook(grad) -> Tensor or None`` to run when this tensor's gradient
        is computed; a returned tensor replaces the gradient."""
        if not self.requires_grad:
            raise RuntimeError(
                "cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            return self._grad_fn._register_tensor_hook(self._output_nr, hook)
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        return _core._RemovableHandle(self._hooks, hook)

    # -- devices and dtypes -------------------------------------------------
    def to(self, *args, **kwargs) -> Tensor:
        """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``; with
        ``copy=True`` always a new tensor, else self when nothing changes."""
        from ember._ops.conversion import to

        return to(self, *args, **kwargs)

    def cpu(self) -> Tensor:
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False) -> Tensor:
        if isinstance(device, int):
            device = _device_cls("cuda", device)
        return self.to(device or "cuda")

    def float(self, memory_format=None) -> Tensor:
        return _cast(self, _dtype.float32)

    def double(self, memory_format=None) -> Tensor:
        return _cast(self, _dtype.float64)

    def half(self, memory_format=None) -> Tensor:
        return _cast(self, _dtype.float16)

    def chalf(self, memory_format=None) -> Tensor:
        """``self.to(torch.complex32)`` in PyTorch. ember has no complex32 (NumPy has no
        32-bit complex type): raises a TypeError naming the nearest dtype, complex64."""
        raise TypeError("chalf(): ember has no complex32 dtype (NumPy has no 32-bit complex "
                        "type); use .cfloat() for complex64")

    def long(self, memory_format=None) -> Tensor:
        return _cast(self, _dtype.int64)

    def int(self, memory_format=None) -> Tensor:
        return _cast(self, _dtype.int32)

    def short(self, memory_format=None) -> Tensor:
        return _cast(self, _dtype.int16)

    def char(self, memory_format=None) -> Tensor:
        return _cast(self, _dtype.int8)

    def byte(self, memory_format=None) -> Tensor:
        return _cast(self, _dtype.uint8)

    def bool(self, memory_format=None) -> Tensor:
        return _cast(self, _dtype.bool)

    def cfloat(self, memory_format=None) -> Tensor:
        return _cast(self, _dtype.complex64)

    def cdouble(self, memory_format=None) -> Tensor:
        return _cast(self, _dtype.complex128)

    def type_as(self, other: Tensor) -> Tensor:
        return self.to(other.dtype)

    def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False) -> Tensor:
        from ember._ops.creation import tensor

        return tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                      requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
        from ember._ops.creation import empty

        return empty(*size, dtype=dtype or self.dtype, device=device or self.device,
                     requires_grad=requires_grad)

    def new_zeros(self, *args, size=None, dtype=None, device=None,
                  requires_grad=False) -> Tensor:
        from ember._ops._util import varargs_or_keyword
        from ember._ops.creation import zeros

        size = varargs_or_keyword("new_zeros", args, size, "size")

        return zeros(*size, dtype=dtype or self.dtype, device=device or self.device,
                     requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False) -> Tensor:
        from ember._ops.creation import ones

        return ones(*size, dtype=dtype or self.dtype, device=device or self.device,
                    requires_grad=requires_grad)

    def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
        from ember._ops.creation import full

        return full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                    requires_grad=requires_grad)

    @property
    def T(self) -> Tensor:
        return self.permute(*range(self._data.ndim - 1, -1, -1))

    @property
    def mT(self) -> Tensor:
        if self._data.ndim < 2:
            raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. "
                               f"Got {self._data.ndim}-D tensor.")
        return self.transpose(-2, -1)

    @property
    def H(self) -> Tensor:
        return self.T.conj() if self.is_complex() else self.T

    @property
    def mH(self) -> Tensor:
        return self.mT.conj() if self.is_complex() else self.mT


def _wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def _contiguous_strides(shape):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def _data_ptr(arr) -> int:
    iface = getattr(arr, "__array_interface__", None) or arr.__cuda_array_interface__
    return iface["data"][0]


def _install_methods() -> None:
    """Install the Tensor methods of every registered op (the one place where they are
    added; NOTE [ The op registry ]). Called again after a namespace registers ops."""
    from ember._ops._registry import registered_ops

    compiled = vars(_core.TensorBase)
    for op in registered_ops():
        for name, fn in op.methods.items():
            if name in compiled:  # the compiled fast path wins (it falls back to these)
                continue
            setattr(Tensor, name, fn)


_core.set_tensor_class(Tensor)

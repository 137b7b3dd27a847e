"""The Tensor type itself: attributes, conversions, dtypes and devices, protocols."""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest

import ember
from ember.testing import assert_close

ALL_DTYPES = [ember.bool, ember.uint8, ember.int8, ember.int16, ember.int32, ember.int64,
              ember.float16, ember.float32, ember.float64, ember.complex64, ember.complex128]


# -- attributes -------------------------------------------------------------------

def test_shape_size_dim_numel():
    t = ember.zeros(2, 3, 4)
    assert t.shape == (2, 3, 4) and isinstance(t.shape, ember.Size)
    assert repr(t.shape) == "ember.Size([2, 3, 4])"
    assert t.size() == ember.Size([2, 3, 4])
    assert t.size(1) == 3 and t.size(-1) == 4
    assert t.dim() == t.ndim == 3
    assert t.numel() == t.nelement() == 24
    assert t.shape[1:] == ember.Size([3, 4]) and isinstance(t.shape[1:], ember.Size)
    assert t.shape.numel() == 24
    with pytest.raises(IndexError, match=r"expected to be in range of \[-3, 2\], but got 3"):
        t.size(3)


def test_dtype_device_and_flags():
    t = ember.tensor([1.0, 2.0])
    assert t.dtype is ember.float32
    assert t.device == ember.device("cpu") and t.device == "cpu"
    assert not t.is_cuda and t.is_cpu
    assert t.is_leaf and not t.requires_grad and t.grad is None and t.grad_fn is None
    assert t.is_floating_point() and not t.is_complex()
    assert t.element_size() == t.itemsize == 4 and t.nbytes == 8
    assert t.layout == "strided" and t.get_device() == -1
    assert ember.tensor([1]).dtype is ember.int64
    assert ember.tensor([True]).dtype is ember.bool
    assert ember.tensor([1j]).dtype is ember.complex64


def test_stride_storage_offset_contiguity():
    t = ember.arange(24).reshape(2, 3, 4)
    assert t.stride() == (12, 4, 1) and t.stride(0) == 12 and t.stride(-1) == 1
    assert t.storage_offset() == 0 and t.is_contiguous()
    v = t.transpose(0, 2)
    assert v.stride() == (1, 4, 12) and not v.is_contiguous()
    assert v.contiguous().is_contiguous()
    s = t[1, 1:]
    assert s.storage_offset() == 16
    assert t.data_ptr() + 16 * 8 == s.data_ptr()


def test_T_mT_H():
    t = ember.arange(6.0).reshape(2, 3)
    assert t.T.shape == (3, 2) and t.mT.shape == (3, 2)
    b = ember.arange(24.0).reshape(2, 3, 4)
    assert b.mT.shape == (2, 4, 3)
    assert_close(b.T.numpy(), np.arange(24.0).reshape(2, 3, 4).T)
    c = ember.tensor([[1 + 2j, 3j]])
    assert_close(c.H.numpy(), np.conj(c.numpy().T))
    with pytest.raises(RuntimeError, match="only supported on matrices"):
        _ = ember.ones(3).mT


# -- conversions -----------------------------------------------------------------

def test_item_tolist_numpy():
    t = ember.tensor([[1.5, 2.0]])
    assert t.tolist() == [[1.5, 2.0]]
    assert ember.tensor(3.5).item() == 3.5 and isinstance(ember.tensor(3).item(), int)
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted"):
        t.item()
    arr = t.numpy()
    arr[0, 0] = 9  # numpy() shares memory
    assert t[0, 0].item() == 9
    g = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        g.numpy()
    assert g.detach().numpy().tolist() == [1.0, 1.0]
    with ember.no_grad():  # as in PyTorch, allowed where no graph is recorded
        assert g.numpy().tolist() == [1.0, 1.0]


def test_python_number_protocols():
    assert bool(ember.tensor([1])) is True and bool(ember.tensor(0.0)) is False
    assert float(ember.tensor([2.5])) == 2.5 and int(ember.tensor(7.9)) == 7
    assert complex(ember.tensor(1 + 2j)) == 1 + 2j
    assert [10, 20, 30][ember.tensor(1)] == 20  # __index__
    with pytest.raises(TypeError, match="only integer tensors of a single element"):
        [1, 2][ember.tensor(1.0)]
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one"):
        bool(ember.tensor([1, 2]))
    assert f"{ember.tensor(1.23456):.2f}" == "1.23"


def test_len_and_iteration():
    t = ember.arange(6).reshape(3, 2)
    assert len(t) == 3
    rows = list(t)
    assert len(rows) == 3 and rows[1].tolist() == [2, 3]
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(ember.tensor(1))
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(ember.tensor(1))


@pytest.mark.parametrize("name,dtype", [
    ("float", ember.float32), ("double", ember.float64), ("half", ember.float16),
    ("long", ember.int64), ("int", ember.int32), ("short", ember.int16), ("char", ember.int8),
    ("byte", ember.uint8), ("bool", ember.bool), ("cfloat", ember.complex64),
    ("cdouble", ember.complex128),
])
def test_dtype_conversion_methods(name, dtype):
    t = ember.tensor([1.0, 0.0, 2.0])
    assert getattr(t, name)().dtype is dtype
    assert t.to(dtype).dtype is dtype


def test_to_returns_self_when_nothing_changes_and_copies_otherwise():
    t = ember.ones(3)
    assert t.to(ember.float32) is t and t.to("cpu") is t
    c = t.to(ember.float32, copy=True)
    assert c is not t and c.data_ptr() != t.data_ptr()
    assert t.to(ember.zeros(1, dtype=ember.float64)).dtype is ember.float64
    assert t.to("cpu", ember.int64).dtype is ember.int64
    assert t.to(device="cpu", dtype=ember.float16).dtype is ember.float16


def test_to_dtype_is_differentiable():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = (x.double() * 3).sum()
    y.backward()
    assert x.grad.dtype is ember.float32 and x.grad.tolist() == [3.0, 3.0]


def test_type_and_type_as():
    t = ember.ones(2)
    assert t.type() == "torch.FloatTensor"
    assert ember.ones(2, dtype=ember.int64).type() == "torch.LongTensor"
    assert t.type(ember.float64).dtype is ember.float64
    assert t.type("ember.IntTensor").dtype is ember.int32
    assert t.type_as(ember.zeros(1, dtype=ember.uint8)).dtype is ember.uint8


def test_new_constructors_keep_dtype_and_device():
    t = ember.ones(2, dtype=ember.float64)
    assert t.new_zeros(3).dtype is ember.float64 and t.new_zeros((2, 2)).shape == (2, 2)
    assert t.new_ones(2, 3).tolist() == [[1.0] * 3] * 2
    assert t.new_full((2,), 7).tolist() == [7.0, 7.0] and t.new_full((2,), 7).dtype is \
        ember.float64
    assert t.new_empty(4).shape == (4,)
    assert t.new_tensor([1, 2]).dtype is ember.float64
    assert t.new_zeros(2, dtype=ember.int32).dtype is ember.int32
    assert t.new_ones(2, requires_grad=True).requires_grad


def test_legacy_constructor():
    assert ember.Tensor([1, 2]).dtype is ember.float32
    assert ember.Tensor(2, 3).shape == (2, 3)


def test_data_property():
    x = ember.ones(2, requires_grad=True)
    d = x.data
    assert not d.requires_grad and d.data_ptr() == x.data_ptr()
    x.data = ember.zeros(2)
    assert x.tolist() == [0.0, 0.0] and x.requires_grad
    with pytest.raises(TypeError, match="data must be a Tensor"):
        x.data = [1, 2]


def test_grad_setter_checks():
    x = ember.ones(2, requires_grad=True)
    x.grad = ember.zeros(2)
    assert x.grad.tolist() == [0.0, 0.0]
    with pytest.raises(RuntimeError, match="assigned grad has data of a different size"):
        x.grad = ember.zeros(3)
    with pytest.raises(RuntimeError, match="assigned grad has data of a different type"):
        x.grad = ember.zeros(2, dtype=ember.float64)
    with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None"):
        x.grad = 3


def test_requires_grad_rules():
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        ember.tensor([1, 2]).requires_grad_()
    y = ember.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf"):
        y.requires_grad = False


# -- protocols ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=lambda d: d.name)
def test_pickle_roundtrip(dtype):
    t = ember.arange(6).reshape(2, 3).to(dtype)
    u = pickle.loads(pickle.dumps(t))
    assert u.dtype is dtype and u.shape == t.shape
    assert np.array_equal(u.numpy(), t.numpy())


def test_pickle_keeps_requires_grad_of_leaves():
    x = ember.ones(2, requires_grad=True)
    assert pickle.loads(pickle.dumps(x)).requires_grad
    y = pickle.loads(pickle.dumps(ember.arange(3.0)[1:]))  # a view pickles its own values
    assert y.tolist() == [1.0, 2.0]


class _Tagged(ember.Tensor):
    pass


class _Restored(ember.Tensor):
    def __setstate__(self, state):
        self.__dict__["restored_from"] = state


class _TaggedParameter(ember.nn.Parameter):
    pass


def test_pickle_and_copy_keep_subclass_and_attributes():
    # as PyTorch: the class of a subclass and the tensor's __dict__ survive pickle and copy
    t = ember.arange(3.0).as_subclass(_Tagged)
    t.tag = "boxes"
    for u in (pickle.loads(pickle.dumps(t)), copy.copy(t)):
        assert type(u) is _Tagged and u.tag == "boxes" and u.tolist() == [0.0, 1.0, 2.0]
    plain = ember.ones(2)
    plain.note = 1
    assert pickle.loads(pickle.dumps(plain)).note == 1
    r = ember.ones(1).as_subclass(_Restored)
    r.k = 2
    assert pickle.loads(pickle.dumps(r)).restored_from == {"k": 2}  # the class's __setstate__
    p = ember.nn.Parameter(ember.ones(2))
    p.shard = 0
    q = pickle.loads(pickle.dumps(p))
    assert type(q) is ember.nn.Parameter and q.shard == 0 and q.requires_grad
    assert type(pickle.loads(pickle.dumps(_TaggedParameter(ember.ones(2))))) is _TaggedParameter
    # the common case pickles as before: no class and no state
    assert len(pickle.loads(pickle.dumps(ember.ones(2))).__dict__) == 0


def test_deepcopy():
    x = ember.ones(2, requires_grad=True)
    x.grad = ember.full((2,), 3.0)
    x.tag = "weights"
    y = copy.deepcopy(x)
    assert y.requires_grad and y.grad.tolist() == [3.0, 3.0] and y.tag == "weights"
    assert y.data_ptr() != x.data_ptr()
    with pytest.raises(RuntimeError, match="Only Tensors created explicitly by the user"):
        copy.deepcopy(x * 2)


def test_array_protocol():
    t = ember.tensor([[1, 2], [3, 4]], dtype=ember.int32)
    a = np.asarray(t)
    assert a.dtype == np.int32 and a.tolist() == [[1, 2], [3, 4]]
    assert np.array(t, dtype=np.float64).dtype == np.float64
    assert np.add(t, 1).tolist() == [[2, 3], [4, 5]]  # ufuncs see the array


def test_dlpack_with_numpy_shares_memory():
    t = ember.arange(4.0)
    a = np.from_dlpack(t)
    a[0] = 42
    assert t[0].item() == 42
    b = np.arange(3, dtype=np.float32)
    u = ember.from_dlpack(b)
    b[1] = -1
    assert u.tolist() == [0.0, -1.0, 2.0]
    assert t.__dlpack_device__() == (1, 0)


def test_dlpack_with_torch_both_ways():
    torch = pytest.importorskip("torch")
    t = ember.arange(4.0)
    tt = torch.from_dlpack(t)
    tt[1] = 7
    assert t[1].item() == 7
    e = ember.from_dlpack(torch.arange(3, dtype=torch.float64))
    assert e.dtype is ember.float64 and e.tolist() == [0.0, 1.0, 2.0]


def test_hash_is_identity_and_weakref_works():
    import weakref

    a, b = ember.ones(1), ember.ones(1)
    assert hash(a) != hash(b) and {a: 1, b: 2}[a] == 1
    r = weakref.ref(a)
    assert r() is a


def test_arbitrary_attributes():
    t = ember.ones(1)
    t.name = "x"
    assert t.name == "x"


# -- dtypes --------------------------------------------------------------------------

def test_dtype_objects():
    assert repr(ember.float32) == "ember.float32"
    assert ember.float is ember.float32 and ember.double is ember.float64
    assert ember.long is ember.int64 and ember.half is ember.float16
    assert ember.float32.is_floating_point and not ember.int32.is_floating_point
    assert ember.complex64.is_complex and ember.float32.itemsize == 4
    assert pickle.loads(pickle.dumps(ember.float16)) is ember.float16


def test_default_dtype():
    assert ember.get_default_dtype() is ember.float32
    try:
        ember.set_default_dtype(ember.float64)
        assert ember.tensor([1.0]).dtype is ember.float64
        assert (ember.tensor([1, 2]) * 0.5).dtype is ember.float64
        assert ember.tensor([1j]).dtype is ember.complex128
    finally:
        ember.set_default_dtype(ember.float32)
    with pytest.raises(TypeError, match="only floating-point types"):
        ember.set_default_dtype(ember.int64)


@pytest.mark.parametrize("a", ALL_DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("b", ALL_DTYPES, ids=lambda d: d.name)
def test_promote_types_matches_torch(a, b):
    torch = pytest.importorskip("torch")
    expected = torch.promote_types(getattr(torch, a.name), getattr(torch, b.name))
    assert ember.promote_types(a, b).name == str(expected).split(".")[1]


def test_result_type_categories():
    i = ember.tensor([1, 2])
    f16 = ember.tensor([1.0], dtype=ember.float16)
    assert ember.result_type(i, 2.5) is ember.float32
    assert ember.result_type(f16, 2.5) is ember.float16
    assert ember.result_type(ember.tensor([1.0]), ember.tensor(1.0, dtype=ember.float64)) is \
        ember.float32
    assert ember.result_type(ember.tensor([1], dtype=ember.int8),
                             ember.tensor([1], dtype=ember.uint8)) is ember.int16
    assert ember.result_type(ember.tensor([True]), 1) is ember.int64
    assert ember.result_type(ember.tensor([1.0]), 1j) is ember.complex64
    assert ember.can_cast(ember.int32, ember.float32)
    assert not ember.can_cast(ember.float32, ember.int32)


def test_finfo_iinfo():
    f = ember.finfo(ember.float32)
    assert f.eps == float(np.finfo(np.float32).eps) and f.bits == 32
    assert ember.finfo().eps == f.eps
    assert math.isclose(ember.finfo(ember.float16).max, 65504.0)
    i = ember.iinfo(ember.int8)
    assert (i.min, i.max, i.bits) == (-128, 127, 8)
    assert ember.iinfo(ember.uint8).max == 255
    with pytest.raises(TypeError):
        ember.finfo(ember.int32)
    with pytest.raises(TypeError):
        ember.iinfo(ember.float32)


def test_device_objects():
    d = ember.device("cuda:1")
    assert d.type == "cuda" and d.index == 1 and str(d) == "cuda:1"
    assert repr(ember.device("cpu")) == "device(type='cpu')"
    assert ember.device("cuda", 0) == ember.device("cuda:0")
    assert ember.device(2) == ember.device("cuda:2")
    assert pickle.loads(pickle.dumps(d)) == d
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda device type"):
        ember.device("tpu")
    with pytest.raises(RuntimeError, match="Invalid device string"):
        ember.device("cuda:x")


def test_cuda_device_without_cupy_or_gpu_is_a_clear_error():
    try:
        import cupy

        if cupy.cuda.is_available():
            pytest.skip("a GPU is present")
    except ImportError:
        pass
    with pytest.raises(RuntimeError, match="CuPy|GPU"):
        ember.ones(2).to("cuda")

"""Creation ops: tensor/as_tensor/asarray/from_numpy/from_dlpack, filled tensors, ranges,
eye, complex/polar. Ranges are compared bit for bit with PyTorch when it is installed."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember
from ember.testing import assert_close

try:
    import torch
except ImportError:  # the PyTorch comparisons are skipped
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


@pytest.fixture
def default_float64():
    ember.set_default_dtype(ember.float64)
    yield
    ember.set_default_dtype(ember.float32)


# ---------------------------------------------------------------------------
# tensor, as_tensor, asarray

@pytest.mark.parametrize("data,dtype", [
    ([1, 2], ember.int64), ([1.0, 2], ember.float32), ([True, False], ember.bool),
    ([1, True], ember.int64), ([1, 2.5j], ember.complex64), (3, ember.int64),
    (3.5, ember.float32), ([], ember.float32), ([[]], ember.float32),
    (np.float32(2), ember.float32), (np.arange(3, dtype=np.int16), ember.int16),
    ([np.float64(2), 1], ember.float64), ([np.float32(1), 2.5], ember.float32),
    ([np.int32(1), 2], ember.int64), ((1, 2), ember.int64), (range(4), ember.int64),
    ([ember.tensor(1.0, dtype=ember.float64), 2], ember.float64),
    ([ember.tensor(1, dtype=ember.int32), 2], ember.int64),
    ([[1.0, 2], [3, 4j]], ember.complex64),
])
def test_tensor_dtype_inference(data, dtype):
    t = ember.tensor(data)
    assert t.dtype == dtype
    assert t.tolist() == np.asarray(
        [x.item() if isinstance(x, ember.Tensor) else x for x in data]
        if isinstance(data, list) and any(isinstance(x, ember.Tensor) for x in data)
        else data).tolist()


def test_tensor_default_dtype(default_float64):
    assert ember.tensor([1.5]).dtype == ember.float64
    assert ember.tensor([1j]).dtype == ember.complex128
    assert ember.tensor([1]).dtype == ember.int64


def test_tensor_copies_and_converts():
    a = np.arange(3.0)
    t = ember.tensor(a)
    a[0] = 7
    assert t.tolist() == [0.0, 1.0, 2.0]
    assert ember.tensor([1.7, -1.7], dtype=ember.int64).tolist() == [1, -1]
    t2 = ember.tensor(t, dtype=ember.float32)
    assert t2.dtype == ember.float32 and t2.data_ptr() != t.data_ptr()
    r = ember.tensor([1.0], requires_grad=True)
    assert r.requires_grad and r.is_leaf


@pytest.mark.parametrize("data,err,msg", [
    ([[1, 2], [3]], ValueError, r"expected sequence of length 2 at dim 1 \(got 1\)"),
    ([[1, 2], [3, 4, 5]], ValueError, r"expected sequence of length 2 at dim 1 \(got 3\)"),
    ([[[1, 2], [3, 4]], [[1, 2], [3]]], ValueError, r"expected sequence of length 2 at dim 2"),
    ([[1, 2], 5], TypeError, "not a sequence"),
    ("abc", TypeError, "invalid data type 'str'"),
    (["a"], ValueError, "too many dimensions 'str'"),
    ([None], RuntimeError, "Could not infer dtype of NoneType"),
    ({1: 2}, RuntimeError, "Could not infer dtype of dict"),
    ([2**63], ValueError, "Overflow when unpacking long long"),
    (2**64, ValueError, "Overflow when unpacking long long"),
    (np.zeros(3, dtype="datetime64[s]"), TypeError, "can't convert np.ndarray of type"),
])
def test_tensor_errors(data, err, msg):
    with pytest.raises(err, match=msg):
        ember.tensor(data)


def test_as_tensor_and_asarray_share_memory():
    a = np.arange(4.0)
    t = ember.as_tensor(a)
    a[1] = 10
    assert t.tolist()[1] == 10.0
    assert ember.as_tensor(t) is t
    c = ember.as_tensor(a, dtype=ember.float32)  # another dtype: a copy
    a[2] = 20
    assert c.tolist()[2] == 2.0 and c.dtype == ember.float32
    s = ember.asarray(a)
    a[3] = 30
    assert s.tolist()[3] == 30.0
    k = ember.asarray(a, copy=True)
    a[0] = -1
    assert k.tolist()[0] == 0.0
    g = ember.asarray([1.0, 2.0], requires_grad=True)
    assert g.requires_grad and g.dtype == ember.float32
    assert ember.asarray(np.float64(3.0)).dtype == ember.float64


# ---------------------------------------------------------------------------
# from_numpy, from_dlpack

def test_from_numpy_shares_memory_both_ways():
    a = np.zeros((2, 3), dtype=np.float32)
    t = ember.from_numpy(a)
    a[0, 1] = 5
    assert t.tolist()[0][1] == 5.0
    t.add_(1)
    assert a[0, 1] == 6.0 and a[1, 2] == 1.0
    assert t.numpy() is a or np.shares_memory(t.numpy(), a)
    v = ember.from_numpy(a[:, 1])  # a strided view still shares memory
    a[1, 1] = 42
    assert v.tolist() == [6.0, 42.0]


def test_from_numpy_errors():
    with pytest.raises(TypeError, match=r"expected np.ndarray \(got list\)"):
        ember.from_numpy([1, 2])
    with pytest.raises(ValueError, match="negative strides are not currently supported"):
        ember.from_numpy(np.arange(3)[::-1])
    with pytest.raises(TypeError, match="can't convert np.ndarray of type"):
        ember.from_numpy(np.zeros(2, dtype="datetime64[s]"))


def test_from_dlpack_numpy_both_ways():
    a = np.arange(6.0).reshape(2, 3)
    t = ember.from_dlpack(a)
    a[0, 0] = -1
    assert t.tolist()[0][0] == -1.0
    b = np.from_dlpack(t)
    t.mul_(2)
    assert b[0, 0] == -2.0 and np.shares_memory(b, a)
    u = ember.from_dlpack(t)
    assert u is not t and u.data_ptr() == t.data_ptr()
    with pytest.raises(RuntimeError, match="Can't export tensors that require gradient"):
        np.from_dlpack(ember.ones(2, requires_grad=True))


@needs_torch
def test_from_dlpack_torch_both_ways():
    tt = torch.arange(6.0).reshape(2, 3)
    e = ember.from_dlpack(tt)
    assert e.dtype == ember.float32 and e.shape == (2, 3)
    tt[0, 0] = 100.0
    assert e.tolist()[0][0] == 100.0
    back = torch.from_dlpack(e)
    e.add_(1)
    assert back[1, 2].item() == 6.0 and back.data_ptr() == tt.data_ptr()
    ints = ember.from_dlpack(torch.tensor([1, 2], dtype=torch.int64))
    assert ints.dtype == ember.int64 and ints.tolist() == [1, 2]


# ---------------------------------------------------------------------------
# zeros, ones, full, empty and the _like forms

@pytest.mark.parametrize("fn", [ember.zeros, ember.ones, ember.empty])
def test_filled_shapes(fn):
    for args in [(2, 3), ((2, 3),), ([2, 3],), (ember.Size([2, 3]),)]:
        assert fn(*args).shape == (2, 3)
        assert fn(*args).dtype == ember.float32
    assert fn(()).shape == ()
    assert fn(0).shape == (0,)
    assert fn(2, dtype=ember.int32).dtype == ember.int32
    assert fn(2, requires_grad=True).requires_grad


def test_filled_values_and_errors():
    assert ember.zeros(2, 2).tolist() == [[0.0, 0.0]] * 2
    assert ember.ones(3, dtype=ember.bool).tolist() == [True] * 3
    with pytest.raises(RuntimeError, match="zeros: Dimension size must be non-negative."):
        ember.zeros(2, -3)
    with pytest.raises(RuntimeError, match=r"Trying to create tensor with negative dimension -3: "
                                           r"\[2, -3\]"):
        ember.ones((2, -3))
    with pytest.raises(RuntimeError, match="negative dimension"):
        ember.empty(-1)
    with pytest.raises(TypeError, match="missing 1 required positional arguments"):
        ember.zeros()
    with pytest.raises(TypeError, match="size must be a sequence of ints"):
        ember.zeros(2.5)


@pytest.mark.parametrize("fill,dtype", [
    (3, ember.int64), (3.0, ember.float32), (True, ember.bool), (1 + 2j, ember.complex64),
    (np.int32(2), ember.int64), (np.float64(2.5), ember.float32),
    (ember.tensor(2.5), ember.float32),
])
def test_full_dtype_inference(fill, dtype):
    t = ember.full((2,), fill)
    assert t.dtype == dtype
    value = fill.item() if isinstance(fill, (ember.Tensor, np.generic)) else fill
    assert t.tolist() == [value] * 2


def test_full_conversions_and_errors():
    assert ember.full((2,), 1.5, dtype=ember.int64).tolist() == [1, 1]
    assert ember.full((2,), -1, dtype=ember.uint8).tolist() == [255, 255]
    assert ember.full((2,), float("inf"), dtype=ember.float16).tolist() == [math.inf] * 2
    assert ember.full([2, 3], 1, dtype=ember.float64).dtype == ember.float64
    for value, dtype, name in [(300, ember.uint8, "uint8_t"), (2**31, ember.int32, "int"),
                               (float("nan"), ember.int64, "int64_t"), (1e40, ember.float32,
                                                                        "float"),
                               (70000, ember.float16, "c10::Half"),
                               (1 + 1j, ember.float32, "float")]:
        with pytest.raises(RuntimeError, match=f"value cannot be converted to type {name} "
                                               "without overflow"):
            ember.full((2,), value, dtype=dtype)
    with pytest.raises(TypeError, match=r"full\(\): argument 'size' \(position 1\) must be tuple "
                                        r"of ints, not int"):
        ember.full(2, 1)


def test_like_factories():
    x = ember.ones(2, 3, dtype=ember.int32)
    for fn in (ember.zeros_like, ember.ones_like, ember.empty_like):
        assert fn(x).shape == (2, 3) and fn(x).dtype == ember.int32
        assert fn(x, dtype=ember.float64).dtype == ember.float64
    assert ember.full_like(x, 2.7).tolist() == [[2] * 3] * 2  # x's dtype
    assert ember.full_like(ember.ones(2), 7).tolist() == [7.0, 7.0]
    assert ember.zeros_like(ember.ones(2), requires_grad=True).requires_grad


def test_empty_strided_and_scalar_tensor():
    t = ember.empty_strided((2, 3), (1, 2))
    assert t.shape == (2, 3) and t.stride() == (1, 2)
    assert ember.empty_strided((0, 3), (3, 1)).shape == (0, 3)
    s = ember.scalar_tensor(3)
    assert s.shape == () and s.dtype == ember.float32 and s.item() == 3.0
    assert ember.scalar_tensor(True).item() == 1.0


# ---------------------------------------------------------------------------
# arange

@pytest.mark.parametrize("args,kwargs,expected,dtype", [
    ((5,), {}, [0, 1, 2, 3, 4], ember.int64),
    ((1, 4), {}, [1, 2, 3], ember.int64),
    ((10, 0, -3), {}, [10, 7, 4, 1], ember.int64),
    ((0, 1, 0.25), {}, [0.0, 0.25, 0.5, 0.75], ember.float32),
    ((1, 0, -0.25), {}, [1.0, 0.75, 0.5, 0.25], ember.float32),
    ((0.5, 3), {}, [0.5, 1.5, 2.5], ember.float32),
    ((5, 5), {}, [], ember.int64),
    ((0, 5, 0.5), {"dtype": ember.int32}, [0] * 10, ember.int32),  # the step truncates to 0
    ((0.5, 10, 1.3), {"dtype": ember.int64}, list(range(10)), ember.int64),
    ((-2.7, 10, 2.5), {"dtype": ember.int16}, [-2, 0, 2, 4, 6, 8], ember.int16),
    ((-1, 3), {"dtype": ember.uint8}, [255, 0, 1, 2], ember.uint8),
    ((ember.tensor(3),), {}, [0, 1, 2], ember.int64),
    ((True,), {}, [0], ember.int64),
])
def test_arange_values(args, kwargs, expected, dtype):
    t = ember.arange(*args, **kwargs)
    assert t.dtype == dtype
    assert t.tolist() == expected


def test_arange_keywords_and_default_dtype(default_float64):
    assert ember.arange(end=3).tolist() == [0, 1, 2]
    assert ember.arange(start=1, end=3).tolist() == [1, 2]
    assert ember.arange(0, 1, 0.5).dtype == ember.float64
    out = ember.empty(3)
    assert ember.arange(3.0, out=out) is out and out.tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("args,kwargs,err,msg", [
    ((0, 1, 0), {}, RuntimeError, "step must be nonzero"),
    ((0, 5, 0.5), {"dtype": ember.int64}, ValueError, "step must be nonzero"),
    ((0, -1, 1), {}, RuntimeError, "upper bound and lower bound inconsistent with step sign"),
    ((0, float("inf")), {}, RuntimeError, "unsupported range: 0 -> inf"),
    ((0, float("nan")), {}, RuntimeError, "unsupported range: 0 -> nan"),
    ((0, 5), {"dtype": ember.bool}, NotImplementedError, "not implemented for 'Bool'"),
    ((0, 5), {"dtype": ember.complex64}, NotImplementedError, "'ComplexFloat'"),
])
def test_arange_errors(args, kwargs, err, msg):
    with pytest.raises(err, match=msg):
        ember.arange(*args, **kwargs)


@settings(max_examples=50, deadline=None)
@given(st.integers(-50, 50), st.integers(-50, 50), st.integers(-7, 7).filter(bool))
def test_arange_int_matches_numpy_hypothesis(start, end, step):
    if (end - start) * step < 0:
        with pytest.raises(RuntimeError, match="inconsistent with step sign"):
            ember.arange(start, end, step)
        return
    assert ember.arange(start, end, step).tolist() == np.arange(start, end, step).tolist()


def test_arange_float_close_to_numpy():
    for start, end, step in [(0, 1, 0.1), (-1.5, 3.3, 0.7), (0.3, 100.7, 0.37), (1, 0, -0.1)]:
        t = ember.arange(start, end, step, dtype=ember.float64).numpy()
        n = np.arange(start, end, step)
        assert t.shape == n.shape
        assert_close(t, n, rtol=1e-14, atol=1e-14)


# ---------------------------------------------------------------------------
# linspace, logspace

def test_linspace_basics():
    t = ember.linspace(0, 1, 5)
    assert t.dtype == ember.float32 and t.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert ember.linspace(0, 1, 1).tolist() == [0.0]
    assert ember.linspace(0, 1, 0).shape == (0,)
    assert ember.linspace(0, 10, 5, dtype=ember.int64).tolist() == [0, 2, 5, 7, 10]
    assert ember.linspace(0.5, 3.7, 5, dtype=ember.int64).tolist() == [0, 0, 1, 2, 3]
    assert ember.linspace(-1, 3, 5, dtype=ember.uint8).tolist() == [255, 192, 129, 66, 3]
    c = ember.linspace(0, 1 + 1j, 5)
    assert c.dtype == ember.complex64 and c.tolist()[2] == pytest.approx(0.5 + 0.5j)
    assert ember.linspace(ember.tensor(0.), ember.tensor(1.), ember.tensor(3)).tolist() == \
        [0.0, 0.5, 1.0]
    big = ember.linspace(-7.3, 1000.1, 100003, dtype=ember.float64).numpy()
    assert big[0] == -7.3 and big[-1] == 1000.1 and bool((np.diff(big) > 0).all())


@pytest.mark.parametrize("args,kwargs,err,msg", [
    ((0, 1, -1), {}, RuntimeError, "number of steps must be non-negative"),
    ((0, 1, 2.5), {}, TypeError, "argument 'steps' must be int, not float"),
    ((0, 1, 5), {"dtype": ember.bool}, NotImplementedError, "not implemented for 'Bool'"),
    ((0, 1j, 3), {"dtype": ember.float32}, RuntimeError,
     "inferred dtype c10::complex<float> can't be safely cast to passed dtype Float"),
    ((0, 300, 5), {"dtype": ember.uint8}, RuntimeError,
     "value cannot be converted to type uint8_t without overflow"),
])
def test_linspace_errors(args, kwargs, err, msg):
    with pytest.raises(err, match=msg):
        ember.linspace(*args, **kwargs)
    with pytest.raises(RuntimeError, match="only supports 0-dimensional start and end tensors, "
                                           "but got start with 1 dimension"):
        ember.linspace(ember.ones(1), 1, 3)


@settings(max_examples=50, deadline=None)
@given(st.floats(-1e4, 1e4), st.floats(-1e4, 1e4), st.integers(2, 300),
       st.sampled_from([ember.float32, ember.float64]))
def test_linspace_properties_hypothesis(start, end, steps, dtype):
    t = ember.linspace(start, end, steps, dtype=dtype).numpy()
    np_t = dtype.numpy.type
    assert t.dtype == dtype.numpy and t.shape == (steps,)
    assert t[0] == np_t(start) and t[-1] == np_t(end)  # both ends exact
    assert_close(t, np.linspace(start, end, steps).astype(dtype.numpy),
                 rtol=1e-5 if dtype is ember.float32 else 1e-12, atol=1e-2)


def test_logspace_basics():
    assert ember.logspace(0, 3, 4).tolist() == [1.0, 10.0, 100.0, 1000.0]
    assert ember.logspace(0, 3, 4, base=2, dtype=ember.int64).tolist() == [1, 2, 4, 8]
    assert ember.logspace(0, 3, 1).tolist() == [1.0]
    assert_close(ember.logspace(-2, 2, 9, base=2.0, dtype=ember.float64).numpy(),
                 np.logspace(-2, 2, 9, base=2.0))
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        ember.logspace(0, 1, -1)


_RANGE_CASES = [
    ("linspace", (0, 1, 7)), ("linspace", (-3.3, 7.1, 101)), ("linspace", (1, 1e-3, 1000)),
    ("linspace", (0.2, 1.7, 13)), ("linspace", (7.77, -2.1, 333)), ("linspace", (0, 10, 2)),
    ("linspace", (-7.3, 1000.1, 40003)), ("linspace", (1e-3, 123.4, 5000)),
    ("logspace", (0.1, 3.3, 17)), ("logspace", (-2.5, 2.5, 999)), ("logspace", (3, -1, 50)),
    ("arange", (0, 1, 0.1)), ("arange", (-1.5, 3.3, 0.7)), ("arange", (0.3, 100.7, 0.37)),
    ("arange", (1, 0, -0.1)), ("arange", (-7.3, 20.1, 0.013)), ("arange", (0, 30000, 1.5)),
]


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("fn,args", _RANGE_CASES, ids=[f"{f}{a}" for f, a in _RANGE_CASES])
def test_ranges_match_torch_exactly(fn, args, dtype):
    if dtype == "float16" and max(abs(a) for a in args) * (3 if fn == "linspace" else 1) > 6e4:
        pytest.skip("outside float16's range")
    expected = getattr(torch, fn)(*args, dtype=getattr(torch, dtype)).numpy()
    got = getattr(ember, fn)(*args, dtype=getattr(ember, dtype)).numpy()
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@needs_torch
def test_random_ranges_match_torch_exactly():
    rng = np.random.default_rng(0)
    for _ in range(60):
        a, b = (float(rng.uniform(-100, 100)) * 10.0 ** int(rng.integers(-3, 3)) for _ in "ab")
        n = int(rng.integers(0, 3000))
        for dt in ("float32", "float64", "int64", "int32"):
            e = ember.linspace(a, b, n, dtype=getattr(ember, dt)).numpy()
            t = torch.linspace(a, b, n, dtype=getattr(torch, dt)).numpy()
            np.testing.assert_array_equal(e, t)
        lo, hi = sorted((a / 50, b / 50))
        for dt in ("float32", "float64"):
            np.testing.assert_array_equal(
                ember.logspace(lo, hi, n, dtype=getattr(ember, dt)).numpy(),
                torch.logspace(lo, hi, n, dtype=getattr(torch, dt)).numpy())
            lo2, hi2 = sorted((a, b))
            step = (hi2 - lo2) / max(n, 1) * float(rng.uniform(0.5, 2))
            if step > 0 and (hi2 - lo2) / step < 32768:
                np.testing.assert_array_equal(
                    ember.arange(lo2, hi2, step, dtype=getattr(ember, dt)).numpy(),
                    torch.arange(lo2, hi2, step, dtype=getattr(torch, dt)).numpy())


# ---------------------------------------------------------------------------
# eye, complex, polar

def test_eye():
    assert ember.eye(2).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    e = ember.eye(2, 3, dtype=ember.int64)
    assert e.dtype == ember.int64 and e.tolist() == [[1, 0, 0], [0, 1, 0]]
    assert ember.eye(3, m=1).shape == (3, 1) and ember.eye(0).shape == (0, 0)
    assert ember.eye(2, dtype=ember.bool).tolist() == [[True, False], [False, True]]
    with pytest.raises(RuntimeError, match="n must be greater or equal to 0, got -1"):
        ember.eye(-1)
    with pytest.raises(RuntimeError, match="m must be greater or equal to 0, got -1"):
        ember.eye(2, -1)
    with pytest.raises(TypeError, match="argument 'm' must be int, not float"):
        ember.eye(3, 2.5)


def test_complex_and_polar():
    re, im = ember.tensor([1.0, 2.0]), ember.tensor([0.5, -1.0])
    z = ember.complex(re, im)
    assert z.dtype == ember.complex64 and z.tolist() == [1 + 0.5j, 2 - 1j]
    assert ember.complex(re.double(), im.double()).dtype == ember.complex128
    assert ember.complex(ember.ones(2, 1), ember.zeros(3)).shape == (2, 3)
    p = ember.polar(ember.tensor([2.0], dtype=ember.float64), ember.tensor([math.pi / 2],
                                                                           dtype=ember.float64))
    assert p.item() == pytest.approx(2j)
    with pytest.raises(RuntimeError, match="Expected object of scalar type Double but got scalar "
                                           "type Float for second argument"):
        ember.complex(re.double(), im)
    with pytest.raises(RuntimeError, match="Expected both inputs to be Half, Float or Double "
                                           "tensors but got Long and Long"):
        ember.complex(ember.ones(2, dtype=ember.int64), ember.ones(2, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="Expected object of scalar type Float but got scalar "
                                           "type Double for second argument"):
        ember.polar(re, im.double())


def test_complex_gradients():
    re = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    im = ember.tensor([0.5, -1.0], dtype=ember.float64, requires_grad=True)
    w = ember.tensor([1 + 2j, -3 + 0.5j])
    g_re, g_im = ember.autograd.grad([ember.complex(re, im)], [re, im], [w])
    assert g_re.tolist() == [1.0, -3.0] and g_im.tolist() == [2.0, 0.5]


@needs_torch
def test_polar_gradients_match_torch():
    r, th = np.array([1.5, 2.0, 0.5]), np.array([0.3, -1.2, 2.0])
    w = np.array([1 + 2j, -3 + 0.5j, 0.25 - 1j])
    grads = []
    for lib in (ember, torch):
        a = lib.tensor(r, requires_grad=True)
        b = lib.tensor(th, requires_grad=True)
        grads.append([g.numpy() for g in lib.autograd.grad([lib.polar(a, b)], [a, b],
                                                           [lib.tensor(w)])])
    for g, e in zip(*grads, strict=True):
        assert_close(g, e)


# ---------------------------------------------------------------------------
# range (deprecated) and nested lists

def test_range_is_inclusive_and_warns():
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        assert ember.range(1, 4).tolist() == [1.0, 2.0, 3.0, 4.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ember.range(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
        assert ember.range(1, 4, dtype=ember.int64).tolist() == [1, 2, 3, 4]


@settings(max_examples=50, deadline=None)
@given(hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
                  elements=st.floats(-1e6, 1e6)))
def test_tensor_from_nested_lists_hypothesis(a):
    t = ember.tensor(a.tolist())
    assert t.dtype == ember.float32 and tuple(t.shape) == a.shape
    assert_close(t.numpy(), a.astype(np.float32))
    assert ember.tensor(a).dtype == ember.float64  # arrays keep their dtype

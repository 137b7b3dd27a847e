"""Tensor repr in PyTorch's exact format, and ember.set_printoptions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember
from ember._tensor_str import get_printoptions, printoptions, set_printoptions


@pytest.fixture(autouse=True)
def _default_printoptions():
    set_printoptions(profile="default")
    yield
    set_printoptions(profile="default")


_rng = np.random.default_rng(0)

# (id, array): each is printed by ember and by torch and the strings compared
CASES = [
    ("row", np.array([[1.0, 2.0]], np.float32)),
    ("scalar", np.array(3.5, np.float32)),
    ("float64", np.array([1.5, -2.25, 3.0])),
    ("int32", np.array([1, 2, 3], np.int32)),
    ("int64", np.array([1, -2, 300])),
    ("int16", np.array([-1, 10000, 3], np.int16)),
    ("uint8", np.arange(10, dtype=np.uint8)),
    ("bool", np.array([True, False])),
    ("bool_scalar", np.array(True)),
    ("int_scalar", np.array(7)),
    ("small_sci", np.array([1e-5, 1.0], np.float32)),
    ("large_sci", np.array([1e9, 1.0], np.float32)),
    ("wide_range_sci", np.array([1.0, 1001.0], np.float32)),
    ("tiny_and_int", np.array([[1e-10, 3.0], [5.0, 7.0]], np.float32)),
    ("nonfinite", np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)),
    ("nan_and_fraction", np.array([np.nan, 1.5])),
    ("signed_zero", np.array([0.0, -0.0], np.float32)),
    ("all_zero", np.zeros((3, 3), np.float32)),
    ("big_float64", np.array([123456789.0])),
    ("scaled", (_rng.standard_normal((5, 5)) * 1e5).astype(np.float32)),
    ("empty_2d", np.zeros((0, 3), np.float32)),
    ("empty_1d", np.zeros((0,), np.float32)),
    ("empty_int", np.zeros((0,), np.int64)),
    ("empty_3d_f64", np.zeros((2, 0, 3))),
    ("wrap_1d", _rng.standard_normal(30).astype(np.float32)),
    ("wrap_2d", _rng.standard_normal((4, 30)).astype(np.float32)),
    ("summarize_1d", _rng.standard_normal(2000).astype(np.float32)),
    ("summarize_2d", _rng.standard_normal((40, 40)).astype(np.float32)),
    ("summarize_3d", _rng.standard_normal((3, 20, 20))),
    ("summarize_int", np.arange(2000).reshape(20, 100)),
    ("four_d", _rng.standard_normal((2, 3, 4, 5)).astype(np.float32)),
    ("complex64", np.array([1 + 2j, -3.5 - 0.5j], np.complex64)),
    ("complex128", np.array([1 + 2j, 3j])),
    ("complex_scalar", np.array(2 + 3j, np.complex64)),
    ("float16", np.array([1.0, 2.5], np.float16)),
]

OPTION_SETS = [
    dict(precision=2), dict(threshold=5), dict(edgeitems=1, threshold=10), dict(linewidth=40),
    dict(sci_mode=True), dict(sci_mode=False), dict(profile="short"),
    dict(edgeitems=0, threshold=3), dict(profile="full"),
]


@pytest.mark.parametrize("name,arr", CASES, ids=[c[0] for c in CASES])
def test_repr_matches_torch(name, arr):
    torch = pytest.importorskip("torch")
    expected = repr(torch.from_numpy(arr.copy())).replace("torch.", "ember.")
    assert repr(ember.from_numpy(arr.copy())) == expected


@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: ",".join(map(str, o.items())))
def test_printoptions_match_torch(options):
    torch = pytest.importorskip("torch")
    old = torch._tensor_str.get_printoptions()
    try:
        torch.set_printoptions(**options)
        set_printoptions(**options)
        for _, arr in CASES:
            expected = repr(torch.from_numpy(arr.copy())).replace("torch.", "ember.")
            assert repr(ember.from_numpy(arr.copy())) == expected
    finally:
        torch.set_printoptions(**old)


def test_autograd_suffixes_match_torch():
    torch = pytest.importorskip("torch")

    def reprs(T):
        x = T.ones(2, 3, requires_grad=True)
        return [repr(x), repr(x * 2), repr((x * 2).sum()), repr(x.double() * 2),
                repr(x.detach())]

    assert [r.replace("torch.", "ember.") for r in reprs(torch)] == reprs(ember)


def test_default_dtype_changes_the_dtype_suffix():
    old = ember.get_default_dtype()
    try:
        ember.set_default_dtype(ember.float64)
        assert repr(ember.tensor([1.5], dtype=ember.float64)) == "tensor([1.5000])"
        assert repr(ember.tensor([1.5], dtype=ember.float32)) == \
            "tensor([1.5000], dtype=ember.float32)"
        assert repr(ember.zeros(0, dtype=ember.float32)) == "tensor([], dtype=ember.float32)"
    finally:
        ember.set_default_dtype(old)


def test_known_strings():
    assert repr(ember.tensor([[1.0, 2.0]], requires_grad=True)) == \
        "tensor([[1., 2.]], requires_grad=True)"
    assert repr(ember.tensor(3.5)) == "tensor(3.5000)"
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    assert repr(x * 2) == "tensor([2., 4.], grad_fn=<MulBackward0>)"
    assert repr(ember.tensor([1.0, 2.0], dtype=ember.float64)) == \
        "tensor([1., 2.], dtype=ember.float64)"
    assert repr(ember.tensor([1, 2], dtype=ember.int32)) == "tensor([1, 2], dtype=ember.int32)"
    assert repr(ember.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(ember.tensor([True])) == "tensor([True])"
    assert repr(ember.tensor([1 + 1j])) == "tensor([1.+1.j])"
    assert repr(ember.zeros(0, 3)) == "tensor([], size=(0, 3))"
    assert repr(ember.zeros(0, dtype=ember.int64)) == "tensor([], dtype=ember.int64)"
    assert repr(ember.tensor([1e-5, 1.0])) == "tensor([1.0000e-05, 1.0000e+00])"
    assert repr(ember.tensor([0.1, 1.25])) == "tensor([0.1000, 1.2500])"
    assert repr(ember.arange(2000)) == "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"
    assert str(ember.tensor([1.0])) == repr(ember.tensor([1.0]))


def test_linewidth_wrapping():
    r = repr(ember.arange(40, dtype=ember.float32))
    lines = r.split("\n")
    assert len(lines) == 3 and all(len(line) <= 80 for line in lines)
    assert lines[0] == ("tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., "
                        "12., 13.,")
    assert lines[1].startswith("        14., ")


def test_suffix_goes_to_a_new_line_when_too_long():
    x = ember.arange(6, dtype=ember.float64).requires_grad_()
    assert repr(x * 1000) == ("tensor([   0., 1000., 2000., 3000., 4000., 5000.], "
                              "dtype=ember.float64,\n       grad_fn=<MulBackward0>)")
    x = ember.arange(7, dtype=ember.float64).requires_grad_()
    assert repr(x * 100000) == (
        "tensor([     0., 100000., 200000., 300000., 400000., 500000., 600000.],\n"
        "       dtype=ember.float64, grad_fn=<MulBackward0>)")


def test_set_printoptions_and_context_manager():
    set_printoptions(precision=2)
    assert repr(ember.tensor([1.12345])) == "tensor([1.12])"
    set_printoptions(profile="default")
    assert repr(ember.tensor([1.12345])) == "tensor([1.1235])"
    with printoptions(threshold=5):
        assert repr(ember.arange(10)) == "tensor([0, 1, 2,  ..., 7, 8, 9])"
    assert repr(ember.arange(10)) == "tensor([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])"
    assert get_printoptions() == dict(precision=4, threshold=1000, edgeitems=3, linewidth=80,
                                      sci_mode=None)
    set_printoptions(sci_mode=True)
    assert repr(ember.tensor([1.0, 2.0])) == "tensor([1.0000e+00, 2.0000e+00])"


def test_set_printoptions_is_public():
    if not hasattr(ember, "set_printoptions"):
        pytest.skip("ember.set_printoptions is added to ember/__init__.py by the lead")
    assert ember.set_printoptions is set_printoptions


def test_repr_does_not_record_or_change_versions():
    x = ember.ones(3, requires_grad=True)
    y = x * 2
    v = y._version
    repr(y)
    assert y._version == v and y.grad_fn.name() == "MulBackward0"


def test_repr_of_non_contiguous_views():
    a = ember.arange(6, dtype=ember.float32).reshape(2, 3)
    assert repr(a.t()) == "tensor([[0., 3.],\n        [1., 4.],\n        [2., 5.]])"


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(st.sampled_from([np.float32, np.float64, np.int64, np.int32, np.bool_]),
                  hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6)))
def test_hypothesis_repr_matches_torch(arr):
    torch = pytest.importorskip("torch")
    expected = repr(torch.from_numpy(arr.copy())).replace("torch.", "ember.")
    assert repr(ember.from_numpy(arr.copy())) == expected


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(st.sampled_from([np.float32, np.float64, np.int64, np.complex64]),
                  hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=8)),
       st.integers(0, 3), st.integers(1, 60), st.integers(20, 120), st.integers(0, 6))
def test_hypothesis_printoptions_match_torch(arr, edgeitems, threshold, linewidth, precision):
    torch = pytest.importorskip("torch")
    options = dict(edgeitems=edgeitems, threshold=threshold, linewidth=linewidth,
                   precision=precision)
    old = torch._tensor_str.get_printoptions()
    try:
        torch.set_printoptions(**options)
        set_printoptions(**options)
        expected = repr(torch.from_numpy(arr.copy())).replace("torch.", "ember.")
        assert repr(ember.from_numpy(arr.copy())) == expected
    finally:
        torch.set_printoptions(**old)

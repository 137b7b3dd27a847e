"""The issue-15 surface of views, copies, top-level functional forms, dtypes and legacy
types, checked with NumPy only (tests/interop/test_surface_views_torch.py compares the same
names with torch)."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F


def test_import_does_not_load_ml_dtypes_until_a_dtype_needs_it():
    code = ("import sys, ember; assert 'ml_dtypes' not in sys.modules; "
            "assert ember.bfloat16.itemsize == 2 and ember.bfloat16.is_floating_point; "
            "assert 'ml_dtypes' not in sys.modules; "
            "t = ember.ones(2, dtype=ember.bfloat16); assert 'ml_dtypes' in sys.modules; "
            "assert t.dtype is ember.bfloat16 and t.is_floating_point()")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_dtype_table():
    for name, size, signed, floating in [("uint16", 2, False, False), ("uint32", 4, False, False),
                                         ("uint64", 8, False, False), ("bfloat16", 2, True, True),
                                         ("float8_e4m3fn", 1, True, True),
                                         ("float8_e5m2", 1, True, True),
                                         ("float8_e4m3fnuz", 1, True, True),
                                         ("float8_e5m2fnuz", 1, True, True)]:
        d = getattr(ember, name)
        assert (d.itemsize, d.is_signed, d.is_floating_point) == (size, signed, floating)
        assert d.numpy.itemsize == size
        t = ember.zeros(3, dtype=d)
        assert t.dtype is d and ember.from_numpy(t.numpy()).dtype is d


def test_promotion_rules_of_the_limited_dtypes():
    with pytest.raises(RuntimeError, match="attempted to promote UInt16 and Char"):
        ember.promote_types(ember.uint16, ember.int8)
    with pytest.raises(RuntimeError, match="Float8_e4m3fn and Float"):
        ember.promote_types(ember.float8_e4m3fn, ember.float32)
    assert ember.promote_types(ember.uint32, ember.float16) is ember.float16
    assert ember.promote_types(ember.uint64, ember.uint64) is ember.uint64
    u = ember.tensor([1, 2], dtype=ember.uint16)
    assert (u * 3).dtype is ember.uint16 and (u * 3).tolist() == [3, 6]
    assert (u + 0.5).dtype is ember.float32
    with pytest.raises(RuntimeError):
        u + ember.tensor([1, 2], dtype=ember.int16)


def test_float8_conversion_saturates_like_torch():
    x = ember.tensor([1.0, 500.0, -1e6, float("nan")]).to(ember.float8_e4m3fn).float()
    assert x[:3].tolist() == [1.0, 448.0, -448.0] and np.isnan(x[3].item())


def test_view_copies_own_their_memory_and_keep_gradients():
    x = ember.arange(12., dtype=ember.float64).reshape(3, 4).requires_grad_()
    for name, args in [("t_copy", ()), ("diagonal_copy", (1,)), ("select_copy", (0, 1)),
                       ("slice_copy", (1, 0, None, 2)), ("permute_copy", ((1, 0),)),
                       ("view_copy", ((4, 3),)), ("expand_copy", ((2, 3, 4),)),
                       ("unfold_copy", (1, 2, 1))]:
        c = getattr(ember, name)(x, *args)
        assert c.is_contiguous() and c._base is None
        c.sum().backward()
        assert x.grad is not None
        x.grad = None
    parts = ember.unbind_copy(x.detach())
    parts[0][0] = 99.
    assert x[0, 0].item() == 0.


def test_copy_forms_have_the_views_signatures():
    import inspect

    sig = inspect.signature(ember.diagonal_copy)
    assert list(sig.parameters) == ["input", "offset", "dim1", "dim2", "out"]
    assert list(inspect.signature(ember.slice_copy).parameters) == \
        ["input", "dim", "start", "end", "step", "out"]


def test_scatters_invert_the_views():
    x = ember.zeros(3, 4)
    assert ember.equal(ember.diagonal(ember.diagonal_scatter(x, ember.ones(3)), 0),
                       ember.ones(3))
    s = ember.slice_scatter(x, ember.ones(3, 2), 1, 1, None, 2)
    assert s[:, 1::2].sum().item() == 6 and s.sum().item() == 6
    with pytest.raises(RuntimeError, match="slice step must be positive"):
        ember.slice_scatter(x, ember.ones(3, 2), 1, 0, None, 0)
    with pytest.raises(RuntimeError, match="expected src to have a size equal"):
        ember.select_scatter(x, ember.ones(3), 0, 0)


@pytest.mark.parametrize("call", [
    lambda x: ember.as_strided_scatter(x, ember.ones(2, 2), (2, 2), (1, 2), 1),
    lambda x: ember.as_strided_scatter(x.t(), ember.ones(2, 2), (2, 2), (1, 2), 1),
    lambda x: ember.diagonal_scatter(x, ember.ones(3)),
    lambda x: ember.select_scatter(x.t(), ember.ones(3), 0, 1),
    lambda x: ember.slice_scatter(x, ember.ones(1, 4), 0, 2),
])
def test_scatter_backward_through_a_broadcast_gradient(call):
    x = ember.zeros(3, 4, requires_grad=True)
    out = call(x)
    out.sum().backward()  # the incoming gradient is an expanded scalar
    src_entries = out.numel() - int(x.grad.sum().item())
    assert src_entries in (3, 4)


def test_dtype_reprs():
    assert repr(ember.tensor([0.5, 3.25]).to(ember.bfloat16)) == \
        "tensor([0.5000, 3.2500], dtype=ember.bfloat16)"
    assert repr(ember.tensor([1, 2], dtype=ember.uint16)) == "tensor([1, 2], dtype=ember.uint16)"


def test_nonzero_static_and_frombuffer():
    r = ember.nonzero_static(ember.tensor([0, 3, 0, 1]), size=3, fill_value=-5)
    assert r.tolist() == [[1], [3], [-5]]
    with pytest.raises(RuntimeError):
        ember.nonzero_static(ember.ones(2), size=-1)
    buf = bytearray(8)
    t = ember.frombuffer(buf, dtype=ember.float32)
    t[1] = 2.5
    assert np.frombuffer(buf, np.float32)[1] == 2.5


def test_top_level_forms_take_atens_argument_order():
    x, w, b = ember.randn(4, 3, 5), ember.randn(3), ember.randn(3)
    rm, rv = ember.zeros(3), ember.ones(3)
    assert ember.allclose(ember.batch_norm(x, w, b, rm, rv, False, 0.1, 1e-5, True),
                          F.batch_norm(x, rm, rv, w, b, False, 0.1, 1e-5))
    table, idx = ember.randn(5, 2), ember.tensor([1, 4])
    assert ember.equal(ember.embedding(table, idx), F.embedding(idx, table))
    a, t = ember.randn(2, 3).log_softmax(1), ember.rand(2, 3)
    assert ember.allclose(ember.kl_div(a, t, 2), F.kl_div(a, t, reduction="sum"))
    assert ember.kl_div(a, t).shape == (2, 3)  # torch's binding: no reduction by default
    with pytest.raises(ValueError):
        ember.kl_div(a, t, 7)
    out, mean, rstd = ember.native_layer_norm(x, (5,), None, None, 1e-5)
    np.testing.assert_allclose(mean.numpy(), x.numpy().mean(-1, keepdims=True), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(rstd.numpy(), 1 / np.sqrt(x.numpy().var(-1, keepdims=True)
                                                         + 1e-5), rtol=1e-4)
    assert ember.allclose(out, F.layer_norm(x, (5,)))
    with pytest.raises(TypeError):
        ember.dropout(x, 0.5)  # no defaults, as in torch


def test_conv_tbc_is_a_time_batch_channel_conv1d():
    x, w, bias = ember.randn(7, 2, 3), ember.randn(3, 3, 4), ember.randn(4)
    got = ember.conv_tbc(x, w, bias, 1)
    want = F.conv1d(x.permute(1, 2, 0), w.permute(2, 1, 0), bias, padding=1).permute(2, 0, 1)
    assert got.shape == (7, 2, 4) and ember.allclose(got, want)


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN_TANH", "RNN_RELU"])
def test_rnn_functions_match_the_modules(mode):
    kw = {"nonlinearity": mode[4:].lower()} if mode.startswith("RNN") else {}
    cls = getattr(ember.nn, mode[:4].rstrip("_") if not mode.startswith("RNN") else "RNN")
    m = cls(3, 4, num_layers=2, bidirectional=True, batch_first=True, **kw)
    x = ember.randn(2, 5, 3)
    h = ember.randn(4, 2, 4)
    hx = (h, ember.randn(4, 2, 4)) if mode == "LSTM" else h
    want = m(x, hx)
    fn = getattr(ember, mode.lower())
    got = fn(x, hx, list(m._flat_weights), True, 2, 0.0, False, True, True)
    flat_want = [want[0]] + (list(want[1]) if mode == "LSTM" else [want[1]])
    for g, w_ in zip(got, flat_want, strict=True):
        assert ember.allclose(g, w_, atol=1e-6)


def test_cells():
    x, h, c = ember.randn(2, 3), ember.randn(2, 4), ember.randn(2, 4)
    cell = ember.nn.LSTMCell(3, 4)
    h2, c2 = ember.lstm_cell(x, (h, c), cell.weight_ih, cell.weight_hh, cell.bias_ih,
                             cell.bias_hh)
    wh, wc = cell(x, (h, c))
    assert ember.allclose(h2, wh, atol=1e-6) and ember.allclose(c2, wc, atol=1e-6)
    w_ih, w_hh = ember.randn(4, 3), ember.randn(4, 4)
    want = np.tanh(x.numpy() @ w_ih.numpy().T + h.numpy() @ w_hh.numpy().T)
    np.testing.assert_allclose(ember.rnn_tanh_cell(x, h, w_ih, w_hh).numpy(), want, rtol=1e-5,
                               atol=1e-6)


def test_legacy_types_and_storages():
    x = ember.FloatTensor([1, 2, 3])
    assert x.dtype is ember.float32 and isinstance(x, ember.FloatTensor)
    assert not isinstance(x, ember.DoubleTensor) and x.type() == "torch.FloatTensor"
    assert ember.LongTensor(2, 3).shape == (2, 3) and ember.LongTensor(2).dtype is ember.int64
    assert x.type(ember.IntTensor).dtype is ember.int32
    assert x.type("torch.DoubleTensor").dtype is ember.float64
    with pytest.raises(ValueError):
        x.type("torch.Nope")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = x.storage()
    assert isinstance(s, ember.FloatStorage) and s.size() == 3 and s.nbytes() == 12
    assert s.data_ptr() == x.data_ptr() and s.element_size() == 4 and s.tolist() == [1, 2, 3]
    u = x[1:].untyped_storage()
    assert u.nbytes() == 12 and u.data_ptr() == x.data_ptr()
    assert ember.is_storage(u) and x.storage_type() is ember.FloatStorage
    assert ember.typename(x) == "torch.FloatTensor" and ember.typename(1.0) == "float"


def test_default_device_and_tensor_type():
    assert str(ember.get_default_device()) == "cpu"
    try:
        ember.zeros(1, device="cuda")
        error = None
    except Exception as e:  # no GPU (or no CuPy) here
        error = type(e)
    ember.set_default_device("cuda")
    try:
        if error is None:
            assert ember.zeros(1).device.type == "cuda"
            assert ember.randn(2).device.type == "cuda"
        else:
            with pytest.raises(error):  # the same error as an explicit device="cuda"
                ember.zeros(1)
            with pytest.raises(error):
                ember.randn(2)
    finally:
        ember.set_default_device(None)
    assert ember.zeros(1).device.type == "cpu"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ember.set_default_tensor_type("torch.DoubleTensor")
            assert ember.tensor([1.5]).dtype is ember.float64
        finally:
            ember.set_default_dtype(ember.float32)


def test_device_as_a_context_manager():
    # ``with ember.device(...)``: the default device inside the block, the old one after
    try:
        ember.zeros(1, device="cuda")
        error = None
    except Exception as e:  # no GPU (or no CuPy) here
        error = type(e)
    with ember.device("cuda") as d:
        assert d == ember.device("cuda")
        with ember.device("cpu"):  # nested: the inner one wins, then the outer is back
            assert ember.zeros(1).device.type == "cpu"
            lin = ember.nn.Linear(2, 2)
            assert lin.weight.device.type == "cpu"
        if error is None:
            assert ember.zeros(1).device.type == "cuda"
        else:
            with pytest.raises(error):
                ember.zeros(1)
    assert ember.get_default_device().type == "cpu" and ember.zeros(1).device.type == "cpu"
    with pytest.raises(KeyError), ember.device("cuda"):
        raise KeyError("inside the block")
    assert ember.get_default_device().type == "cpu"  # restored after an exception too


def test_constants():
    assert ember.pi == np.pi and ember.e == np.e and ember.inf == np.inf
    assert ember.ones(1).layout == ember.strided
    assert repr(ember.channels_last) == "torch.channels_last"

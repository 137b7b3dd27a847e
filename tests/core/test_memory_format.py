"""Memory formats (NOTE [ Memory formats ] in ember/_ops/_memory_format.py): channels-last
layouts are real strides, answered as PyTorch answers them."""

import numpy as np
import pytest

import ember

CL, CL3 = ember.channels_last, ember.channels_last_3d


def _nchw(*shape):
    return ember.tensor(np.random.default_rng(0).standard_normal(shape).astype(np.float32))


def test_to_channels_last_keeps_values_and_sets_strides():
    x = _nchw(2, 3, 4, 5)
    y = x.to(memory_format=CL)
    assert y.stride() == (60, 1, 15, 3)
    assert y.is_contiguous(memory_format=CL) and not y.is_contiguous()
    assert not x.is_contiguous(memory_format=CL) and x.is_contiguous()
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    assert y.to(memory_format=CL) is y and x.to(memory_format=ember.contiguous_format) is x
    back = y.contiguous()
    assert back.stride() == (60, 20, 5, 1) and y.contiguous(memory_format=CL) is y


def test_channels_last_3d():
    x = _nchw(2, 3, 2, 4, 5)
    y = x.contiguous(memory_format=CL3)
    assert y.stride() == (120, 1, 60, 15, 3) and y.is_contiguous(memory_format=CL3)
    assert not y.is_contiguous(memory_format=CL)  # rank 5 is never channels_last
    np.testing.assert_array_equal(y.numpy(), x.numpy())


def test_size_one_dims_take_any_stride():
    assert ember.ones(1, 3, 1, 1).is_contiguous(memory_format=CL)
    assert ember.ones(2, 1, 4, 5).is_contiguous(memory_format=CL)  # C == 1
    assert not ember.ones(2, 3, 4, 5).is_contiguous(memory_format=CL)


def test_preserve_format_keeps_channels_last():
    y = _nchw(2, 3, 4, 5).to(memory_format=CL)
    for t in (y.clone(), y + 1, ember.relu(y), ember.empty_like(y), ember.zeros_like(y),
              ember.ones_like(y), ember.full_like(y, 2.0), y.to(ember.float64)):
        assert t.is_contiguous(memory_format=CL), t.stride()
    assert y.clone(memory_format=ember.contiguous_format).is_contiguous()
    assert ember.zeros_like(y, memory_format=ember.contiguous_format).is_contiguous()
    assert ember.empty(2, 3, 4, 5, memory_format=CL).stride() == (60, 1, 15, 3)
    assert ember.empty_like(_nchw(2, 3, 4, 5), memory_format=CL).is_contiguous(
        memory_format=CL)


def test_rank_errors_and_argument_types():
    x = ember.ones(3, 4)
    for f in (lambda: x.contiguous(memory_format=CL), lambda: x.to(memory_format=CL),
              lambda: x.clone(memory_format=CL), lambda: ember.empty(3, 4, memory_format=CL)):
        with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
            f()
    with pytest.raises(TypeError, match="must be torch.memory_format, not int"):
        x.is_contiguous(memory_format=3)
    assert x.is_contiguous(memory_format=ember.preserve_format)  # as PyTorch
    assert x.contiguous(memory_format=ember.preserve_format) is x


def test_module_to_converts_4d_parameters():
    m = ember.nn.Sequential(ember.nn.Conv2d(3, 4, 3), ember.nn.BatchNorm2d(4))
    m.to(memory_format=CL)
    assert m[0].weight.stride() == (27, 1, 9, 3) and m[0].bias.stride() == (1,)
    assert isinstance(m[0].weight, ember.nn.Parameter)
    x = _nchw(2, 3, 8, 8)
    out = m(x.to(memory_format=CL))
    m2 = ember.nn.Sequential(ember.nn.Conv2d(3, 4, 3), ember.nn.BatchNorm2d(4))
    m2.load_state_dict(m.state_dict())
    ember.testing.assert_close(out, m2(x))


def test_gradients_flow_through_layout_changes():
    x = _nchw(2, 3, 4, 5).requires_grad_()
    w = _nchw(2, 3, 4, 5)
    (x.to(memory_format=CL) * w).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), w.numpy())
    x.grad = None
    (x.contiguous(memory_format=CL).clone(memory_format=ember.contiguous_format) * w).sum() \
        .backward()
    np.testing.assert_array_equal(x.grad.numpy(), w.numpy())


def test_zero_size():
    e = ember.zeros(0, 3, 4, 5).to(memory_format=CL)
    assert e.shape == (0, 3, 4, 5) and e.is_contiguous(memory_format=CL)

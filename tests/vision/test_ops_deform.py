"""embervision.ops.deform_conv2d / DeformConv2d and ps_roi_pool / PSRoIPool: closed forms
and float64 gradchecks."""

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck
from embervision.ops import DeformConv2d, PSRoIPool, deform_conv2d, ps_roi_pool


def _t(a, grad=False):
    return ember.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def test_zero_offsets_are_an_ordinary_convolution():
    rng = np.random.default_rng(0)
    x, w, b = _t(rng.standard_normal((2, 4, 7, 6))), _t(rng.standard_normal((6, 2, 3, 3))), \
        _t(rng.standard_normal(6))
    offset = ember.zeros(2, 2 * 9, 4, 6, dtype=ember.float64)
    out = deform_conv2d(x, offset, w, b, stride=(2, 1), padding=(1, 1), dilation=(1, 1))
    ref = F.conv2d(x, w, b, stride=(2, 1), padding=(1, 1), groups=2)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), atol=1e-12)
    mask = ember.full((2, 9, 4, 6), 0.5, dtype=ember.float64)
    out = deform_conv2d(x, offset, w, None, stride=(2, 1), padding=(1, 1), mask=mask)
    np.testing.assert_allclose(out.numpy(), 0.5 * F.conv2d(x, w, None, stride=(2, 1),
                                                           padding=(1, 1), groups=2).numpy(),
                               atol=1e-12)


def test_integer_offsets_shift_the_samples():
    # A 1x1 kernel with offset (dy, dx) = (1, -1) reads input[i + 1, j - 1], zero outside.
    x = _t(np.arange(20.0).reshape(1, 1, 4, 5))
    offset = ember.zeros(1, 2, 4, 5, dtype=ember.float64)
    offset[:, 0] = 1.0
    offset[:, 1] = -1.0
    out = deform_conv2d(x, offset, ember.ones(1, 1, 1, 1, dtype=ember.float64)).numpy()[0, 0]
    ref = np.zeros((4, 5))
    ref[:3, 1:] = x.numpy()[0, 0, 1:, :4]
    np.testing.assert_allclose(out, ref)
    # Half-way offsets average the two neighbours (bilinear).
    offset[:, 0] = 0.0
    offset[:, 1] = 0.5
    out = deform_conv2d(x, offset, ember.ones(1, 1, 1, 1, dtype=ember.float64)).numpy()[0, 0]
    np.testing.assert_allclose(out[:, :4], (x.numpy()[0, 0, :, :4] + x.numpy()[0, 0, :, 1:]) / 2)
    np.testing.assert_allclose(out[:, 4], x.numpy()[0, 0, :, 4] / 2)


def test_deform_conv2d_gradcheck():
    rng = np.random.default_rng(1)
    # groups = 2 and offset groups = 2; fractional offsets away from the integer kinks.
    x = _t(rng.standard_normal((1, 2, 3, 4)), True)
    w = _t(rng.standard_normal((2, 1, 2, 2)), True)
    b = _t(rng.standard_normal(2), True)
    offset = _t(rng.uniform(-1.4, 1.4, (1, 2 * 2 * 4, 2, 3)) + 0.013, True)
    mask = _t(rng.uniform(0.1, 1.0, (1, 2 * 4, 2, 3)), True)

    def fn(x, offset, w, b, mask):
        return deform_conv2d(x, offset, w, b, stride=(1, 2), padding=(0, 1), dilation=(1, 1),
                             mask=mask)

    assert gradcheck(fn, (x, offset, w, b, mask), eps=1e-6, atol=1e-5)


def test_deform_conv2d_errors_and_module():
    x = ember.rand(1, 3, 6, 6)
    w = ember.rand(4, 3, 3, 3)
    with pytest.raises(RuntimeError, match="multiple of 2"):
        deform_conv2d(x, ember.zeros(1, 5, 4, 4), w)
    with pytest.raises(RuntimeError, match="offset must have shape"):
        deform_conv2d(x, ember.zeros(1, 18, 5, 5), w)
    with pytest.raises(ValueError, match="4-D"):
        deform_conv2d(x[0], ember.zeros(1, 18, 4, 4), w)
    layer = DeformConv2d(4, 6, 3, padding=1, groups=2)
    assert tuple(layer.weight.shape) == (6, 2, 3, 3) and tuple(layer.bias.shape) == (6,)
    out = layer(ember.rand(2, 4, 5, 5), ember.zeros(2, 18, 5, 5))
    assert tuple(out.shape) == (2, 6, 5, 5)
    assert layer.state_dict().keys() == {"weight", "bias"}
    assert DeformConv2d(2, 2, 1, bias=False).bias is None


def test_ps_roi_pool_closed_form():
    # 4 channels for a 2x2 output: bin (i, j) averages channel 2 * i + j over its quarter.
    x = _t(np.arange(4 * 6 * 8, dtype=np.float64).reshape(1, 4, 6, 8))
    rois = _t([[0, 0, 0, 4, 4]])
    out = ps_roi_pool(x, rois, 2).numpy()
    feat = x.numpy()[0]
    ref = [[feat[0, 0:2, 0:2].mean(), feat[1, 0:2, 2:4].mean()],
           [feat[2, 2:4, 0:2].mean(), feat[3, 2:4, 2:4].mean()]]
    np.testing.assert_allclose(out[0, 0], ref)
    # A list of boxes per image is the same as (batch_index, box) rows.
    out_list = ps_roi_pool(x, [_t([[0, 0, 4, 4]])], (2, 2)).numpy()
    np.testing.assert_allclose(out_list, out)
    assert PSRoIPool(2, 1.0)(x, rois).shape == out.shape
    with pytest.raises(ValueError, match="multiple of"):
        ps_roi_pool(ember.rand(1, 3, 4, 4), rois, 2)
    with pytest.raises(IndexError, match="batch index"):
        ps_roi_pool(x, _t([[3, 0, 0, 2, 2]]), 2)


def test_ps_roi_pool_gradcheck():
    rng = np.random.default_rng(2)
    x = _t(rng.standard_normal((2, 4, 6, 7)), True)
    rois = _t([[0, 1.2, 0.7, 4.4, 4.1], [1, 0.0, 2.2, 3.5, 4.4], [1, 3, 3, 3.2, 3.1]])
    assert gradcheck(lambda inp: ps_roi_pool(inp, rois, (2, 2), 1.0), (x,), eps=1e-6, atol=1e-6)

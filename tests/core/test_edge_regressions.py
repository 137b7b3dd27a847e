"""Regressions for answers that were silently wrong under edge-case input (issue 16), each
checked where the right answer is known without a reference library: zeros, unchanged
running statistics, a raised error. tests/interop/test_edge_regressions_torch.py checks the
same cases against PyTorch."""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn

# ---------------------------------------------------------------------------
# 1. the weight gradient of a convolution on an empty batch


@pytest.mark.parametrize("fn,x_shape,w_shape,kwargs", [
    (F.conv1d, (0, 2, 5), (3, 2, 3), {}),
    (F.conv2d, (0, 2, 5, 5), (3, 2, 3, 3), {}),
    (F.conv3d, (0, 2, 4, 4, 4), (3, 2, 3, 3, 3), {}),
    (F.conv2d, (0, 16, 6, 6), (16, 16, 3, 3), {"padding": 1}),  # the Winograd path
    (F.conv2d, (0, 4, 5, 5), (4, 2, 3, 3), {"groups": 2}),
    (F.conv_transpose1d, (0, 2, 4), (2, 3, 3), {"stride": 2}),
    (F.conv_transpose2d, (0, 2, 4, 4), (2, 3, 3, 3), {}),
], ids=["conv1d", "conv2d", "conv3d", "winograd", "groups", "conv_transpose1d",
        "conv_transpose2d"])
def test_conv_empty_batch_gives_zero_weight_gradient(fn, x_shape, w_shape, kwargs):
    out_channels = w_shape[1] if "transpose" in fn.__name__ else w_shape[0]
    for _ in range(3):  # fresh buffers each time: garbage would differ between rounds
        x = ember.randn(*x_shape, requires_grad=True)
        w = ember.randn(*w_shape, requires_grad=True)
        b = ember.randn(out_channels, requires_grad=True)
        y = fn(x, w, b, **kwargs)
        assert y.shape[0] == 0
        y.sum().backward()
        assert w.grad.shape == w.shape and not w.grad.numpy().any()
        assert b.grad.shape == b.shape and not b.grad.numpy().any()
        assert x.grad.shape == x.shape


@pytest.mark.parametrize("module", [nn.Conv1d(2, 3, 3), nn.Conv2d(2, 3, 3)])
def test_conv_module_empty_batch(module):
    x = ember.zeros((0, 2) + (5,) * (module.weight.dim() - 2))
    module(x).sum().backward()
    assert not module.weight.grad.numpy().any() and not module.bias.grad.numpy().any()


# ---------------------------------------------------------------------------
# 2. batch norm in training mode on an empty batch


@pytest.mark.parametrize("module,shape", [(nn.BatchNorm1d(3), (0, 3)),
                                          (nn.BatchNorm2d(3), (0, 3, 4, 4)),
                                          (nn.BatchNorm1d(3), (2, 3, 0))])
def test_batch_norm_empty_batch_leaves_running_stats(module, shape):
    module.train()
    module(ember.randn(8, *shape[1:2], *([4] * (len(shape) - 2)))).sum()
    mean, var = module.running_mean.clone(), module.running_var.clone()
    x = ember.zeros(*shape, requires_grad=True)
    y = module(x)
    assert y.shape == x.shape
    np.testing.assert_array_equal(module.running_mean.numpy(), mean.numpy())
    np.testing.assert_array_equal(module.running_var.numpy(), var.numpy())
    y.sum().backward()
    assert not module.weight.grad.numpy().any() and not module.bias.grad.numpy().any()
    module.eval()
    assert np.isfinite(module(ember.randn(4, *shape[1:2], *([4] * (len(shape) - 2))))
                       .detach().numpy()).all()


def test_instance_norm_empty_batch_leaves_running_stats():
    m = nn.InstanceNorm1d(3, track_running_stats=True)
    m(ember.randn(0, 3, 5))
    np.testing.assert_array_equal(m.running_mean.numpy(), np.zeros(3))
    np.testing.assert_array_equal(m.running_var.numpy(), np.ones(3))

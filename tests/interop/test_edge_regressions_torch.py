"""The edge-case regressions of issue 16 against PyTorch 2.13 (see
tests/core/test_edge_regressions.py for the checks that need no reference)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402
import ember.nn.functional as F  # noqa: E402


def _pair(shape, seed=0, requires_grad=True, dtype=np.float32):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return (ember.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, requires_grad=requires_grad))


def _np(t):
    return t.detach().numpy()


# ---------------------------------------------------------------------------
# 1. conv weight gradient on an empty batch

@pytest.mark.parametrize("name,x_shape,w_shape,kwargs", [
    ("conv1d", (0, 2, 5), (3, 2, 3), {}),
    ("conv2d", (0, 2, 5, 5), (3, 2, 3, 3), {}),
    ("conv3d", (0, 2, 4, 4, 4), (3, 2, 3, 3, 3), {"stride": 2}),
    ("conv2d", (0, 16, 6, 6), (16, 16, 3, 3), {"padding": 1}),
    ("conv2d", (0, 4, 5, 5), (4, 2, 3, 3), {"groups": 2}),
    ("conv_transpose2d", (0, 2, 4, 4), (2, 3, 3, 3), {"stride": 2}),
])
def test_conv_empty_batch_matches_torch(name, x_shape, w_shape, kwargs):
    (ex, tx), (ew, tw) = _pair(x_shape), _pair(w_shape, 1)
    ey = getattr(F, name)(ex, ew, **kwargs)
    ty = getattr(torch.nn.functional, name)(tx, tw, **kwargs)
    assert tuple(ey.shape) == tuple(ty.shape)
    (ey * 2).sum().backward()
    (ty * 2).sum().backward()
    np.testing.assert_array_equal(_np(ew.grad), _np(tw.grad))
    assert tuple(ex.grad.shape) == tuple(tx.grad.shape)


# ---------------------------------------------------------------------------
# 2. batch norm on an empty batch in training mode

@pytest.mark.parametrize("cls,shape", [("BatchNorm1d", (0, 3)), ("BatchNorm2d", (0, 3, 2, 2)),
                                       ("BatchNorm1d", (4, 3, 0))])
def test_batch_norm_empty_batch_matches_torch(cls, shape):
    em, tm = getattr(ember.nn, cls)(3), getattr(torch.nn, cls)(3)
    warm = (5, 3) + {2: (), 3: (4,), 4: (2, 2)}[len(shape)]
    ew, tw = _pair(warm, 3, requires_grad=False)
    em(ew), tm(tw)
    (ex, tx) = _pair(shape)
    ey, ty = em(ex), tm(tx)
    assert tuple(ey.shape) == tuple(ty.shape)
    ey.sum().backward()
    ty.sum().backward()
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(_np(getattr(em, name)), _np(getattr(tm, name)), rtol=1e-6)
    np.testing.assert_array_equal(_np(em.weight.grad), _np(tm.weight.grad))
    np.testing.assert_array_equal(_np(em.bias.grad), _np(tm.bias.grad))

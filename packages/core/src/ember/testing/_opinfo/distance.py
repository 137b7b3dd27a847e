"""OpInfos for ``ember._ops.distance``: cdist, dist, renorm."""

from __future__ import annotations

import numpy as np

import ember
from ember.testing._opinfo.core import OpInfo, SampleInput, XFail, arr


def _t(name):
    return lambda torch: getattr(torch, name)


def _cdist_samples(dtype, rng):
    a, b = arr(rng, (3, 4), dtype), arr(rng, (5, 4), dtype)
    for p in (2.0, 1.0, 0.0, 3.0, 1.5, 0.5, float("inf")):
        yield SampleInput(a, (b,), {"p": p}, name=f"p={p}")
    yield SampleInput(arr(rng, (2, 1, 3, 2), dtype), (arr(rng, (3, 4, 2), dtype),),
                      name="batch")
    yield SampleInput(arr(rng, (27, 3), dtype), (arr(rng, (4, 3), dtype),),
                      name="through a matrix product")
    yield SampleInput(a, (b,), {"compute_mode": "use_mm_for_euclid_dist"}, name="mm forced")
    yield SampleInput(arr(rng, (0, 4), dtype), (b,), name="no rows")
    yield SampleInput(arr(rng, (2, 0), dtype), (arr(rng, (3, 0), dtype),), name="no columns")


def _ref_cdist(x1, x2, p=2.0, compute_mode=None):
    d = np.abs(x1[..., :, None, :] - x2[..., None, :, :])
    if d.shape[-1] == 0:
        return np.zeros(d.shape[:-1], x1.dtype)
    if p == 0:
        return (d != 0).sum(-1).astype(x1.dtype)
    if np.isinf(p):
        return d.max(-1)
    return (d ** p).sum(-1) ** (1 / p)


def _dist_samples(ps):
    def samples(dtype, rng):
        for p in ps:
            yield SampleInput(arr(rng, (3, 4), dtype), (arr(rng, (4,), dtype),), {"p": p},
                              name=f"p={p}")
        yield SampleInput(arr(rng, (0,), dtype), (arr(rng, (0,), dtype),), name="empty")
    return samples


def _ref_dist(a, b, p=2):
    d = np.abs(a - b).reshape(-1)
    if p == 0:
        return np.asarray((d != 0).sum(), a.dtype)
    if np.isinf(p):
        return np.asarray((d.max() if p > 0 else d.min()) if d.size else 0.0, a.dtype)
    return np.asarray((d ** p).sum() ** (1 / p), a.dtype)


def _renorm_samples(dtype, rng):
    x = arr(rng, (3, 4), dtype)
    yield SampleInput(x, (2, 0, 1.5))
    yield SampleInput(x, (1, 1, 2.0))
    yield SampleInput(x, (float("inf"), -1, 1.0))
    yield SampleInput(arr(rng, (2, 3, 2), dtype), (3, 1, 0.5))
    yield SampleInput(x, (2, 0, 100.0), name="nothing to scale")


def _ref_renorm(x, p, dim, maxnorm):
    axes = tuple(k for k in range(x.ndim) if k != dim % x.ndim)
    a = np.abs(x)
    n = a.max(axis=axes, keepdims=True) if np.isinf(p) else \
        (a ** p).sum(axis=axes, keepdims=True) ** (1 / p)
    return x * np.where(n > maxnorm, maxnorm / (n + 1e-7), 1.0)


OPS = [
    OpInfo("cdist", ember.cdist, _cdist_samples, ref=_ref_cdist, torch_op=_t("cdist"),
           rtol=1e-5, atol=1e-5, gradgrad=True),
    OpInfo("dist", ember.dist, _dist_samples((2, 1, 3, 0.5, float("inf"), float("-inf"))),
           ref=_ref_dist, torch_op=_t("dist"), method="dist"),
    OpInfo("dist_p0", ember.dist, _dist_samples((0,)), ref=_ref_dist, torch_op=_t("dist"),
           xfails=(XFail("test_gradients_match_torch",
                         "PyTorch 2.13 bug (tests/interop/TORCH_BUGS.md): dist(p=0) backward "
                         "raises 'Expected a proper Tensor but got None'; the gradient is 0"),)),
    OpInfo("renorm", ember.renorm, _renorm_samples, ref=_ref_renorm, torch_op=_t("renorm"),
           method="renorm"),
    OpInfo("renorm_", lambda x, *a: x.clone().renorm_(*a), _renorm_samples, ref=_ref_renorm,
           torch_op=lambda torch: lambda x, *a: x.clone().renorm_(*a)),
]

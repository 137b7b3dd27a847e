"""OpInfos for creation ops: the ``*_like`` factories, ranges, ``eye``, ``complex`` and
``polar``. Range samples are plain numbers (no tensor input)."""

from __future__ import annotations

import numpy as np

import ember
from ember.testing._opinfo.core import ALL_REAL, FLOATING, OpInfo, SampleInput, arr


def _like_samples(dtype, rng):
    for shape in [(3, 4), (), (2, 0), (2, 3, 2)]:
        yield SampleInput(arr(rng, shape, dtype))


def _parts_samples(dtype, rng):
    for sa, sb in [((3, 4), (3, 4)), ((2, 1), (3,)), ((), (2,))]:
        yield SampleInput(arr(rng, sa, dtype), (arr(rng, sb, dtype),))


def _numbers(cases):
    def samples(dtype, rng):
        for args, kwargs in cases:
            kwargs = dict(kwargs)
            if "dtype" in kwargs:
                kwargs["dtype"] = np.dtype(dtype)
            yield SampleInput(args[0], tuple(args[1:]), kwargs)
    return samples


def _dtype_kw(fn):
    """Call ``fn`` with ``dtype`` given as a NumPy dtype converted to the library's dtype."""
    def call(*args, dtype=None, **kwargs):
        if dtype is not None:
            kwargs["dtype"] = ember._dtype.from_numpy(dtype)
        return fn(*args, **kwargs)
    return call


def _torch_dtype_kw(name):
    def make(torch):
        fn = getattr(torch, name)

        def call(*args, dtype=None, **kwargs):
            if dtype is not None:
                kwargs["dtype"] = getattr(torch, np.dtype(dtype).name)
            return fn(*args, **kwargs)
        return call
    return make


def _np_dtype_kw(fn):
    def call(*args, dtype=None, **kwargs):
        out = np.asarray(fn(*args, **kwargs))
        return out.astype(dtype) if dtype is not None else out
    return call


_LINSPACE = [((0, 1, 5), {}), ((-3.3, 7.1, 101), {"dtype": True}), ((2.5, -1.0, 7), {}),
             ((0, 10, 1), {}), ((0, 10, 0), {})]
_LOGSPACE = [((0, 3, 4), {}), ((-2, 2, 9), {"base": 2.0, "dtype": True}), ((0.1, 1.3, 17), {})]
_ARANGE = [((5,), {}), ((1, 4), {}), ((0, 1, 0.1), {}), ((1, 0, -0.25), {"dtype": True}),
           ((-1.5, 3.3, 0.7), {"dtype": True}), ((10, 0, -3), {})]
_EYE = [((3,), {}), ((2, 4), {"dtype": True}), ((0,), {}), ((3, 1), {})]


def _t(name):
    return lambda torch: getattr(torch, name)


OPS = [
    OpInfo("zeros_like", ember.zeros_like, _like_samples, ref=np.zeros_like, dtypes=ALL_REAL,
           differentiable=False, torch_op=_t("zeros_like")),
    OpInfo("ones_like", ember.ones_like, _like_samples, ref=np.ones_like, dtypes=ALL_REAL,
           differentiable=False, torch_op=_t("ones_like")),
    OpInfo("full_like", lambda x: ember.full_like(x, 7), _like_samples,
           ref=lambda x: np.full_like(x, 7), dtypes=ALL_REAL, differentiable=False,
           torch_op=lambda torch: lambda x: torch.full_like(x, 7)),
    # complex outputs: gradcheck here is real-only; their gradients are checked against
    # PyTorch in tests/core/test_creation.py
    OpInfo("complex", ember.complex, _parts_samples, ref=lambda re, im: re + 1j * im,
           differentiable=False, torch_op=_t("complex")),
    OpInfo("polar", ember.polar, _parts_samples,
           ref=lambda r, theta: r * np.cos(theta) + 1j * r * np.sin(theta),
           differentiable=False, torch_op=_t("polar")),
    OpInfo("linspace", _dtype_kw(ember.linspace), _numbers(_LINSPACE),
           ref=_np_dtype_kw(np.linspace), differentiable=False,
           torch_op=_torch_dtype_kw("linspace")),
    OpInfo("logspace", _dtype_kw(ember.logspace), _numbers(_LOGSPACE),
           ref=_np_dtype_kw(lambda s, e, n, base=10.0: np.logspace(s, e, n, base=base)),
           differentiable=False, torch_op=_torch_dtype_kw("logspace")),
    OpInfo("arange", _dtype_kw(ember.arange), _numbers(_ARANGE),
           ref=_np_dtype_kw(np.arange), differentiable=False, check_dtype=False,
           torch_op=_torch_dtype_kw("arange")),
    OpInfo("eye", _dtype_kw(ember.eye), _numbers(_EYE), ref=_np_dtype_kw(np.eye),
           dtypes=FLOATING + (np.int64, np.bool_), differentiable=False,
           torch_op=_torch_dtype_kw("eye")),
]

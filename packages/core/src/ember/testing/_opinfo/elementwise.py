"""OpInfos for elementwise ops."""

from __future__ import annotations

import numpy as np

import ember
from ember.testing._opinfo.core import ALL_REAL, FLOATING, OpInfo, SampleInput, arr, positive

_SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (3,)), ((5,), ())]


def _binary_samples(low=-3, high=3, other_low=None, other_high=None):
    def samples(dtype, rng):
        for sa, sb in _SHAPES:
            yield SampleInput(arr(rng, sa, dtype, low, high),
                              (arr(rng, sb, dtype, other_low if other_low is not None else low,
                                   other_high if other_high is not None else high),))
        yield SampleInput(arr(rng, (3, 2), dtype, low, high), (2,), name="int scalar")
        if np.dtype(dtype).kind == "f":
            yield SampleInput(arr(rng, (3, 2), dtype, low, high), (1.5,), name="float scalar")
    return samples


def _unary_samples(low=-3, high=3):
    def samples(dtype, rng):
        for shape in [(3, 4), (), (2, 0), (2, 3, 2)]:
            yield SampleInput(arr(rng, shape, dtype, low, high))
    return samples


def _t(name):
    return lambda torch: getattr(torch, name)


OPS = [
    OpInfo("add", ember.add, _binary_samples(), ref=np.add, dtypes=ALL_REAL[1:],
           torch_op=_t("add"), method="add"),
    OpInfo("add_alpha", lambda a, b: ember.add(a, b, alpha=2), _binary_samples(),
           ref=lambda a, b: a + 2 * b, torch_op=lambda torch: lambda a, b: torch.add(a, b,
                                                                                      alpha=2)),
    OpInfo("sub", ember.sub, _binary_samples(), ref=np.subtract, dtypes=ALL_REAL[1:],
           torch_op=_t("sub"), method="sub"),
    OpInfo("mul", ember.mul, _binary_samples(), ref=np.multiply, dtypes=ALL_REAL,
           torch_op=_t("mul"), method="mul"),
    OpInfo("div", ember.div, _binary_samples(other_low=0.5, other_high=3), ref=np.true_divide,
           torch_op=_t("div"), method="div"),
    OpInfo("pow", ember.pow, _binary_samples(low=0.5, high=2, other_low=-2, other_high=2),
           ref=np.power, torch_op=_t("pow"), method="pow"),
    OpInfo("exp", ember.exp, _unary_samples(), ref=np.exp, torch_op=_t("exp"), method="exp"),
    OpInfo("log", ember.log, lambda d, r: (SampleInput(positive(r, (3, 4), d)),), ref=np.log,
           torch_op=_t("log"), method="log"),
    OpInfo("sqrt", ember.sqrt, lambda d, r: (SampleInput(positive(r, (3, 4), d)),), ref=np.sqrt,
           torch_op=_t("sqrt"), method="sqrt"),
    OpInfo("tanh", ember.tanh, _unary_samples(), ref=np.tanh, torch_op=_t("tanh"),
           method="tanh"),
    OpInfo("sigmoid", ember.sigmoid, _unary_samples(), ref=lambda x: 1 / (1 + np.exp(-x)),
           torch_op=_t("sigmoid"), method="sigmoid"),
    OpInfo("neg", ember.neg, _unary_samples(), ref=np.negative, dtypes=FLOATING + (np.int64,),
           torch_op=_t("neg"), method="neg"),
    OpInfo("eq", ember.eq, _binary_samples(), ref=np.equal, differentiable=False,
           torch_op=_t("eq"), method="eq"),
    OpInfo("lt", ember.lt, _binary_samples(), ref=np.less, differentiable=False,
           torch_op=_t("lt"), method="lt"),
]

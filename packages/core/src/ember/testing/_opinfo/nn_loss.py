"""OpInfos for ember.nn.functional's losses.

Every loss runs with ``reduction`` 'none', 'mean' and 'sum' (and 'batchmean' for kl_div).
Targets that are labels (``+1/-1`` signs, 0/1 multi-labels) and class weights are keyword
arguments of the wrapped ops, so the generic tests hold them constant (a sign target is
not a differentiable input); regression targets are positional and gradchecked, as in
PyTorch. Integer class targets never require grad.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

import ember
import ember.nn.functional as F
from ember.testing._opinfo.core import OpInfo, SampleInput, XFail, arr, positive

_REDUCTIONS = ("none", "mean", "sum")


def _F(name):
    return lambda torch: getattr(torch.nn.functional, name)


def _reduce(loss, reduction, dtype):
    if reduction == "mean":
        loss = np.mean(loss)
    elif reduction == "sum":
        loss = np.sum(loss)
    return np.asarray(loss).astype(dtype)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _log_sigmoid(x):
    return -np.logaddexp(0, -x)


def _label_kw(fn, n_inputs):
    """``fn`` called with a keyword ``target`` moved to its position after ``n_inputs``
    inputs (so that the generic tests hold the target constant)."""
    def op(*inputs, target, **kwargs):
        return fn(*inputs[:n_inputs], target, *inputs[n_inputs:], **kwargs)
    return op


def _label_torch(name, n_inputs):
    return lambda torch: _label_kw(getattr(torch.nn.functional, name), n_inputs)


def _quiet(fn):
    """``fn`` with its UserWarnings silenced."""
    def call(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return fn(*args, **kwargs)
    return call


def _signs(rng, shape, dtype):
    return np.where(rng.uniform(size=shape) < 0.5, -1.0, 1.0).astype(dtype)


# ---------------------------------------------------------------------------------------
# regression losses: l1, mse, smooth_l1, huber

def _pointwise_ref(elem, weight_mean=False):
    """``weight_mean``: a weighted 'mean' divides by the sum of the weights (PyTorch's
    l1_loss and mse_loss), otherwise by the number of elements (huber_loss)."""
    def ref(x, t, reduction="mean", weight=None, **kw):
        d = np.asarray(x, np.float64) - np.asarray(t, np.float64)
        loss = elem(d, **kw)
        if weight is not None:
            loss = loss * weight
            if weight_mean and reduction == "mean":
                return np.asarray(loss.sum() / np.sum(weight)).astype(np.result_type(x, t))
        return _reduce(loss, reduction, np.result_type(x, t))
    return ref


def _regression_samples(weighted, kwargs_list=({},)):
    def samples(dtype, rng):
        for reduction in _REDUCTIONS:
            for kw in kwargs_list:
                yield SampleInput(arr(rng, (3, 4), dtype), (arr(rng, (3, 4), dtype),),
                                  {"reduction": reduction, **kw})
        yield SampleInput(arr(rng, (2, 3, 2), dtype), (arr(rng, (2, 3, 2), dtype),))
        yield SampleInput(arr(rng, (), dtype), (arr(rng, (), dtype),), name="0-dim")
        yield SampleInput(arr(rng, (0, 3), dtype), (arr(rng, (0, 3), dtype),),
                          {"reduction": "sum"}, name="empty")
        if weighted:
            yield SampleInput(arr(rng, (3, 4), dtype), (arr(rng, (3, 4), dtype),),
                              {"weight": positive(rng, (3, 4), dtype)}, name="weight")
            yield SampleInput(arr(rng, (3, 4), dtype), (arr(rng, (3, 4), dtype),),
                              {"weight": positive(rng, (3, 4), dtype), "reduction": "sum"},
                              name="weight sum")
    return samples


def _smooth_l1(d, beta=1.0):
    a = np.abs(d)
    if beta == 0:
        return a
    return np.where(a < beta, 0.5 * d * d / beta, a - 0.5 * beta)


def _huber(d, delta=1.0):
    a = np.abs(d)
    return np.where(a <= delta, 0.5 * d * d, delta * (a - 0.5 * delta))


OPS = [
    OpInfo("l1_loss", F.l1_loss, _regression_samples(True), ref=_pointwise_ref(np.abs, True),
           torch_op=_F("l1_loss")),
    OpInfo("mse_loss", F.mse_loss, _regression_samples(True),
           ref=_pointwise_ref(lambda d: d * d, True), torch_op=_F("mse_loss")),
    OpInfo("smooth_l1_loss", F.smooth_l1_loss,
           _regression_samples(False, ({}, {"beta": 0.5}, {"beta": 0.0})),
           ref=_pointwise_ref(_smooth_l1), torch_op=_F("smooth_l1_loss")),
    OpInfo("huber_loss", F.huber_loss, _regression_samples(True, ({}, {"delta": 2.0})),
           ref=_pointwise_ref(_huber), torch_op=_F("huber_loss")),
]


# ---------------------------------------------------------------------------------------
# nll_loss, cross_entropy

def _log_softmax(x, axis):
    m = np.max(x, axis=axis, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))


def _class_axis_last(x):
    """(N, C, d1, ...) or (C,) as (M, C)."""
    if x.ndim == 1:
        return x[None]
    return np.moveaxis(x, 1, -1).reshape(-1, x.shape[1])


def _nll_core(logp, target, weight, ignore_index):
    """Per-element losses and weights of the class-index NLL, on (M, C) and (M,)."""
    c = logp.shape[1]
    w = np.ones(c) if weight is None else np.asarray(weight, np.float64)
    keep = target != ignore_index
    safe = np.where(keep, target, 0)
    wt = np.where(keep, w[safe], 0.0)
    loss = -wt * logp[np.arange(len(safe)), safe]
    return loss, wt, keep


def _nll_ref(x, target, weight=None, ignore_index=-100, reduction="mean"):
    logp = _class_axis_last(np.asarray(x, np.float64))
    loss, wt, _ = _nll_core(logp, target.reshape(-1), weight, ignore_index)
    if reduction == "none":
        out = loss.reshape(target.shape)
    elif reduction == "sum":
        out = loss.sum()
    else:
        out = loss.sum() / wt.sum()
    return np.asarray(out).astype(x.dtype)


def _cross_entropy_ref(x, target, weight=None, ignore_index=-100, reduction="mean",
                       label_smoothing=0.0):
    x64 = np.asarray(x, np.float64)
    logp = _class_axis_last(_log_softmax(x64, 0 if x.ndim == 1 else 1))
    c = logp.shape[1]
    w = np.ones(c) if weight is None else np.asarray(weight, np.float64)
    eps = label_smoothing
    if target.dtype.kind == "f":  # class probabilities
        t = _class_axis_last(np.asarray(target, np.float64)) * (1 - eps) + eps / c
        loss = -np.sum(w * t * logp, axis=1)
        shape = target.shape[:1] + target.shape[2:] if x.ndim > 1 else ()
        if reduction == "none":
            return loss.reshape(shape).astype(x.dtype)
        total = loss.sum()
        return np.asarray(total / len(loss) if reduction == "mean" else total).astype(x.dtype)
    nll, wt, keep = _nll_core(logp, target.reshape(-1), weight, ignore_index)
    smooth = np.where(keep, -np.sum(w * logp, axis=1), 0.0)
    if reduction == "none":
        out = ((1 - eps) * nll + eps / c * smooth).reshape(target.shape)
    elif reduction == "sum":
        out = (1 - eps) * nll.sum() + eps / c * smooth.sum()
    else:
        out = ((1 - eps) * nll.sum() + eps / c * smooth.sum()) / wt.sum()
    return np.asarray(out).astype(x.dtype)


def _class_samples(log_probs, with_probs=False):
    def samples(dtype, rng):
        def inp(shape):
            x = arr(rng, shape, dtype)
            return _log_softmax(x.astype(np.float64), 1 if x.ndim > 1 else 0).astype(dtype) \
                if log_probs else x
        for reduction in _REDUCTIONS:
            yield SampleInput(inp((4, 3)), (rng.integers(0, 3, (4,)),),
                              {"reduction": reduction})
        w = positive(rng, (3,), dtype)
        t = rng.integers(0, 3, (5,))
        t[1] = 1
        t[2] = -100
        for reduction in _REDUCTIONS:
            yield SampleInput(inp((5, 3)), (t,), {"weight": w, "reduction": reduction},
                              name="weight ignore_index=-100")
        t2 = rng.integers(0, 4, (2, 3, 2))
        t2[0, 0, 0] = 2
        t2[1, 1, 1] = 1
        yield SampleInput(inp((2, 4, 3, 2)), (t2,), {"ignore_index": 2}, name="spatial")
        yield SampleInput(inp((2, 4, 3, 2)), (t2,),
                          {"weight": positive(rng, (4,), dtype), "ignore_index": 1,
                           "reduction": "none"}, name="spatial none")
        yield SampleInput(inp((3,)), (np.array(1),), name="unbatched")
        if with_probs:
            for reduction in _REDUCTIONS:
                yield SampleInput(inp((4, 3)), (rng.integers(0, 3, (4,)),),
                                  {"reduction": reduction, "label_smoothing": 0.2},
                                  name="label_smoothing")
            yield SampleInput(inp((5, 3)), (t,), {"weight": w, "label_smoothing": 0.1},
                              name="label_smoothing weight ignore")
            p = _log_softmax(arr(rng, (4, 3), np.float64), 1)
            for reduction in _REDUCTIONS:
                yield SampleInput(inp((4, 3)), (),
                                  {"target": np.exp(p).astype(dtype), "reduction": reduction},
                                  name="probabilities")
            yield SampleInput(inp((2, 3, 2)), (),
                              {"target": np.exp(_log_softmax(arr(rng, (2, 3, 2), np.float64),
                                                             1)).astype(dtype),
                               "weight": w, "label_smoothing": 0.3},
                              name="probabilities spatial weight smoothing")
    return samples


def _ce_op(fn):
    """cross_entropy with the target positional (class indices) or, for class
    probabilities, a keyword (so that the generic tests hold it constant)."""
    def op(x, target=None, **kwargs):
        return fn(x, kwargs.pop("target") if target is None else target, **kwargs)
    return op


_ce_ref = _ce_op(_cross_entropy_ref)


OPS += [
    OpInfo("nll_loss", F.nll_loss, _class_samples(True), ref=_nll_ref,
           torch_op=_F("nll_loss")),
    OpInfo("cross_entropy", _ce_op(F.cross_entropy), _class_samples(False, True),
           ref=_ce_ref, torch_op=lambda torch: _ce_op(torch.nn.functional.cross_entropy),
           rtol=1e-5, atol=1e-6),
]


# ---------------------------------------------------------------------------------------
# binary cross-entropy

def _bce_ref(x, t, weight=None, reduction="mean"):
    x64 = np.asarray(x, np.float64)
    with np.errstate(divide="ignore"):
        lx, l1x = np.maximum(np.log(x64), -100), np.maximum(np.log1p(-x64), -100)
    loss = -(t * lx + (1 - np.asarray(t, np.float64)) * l1x)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, x.dtype)


def _bce_samples(dtype, rng):
    for reduction in _REDUCTIONS:
        yield SampleInput(arr(rng, (3, 4), dtype, 0.05, 0.95), (arr(rng, (3, 4), dtype, 0, 1),),
                          {"reduction": reduction})
    yield SampleInput(arr(rng, (3, 4), dtype, 0.05, 0.95), (arr(rng, (3, 4), dtype, 0, 1),),
                      {"weight": positive(rng, (4,), dtype)}, name="weight")
    yield SampleInput(np.array([0.0, 1.0, 0.5], dtype), (np.array([0.0, 1.0, 1.0], dtype),),
                      {"reduction": "none"}, grad=False, name="log clamped at -100")


def _bce_logits_ref(x, t, weight=None, reduction="mean", pos_weight=None):
    x64 = np.asarray(x, np.float64)
    pw = 1.0 if pos_weight is None else pos_weight
    loss = -(pw * t * _log_sigmoid(x64) + (1 - np.asarray(t, np.float64)) * _log_sigmoid(-x64))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, x.dtype)


def _bce_logits_samples(dtype, rng):
    for reduction in _REDUCTIONS:
        yield SampleInput(arr(rng, (3, 4), dtype), (arr(rng, (3, 4), dtype, 0, 1),),
                          {"reduction": reduction})
    yield SampleInput(arr(rng, (3, 4), dtype, -30, 30), (arr(rng, (3, 4), dtype, 0, 1),),
                      {"weight": positive(rng, (3, 1), dtype),
                       "pos_weight": positive(rng, (4,), dtype)}, name="weight pos_weight")
    yield SampleInput(arr(rng, (2, 3), dtype), (arr(rng, (2, 3), dtype, 0, 1),),
                      {"pos_weight": positive(rng, (3,), dtype), "reduction": "sum"})


OPS += [
    OpInfo("binary_cross_entropy", F.binary_cross_entropy, _bce_samples, ref=_bce_ref,
           torch_op=_F("binary_cross_entropy"),
           xfails=(XFail("test_subgradients_match_torch",
                         "ember bug: binary_cross_entropy's gradient with respect to target at "
                         "input 0 or 1 is +-100 (the forward's log clamp); torch gives +-inf "
                         "(log(1 - x) - log(x) unclamped)"),)),
    OpInfo("binary_cross_entropy_with_logits", F.binary_cross_entropy_with_logits,
           _bce_logits_samples, ref=_bce_logits_ref,
           torch_op=_F("binary_cross_entropy_with_logits")),
]


# ---------------------------------------------------------------------------------------
# kl_div, poisson_nll_loss, gaussian_nll_loss

def _kl_ref(x, t, reduction="mean", log_target=False):
    x64, t64 = np.asarray(x, np.float64), np.asarray(t, np.float64)
    if log_target:
        loss = np.exp(t64) * (t64 - x64)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            loss = np.where(t64 > 0, t64 * np.log(np.where(t64 > 0, t64, 1)), 0.0) - t64 * x64
    if reduction == "batchmean":
        return np.asarray(loss.sum() / (x.shape[0] if x.ndim else 1)).astype(x.dtype)
    return _reduce(loss, reduction, x.dtype)


def _kl_samples(dtype, rng):
    for reduction in _REDUCTIONS + ("batchmean",):
        yield SampleInput(arr(rng, (3, 4), dtype, -3, 0), (arr(rng, (3, 4), dtype, 0.1, 1),),
                          {"reduction": reduction})
    yield SampleInput(arr(rng, (3, 4), dtype, -3, 0), (arr(rng, (3, 4), dtype, -3, 0),),
                      {"log_target": True, "reduction": "batchmean"}, name="log_target")
    t = arr(rng, (2, 3), dtype, 0.1, 1)
    t[0, 1] = 0
    yield SampleInput(arr(rng, (2, 3), dtype, -3, 0), (t,), {"reduction": "sum"},
                      grad=False, name="zero target")


def _poisson_ref(x, t, log_input=True, full=False, eps=1e-8, reduction="mean"):
    x64, t64 = np.asarray(x, np.float64), np.asarray(t, np.float64)
    loss = np.exp(x64) - t64 * x64 if log_input else x64 - t64 * np.log(x64 + eps)
    if full:
        with np.errstate(divide="ignore", invalid="ignore"):
            st = t64 * np.log(t64) - t64 + 0.5 * np.log(2 * math.pi * t64)
        loss = loss + np.where(t64 > 1, st, 0.0)
    return _reduce(loss, reduction, x.dtype)


def _poisson_samples(dtype, rng):
    for reduction in _REDUCTIONS:
        yield SampleInput(arr(rng, (3, 4), dtype, -1, 1), (arr(rng, (3, 4), dtype, 0, 4),),
                          {"reduction": reduction})
    yield SampleInput(arr(rng, (3, 4), dtype, 0.2, 2), (arr(rng, (3, 4), dtype, 0, 4),),
                      {"log_input": False, "eps": 1e-3})
    yield SampleInput(arr(rng, (3, 4), dtype, -1, 1), (arr(rng, (3, 4), dtype, 0, 4),),
                      {"full": True, "reduction": "sum"}, name="full")


def _gaussian_ref(x, t, var, full=False, eps=1e-6, reduction="mean"):
    x64, t64 = np.asarray(x, np.float64), np.asarray(t, np.float64)
    v = np.asarray(var, np.float64)
    if v.ndim == x.ndim - 1 and v.shape == x.shape[:-1]:
        v = v[..., None]
    v = np.maximum(v, eps)
    loss = 0.5 * (np.log(v) + (x64 - t64) ** 2 / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction, x.dtype)


def _gaussian_samples(dtype, rng):
    for reduction in _REDUCTIONS:
        yield SampleInput(arr(rng, (3, 4), dtype), (arr(rng, (3, 4), dtype),
                                                    positive(rng, (3, 4), dtype)),
                          {"reduction": reduction})
    yield SampleInput(arr(rng, (3, 4), dtype), (arr(rng, (3, 4), dtype),
                                                positive(rng, (3,), dtype)),
                      {"full": True}, name="var one dim short")
    yield SampleInput(arr(rng, (3, 4), dtype), (arr(rng, (3, 4), dtype),
                                                positive(rng, (3, 1), dtype)),
                      {"reduction": "sum"}, name="var broadcast")
    yield SampleInput(arr(rng, (3, 4), dtype), (arr(rng, (3, 4), dtype),
                                                positive(rng, (3, 4), dtype, 1e-9, 1e-8)),
                      {"eps": 1e-3}, grad=False, name="var clamped")


OPS += [
    # reduction='mean' warns that it is not the KL divergence (PyTorch's warning)
    OpInfo("kl_div", _quiet(F.kl_div), _kl_samples, ref=_kl_ref,
           torch_op=lambda torch: _quiet(torch.nn.functional.kl_div),
           xfails=(XFail("test_subgradients_match_torch",
                         "ember differs: kl_div's gradient with respect to a zero target "
                         "(log_target=False) is finite (1 at input -1); torch gives NaN"),)),
    OpInfo("poisson_nll_loss", F.poisson_nll_loss, _poisson_samples, ref=_poisson_ref,
           torch_op=_F("poisson_nll_loss")),
    OpInfo("gaussian_nll_loss", F.gaussian_nll_loss, _gaussian_samples, ref=_gaussian_ref,
           torch_op=_F("gaussian_nll_loss")),
]


# ---------------------------------------------------------------------------------------
# margin losses with sign / multi-label targets (targets as keywords: constants)

def _soft_margin_ref(x, *, target, reduction="mean"):
    return _reduce(np.logaddexp(0, -target * np.asarray(x, np.float64)), reduction, x.dtype)


def _multilabel_soft_ref(x, *, target, weight=None, reduction="mean"):
    x64 = np.asarray(x, np.float64)
    loss = -(target * _log_sigmoid(x64) + (1 - target) * _log_sigmoid(-x64))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss.mean(-1), reduction, x.dtype)


def _hinge_ref(x, *, target, margin=1.0, reduction="mean"):
    x64 = np.asarray(x, np.float64)
    loss = np.where(target == 1, x64, 0.0) + \
        np.where(target == -1, np.maximum(margin - x64, 0), 0.0)
    return _reduce(loss, reduction, x.dtype)


def _ranking_ref(x1, x2, *, target, margin=0, reduction="mean"):
    d = np.asarray(x1, np.float64) - x2
    return _reduce(np.maximum(0, -target * d + margin), reduction, x1.dtype)


def _cosine_emb_ref(x1, x2, *, target, margin=0, reduction="mean"):
    a, b = np.asarray(x1, np.float64), np.asarray(x2, np.float64)
    eps = 1e-12
    cos = np.sum(a * b, -1) / np.sqrt((np.sum(a * a, -1) + eps) * (np.sum(b * b, -1) + eps))
    loss = np.where(target == 1, 1 - cos, np.maximum(0, cos - margin))
    return _reduce(loss, reduction, x1.dtype)


def _away_from(x, y, margins, gap=0.05):
    """``x`` moved off the hinge points ``y * x == m`` (for gradcheck)."""
    x = np.array(x, np.float64)
    for m in margins:
        z = y * x - m
        near = np.abs(z) < gap
        x[near] = (m + np.where(z[near] >= 0, gap, -gap)) / y[near]
    return x


def _soft_margin_samples(dtype, rng):
    for reduction in _REDUCTIONS:
        yield SampleInput(arr(rng, (3, 4), dtype), kwargs={"target": _signs(rng, (3, 4), dtype),
                                                            "reduction": reduction})


def _multilabel_soft_samples(dtype, rng):
    def t(shape):
        return rng.integers(0, 2, shape).astype(dtype)
    for reduction in _REDUCTIONS:
        yield SampleInput(arr(rng, (3, 4), dtype), kwargs={"target": t((3, 4)),
                                                            "reduction": reduction})
    yield SampleInput(arr(rng, (3, 4), dtype),
                      kwargs={"target": t((3, 4)), "weight": positive(rng, (4,), dtype)},
                      name="weight")


def _hinge_samples(dtype, rng):
    for reduction, margin in zip(_REDUCTIONS, (1.0, 0.5, 2.0)):
        y = _signs(rng, (3, 4), dtype)
        x = _away_from(arr(rng, (3, 4), np.float64), -np.ones((3, 4)), (-margin,))
        yield SampleInput(x.astype(dtype), kwargs={"target": y, "margin": margin,
                                                   "reduction": reduction})


def _ranking_samples(dtype, rng):
    for reduction, margin in zip(_REDUCTIONS, (0.0, 0.5, 1.0)):
        y = _signs(rng, (5,), dtype)
        x2 = arr(rng, (5,), np.float64)
        d = _away_from(arr(rng, (5,), np.float64), -y, (-margin,))
        yield SampleInput((x2 + d).astype(dtype), (x2.astype(dtype),),
                          {"target": y, "margin": margin, "reduction": reduction})


def _cosine_emb_samples(dtype, rng):
    for reduction, margin in zip(_REDUCTIONS, (0.0, -0.5, 0.2)):
        yield SampleInput(arr(rng, (4, 3), dtype), (arr(rng, (4, 3), dtype),),
                          {"target": _signs(rng, (4,), dtype), "margin": margin,
                           "reduction": reduction})
    yield SampleInput(arr(rng, (3,), dtype), (arr(rng, (3,), dtype),),
                      {"target": np.array(-1.0, dtype), "margin": -1.0}, name="unbatched")


OPS += [
    OpInfo("soft_margin_loss", _label_kw(F.soft_margin_loss, 1), _soft_margin_samples,
           ref=_soft_margin_ref, torch_op=_label_torch("soft_margin_loss", 1)),
    OpInfo("multilabel_soft_margin_loss", _label_kw(F.multilabel_soft_margin_loss, 1),
           _multilabel_soft_samples, ref=_multilabel_soft_ref,
           torch_op=_label_torch("multilabel_soft_margin_loss", 1)),
    OpInfo("hinge_embedding_loss", _label_kw(F.hinge_embedding_loss, 1), _hinge_samples,
           ref=_hinge_ref, torch_op=_label_torch("hinge_embedding_loss", 1)),
    OpInfo("margin_ranking_loss", _label_kw(F.margin_ranking_loss, 2), _ranking_samples,
           ref=_ranking_ref, torch_op=_label_torch("margin_ranking_loss", 2)),
    OpInfo("cosine_embedding_loss", _label_kw(F.cosine_embedding_loss, 2),
           _cosine_emb_samples, ref=_cosine_emb_ref,
           torch_op=_label_torch("cosine_embedding_loss", 2)),
]


# ---------------------------------------------------------------------------------------
# multi-class margin losses (integer targets)

def _multi_margin_ref(x, target, p=1, margin=1.0, weight=None, reduction="mean"):
    x2 = np.atleast_2d(np.asarray(x, np.float64))
    t = np.atleast_1d(target)
    n, c = x2.shape
    xy = x2[np.arange(n), t][:, None]
    m = np.maximum(0, margin - xy + x2) ** p
    if weight is not None:
        m = m * np.asarray(weight, np.float64)[t][:, None]
    m[np.arange(n), t] = 0
    loss = m.sum(1) / c
    if x.ndim == 1:
        loss = loss[0]
    return _reduce(loss, reduction, x.dtype)


def _multilabel_margin_ref(x, target, reduction="mean"):
    x2 = np.atleast_2d(np.asarray(x, np.float64))
    t2 = np.atleast_2d(target)
    n, c = x2.shape
    loss = np.zeros(n)
    for i in range(n):
        ys = []
        for v in t2[i]:
            if v < 0:
                break
            ys.append(int(v))
        others = [k for k in range(c) if k not in ys]
        loss[i] = sum(max(0.0, 1 - (x2[i, j] - x2[i, k])) for j in ys for k in others) / c
    if x.ndim == 1:
        loss = loss[0]
    return _reduce(loss, reduction, x.dtype)


def _multi_margin_samples(dtype, rng):
    for reduction in _REDUCTIONS:
        yield SampleInput(arr(rng, (4, 3), dtype), (rng.integers(0, 3, (4,)),),
                          {"reduction": reduction})
    yield SampleInput(arr(rng, (4, 3), dtype), (rng.integers(0, 3, (4,)),),
                      {"p": 2, "margin": 0.5, "weight": positive(rng, (3,), dtype)},
                      name="p=2 weight")
    yield SampleInput(arr(rng, (3,), dtype), (np.array(1),), name="unbatched")


def _multilabel_margin_samples(dtype, rng):
    t = np.array([[3, 0, -1, 1], [1, 2, 3, 0], [-1, 0, 0, 0]])
    for reduction in _REDUCTIONS:
        yield SampleInput(arr(rng, (3, 4), dtype), (t,), {"reduction": reduction})
    yield SampleInput(arr(rng, (4,), dtype), (np.array([2, 1, -1, 0]),), name="unbatched")


OPS += [
    OpInfo("multi_margin_loss", F.multi_margin_loss, _multi_margin_samples,
           ref=_multi_margin_ref, torch_op=_F("multi_margin_loss")),
    OpInfo("multilabel_margin_loss", F.multilabel_margin_loss, _multilabel_margin_samples,
           ref=_multilabel_margin_ref, torch_op=_F("multilabel_margin_loss")),
]


# ---------------------------------------------------------------------------------------
# triplet losses

def _pdist(a, b, p, eps):
    d = np.abs(np.asarray(a, np.float64) - b + eps)
    return np.sum(d ** p, -1) ** (1 / p)


def _triplet_ref(a, pos, neg, margin=1.0, p=2, eps=1e-6, swap=False, reduction="mean"):
    dap, dan = _pdist(a, pos, p, eps), _pdist(a, neg, p, eps)
    if swap:
        dan = np.minimum(dan, _pdist(pos, neg, p, eps))
    return _reduce(np.maximum(dap - dan + margin, 0), reduction, a.dtype)


def _triplet_samples(dtype, rng):
    for reduction in _REDUCTIONS:
        yield SampleInput(arr(rng, (4, 3), dtype), (arr(rng, (4, 3), dtype),
                                                    arr(rng, (4, 3), dtype)),
                          {"reduction": reduction, "margin": 2.0})
    yield SampleInput(arr(rng, (4, 3), dtype), (arr(rng, (4, 3), dtype),
                                                arr(rng, (4, 3), dtype)),
                      {"p": 1, "swap": True, "margin": 3.0}, name="p=1 swap")
    yield SampleInput(arr(rng, (3,), dtype), (arr(rng, (3,), dtype), arr(rng, (3,), dtype)),
                      {"margin": 5.0}, name="unbatched")


def _triplet_dist(fn, lib):
    """triplet_margin_with_distance_loss with ``distance`` naming the distance function:
    None (pairwise_distance), "cosine" (1 - cosine_similarity) or "l1"."""
    def op(a, pos, neg, distance=None, **kwargs):
        if distance == "cosine":
            kwargs["distance_function"] = \
                lambda x, y: 1 - lib.nn.functional.cosine_similarity(x, y)
        elif distance == "l1":
            kwargs["distance_function"] = lambda x, y: (x - y).abs().sum(-1)
        return fn(a, pos, neg, **kwargs)
    return op


def _triplet_dist_ref(a, pos, neg, distance=None, margin=1.0, swap=False, reduction="mean"):
    def dist(x, y):
        x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
        if distance == "cosine":
            nx = np.maximum(np.linalg.norm(x, axis=-1), 1e-8)
            ny = np.maximum(np.linalg.norm(y, axis=-1), 1e-8)
            return 1 - np.sum(x * y, -1) / (nx * ny)
        if distance == "l1":
            return np.abs(x - y).sum(-1)
        return _pdist(x, y, 2, 1e-6)
    dap, dan = dist(a, pos), dist(a, neg)
    if swap:
        dan = np.minimum(dan, dist(pos, neg))
    return _reduce(np.maximum(dap - dan + margin, 0), reduction, a.dtype)


def _triplet_dist_samples(dtype, rng):
    for reduction, distance in zip(_REDUCTIONS, (None, "cosine", "l1")):
        yield SampleInput(arr(rng, (4, 3), dtype), (arr(rng, (4, 3), dtype),
                                                    arr(rng, (4, 3), dtype)),
                          {"reduction": reduction, "distance": distance, "margin": 5.0})
    yield SampleInput(arr(rng, (4, 3), dtype), (arr(rng, (4, 3), dtype),
                                                arr(rng, (4, 3), dtype)),
                      {"swap": True, "margin": 5.0, "distance": "l1"}, name="swap")


OPS += [
    OpInfo("triplet_margin_loss", F.triplet_margin_loss, _triplet_samples, ref=_triplet_ref,
           torch_op=_F("triplet_margin_loss")),
    OpInfo("triplet_margin_with_distance_loss",
           _triplet_dist(F.triplet_margin_with_distance_loss, ember),
           _triplet_dist_samples, ref=_triplet_dist_ref,
           torch_op=lambda torch: _triplet_dist(
               torch.nn.functional.triplet_margin_with_distance_loss, torch)),
]


# ---------------------------------------------------------------------------------------
# ctc_loss: the reference is the forward (alpha) recursion in log space, one sequence at
# a time; lengths are integer arrays (constants). The op takes logits and applies
# log_softmax first: PyTorch's (and ember's) ctc_loss gradient assumes log-probabilities
# that are normalized (it is the gradient through the log_softmax), so gradcheck is only
# meaningful on the composition, as in PyTorch's own OpInfo.

def _ctc(fn, log_softmax):
    def op(logits, *args, **kwargs):
        return fn(log_softmax(logits, -1), *args, **kwargs)
    return op

def _ctc_one(lp, target, blank):
    """-log p(target | lp) for log-probabilities lp (T, C)."""
    ext = [blank]
    for c in target:
        ext += [int(c), blank]
    s = len(ext)
    alpha = np.full(s, -np.inf)
    alpha[0] = lp[0, blank]
    if s > 1:
        alpha[1] = lp[0, ext[1]]
    for t in range(1, lp.shape[0]):
        new = np.full(s, -np.inf)
        for i in range(s):
            cands = [alpha[i]]
            if i >= 1:
                cands.append(alpha[i - 1])
            if i >= 2 and ext[i] != blank and ext[i] != ext[i - 2]:
                cands.append(alpha[i - 2])
            new[i] = np.logaddexp.reduce(cands) + lp[t, ext[i]]
        alpha = new
    return -np.logaddexp.reduce(alpha[-2:] if s > 1 else alpha)


def _ctc_ref(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    lp = _log_softmax(np.asarray(log_probs, np.float64), -1)
    batched = lp.ndim == 3
    if not batched:
        lp = lp[:, None]
        targets = targets[None]
        input_lengths, target_lengths = np.atleast_1d(input_lengths), \
            np.atleast_1d(target_lengths)
    n = lp.shape[1]
    losses = np.zeros(n)
    offset = 0
    for b in range(n):
        tl = int(target_lengths[b])
        if targets.ndim == 1:
            tgt = targets[offset:offset + tl]
            offset += tl
        else:
            tgt = targets[b, :tl]
        losses[b] = _ctc_one(lp[:int(input_lengths[b]), b], tgt, blank)
    if zero_infinity:
        losses = np.where(np.isinf(losses), 0.0, losses)
    if reduction == "mean":
        out = np.mean(losses / np.maximum(np.asarray(target_lengths, np.float64), 1))
    elif reduction == "sum":
        out = losses.sum()
    else:
        out = losses if batched else losses[0]
    return np.asarray(out).astype(log_probs.dtype)


def _ctc_samples(dtype, rng):
    t, n, c = 6, 3, 4

    def lp(shape):  # logits
        return arr(rng, shape, dtype)
    il = np.array([6, 5, 4])
    tl = np.array([3, 2, 1])
    padded = np.array([[1, 2, 2], [3, 1, 0], [2, 0, 0]])
    for reduction in _REDUCTIONS:
        yield SampleInput(lp((t, n, c)), (padded, il, tl), {"reduction": reduction})
    yield SampleInput(lp((t, n, c)), (np.array([1, 2, 2, 3, 1, 2]), il, tl),
                      {"blank": 0}, name="concatenated targets")
    yield SampleInput(lp((t, n, c)), (np.array([[0, 1, 1], [2, 0, 0], [1, 0, 0]]), il, tl),
                      {"blank": 3, "reduction": "sum"}, name="blank=3")
    yield SampleInput(lp((t, c)), (np.array([1, 2]), np.array(5), np.array(2)),
                      name="unbatched")
    # a target that cannot fit (3 repeats need 5 frames, 2 given): infinite loss
    yield SampleInput(lp((2, 1, c)), (np.array([[1, 1, 1]]), np.array([2]), np.array([3])),
                      {"zero_infinity": True, "reduction": "sum"}, grad=False,
                      name="zero_infinity")


OPS += [
    OpInfo("ctc_loss", _ctc(F.ctc_loss, F.log_softmax), _ctc_samples, ref=_ctc_ref,
           torch_op=lambda torch: _ctc(torch.nn.functional.ctc_loss,
                                       torch.nn.functional.log_softmax)),
]

"""The normalization layers and the losses of ember.nn against torch.nn 2.13.

With identical parameters (a torch state_dict loaded into the ember module with
strict=True) and inputs, every output, every input and parameter gradient and the
running statistics match torch within float32 tolerance, across the layers' and the
losses' options; the functional forms too. Skipped as a whole without torch.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torch.nn as tnn  # noqa: E402
import torch.nn.functional as TF  # noqa: E402

import ember  # noqa: E402
import ember.nn as enn  # noqa: E402
import ember.nn.functional as EF  # noqa: E402

RTOL, ATOL = 1e-4, 1e-5


def _np(t):
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else t.detach().numpy()


def _close(a, b, what="", rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol, err_msg=what)


def _rng(seed):
    return np.random.default_rng(seed)


def _load_torch_into_ember(tm, em):
    sd = {k: ember.tensor(_np(v).copy()) for k, v in tm.state_dict().items()}
    res = em.load_state_dict(sd, strict=True)
    assert not res.missing_keys and not res.unexpected_keys


def _randomize(tm, seed):
    """Non-trivial affine parameters and running statistics in the torch module."""
    rng = _rng(seed)
    with torch.no_grad():
        for p in tm.parameters():
            p.copy_(torch.tensor(rng.uniform(0.5, 1.5, tuple(p.shape)).astype(np.float32)))
        for name, b in tm.named_buffers():
            if name.endswith("running_mean"):
                b.copy_(torch.tensor(rng.standard_normal(tuple(b.shape)).astype(np.float32)))
            elif name.endswith("running_var"):
                b.copy_(torch.tensor(rng.uniform(0.5, 2, tuple(b.shape)).astype(np.float32)))


def _step(em, tm, x, seed, what):
    """One forward and backward of both modules on ``x``; compares everything."""
    e = ember.tensor(x.copy(), requires_grad=True)
    t = torch.tensor(x.copy(), requires_grad=True)
    eo, to = em(e), tm(t)
    _close(eo, to, f"{what} output")
    g = _rng(seed).standard_normal(tuple(to.shape)).astype(np.float32)
    eo.backward(ember.tensor(g))
    to.backward(torch.tensor(g))
    _close(e.grad, t.grad, f"{what} input grad", rtol=1e-3, atol=1e-4)
    tp = dict(tm.named_parameters())
    for k, p in em.named_parameters():
        _close(p.grad, tp[k].grad, f"{what} {k} grad", rtol=1e-3, atol=1e-4)
        p.grad = None
        tp[k].grad = None
    tb = dict(tm.named_buffers())
    for k, b in em.named_buffers():
        np.testing.assert_allclose(_np(b), _np(tb[k]), rtol=1e-5, atol=1e-6,
                                   err_msg=f"{what} buffer {k}")


# ---------------------------------------------------------------------------
# normalization layers

NORM_CASES = [
    ("BatchNorm1d", (4,), {}, (6, 4)),
    ("BatchNorm1d", (37,), {}, (5, 37)),
    ("BatchNorm1d", (32,), dict(momentum=None), (3, 32)),
    ("BatchNorm1d", (4,), {}, (3, 4, 5)),
    ("BatchNorm1d", (4,), dict(momentum=None), (5, 4)),
    ("BatchNorm1d", (4,), dict(affine=False), (3, 4, 2)),
    ("BatchNorm1d", (4,), dict(track_running_stats=False), (3, 4, 2)),
    ("BatchNorm2d", (3,), {}, (2, 3, 4, 5)),
    ("BatchNorm2d", (3,), dict(momentum=None, eps=1e-3), (2, 3, 4, 5)),
    ("BatchNorm2d", (3,), dict(affine=False, track_running_stats=False), (2, 3, 3, 3)),
    ("BatchNorm2d", (3,), dict(momentum=0.5, bias=False), (2, 3, 3, 3)),
    ("BatchNorm3d", (2,), {}, (2, 2, 3, 2, 3)),
    ("BatchNorm3d", (2,), dict(momentum=None), (2, 2, 3, 2, 3)),
    ("InstanceNorm1d", (3,), {}, (2, 3, 6)),
    ("InstanceNorm1d", (3,), dict(affine=True), (2, 3, 6)),
    ("InstanceNorm1d", (3,), dict(affine=True, track_running_stats=True), (2, 3, 6)),
    ("InstanceNorm1d", (3,), dict(affine=True), (3, 6)),
    ("InstanceNorm2d", (3,), dict(affine=True, track_running_stats=True, momentum=0.3),
     (2, 3, 4, 3)),
    ("InstanceNorm2d", (3,), {}, (3, 4, 3)),
    ("InstanceNorm3d", (2,), dict(affine=True), (2, 2, 3, 2, 2)),
    ("InstanceNorm3d", (2,), dict(track_running_stats=True), (2, 2, 3, 2, 2)),
    ("LayerNorm", (5,), {}, (3, 5)),
    ("LayerNorm", (37,), {}, (3, 2, 37)),
    ("LayerNorm", (32,), {}, (5, 32)),
    ("LayerNorm", ((3, 4),), {}, (2, 3, 3, 4)),
    ("LayerNorm", ((4,),), dict(elementwise_affine=False), (2, 3, 4)),
    ("LayerNorm", (4,), dict(bias=False, eps=1e-3), (2, 3, 4)),
    ("GroupNorm", (2, 4), {}, (3, 4, 5)),
    ("GroupNorm", (1, 4), {}, (2, 4, 3, 3)),
    ("GroupNorm", (4, 4), dict(affine=False), (2, 4, 3)),
    ("GroupNorm", (3, 6), dict(eps=1e-3), (2, 6, 2, 2, 2)),
    ("GroupNorm", (2, 4), {}, (3, 4)),
    ("RMSNorm", (5,), {}, (3, 5)),
    ("RMSNorm", ((2, 5),), dict(eps=1e-4), (3, 2, 5)),
    ("RMSNorm", (5,), dict(elementwise_affine=False), (2, 3, 5)),
    ("LocalResponseNorm", (3,), {}, (2, 5, 4)),
    ("LocalResponseNorm", (2,), dict(alpha=0.1, beta=0.5, k=2.0), (2, 6, 3, 3)),
    ("LocalResponseNorm", (4,), dict(alpha=0.3), (2, 4, 2, 2, 2)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", NORM_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(NORM_CASES)])
def test_norm_module_matches_torch(name, args, kwargs, shape):
    torch.manual_seed(0)
    tm = getattr(tnn, name)(*args, **kwargs)
    em = getattr(enn, name)(*args, **kwargs)
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    _randomize(tm, 1)
    _load_torch_into_ember(tm, em)
    rng = _rng(2)
    # training: several steps (the running statistics and num_batches_tracked move)
    for step in range(3):
        x = (rng.standard_normal(shape) * 2 + 0.5).astype(np.float32)
        _step(em, tm, x, 10 + step, f"{name} train step {step}")
    tm.eval()
    em.eval()
    x = (rng.standard_normal(shape) * 2 + 0.5).astype(np.float32)
    _step(em, tm, x, 20, f"{name} eval")
    # and back: ember's state dict into a fresh torch module, strict
    tm2 = getattr(tnn, name)(*args, **kwargs)
    tm2.load_state_dict({k: torch.tensor(_np(v).copy()) for k, v in em.state_dict().items()},
                        strict=True)
    for (k, a), (_, b) in zip(tm2.state_dict().items(), em.state_dict().items(), strict=True):
        np.testing.assert_array_equal(_np(a), _np(b), err_msg=k)


def _net(nn):
    return nn.Sequential(nn.Linear(5, 3), nn.BatchNorm1d(3), nn.ReLU(),
                         nn.BatchNorm1d(3, affine=False, momentum=None), nn.LayerNorm(3),
                         nn.GroupNorm(1, 3), nn.InstanceNorm1d(3, affine=True,
                                                               track_running_stats=True))


def test_batchnorm_state_dict_roundtrip():
    torch.manual_seed(0)
    tnet, enet = _net(tnn), _net(enn)
    tnet.train()
    with torch.no_grad():
        for _ in range(2):
            tnet[:4](torch.randn(4, 5))
    assert list(enet.state_dict()) == list(tnet.state_dict())
    _load_torch_into_ember(tnet, enet)
    for (k, a), (_, b) in zip(tnet.state_dict().items(), enet.state_dict().items(), strict=True):
        np.testing.assert_array_equal(_np(a), _np(b), err_msg=k)
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], k
    assert int(enet[1].num_batches_tracked) == 2
    # the same outputs in evaluation mode, then ember's state dict back into torch
    tnet.eval()
    enet.eval()
    x = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    _close(enet[:4](ember.tensor(x)), tnet[:4](torch.tensor(x)))
    tnet2 = _net(tnn)
    tnet2.load_state_dict({k: torch.tensor(_np(v).copy()) for k, v in enet.state_dict().items()},
                          strict=True)
    for (k, a), (_, b) in zip(tnet2.state_dict().items(), tnet.state_dict().items(),
                              strict=True):
        np.testing.assert_array_equal(_np(a), _np(b), err_msg=k)
    # a state dict from before num_batches_tracked (no version metadata) loads
    em = enn.BatchNorm1d(3)
    sd = {k: ember.tensor(_np(v).copy()) for k, v in tnn.BatchNorm1d(3).state_dict().items()
          if k != "num_batches_tracked"}
    res = em.load_state_dict(sd, strict=True)
    assert not res.missing_keys and not res.unexpected_keys


# ---------------------------------------------------------------------------
# functional normalization

def _pairs(arrays, grads):
    es, ts = [], []
    for a, g in zip(arrays, grads, strict=True):
        if a is None:
            es.append(None)
            ts.append(None)
            continue
        es.append(ember.tensor(a.copy(), requires_grad=g))
        ts.append(torch.tensor(a.copy(), requires_grad=g))
    return es, ts


def _compare_fn(efn, tfn, arrays, grads, seed=0, what="", rtol=RTOL, atol=ATOL, grtol=1e-3,
                gatol=1e-4):
    es, ts = _pairs(arrays, grads)
    eo, to = efn(*es), tfn(*ts)
    _close(eo, to, f"{what} output", rtol, atol)
    if not to.requires_grad:
        return es, ts
    g = _rng(seed).standard_normal(tuple(to.shape)).astype(np.float32)
    eo.backward(ember.tensor(g))
    to.backward(torch.tensor(g))
    for i, (e, t) in enumerate(zip(es, ts, strict=True)):
        if t is not None and t.requires_grad:
            assert e.grad is not None, f"{what}: no gradient for argument {i}"
            _close(e.grad, t.grad, f"{what} grad {i}", grtol, gatol)
    return es, ts


@pytest.mark.parametrize("training,momentum", [(True, 0.1), (True, 0.7), (False, 0.1)])
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (2, 3, 2, 2)])
def test_batch_norm_functional(training, momentum, shape):
    rng = _rng(3)
    x = rng.standard_normal(shape).astype(np.float32)
    w, b = rng.uniform(0.5, 1.5, 3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    rm, rv = rng.standard_normal(3).astype(np.float32), rng.uniform(0.5, 2, 3).astype(np.float32)
    er, tr = _pairs([rm, rv], [False, False])
    _compare_fn(lambda x, w, b: EF.batch_norm(x, er[0], er[1], w, b, training, momentum),
                lambda x, w, b: TF.batch_norm(x, tr[0], tr[1], w, b, training, momentum),
                [x, w, b], [True, True, True], what="batch_norm")
    _close(er[0], tr[0], "running_mean", 1e-5, 1e-6)
    _close(er[1], tr[1], "running_var", 1e-5, 1e-6)
    # without running statistics and without affine parameters
    if training:
        _compare_fn(lambda x: EF.batch_norm(x, None, None, training=True),
                    lambda x: TF.batch_norm(x, None, None, training=True), [x], [True],
                    what="batch_norm no stats")


def test_instance_norm_functional():
    rng = _rng(4)
    x = rng.standard_normal((2, 3, 5)).astype(np.float32)
    w, b = rng.uniform(0.5, 1.5, 3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    rm, rv = rng.standard_normal(3).astype(np.float32), rng.uniform(0.5, 2, 3).astype(np.float32)
    for use_input_stats in (True, False):
        er, tr = _pairs([rm, rv], [False, False])
        _compare_fn(
            lambda x, w, b, er=er, u=use_input_stats: EF.instance_norm(x, er[0], er[1], w, b, u,
                                                                        0.2, 1e-4),
            lambda x, w, b, tr=tr, u=use_input_stats: TF.instance_norm(x, tr[0], tr[1], w, b, u,
                                                                        0.2, 1e-4),
            [x, w, b], [True, True, True], what=f"instance_norm {use_input_stats}")
        _close(er[0], tr[0], "running_mean", 1e-5, 1e-6)
        _close(er[1], tr[1], "running_var", 1e-5, 1e-6)


def test_layer_group_rms_lrn_functional():
    rng = _rng(5)
    x = rng.standard_normal((2, 4, 3, 2)).astype(np.float32)
    w = rng.uniform(0.5, 1.5, (3, 2)).astype(np.float32)
    b = rng.standard_normal((3, 2)).astype(np.float32)
    _compare_fn(lambda x, w, b: EF.layer_norm(x, (3, 2), w, b, 1e-3),
                lambda x, w, b: TF.layer_norm(x, (3, 2), w, b, 1e-3), [x, w, b],
                [True, True, True], what="layer_norm")
    _compare_fn(lambda x, w: EF.rms_norm(x, [3, 2], w),
                lambda x, w: TF.rms_norm(x, [3, 2], w), [x, w], [True, True], what="rms_norm")
    _compare_fn(lambda x: EF.rms_norm(x, [2], eps=0.1),
                lambda x: TF.rms_norm(x, [2], eps=0.1), [x], [True], what="rms_norm eps")
    w4, b4 = rng.uniform(0.5, 1.5, 4).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    _compare_fn(lambda x, w, b: EF.group_norm(x, 2, w, b),
                lambda x, w, b: TF.group_norm(x, 2, w, b), [x, w4, b4], [True, True, True],
                what="group_norm")
    _compare_fn(lambda x: EF.group_norm(x, 4), lambda x: TF.group_norm(x, 4), [x], [True],
                what="group_norm no affine")
    _compare_fn(lambda x: EF.local_response_norm(x, 3, 0.2, 0.6, 1.5),
                lambda x: TF.local_response_norm(x, 3, 0.2, 0.6, 1.5), [x], [True],
                what="local_response_norm")


def test_norm_float64_and_noncontiguous():
    rng = _rng(6)
    x = rng.standard_normal((3, 5, 4)).astype(np.float64).transpose(0, 2, 1)
    e = ember.tensor(np.ascontiguousarray(x)).transpose(1, 2).contiguous().transpose(1, 2)
    t = torch.tensor(np.ascontiguousarray(x)).transpose(1, 2).contiguous().transpose(1, 2)
    _close(EF.batch_norm(e, None, None, training=True), TF.batch_norm(t, None, None,
                                                                        training=True))
    _close(EF.group_norm(e, 2), TF.group_norm(t, 2))
    _close(EF.layer_norm(e, (5,)), TF.layer_norm(t, (5,)))
    assert EF.layer_norm(e, (5,)).dtype == ember.float64


# ---------------------------------------------------------------------------
# losses


class W:
    """A constructor argument that is a tensor (built for each framework)."""

    def __init__(self, a):
        a = np.asarray(a)
        self.a = a.astype(np.float32) if a.dtype.kind == "f" else a


def _probs(rng, shape, dim=1):
    z = rng.standard_normal(shape)
    z = np.exp(z - z.max(dim, keepdims=True))
    return (z / z.sum(dim, keepdims=True)).astype(np.float32)


def _logp(rng, shape, dim=1):
    return np.log(_probs(rng, shape, dim)).astype(np.float32)


def _pm1(rng, shape):
    return np.where(rng.random(shape) < 0.5, -1.0, 1.0).astype(np.float32)


def _f(rng, shape, lo=None, hi=None):
    if lo is not None:
        return rng.uniform(lo, hi, shape).astype(np.float32)
    return rng.standard_normal(shape).astype(np.float32)


def _ml_target(rng, n, c):
    t = np.full((n, c), -1, dtype=np.int64)
    for i in range(n):
        k = int(rng.integers(0, c + 1))
        t[i, :k] = rng.permutation(c)[:k]
        if k < c and rng.random() < 0.5:
            t[i, k + 1:] = rng.integers(0, c, c - k - 1)  # after the first -1: ignored
    return t


def _cls(rng, shape, c, ignore=None):
    t = rng.integers(0, c, shape).astype(np.int64)
    if ignore is not None:
        t.reshape(-1)[::3] = ignore
    return t


# (name, kwargs, inputs(rng) -> [(array, requires_grad)])
LOSS_CASES = [
    ("L1Loss", {}, lambda r: [(_f(r, (3, 4)), True), (_f(r, (3, 4)), True)]),
    ("L1Loss", dict(reduction="sum"), lambda r: [(_f(r, (3, 4)), True), (_f(r, (3, 4)), False)]),
    ("L1Loss", dict(reduction="none"), lambda r: [(_f(r, (3, 4)), True), (_f(r, (3, 4)), True)]),
    ("MSELoss", {}, lambda r: [(_f(r, (3, 4)), True), (_f(r, (3, 4)), True)]),
    ("MSELoss", dict(reduction="none"), lambda r: [(_f(r, (2, 3, 4)), True),
                                                   (_f(r, (2, 3, 4)), True)]),
    ("MSELoss", dict(reduction="sum"), lambda r: [(_f(r, (5,)), True), (_f(r, (5,)), True)]),
    ("CrossEntropyLoss", {}, lambda r: [(_f(r, (4, 5)), True), (_cls(r, (4,), 5), False)]),
    ("CrossEntropyLoss", dict(reduction="sum"),
     lambda r: [(_f(r, (4, 5)), True), (_cls(r, (4,), 5), False)]),
    ("CrossEntropyLoss", dict(reduction="none"),
     lambda r: [(_f(r, (4, 5)), True), (_cls(r, (4,), 5), False)]),
    ("CrossEntropyLoss", dict(weight=W(np.arange(1, 6, dtype=np.float32) / 3)),
     lambda r: [(_f(r, (6, 5)), True), (_cls(r, (6,), 5), False)]),
    ("CrossEntropyLoss", dict(ignore_index=2),
     lambda r: [(_f(r, (6, 5)), True), (_cls(r, (6,), 5, 2), False)]),
    ("CrossEntropyLoss", dict(ignore_index=-100, weight=W([0.5, 2.0, 1.0]), reduction="none"),
     lambda r: [(_f(r, (6, 3)), True), (_cls(r, (6,), 3, -100), False)]),
    ("CrossEntropyLoss", dict(label_smoothing=0.2),
     lambda r: [(_f(r, (4, 5)), True), (_cls(r, (4,), 5), False)]),
    ("CrossEntropyLoss", dict(label_smoothing=0.3, weight=W([0.5, 2.0, 1.0, 1.5]),
                              ignore_index=1),
     lambda r: [(_f(r, (6, 4)), True), (_cls(r, (6,), 4, 1), False)]),
    ("CrossEntropyLoss", dict(label_smoothing=0.3, weight=W([0.5, 2.0, 1.0, 1.5]),
                              reduction="none"),
     lambda r: [(_f(r, (6, 4)), True), (_cls(r, (6,), 4), False)]),
    ("CrossEntropyLoss", dict(label_smoothing=0.1, reduction="sum"),
     lambda r: [(_f(r, (2, 4, 3, 2)), True), (_cls(r, (2, 3, 2), 4, 0), False)]),
    ("CrossEntropyLoss", {}, lambda r: [(_f(r, (2, 4, 3, 2)), True),
                                        (_cls(r, (2, 3, 2), 4), False)]),
    ("CrossEntropyLoss", dict(weight=W([0.5, 2.0, 1.0, 1.5]), ignore_index=3, reduction="none",
                              label_smoothing=0.2),
     lambda r: [(_f(r, (2, 4, 10, 15)), True), (_cls(r, (2, 10, 15), 4, 3), False)]),
    ("CrossEntropyLoss", dict(label_smoothing=0.05),
     lambda r: [(_f(r, (3, 4, 130)), True), (_cls(r, (3, 130), 4, -100), False)]),
    ("CrossEntropyLoss", dict(weight=W([0.5, 2.0, 1.0, 1.5]), ignore_index=3),
     lambda r: [(_f(r, (2, 4, 5)), True), (_cls(r, (2, 5), 4, 3), False)]),
    ("CrossEntropyLoss", {}, lambda r: [(_f(r, (5,)), True),
                                        (np.array(3, dtype=np.int64), False)]),
    ("CrossEntropyLoss", {}, lambda r: [(_f(r, (4, 5)), True), (_probs(r, (4, 5)), False)]),
    ("CrossEntropyLoss", dict(label_smoothing=0.2, weight=W([1, 2, 3, 4, 5.0]),
                              reduction="none"),
     lambda r: [(_f(r, (4, 5)), True), (_probs(r, (4, 5)), True)]),
    ("CrossEntropyLoss", dict(reduction="sum"),
     lambda r: [(_f(r, (2, 3, 4)), True), (_probs(r, (2, 3, 4)), False)]),
    ("NLLLoss", {}, lambda r: [(_logp(r, (4, 5)), True), (_cls(r, (4,), 5), False)]),
    ("NLLLoss", dict(weight=W([1, 2, 3, 4, 5.0]), ignore_index=0),
     lambda r: [(_logp(r, (6, 5)), True), (_cls(r, (6,), 5, 0), False)]),
    ("NLLLoss", dict(reduction="none"),
     lambda r: [(_logp(r, (2, 3, 2, 2)), True), (_cls(r, (2, 2, 2), 3), False)]),
    ("NLLLoss", dict(reduction="sum", weight=W([1, 2, 3.0])),
     lambda r: [(_logp(r, (2, 3, 4)), True), (_cls(r, (2, 4), 3), False)]),
    ("NLLLoss", {}, lambda r: [(_logp(r, (5,), 0), True), (np.array(1, dtype=np.int64), False)]),
    ("BCELoss", {}, lambda r: [(_f(r, (3, 4), 0.05, 0.95), True), (_f(r, (3, 4), 0, 1), True)]),
    ("BCELoss", dict(weight=W(np.linspace(0.5, 2, 4, dtype=np.float32)), reduction="none"),
     lambda r: [(_f(r, (3, 4), 0.05, 0.95), True), (_f(r, (3, 4), 0, 1), True)]),
    ("BCELoss", dict(reduction="sum"),
     lambda r: [(_f(r, (5,), 0.05, 0.95), True), (_f(r, (5,), 0, 1), False)]),
    ("BCEWithLogitsLoss", {}, lambda r: [(_f(r, (3, 4)) * 3, True), (_f(r, (3, 4), 0, 1), True)]),
    ("BCEWithLogitsLoss", dict(pos_weight=W([1.0, 2.0, 0.5, 3.0])),
     lambda r: [(_f(r, (3, 4)) * 3, True), (_f(r, (3, 4), 0, 1), True)]),
    ("BCEWithLogitsLoss", dict(weight=W([1.0, 2.0, 0.5, 3.0]), pos_weight=W([2.0, 1, 1, 1]),
                               reduction="none"),
     lambda r: [(_f(r, (3, 4)) * 3, True), (_f(r, (3, 4), 0, 1), True)]),
    ("BCEWithLogitsLoss", dict(reduction="sum"),
     lambda r: [(_f(r, (6,)) * 30, True), (_f(r, (6,), 0, 1), False)]),
    ("KLDivLoss", dict(reduction="batchmean"),
     lambda r: [(_logp(r, (3, 4)), True), (_probs(r, (3, 4)), True)]),
    ("KLDivLoss", dict(reduction="sum", log_target=True),
     lambda r: [(_logp(r, (3, 4)), True), (_logp(r, (3, 4)), True)]),
    ("KLDivLoss", dict(reduction="none"),
     lambda r: [(_logp(r, (3, 4)), True), (np.where(_probs(r, (3, 4)) > 0.3, 0,
                                                    _probs(r, (3, 4))).astype(np.float32),
                                           False)]),
    ("SmoothL1Loss", {}, lambda r: [(_f(r, (4, 5)) * 2, True), (_f(r, (4, 5)), True)]),
    ("SmoothL1Loss", dict(beta=0.5, reduction="none"),
     lambda r: [(_f(r, (4, 5)) * 2, True), (_f(r, (4, 5)), True)]),
    ("SmoothL1Loss", dict(beta=0.0, reduction="sum"),
     lambda r: [(_f(r, (4, 5)), True), (_f(r, (4, 5)), True)]),
    ("HuberLoss", {}, lambda r: [(_f(r, (4, 5)) * 2, True), (_f(r, (4, 5)), True)]),
    ("HuberLoss", dict(delta=0.3, reduction="none"),
     lambda r: [(_f(r, (4, 5)), True), (_f(r, (4, 5)), True)]),
    ("SoftMarginLoss", {}, lambda r: [(_f(r, (3, 4)), True), (_pm1(r, (3, 4)), False)]),
    ("SoftMarginLoss", dict(reduction="none"),
     lambda r: [(_f(r, (3, 4)), True), (_pm1(r, (3, 4)), False)]),
    ("MultiLabelSoftMarginLoss", {},
     lambda r: [(_f(r, (3, 4)), True), ((r.random((3, 4)) < .5).astype(np.float32), False)]),
    ("MultiLabelSoftMarginLoss", dict(weight=W([1.0, 2.0, 0.5, 3.0]), reduction="none"),
     lambda r: [(_f(r, (3, 4)), True), ((r.random((3, 4)) < .5).astype(np.float32), False)]),
    ("MultiLabelMarginLoss", {}, lambda r: [(_f(r, (4, 5)), True), (_ml_target(r, 4, 5), False)]),
    ("MultiLabelMarginLoss", dict(reduction="none"),
     lambda r: [(_f(r, (4, 5)), True), (_ml_target(r, 4, 5), False)]),
    ("MultiLabelMarginLoss", {}, lambda r: [(_f(r, (5,)), True), (_ml_target(r, 1, 5)[0],
                                                                  False)]),
    ("MultiMarginLoss", {}, lambda r: [(_f(r, (4, 5)), True), (_cls(r, (4,), 5), False)]),
    ("MultiMarginLoss", dict(p=2, margin=0.5, weight=W([1, 2, 3, 4, 5.0]), reduction="none"),
     lambda r: [(_f(r, (4, 5)), True), (_cls(r, (4,), 5), False)]),
    ("MultiMarginLoss", dict(reduction="sum"),
     lambda r: [(_f(r, (5,)), True), (np.array(2, dtype=np.int64), False)]),
    ("HingeEmbeddingLoss", {}, lambda r: [(_f(r, (3, 4)), True), (_pm1(r, (3, 4)), False)]),
    ("HingeEmbeddingLoss", dict(margin=0.5, reduction="none"),
     lambda r: [(_f(r, (3, 4)), True), (_pm1(r, (3, 4)), False)]),
    ("CosineEmbeddingLoss", {}, lambda r: [(_f(r, (4, 5)), True), (_f(r, (4, 5)), True),
                                           (_pm1(r, (4,)), False)]),
    ("CosineEmbeddingLoss", dict(margin=0.2, reduction="none"),
     lambda r: [(_f(r, (4, 5)), True), (_f(r, (4, 5)), True), (_pm1(r, (4,)), False)]),
    ("CosineEmbeddingLoss", dict(margin=-0.5),
     lambda r: [(_f(r, (5,)), True), (_f(r, (5,)), True), (np.float32(-1.0), False)]),
    ("MarginRankingLoss", {}, lambda r: [(_f(r, (5,)), True), (_f(r, (5,)), True),
                                         (_pm1(r, (5,)), False)]),
    ("MarginRankingLoss", dict(margin=0.5, reduction="none"),
     lambda r: [(_f(r, (5,)), True), (_f(r, (5,)), True), (_pm1(r, (5,)), False)]),
    ("TripletMarginLoss", {}, lambda r: [(_f(r, (4, 5)), True), (_f(r, (4, 5)), True),
                                         (_f(r, (4, 5)), True)]),
    ("TripletMarginLoss", dict(p=1.0, margin=2.0, swap=True, reduction="none"),
     lambda r: [(_f(r, (4, 5)), True), (_f(r, (4, 5)), True), (_f(r, (4, 5)), True)]),
    ("TripletMarginLoss", dict(p=3.0, eps=1e-3, reduction="sum"),
     lambda r: [(_f(r, (5,)), True), (_f(r, (5,)), True), (_f(r, (5,)), True)]),
    ("TripletMarginWithDistanceLoss", {},
     lambda r: [(_f(r, (4, 5)), True), (_f(r, (4, 5)), True), (_f(r, (4, 5)), True)]),
    ("TripletMarginWithDistanceLoss", dict(margin=3.0, swap=True, reduction="none"),
     lambda r: [(_f(r, (4, 5)), True), (_f(r, (4, 5)), True), (_f(r, (4, 5)), True)]),
    ("PoissonNLLLoss", {}, lambda r: [(_f(r, (3, 4)), True), (_f(r, (3, 4), 0, 4), True)]),
    ("PoissonNLLLoss", dict(log_input=False, full=True, reduction="none"),
     lambda r: [(_f(r, (3, 4), 0.1, 3), True), (np.round(_f(r, (3, 4), 0, 4)), False)]),
    ("PoissonNLLLoss", dict(full=True, reduction="sum"),
     lambda r: [(_f(r, (3, 4)), True), (np.round(_f(r, (3, 4), 0, 4)), False)]),
    ("GaussianNLLLoss", {}, lambda r: [(_f(r, (3, 4)), True), (_f(r, (3, 4)), True),
                                       (_f(r, (3, 4), 0.1, 2), True)]),
    ("GaussianNLLLoss", dict(full=True, reduction="none"),
     lambda r: [(_f(r, (3, 4)), True), (_f(r, (3, 4)), True), (_f(r, (3,), 0.1, 2), True)]),
    ("GaussianNLLLoss", dict(eps=0.5, reduction="sum"),
     lambda r: [(_f(r, (3, 4)), True), (_f(r, (3, 4)), False), (_f(r, (3, 1), 0.1, 2), True)]),
]


def _materialize(kwargs, lib):
    out = {}
    for k, v in kwargs.items():
        if isinstance(v, W):
            out[k] = ember.tensor(v.a.copy()) if lib == "ember" else torch.tensor(v.a.copy())
        else:
            out[k] = v
    return out


@pytest.mark.parametrize("name,kwargs,make", LOSS_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(LOSS_CASES)])
def test_loss_module_matches_torch(name, kwargs, make):
    em = getattr(enn, name)(**_materialize(kwargs, "ember"))
    tm = getattr(tnn, name)(**_materialize(kwargs, "torch"))
    assert repr(em) == repr(tm)
    assert list(em.state_dict()) == list(tm.state_dict())
    inputs = make(_rng(7))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _compare_fn(em, tm, [a for a, _ in inputs], [g for _, g in inputs], seed=8,
                    what=name)


def test_loss_functional_legacy_and_options():
    rng = _rng(9)
    x, y = _f(rng, (3, 4)), _f(rng, (3, 4))
    for fn in ("l1_loss", "mse_loss", "smooth_l1_loss"):
        for sa, rd in ((False, None), (None, False), (True, True)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _compare_fn(lambda a, b, fn=fn, sa=sa, rd=rd: getattr(EF, fn)(a, b, sa, rd),
                            lambda a, b, fn=fn, sa=sa, rd=rd: getattr(TF, fn)(a, b, sa, rd),
                            [x, y], [True, True], what=f"{fn} {sa} {rd}")
    # broadcasting target (with PyTorch's warning)
    with pytest.warns(UserWarning, match="target size"):
        _compare_fn(EF.mse_loss, TF.mse_loss, [x, _f(rng, (4,))], [True, True], what="bcast")
    # elementwise weights of l1/mse/huber
    w = _f(rng, (3, 4), 0.1, 2)
    for fn in ("l1_loss", "mse_loss", "huber_loss"):
        for red in ("mean", "sum", "none"):
            _compare_fn(lambda a, b, fn=fn, red=red: getattr(EF, fn)(
                a, b, reduction=red, weight=ember.tensor(w)),
                lambda a, b, fn=fn, red=red: getattr(TF, fn)(
                a, b, reduction=red, weight=torch.tensor(w)),
                [x, y], [True, True], what=f"{fn} weight {red}")
    # cross-entropy on float64 and with the distance function given
    x64 = rng.standard_normal((5, 3))
    t = rng.integers(0, 3, 5)
    _compare_fn(lambda a: EF.cross_entropy(a, ember.tensor(t)),
                lambda a: TF.cross_entropy(a, torch.tensor(t)), [x64], [True])

    def ecos(a, b):
        return 1 - EF.cosine_similarity(a, b)

    def tcos(a, b):
        return 1 - TF.cosine_similarity(a, b)

    a, p, n = _f(rng, (4, 5)), _f(rng, (4, 5)), _f(rng, (4, 5))
    _compare_fn(lambda *z: EF.triplet_margin_with_distance_loss(*z, distance_function=ecos),
                lambda *z: TF.triplet_margin_with_distance_loss(*z, distance_function=tcos),
                [a, p, n], [True, True, True])


def _ctc_inputs(rng, T, N, C, lengths, tlens):
    lp = _logp(rng, (T, N, C), 2)
    targets = rng.integers(1, C, (N, max(tlens) + 1)).astype(np.int64)
    return lp, targets, np.array(lengths, dtype=np.int64), np.array(tlens, dtype=np.int64)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("concat", [False, True])
def test_ctc_loss_matches_torch(reduction, concat):
    rng = _rng(11)
    lp, tg, il, tl = _ctc_inputs(rng, 8, 3, 5, [8, 6, 7], [3, 0, 4])
    tg[2, :3] = [2, 2, 3]   # a repeated label
    if concat:
        tg = np.concatenate([tg[i, :tl[i]] for i in range(3)])

    def efn(x):
        return EF.ctc_loss(x, ember.tensor(tg), ember.tensor(il), ember.tensor(tl),
                           reduction=reduction)

    def tfn(x):
        return TF.ctc_loss(x, torch.tensor(tg), torch.tensor(il), torch.tensor(tl),
                           reduction=reduction)

    _compare_fn(efn, tfn, [lp], [True], what="ctc")
    # through a log_softmax, as usual
    logits = _f(rng, (8, 3, 5))
    _compare_fn(lambda z: efn(EF.log_softmax(z, 2)), lambda z: tfn(TF.log_softmax(z, 2)),
                [logits], [True], what="ctc logits")


def test_ctc_loss_module_blank_zero_infinity_unbatched():
    rng = _rng(12)
    lp = _logp(rng, (4, 2, 4), 2)
    tg = np.array([[1, 1, 2], [3, 2, 2]], dtype=np.int64)
    il, tl = np.array([4, 2]), np.array([3, 3])   # the second is impossible: inf
    for zi in (False, True):
        em, tm = enn.CTCLoss(blank=0, zero_infinity=zi, reduction="none"), \
            tnn.CTCLoss(blank=0, zero_infinity=zi, reduction="none")
        assert repr(em) == repr(tm)
        es, ts = _pairs([lp], [True])
        eo = em(es[0], ember.tensor(tg), ember.tensor(il), ember.tensor(tl))
        to = tm(ts[0], torch.tensor(tg), torch.tensor(il), torch.tensor(tl))
        _close(eo, to)
        if zi:
            eo.sum().backward()
            to.sum().backward()
            _close(es[0].grad, ts[0].grad)
    # blank not 0, unbatched, lengths as tuples
    lp = _logp(rng, (6, 4), 1)
    tg = np.array([0, 1, 0], dtype=np.int64)
    _compare_fn(lambda x: EF.ctc_loss(x, ember.tensor(tg), (6,), (3,), blank=3),
                lambda x: TF.ctc_loss(x, torch.tensor(tg), (6,), (3,), blank=3), [lp], [True])

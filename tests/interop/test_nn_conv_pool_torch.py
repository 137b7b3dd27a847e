"""Convolution, pooling and fold/unfold layers of ember.nn against PyTorch 2.13.

With identical weights (torch's state_dict loaded with strict=True) and inputs, every
layer's output and its input, weight and bias gradients match torch's within float32
tolerance, over the layers' options; state_dicts go both ways; the default
initialization has torch's distribution.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402
import ember.nn as nn  # noqa: E402
import ember.nn.functional as F  # noqa: E402

RNG = np.random.default_rng(0)
TOL = dict(rtol=1e-4, atol=1e-5)


def _to_ember(sd):
    return {k: ember.tensor(v.detach().numpy()) for k, v in sd.items()}


def _to_torch(sd):
    return {k: torch.tensor(v.detach().numpy()) for k, v in sd.items()}


def _check(tm, em, x, forward_kwargs=None, input_grad=True):
    """Copy tm's state into em, run both on x, compare outputs and all gradients."""
    forward_kwargs = forward_kwargs or {}
    result = em.load_state_dict(_to_ember(tm.state_dict()), strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    assert list(em.state_dict()) == list(tm.state_dict())
    tx = torch.tensor(x, requires_grad=input_grad)
    ex = ember.tensor(x, requires_grad=input_grad)
    to = tm(tx, **forward_kwargs)
    eo = em(ex, **forward_kwargs)
    if isinstance(to, tuple):
        np.testing.assert_array_equal(eo[1].numpy(), to[1].numpy())
        to, eo = to[0], eo[0]
    assert tuple(eo.shape) == tuple(to.shape)
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), **TOL)
    g = RNG.standard_normal(tuple(to.shape)).astype(np.float32)
    to.backward(torch.tensor(g))
    eo.backward(ember.tensor(g))
    if input_grad:
        np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), **TOL)
    for (name, tp), (ename, ep) in zip(tm.named_parameters(), em.named_parameters(), strict=False):
        assert name == ename
        np.testing.assert_allclose(ep.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-4,
                                   err_msg=name)
    # and back: ember's state loads into torch
    tm.load_state_dict(_to_torch(em.state_dict()), strict=True)


def _x(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


CONV = [
    ("Conv1d", (4, 6, 3), dict(stride=2, padding=1, groups=2), (2, 4, 11)),
    ("Conv1d", (3, 2, 4), dict(padding="same", dilation=2, padding_mode="circular"), (2, 3, 9)),
    ("Conv1d", (2, 2, 3), dict(padding="valid", bias=False), (2, 7)),
    ("Conv2d", (4, 6, 3), dict(padding="same", padding_mode="reflect", groups=2), (2, 4, 9, 8)),
    ("Conv2d", (4, 4, (2, 3)), dict(padding="same", padding_mode="circular", groups=4,
                                    dilation=2), (2, 4, 9, 8)),
    ("Conv2d", (4, 6, 3), dict(padding=2, padding_mode="replicate"), (4, 9, 8)),
    ("Conv2d", (3, 8, 3), dict(stride=2, padding=1, bias=False), (2, 3, 10, 9)),
    ("Conv2d", (6, 6, 3), dict(padding=(1, 2), stride=(1, 2), dilation=(2, 1), groups=6),
     (2, 6, 8, 8)),
    ("Conv2d", (4, 8, 1), dict(stride=2), (2, 4, 7, 7)),
    ("Conv2d", (2, 3, (4, 2)), dict(padding="same"), (1, 2, 6, 5)),
    ("Conv3d", (2, 4, 2), dict(padding="valid", bias=False), (2, 2, 4, 5, 4)),
    ("Conv3d", (4, 4, 3), dict(stride=(1, 2, 1), padding=1, groups=2), (1, 4, 4, 6, 5)),
    ("Conv3d", (2, 2, 3), dict(padding="same", padding_mode="reflect"), (1, 2, 4, 4, 4)),
]


@pytest.mark.parametrize("name,args,kw,shape", CONV)
def test_conv_matches_torch(name, args, kw, shape):
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(*args, **kw)
    em = getattr(nn, name)(*args, **kw)
    assert repr(em) == repr(tm)
    _check(tm, em, _x(*shape))


CONVT = [
    ("ConvTranspose1d", (4, 6, 3), dict(stride=3, dilation=2), (2, 4, 5), None),
    ("ConvTranspose1d", (4, 2, 3), dict(stride=2, output_padding=1, groups=2), (4, 5), None),
    ("ConvTranspose2d", (4, 6, 3), dict(stride=2, padding=1, output_padding=1, groups=2),
     (2, 4, 5, 4), None),
    ("ConvTranspose2d", (3, 2, (2, 3)), dict(stride=(2, 1), padding=(0, 1), bias=False),
     (2, 3, 4, 4), None),
    ("ConvTranspose2d", (3, 2, 3), dict(stride=2), (1, 3, 4, 4), [10, 9]),
    ("ConvTranspose2d", (2, 2, 2), dict(dilation=2, stride=3, output_padding=2), (1, 2, 3, 3),
     None),
    ("ConvTranspose3d", (2, 4, 2), dict(stride=2), (2, 2, 3, 3, 3), None),
    ("ConvTranspose3d", (4, 2, 3), dict(stride=(1, 2, 2), padding=1, groups=2),
     (1, 4, 3, 3, 2), [3, 6, 4]),
]


@pytest.mark.parametrize("name,args,kw,shape,output_size", CONVT)
def test_conv_transpose_matches_torch(name, args, kw, shape, output_size):
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(*args, **kw)
    em = getattr(nn, name)(*args, **kw)
    assert repr(em) == repr(tm)
    fk = {"output_size": output_size} if output_size else {}
    _check(tm, em, _x(*shape), fk)


POOL = [
    ("MaxPool1d", (3,), dict(stride=2, padding=1), (2, 3, 11)),
    ("MaxPool1d", (2,), dict(dilation=2, ceil_mode=True, return_indices=True), (3, 10)),
    ("MaxPool2d", (3,), dict(stride=2, padding=1, ceil_mode=True), (2, 3, 9, 8)),
    ("MaxPool2d", ((2, 3),), dict(stride=(1, 2), dilation=(2, 1), return_indices=True),
     (2, 3, 8, 9)),
    ("MaxPool2d", (2,), {}, (3, 7, 7)),
    ("MaxPool3d", (2,), dict(ceil_mode=True, return_indices=True), (2, 2, 5, 4, 5)),
    ("MaxPool3d", (3,), dict(stride=2, padding=1, dilation=(1, 1, 2)), (1, 2, 6, 5, 7)),
    ("AvgPool1d", (3,), dict(stride=2, padding=1), (2, 3, 9)),
    ("AvgPool1d", (4,), dict(stride=3, padding=2, ceil_mode=True, count_include_pad=False),
     (2, 10)),
    ("AvgPool2d", (3,), dict(stride=2, padding=1, ceil_mode=True, count_include_pad=False),
     (2, 3, 9, 8)),
    ("AvgPool2d", ((2, 3),), dict(padding=1, divisor_override=4), (2, 3, 7, 7)),
    ("AvgPool3d", (2,), dict(divisor_override=3), (2, 3, 4, 5, 4)),
    ("AvgPool3d", (3,), dict(stride=2, padding=1, ceil_mode=True), (1, 2, 5, 6, 7)),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 10)),
    ("AdaptiveAvgPool2d", ((3, None),), {}, (2, 3, 9, 8)),
    ("AdaptiveAvgPool2d", (1,), {}, (2, 3, 5, 5)),
    ("AdaptiveAvgPool3d", ((2, 3, 4),), {}, (1, 2, 5, 7, 6)),
    ("AdaptiveMaxPool1d", (4,), dict(return_indices=True), (2, 3, 10)),
    ("AdaptiveMaxPool2d", (3,), {}, (2, 3, 9, 8)),
    ("AdaptiveMaxPool2d", ((5, 2),), dict(return_indices=True), (3, 7, 4)),
    ("AdaptiveMaxPool3d", (2,), dict(return_indices=True), (1, 2, 5, 4, 3)),
    ("LPPool1d", (2, 3), {}, (2, 3, 9)),
    ("LPPool1d", (float("inf"), 3), dict(stride=2), (2, 3, 9)),
    ("LPPool2d", (2, 3), dict(stride=2), (2, 3, 9, 8)),
    ("LPPool2d", (1.5, (2, 3)), dict(ceil_mode=True), (2, 3, 7, 8)),
    ("LPPool3d", (2, 2), {}, (1, 2, 4, 4, 4)),
    ("Unfold", ((2, 3),), dict(padding=1, dilation=(1, 2), stride=2), (2, 3, 9, 8)),
    ("Unfold", (2,), {}, (3, 5, 5)),
    ("Fold", ((4, 5), (2, 2)), {}, (2, 12, 12)),
    ("Fold", ((6, 7), (2, 3)), dict(padding=1, stride=(2, 1)), (12, 28)),
]


@pytest.mark.parametrize("name,args,kw,shape", POOL)
def test_pooling_matches_torch(name, args, kw, shape):
    tm = getattr(torch.nn, name)(*args, **kw)
    em = getattr(nn, name)(*args, **kw)
    assert repr(em) == repr(tm)
    x = _x(*shape)
    if name.startswith("LP"):
        x = np.abs(x) + 0.1
    _check(tm, em, x)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool_matches_torch(nd):
    shape = (2, 3) + (8, 6, 4)[:nd]
    x = _x(*shape)
    tpool = getattr(torch.nn, f"MaxPool{nd}d")(2, return_indices=True)
    ty, ti = tpool(torch.tensor(x))
    tun = getattr(torch.nn, f"MaxUnpool{nd}d")(2)
    eun = getattr(nn, f"MaxUnpool{nd}d")(2)
    assert repr(eun) == repr(tun)
    ei = ember.tensor(ti.numpy())
    for size in (None, list(shape[2:])):
        ty_ = ty.detach().clone().requires_grad_()
        ey = ember.tensor(ty.numpy(), requires_grad=True)
        to, eo = tun(ty_, ti, output_size=size), eun(ey, ei, output_size=size)
        np.testing.assert_array_equal(eo.detach().numpy(), to.detach().numpy())
        g = _x(*to.shape)
        to.backward(torch.tensor(g))
        eo.backward(ember.tensor(g))
        np.testing.assert_array_equal(ey.grad.numpy(), ty_.grad.numpy())


def test_max_pool_nan_inf_and_ties_match_torch():
    x = _x(2, 3, 8, 8)
    x[0, 0, :2, :2] = np.nan
    x[0, 1, 2:4, 2:4] = -np.inf
    x[1] = np.round(x[1])  # many ties
    for kw in (dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
               dict(kernel_size=2, dilation=2)):
        to, ti = torch.nn.functional.max_pool2d(torch.tensor(x), return_indices=True, **kw)
        eo, ei = F.max_pool2d(ember.tensor(x), return_indices=True, **kw)
        np.testing.assert_array_equal(eo.numpy(), to.numpy())
        np.testing.assert_array_equal(ei.numpy(), ti.numpy())
    to, ti = torch.nn.functional.adaptive_max_pool2d(torch.tensor(x), 3, return_indices=True)
    eo, ei = F.adaptive_max_pool2d(ember.tensor(x), 3, return_indices=True)
    np.testing.assert_array_equal(eo.numpy(), to.numpy())
    np.testing.assert_array_equal(ei.numpy(), ti.numpy())


def test_float64_functional_matches_torch():
    x = RNG.standard_normal((2, 4, 7, 6))
    w = RNG.standard_normal((6, 2, 3, 3))
    b = RNG.standard_normal(6)
    to = torch.nn.functional.conv2d(torch.tensor(x), torch.tensor(w), torch.tensor(b), 2, 1, 1,
                                    2)
    eo = F.conv2d(ember.tensor(x), ember.tensor(w), ember.tensor(b), 2, 1, 1, 2)
    assert eo.dtype == ember.float64
    np.testing.assert_allclose(eo.numpy(), to.numpy(), rtol=1e-12, atol=1e-12)


def _lenet(lib):
    n = lib.nn
    return n.Sequential(
        n.Conv2d(1, 6, 5, padding=2), n.ReLU(), n.MaxPool2d(2),
        n.Conv2d(6, 16, 5), n.ReLU(), n.AvgPool2d(2), n.Flatten(),
        n.Linear(16 * 5 * 5, 10))


def test_network_state_dict_round_trip_and_step():
    torch.manual_seed(0)
    tnet, enet = _lenet(torch), _lenet(ember)
    enet.load_state_dict(_to_ember(tnet.state_dict()), strict=True)
    tnet.load_state_dict(_to_torch(enet.state_dict()), strict=True)
    x = _x(4, 1, 28, 28)
    to = tnet(torch.tensor(x))
    eo = enet(ember.tensor(x))
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), **TOL)
    to.square().sum().backward()
    eo.square().sum().backward()
    for (name, tp), (_, ep) in zip(tnet.named_parameters(), enet.named_parameters(), strict=False):
        np.testing.assert_allclose(ep.grad.numpy(), tp.grad.numpy(), rtol=1e-3, atol=1e-4,
                                   err_msg=name)


@pytest.mark.parametrize("name,args", [
    ("Conv2d", (16, 32, 3)), ("Conv1d", (8, 64, 5)), ("Conv3d", (4, 8, 3)),
    ("ConvTranspose2d", (32, 16, 3)), ("Conv2d", (16, 32, 3, 1, 0, 1, 4))])
def test_default_init_statistics_match_torch(name, args):
    """kaiming_uniform_(a=sqrt(5)) on the weight and U(-1/sqrt(fan_in), ...) on the bias:
    the same bounds and moments as torch's."""
    torch.manual_seed(0)
    ember.manual_seed(0)
    tm = getattr(torch.nn, name)(*args)
    em = getattr(nn, name)(*args)
    for pname in ("weight", "bias"):
        tp = getattr(tm, pname).detach().numpy()
        ep = getattr(em, pname).detach().numpy()
        assert ep.shape == tp.shape and ep.dtype == tp.dtype
        fan_in = tp.shape[1] * math.prod(tp.shape[2:]) if pname == "weight" else \
            tm.weight.shape[1] * math.prod(tm.weight.shape[2:])
        bound = 1 / math.sqrt(fan_in)
        assert np.abs(ep).max() <= bound
        if ep.size >= 1000:
            assert ep.std() == pytest.approx(bound / math.sqrt(3), rel=0.05)
            assert abs(ep.mean()) < 0.05 * bound
            assert ep.std() == pytest.approx(tp.std(), rel=0.08)
        else:
            assert np.abs(ep).max() > 0.5 * bound

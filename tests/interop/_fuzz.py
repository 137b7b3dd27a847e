"""The machinery of the differential fuzz suite (test_fuzz_torch.py): run one call on
ember and on PyTorch 2.13 with the same inputs, laid out the same way, and describe how
the two differ (None when they agree).

A call is compared on: both raise or neither; the result's shapes, dtypes and values
(NaN equal to NaN); and, for float64 inputs that require grad, the gradients of a random
weighting of the float outputs.
"""

from __future__ import annotations

import os

import numpy as np
import torch

import ember
from ember.testing import assert_close

# The number of hypothesis examples per test: small in CI, larger for a long run
# (EMBER_FUZZ_EXAMPLES=200 pytest tests/interop/test_fuzz_torch.py).
EXAMPLES = int(os.environ.get("EMBER_FUZZ_EXAMPLES", "3"))

LAYOUTS = ("contiguous", "transposed", "sliced", "expanded")
SPECIALS = (np.nan, np.inf, -np.inf, -0.0)

_ERRORS = (RuntimeError, ValueError, TypeError, IndexError, NotImplementedError,
           AssertionError, ZeroDivisionError, OverflowError)


def with_specials(a, seed, count=2):
    """A copy of float array ``a`` with ``count`` entries set to NaN, inf, -inf or -0.0."""
    a = np.array(a, copy=True)
    if a.dtype.kind != "f" or a.size == 0:
        return a
    rng = np.random.default_rng(seed)
    flat = a.reshape(-1)
    for _ in range(count):
        flat[rng.integers(flat.size)] = SPECIALS[rng.integers(len(SPECIALS))]
    return a


def make_tensor(lib, a, layout, requires_grad=False):
    """``(leaf, tensor)``: a tensor of ``lib`` holding array ``a`` (or, for "expanded", its
    first slice along dim 0 broadcast to its shape) with the given memory layout; ``leaf``
    is the tensor that gradients are taken for."""
    from_np = ember.tensor if lib is ember else (lambda x: torch.from_numpy(np.array(x)))
    grad = requires_grad and a.dtype.kind == "f"
    if layout == "transposed" and a.ndim >= 2:
        leaf = from_np(np.ascontiguousarray(a.swapaxes(-1, -2))).requires_grad_(grad)
        return leaf, leaf.transpose(-1, -2)
    if layout == "sliced" and a.ndim >= 1:
        big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
        big[..., ::2] = a
        leaf = from_np(big).requires_grad_(grad)
        return leaf, leaf[..., ::2]
    if layout == "expanded" and a.ndim >= 1 and a.shape[0] > 1:
        leaf = from_np(np.ascontiguousarray(a[:1])).requires_grad_(grad)
        return leaf, leaf.expand(*a.shape)
    leaf = from_np(a).requires_grad_(grad)
    return leaf, leaf


class NoGrad:
    """An array input that never requires grad and stays contiguous (running statistics,
    which batch norm updates in place)."""

    def __init__(self, array):
        self.array = array


def convert(lib, x, layouts, leaves, requires_grad):
    """``x`` with every NumPy array replaced by a tensor of ``lib`` (layouts taken in order
    from the iterator ``layouts``); the leaves that require grad are appended to ``leaves``."""
    if isinstance(x, NoGrad):
        return make_tensor(lib, x.array, "contiguous")[1]
    if isinstance(x, np.ndarray):
        leaf, t = make_tensor(lib, x, next(layouts, "contiguous"), requires_grad)
        if leaf.requires_grad:
            leaves.append(leaf)
        return t
    if isinstance(x, list):
        return [convert(lib, v, layouts, leaves, requires_grad) for v in x]
    if isinstance(x, tuple):
        return tuple(convert(lib, v, layouts, leaves, requires_grad) for v in x)
    if isinstance(x, dict):
        return {k: convert(lib, v, layouts, leaves, requires_grad) for k, v in x.items()}
    return x


def _tensors(out):
    if isinstance(out, (ember.Tensor, torch.Tensor)):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _tensors(o)]
    return []


def _numpy(t):
    if isinstance(t, torch.Tensor):
        return t.detach().resolve_conj().resolve_neg().numpy(force=True)
    return t.detach().numpy()


def run(lib, fn, inputs, layouts, requires_grad):
    """Call ``fn(*inputs)`` with ``lib``'s tensors. Returns ``("error", exc)`` or
    ``("ok", outputs, leaves)``."""
    leaves = []
    args = convert(lib, inputs, iter(layouts), leaves, requires_grad)
    try:
        out = fn(*args)
    except _ERRORS as e:
        return ("error", e)
    return ("ok", out, leaves)


def _describe_values(e, t, rtol, atol):
    outs_e, outs_t = _tensors(e), _tensors(t)
    if not outs_e and not outs_t:
        if isinstance(e, (bool, int, float)) or isinstance(t, (bool, int, float)):
            if not (e == t or (e != e and t != t)):
                return f"values differ: ember {e!r}, torch {t!r}"
        return None
    if len(outs_e) != len(outs_t):
        return f"ember gave {len(outs_e)} tensors, torch {len(outs_t)}"
    for k, (a, b) in enumerate(zip(outs_e, outs_t)):
        if tuple(a.shape) != tuple(b.shape):
            return f"output {k}: shape {tuple(a.shape)} vs torch {tuple(b.shape)}"
        ad, bd = str(a.dtype).split(".")[-1], str(b.dtype).split(".")[-1]
        if ad != bd:
            return f"output {k}: dtype {ad} vs torch {bd}"
        try:
            tol = {} if rtol is None else {"rtol": rtol, "atol": atol}
            if ad in ("float16", "bfloat16") and not tol:
                tol = {"rtol": 1e-2, "atol": 1e-2}
            assert_close(_numpy(a), _numpy(b), equal_nan=True, **tol)
        except (AssertionError, ValueError) as err:  # (ValueError: an all-NaN difference)
            return (f"output {k}: values differ: {str(err).splitlines()[0][:200]}\n"
                    f"ember {_numpy(a).ravel()[:8]}\ntorch {_numpy(b).ravel()[:8]}")
    return None


def _grads(lib, out, leaves, seed):
    floats = [o for o in _tensors(out) if o.requires_grad and o.dtype.is_floating_point]
    if not floats or not leaves:
        return None
    rng = np.random.default_rng(seed)
    total = None
    for o in floats:
        w = rng.standard_normal(tuple(o.shape))
        w = ember.tensor(w).to(o.dtype) if lib is ember else torch.from_numpy(w).to(o.dtype)
        term = (o * w).sum()
        total = term if total is None else total + term
    try:
        grads = lib.autograd.grad(total, leaves, allow_unused=True)
    except _ERRORS as e:
        return e
    return [None if g is None else _numpy(g) for g in grads]


def compare(ember_fn, torch_fn, inputs, layouts=(), requires_grad=False, rtol=None,
            atol=None, grad_rtol=1e-6, grad_atol=1e-8):
    """How ``ember_fn(*inputs)`` and ``torch_fn(*inputs)`` differ, or None."""
    e = run(ember, ember_fn, inputs, layouts, requires_grad)
    t = run(torch, torch_fn, inputs, layouts, requires_grad)
    if e[0] != t[0]:
        if e[0] == "error":
            return f"ember raised {type(e[1]).__name__}: {str(e[1])[:200]}; torch did not"
        return f"torch raised {type(t[1]).__name__}: {str(t[1])[:200]}; ember did not"
    if e[0] == "error":
        return None
    diff = _describe_values(e[1], t[1], rtol, atol)
    if diff is not None or not requires_grad:
        return diff
    ge, gt = _grads(ember, e[1], e[2], 7), _grads(torch, t[1], t[2], 7)
    if isinstance(ge, Exception) or isinstance(gt, Exception):
        if isinstance(ge, Exception) != isinstance(gt, Exception):
            return f"backward: ember {ge!r:.200}, torch {gt!r:.200}"
        return None
    if ge is None or gt is None:
        return None if (ge is None) == (gt is None) else "only one side has a gradient"
    for k, (a, b) in enumerate(zip(ge, gt)):
        if b is None:
            if a is not None and np.any(a):
                return f"gradient {k}: torch has none, ember nonzero"
            continue
        if a is None:
            if np.any(b):
                return f"gradient {k}: ember has none, torch nonzero"
            continue
        try:
            assert_close(a, b, rtol=grad_rtol, atol=grad_atol, equal_nan=True)
        except AssertionError as err:
            return f"gradient {k}: {str(err).splitlines()[0][:200]}"
    return None

"""Every op in the op database against PyTorch 2.13: outputs and gradients.

Skipped as a whole when torch is not installed (``nox -s interop`` installs it).
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402
from ember.testing import assert_close  # noqa: E402
from ember.testing._opinfo import op_db  # noqa: E402

torch.set_default_dtype(torch.float32)


def _convert(x, lib, requires_grad):
    if isinstance(x, np.ndarray):
        t = lib.tensor(x.copy()) if lib is ember else torch.from_numpy(x.copy())
        if requires_grad and x.dtype.kind == "f":
            t.requires_grad_(True)
        return t
    if isinstance(x, list):
        return [_convert(v, lib, requires_grad) for v in x]
    if isinstance(x, tuple):
        return tuple(_convert(v, lib, requires_grad) for v in x)
    if isinstance(x, dict):
        return {k: _convert(v, lib, requires_grad) for k, v in x.items()}
    return x


def _leaves(x, out):
    if isinstance(x, (ember.Tensor, torch.Tensor)) and x.requires_grad:
        out.append(x)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _leaves(v, out)
    elif isinstance(x, dict):
        for v in x.values():
            _leaves(v, out)
    return out


def _np(x):
    if isinstance(x, (ember.Tensor, torch.Tensor)):
        return x.detach().numpy()
    if isinstance(x, (tuple, list)):
        return [_np(v) for v in x]
    return np.asarray(x)


def _float_outputs(out):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in outs if isinstance(o, (ember.Tensor, torch.Tensor))
            and (o.is_floating_point() or o.is_complex()) and o.requires_grad]


def _marks(op, test, dtype=None):
    """strict xfail marks for the known bugs an OpInfo lists for ``test``."""
    return op.xfail_marks(test, dtype)


TORCH_OPS = [op for op in op_db if op.torch_op is not None]
_DTYPE_CASES = [pytest.param(op, dt, id=f"{op.name}-{np.dtype(dt).name}",
                             marks=_marks(op, "test_forward_matches_torch", dt))
                for op in TORCH_OPS for dt in op.dtypes]


@pytest.mark.parametrize("op,dtype", _DTYPE_CASES)
def test_forward_matches_torch(op, dtype):
    torch_fn = op.torch_op(torch)
    rng = np.random.default_rng(0)
    for sample in op.samples(dtype, rng):
        e_out = op.op(_convert(sample.input, ember, False), *_convert(sample.args, ember, False),
                      **_convert(sample.kwargs, ember, False))
        t_out = torch_fn(_convert(sample.input, torch, False),
                         *_convert(sample.args, torch, False),
                         **_convert(sample.kwargs, torch, False))
        if op.output_process is not None:
            e_out, t_out = op.output_process(e_out), op.output_process(t_out)
        e, t = _np(e_out), _np(t_out)
        tol = {} if op.rtol is None else {"rtol": op.rtol, "atol": op.atol}
        if np.dtype(dtype) == np.float16 and not tol:
            tol = {"rtol": 1e-2, "atol": 1e-2}
        assert_close(e, t, check_dtype=op.check_dtype, equal_nan=True, **tol,
                     msg=None)


GRAD_OPS = [op for op in TORCH_OPS if op.differentiable]


@pytest.mark.parametrize("op", [pytest.param(op, id=op.name,
                                             marks=_marks(op, "test_gradients_match_torch"))
                                for op in GRAD_OPS])
def test_gradients_match_torch(op):
    _compare_gradients(op, lambda sample: sample.grad)


def _has_kinks(op):
    return any(not s.grad for s in op.samples(np.float64, np.random.default_rng(1)))


KINK_OPS = [op for op in GRAD_OPS if _has_kinks(op)]


@pytest.mark.parametrize("op", [pytest.param(op, id=op.name,
                                             marks=_marks(op, "test_subgradients_match_torch"))
                                for op in KINK_OPS])
def test_subgradients_match_torch(op):
    """The samples that gradcheck skips (kinks, ties, clamps, NaN): the gradient
    PyTorch's convention gives there, which is what a ported program computes."""
    _compare_gradients(op, lambda sample: not sample.grad)


def _compare_gradients(op, select):
    torch_fn = op.torch_op(torch)
    rng = np.random.default_rng(1)
    for sample in op.samples(np.float64, rng):
        if not select(sample):
            continue
        results = []
        for lib, fn in ((ember, op.op), (torch, torch_fn)):
            inp = _convert(sample.input, lib, True)
            args = _convert(sample.args, lib, True)
            kwargs = _convert(sample.kwargs, lib, False)  # keyword arrays are constants
            leaves = _leaves([inp, args], [])
            out = fn(inp, *args, **kwargs)
            if op.output_process is not None:
                out = op.output_process(out)
            outs = _float_outputs(out)
            if not leaves or not outs:
                results.append(None)
                continue
            g_rng = np.random.default_rng(2)
            total = None
            for o in outs:
                w = lib.tensor(g_rng.standard_normal(tuple(o.shape))).to(o.dtype) \
                    if lib is ember else torch.from_numpy(
                        g_rng.standard_normal(tuple(o.shape))).to(o.dtype)
                term = (o * w).sum()
                total = term if total is None else total + term
            grads = lib.autograd.grad(total, leaves, allow_unused=True)
            # force=True: torch's zero gradients may be ZeroTensors, which numpy() refuses
            results.append([None if g is None else
                            (g.detach().numpy(force=True) if lib is torch else g.detach().numpy())
                            for g in grads])
        e_grads, t_grads = results
        if e_grads is None or t_grads is None:
            continue
        for eg, tg in zip(e_grads, t_grads):
            if tg is None:
                assert eg is None or not np.any(eg), f"{op.name}: torch has no gradient"
                continue
            assert eg is not None, f"{op.name}: ember gave no gradient where torch did"
            assert_close(eg, tg, rtol=1e-6, atol=1e-8, equal_nan=True)

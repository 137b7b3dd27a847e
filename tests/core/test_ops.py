"""Generic op tests driven by the op database (ember.testing._opinfo).

For every OpInfo: the forward against its NumPy reference on every listed dtype, the
gradients of every differentiable op against finite differences in float64, the
Tensor-method form against the function, and non-contiguous inputs.
"""

from __future__ import annotations

import numpy as np
import pytest

import ember
from ember.testing import assert_close
from ember.testing._opinfo import op_db


def to_ember(x, requires_grad=False):
    if isinstance(x, np.ndarray):
        t = ember.tensor(x)
        if requires_grad and x.dtype.kind == "f":
            t.requires_grad_(True)
        return t
    if isinstance(x, list):
        return [to_ember(v, requires_grad) for v in x]
    if isinstance(x, tuple):
        return tuple(to_ember(v, requires_grad) for v in x)
    if isinstance(x, dict):
        return {k: to_ember(v, requires_grad) for k, v in x.items()}
    return x


def call(op, sample, requires_grad=False):
    inp = to_ember(sample.input, requires_grad)
    args = to_ember(sample.args, requires_grad)
    kwargs = to_ember(sample.kwargs, requires_grad)
    return op(inp, *args, **kwargs), inp, args, kwargs


def to_numpy(x):
    if isinstance(x, ember.Tensor):
        return x.detach().numpy()
    if isinstance(x, (tuple, list)):
        return type(x)(to_numpy(v) for v in x)
    return x


def _marks(op, test, dtype=None):
    """strict xfail marks for the known bugs an OpInfo lists for ``test``."""
    return op.xfail_marks(test, dtype)


def _op_params(ops, test):
    return [pytest.param(op, id=op.name, marks=_marks(op, test)) for op in ops]


def _dtype_params(test):
    return [pytest.param(op, dt, id=f"{op.name}-{np.dtype(dt).name}",
                         marks=_marks(op, test, dt))
            for op in op_db for dt in op.dtypes]


@pytest.mark.parametrize("op,dtype", _dtype_params("test_forward_matches_numpy"))
def test_forward_matches_numpy(op, dtype):
    if op.ref is None:
        pytest.skip(f"{op.name} has no NumPy reference" + (
            " (compared with PyTorch in interop)" if op.torch_op is not None else
            " (random: gradchecked under a fixed seed)"))
    rng = np.random.default_rng(0)
    for sample in op.samples(dtype, rng):
        result, *_ = call(op.op, sample)
        expected = op.ref(sample.input, *sample.args, **sample.kwargs)
        got = to_numpy(result)
        if op.output_process is not None:
            got, expected = op.output_process(got), op.output_process(expected)
        tol = {} if op.rtol is None else {"rtol": op.rtol, "atol": op.atol}
        if np.dtype(dtype) == np.float16 and not tol:
            tol = {"rtol": 1e-2, "atol": 1e-2}
        assert_close(got, expected, check_dtype=False, equal_nan=True, **tol,
                     msg=None)


def _grad_ops():
    return [op for op in op_db if op.differentiable]


@pytest.mark.parametrize("op", _op_params(_grad_ops(), "test_gradcheck"))
def test_gradcheck(op):
    rng = np.random.default_rng(1)
    for sample in op.samples(np.float64, rng):
        if not sample.grad:
            continue
        inp = to_ember(sample.input, True)
        args = to_ember(sample.args, True)
        kwargs = to_ember(sample.kwargs)  # keyword arrays are constants
        flat = []

        def collect(x, flat=flat):
            if isinstance(x, ember.Tensor) and x.requires_grad:
                flat.append(x)
            elif isinstance(x, (list, tuple)):
                for v in x:
                    collect(v)
        collect(inp)
        collect(args)
        if not flat:
            continue

        def fn(*tensors, inp=inp, args=args, kwargs=kwargs):
            it = iter(tensors)

            def subst(x):
                if isinstance(x, ember.Tensor) and x.requires_grad:
                    return next(it)
                if isinstance(x, list):
                    return [subst(v) for v in x]
                if isinstance(x, tuple):
                    return tuple(subst(v) for v in x)
                return x
            i2 = subst(inp)
            a2 = subst(args)
            out = op.op(i2, *a2, **kwargs)
            if op.output_process is not None:
                out = op.output_process(out)
            return out

        assert ember.autograd.gradcheck(fn, tuple(flat), atol=op.grad_atol, rtol=op.grad_rtol)
        if op.gradgrad:
            assert ember.autograd.gradgradcheck(fn, tuple(flat), atol=op.grad_atol,
                                                rtol=op.grad_rtol)


def _method_ops():
    return [op for op in op_db if op.method]


@pytest.mark.parametrize("op", _op_params(_method_ops(), "test_method_matches_function"))
def test_method_matches_function(op):
    rng = np.random.default_rng(2)
    dtype = op.dtypes[0]
    for sample in op.samples(dtype, rng):
        fn_result, inp, args, kwargs = call(op.op, sample)
        if not isinstance(inp, ember.Tensor):
            continue
        m_result = getattr(inp, op.method)(*args, **kwargs)
        a, b = to_numpy(fn_result), to_numpy(m_result)
        if op.output_process is not None:
            a, b = op.output_process(a), op.output_process(b)
        assert_close(a, b, equal_nan=True)


def _strided(x):
    """``x`` as a tensor that is a non-contiguous view (every other element of a wider
    array); arrays nested in lists, tuples and dicts too. Zero-size and 0-dim arrays
    stay as they are."""
    if isinstance(x, np.ndarray):
        if x.ndim < 1 or x.size < 2:
            return ember.tensor(x)
        base = np.stack([x, np.zeros_like(x)], axis=-1)
        return ember.tensor(base)[..., 0]
    if isinstance(x, list):
        return [_strided(v) for v in x]
    if isinstance(x, tuple):
        return tuple(_strided(v) for v in x)
    if isinstance(x, dict):
        return {k: _strided(v) for k, v in x.items()}
    return x


def _has_strided(x):
    if isinstance(x, ember.Tensor):
        return not x.is_contiguous()
    if isinstance(x, (list, tuple)):
        return any(_has_strided(v) for v in x)
    if isinstance(x, dict):
        return any(_has_strided(v) for v in x.values())
    return False


@pytest.mark.parametrize("op", _op_params(op_db, "test_noncontiguous_input"))
def test_noncontiguous_input(op):
    """Every sample with all its arrays (input, args, kwargs) as non-contiguous views
    gives what the contiguous call gives."""
    rng = np.random.default_rng(3)
    dtype = op.dtypes[-1]
    checked = 0
    for sample in op.samples(dtype, rng):
        inp, args, kwargs = _strided(sample.input), _strided(sample.args), \
            _strided(sample.kwargs)
        if not (_has_strided(inp) or _has_strided(args) or _has_strided(kwargs)):
            continue
        got = to_numpy(op.op(inp, *args, **kwargs))
        c_inp, c_args, c_kwargs = (to_ember(v) for v in (sample.input, sample.args,
                                                          sample.kwargs))
        exp = to_numpy(op.op(c_inp, *c_args, **c_kwargs))
        if op.output_process is not None:
            got, exp = op.output_process(got), op.output_process(exp)
        assert_close(got, exp, equal_nan=True, msg=None)
        checked += 1
    if not checked:
        pytest.skip(f"{op.name} has no sample with an array to make non-contiguous")


def test_every_nn_functional_op_has_an_entry():
    """Each public function of ember.nn.functional has an OpInfo named after it (``nn_``
    in front where a tensor op has the plain name) that calls it: the function itself or
    a wrapper from the nn families (ember.testing._opinfo.nn_*)."""
    import ember.nn.functional as F

    def calls(entry, fn):
        return entry.op is fn or getattr(entry.op, "__module__", "").startswith(
            "ember.testing._opinfo.nn_")

    by_name = {o.name: o for o in op_db}
    missing = [n for n in F.__all__ if callable(getattr(F, n))
               and not any(e in by_name and calls(by_name[e], getattr(F, n))
                           for e in (n, f"nn_{n}"))]
    assert not missing, f"nn.functional ops without an op-database entry: {missing}"

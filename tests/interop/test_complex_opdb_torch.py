"""Complex tensors against PyTorch's own operator database.

Every op of ``torch.testing._internal.common_methods_invocations.op_db`` that PyTorch runs
on complex128 on the CPU is run on the same sample inputs in ember: the results must agree
(forward), and so must the vector-Jacobian products for random complex cotangents
(backward, PyTorch's conjugate Wirtinger convention). Ops that cannot be compared this way
are listed below with the reason; a listed op that starts to pass is reported, so that the
lists only shrink.
"""

import inspect
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")  # torch's op database imports it

DT = torch.complex128
FORWARD_SAMPLES = 3
BACKWARD_SAMPLES = 2

# not compared at all, with the reason
SKIP = {
    "chalf": "ember has no complex32 (NumPy has none); chalf raises TypeError",
    "H": "a property (checked in test_complex_properties)",
    "T": "a property (checked in test_complex_properties)",
    "mH": "a property (checked in test_complex_properties)",
    "mT": "a property (checked in test_complex_properties)",
    "linalg.eigh": "eigenvectors are unique up to a phase per column; LAPACK builds differ",
    "as_strided.partial_views": "samples are views into larger storages, which the copy loses",
    "as_strided_scatter": "samples are views into larger storages, which the copy loses",
    "zero_": "in place on a leaf that requires grad (the sample clones first in torch)",
    "normal.in_place": "random numbers",
    "nn.functional.triplet_margin_with_distance_loss": "the samples pass torch functions as "
                                                        "distance_function",
}
# the names torch's database has that ember does not (private or prototype namespaces)
MISSING_OK = {
    "__rdiv__", "_chunk_cat", "_unsafe_masked_index", "_unsafe_masked_index_put_accumulate",
    "slice", "sparse.sampled_addmm", "to_sparse", "uniform",
    "jiterator_2inputs_2outputs", "jiterator_4inputs_with_extra_args", "jiterator_binary",
    "jiterator_binary_return_by_ref", "jiterator_unary",
    "masked.cumprod", "masked.cumsum", "masked.logsumexp", "masked.mean", "masked.normalize",
    "masked.prod", "masked.std", "masked.sum", "masked.var",
}
RANDOM = {"empty", "empty_like", "empty_permuted", "empty_strided", "new_empty",
          "new_empty_strided", "rand_like", "randn", "randn_like", "bernoulli", "multinomial",
          "normal", "randint", "randint_like", "nn.functional.dropout", "uniform"}
# backward only: torch's value is NaN where ember's is the limit
BACKWARD_SKIP = {
    "logcumsumexp": "torch's gradient is NaN at -inf inputs; ember gives the limit",
}


def _op_db():
    from torch.testing._internal.common_methods_invocations import op_db

    return op_db


def _key(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def _ember_callable(op):
    """The ember function for a torch OpInfo: the same dotted name in ember, else the
    Tensor method; None for the ops whose torch callable is a lambda."""
    if getattr(op.op, "__name__", "") == "<lambda>":
        return None
    obj = ember
    for part in op.name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            break
    if callable(obj) and not isinstance(obj, (ember.dtype, type)):
        return obj
    if hasattr(ember.Tensor, op.name):
        name = op.name
        return lambda x, *a, **k: getattr(x, name)(*a, **k)
    return None


def _to_ember(x, leaves=None):
    if isinstance(x, torch.Tensor):
        e = ember.from_numpy(x.detach().resolve_conj().resolve_neg().numpy().copy())
        if leaves is not None and x.requires_grad:
            e.requires_grad_(True)
            leaves[id(x)] = e
        return e
    if isinstance(x, (list, tuple)):
        return type(x)(_to_ember(y, leaves) for y in x)
    if isinstance(x, dict):
        return {k: _to_ember(v, leaves) for k, v in x.items()}
    if isinstance(x, torch.dtype):
        return getattr(ember, str(x).split(".")[1])
    if isinstance(x, torch.Size):
        return tuple(x)
    return x


def _to_numpy(x):
    if isinstance(x, torch.Tensor):
        return x.detach().resolve_conj().resolve_neg().numpy()
    if isinstance(x, ember.Tensor):
        return x.detach().numpy()
    if isinstance(x, (list, tuple)):
        return [_to_numpy(y) for y in x]
    return np.asarray(x)


def _close(a, b):
    if isinstance(a, list):
        return (isinstance(b, list) and len(a) == len(b)
                and all(_close(x, y) for x, y in zip(a, b)))
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or (a.dtype != b.dtype and not a.dtype.kind == b.dtype.kind == "c"):
        return False
    return np.allclose(a, b, rtol=1e-6, atol=1e-6, equal_nan=True)


def _complex_ops():
    for op in _op_db():
        try:
            if DT not in op.supported_dtypes("cpu"):
                continue
        except Exception:
            continue
        key = _key(op)
        if key in SKIP or op.name in RANDOM or key in RANDOM:
            continue
        yield key, op


def _forward_failures():
    failures, missing = {}, []
    for key, op in _complex_ops():
        fn = _ember_callable(op)
        if fn is None:
            if getattr(op.op, "__name__", "") != "<lambda>" and op.name not in MISSING_OK:
                missing.append(key)
            continue
        for i, s in enumerate(list(op.sample_inputs("cpu", DT, requires_grad=False))
                              [:FORWARD_SAMPLES]):
            try:
                expected = op(s.input, *s.args, **s.kwargs)
            except Exception:
                continue  # torch itself rejects the sample
            try:
                got = fn(_to_ember(s.input), *_to_ember(s.args), **_to_ember(s.kwargs))
            except Exception as e:
                failures[key] = f"sample {i}: {type(e).__name__}: {str(e)[:100]}"
                break
            if not _close(_to_numpy(expected), _to_numpy(got)):
                failures[key] = f"sample {i}: values differ"
                break
    return failures, missing


def _backward_failures(rng):
    failures = {}
    for key, op in _complex_ops():
        if key in BACKWARD_SKIP or not op.supports_autograd or key.endswith("_"):
            continue
        if DT not in op.supported_backward_dtypes("cpu"):
            continue
        wrapper = getattr(op.gradcheck_wrapper, "__name__", "")
        if wrapper != "<lambda>" or op.name.endswith("_"):
            continue  # the sample is valid only through its wrapper (Hermitian inputs ...)
        fn = _ember_callable(op)
        if fn is None:
            continue
        for i, s in enumerate(list(op.sample_inputs("cpu", DT, requires_grad=True))
                              [:BACKWARD_SAMPLES]):
            args = s.input if isinstance(s.input, (list, tuple)) else [s.input, *s.args]
            leaves_t = [x for x in args if isinstance(x, torch.Tensor) and x.requires_grad]
            if not leaves_t:
                continue
            try:
                out = op(s.input, *s.args, **s.kwargs)
                out = out if isinstance(out, (tuple, list)) else [out]
                picked = [j for j, o in enumerate(out)
                          if isinstance(o, torch.Tensor) and o.requires_grad and o.numel()]
                outs = [out[j] for j in picked]
                if not outs:
                    continue
                cots = [torch.from_numpy(rng.standard_normal(o.shape)
                                         + (1j * rng.standard_normal(o.shape)
                                            if o.is_complex() else 0)) for o in outs]
                expected = torch.autograd.grad(outs, leaves_t, cots, allow_unused=True)
            except Exception:
                continue
            leaves = {}
            ins = _to_ember(s.input, leaves), _to_ember(s.args, leaves), _to_ember(s.kwargs)
            try:
                got = fn(ins[0], *ins[1], **ins[2])
                got = got if isinstance(got, (tuple, list)) else [got]
                gouts = [got[j] for j in picked if j < len(got)]
                if len(gouts) != len(outs) or not all(o.requires_grad for o in gouts):
                    failures[key] = f"sample {i}: outputs without a gradient"
                    break
                grads = ember.autograd.grad(gouts, [leaves[id(x)] for x in leaves_t],
                                            [_to_ember(c) for c in cots], allow_unused=True)
            except Exception as e:
                failures[key] = f"sample {i}: {type(e).__name__}: {str(e)[:100]}"
                break
            bad = [(a is None) != (b is None) or (a is not None and not _close(
                _to_numpy(a), _to_numpy(b))) for a, b in zip(expected, grads)]
            if any(bad):
                failures[key] = f"sample {i}: gradients differ"
                break
    return failures


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_complex_forward_matches_torch_op_db():
    failures, missing = _forward_failures()
    assert not missing, f"ops torch runs on complex that ember lacks: {missing}"
    assert not failures, "complex forward differs from torch:\n" + "\n".join(
        f"  {k}: {v}" for k, v in sorted(failures.items()))


def test_complex_backward_matches_torch_op_db():
    failures = _backward_failures(np.random.default_rng(0))
    assert not failures, "complex gradients differ from torch:\n" + "\n".join(
        f"  {k}: {v}" for k, v in sorted(failures.items()))


def test_complex_properties():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3, 4)) + 1j * rng.standard_normal((2, 3, 4))
    t, e = torch.tensor(a, requires_grad=True), ember.tensor(a, requires_grad=True)
    for name in ("mT", "mH"):
        g = rng.standard_normal((2, 4, 3)) + 1j * rng.standard_normal((2, 4, 3))
        tv, ev = getattr(t, name), getattr(e, name)
        np.testing.assert_allclose(ev.detach().numpy(), tv.detach().resolve_conj().numpy())
        tg = torch.autograd.grad(tv, t, torch.tensor(g))[0]
        eg = ember.autograd.grad(ev, e, ember.tensor(g))[0]
        np.testing.assert_allclose(eg.numpy(), tg.resolve_conj().numpy())
    m = a[0]
    for name in ("T", "H"):
        tv = getattr(torch.tensor(m), name).resolve_conj().numpy()
        np.testing.assert_allclose(getattr(ember.tensor(m), name).numpy(), tv)


def test_the_lists_are_current():
    """Every name in the lists above is still one of torch's complex ops."""
    keys = {_key(op) for op in _op_db()}
    stale = sorted(k for k in (*SKIP, *MISSING_OK, *BACKWARD_SKIP) if k not in keys)
    assert not stale, stale
    assert inspect.isfunction(_ember_callable)

"""gradcheck and gradgradcheck: analytical gradients against finite differences."""

from __future__ import annotations

import numpy as np

from ember._C._core import TensorBase

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when analytical and numerical gradients differ."""


def _as_tuple(x):
    return (x,) if isinstance(x, TensorBase) else tuple(x)


def _diff_inputs(inputs):
    return [i for i, x in enumerate(inputs) if isinstance(x, TensorBase) and x.requires_grad]


def _flat_outputs(func, inputs):
    out = func(*inputs)
    outs = _as_tuple(out)
    return [o for o in outs if isinstance(o, TensorBase) and o._data.dtype.kind in "fc"]


# NOTE [ gradcheck on complex numbers ]
# A complex tensor counts as two real ones (its real and imaginary parts), as in PyTorch:
# the Jacobians compared are those of the real map between the real parts. An input
# element gives two columns (d/d re, d/d im), an output element two rows (re, im). The
# analytical row of an output's real part is the backward of a cotangent 1 at that element,
# of its imaginary part the backward of 1j (PyTorch's convention: for a real L =
# Re(sum(conj(g) * y)) backward returns dL/d re(x) + 1j * dL/d im(x)); the real and
# imaginary parts of that gradient are the two columns of a complex input.

def _real_view(a):
    """A flat float64 view of an array: a complex element as (re, im), interleaved."""
    a = np.asarray(a).reshape(-1)
    if a.dtype.kind == "c":
        return np.stack([a.real, a.imag], axis=-1).reshape(-1).astype(np.float64)
    return a.astype(np.float64)


def _numerical_jacobian(func, inputs, idx, out_sizes, eps):
    """Central differences: one column per real component of inputs[idx]."""
    from ember.autograd.grad_mode import no_grad

    x = inputs[idx]
    flat = x._data.reshape(-1) if x._data.flags.c_contiguous else None
    if flat is None:
        raise GradcheckError("gradcheck needs contiguous inputs")
    steps = (eps, 1j * eps) if flat.dtype.kind == "c" else (eps,)

    def outputs():
        return [_real_view(o._data.copy()) for o in _flat_outputs(func, inputs)]

    cols = []
    with no_grad():
        for k in range(flat.size):
            orig = flat[k].copy()
            for step in steps:
                flat[k] = orig + step
                plus = outputs()
                flat[k] = orig - step
                minus = outputs()
                flat[k] = orig
                cols.append(np.concatenate([(p - m) / (2 * eps)
                                            for p, m in zip(plus, minus, strict=False)])
                            if plus else np.zeros(0))
    return np.stack(cols, axis=1) if cols else np.zeros((sum(out_sizes), 0))


def _analytical_jacobian(func, inputs, idxs, eps):
    from ember._ops.creation import zeros_like
    from ember.autograd import grad

    outs = _flat_outputs(func, inputs)
    sizes = [int(o._data.size) * (2 if o._data.dtype.kind == "c" else 1) for o in outs]
    widths = {i: int(inputs[i]._data.size) * (2 if inputs[i]._data.dtype.kind == "c" else 1)
              for i in idxs}
    rows = {i: [] for i in idxs}
    for o in outs:
        units = (1, 1j) if o._data.dtype.kind == "c" else (1,)
        for k in range(int(o._data.size)):
            for unit in units:
                if not o.requires_grad:
                    for i in idxs:
                        rows[i].append(np.zeros(widths[i]))
                    continue
                g = zeros_like(o)
                g._data.reshape(-1)[k] = unit
                gs = grad([o], [inputs[i] for i in idxs], [g], retain_graph=True,
                          allow_unused=True)
                for i, gi in zip(idxs, gs, strict=False):
                    rows[i].append(np.zeros(widths[i]) if gi is None else _real_view(gi._data))
    return {i: (np.stack(r) if r else np.zeros((0, widths[i]))) for i, r in rows.items()}, sizes


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """Check the gradients of ``func`` at ``inputs`` against central finite differences.

    The inputs that require grad should be float64 or complex128 (float32 differences are
    too coarse). A complex input or output counts as its real and imaginary parts, with
    PyTorch's conjugate convention for the gradient (NOTE [ gradcheck on complex numbers ]).
    Returns True, or raises :class:`GradcheckError` (returns False if
    ``raise_exception=False``) naming the input and output whose Jacobians differ.
    ember has no forward-mode AD: ``check_forward_ad`` and ``check_batched_forward_grad``
    must be False.
    """
    if check_forward_ad or check_batched_forward_grad:
        raise ValueError("gradcheck: ember has no forward-mode AD, so check_forward_ad and "
                         "check_batched_forward_grad must be False")
    inputs = _as_tuple(inputs)
    idxs = _diff_inputs(inputs)
    if not idxs:
        raise ValueError("gradcheck expects at least one input tensor to require gradient")
    for i in idxs:
        if inputs[i]._data.dtype not in (np.float64, np.complex128):
            import warnings

            warnings.warn(f"Input #{i} requires gradient and is not a double precision "
                          "floating point. This check will likely fail.", stacklevel=2)
    analytical, sizes = _analytical_jacobian(func, inputs, idxs, eps)
    for i in idxs:
        num = _numerical_jacobian(func, inputs, i, sizes, eps)
        ana = analytical[i]
        if num.shape != ana.shape or not np.allclose(ana, num, rtol=rtol, atol=atol):
            if not raise_exception:
                return False
            raise GradcheckError(
                f"Jacobian mismatch for output 0 with respect to input {i},\n"
                f"numerical:{num}\nanalytical:{ana}\n")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """Check second derivatives: gradcheck of the function (inputs, grad_outputs) ->
    gradients of ``func`` computed with ``create_graph=True``. ember has no forward-mode
    AD: ``check_fwd_over_rev`` must be False."""
    if check_fwd_over_rev:
        raise ValueError("gradgradcheck: ember has no forward-mode AD, so check_fwd_over_rev "
                         "must be False")
    from ember._ops.creation import tensor
    from ember.autograd import grad
    from ember.autograd.grad_mode import enable_grad

    inputs = _as_tuple(inputs)
    outs = _flat_outputs(func, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(tensor(rng.standard_normal(o.shape) + (
            1j * rng.standard_normal(o.shape) if o._data.dtype.kind == "c" else 0),
            dtype=o.dtype, requires_grad=True) for o in outs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n = len(inputs)
    idxs = _diff_inputs(inputs)

    def first_grads(*args):
        # grad mode on even while the numerical Jacobian runs under no_grad
        with enable_grad():
            ins, gos = args[:n], args[n:]
            os_ = _flat_outputs(func, ins)
            diff = [ins[i] for i in idxs]
            gs = grad(os_, diff, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_grads, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     check_backward_ad=check_rev_over_rev, fast_mode=fast_mode)

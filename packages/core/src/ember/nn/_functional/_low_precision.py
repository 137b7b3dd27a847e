"""bfloat16 inputs of the functional ops whose kernels compute in float32.

NOTE [ bfloat16 through float32 ]
NumPy has no bfloat16 arithmetic of its own (ml_dtypes gives the dtype; its ufuncs go
through float32 element by element), and ember's activation, softmax, dropout and
normalization kernels take float16/32/64. PyTorch's CPU kernels for those ops take
bfloat16 and compute in float32 ("opmath"), rounding the result to bfloat16; a bfloat16
ResNet or Transformer, or a float32 one under ``autocast("cpu", dtype=bfloat16)``, runs
through them. :func:`computes_in_float32` gives an op that behaviour: its bfloat16 tensor
arguments are cast to float32 (differentiable casts: gradients come back rounded to
bfloat16, as PyTorch's do), the op runs, and float32 results are rounded to bfloat16 unless
the call asked for a ``dtype``. Arguments the op updates in place (batch norm's running
statistics) are written back; ``inplace=True`` writes the result into the input. Other
dtypes take the op unchanged, at the cost of one dtype test.
"""

from __future__ import annotations

import functools
import inspect

from ember._C._core import TensorBase

__all__ = ["computes_in_float32"]


def _is_bf16(x) -> bool:
    # kind first: NumPy's dtype.name is a Python-level property, read on every op call
    if not isinstance(x, TensorBase):
        return False
    dt = x._data.dtype
    return dt.kind == "V" and dt.name == "bfloat16"


def computes_in_float32(fn=None, *, updated: tuple[str, ...] = ()):
    """Decorate a functional op so that bfloat16 tensor arguments run through float32
    (NOTE [ bfloat16 through float32 ]); ``updated`` names arguments the op modifies in
    place."""
    if fn is None:
        return functools.partial(computes_in_float32, updated=updated)
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def op(*args, **kwargs):
        if not (args and _is_bf16(args[0])) and not any(_is_bf16(v) for v in kwargs.values()):
            return fn(*args, **kwargs)
        return _through_float32(fn, signature, updated, args, kwargs)

    return op


def _through_float32(fn, signature, updated, args, kwargs):
    from ember import _dtype
    from ember.autograd.grad_mode import no_grad

    bound = signature.bind(*args, **kwargs)
    arguments = bound.arguments
    inplace_into = None
    if arguments.get("inplace"):
        arguments["inplace"] = False
        inplace_into = next(iter(arguments.values()))
    write_back = []
    for name, value in list(arguments.items()):
        if _is_bf16(value):
            arguments[name] = value.to(_dtype.float32)
            if name in updated:
                write_back.append((value, arguments[name]))
    out = fn(*bound.args, **bound.kwargs)
    with no_grad():
        for original, computed in write_back:
            original.copy_(computed)
    if arguments.get("dtype") is None:
        out = _round(out, _dtype.float32, _dtype.bfloat16)
    if inplace_into is not None:
        return inplace_into.copy_(out)
    return out


def _round(out, wide, narrow):
    if isinstance(out, TensorBase):
        return out.to(narrow) if out.dtype is wide else out
    if isinstance(out, tuple):
        return type(out)(_round(o, wide, narrow) for o in out)
    return out

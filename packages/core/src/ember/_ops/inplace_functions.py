"""The top-level spellings of in-place Tensor methods: ``ember.abs_(x)`` is ``x.abs_()``.

PyTorch exposes some in-place ops as functions of ``torch`` too. They are derived here, in
one place, from the Tensor methods (which the op registry installs), with the methods'
signatures (``self`` spelled ``input``), so that they cannot drift from the methods.
Importing this module needs the methods installed: ``ember/__init__.py`` imports it after
``_install_methods``.
"""

from __future__ import annotations

import inspect

from ember._ops._util import TensorBase

NAMES = (
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
    "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_",
    "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "erf_", "erfc_", "exp2_", "exp_",
    "expm1_", "fix_", "floor_", "frac_", "gcd_", "i0_", "lcm_", "ldexp_", "log10_", "log1p_",
    "log2_", "log_", "logit_", "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_",
    "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_",
    "tanh_", "trunc_", "xlogy_", "addmv_",
)

__all__ = list(NAMES)


def _signature(method):
    """The method's signature with its first parameter named ``input``."""
    try:
        sig = inspect.signature(method)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if params:
        params[0] = params[0].replace(name="input")
    return sig.replace(parameters=params)


def _make(name):
    from ember._tensor import Tensor

    method = getattr(Tensor, name)

    def fn(input, *args, **kwargs):
        if not isinstance(input, TensorBase):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        return getattr(input, name)(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = "ember"
    fn.__doc__ = (f"{name}(input, ...) -> Tensor\n\nIn-place version of "
                  f":func:`ember.{name[:-1]}`: ``input.{name}(...)``.")
    sig = _signature(method)
    if sig is not None:
        fn.__signature__ = sig
    return fn


for _name in NAMES:
    globals()[_name] = _make(_name)
del _name

"""``assert_close``: compare tensors (or numbers, arrays, nested sequences) with
dtype-dependent default tolerances, as ``torch.testing.assert_close``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ember._backend import backend_of
from ember._C._core import TensorBase

# (rtol, atol) by dtype, as in torch.testing
_TOLS = {
    np.dtype(np.float16): (1e-3, 1e-5),
    np.dtype(np.float32): (1.3e-6, 1e-5),
    np.dtype(np.float64): (1e-7, 1e-7),
    np.dtype(np.complex64): (1.3e-6, 1e-5),
    np.dtype(np.complex128): (1e-7, 1e-7),
}


def _to_array(x):
    if isinstance(x, TensorBase):
        return backend_of(x._data).to_numpy(x._data), True
    if hasattr(x, "detach") and hasattr(x, "numpy"):  # a torch tensor
        return x.detach().cpu().numpy(), True
    return np.asarray(x), False


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Raise AssertionError unless ``actual`` and ``expected`` are close.

    Closeness is ``|actual - expected| <= atol + rtol * |expected|``, elementwise; the
    default tolerances depend on the dtype. Shapes must match, and dtypes too unless
    ``check_dtype=False``. Mappings and sequences are compared item by item.
    """
    if (rtol is None) != (atol is None):
        raise ValueError("Both 'rtol' and 'atol' must be either specified or omitted")
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            raise AssertionError(f"keys differ: {sorted(actual)} vs {sorted(expected)}")
        for k in actual:
            assert_close(actual[k], expected[k], rtol=rtol, atol=atol, equal_nan=equal_nan,
                         check_dtype=check_dtype, msg=msg)
        return
    if isinstance(actual, Sequence) and isinstance(expected, Sequence) and \
            not isinstance(actual, str):
        if len(actual) != len(expected):
            raise AssertionError(f"sequence lengths differ: {len(actual)} vs {len(expected)}")
        for a, e in zip(actual, expected):
            assert_close(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan,
                         check_dtype=check_dtype, msg=msg)
        return
    a, a_is_tensor = _to_array(actual)
    e, e_is_tensor = _to_array(expected)
    if a.shape != e.shape:
        raise AssertionError(msg or f"The values for attribute 'shape' do not match: "
                             f"{a.shape} != {e.shape}.")
    if check_dtype and a_is_tensor and e_is_tensor and a.dtype != e.dtype:
        raise AssertionError(msg or f"The values for attribute 'dtype' do not match: "
                             f"{a.dtype} != {e.dtype}.")
    if rtol is None:
        rtol, atol = max((_TOLS.get(a.dtype, (0.0, 0.0)), _TOLS.get(e.dtype, (0.0, 0.0))))
    if a.dtype.kind in "biu" and e.dtype.kind in "biu" and rtol == 0 and atol == 0:
        ok = a == e
    else:
        a64 = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
        e64 = e.astype(np.complex128 if e.dtype.kind == "c" else np.float64)
        ok = np.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=equal_nan)
        ok |= (a64 == e64)  # infinities of the same sign
    if not np.all(ok):
        raise AssertionError(msg or _mismatch_message(a, e, ok, rtol, atol))


def _worst(diff, ok):
    """(value, index) of the greatest difference among the mismatches; NaN wins, as in
    PyTorch (its max propagates NaN)."""
    d = np.where(ok, 0, diff).reshape(-1)
    nan = np.flatnonzero(np.isnan(d))
    i = int(nan[0]) if nan.size else int(np.argmax(d))
    return float(d[i]), i


def _mismatch_message(a, e, ok, rtol, atol):
    bad = int(np.size(ok) - np.count_nonzero(ok))
    total = int(np.size(ok))
    with np.errstate(all="ignore"):  # inf - inf, x / 0: the message says nan / inf
        # in the two inputs' common dtype, as PyTorch (its float32 figures are float32's)
        dt = np.result_type(a.dtype, e.dtype)
        if dt.kind not in "fc":
            dt = np.dtype(np.float64)
        diff = np.abs(a.astype(dt) - e.astype(dt))
        rel = diff / np.abs(e.astype(dt))
    abs_v, abs_i = _worst(diff, ok)
    rel_v, rel_i = _worst(rel, ok)

    def where(i):
        return tuple(int(k) for k in np.unravel_index(i, a.shape)) if a.shape else ()

    return (f"Tensor-likes are not close!\n\nMismatched elements: {bad} / {total} "
            f"({100.0 * bad / total:.1f}%)\n"
            f"Greatest absolute difference: {abs_v} at index {where(abs_i)} "
            f"(up to {atol} allowed)\n"
            f"Greatest relative difference: {rel_v} at index {where(rel_i)} "
            f"(up to {rtol} allowed)")

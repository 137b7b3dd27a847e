"""The repr of a tensor, in PyTorch's format, and the print options that shape it.

The layout rules are PyTorch's (``torch/_tensor_str.py``): one formatter per tensor
(per real and imaginary part for complex) decides between integer-valued, fixed and
scientific notation and the column width; rows wrap at ``linewidth``; tensors above
``threshold`` elements are summarized to ``edgeitems`` per end of each dim with
``...``. The work is done on a host NumPy copy of the data (a summarized one for
large tensors), so printing never records autograd history.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from typing import Any

import numpy as np

from ember import _dtype
from ember._backend import backend_of

__all__ = ["set_printoptions", "get_printoptions", "printoptions"]


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    r"""Set options for printing tensors (as in NumPy).

    Args:
        precision: number of digits of precision for floating point output (default 4).
        threshold: total number of elements above which the repr is summarized
            (default 1000).
        edgeitems: number of items at the beginning and end of each dimension in a
            summary (default 3).
        linewidth: characters per line before rows are wrapped (default 80).
        profile: ``"default"``, ``"short"`` or ``"full"``: sane defaults, which the
            other arguments override.
        sci_mode: ``True`` or ``False`` forces scientific notation on or off; ``None``
            (the default) lets the formatter choose.

    Example::

        >>> ember.set_printoptions(precision=2)
        >>> ember.tensor([1.12345])
        tensor([1.12])
        >>> ember.set_printoptions(profile="default")
    """
    if profile is not None:
        if profile == "default":
            PRINT_OPTS.precision, PRINT_OPTS.threshold = 4, 1000
            PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 3, 80
        elif profile == "short":
            PRINT_OPTS.precision, PRINT_OPTS.threshold = 2, 1000
            PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 2, 80
        elif profile == "full":
            PRINT_OPTS.precision, PRINT_OPTS.threshold = 4, math.inf
            PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 3, 80
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    # As in PyTorch, every call sets sci_mode (None restores the automatic choice).
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current print options, as keyword arguments for :func:`set_printoptions`."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Change the print options inside a ``with`` block (arguments of set_printoptions)."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """Chooses notation and width for all the values of one (real) array."""

    def __init__(self, arr: np.ndarray):
        self.floating_dtype = arr.dtype.kind == "f" or arr.dtype.kind == "V" and \
            _dtype.from_numpy(arr.dtype).is_floating_point  # bfloat16, float8 (ml_dtypes)
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = arr.reshape(-1)
        if not self.floating_dtype:
            for value in flat.tolist():
                self.max_width = max(self.max_width, len(f"{value}"))
            return
        nonzero_finite = flat[np.isfinite(flat) & (flat != 0)]
        if nonzero_finite.size == 0:
            return
        abs_vals = np.abs(nonzero_finite.astype(np.float64))
        vmin, vmax = abs_vals.min(), abs_vals.max()
        self.int_mode = bool(np.all(np.ceil(nonzero_finite) == nonzero_finite))
        if PRINT_OPTS.sci_mode is None:
            with np.errstate(over="ignore"):   # max / min may overflow to inf: sci mode
                ratio = vmax / vmin
            self.sci_mode = bool(ratio > 1000.0 or vmax > 1.0e8 or vmin < 1.0e-4)
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        values = nonzero_finite.tolist()
        p = PRINT_OPTS.precision
        if self.sci_mode:
            width = max(len(f"{v:.{p}e}") for v in values)
        elif self.int_mode:
            # integer-valued floats print as "1." : one more character
            width = max(len(f"{v:.0f}") for v in values) + 1
        else:
            width = max(len(f"{v:.{p}f}") for v in values)
        self.max_width = max(self.max_width, width)

    def width(self) -> int:
        return self.max_width

    def format(self, value) -> str:
        if self.floating_dtype:
            p = PRINT_OPTS.precision
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{p}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _complex_str(value, formatter1, formatter2) -> str:
    real_str = formatter1.format(value.real)
    imag_str = (formatter2.format(value.imag) + "j").lstrip()
    # handles negative numbers, +0.0 and -0.0
    if imag_str[0] in "+-":
        return real_str + imag_str
    return real_str + "+" + imag_str


def _scalar_str(arr, formatter1, formatter2=None) -> str:
    value = arr.item()
    if formatter2 is not None:
        return _complex_str(complex(value), formatter1, formatter2)
    return formatter1.format(value)


def _vector_str(arr, indent, summarized, formatter1, formatter2=None) -> str:
    # the length includes the comma and space between elements
    element_length = formatter1.width() + 2
    if formatter2 is not None:
        element_length += formatter2.width() + 1
    elements_per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))

    def fmt(values):
        if formatter2 is not None:
            return [_complex_str(v, formatter1, formatter2) for v in values]
        return [formatter1.format(v) for v in values]

    edge = PRINT_OPTS.edgeitems
    if summarized and not edge:
        data = ["..."]
    elif summarized:
        data = fmt(arr[:edge].tolist()) + [" ..."] + fmt(arr[edge:].tolist())
    else:
        data = fmt(arr.tolist())
    lines = [", ".join(data[i:i + elements_per_line])
             for i in range(0, len(data), elements_per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(arr, indent, summarized_dims, formatter1,
                               formatter2=None) -> str:
    """``summarized_dims[d]``: dim d is cut to its edge items (``arr`` then holds only
    those, ``edgeitems`` from each end)."""
    dim = arr.ndim
    if dim == 0:
        return _scalar_str(arr, formatter1, formatter2)
    if dim == 1:
        return _vector_str(arr, indent, summarized_dims[0], formatter1, formatter2)
    edge = PRINT_OPTS.edgeitems
    n = arr.shape[0]
    if summarized_dims[0]:
        rows = list(range(edge)) + [None] + list(range(n - edge, n))
    else:
        rows = list(range(n))
    slices = ["..." if i is None else
              _tensor_str_with_formatter(arr[i], indent + 1, summarized_dims[1:], formatter1,
                                         formatter2)
              for i in rows]
    return "[" + ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices) + "]"


def _host_data(data):
    """(NumPy array to print, per-dim flags of summarized dims).

    Above ``threshold`` elements only the edge items of each long dim are printed (and
    looked at by the formatters), so only those are gathered, on the tensor's own
    device, before the copy to the host.
    """
    backend = backend_of(data)
    if data.size <= PRINT_OPTS.threshold:
        return backend.to_numpy(data), (False,) * data.ndim
    edge = PRINT_OPTS.edgeitems
    summarized = tuple(n > 2 * edge for n in data.shape)
    index = [list(range(edge)) + list(range(n - edge, n)) if cut else list(range(n))
             for n, cut in zip(data.shape, summarized, strict=True)]
    return backend.to_numpy(data[backend.xp.ix_(*index)]), summarized


def _tensor_str(data, indent: int) -> str:
    if data.size == 0:
        return "[]"
    arr, summarized = _host_data(data)
    if arr.dtype.kind == "c":
        return _tensor_str_with_formatter(arr, indent, summarized, _Formatter(arr.real),
                                          _Formatter(arr.imag))
    return _tensor_str_with_formatter(arr, indent, summarized, _Formatter(arr))


def _add_suffixes(tensor_str, suffixes, indent, force_newline=False) -> str:
    parts = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if force_newline or last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
            force_newline = False
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _is_plain(cls) -> bool:
    return (cls.__name__ in ("Tensor", "Parameter")
            and cls.__module__.split(".", 1)[0] == "ember")


def tensor_repr(t, *, tensor_contents=None) -> str:
    """``repr(t)`` in PyTorch's format, e.g. ``tensor([1., 2.], requires_grad=True)``."""
    prefix = "tensor(" if _is_plain(type(t)) else f"{type(t).__name__}("
    indent = len(prefix)
    arr = t._data
    suffixes = []
    if t.is_cuda:
        suffixes.append(f"device='{t.device}'")

    dtype = _dtype.from_numpy(arr.dtype)
    default = _dtype.get_default_dtype()
    default_complex = _dtype.complex128 if default == _dtype.float64 else _dtype.complex64
    has_default_dtype = dtype in (default, default_complex, _dtype.int64, _dtype.bool)
    if arr.size == 0:
        # print the shape unless it is (0,), as NumPy does
        if arr.ndim != 1:
            suffixes.append(f"size={tuple(arr.shape)}")
        # an empty tensor has no values to tell its dtype: show it unless default
        if dtype != default:
            suffixes.append(f"dtype={dtype}")
        tensor_str = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(arr.shape)}")
        if not has_default_dtype:
            suffixes.append(f"dtype={dtype}")
        tensor_str = _tensor_str(arr, indent)
    if tensor_contents is not None:
        tensor_str = tensor_contents

    if t._grad_fn is not None:
        suffixes.append(f"grad_fn=<{t._grad_fn.name()}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")

    out = _add_suffixes(prefix + tensor_str, suffixes, indent)
    if not _is_plain(type(t)) and any(c.__name__ == "Parameter" for c in type(t).__mro__):
        out = f"Parameter({out})"
    return out

"""ember.fft: discrete Fourier transforms on pocketfft (SciPy's where installed, else
NumPy's; NOTE [ CPU FFTs ]) and cuFFT through CuPy, one call per op over all batch dims,
differentiable.

NOTE [ FFT gradients ]
Three ops do the work: complex-to-complex (``C2C``), real-to-complex one-sided
(``R2C``) and its inverse, complex-to-real (``C2R``); the Hermitian transforms
(hfft, ihfft and their n-d forms) are ``C2R``/``R2C`` of the conjugate with the
normalization swapped, as in NumPy. The adjoint of a transform with normalization
``norm`` is the transform in the other direction with the dual normalization
(backward <-> forward, ortho <-> ortho). ``R2C``'s adjoint puts the one-sided
gradient into a full spectrum of zeros and takes the real part; ``C2R``'s is the
one-sided transform of the gradient with the entries that stand for two
(conjugate) bins doubled, as PyTorch defines it. Sizes ``n``/``s`` crop or zero-pad
the input before the transform; the gradient is cropped or padded back.
"""

from __future__ import annotations

import numpy as np

from ember import _dtype
from ember._backend import backend_of, register_kernel
from ember._C._core import Node
from ember._ops._util import TensorBase, apply, type_name, with_out, wrap, wrap_dim, xp_of

__all__ = [
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
    "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq",
    "rfftfreq", "fftshift", "ifftshift",
]

_NORMS = ("backward", "ortho", "forward")
_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _norm(fn, norm):
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise ValueError(f"Invalid normalization mode: {norm}")
    return norm


# The transforms are kernels by name (NOTE [ Kernels by name ]): the array module's here, for
# every device; the CPU backend registers SciPy's faster pocketfft (NOTE [ CPU FFTs ] in
# ember._backend._cpu_kernels).
def _array_module_transform(name):
    def run(x, s, axes, norm):
        return getattr(xp_of(x).fft, name)(x, s=s, axes=axes, norm=norm)

    run.__name__ = name
    return run


for _name in ("fftn", "ifftn", "rfftn", "irfftn"):
    register_kernel(_name, "any", _array_module_transform(_name))


def _transform(name, x, sizes, dims, norm):
    return backend_of(x).kernel(name, x)(x, sizes, dims, norm)


def _fit(xp, a, dims, sizes):
    """``a`` cropped or zero-padded along ``dims`` to ``sizes``."""
    index = [slice(None)] * a.ndim
    pad = [(0, 0)] * a.ndim
    changed = False
    for d, n in zip(dims, sizes, strict=True):
        if a.shape[d] > n:
            index[d] = slice(0, n)
            changed = True
        elif a.shape[d] < n:
            pad[d] = (0, n - a.shape[d])
            changed = True
    if not changed:
        return a
    a = a[tuple(index)]
    return xp.pad(a, pad) if any(p[1] for p in pad) else a


class C2C(Node):
    def forward(self, x, dims, sizes, forward, norm):
        self.args = (dims, forward, norm)
        self.in_sizes = tuple(x.shape[d] for d in dims)
        self.real_input = x.dtype.kind != "c"
        return _transform("fftn" if forward else "ifftn", x, sizes, dims, norm).astype(
            _complex_of(x.dtype), copy=False)

    def backward(self, g):
        dims, forward, norm = self.args
        gx = apply(C2C, g, dims, tuple(g.shape[d] for d in dims), not forward, _DUAL[norm])
        gx = apply(Fit, gx, dims, self.in_sizes)
        return gx.real if self.real_input else gx


class R2C(Node):
    def forward(self, x, dims, sizes, norm):
        self.args = (dims, sizes, norm)
        self.in_sizes = tuple(x.shape[d] for d in dims)
        return _transform("rfftn", x, sizes, dims, norm).astype(_complex_of(x.dtype),
                                                               copy=False)

    def backward(self, g):
        dims, sizes, norm = self.args
        full = apply(Fit, g, dims, sizes)  # zeros for the bins left out
        gx = apply(C2C, full, dims, sizes, False, _DUAL[norm]).real
        return apply(Fit, gx, dims, self.in_sizes)


class C2R(Node):
    def forward(self, X, dims, sizes, norm):
        self.args = (dims, sizes, norm)
        self.in_sizes = tuple(X.shape[d] for d in dims)
        out = _transform("irfftn", X, sizes, dims, norm)
        return out.astype(np.finfo(X.dtype).dtype, copy=False)

    def backward(self, g):
        dims, sizes, norm = self.args
        gX = apply(R2C, g, dims, sizes, _DUAL[norm])
        n = sizes[-1]
        double = n - (n // 2 + 1)
        if double > 0:  # the bins that stand for themselves and their conjugates
            w = np.ones(n // 2 + 1)
            w[1:1 + double] = 2
            shape = [1] * gX.ndim
            shape[dims[-1]] = n // 2 + 1
            xp = xp_of(gX._data)
            gX = gX * wrap(xp.asarray(w.reshape(shape), dtype=gX._data.real.dtype))
        return apply(Fit, gX, dims, self.in_sizes)


class Fit(Node):
    """Crop or zero-pad along dims (the size change before a transform)."""

    def forward(self, x, dims, sizes):
        self.args = (dims, tuple(x.shape[d] for d in dims))
        return _fit(xp_of(x), x, dims, sizes)

    def backward(self, g):
        return apply(Fit, g, *self.args)


def _complex_of(dt):
    return np.result_type(dt, np.complex64)


# ---------------------------------------------------------------------------
# argument handling

def _input(fn, x, real=False):
    if not isinstance(x, TensorBase):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    dt = x._data.dtype
    if real and dt.kind == "c":
        raise RuntimeError(f"{fn} expects a real input tensor, but got {type_name(dt)}")
    if dt == np.float16:
        raise RuntimeError(f"Unsupported dtype {type_name(dt)}")
    if dt.kind in "biu":
        x = x.to(_dtype.get_default_dtype())
    return x


def _dims_sizes(fn, x, s, dim, default_dims=None, c2r=False):
    """PyTorch's rules for (s, dim): both may be None; -1 in s keeps a size."""
    nd = x._data.ndim
    if isinstance(dim, (int, np.integer)):
        dim = (int(dim),)
    if s is not None:
        if isinstance(s, (int, np.integer)):
            s = (int(s),)
        s = [int(v) for v in s]
    if dim is None:
        if s is not None:
            dim = list(range(nd - len(s), nd))
            if len(s) > nd:
                raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                                   f"{nd} dimensions.")
        else:
            dim = list(range(nd)) if default_dims is None else list(default_dims)
    dims = [wrap_dim(d, nd) for d in dim]
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    if s is not None and len(s) != len(dims):
        raise RuntimeError("When given, dim and shape arguments must have the same length")
    shape = x._data.shape
    sizes = []
    for i, d in enumerate(dims):
        n = s[i] if s is not None else -1
        if n == -1:
            n = 2 * (shape[d] - 1) if (c2r and i == len(dims) - 1) else shape[d]
        if n <= 0:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
        sizes.append(n)
    return tuple(dims), tuple(sizes)


def _one_dim(n, dim):
    return (None if n is None else (n,)), (dim,)


def _c2c(fn, input, s, dim, norm, forward, out, default_dims=None):
    x = _input(fn, input)
    dims, sizes = _dims_sizes(fn, x, s, dim, default_dims)
    return with_out(apply(C2C, x, dims, sizes, forward, _norm(fn, norm)), out)


def _r2c(fn, input, s, dim, norm, out, default_dims=None, conj=False):
    x = _input(fn, input, real=True)
    dims, sizes = _dims_sizes(fn, x, s, dim, default_dims)
    y = apply(R2C, x, dims, sizes, _norm(fn, norm) if not conj else _DUAL[_norm(fn, norm)])
    return with_out(y.conj() if conj else y, out)


def _c2r(fn, input, s, dim, norm, out, default_dims=None, conj=False):
    x = _input(fn, input)
    if x._data.dtype.kind != "c":
        x = x.to(_dtype.from_numpy(x._data.dtype).to_complex())
    dims, sizes = _dims_sizes(fn, x, s, dim, default_dims, c2r=True)
    nrm = _norm(fn, norm)
    if conj:
        x, nrm = x.conj(), _DUAL[nrm]
    return with_out(apply(C2R, x, dims, sizes, nrm), out)


_ARGS_1D = """
    Args:
        input (Tensor): the input tensor.
        n (int, optional): the signal length along ``dim``: the input is zero-padded
            or trimmed to it (for the inverse real transforms: the output length,
            ``2 * (input.size(dim) - 1)`` by default).
        dim (int, optional): the dimension to transform. Default: ``-1``.
        norm (str, optional): ``"backward"`` (default: no scaling forward, ``1/n``
            inverse), ``"forward"`` (the reverse) or ``"ortho"`` (``1/sqrt(n)`` both
            ways).
"""

_ARGS_ND = """
    Args:
        input (Tensor): the input tensor.
        s (Tuple[int], optional): the signal size in each transformed dim (-1: keep).
        dim (Tuple[int], optional): the dims to transform (the last ``len(s)`` dims
            when only ``s`` is given).
        norm (str, optional): ``"backward"``, ``"forward"`` or ``"ortho"``, as in 1-d.
"""


def _doc(fn, summary, nd):
    fn.__doc__ = f"{summary}\n{_ARGS_ND if nd else _ARGS_1D}"
    return fn


# ---------------------------------------------------------------------------
# the transforms

def fft(input, n=None, dim=-1, norm=None, *, out=None):
    s, d = _one_dim(n, dim)
    return _c2c("fft_fft", input, s, d, norm, True, out)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    s, d = _one_dim(n, dim)
    return _c2c("fft_ifft", input, s, d, norm, False, out)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _c2c("fft_fft2", input, s, dim, norm, True, out)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _c2c("fft_ifft2", input, s, dim, norm, False, out)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    return _c2c("fft_fftn", input, s, dim, norm, True, out)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    return _c2c("fft_ifftn", input, s, dim, norm, False, out)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    s, d = _one_dim(n, dim)
    return _r2c("rfft", input, s, d, norm, out)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    s, d = _one_dim(n, dim)
    return _c2r("irfft", input, s, d, norm, out)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _r2c("rfftn", input, s, dim, norm, out)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _c2r("irfftn", input, s, dim, norm, out)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _r2c("rfftn", input, s, dim, norm, out)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _c2r("irfftn", input, s, dim, norm, out)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    s, d = _one_dim(n, dim)
    return _c2r("hfft", input, s, d, norm, out, conj=True)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    s, d = _one_dim(n, dim)
    return _r2c("ihfft", input, s, d, norm, out, conj=True)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _c2r("hfftn", input, s, dim, norm, out, conj=True)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return _r2c("ihfftn", input, s, dim, norm, out, conj=True)


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _c2r("hfftn", input, s, dim, norm, out, conj=True)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    return _r2c("ihfftn", input, s, dim, norm, out, conj=True)


for _f, _summary, _nd in [
    (fft, "The 1-d discrete Fourier transform of ``input`` (complex output).", False),
    (ifft, "The 1-d inverse discrete Fourier transform of ``input``.", False),
    (fft2, "The 2-d discrete Fourier transform (over the last two dims by default).", True),
    (ifft2, "The 2-d inverse discrete Fourier transform.", True),
    (fftn, "The n-d discrete Fourier transform (over all dims by default).", True),
    (ifftn, "The n-d inverse discrete Fourier transform.", True),
    (rfft, "The 1-d Fourier transform of a real ``input``: the ``n // 2 + 1`` "
           "non-negative frequencies.", False),
    (irfft, "The inverse of :func:`rfft`: a real signal from its one-sided spectrum (the "
            "imaginary parts of the zero and Nyquist bins are ignored).", False),
    (rfft2, "The 2-d Fourier transform of a real input, one-sided in the last dim.", True),
    (irfft2, "The inverse of :func:`rfft2` (real output).", True),
    (rfftn, "The n-d Fourier transform of a real input, one-sided in the last dim.", True),
    (irfftn, "The inverse of :func:`rfftn` (real output).", True),
    (hfft, "The 1-d transform of a Hermitian-symmetric signal given by its first half "
           "(real output).", False),
    (ihfft, "The inverse of :func:`hfft`: the first half of the inverse transform of a "
            "real signal.", False),
    (hfft2, "The 2-d :func:`hfftn` (real output).", True),
    (ihfft2, "The 2-d :func:`ihfftn`.", True),
    (hfftn, "The n-d transform of a signal Hermitian-symmetric in the last transformed "
            "dim, given by its first half (real output).", True),
    (ihfftn, "The inverse of :func:`hfftn` for a real input.", True),
]:
    _doc(_f, _summary, _nd)


# ---------------------------------------------------------------------------
# frequencies and shifts

def _freq_tensor(values, dtype, device, requires_grad):
    from ember._ops.creation import tensor

    return tensor(values, dtype=dtype or _dtype.get_default_dtype(), device=device,
                  requires_grad=requires_grad)


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False)

    The sample frequencies of a length-``n`` transform with sample spacing ``d``:
    ``[0, 1, ..., ceil(n/2) - 1, -floor(n/2), ..., -1] / (d * n)``.
    """
    if n < 0:
        raise RuntimeError(f"fftfreq: n must be non-negative, got {n}")
    vals = np.fft.fftfreq(int(n), d) if n else np.zeros(0)  # host-side by design: a table
    return with_out(_freq_tensor(vals, dtype, device, requires_grad), out)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    """rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False)

    The sample frequencies of :func:`rfft` of a length-``n`` signal:
    ``[0, 1, ..., n // 2] / (d * n)``.
    """
    if n < 0:
        raise RuntimeError(f"rfftfreq: n must be non-negative, got {n}")
    vals = np.fft.rfftfreq(int(n), d) if n else np.zeros(0)  # host-side by design: a table
    return with_out(_freq_tensor(vals, dtype, device, requires_grad), out)


def _shift(input, dim, sign):
    from ember._ops.shape import roll

    nd = input._data.ndim
    if dim is None:
        dims = list(range(nd))
    elif isinstance(dim, (int, np.integer)):
        dims = [wrap_dim(dim, nd)]
    else:
        dims = [wrap_dim(d, nd) for d in dim]
    if not dims:
        return input.clone()
    shifts = [(input._data.shape[d] // 2) * sign if sign > 0 else
              -(input._data.shape[d] // 2) for d in dims]
    return roll(input, shifts, dims)


def fftshift(input, dim=None):
    """fftshift(input, dim=None) -> Tensor

    ``input`` with the zero-frequency bin moved to the centre of ``dim`` (all dims by
    default): a roll by ``n // 2``.
    """
    return _shift(input, dim, 1)


def ifftshift(input, dim=None):
    """ifftshift(input, dim=None) -> Tensor

    The inverse of :func:`fftshift`: a roll by ``-(n // 2)``.
    """
    return _shift(input, dim, -1)


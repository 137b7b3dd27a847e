"""The compiled CPU kernels, registered by name for the CPU backend (NOTE [ Kernels by name ]).

Each registration says which arrays the compiled kernel takes (float32/float64, in some
cases C-contiguous); every other array goes to the kernel's array-module implementation,
registered for ``"any"`` device beside the op that uses it (``ember.nn._functional._kernels``,
``_norm_kernels``, the optimizers). The extension modules are imported on a kernel's first
call, so ``import ember`` does not load the ones a program never uses.
"""

from __future__ import annotations

import importlib
import threading

import numpy as np

from ember._backend._base import register_kernel

__all__ = ["FLOATS", "workspace"]

FLOATS = (np.float32, np.float64)


def _lazy(module: str, attr: str):
    """``module.attr`` resolved on the first call (the extension module loads then)."""
    fn = None

    def call(*args):
        nonlocal fn
        if fn is None:
            fn = getattr(importlib.import_module(f"ember._C.{module}"), attr)
        return fn(*args)

    call.__name__ = attr
    call.__qualname__ = f"{module}.{attr}"
    return call


def _cpu(name, fn, *, contiguous=False, dtypes=FLOATS):
    register_kernel(name, "cpu", fn, dtypes=dtypes, contiguous=contiguous)


# -- the workspace ------------------------------------------------------------------------------

_WORKSPACE_MAX = 1 << 30  # bytes; larger scratch arrays are allocated per call


_local = threading.local()


def workspace(shape, dtype, slot=0):
    """A scratch NumPy array of ``shape``, reused by later calls on this thread (the CPU
    backend's :meth:`~ember._backend.Backend.workspace`).

    Its contents are garbage; it must not outlive the caller's use (the next call with the
    same ``slot`` on this thread overwrites it). Different slots are different buffers.
    """
    dtype = np.dtype(dtype)
    n = 1
    for s in shape:
        n *= s
    nbytes = n * dtype.itemsize
    if nbytes > _WORKSPACE_MAX:
        return np.empty(shape, dtype)
    bufs = getattr(_local, "bufs", None)
    if bufs is None:
        bufs = _local.bufs = {}
    buf = bufs.get(slot)
    if buf is None or buf.nbytes < nbytes:
        bufs[slot] = None  # free the old buffer first
        buf = np.empty(max(nbytes, 1 << 16), np.uint8)
        bufs[slot] = buf
    return buf[:nbytes].view(dtype).reshape(shape)


# -- elementwise (ember._C._core, loaded with ember) ------------------------------------------

def _sigmoid_block(x, out):
    """``1 / (1 + exp(-x))`` of ``x`` into ``out`` in four in-place passes (the same as
    ``sigmoid_array``'s for large arrays, so the threaded blocks give its bits)."""
    np.negative(x, out=out)
    np.exp(out, out=out)
    np.add(out, 1, out=out)
    np.true_divide(1, out, out=out)


def sigmoid(x):
    """The CPU kernel "sigmoid": one compiled pass for small arrays (``sigmoid_array``),
    NumPy's vectorized passes for large ones, in blocks on several threads where the array
    is large enough (NOTE [ Threads for large ops ])."""
    from ember._backend import bulk_kernel
    from ember._C import _core

    if x.size > _core.SIGMOID_LOOP_MAX and x.dtype in FLOATS:
        blocks = bulk_kernel("map_blocks", x)
        if blocks is not None:
            with np.errstate(all="ignore"):
                return blocks(_sigmoid_block, x)
    return _core.sigmoid_array(x)


_cpu("sigmoid", sigmoid, dtypes=(np.float16,) + FLOATS)


# -- convolution and pooling (ember._C._conv) -----------------------------------------------
# Signatures are those of ember.nn._functional._kernels, which documents each kernel.

_cpu("im2col", _lazy("_conv", "im2col"))


_cpu("col2im", _lazy("_conv", "col2im"))  # selected on x, its second argument
_max_pool_c = _lazy("_conv", "max_pool")
_max_pool_regular_c = _lazy("_conv", "max_pool_regular")
_avg_pool_c = _lazy("_conv", "avg_pool")
_avg_pool_backward_c = _lazy("_conv", "avg_pool_backward")
_scatter_add_planes_c = _lazy("_conv", "scatter_add_planes")
_winograd = {name: _lazy("_conv", name) for name in (
    "winograd_input", "winograd_input_adjoint", "winograd_output", "winograd_output_adjoint")}


@register_kernel("max_pool", "cpu", dtypes=FLOATS)
def _max_pool(x, windows, steps):
    return _max_pool_c(np.ascontiguousarray(x), windows, steps)


@register_kernel("max_pool_regular", "cpu", dtypes=FLOATS)
def _max_pool_regular(x, kernel, stride, padding, dilation, out_size):
    return _max_pool_regular_c(np.ascontiguousarray(x), tuple(kernel), tuple(stride),
                               tuple(padding), tuple(dilation), tuple(out_size))


@register_kernel("avg_pool", "cpu", dtypes=FLOATS)
def _avg_pool(x, windows, divisors, divisor_override=0):
    return _avg_pool_c(np.ascontiguousarray(x), windows, divisors, divisor_override)


@register_kernel("avg_pool_backward", "cpu", dtypes=FLOATS)
def _avg_pool_backward(g, in_size, windows, divisors, divisor_override=0):
    return _avg_pool_backward_c(np.ascontiguousarray(g), tuple(in_size), windows, divisors,
                                divisor_override)


@register_kernel("scatter_add_planes", "cpu", dtypes=FLOATS)
def _scatter_add_planes(g2, i2, gx):
    return _scatter_add_planes_c(g2, i2, gx)


@register_kernel("winograd_input", "cpu", dtypes=FLOATS)
def _winograd_input(x, v, padding, tiles):
    return _winograd["winograd_input"](x, v, padding[0], padding[1], tiles[0], tiles[1])


@register_kernel("winograd_input_adjoint", "cpu", dtypes=FLOATS)
def _winograd_input_adjoint(v, x, padding, tiles):
    return _winograd["winograd_input_adjoint"](v, x, padding[0], padding[1], tiles[0],
                                               tiles[1])


@register_kernel("winograd_output", "cpu", dtypes=FLOATS)
def _winograd_output(m, y):
    return _winograd["winograd_output"](m, y)


@register_kernel("winograd_output_adjoint", "cpu", dtypes=FLOATS)
def _winograd_output_adjoint(g, m):
    return _winograd["winograd_output_adjoint"](g, m)


# The Winograd convolution built on these transforms, and the CPU's convolution tuning.
def _winograd_conv(name):
    def call(*args):
        from ember._backend import _cpu_conv

        return getattr(_cpu_conv, name)(*args)

    call.__name__ = name
    return call


_cpu("conv2d_winograd_forward", _winograd_conv("winograd_forward"))
_cpu("conv2d_winograd_backward", _winograd_conv("winograd_backward"))
# ranges of a convolution's batch on ember's threads (NOTE [ Convolutions on several threads ])
_cpu("batch_ranges", _winograd_conv("batch_ranges"), dtypes=None)
_cpu("run_parts", _winograd_conv("run_parts"), dtypes=None)


# -- cross-entropy and the norms (ember._C._loss_norm) --------------------------------------

for _name in ("cross_entropy_forward", "cross_entropy_backward", "batch_norm_forward",
              "batch_norm_backward", "layer_norm_forward", "layer_norm_backward",
              "group_norm_forward", "group_norm_backward"):
    _cpu(_name, _lazy("_loss_norm", _name))

# class indices: 2-d C-contiguous int64 (N, S) targets
_cpu("check_targets", _lazy("_loss_norm", "check_targets"), dtypes=(np.int64,),
     contiguous=True)


# -- pointwise activations (ember._C._activation) -------------------------------------------

_gelu_forward_c = _lazy("_activation", "gelu_forward")


@register_kernel("gelu_forward", "cpu", dtypes=FLOATS, contiguous=True)
def _gelu_forward(x):
    """One compiled pass, in blocks on several threads where ``x`` is large (NOTE [ Threads
    for large ops ]; each element is computed alone, so the bits are the single call's)."""
    from ember._backend import bulk_kernel

    blocks = bulk_kernel("map_blocks", x)
    if blocks is not None:
        return blocks(_gelu_forward_c, x)
    return _gelu_forward_c(x)


_gelu_backward_c = _lazy("_activation", "gelu_backward")


@register_kernel("gelu_backward", "cpu", dtypes=FLOATS, contiguous=True)  # selected on x
def _gelu_backward(g, x):
    if type(g) is not np.ndarray or g.dtype != x.dtype or not g.flags.c_contiguous:
        g = np.ascontiguousarray(g, dtype=x.dtype)  # e.g. the expanded gradient of a sum
    return _gelu_backward_c(g, x)


# -- fused optimizer updates (ember._C._optim) ----------------------------------------------
# NOTE [ Fused optimizer updates ] in ember.optim._fused.

_OPTIM_DTYPES = (np.float32, np.float64, np.complex64, np.complex128)
_REAL = {np.dtype(np.float32): np.dtype(np.float32), np.dtype(np.float64): np.dtype(np.float64),
         np.dtype(np.complex64): np.dtype(np.float32),
         np.dtype(np.complex128): np.dtype(np.float64)}


def _flat(array, real_dtype):
    flat = array.reshape(-1)
    return flat if flat.dtype == real_dtype else flat.view(real_dtype)


def _kernel_arrays(p, g, buffers):
    """Flat real views of the arrays for a compiled update, or None if it cannot take them
    as they are (then the array-module update runs)."""
    real = _REAL[p.dtype]
    if type(g) is not np.ndarray or g.dtype != p.dtype or not p.flags.writeable:
        return None
    for b in buffers:
        if b is not None and (type(b) is not np.ndarray or b.dtype != p.dtype
                              or not b.flags.c_contiguous or not b.flags.writeable):
            return None
    if not g.flags.c_contiguous:
        g = np.ascontiguousarray(g)  # read only: a copy is enough
    return (_flat(p, real), _flat(g, real),
            *[None if b is None else _flat(b, real) for b in buffers])


def _fused_update(name):
    kernel = _lazy("_optim", name)

    def run(p, g, buffers, *scalars):
        flat = _kernel_arrays(p, g, buffers)
        if flat is None:
            from ember._backend import cpu

            return cpu.kernel(f"{name}_step", p, generic=True)(p, g, buffers, *scalars)
        kernel(*flat, *scalars)

    run.__name__ = f"{name}_step"
    return run


for _name in ("sgd", "adam", "adamax", "nadam", "radam", "rmsprop", "adagrad", "adadelta",
              "rprop", "asgd"):
    register_kernel(f"{_name}_step", "cpu", _fused_update(_name), dtypes=_OPTIM_DTYPES,
                    contiguous=True)


# -- discrete Fourier transforms (SciPy's pocketfft when installed) -------------------------
# NOTE [ CPU FFTs ]
# NumPy 2's np.fft and scipy.fft are both pocketfft, but NumPy's runs a batch of 1-d
# transforms one row at a time while SciPy's vectorizes across rows (SIMD) and spreads the
# batch over worker threads: a batched rfft of 626 frames of 1024 points takes ~0.9 ms in
# SciPy against ~8-20 ms in NumPy here (PyTorch: ~1 ms), and a single 441,000-point rfft
# ~5 ms against ~48 ms. SciPy is not a dependency of ember: where it is missing, the
# array-module implementations (ember._ops._fft) run instead. The worker count follows
# ember.set_num_threads (all the process's CPUs by default, as PyTorch's intra-op pool).

_FFT_DTYPES = (np.float32, np.float64, np.complex64, np.complex128)
_scipy_fft = []  # [module or None], resolved on the first transform


def _fft_kernel(name):
    def run(x, s, axes, norm):
        if not _scipy_fft:
            try:
                import scipy.fft as module
            except ImportError:  # pragma: no cover - SciPy is in the test environments
                module = None
            _scipy_fft.append(module)
        module = _scipy_fft[0]
        if module is None:
            from ember._backend import cpu

            return cpu.kernel(name, x, generic=True)(x, s, axes, norm)
        from ember._threads import intra_op_threads

        workers = intra_op_threads()
        if len(axes) == 1:  # the 1-d transform skips the n-d one's shape handling
            return getattr(module, one_d)(x, n=None if s is None else s[0], axis=axes[0],
                                          norm=norm, workers=workers)
        return getattr(module, name)(x, s=s, axes=axes, norm=norm, workers=workers)

    one_d = name[:-1]  # fftn -> fft, rfftn -> rfft, ...
    run.__name__ = name
    return run


for _name in ("fftn", "ifftn", "rfftn", "irfftn"):
    register_kernel(_name, "cpu", _fft_kernel(_name), dtypes=_FFT_DTYPES)

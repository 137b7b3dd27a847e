"""What every backend provides: one device, its array module, generator, copies, kernels.

NOTE [ Backends are devices ]
A :class:`Backend` stands for one device: ``cpu``, or ``cuda:N`` for each GPU. It holds the
array module that keeps that device's data (``xp``: NumPy or CuPy), the device index, the
device's default random generator, the copy of an array from any other device onto this
one (device to device where the library can), the device's memory statistics and the
kernels registered for its device type. Op code asks a tensor's backend for these and
never looks at array types itself.

NOTE [ Kernels by name ]
A kernel is an array-level function registered under a name for a device type
(``"cpu"``, ``"cuda"``) or for every device (``"any"``: code written against ``xp``).
Each registration may restrict the dtypes and the memory layout it takes (the compiled
CPU kernels take C-contiguous float32/float64 arrays). ``backend.kernel(name, x)`` returns
the first registration of the backend's device type that takes ``x``, else the ``any``
one: op code calls kernels by name and the backend decides. Registration is public
(:func:`ember.library.register_kernel`), so domain packages add their kernels the same way.
A device's tuning (chunk sizes, when an algorithm pays) is its backend's ``tuning`` and
lives with its kernels (the CPU's: ``ember._backend._cpu_conv``), not in op code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["Backend", "KernelEntry", "Tuning", "register_kernel", "kernel_entries", "all_backends",
           "batch_chunks", "ANY"]

ANY = "any"

# device type -> kernel name -> [KernelEntry], most specific first (in registration order)
_KERNELS: dict[str, dict[str, list]] = {}


class Tuning:
    """A device's tuning constants, read by op code at each call (``backend.tuning.x``).

    Every backend has the generic values below; a device type whose kernels were measured
    gives its own (the CPU's are in ``ember._backend._cpu_conv``). Tests change them with
    ``monkeypatch.setattr(backend.tuning, name, value)``.

    Attributes:
        conv_chunk_bytes: a convolution's patch matrix is built for chunks of the batch
            of about this size (on the CPU: to stay in cache; elsewhere: to bound memory).
        conv_keep_bytes / conv_keep_total_bytes: a forward whose patch matrix is one chunk
            of at most conv_keep_bytes keeps it for the weight gradient, all kept ones
            together at most conv_keep_total_bytes.
        winograd / winograd_pays(c, cout, out_sp): whether 3x3 stride-1 convolutions take
            the device's Winograd kernel (where it has one), and for which shapes.
        parallel_min: arrays of at least this many elements go to the device's bulk
            kernels (:func:`ember._backend.bulk_kernel`; on the CPU: NOTE [ Threads for
            large ops ]); elsewhere never.
    """

    def __init__(self, **values):
        self.conv_chunk_bytes = 256 << 20
        self.conv_keep_bytes = 8 << 20
        self.conv_keep_total_bytes = 64 << 20
        self.winograd = False
        self.winograd_pays = _never
        self.parallel_min = 1 << 62
        self.__dict__.update(values)

    def __repr__(self) -> str:
        items = ", ".join(f"{k}={v!r}" for k, v in sorted(vars(self).items()))
        return f"Tuning({items})"


def _never(*args) -> bool:
    return False


def batch_chunks(n: int, per_sample_bytes: int, limit: int) -> list:
    """[(start, stop)] ranges splitting a batch of ``n`` samples into chunks of at most
    ``limit`` bytes (at least one sample each)."""
    nb = max(1, min(n, limit // max(per_sample_bytes, 1)))
    return [(s, min(n, s + nb)) for s in range(0, n, nb)]


class KernelEntry:
    """One registered implementation of a named kernel."""

    __slots__ = ("name", "device_type", "fn", "dtypes", "contiguous")

    def __init__(self, name, device_type, fn, dtypes, contiguous):
        self.name = name
        self.device_type = device_type
        self.fn = fn
        self.dtypes = dtypes
        self.contiguous = contiguous

    def takes(self, array) -> bool:
        """Whether this implementation handles ``array`` (None: the kernel has no array)."""
        if array is None:
            return self.dtypes is None and not self.contiguous
        if self.dtypes is not None and array.dtype not in self.dtypes:
            return False
        return not self.contiguous or array.flags.c_contiguous

    def __repr__(self) -> str:
        dt = "any dtype" if self.dtypes is None else ", ".join(sorted(d.name for d in self.dtypes))
        layout = ", C-contiguous" if self.contiguous else ""
        return f"<kernel {self.name!r} for {self.device_type} ({dt}{layout})>"


def register_kernel(name: str, device_type: str, fn: Callable | None = None, *,
                    dtypes=None, contiguous: bool = False):
    """Register ``fn`` as kernel ``name`` on devices of ``device_type``.

    ``device_type`` is ``"cpu"``, ``"cuda"`` or ``"any"`` (an implementation written against
    the array module, used where no device-specific one takes the arrays). ``dtypes``
    restricts it to arrays of those dtypes and ``contiguous=True`` to C-contiguous ones.
    Usable as a decorator when ``fn`` is left out.
    """
    import numpy as np

    if device_type not in ("cpu", "cuda", ANY):
        raise ValueError(f"register_kernel: unknown device type {device_type!r}")
    dts = frozenset(np.dtype(d) for d in dtypes) if dtypes is not None else None

    def add(f):
        _KERNELS.setdefault(device_type, {}).setdefault(name, []).append(
            KernelEntry(name, device_type, f, dts, contiguous))
        return f

    return add if fn is None else add(fn)


def kernel_entries(name: str | None = None) -> list:
    """The registrations of kernel ``name`` (of every kernel if None), for inspection."""
    out = []
    for table in _KERNELS.values():
        for n, entries in table.items():
            if name is None or n == name:
                out.extend(entries)
    return out


_BACKENDS: list = []  # every backend made so far, the CPU's first


def all_backends() -> list:
    """The backends (devices) made so far in this process."""
    return list(_BACKENDS)


class Backend:
    """One device behind ember tensors (see NOTE [ Backends are devices ]).

    Attributes:
        type: ``"cpu"`` or ``"cuda"``; ``name`` is the same.
        index: the device index (None for the CPU).
        device: the ``ember.device``.
        xp: the array module (``numpy`` or ``cupy``).
        tuning: the device's :class:`Tuning` (chunk sizes and thresholds of its kernels).
    """

    def __init__(self, type: str, index, xp: Any, *, to_numpy: Callable, copy_in: Callable,
                 make_rng: Callable, memory_stats: Callable | None = None,
                 synchronize: Callable | None = None, context: Callable | None = None,
                 workspace: Callable | None = None, tuning: Tuning | None = None):
        import contextlib

        from ember._device import device

        self.type = type
        self.index = index
        self.device = device(type, index)
        self.xp = xp
        self._to_numpy = to_numpy
        self._copy_in = copy_in
        self._make_rng = make_rng
        self._memory_stats = memory_stats
        self._synchronize = synchronize
        self._context = context if context is not None else contextlib.nullcontext
        self._workspace = workspace
        self.tuning = tuning if tuning is not None else Tuning()
        self._generator = None
        self._kernels = _KERNELS.setdefault(type, {})
        self._any = _KERNELS.setdefault(ANY, {})
        _BACKENDS.append(self)

    @property
    def name(self) -> str:
        return self.type

    def __repr__(self) -> str:
        return f"<ember backend {self.device}>"

    # -- data -----------------------------------------------------------------------------
    def device_of(self, array):
        """The device of an array of this backend (always this backend's device)."""
        return self.device

    def to_numpy(self, array):
        """``array`` as a NumPy array (a copy for a device array)."""
        return self._to_numpy(array)

    def to_device(self, array, index=None):
        """``array`` (NumPy, or any backend's array) on this device. ``index`` is accepted for
        callers of the older signature and must be None or this backend's index."""
        if index is not None and self.index is not None and index != self.index:
            raise RuntimeError(f"to_device: index {index} given to the backend of {self.device}")
        return self._copy_in(array)

    def context(self):
        """A context manager under which ``xp`` allocates on this device (``with
        backend.context(): xp.zeros(...)``; nothing to do on the CPU)."""
        return self._context()

    def synchronize(self) -> None:
        """Wait for the work queued on this device (nothing to wait for on the CPU)."""
        if self._synchronize is not None:
            self._synchronize()

    def memory_stats(self) -> dict:
        """This device's memory statistics (``torch.cuda.memory_stats``'s keys where the
        library reports them; empty for the CPU)."""
        return self._memory_stats() if self._memory_stats is not None else {}

    # -- random numbers -------------------------------------------------------------------
    def new_rng(self, seed: int):
        """A bit-generator-backed random source of this device's array library."""
        return self._make_rng(seed)

    @property
    def default_generator(self):
        """This device's default ``ember.Generator`` (made on first use)."""
        if self._generator is None:
            from ember._ops.random import _new_default_generator

            self._generator = _new_default_generator(self.device)
        return self._generator

    # -- kernels --------------------------------------------------------------------------
    def kernel(self, name: str, array=None, *, generic: bool = False) -> Callable:
        """Kernel ``name`` for ``array`` on this device (see NOTE [ Kernels by name ]);
        with ``generic`` the array-module implementation even where a device-specific one
        would take ``array`` (tests compare the two)."""
        if not generic:
            for entry in self._kernels.get(name, ()):
                if entry.takes(array):
                    return entry.fn
        for entry in self._any.get(name, ()):
            if entry.takes(array):
                return entry.fn
        raise NotImplementedError(
            f"no kernel '{name}' on {self.type} for "
            f"{'this call' if array is None else f'arrays of dtype {array.dtype}'}")

    def workspace(self, shape, dtype, slot: int = 0):
        """A scratch array of ``shape`` whose contents are garbage. On the CPU it is a
        per-thread buffer reused by later calls with the same ``slot`` (a fresh allocation
        of a large array costs its page faults every time); it must not outlive the
        caller's use. Elsewhere it is a new array."""
        if self._workspace is not None:
            return self._workspace(shape, dtype, slot)
        with self.context():
            return self.xp.empty(shape, dtype)

    def has_kernel(self, name: str, array=None) -> bool:
        """Whether a kernel of this device type (not an ``any`` one) takes ``array``."""
        return any(e.takes(array) for e in self._kernels.get(name, ()))

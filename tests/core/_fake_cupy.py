"""A stand-in for CuPy with several "GPUs", built on NumPy, for the device-seam tests.

Its arrays are a NumPy subclass that remembers its device and whose class lives in a
``cupy`` module (so ember's backend takes it for a CuPy array); every function of the
module runs NumPy's and places new arrays on the current device. It models what the seam
relies on: device ids, the current device, device-to-device copies, ``asnumpy``, random
generators. It does not model kernels, streams or memory pools beyond a counter.
"""

from __future__ import annotations

import contextlib
import sys
import types

import numpy as np

N_DEVICES = 2
_current = [0]
copies = {"peer": 0, "host_to_device": 0}


class _DeviceId:
    def __init__(self, i):
        self.id = i

    def __repr__(self):
        return f"<CUDA Device {self.id}>"


class ndarray(np.ndarray):  # noqa: N801 - CuPy's name
    """A NumPy array standing for a CuPy array on device ``self.device.id``."""

    def __array_finalize__(self, obj):
        self._dev = getattr(obj, "_dev", _current[0])

    @property
    def device(self):
        return _DeviceId(self._dev)

    @property
    def data(self):
        return _Memory(self)

    def get(self):
        return np.array(self.view(np.ndarray))


ndarray.__module__ = "cupy._core.core"


class _Memory:
    def __init__(self, arr):
        self.arr = arr

    def copy_from_device(self, src, nbytes):
        copies["peer"] += 1
        self.arr.view(np.ndarray).reshape(-1).view(np.uint8)[:nbytes] = \
            src.arr.view(np.ndarray).reshape(-1).view(np.uint8)[:nbytes]


def _on_device(x, dev=None):
    if isinstance(x, ndarray):
        return x
    if isinstance(x, np.ndarray):
        out = x.view(ndarray)
        out._dev = _current[0] if dev is None else dev
        return out
    if isinstance(x, tuple):
        return tuple(_on_device(v, dev) for v in x)
    return x


class Device:
    def __init__(self, i=0):
        self.id = i
        self._prev = []

    def __enter__(self):
        self._prev.append(_current[0])
        _current[0] = self.id
        return self

    def __exit__(self, *exc):
        _current[0] = self._prev.pop()

    def synchronize(self):
        calls.append(("synchronize", self.id))

    def use(self):
        _current[0] = self.id


calls: list = []   # what ember.cuda asked of the fake (synchronize, nvtx, ...), for the tests


class _Runtime:
    @staticmethod
    def getDeviceCount():  # noqa: N802 - CuPy's name
        return N_DEVICES

    @staticmethod
    def getDevice():  # noqa: N802
        return _current[0]

    @staticmethod
    def getDeviceProperties(i):  # noqa: N802
        return {"name": f"Fake GPU {i}".encode(), "major": 8, "minor": 0,
                "totalGlobalMem": 16 * 2**30, "multiProcessorCount": 108}

    @staticmethod
    def memGetInfo():  # noqa: N802
        return (10 * 2**30 + _current[0], 16 * 2**30)

    @staticmethod
    def deviceCanAccessPeer(a, b):  # noqa: N802
        return 1 if a != b else 0

    @staticmethod
    def getErrorString(code):  # noqa: N802
        return b"fake CUDA error"


class _Pointer:
    def __init__(self, ptr):
        self.ptr = ptr


class _Pool:
    used = [0]     # bytes "in use" on the fake GPUs (tests set it)
    limit = [0]

    def used_bytes(self):
        return self.used[0]

    def total_bytes(self):
        return self.used[0] + 1024

    def free_all_blocks(self):
        calls.append(("free_all_blocks",))

    def set_limit(self, size=None, fraction=None):
        self.limit[0] = int(fraction * 16 * 2**30) if fraction is not None else size

    def get_limit(self):
        return self.limit[0]

    def malloc(self, size):
        self.used[0] += size
        return _Pointer(0x1000 + self.used[0])


class _PinnedPool:
    def free_all_blocks(self):
        calls.append(("free_pinned",))


class PinnedMemoryPointer(bytearray):
    """Page-locked host memory (a bytearray here); NumPy arrays are made over it."""


PinnedMemoryPointer.__module__ = "cupy.cuda.pinned_memory"


class _Stream:
    null = None

    def __init__(self, null=False, non_blocking=False, ptds=False, ptr=None):
        self.ptr = ptr if ptr is not None else id(self)
        self.done = True
        self.waited = []

    def use(self):
        _streams[0] = self

    def synchronize(self):
        calls.append(("stream_synchronize", self.ptr))

    def wait_event(self, event):
        self.waited.append(event)

    def is_capturing(self):
        return False


_Stream.null = _Stream(ptr=0)
_streams = [_Stream.null]


class _Event:
    def __init__(self, block=False, disable_timing=False, interprocess=False):
        self.disable_timing = disable_timing
        self.done = True
        self.t = None

    def record(self, stream=None):
        import time

        self.t = time.perf_counter()

    def synchronize(self):
        pass


def _elapsed(start, end):
    return (end.t - start.t) * 1000.0


class _Generator:
    def __init__(self, bitgen):
        self._rng = np.random.Generator(np.random.PCG64(bitgen.seed))

    def __getattr__(self, name):
        fn = getattr(self._rng, name)

        def call(*args, **kwargs):
            return _on_device(np.asarray(fn(*args, **kwargs)))

        return call


class _XORWOW:
    def __init__(self, seed):
        self.seed = seed


def _wrap_function(fn):
    def call(*args, **kwargs):
        # like CuPy: a function of arrays works on their device, a factory on the current one
        dev = next((a._dev for a in args if isinstance(a, ndarray)), None)
        args = tuple(a.view(np.ndarray) if isinstance(a, ndarray) else a for a in args)
        return _on_device(fn(*args, **kwargs), dev)

    return call


def asarray(a, dtype=None):
    if isinstance(a, ndarray) and (dtype is None or a.dtype == dtype):
        return a
    copies["host_to_device"] += 1
    return _on_device(np.array(np.asarray(a), dtype=dtype))


def asnumpy(a):
    return np.array(a.view(np.ndarray)) if isinstance(a, ndarray) else np.asarray(a)


def ascontiguousarray(a, dtype=None):
    out = np.ascontiguousarray(a, dtype=dtype)
    if isinstance(a, ndarray):
        out = out.view(ndarray)
        out._dev = a._dev
    return out


def make_module() -> types.ModuleType:
    mod = types.ModuleType("cupy")
    mod.ndarray = ndarray
    mod.asarray = asarray
    mod.asnumpy = asnumpy
    mod.ascontiguousarray = ascontiguousarray
    mod.get_default_memory_pool = _Pool
    mod.get_default_pinned_memory_pool = _PinnedPool
    mod.cuda = types.SimpleNamespace(
        is_available=lambda: True, Device=Device, runtime=_Runtime(), Stream=_Stream,
        ExternalStream=lambda ptr: _Stream(ptr=ptr), get_current_stream=lambda: _streams[0],
        Event=_Event, get_elapsed_time=_elapsed, alloc_pinned_memory=PinnedMemoryPointer,
        set_allocator=lambda alloc: calls.append(("set_allocator", alloc is not None)),
        nvtx=types.SimpleNamespace(RangePush=lambda m: calls.append(("push", m)),
                                   RangePop=lambda: calls.append(("pop",)),
                                   Mark=lambda m: calls.append(("mark", m))))
    mod.random = types.SimpleNamespace(Generator=_Generator, XORWOW=_XORWOW)
    for name in ("zeros", "ones", "empty", "full", "eye", "arange", "zeros_like", "ones_like",
                 "empty_like", "full_like", "where", "concatenate", "stack", "pad", "take",
                 "take_along_axis", "broadcast_to", "matmul", "dot", "einsum", "sum"):
        setattr(mod, name, _wrap_function(getattr(np, name)))

    def getattr_(name):
        attr = getattr(np, name)
        return _wrap_function(attr) if callable(attr) and not isinstance(attr, type) else attr

    mod.__getattr__ = getattr_
    return mod


@contextlib.contextmanager
def installed():
    """Install the fake as ``cupy`` for ember's CUDA backends; restore everything after."""
    from ember._backend import _base
    from ember._backend import cupy as cupy_backend

    saved = sys.modules.get("cupy")
    n_backends = len(_base._BACKENDS)
    sys.modules["cupy"] = make_module()
    cupy_backend._cupy.cache_clear()
    cupy_backend.get.cache_clear()
    _current[0] = 0
    _streams[0] = _Stream.null
    _Pool.used[0] = 0
    calls.clear()
    copies.update(peer=0, host_to_device=0)
    try:
        yield sys.modules["cupy"]
    finally:
        if saved is None:
            sys.modules.pop("cupy", None)
        else:
            sys.modules["cupy"] = saved
        cupy_backend._cupy.cache_clear()
        cupy_backend.get.cache_clear()
        del _base._BACKENDS[n_backends:]

"""``ExecutionTraceObserver``: every op a program runs, with its nesting and input shapes,
written as a JSON execution trace in the Chakra schema PyTorch writes (``schema``, ``pid``,
``time``, ``start_ts``, ``nodes``, ``finish_ts``), and ``DeviceType``."""

from __future__ import annotations

import enum
import json
import os
import tempfile
import threading
import time

from ember import _dispatch
from ember._C._core import TensorBase

__all__ = ["DeviceType", "ExecutionTraceObserver"]


class DeviceType(enum.IntEnum):
    """PyTorch's device types, with c10's numbers."""

    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    MTIA = 19
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    PrivateUse1 = 20


def _describe(inputs):
    values, shapes, types = [], [], []
    for a in inputs:
        if isinstance(a, TensorBase):
            values.append([])
            shapes.append(list(a._data.shape))
            types.append(f"Tensor({a.dtype.name})")
        elif isinstance(a, (bool, int, float, str)) or a is None:
            values.append("<None>" if a is None else a)
            shapes.append([])
            types.append({bool: "Bool", int: "Int", float: "Double", str: "String"}.get(
                type(a), "None"))
        else:
            values.append(str(a))
            shapes.append([])
            types.append(type(a).__name__)
    return {"values": values, "shapes": shapes, "types": types}


class _Listener:
    def __init__(self, observer):
        self.obs = observer
        self.local = threading.local()

    def _stack(self):
        st = getattr(self.local, "stack", None)
        if st is None:
            st = self.local.stack = [self.obs._thread_node(threading.get_ident())]
        return st

    def enter(self, name, inputs):
        st = self._stack()
        node = self.obs._add_node("ember::" + name, st[-1], _describe(inputs))
        st.append(node["id"])
        return node["id"]

    def enter_backward(self, name):
        return self.enter(name, ())

    def exit(self, node_id):
        st = self._stack()
        while len(st) > 1:
            if st.pop() == node_id:
                break


class ExecutionTraceObserver:
    """Record an execution trace (every op, its parent and its inputs) between
    :meth:`start` and :meth:`stop`, written as JSON to the file given to
    :meth:`register_callback` when the observer is unregistered.

    Examples::

        >>> et = ExecutionTraceObserver().register_callback("trace.json")
        >>> et.start()
        >>> model(inputs)
        >>> et.stop()
        >>> et.unregister_callback()   # writes trace.json
    """

    def __init__(self) -> None:
        self._registered = False
        self._running = False
        self._path = None
        self._extra_resources = False
        self._listener = None
        self._lock = threading.Lock()
        self._reset()

    def _reset(self):
        self._nodes = [{"id": 1, "name": "[pytorch|profiler|execution_trace|process]",
                        "ctrl_deps": 0, "inputs": _describe(()),
                        "outputs": _describe(()), "attrs": []}]
        self._threads = {}
        self._start_ts = self._finish_ts = None

    def __del__(self):
        try:
            self.unregister_callback()
        except Exception:  # noqa: BLE001, S110 - never raise from a finalizer
            pass

    def _add_node(self, name, parent, inputs):
        with self._lock:
            node = {"id": len(self._nodes) + 1, "name": name, "ctrl_deps": parent,
                    "inputs": inputs, "outputs": _describe(()),
                    "attrs": [{"name": "tid", "type": "uint64",
                               "value": self._threads.get(threading.get_ident(), 0)}]}
            self._nodes.append(node)
        return node

    def _thread_node(self, ident):
        self._threads.setdefault(ident, len(self._threads) + 1)
        return self._add_node("[pytorch|profiler|execution_trace|thread]", 1, _describe(()))["id"]

    @staticmethod
    def build_execution_trace_obs_from_env() -> ExecutionTraceObserver | None:
        """An observer writing to a temporary file if ``ENABLE_PYTORCH_EXECUTION_TRACE=1``,
        else None."""
        if os.environ.get("ENABLE_PYTORCH_EXECUTION_TRACE", "0") != "1":
            return None
        fd, path = tempfile.mkstemp(prefix="ember_et_", suffix=".json")
        os.close(fd)
        return ExecutionTraceObserver().register_callback(path)

    def register_callback(self, output_file_path: str):
        """Register the observer, to write its trace to ``output_file_path``; returns it."""
        if not self._registered:
            self._path = os.fspath(output_file_path)
            self._registered = True
        return self

    def set_extra_resource_collection(self, val) -> None:
        """Whether to collect extra resources (kernel files) with the trace: ember has no
        compiled kernels to collect, so only the switch is kept."""
        self._extra_resources = bool(val)

    def get_resources_dir(self, can_create=False) -> str | None:
        """The folder for the trace's resources (``<trace>_resources``), made if
        ``can_create``; None before :meth:`register_callback`."""
        if self._path is None:
            return None
        return self.get_resources_dir_for_et_path(self._path, can_create)

    @staticmethod
    def get_resources_dir_for_et_path(trace_path, create_dir: bool = False) -> str | None:
        """``<trace path without extension>_resources``, made if ``create_dir``."""
        work_dir, file_name = os.path.split(trace_path)
        path = os.path.join(work_dir, os.path.splitext(file_name)[0] + "_resources")
        if not os.path.exists(path):
            if not create_dir:
                return None
            os.mkdir(path)
        return path

    def unregister_callback(self) -> None:
        """Stop if running and write the trace to its file."""
        if not self._registered:
            return
        if self._running:
            self.stop()
        self._registered = False
        with open(self._path, "w") as f:
            json.dump({"schema": "1.1.1-chakra.0.0.4", "pid": os.getpid(),
                       "time": time.strftime("%Y-%m-%d %X"), "start_ts": self._start_ts,
                       "nodes": self._nodes, "finish_ts": self._finish_ts}, f)

    @property
    def is_registered(self) -> bool:
        """Whether :meth:`register_callback` was called (and not undone)."""
        return self._registered

    def is_running(self) -> bool:
        """Whether the observer records now."""
        return self._running

    def start(self) -> None:
        """Start recording (the observer must be registered)."""
        if self._registered and not self._running:
            self._start_ts = self._start_ts or int(time.time() * 1000)
            self._listener = _Listener(self)
            _dispatch.add_listener(self._listener)
            self._running = True

    def stop(self) -> None:
        """Stop recording."""
        if self._running:
            _dispatch.remove_listener(self._listener)
            self._listener = None
            self._running = False
            self._finish_ts = int(time.time() * 1000)

    def cleanup(self) -> None:
        """Unregister (writing the trace)."""
        self.unregister_callback()

    def get_output_file_path(self) -> str | None:
        """The trace file's path (None before :meth:`register_callback`)."""
        return self._path

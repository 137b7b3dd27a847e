"""``ember.profiler``: which ops a program runs and how long each takes, as ``torch.profiler``.

The profiler listens at the one dispatch point every op passes through (NOTE [ One
dispatch point ] in ``ember._C._core``): each op call, each node's backward and each
:class:`record_function` range becomes a :class:`FunctionEvent`. With no profiler
running, the dispatch point costs one test of a C flag per op.

Examples::

    >>> from ember.profiler import profile, record_function, ProfilerActivity
    >>> with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
    ...     with record_function("model_inference"):
    ...         model(inputs)
    >>> print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    >>> prof.export_chrome_trace("trace.json")
"""

from __future__ import annotations

import enum
import functools
import json
import os
import socket
import tempfile
import threading
import time

from ember import _dispatch
from ember._C._core import TensorBase as _TensorBase
from ember.profiler._events import EventList, FunctionEvent, FunctionEventAvg

__all__ = ["profile", "record_function", "ProfilerActivity", "ProfilerAction", "schedule",
           "tensorboard_trace_handler", "EventList", "FunctionEvent", "FunctionEventAvg"]


class ProfilerActivity(enum.Enum):
    """What to profile: ``CPU`` (ops run on the host). ``CUDA`` is accepted; ember records
    no GPU kernel activity yet, so a CUDA-only profile records nothing."""

    CPU = 0
    CUDA = 1
    XPU = 2
    MTIA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """What a :func:`schedule` asks for at a step."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4  # PyTorch's, for a device that stopped tracing; never returned here


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0):
    """A schedule for :class:`profile`: skip ``skip_first`` steps, then cycles of ``wait``
    idle steps, ``warmup`` steps and ``active`` recorded steps (the last of each cycle
    saves: ``on_trace_ready`` is called), ``repeat`` times (0: forever). With
    ``skip_first_wait`` the first cycle starts at its warmup."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise ValueError("Invalid profiler schedule arguments")
    if warmup == 0:
        import warnings

        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)

    def schedule_fn(step: int) -> ProfilerAction:
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        mod = step % cycle
        if mod < wait:
            return ProfilerAction.NONE
        if mod < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if mod < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _always_record(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def _shapes(inputs) -> list:
    out = []
    for a in inputs:
        if isinstance(a, _TensorBase):
            out.append(list(a._data.shape))
        elif isinstance(a, (list, tuple)) and a and all(isinstance(x, _TensorBase) for x in a):
            out.append([list(x._data.shape) for x in a])
        else:
            out.append([])
    return out


class _Recorder:
    """The dispatch listener of one profile: events with their nesting, per thread."""

    def __init__(self, record_shapes: bool, prefix: str = "ember::"):
        self.record_shapes = record_shapes
        self.prefix = prefix
        self.events: list = []
        self.local = threading.local()
        self.t0 = time.perf_counter_ns()
        self.lock = threading.Lock()

    def _stack(self) -> list:
        st = getattr(self.local, "stack", None)
        if st is None:
            st = self.local.stack = []
        return st

    def enter(self, name, inputs, annotation=False):
        # ops get the prefix ("ember::add"); annotations and backward nodes keep their name
        return self._begin(name if annotation else self.prefix + name, inputs, annotation)

    def enter_backward(self, name):
        return self._begin(name, (), False)

    def _begin(self, name, inputs, annotation):
        now = time.perf_counter_ns()
        ev = FunctionEvent(len(self.events), name, threading.get_ident(),
                           (now - self.t0) / 1000.0,
                           _shapes(inputs) if self.record_shapes else None, annotation)
        st = self._stack()
        if st:
            ev.cpu_parent = st[-1]
            st[-1].cpu_children.append(ev)
        st.append(ev)
        with self.lock:
            self.events.append(ev)
        return ev

    def exit(self, ev):
        ev.end_us = (time.perf_counter_ns() - self.t0) / 1000.0
        st = self._stack()
        # Pop up to and including ev: a range left open by an exception closes with it.
        while st:
            top = st.pop()
            if top is ev:
                break


_active: list = []  # the recording profilers, innermost last (record_function reports to them)


class profile:
    """Profile the ops run inside the ``with`` block (or between ``start()`` and ``stop()``).

    Args:
        activities: a list of :class:`ProfilerActivity` (default: CPU).
        schedule: a callable ``step -> ProfilerAction`` (see :func:`schedule`); steps are
            counted by :meth:`step`. Default: record everything.
        on_trace_ready: called with the profiler when a scheduled recording ends.
        record_shapes: keep the shapes of each op's tensor inputs.
        profile_memory, with_stack, with_flops, with_modules: accepted for PyTorch's
            signature; ember records no memory, stacks, FLOPs or modules yet.
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False,
                 with_flops=False, with_modules=False, experimental_config=None,
                 execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None, post_processing_timeout_s=None):
        acts = set(activities) if activities is not None else {ProfilerActivity.CPU}
        for a in acts:
            if not isinstance(a, ProfilerActivity):
                raise TypeError(f"activities must be ProfilerActivity values, got {a!r}")
        self.activities = acts
        self.schedule = schedule if schedule is not None else _always_record
        self.on_trace_ready = on_trace_ready
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.step_num = 0
        self._recorder = None
        self._events = EventList()
        self._action = ProfilerAction.NONE
        self._running = False

    # -- control ------------------------------------------------------------------------
    def __enter__(self) -> profile:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        self._running = True
        self._transition(self.schedule(self.step_num))

    def stop(self) -> None:
        if self._action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE):
            self._stop_recording(save=True)
        self._action = ProfilerAction.NONE
        self._running = False

    def step(self) -> None:
        """Mark the end of a training step (for ``schedule``)."""
        if not self._running:
            return
        prev = self._action
        self.step_num += 1
        nxt = self.schedule(self.step_num)
        if prev == ProfilerAction.RECORD_AND_SAVE or (
                prev == ProfilerAction.RECORD and nxt in (ProfilerAction.NONE,
                                                           ProfilerAction.WARMUP)):
            self._stop_recording(save=True)
            self._action = ProfilerAction.NONE
        self._transition(nxt)

    def _transition(self, action: ProfilerAction) -> None:
        recording = self._action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE) and not recording:
            self._start_recording()
        self._action = action

    def _start_recording(self) -> None:
        self._recorder = _Recorder(self.record_shapes)
        if ProfilerActivity.CPU in self.activities:
            _dispatch.add_listener(self._recorder)
            _active.append(self._recorder)

    def _stop_recording(self, save: bool) -> None:
        rec = self._recorder
        if rec is None:
            return
        _dispatch.remove_listener(rec)
        if rec in _active:
            _active.remove(rec)
        self._recorder = None
        self._events = EventList(rec.events)
        if save and self.on_trace_ready is not None:
            self.on_trace_ready(self)

    # -- results ------------------------------------------------------------------------
    def events(self) -> EventList:
        """Every recorded event, in the order the calls began."""
        return self._events

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """The events summed per op name (and input shapes if asked): a table's rows."""
        if group_by_input_shape and not self.record_shapes:
            raise RuntimeError(
                "key_averages(group_by_input_shape=True) needs profile(record_shapes=True)")
        return self._events.key_averages(group_by_input_shape)

    def export_chrome_trace(self, path, use_python_export=False) -> None:
        """Write the events in the Chrome trace format (chrome://tracing, Perfetto).

        The file is written to a temporary name and renamed, so a crash leaves no half file.
        ``use_python_export`` is accepted for PyTorch's signature: ember's exporter is Python
        either way.
        """
        pid = os.getpid()
        trace = []
        for e in self._events:
            ev = {"ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
                  "name": e.name, "pid": pid, "tid": e.thread, "ts": e.start_us,
                  "dur": e.cpu_time_total, "args": {"External id": e.id}}
            if e.input_shapes is not None:
                ev["args"]["Input Dims"] = e.input_shapes
            trace.append(ev)
        doc = {"schemaVersion": 1, "displayTimeUnit": "ms", "traceName": str(path),
               "host_name": socket.gethostname(), "traceEvents": trace}
        path = os.fspath(path)
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".trace-", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "w") as f:
                json.dump(doc, f)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def __repr__(self) -> str:
        return f"<ember.profiler.profile step={self.step_num} events={len(self._events)}>"


class record_function:  # noqa: N801 - PyTorch's name; a context manager and a decorator
    """Label a range of code: it appears as one event, around the ops it runs, in every
    running profile (and costs nearly nothing when none runs).

    Examples::

        >>> with record_function("data_augmentation"):
        ...     x = x.flip(-1)
    """

    def __init__(self, name: str, args: str | None = None):
        self.name = name
        self.args = args
        self._tokens = None

    def __enter__(self) -> record_function:
        if _active:
            self._tokens = [(r, r.enter(self.name, (), annotation=True)) for r in _active]
        return self

    def __exit__(self, *exc) -> None:
        if self._tokens:
            for r, tok in self._tokens:
                r.exit(tok)
        self._tokens = None

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)

        return wrapped


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False, use_python_export: bool = False):
    """An ``on_trace_ready`` handler writing each trace to ``dir_name`` as
    ``{worker_name}.{timestamp}.pt.trace.json`` (gzipped with ``use_gzip``). The trace is
    always written by Python here, so ``use_python_export`` changes nothing."""
    import gzip
    import shutil

    def handler(prof: profile) -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns() // 1_000_000}.pt.trace.json"
        path = os.path.join(dir_name, name)
        prof.export_chrome_trace(path)
        if use_gzip:
            with open(path, "rb") as src, gzip.open(path + ".gz", "wb") as dst:
                shutil.copyfileobj(src, dst)
            os.unlink(path)

    return handler


def kineto_available() -> bool:
    """False: ember's profiler records ops at its own dispatch point; there is no Kineto
    (PyTorch's GPU activity tracer) in ember."""
    return False


def supported_activities() -> set:
    """The activities :class:`profile` can record here: ``{ProfilerActivity.CPU}`` (ember
    records no GPU kernel activity yet)."""
    return {ProfilerActivity.CPU}


from ember.profiler._execution_trace import DeviceType, ExecutionTraceObserver  # noqa: E402

__all__ += ["DeviceType", "ExecutionTraceObserver", "kineto_available", "supported_activities"]


# the __future__ name the annotations above use: not part of the public namespace
del annotations

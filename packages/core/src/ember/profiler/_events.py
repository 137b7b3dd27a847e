"""The profiler's events: one per op call, their averages, and the printed table."""

from __future__ import annotations

__all__ = ["FunctionEvent", "FunctionEventAvg", "EventList"]


class FunctionEvent:
    """One recorded op call (or ``record_function`` range); times in microseconds.

    Attributes:
        name: the op's name (``"ember::add"``, ``"MulBackward0"``, a user label).
        start_us, end_us: when it began and ended, from the profile's start.
        thread: the id of the thread that ran it.
        input_shapes: the shapes of its tensor inputs (with ``record_shapes=True``).
        cpu_children: the events that ran inside it.
        cpu_parent: the event it ran inside, or None.
    """

    def __init__(self, id, name, thread, start_us, input_shapes, is_user_annotation):
        self.id = id
        self.name = name
        self.thread = thread
        self.start_us = start_us
        self.end_us = start_us
        self.input_shapes = input_shapes
        self.is_user_annotation = is_user_annotation
        self.cpu_children: list = []
        self.cpu_parent = None
        self.count = 1

    @property
    def key(self) -> str:
        return self.name

    @property
    def cpu_time_total(self) -> float:
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    # No device activity is recorded: CUDA time is 0 (kept for code that reads it).
    device_time_total = self_device_time_total = 0.0
    cuda_time_total = self_cuda_time_total = 0.0

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time_total={self.cpu_time_total:.3f}us input_shapes={self.input_shapes}>")


class FunctionEventAvg:
    """The events of one key (name, and input shapes when grouped by them), summed."""

    def __init__(self, key, input_shapes=None):
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.is_user_annotation = False

    def add(self, event) -> FunctionEventAvg:
        self.count += 1
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        self.is_user_annotation = event.is_user_annotation
        return self

    @property
    def cpu_time(self) -> float:
        """The average time of one call (microseconds)."""
        return self.cpu_time_total / self.count if self.count else 0.0

    device_time_total = self_device_time_total = 0.0
    cuda_time_total = self_cuda_time_total = 0.0

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total:.3f}us"
                f" cpu_time={self.cpu_time:.3f}us count={self.count}>")


_SORT_KEYS = ("cpu_time", "cpu_time_total", "self_cpu_time_total", "count", "cuda_time",
              "cuda_time_total", "self_cuda_time_total", "device_time", "device_time_total",
              "self_device_time_total")


def _format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class EventList(list):
    """A list of events with PyTorch's summaries: :meth:`key_averages`, :meth:`table`."""

    def key_averages(self, group_by_input_shapes: bool = False) -> EventList:
        groups: dict = {}
        for e in self:
            shapes = str(e.input_shapes) if group_by_input_shapes else None
            key = (e.key, shapes)
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg(
                    e.key, e.input_shapes if group_by_input_shapes else None)
            avg.add(e)
        return EventList(groups.values())

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_name_column_width: int = 55, header: str | None = None,
              top_level_events_only: bool = False, **_unused) -> str:
        """The events as PyTorch's profiler prints them: name, self and total CPU time,
        their shares, the average time, the call count (and input shapes when the events
        were grouped by them)."""
        rows = list(self)
        if top_level_events_only:
            rows = [e for e in rows if getattr(e, "cpu_parent", None) is None]
        if sort_by is not None:
            if sort_by not in _SORT_KEYS:
                raise AttributeError(
                    f"table(sort_by={sort_by!r}): expected one of {', '.join(_SORT_KEYS)}")
            rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
        rows = rows[:row_limit] if row_limit is not None and row_limit >= 0 else rows
        total = self.self_cpu_time_total or 1.0
        with_shapes = any(getattr(e, "input_shapes", None) is not None for e in rows) and \
            isinstance(self[0] if self else None, FunctionEventAvg)
        name_w = min(max([len(e.key) for e in rows] + [4]) + 2, max_name_column_width)
        cols = [("Name", name_w), ("Self CPU %", 12), ("Self CPU", 12), ("CPU total %", 12),
                ("CPU total", 12), ("CPU time avg", 12), ("# of Calls", 12)]
        if with_shapes:
            cols.append(("Input Shapes", 35))
        line = "  ".join("-" * w for _, w in cols) + "  "
        out = []
        if header:
            out += ["=" * len(line), header]
        out += [line, "  ".join(n.rjust(w) for n, w in cols) + "  ", line]
        for e in rows:
            name = e.key if len(e.key) <= name_w else e.key[:name_w - 3] + "..."
            count = e.count
            cells = [name, f"{100 * e.self_cpu_time_total / total:.2f}%",
                     _format_time(e.self_cpu_time_total),
                     f"{100 * e.cpu_time_total / total:.2f}%",
                     _format_time(e.cpu_time_total),
                     _format_time(e.cpu_time_total / count if count else 0.0), str(count)]
            if with_shapes:
                cells.append(str(e.input_shapes))
            out.append("  ".join(c.rjust(w) for c, (_, w) in zip(cells, cols)) + "  ")
        out.append(line)
        out.append(f"Self CPU time total: {_format_time(self.self_cpu_time_total)}")
        return "\n".join(out) + "\n"

    def __str__(self) -> str:
        return self.table()

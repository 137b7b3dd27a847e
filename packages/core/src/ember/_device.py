"""``ember.device``: where a tensor's data lives (``cpu`` or ``cuda:N``)."""

from __future__ import annotations

import threading

__all__ = ["device"]


class device:
    """A device, made from a string (``"cpu"``, ``"cuda"``, ``"cuda:1"``), a type and an
    index (``device("cuda", 1)``), another device, or a CUDA ordinal (``device(0)``).
    """

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):  # noqa: A002 - PyTorch's argument name
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int) and not isinstance(type, bool):
            type, index = "cuda", type
        if not isinstance(type, str):
            raise TypeError(f"device() expects a string or an int, got {type.__class__.__name__}")
        name = type.strip()
        if ":" in name:
            if index is not None:
                raise RuntimeError(
                    f"type (string) must not include an index because index was passed "
                    f"explicitly: {name}")
            name, _, idx = name.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(idx)
        if name not in ("cpu", "cuda"):
            raise RuntimeError(
                f"Expected one of cpu, cuda device type at start of device string: {type}")
        if index is not None and (not isinstance(index, int) or index < 0):
            raise RuntimeError(f"Device index must not be negative, got {index}")
        self.type, self.index = name, index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = device(other)
            except (RuntimeError, TypeError):
                return False
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))

    # ``with ember.device("cuda"):`` makes the device the default of the tensors created
    # inside the block without one (as ``set_default_device``), and restores the one
    # before on leaving it, as PyTorch's device context does.
    def __enter__(self):
        from ember._ops.creation import DEFAULT_DEVICE

        stack = _entered.__dict__.setdefault("stack", [])
        stack.append(DEFAULT_DEVICE[0])
        DEFAULT_DEVICE[0] = None if self.type == "cpu" else device(self)
        return self

    def __exit__(self, *exc):
        from ember._ops.creation import DEFAULT_DEVICE

        DEFAULT_DEVICE[0] = _entered.stack.pop()
        return False


_entered = threading.local()  # per thread: the default devices the entered blocks replaced


CPU = device("cpu")

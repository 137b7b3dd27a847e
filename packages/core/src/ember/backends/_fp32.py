"""``fp32_precision`` switches per backend and op (``ember.backends.cudnn.conv``,
``ember.backends.mkldnn.matmul``, ...), as PyTorch's ``torch.backends._FP32Precision``: the
value is kept in ``ember._flags.FLAGS`` (``"fp32_precision_<backend>_<op>"``) for the
kernels; ember's float32 kernels compute in IEEE float32 whatever it says."""

from __future__ import annotations

from ember._flags import FLAGS

__all__ = ["FP32Precision"]

_CHOICES = ("ieee", "tf32", "bf16", "none")


class FP32Precision:
    """The float32 precision switch of one op of one backend: ``.fp32_precision`` reads and
    writes it (``"ieee"``, ``"tf32"``, ``"bf16"`` or ``"none"``, PyTorch's choices)."""

    def __init__(self, backend: str, op: str, default: str = "none"):
        object.__setattr__(self, "backend", backend)
        object.__setattr__(self, "op", op)
        FLAGS.setdefault(self._key(), default)

    def _key(self) -> str:
        return f"fp32_precision_{self.backend}_{self.op}"

    def __getattr__(self, name):
        if name == "fp32_precision":
            return FLAGS[self._key()]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        if name == "fp32_precision":
            if value not in _CHOICES:
                raise RuntimeError(f"Invalid precision {value!r} for {self.backend} "
                                   f"{self.op}: choose one of {', '.join(_CHOICES)}")
            FLAGS[self._key()] = value
        elif name in ("backend", "op"):
            object.__setattr__(self, name, value)
        else:
            raise AttributeError("Unknown attribute " + name)

    def __repr__(self) -> str:
        return f"<fp32_precision of {self.backend} {self.op}: {self.fp32_precision!r}>"

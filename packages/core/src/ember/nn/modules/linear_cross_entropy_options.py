"""``LinearCrossEntropyOptions``: the settings of PyTorch's chunked linear + cross-entropy.

PyTorch can compute ``linear_cross_entropy`` over chunks of the batch, so that the full
``(batch, num_classes)`` logits never exist at once (a memory saving for large
vocabularies). ember computes the reference form (the logits, then the cross-entropy):
the options are validated as PyTorch validates them and accepted, and the results are
the same up to rounding.
"""

from __future__ import annotations

import dataclasses

__all__ = ["LinearCrossEntropyOptions"]


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """Settings of the chunked implementation of :func:`ember.nn.functional.
    linear_cross_entropy` (validated; ember computes the unchunked reference form).

    Args:
        allow_retain_graph (bool): allow ``retain_graph=True`` on backward. Default: False.
        batch_chunk_size (int or None): batch rows per chunk; None picks one.
        chunking_method (str or None): ``"auto"``, ``"aspect_ratio"`` or
            ``"aspect_ratio:N"``. Default: ``"auto"``.
        acc_policy (str): ``"accurate"``, ``"balanced"``, ``"compact"`` or ``"auto"``.
        acc_dtype (ember.dtype or None): the accumulation dtype (float16, bfloat16,
            float32, float64), or None to pick one.
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        from ember import _dtype

        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            if not sep:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None or (isinstance(self.batch_chunk_size, int)
                                                   and self.batch_chunk_size > 0)):
            raise ValueError("batch_chunk_size must be positive int or None, got "
                             f"{self.batch_chunk_size!r}")
        supported = [getattr(_dtype, n, None) for n in ("float16", "bfloat16", "float32",
                                                         "float64")]
        if self.acc_dtype is not None and self.acc_dtype not in supported:
            raise ValueError(
                "acc_dtype must be one of {None, torch.float16, torch.bfloat16, "
                f"torch.float32, torch.float64}}, got {self.acc_dtype!r}. Pass "
                "acc_dtype=None to let the op pick automatically.")

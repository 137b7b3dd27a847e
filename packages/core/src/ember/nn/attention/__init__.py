"""``ember.nn.attention``: choosing the kernel of ``F.scaled_dot_product_attention``.

PyTorch picks among several fused kernels (flash, memory-efficient, cuDNN) and the plain
math one. ember has one implementation (the math one, on every device), so
:func:`sdpa_kernel` only records the backends asked for — code written for PyTorch runs
unchanged and gets the same numbers as PyTorch's math backend. The flash-attention
registry keeps registered implementations as PyTorch's does; none comes with ember.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import warnings

__all__ = ["SDPBackend", "SDPAParams", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS",
           "can_use_flash_attention", "can_use_efficient_attention",
           "register_flash_attention_impl", "activate_flash_attention_impl",
           "list_flash_attention_impls", "current_flash_attention_impl",
           "restore_flash_attention_impl"]

logger = logging.getLogger(__name__)

WARN_FOR_UNFUSED_KERNELS = False


class SDPBackend(enum.IntEnum):
    """The kernels of scaled dot-product attention, with PyTorch's values."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


class SDPAParams:
    """The arguments of one ``scaled_dot_product_attention`` call, for the
    ``can_use_*`` checks.

    Args:
        query, key, value (Tensor): the attention's inputs.
        attn_mask (Tensor or None): its mask.
        dropout (float): its dropout probability.
        is_causal (bool): whether it is causal.
        enable_gqa (bool): whether grouped-query attention is enabled.
    """

    def __init__(self, query, key, value, attn_mask, dropout, is_causal, enable_gqa) -> None:
        self.query, self.key, self.value = query, key, value
        self.attn_mask = attn_mask
        self.dropout = float(dropout)
        self.is_causal = bool(is_causal)
        self.enable_gqa = bool(enable_gqa)


def _no_fused_kernel(kind, params, debug):
    if not isinstance(params, SDPAParams):
        raise TypeError(f"expected SDPAParams, got {type(params).__name__}")
    if debug:
        warnings.warn(f"ember has no {kind} kernel: scaled_dot_product_attention runs its "
                      "math implementation", stacklevel=3)
    return False


def can_use_flash_attention(params, debug: bool = False) -> bool:
    """Whether the flash-attention kernel can run these arguments: never in ember (it has
    only the math implementation); with ``debug`` a warning says why."""
    return _no_fused_kernel("flash attention", params, debug)


def can_use_efficient_attention(params, debug: bool = False) -> bool:
    """Whether the memory-efficient attention kernel can run these arguments: never in
    ember; with ``debug`` a warning says why."""
    return _no_fused_kernel("memory-efficient attention", params, debug)


_ALL = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH,
        SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE]
_enabled: list = list(_ALL)


def _cur_sdpa_kernel_backends(with_priority: bool = False) -> list:
    """The backends enabled now (all of them outside :func:`sdpa_kernel`)."""
    return list(_enabled)


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False):
    """A context manager choosing the backends of ``F.scaled_dot_product_attention``.

    ember always runs its one (math) implementation; the choice is recorded, and the
    previous one restored on exit, so that code written for PyTorch runs unchanged.

    Args:
        backends (SDPBackend or list of SDPBackend): the backends to enable.
        set_priority (bool, optional): whether the list's order is the priority order.
            Default: False.

    Examples::

        >>> from ember.nn.attention import SDPBackend, sdpa_kernel
        >>> with sdpa_kernel(SDPBackend.MATH):
        ...     out = F.scaled_dot_product_attention(q, k, v)
    """
    global _enabled
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of "
                             f"SDPBackend instances, got {type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(dict.fromkeys(backends))
    for b in backends:
        if not isinstance(b, SDPBackend):
            raise AssertionError("Backend must be an instance of SDPBackend or a list of "
                                 f"SDPBackend instances, got {type(b).__name__}")
    previous = _enabled
    try:
        _enabled = backends
        yield {}
    finally:
        _enabled = previous


_FLASH_ATTENTION_IMPLS: dict = {}
_FLASH_ATTENTION_ACTIVE = None


def register_flash_attention_impl(impl, *, register_fn) -> None:
    """Register ``register_fn``, the callable that activates the flash-attention
    implementation ``impl`` (for backend providers; users call
    :func:`activate_flash_attention_impl`)."""
    _FLASH_ATTENTION_IMPLS[impl] = register_fn


def activate_flash_attention_impl(impl) -> None:
    """Activate the registered flash-attention implementation ``impl`` (its
    ``register_fn`` is called; a handle it returns is kept until
    :func:`restore_flash_attention_impl`)."""
    global _FLASH_ATTENTION_ACTIVE
    restore_flash_attention_impl(_raise_warn=False)
    register_fn = _FLASH_ATTENTION_IMPLS.get(impl)
    if register_fn is None:
        raise ValueError(f"Unknown flash attention impl '{impl}'. Available implementations: "
                         f"{list_flash_attention_impls()}")
    handle = register_fn()
    if handle is not None:
        _FLASH_ATTENTION_ACTIVE = (impl, handle)


def list_flash_attention_impls() -> list:
    """The names of the registered flash-attention implementations (none in ember
    itself)."""
    return sorted(_FLASH_ATTENTION_IMPLS)


def current_flash_attention_impl():
    """The name of the activated flash-attention implementation, or None."""
    return None if _FLASH_ATTENTION_ACTIVE is None else _FLASH_ATTENTION_ACTIVE[0]


def restore_flash_attention_impl(_raise_warn: bool = True) -> None:
    """Deactivate the activated implementation (its handle's ``remove()`` is called)."""
    global _FLASH_ATTENTION_ACTIVE
    handle = None if _FLASH_ATTENTION_ACTIVE is None else _FLASH_ATTENTION_ACTIVE[1]
    if handle is not None:
        handle.remove()
    elif _raise_warn:
        logger.warning("Trying to restore default FA2 impl when no custom impl was activated")
    _FLASH_ATTENTION_ACTIVE = None

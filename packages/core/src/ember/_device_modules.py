"""``ember.get_device_module`` and the build queries PyTorch has at its top level."""

from __future__ import annotations

import importlib

__all__ = ["get_device_module", "is_vulkan_available"]

_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip",
                 "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                 "privateuseone")


def get_device_module(device=None):
    """The module of a device type: ``ember.cuda`` for ``"cuda"``, ``ember.cpu`` for
    ``"cpu"``; None means the current accelerator's (``ember.cuda`` where CuPy is
    installed, else ``ember.cpu``).

    Example::

        >>> ember.get_device_module("cpu").device_count()
        1
    """
    from ember._device import device as device_cls

    if isinstance(device, device_cls):
        name = device.type
    elif isinstance(device, str):
        name = device.split(":", 1)[0]
        if name not in _DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at "
                               f"start of device string: {device}")
    elif device is None:
        from ember.accelerator import current_accelerator

        acc = current_accelerator()
        name = acc.type if acc is not None else "cpu"
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, "
                           "or None")
    if name not in ("cpu", "cuda"):
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered "
                           "as 'ember.{name}'.")
    return importlib.import_module(f"ember.{name}")


def is_vulkan_available() -> bool:
    """False: ember has no Vulkan backend."""
    return False

"""``convert_conv2d_weight_memory_format`` and ``convert_conv3d_weight_memory_format``:
the weights of the convolution layers stored in another memory layout."""

from __future__ import annotations

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _layout_name(memory_format) -> str:
    # ember.channels_last and friends (their .name), or PyTorch's (their str is torch.<name>)
    name = getattr(memory_format, "name", None)
    if not isinstance(name, str):
        name = str(memory_format).rsplit(".", 1)[-1]
    if name not in ("contiguous_format", "preserve_format", "channels_last",
                    "channels_last_3d"):
        raise TypeError(f"expected a memory format (contiguous_format, channels_last, "
                        f"channels_last_3d, preserve_format), got {memory_format!r}")
    return name


def _convert(module, classes, memory_format, channels_last_name, nd):
    name = _layout_name(memory_format)
    if isinstance(module, classes):
        from ember.autograd.grad_mode import no_grad

        w = module.weight
        with no_grad():
            if name == channels_last_name:
                # the channels dim last in memory: (N, *spatial, C) contiguous, seen as
                # (N, C, *spatial) — PyTorch's strides for the same layout
                order = (0, *range(2, 2 + nd), 1)
                back = (0, 1 + nd, *range(1, 1 + nd))
                data = w.detach().permute(*order).contiguous().permute(*back)
            elif name == "contiguous_format":
                data = w.detach().contiguous()
            else:
                data = w.detach()
        w._data = data._data
    for child in module.children():
        _convert(child, classes, memory_format, channels_last_name, nd)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Store the weight of every ``Conv2d`` / ``ConvTranspose2d`` in ``module`` in
    ``memory_format`` (recursively); values and parameter objects stay the same.

    With ``channels_last`` the weight's strides are those of an (N, H, W, C) contiguous
    array, as PyTorch's; ember's convolutions take weights of any layout.

    Args:
        module (nn.Module): the module.
        memory_format: ``channels_last``, ``contiguous_format`` or ``preserve_format``.

    Returns:
        The module.
    """
    from ember.nn.modules.conv import Conv2d, ConvTranspose2d

    return _convert(module, (Conv2d, ConvTranspose2d), memory_format, "channels_last", 2)


def convert_conv3d_weight_memory_format(module, memory_format):
    """Store the weight of every ``Conv3d`` / ``ConvTranspose3d`` in ``module`` in
    ``memory_format`` (recursively): ``channels_last_3d`` gives the strides of an
    (N, D, H, W, C) contiguous array.

    Args:
        module (nn.Module): the module.
        memory_format: ``channels_last_3d``, ``contiguous_format`` or ``preserve_format``.

    Returns:
        The module.
    """
    from ember.nn.modules.conv import Conv3d, ConvTranspose3d

    return _convert(module, (Conv3d, ConvTranspose3d), memory_format, "channels_last_3d", 3)

"""Helpers shared by the model files."""

from __future__ import annotations

from collections import OrderedDict

from ember import nn


def make_divisible(v: float, divisor: int, min_value: int | None = None) -> int:
    """``v`` rounded to a multiple of ``divisor`` (at least ``min_value``), never more than
    10% below ``v``: the channel rounding of the MobileNets."""
    min_value = divisor if min_value is None else min_value
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class IntermediateLayerGetter(nn.ModuleDict):
    """The children of ``model`` up to the last one named in ``return_layers``, run in order;
    the forward returns an OrderedDict of the outputs of the named ones, under their new
    names (``{"layer4": "out"}``). Only direct children can be returned.

    Args:
        model (nn.Module): the model.
        return_layers (dict): child name -> output name.
    """

    _version = 2

    def __init__(self, model: nn.Module, return_layers: dict[str, str]):
        if not set(return_layers).issubset(name for name, _ in model.named_children()):
            raise ValueError("return_layers are not present in model")
        orig_return_layers = dict(return_layers)
        wanted = {str(k): str(v) for k, v in return_layers.items()}
        layers = OrderedDict()
        for name, module in model.named_children():
            layers[name] = module
            wanted.pop(name, None)
            if not wanted:
                break
        super().__init__(layers)
        self.return_layers = orig_return_layers

    def forward(self, x):
        out = OrderedDict()
        for name, module in self.items():
            x = module(x)
            if name in self.return_layers:
                out[self.return_layers[name]] = x
        return out


def _ovewrite_value_param(param: str, actual, expected):
    if actual is not None and actual != expected:
        raise ValueError(
            f"The parameter '{param}' expected value {expected} but got {actual} instead.")
    return expected


def _mobilenet_stage_indices(backbone) -> list[int]:
    """The first layer, each layer that reduces the resolution, and the last layer."""
    return ([0] + [i for i, b in enumerate(backbone) if getattr(b, "_is_cn", False)]
            + [len(backbone) - 1])

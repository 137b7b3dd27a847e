"""Feature Pyramid Network (Lin et al., 2017) over a dict of feature maps."""

from __future__ import annotations

from collections import OrderedDict

import ember.nn.functional as F
from ember import nn
from embervision.ops.misc import Conv2dNormActivation

__all__ = ["ExtraFPNBlock", "FeaturePyramidNetwork", "LastLevelMaxPool", "LastLevelP6P7"]


class ExtraFPNBlock(nn.Module):
    """Base of the blocks that add levels on top of the FPN's outputs.

    ``forward(results, x, names)`` takes the FPN's outputs, its inputs and the outputs' names
    and returns the extended outputs and names.
    """


class LastLevelMaxPool(ExtraFPNBlock):
    """Adds a level ``"pool"``: the top output max-pooled with stride 2."""

    def forward(self, x, y, names):
        names.append("pool")
        x.append(F.max_pool2d(x[-1], kernel_size=1, stride=2, padding=0))
        return x, names


class LastLevelP6P7(ExtraFPNBlock):
    """Adds levels ``"p6"`` and ``"p7"`` (RetinaNet) from P5, or from C5 when the channel
    counts differ."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.p6 = nn.Conv2d(in_channels, out_channels, 3, 2, 1)
        self.p7 = nn.Conv2d(out_channels, out_channels, 3, 2, 1)
        for module in (self.p6, self.p7):
            nn.init.kaiming_uniform_(module.weight, a=1)
            nn.init.constant_(module.bias, 0)
        self.use_P5 = in_channels == out_channels

    def forward(self, p, c, names):
        x = p[-1] if self.use_P5 else c[-1]
        p6 = self.p6(x)
        p7 = self.p7(F.relu(p6))
        p.extend([p6, p7])
        names.extend(["p6", "p7"])
        return p, names


class FeaturePyramidNetwork(nn.Module):
    """Top-down pathway with lateral 1x1 connections and 3x3 output convolutions.

    Args:
        in_channels_list (list of int): channels of each input level, lowest first.
        out_channels (int): channels of every output level.
        extra_blocks (ExtraFPNBlock, optional): adds levels on top.
        norm_layer (callable, optional): a norm after each convolution.

    Examples::

        >>> fpn = FeaturePyramidNetwork([10, 20, 30], 5)
        >>> x = OrderedDict(feat0=ember.rand(1, 10, 64, 64), feat2=ember.rand(1, 20, 16, 16),
        ...                 feat3=ember.rand(1, 30, 8, 8))
        >>> [(k, tuple(v.shape)) for k, v in fpn(x).items()]
        [('feat0', (1, 5, 64, 64)), ('feat2', (1, 5, 16, 16)), ('feat3', (1, 5, 8, 8))]
    """

    _version = 2

    def __init__(self, in_channels_list, out_channels: int, extra_blocks=None, norm_layer=None):
        super().__init__()
        self.inner_blocks = nn.ModuleList()
        self.layer_blocks = nn.ModuleList()
        for in_channels in in_channels_list:
            if in_channels == 0:
                raise ValueError("in_channels=0 is currently not supported")
            self.inner_blocks.append(Conv2dNormActivation(
                in_channels, out_channels, kernel_size=1, padding=0, norm_layer=norm_layer,
                activation_layer=None))
            self.layer_blocks.append(Conv2dNormActivation(
                out_channels, out_channels, kernel_size=3, norm_layer=norm_layer,
                activation_layer=None))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_uniform_(m.weight, a=1)
                if m.bias is not None:
                    nn.init.constant_(m.bias, 0)
        if extra_blocks is not None and not isinstance(extra_blocks, ExtraFPNBlock):
            raise TypeError(f"extra_blocks should be of type ExtraFPNBlock not "
                            f"{type(extra_blocks)}")
        self.extra_blocks = extra_blocks

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # Checkpoints of version 1 hold the convolutions directly ("inner_blocks.0.weight").
        version = local_metadata.get("version", None) if local_metadata else None
        if version is None or version < 2:
            for block in ("inner_blocks", "layer_blocks"):
                for i in range(len(self.inner_blocks)):
                    for kind in ("weight", "bias"):
                        old = f"{prefix}{block}.{i}.{kind}"
                        if old in state_dict:
                            state_dict[f"{prefix}{block}.{i}.0.{kind}"] = state_dict.pop(old)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def forward(self, x):
        """Args: x (OrderedDict[str, Tensor]): the levels, lowest first. Returns the FPN levels
        under the same names (and the extra blocks' names)."""
        names = list(x.keys())
        feats = list(x.values())
        last_inner = self.inner_blocks[-1](feats[-1])
        results = [self.layer_blocks[-1](last_inner)]
        for idx in range(len(feats) - 2, -1, -1):
            lateral = self.inner_blocks[idx](feats[idx])
            top_down = F.interpolate(last_inner, size=tuple(lateral.shape[-2:]), mode="nearest")
            last_inner = lateral + top_down
            results.insert(0, self.layer_blocks[idx](last_inner))
        if self.extra_blocks is not None:
            results, names = self.extra_blocks(results, feats, names)
        return OrderedDict(zip(names, results))

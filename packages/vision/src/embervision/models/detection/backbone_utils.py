"""Backbones of the detection models: ResNet and MobileNet feature extractors with or without
a Feature Pyramid Network."""

from __future__ import annotations

import warnings

from ember import nn
from embervision.models import mobilenetv2, mobilenetv3, resnet
from embervision.models._utils import IntermediateLayerGetter, _mobilenet_stage_indices
from embervision.ops import misc as misc_nn_ops
from embervision.ops.feature_pyramid_network import (
    ExtraFPNBlock,
    FeaturePyramidNetwork,
    LastLevelMaxPool,
)

__all__ = ["BackboneWithFPN", "mobilenet_backbone", "resnet_fpn_backbone"]


class BackboneWithFPN(nn.Module):
    """A backbone's intermediate layers (``body``) followed by an FPN (``fpn``); the forward
    returns the FPN's OrderedDict of maps, all with ``out_channels`` channels.

    Args:
        backbone (nn.Module), return_layers (dict): the children of ``backbone`` returned,
            and their names.
        in_channels_list (list of int): their channels.
        out_channels (int): the FPN's channels.
        extra_blocks (ExtraFPNBlock, optional): Default: ``LastLevelMaxPool()``.
        norm_layer (callable, optional): the FPN's norm.
    """

    def __init__(self, backbone: nn.Module, return_layers: dict, in_channels_list,
                 out_channels: int, extra_blocks: ExtraFPNBlock | None = None,
                 norm_layer=None) -> None:
        super().__init__()
        if extra_blocks is None:
            extra_blocks = LastLevelMaxPool()
        self.body = IntermediateLayerGetter(backbone, return_layers=return_layers)
        self.fpn = FeaturePyramidNetwork(in_channels_list=in_channels_list,
                                         out_channels=out_channels, extra_blocks=extra_blocks,
                                         norm_layer=norm_layer)
        self.out_channels = out_channels

    def forward(self, x):
        return self.fpn(self.body(x))


def resnet_fpn_backbone(*, backbone_name: str, weights, norm_layer=misc_nn_ops.FrozenBatchNorm2d,
                        trainable_layers: int = 3, returned_layers=None,
                        extra_blocks: ExtraFPNBlock | None = None) -> BackboneWithFPN:
    """A ResNet (``"resnet50"``...) with an FPN on top, its first layers frozen.

    Args:
        backbone_name (str), weights (WeightsEnum or None): the ResNet and its weights.
        norm_layer (callable): Default: FrozenBatchNorm2d.
        trainable_layers (int): how many of the last stages train (0 to 5). Default: 3.
        returned_layers (list of int, optional): the stages (1 to 4) fed to the FPN.
            Default: ``[1, 2, 3, 4]``.
        extra_blocks (ExtraFPNBlock, optional): Default: ``LastLevelMaxPool()``.
    """
    backbone = resnet.__dict__[backbone_name](weights=weights, norm_layer=norm_layer)
    return _resnet_fpn_extractor(backbone, trainable_layers, returned_layers, extra_blocks)


def _resnet_fpn_extractor(backbone, trainable_layers: int, returned_layers=None,
                          extra_blocks=None, norm_layer=None) -> BackboneWithFPN:
    if trainable_layers < 0 or trainable_layers > 5:
        raise ValueError(f"Trainable layers should be in the range [0,5], got {trainable_layers}")
    layers_to_train = ["layer4", "layer3", "layer2", "layer1", "conv1"][:trainable_layers]
    if trainable_layers == 5:
        layers_to_train.append("bn1")
    for name, parameter in backbone.named_parameters():
        if all(not name.startswith(layer) for layer in layers_to_train):
            parameter.requires_grad_(False)
    if extra_blocks is None:
        extra_blocks = LastLevelMaxPool()
    if returned_layers is None:
        returned_layers = [1, 2, 3, 4]
    if min(returned_layers) <= 0 or max(returned_layers) >= 5:
        raise ValueError(f"Each returned layer should be in the range [1,4]. Got {returned_layers}")
    return_layers = {f"layer{k}": str(v) for v, k in enumerate(returned_layers)}
    in_channels_stage2 = backbone.inplanes // 8
    in_channels_list = [in_channels_stage2 * 2 ** (i - 1) for i in returned_layers]
    return BackboneWithFPN(backbone, return_layers, in_channels_list, 256,
                           extra_blocks=extra_blocks, norm_layer=norm_layer)


def _validate_trainable_layers(is_trained: bool, trainable_backbone_layers, max_value: int,
                               default_value: int) -> int:
    if not is_trained:
        if trainable_backbone_layers is not None:
            warnings.warn(
                "Changing trainable_backbone_layers has no effect if neither pretrained nor "
                "pretrained_backbone have been set to True, falling back to "
                f"trainable_backbone_layers={max_value} so that all layers are trainable",
                stacklevel=3)
        trainable_backbone_layers = max_value
    if trainable_backbone_layers is None:
        trainable_backbone_layers = default_value
    if trainable_backbone_layers < 0 or trainable_backbone_layers > max_value:
        raise ValueError(f"Trainable backbone layers should be in the range [0,{max_value}], "
                         f"got {trainable_backbone_layers} ")
    return trainable_backbone_layers


def _freeze_stages(backbone, stage_indices, trainable_layers: int) -> None:
    # Freezes the layers before the last ``trainable_layers`` stages (all with 0).
    num_stages = len(stage_indices)
    freeze_before = (len(backbone) if trainable_layers == 0
                     else stage_indices[num_stages - trainable_layers])
    for block in backbone[:freeze_before]:
        for parameter in block.parameters():
            parameter.requires_grad_(False)


def mobilenet_backbone(*, backbone_name: str, weights, fpn: bool,
                       norm_layer=misc_nn_ops.FrozenBatchNorm2d, trainable_layers: int = 2,
                       returned_layers=None, extra_blocks: ExtraFPNBlock | None = None):
    """A MobileNet (``"mobilenet_v2"``, ``"mobilenet_v3_large"``...) feature extractor,
    with an FPN over its last stages (``fpn=True``) or a 1x1 convolution to 256 channels."""
    module = mobilenetv2 if backbone_name == "mobilenet_v2" else mobilenetv3
    backbone = module.__dict__[backbone_name](weights=weights, norm_layer=norm_layer)
    return _mobilenet_extractor(backbone, fpn, trainable_layers, returned_layers, extra_blocks)


def _mobilenet_extractor(backbone, fpn: bool, trainable_layers: int, returned_layers=None,
                         extra_blocks=None, norm_layer=None):
    backbone = backbone.features
    stage_indices = _mobilenet_stage_indices(backbone)
    num_stages = len(stage_indices)
    if trainable_layers < 0 or trainable_layers > num_stages:
        raise ValueError(f"Trainable layers should be in the range [0,{num_stages}], got "
                         f"{trainable_layers} ")
    _freeze_stages(backbone, stage_indices, trainable_layers)
    out_channels = 256
    if fpn:
        if extra_blocks is None:
            extra_blocks = LastLevelMaxPool()
        if returned_layers is None:
            returned_layers = [num_stages - 2, num_stages - 1]
        if min(returned_layers) < 0 or max(returned_layers) >= num_stages:
            raise ValueError(f"Each returned layer should be in the range [0,{num_stages - 1}], "
                             f"got {returned_layers} ")
        return_layers = {f"{stage_indices[k]}": str(v) for v, k in enumerate(returned_layers)}
        in_channels_list = [backbone[stage_indices[i]].out_channels for i in returned_layers]
        return BackboneWithFPN(backbone, return_layers, in_channels_list, out_channels,
                               extra_blocks=extra_blocks, norm_layer=norm_layer)
    m = nn.Sequential(backbone, nn.Conv2d(backbone[-1].out_channels, out_channels, 1))
    m.out_channels = out_channels
    return m

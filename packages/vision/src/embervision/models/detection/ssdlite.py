"""SSDlite (Sandler et al., 2018; Howard et al., 2019) with a MobileNetV3-Large backbone."""

from __future__ import annotations

from collections import OrderedDict
from functools import partial

from ember import nn
from embervision.models._api import WeightsEnum, register_model, weights_of
from embervision.models._utils import _mobilenet_stage_indices
from embervision.models.detection import _utils as det_utils
from embervision.models.detection._utils import _RECIPES, detection_weights
from embervision.models.detection.anchor_utils import DefaultBoxGenerator
from embervision.models.detection.backbone_utils import (
    _freeze_stages,
    _validate_trainable_layers,
)
from embervision.models.detection.faster_rcnn import _load, _prepare
from embervision.models.detection.ssd import SSD, SSDScoringHead, _drop_size
from embervision.models.mobilenetv3 import MobileNet_V3_Large_Weights, mobilenet_v3_large
from embervision.ops.misc import Conv2dNormActivation

__all__ = ["SSDLite320_MobileNet_V3_Large_Weights", "ssdlite320_mobilenet_v3_large"]
_MOBILENET_V1 = MobileNet_V3_Large_Weights.IMAGENET1K_V1


def _prediction_block(in_channels: int, out_channels: int, kernel_size: int, norm_layer):
    # A depthwise 3x3 convolution (norm, ReLU6), then a 1x1 projection.
    return nn.Sequential(
        Conv2dNormActivation(in_channels, in_channels, kernel_size=kernel_size,
                             groups=in_channels, norm_layer=norm_layer,
                             activation_layer=nn.ReLU6),
        nn.Conv2d(in_channels, out_channels, 1))


def _extra_block(in_channels: int, out_channels: int, norm_layer):
    # 1x1 to half the channels, depthwise 3x3 with stride 2, 1x1 to out_channels (ReLU6).
    mid = out_channels // 2
    act = nn.ReLU6
    return nn.Sequential(
        Conv2dNormActivation(in_channels, mid, kernel_size=1, norm_layer=norm_layer,
                             activation_layer=act),
        Conv2dNormActivation(mid, mid, kernel_size=3, stride=2, groups=mid,
                             norm_layer=norm_layer, activation_layer=act),
        Conv2dNormActivation(mid, out_channels, kernel_size=1, norm_layer=norm_layer,
                             activation_layer=act))


def _normal_init(conv: nn.Module) -> None:
    for layer in conv.modules():
        if isinstance(layer, nn.Conv2d):
            nn.init.normal_(layer.weight, mean=0.0, std=0.03)
            if layer.bias is not None:
                nn.init.constant_(layer.bias, 0.0)


class SSDLiteClassificationHead(SSDScoringHead):
    """A depthwise-separable prediction block to ``num_anchors * num_classes`` logits per
    map.

    Args:
        in_channels (list of int), num_anchors (list of int), num_classes (int),
        norm_layer (callable).
    """

    def __init__(self, in_channels, num_anchors, num_classes: int, norm_layer) -> None:
        cls_logits = nn.ModuleList([_prediction_block(c, num_classes * a, 3, norm_layer)
                                    for c, a in zip(in_channels, num_anchors)])
        _normal_init(cls_logits)
        super().__init__(cls_logits, num_classes)


class SSDLiteRegressionHead(SSDScoringHead):
    """A depthwise-separable prediction block to 4 deltas per anchor per map.

    Args:
        in_channels (list of int), num_anchors (list of int), norm_layer (callable).
    """

    def __init__(self, in_channels, num_anchors, norm_layer) -> None:
        bbox_reg = nn.ModuleList([_prediction_block(c, 4 * a, 3, norm_layer)
                                  for c, a in zip(in_channels, num_anchors)])
        _normal_init(bbox_reg)
        super().__init__(bbox_reg, 4)


class SSDLiteHead(nn.Module):
    """The classification and regression heads of SSDlite.

    Args:
        in_channels (list of int), num_anchors (list of int), num_classes (int),
        norm_layer (callable).
    """

    def __init__(self, in_channels, num_anchors, num_classes: int, norm_layer) -> None:
        super().__init__()
        self.classification_head = SSDLiteClassificationHead(in_channels, num_anchors,
                                                             num_classes, norm_layer)
        self.regression_head = SSDLiteRegressionHead(in_channels, num_anchors, norm_layer)

    def forward(self, x):
        return {"bbox_regression": self.regression_head(x),
                "cls_logits": self.classification_head(x)}


class SSDLiteFeatureExtractorMobileNet(nn.Module):
    """MobileNet's features cut at the expansion of the C4 block (MobileNetV3 paper, 6.3),
    then four extra blocks: six maps.

    Args:
        backbone (nn.Module): the MobileNet's ``features``.
        c4_pos (int): the index of the C4 block.
        norm_layer (callable), width_mult (float): 1.0. min_depth (int): 16.
    """

    def __init__(self, backbone: nn.Module, c4_pos: int, norm_layer, width_mult: float = 1.0,
                 min_depth: int = 16) -> None:
        super().__init__()
        if backbone[c4_pos].use_res_connect:
            raise ValueError("backbone[c4_pos].use_res_connect should be False")
        self.features = nn.Sequential(
            nn.Sequential(*backbone[:c4_pos], backbone[c4_pos].block[0]),
            nn.Sequential(backbone[c4_pos].block[1:], *backbone[c4_pos + 1:]),
        )

        def get_depth(d):
            return max(min_depth, int(d * width_mult))

        extra = nn.ModuleList([
            _extra_block(backbone[-1].out_channels, get_depth(512), norm_layer),
            _extra_block(get_depth(512), get_depth(256), norm_layer),
            _extra_block(get_depth(256), get_depth(256), norm_layer),
            _extra_block(get_depth(256), get_depth(128), norm_layer),
        ])
        _normal_init(extra)
        self.extra = extra

    def forward(self, x):
        output = []
        for block in [*self.features, *self.extra]:
            x = block(x)
            output.append(x)
        return OrderedDict([(str(i), v) for i, v in enumerate(output)])


def _mobilenet_extractor(backbone, trainable_layers: int, norm_layer):
    backbone = backbone.features
    stage_indices = _mobilenet_stage_indices(backbone)
    num_stages = len(stage_indices)
    if not 0 <= trainable_layers <= num_stages:
        raise ValueError(f"trainable_layers should be in the range [0, {num_stages}], instead "
                         f"got {trainable_layers}")
    _freeze_stages(backbone, stage_indices, trainable_layers)
    return SSDLiteFeatureExtractorMobileNet(backbone, stage_indices[-2], norm_layer)


class SSDLite320_MobileNet_V3_Large_Weights(WeightsEnum):
    COCO_V1 = detection_weights(
        "ssdlite320_mobilenet_v3_large_coco-a79551df", 3440060,
        f"{_RECIPES}#ssdlite320-mobilenetv3-large", {"box_map": 21.3}, 0.583, 13.418,
        "These weights were produced by following a similar training recipe as on the paper.")
    DEFAULT = COCO_V1


@register_model()
@weights_of(SSDLite320_MobileNet_V3_Large_Weights)
def ssdlite320_mobilenet_v3_large(
        *, weights: SSDLite320_MobileNet_V3_Large_Weights | None = None, progress: bool = True,
        num_classes: int | None = None,
        weights_backbone: MobileNet_V3_Large_Weights | None = _MOBILENET_V1,
        trainable_backbone_layers: int | None = None, norm_layer=None, **kwargs) -> SSD:
    """SSDlite at 320x320 with a MobileNetV3-Large backbone, from `Searching for MobileNetV3
    <https://arxiv.org/abs/1905.02244>`_ and `MobileNetV2
    <https://arxiv.org/abs/1801.04381>`_.

    Args:
        weights (:class:`SSDLite320_MobileNet_V3_Large_Weights`, optional).
        progress (bool): Default: True.
        num_classes (int, optional): with the background. Default: 91.
        weights_backbone (:class:`MobileNet_V3_Large_Weights`, optional): Default:
            IMAGENET1K_V1; without it the backbone has the reduced tail.
        trainable_backbone_layers (int, optional): 0 to 6. Default: 6.
        norm_layer (callable, optional): Default: ``BatchNorm2d(eps=0.001, momentum=0.03)``.
        **kwargs: passed to :class:`SSD` (and to the backbone's builder, as torchvision does).
    """
    weights = SSDLite320_MobileNet_V3_Large_Weights.verify(weights)
    weights_backbone = MobileNet_V3_Large_Weights.verify(weights_backbone)
    _drop_size(kwargs)
    weights_backbone, num_classes = _prepare(weights, weights_backbone, num_classes)
    trainable = _validate_trainable_layers(weights is not None or weights_backbone is not None,
                                           trainable_backbone_layers, 6, 6)
    # Without a pretrained backbone, the reduced tail (MobileNetV3 paper, table 6).
    reduce_tail = weights_backbone is None
    if norm_layer is None:
        norm_layer = partial(nn.BatchNorm2d, eps=0.001, momentum=0.03)
    backbone = mobilenet_v3_large(weights=weights_backbone, progress=progress,
                                  norm_layer=norm_layer, reduced_tail=reduce_tail, **kwargs)
    if weights_backbone is None:
        _normal_init(backbone)
    backbone = _mobilenet_extractor(backbone, trainable, norm_layer)
    size = (320, 320)
    anchor_generator = DefaultBoxGenerator([[2, 3] for _ in range(6)], min_ratio=0.2,
                                           max_ratio=0.95)
    out_channels = det_utils.retrieve_out_channels(backbone, size)
    num_anchors = anchor_generator.num_anchors_per_location()
    if len(out_channels) != len(anchor_generator.aspect_ratios):
        raise ValueError(
            f"The length of the output channels from the backbone {len(out_channels)} do not "
            "match the length of the anchor generator aspect ratios "
            f"{len(anchor_generator.aspect_ratios)}")
    # mean/std take the inputs from [0, 1] to [-1, 1].
    defaults = {"score_thresh": 0.001, "nms_thresh": 0.55, "detections_per_img": 300,
                "topk_candidates": 300, "image_mean": [0.5, 0.5, 0.5],
                "image_std": [0.5, 0.5, 0.5]}
    model = SSD(backbone, anchor_generator, size, num_classes,
                head=SSDLiteHead(out_channels, num_anchors, num_classes, norm_layer),
                **{**defaults, **kwargs})
    _load(model, weights, progress)
    return model

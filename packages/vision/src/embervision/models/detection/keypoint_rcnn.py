"""Keypoint R-CNN (He et al., 2017) with a ResNet-50-FPN backbone."""

from __future__ import annotations

from ember import nn
from ember.nn import functional as F
from embervision.models._api import WeightsEnum, register_model, weights_of
from embervision.models._meta import COCO_PERSON_KEYPOINT_NAMES
from embervision.models._utils import _ovewrite_value_param
from embervision.models.detection._utils import _RECIPES, detection_weights, overwrite_eps
from embervision.models.detection.faster_rcnn import (
    FasterRCNN,
    _faster_rcnn_arguments,
    _load,
    _resnet50_fpn_backbone,
)
from embervision.models.resnet import ResNet50_Weights
from embervision.ops.poolers import MultiScaleRoIAlign

__all__ = ["KeypointRCNN", "KeypointRCNN_ResNet50_FPN_Weights", "keypointrcnn_resnet50_fpn"]

_RESNET50_V1 = ResNet50_Weights.IMAGENET1K_V1


class KeypointRCNN(FasterRCNN):
    """Faster R-CNN with a keypoint branch: each detection also gets ``keypoints``
    (``(N, K, 3)``: x, y, visibility) and ``keypoints_scores``; training targets need
    ``keypoints`` and the losses gain ``loss_keypoint``.

    Args: those of :class:`FasterRCNN` (``min_size`` defaults to 640-800, one drawn per
        training image), and
        keypoint_roi_pool (MultiScaleRoIAlign, optional): 14x14 on "0"-"3" by default.
        keypoint_head (nn.Module, optional): eight 3x3 convolutions of 512 by default.
        keypoint_predictor (nn.Module, optional): KeypointRCNNPredictor(512, num_keypoints).
        num_keypoints (int, optional): Default: 17.
    """

    def __init__(self, backbone, num_classes=None, min_size=None, max_size=1333, image_mean=None,
                 image_std=None, rpn_anchor_generator=None, rpn_head=None,
                 rpn_pre_nms_top_n_train=2000, rpn_pre_nms_top_n_test=1000,
                 rpn_post_nms_top_n_train=2000, rpn_post_nms_top_n_test=1000,
                 rpn_nms_thresh=0.7, rpn_fg_iou_thresh=0.7, rpn_bg_iou_thresh=0.3,
                 rpn_batch_size_per_image=256, rpn_positive_fraction=0.5, rpn_score_thresh=0.0,
                 box_roi_pool=None, box_head=None, box_predictor=None, box_score_thresh=0.05,
                 box_nms_thresh=0.5, box_detections_per_img=100, box_fg_iou_thresh=0.5,
                 box_bg_iou_thresh=0.5, box_batch_size_per_image=512, box_positive_fraction=0.25,
                 bbox_reg_weights=None, keypoint_roi_pool=None, keypoint_head=None,
                 keypoint_predictor=None, num_keypoints=None, **kwargs) -> None:
        if not isinstance(keypoint_roi_pool, (MultiScaleRoIAlign, type(None))):
            raise TypeError("keypoint_roi_pool should be of type MultiScaleRoIAlign or None "
                            f"instead of {type(keypoint_roi_pool)}")
        if min_size is None:
            min_size = (640, 672, 704, 736, 768, 800)
        if num_keypoints is not None:
            if keypoint_predictor is not None:
                raise ValueError("num_keypoints should be None when keypoint_predictor is "
                                 "specified")
        else:
            num_keypoints = 17
        out_channels = backbone.out_channels
        if keypoint_roi_pool is None:
            keypoint_roi_pool = MultiScaleRoIAlign(featmap_names=["0", "1", "2", "3"],
                                                   output_size=14, sampling_ratio=2)
        if keypoint_head is None:
            keypoint_head = KeypointRCNNHeads(out_channels, tuple(512 for _ in range(8)))
        if keypoint_predictor is None:
            keypoint_predictor = KeypointRCNNPredictor(512, num_keypoints)
        super().__init__(**_faster_rcnn_arguments(locals()), **kwargs)
        self.roi_heads.keypoint_roi_pool = keypoint_roi_pool
        self.roi_heads.keypoint_head = keypoint_head
        self.roi_heads.keypoint_predictor = keypoint_predictor


class KeypointRCNNHeads(nn.Sequential):
    """3x3 convolutions with ReLU on the pooled keypoint features.

    Args:
        in_channels (int), layers (list of int): the widths.
    """

    def __init__(self, in_channels: int, layers) -> None:
        blocks = []
        previous = in_channels
        for out_channels in layers:
            blocks.append(nn.Conv2d(previous, out_channels, 3, stride=1, padding=1))
            blocks.append(nn.ReLU(inplace=True))
            previous = out_channels
        super().__init__(*blocks)
        for m in self.children():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                nn.init.constant_(m.bias, 0)


class KeypointRCNNPredictor(nn.Module):
    """A 4x4 stride-2 transposed convolution to one heatmap per keypoint, then a bilinear 2x
    upsampling.

    Args:
        in_channels (int), num_keypoints (int).
    """

    def __init__(self, in_channels: int, num_keypoints: int) -> None:
        super().__init__()
        deconv_kernel = 4
        self.kps_score_lowres = nn.ConvTranspose2d(in_channels, num_keypoints, deconv_kernel,
                                                   stride=2, padding=deconv_kernel // 2 - 1)
        nn.init.kaiming_normal_(self.kps_score_lowres.weight, mode="fan_out",
                                nonlinearity="relu")
        nn.init.constant_(self.kps_score_lowres.bias, 0)
        self.up_scale = 2
        self.out_channels = num_keypoints

    def forward(self, x):
        x = self.kps_score_lowres(x)
        return F.interpolate(x, scale_factor=float(self.up_scale), mode="bilinear",
                             align_corners=False, recompute_scale_factor=False)


_COCO_PERSON_CATEGORIES = ["no person", "person"]


def _keypoint_weights(stem, recipe, box_map, kp_map, ops, docs):
    return detection_weights(stem, 59137258, recipe, {"box_map": box_map, "kp_map": kp_map},
                             ops, 226.054, docs, categories=_COCO_PERSON_CATEGORIES,
                             keypoint_names=COCO_PERSON_KEYPOINT_NAMES)


class KeypointRCNN_ResNet50_FPN_Weights(WeightsEnum):
    COCO_LEGACY = _keypoint_weights(
        "keypointrcnn_resnet50_fpn_coco-9f466800", "https://github.com/pytorch/vision/issues/1606",
        50.6, 61.1, 133.924,
        # torchvision's text, with its indentation.
        "\n                These weights were produced by following a similar training recipe "
        "as on the paper but use a checkpoint\n                from an early epoch.\n"
        "            ")
    COCO_V1 = _keypoint_weights(
        "keypointrcnn_resnet50_fpn_coco-fc266e95", f"{_RECIPES}#keypoint-r-cnn", 54.6, 65.0,
        137.42, "These weights were produced by following a similar training recipe as on the "
        "paper.")
    DEFAULT = COCO_V1


@register_model()
@weights_of(KeypointRCNN_ResNet50_FPN_Weights)
def keypointrcnn_resnet50_fpn(*, weights: KeypointRCNN_ResNet50_FPN_Weights | None = None,
                              progress: bool = True, num_classes: int | None = None,
                              num_keypoints: int | None = None,
                              weights_backbone: ResNet50_Weights | None = _RESNET50_V1,
                              trainable_backbone_layers: int | None = None,
                              **kwargs) -> KeypointRCNN:
    """Keypoint R-CNN with a ResNet-50-FPN backbone, from `Mask R-CNN
    <https://arxiv.org/abs/1703.06870>`_.

    Args: those of :func:`~embervision.models.detection.fasterrcnn_resnet50_fpn`
        (``num_classes`` defaults to 2: no person, person), and
        num_keypoints (int, optional): Default: 17.
    """
    weights = KeypointRCNN_ResNet50_FPN_Weights.verify(weights)
    weights_backbone = ResNet50_Weights.verify(weights_backbone)
    if weights is not None:
        weights_backbone = None
        num_classes = _ovewrite_value_param("num_classes", num_classes,
                                            len(weights.meta["categories"]))
        num_keypoints = _ovewrite_value_param("num_keypoints", num_keypoints,
                                              len(weights.meta["keypoint_names"]))
    else:
        num_classes = 2 if num_classes is None else num_classes
        num_keypoints = 17 if num_keypoints is None else num_keypoints
    backbone = _resnet50_fpn_backbone(weights, weights_backbone, progress,
                                      trainable_backbone_layers)
    model = KeypointRCNN(backbone, num_classes, num_keypoints=num_keypoints, **kwargs)
    _load(model, weights, progress)
    if weights == KeypointRCNN_ResNet50_FPN_Weights.COCO_V1:
        overwrite_eps(model, 0.0)
    return model

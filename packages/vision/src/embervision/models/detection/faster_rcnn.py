"""Faster R-CNN (Ren et al., 2015) with ResNet-50-FPN (v1 and v2) and MobileNetV3-Large-FPN
backbones."""

from __future__ import annotations

from ember import nn
from ember.nn import functional as F
from embervision.models._api import WeightsEnum, register_model, weights_of
from embervision.models._utils import _ovewrite_value_param
from embervision.models.detection._utils import (
    _RECIPES,
    _assert,
    detection_weights,
    overwrite_eps,
)
from embervision.models.detection.anchor_utils import AnchorGenerator
from embervision.models.detection.backbone_utils import (
    _mobilenet_extractor,
    _resnet_fpn_extractor,
    _validate_trainable_layers,
)
from embervision.models.detection.generalized_rcnn import GeneralizedRCNN
from embervision.models.detection.roi_heads import RoIHeads
from embervision.models.detection.rpn import RegionProposalNetwork, RPNHead
from embervision.models.detection.transform import detection_transform
from embervision.models.mobilenetv3 import MobileNet_V3_Large_Weights, mobilenet_v3_large
from embervision.models.resnet import ResNet50_Weights, resnet50
from embervision.ops import misc as misc_nn_ops
from embervision.ops.poolers import MultiScaleRoIAlign

__all__ = [
    "FasterRCNN",
    "FasterRCNN_MobileNet_V3_Large_320_FPN_Weights",
    "FasterRCNN_MobileNet_V3_Large_FPN_Weights",
    "FasterRCNN_ResNet50_FPN_V2_Weights",
    "FasterRCNN_ResNet50_FPN_Weights",
    "fasterrcnn_mobilenet_v3_large_320_fpn",
    "fasterrcnn_mobilenet_v3_large_fpn",
    "fasterrcnn_resnet50_fpn",
    "fasterrcnn_resnet50_fpn_v2",
]

_RESNET50_V1 = ResNet50_Weights.IMAGENET1K_V1
_MOBILENET_V1 = MobileNet_V3_Large_Weights.IMAGENET1K_V1


def _default_anchorgen() -> AnchorGenerator:
    anchor_sizes = ((32,), (64,), (128,), (256,), (512,))
    return AnchorGenerator(anchor_sizes, ((0.5, 1.0, 2.0),) * len(anchor_sizes))


class FasterRCNN(GeneralizedRCNN):
    """Faster R-CNN: an RPN proposes boxes on the backbone's feature maps and a box head
    classifies and refines them.

    The input is a list of ``(C, H, W)`` float images in ``[0, 1]``, of any sizes. In training
    the targets are a list of dicts with ``boxes`` (``(N, 4)`` xyxy float) and ``labels``
    (``(N,)`` int64) and the model returns the losses ``loss_classifier``, ``loss_box_reg``,
    ``loss_objectness`` and ``loss_rpn_box_reg``; in eval mode it returns one dict per image
    with ``boxes``, ``labels`` and ``scores``.

    Args:
        backbone (nn.Module): returns a tensor or an OrderedDict of maps, and has
            ``out_channels``.
        num_classes (int, optional): with the background; None when ``box_predictor`` is given.
        min_size (int), max_size (int): the image resizing. Default: 800, 1333.
        image_mean, image_std (3 floats, optional): Default: ImageNet's.
        rpn_anchor_generator, rpn_head: Default: 5 sizes x 3 ratios, RPNHead.
        rpn_pre_nms_top_n_train/test, rpn_post_nms_top_n_train/test (int): 2000/1000.
        rpn_nms_thresh (float): 0.7. rpn_fg_iou_thresh, rpn_bg_iou_thresh: 0.7, 0.3.
        rpn_batch_size_per_image (int): 256. rpn_positive_fraction: 0.5.
        rpn_score_thresh (float): 0.0.
        box_roi_pool, box_head, box_predictor: Default: MultiScaleRoIAlign(7) on "0"-"3",
            TwoMLPHead(1024), FastRCNNPredictor.
        box_score_thresh (float): 0.05. box_nms_thresh: 0.5. box_detections_per_img: 100.
        box_fg_iou_thresh, box_bg_iou_thresh: 0.5, 0.5. box_batch_size_per_image: 512.
        box_positive_fraction: 0.25. bbox_reg_weights (4 floats, optional): (10, 10, 5, 5).
        **kwargs: passed to GeneralizedRCNNTransform (``size_divisible``, ``fixed_size``...).
    """

    def __init__(self, backbone, num_classes=None, min_size=800, max_size=1333, image_mean=None,
                 image_std=None, rpn_anchor_generator=None, rpn_head=None,
                 rpn_pre_nms_top_n_train=2000, rpn_pre_nms_top_n_test=1000,
                 rpn_post_nms_top_n_train=2000, rpn_post_nms_top_n_test=1000,
                 rpn_nms_thresh=0.7, rpn_fg_iou_thresh=0.7, rpn_bg_iou_thresh=0.3,
                 rpn_batch_size_per_image=256, rpn_positive_fraction=0.5, rpn_score_thresh=0.0,
                 box_roi_pool=None, box_head=None, box_predictor=None, box_score_thresh=0.05,
                 box_nms_thresh=0.5, box_detections_per_img=100, box_fg_iou_thresh=0.5,
                 box_bg_iou_thresh=0.5, box_batch_size_per_image=512, box_positive_fraction=0.25,
                 bbox_reg_weights=None, **kwargs) -> None:
        if not hasattr(backbone, "out_channels"):
            raise ValueError("backbone should contain an attribute out_channels specifying the "
                             "number of output channels (assumed to be the same for all the "
                             "levels)")
        if not isinstance(rpn_anchor_generator, (AnchorGenerator, type(None))):
            raise TypeError("rpn_anchor_generator should be of type AnchorGenerator or None "
                            f"instead of {type(rpn_anchor_generator)}")
        if not isinstance(box_roi_pool, (MultiScaleRoIAlign, type(None))):
            raise TypeError("box_roi_pool should be of type MultiScaleRoIAlign or None instead "
                            f"of {type(box_roi_pool)}")
        if num_classes is not None:
            if box_predictor is not None:
                raise ValueError("num_classes should be None when box_predictor is specified")
        elif box_predictor is None:
            raise ValueError("num_classes should not be None when box_predictor is not "
                             "specified")
        out_channels = backbone.out_channels
        if rpn_anchor_generator is None:
            rpn_anchor_generator = _default_anchorgen()
        if rpn_head is None:
            rpn_head = RPNHead(out_channels, rpn_anchor_generator.num_anchors_per_location()[0])
        rpn = RegionProposalNetwork(
            rpn_anchor_generator, rpn_head, rpn_fg_iou_thresh, rpn_bg_iou_thresh,
            rpn_batch_size_per_image, rpn_positive_fraction,
            {"training": rpn_pre_nms_top_n_train, "testing": rpn_pre_nms_top_n_test},
            {"training": rpn_post_nms_top_n_train, "testing": rpn_post_nms_top_n_test},
            rpn_nms_thresh, score_thresh=rpn_score_thresh)
        if box_roi_pool is None:
            box_roi_pool = MultiScaleRoIAlign(featmap_names=["0", "1", "2", "3"], output_size=7,
                                              sampling_ratio=2)
        if box_head is None:
            resolution = box_roi_pool.output_size[0]
            box_head = TwoMLPHead(out_channels * resolution ** 2, 1024)
        if box_predictor is None:
            box_predictor = FastRCNNPredictor(1024, num_classes)
        roi_heads = RoIHeads(box_roi_pool, box_head, box_predictor, box_fg_iou_thresh,
                             box_bg_iou_thresh, box_batch_size_per_image, box_positive_fraction,
                             bbox_reg_weights, box_score_thresh, box_nms_thresh,
                             box_detections_per_img)
        transform = detection_transform(min_size, max_size, image_mean, image_std, **kwargs)
        super().__init__(backbone, rpn, roi_heads, transform)


class TwoMLPHead(nn.Module):
    """Two fully connected layers with ReLU on the flattened pooled features.

    Args:
        in_channels (int), representation_size (int).
    """

    def __init__(self, in_channels: int, representation_size: int) -> None:
        super().__init__()
        self.fc6 = nn.Linear(in_channels, representation_size)
        self.fc7 = nn.Linear(representation_size, representation_size)

    def forward(self, x):
        x = x.flatten(start_dim=1)
        return F.relu(self.fc7(F.relu(self.fc6(x))))


class FastRCNNConvFCHead(nn.Sequential):
    """Convolutions (with norm and ReLU), then fully connected layers with ReLU (the box head
    of the v2 models).

    Args:
        input_size (tuple): ``(channels, height, width)`` of the pooled features.
        conv_layers (list of int), fc_layers (list of int): the widths.
        norm_layer (callable, optional).
    """

    def __init__(self, input_size, conv_layers, fc_layers, norm_layer=None) -> None:
        in_channels, in_height, in_width = input_size
        blocks = []
        previous = in_channels
        for current in conv_layers:
            blocks.append(misc_nn_ops.Conv2dNormActivation(previous, current,
                                                           norm_layer=norm_layer))
            previous = current
        blocks.append(nn.Flatten())
        previous = previous * in_height * in_width
        for current in fc_layers:
            blocks.append(nn.Linear(previous, current))
            blocks.append(nn.ReLU(inplace=True))
            previous = current
        super().__init__(*blocks)
        for layer in self.modules():
            if isinstance(layer, nn.Conv2d):
                nn.init.kaiming_normal_(layer.weight, mode="fan_out", nonlinearity="relu")
                if layer.bias is not None:
                    nn.init.zeros_(layer.bias)


class FastRCNNPredictor(nn.Module):
    """Class logits and per-class box deltas from the box head's features.

    Args:
        in_channels (int), num_classes (int): with the background.
    """

    def __init__(self, in_channels: int, num_classes: int) -> None:
        super().__init__()
        self.cls_score = nn.Linear(in_channels, num_classes)
        self.bbox_pred = nn.Linear(in_channels, num_classes * 4)

    def forward(self, x):
        if x.dim() == 4:
            _assert(list(x.shape[2:]) == [1, 1], "x has the wrong shape, expecting the last two "
                    f"dimensions to be [1,1] instead of {list(x.shape[2:])}")
        x = x.flatten(1)
        return self.cls_score(x), self.bbox_pred(x)


_DOCS_V1 = "These weights were produced by following a similar training recipe as on the paper."


class FasterRCNN_ResNet50_FPN_Weights(WeightsEnum):
    COCO_V1 = detection_weights("fasterrcnn_resnet50_fpn_coco-258fb6c6", 41755286,
                                f"{_RECIPES}#faster-r-cnn-resnet-50-fpn", {"box_map": 37.0},
                                134.38, 159.743, _DOCS_V1)
    DEFAULT = COCO_V1


class FasterRCNN_ResNet50_FPN_V2_Weights(WeightsEnum):
    COCO_V1 = detection_weights(
        "fasterrcnn_resnet50_fpn_v2_coco-dd69338a", 43712278,
        "https://github.com/pytorch/vision/pull/5763", {"box_map": 46.7}, 280.371, 167.104,
        "These weights were produced using an enhanced training recipe to boost the model "
        "accuracy.")
    DEFAULT = COCO_V1


_DOCS_MOBILE = "These weights were produced by following a similar training recipe as on the paper."


class FasterRCNN_MobileNet_V3_Large_FPN_Weights(WeightsEnum):
    COCO_V1 = detection_weights("fasterrcnn_mobilenet_v3_large_fpn-fb6a3cc7", 19386354,
                                f"{_RECIPES}#faster-r-cnn-mobilenetv3-large-fpn",
                                {"box_map": 32.8}, 4.494, 74.239, _DOCS_MOBILE)
    DEFAULT = COCO_V1


class FasterRCNN_MobileNet_V3_Large_320_FPN_Weights(WeightsEnum):
    COCO_V1 = detection_weights("fasterrcnn_mobilenet_v3_large_320_fpn-907ea3f9", 19386354,
                                f"{_RECIPES}#faster-r-cnn-mobilenetv3-large-320-fpn",
                                {"box_map": 22.8}, 0.719, 74.239, _DOCS_MOBILE)
    DEFAULT = COCO_V1


def _num_classes(weights, num_classes, default: int = 91) -> int:
    if weights is not None:
        return _ovewrite_value_param("num_classes", num_classes,
                                     len(weights.meta["categories"]))
    return default if num_classes is None else num_classes


def _load(model, weights, progress: bool) -> None:
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))


def _resnet50_fpn_backbone(weights, weights_backbone, progress, trainable_backbone_layers,
                           v2: bool = False, returned_layers=None, extra_blocks=None):
    """The ResNet-50-FPN of the builders: FrozenBatchNorm2d in v1 when anything is
    pretrained, BatchNorm2d otherwise (and everywhere in v2, where the FPN has it too)."""
    is_trained = weights is not None or weights_backbone is not None
    trainable = _validate_trainable_layers(is_trained, trainable_backbone_layers, 5, 3)
    if v2:
        backbone = resnet50(weights=weights_backbone, progress=progress)
        return _resnet_fpn_extractor(backbone, trainable, returned_layers, extra_blocks,
                                     norm_layer=nn.BatchNorm2d)
    norm_layer = misc_nn_ops.FrozenBatchNorm2d if is_trained else nn.BatchNorm2d
    backbone = resnet50(weights=weights_backbone, progress=progress, norm_layer=norm_layer)
    return _resnet_fpn_extractor(backbone, trainable, returned_layers, extra_blocks)


@register_model()
@weights_of(FasterRCNN_ResNet50_FPN_Weights)
def fasterrcnn_resnet50_fpn(*, weights: FasterRCNN_ResNet50_FPN_Weights | None = None,
                            progress: bool = True, num_classes: int | None = None,
                            weights_backbone: ResNet50_Weights | None = _RESNET50_V1,
                            trainable_backbone_layers: int | None = None,
                            **kwargs) -> FasterRCNN:
    """Faster R-CNN with a ResNet-50-FPN backbone, from `Faster R-CNN: Towards Real-Time
    Object Detection with Region Proposal Networks <https://arxiv.org/abs/1506.01497>`_.

    Args:
        weights (:class:`FasterRCNN_ResNet50_FPN_Weights`, optional): pretrained weights.
        progress (bool): show a download progress bar. Default: True.
        num_classes (int, optional): with the background. Default: 91.
        weights_backbone (:class:`ResNet50_Weights`, optional): the backbone's weights;
            None for random initialization. Default: IMAGENET1K_V1.
        trainable_backbone_layers (int, optional): 0 to 5 trainable stages from the last;
            3 by default with pretrained weights, 5 without.
        **kwargs: passed to :class:`FasterRCNN`.
    """
    weights = FasterRCNN_ResNet50_FPN_Weights.verify(weights)
    weights_backbone = ResNet50_Weights.verify(weights_backbone)
    return _resnet50_fpn_detector(FasterRCNN, weights, weights_backbone, progress, num_classes,
                                  trainable_backbone_layers, kwargs)


@register_model()
@weights_of(FasterRCNN_ResNet50_FPN_V2_Weights)
def fasterrcnn_resnet50_fpn_v2(*, weights: FasterRCNN_ResNet50_FPN_V2_Weights | None = None,
                               progress: bool = True, num_classes: int | None = None,
                               weights_backbone: ResNet50_Weights | None = None,
                               trainable_backbone_layers: int | None = None,
                               **kwargs) -> FasterRCNN:
    """Faster R-CNN v2 (`Benchmarking Detection Transfer Learning with Vision Transformers
    <https://arxiv.org/abs/2111.11429>`_): BatchNorm in the FPN, two RPN convolutions and a
    four-convolution box head. Arguments as :func:`fasterrcnn_resnet50_fpn`."""
    weights = FasterRCNN_ResNet50_FPN_V2_Weights.verify(weights)
    weights_backbone = ResNet50_Weights.verify(weights_backbone)
    weights_backbone, num_classes = _prepare(weights, weights_backbone, num_classes)
    backbone = _resnet50_fpn_backbone(weights, weights_backbone, progress,
                                      trainable_backbone_layers, v2=True)
    model = FasterRCNN(backbone, num_classes=num_classes, **_v2_parts(backbone.out_channels),
                       **kwargs)
    _load(model, weights, progress)
    return model


def _resnet50_fpn_detector(model_cls, weights, weights_backbone, progress, num_classes,
                           trainable_backbone_layers, kwargs):
    """A v1 R-CNN on ResNet-50-FPN with its weights; the COCO_V1 weights were trained with a
    FrozenBatchNorm2d eps of 0."""
    weights_backbone, num_classes = _prepare(weights, weights_backbone, num_classes)
    backbone = _resnet50_fpn_backbone(weights, weights_backbone, progress,
                                      trainable_backbone_layers)
    model = model_cls(backbone, num_classes=num_classes, **kwargs)
    _load(model, weights, progress)
    if weights is not None and weights.name == "COCO_V1":
        overwrite_eps(model, 0.0)
    return model


def _v2_parts(out_channels: int) -> dict:
    """The v2 RPN (two convolutions) and box head (four convolutions with BatchNorm)."""
    rpn_anchor_generator = _default_anchorgen()
    return {"rpn_anchor_generator": rpn_anchor_generator,
            "rpn_head": RPNHead(out_channels, rpn_anchor_generator.num_anchors_per_location()[0],
                                conv_depth=2),
            "box_head": FastRCNNConvFCHead((out_channels, 7, 7), [256, 256, 256, 256], [1024],
                                           norm_layer=nn.BatchNorm2d)}


def _fasterrcnn_mobilenet_v3_large_fpn(weights, progress, num_classes, weights_backbone,
                                       trainable_backbone_layers, **kwargs) -> FasterRCNN:
    weights_backbone, num_classes = _prepare(weights, weights_backbone, num_classes)
    is_trained = weights is not None or weights_backbone is not None
    trainable = _validate_trainable_layers(is_trained, trainable_backbone_layers, 6, 3)
    norm_layer = misc_nn_ops.FrozenBatchNorm2d if is_trained else nn.BatchNorm2d
    backbone = mobilenet_v3_large(weights=weights_backbone, progress=progress,
                                  norm_layer=norm_layer)
    backbone = _mobilenet_extractor(backbone, True, trainable)
    anchor_sizes = ((32, 64, 128, 256, 512),) * 3
    aspect_ratios = ((0.5, 1.0, 2.0),) * len(anchor_sizes)
    model = FasterRCNN(backbone, num_classes,
                       rpn_anchor_generator=AnchorGenerator(anchor_sizes, aspect_ratios),
                       **kwargs)
    _load(model, weights, progress)
    return model


@register_model()
@weights_of(FasterRCNN_MobileNet_V3_Large_320_FPN_Weights)
def fasterrcnn_mobilenet_v3_large_320_fpn(
        *, weights: FasterRCNN_MobileNet_V3_Large_320_FPN_Weights | None = None,
        progress: bool = True, num_classes: int | None = None,
        weights_backbone: MobileNet_V3_Large_Weights | None = _MOBILENET_V1,
        trainable_backbone_layers: int | None = None, **kwargs) -> FasterRCNN:
    """Low-resolution Faster R-CNN with a MobileNetV3-Large-FPN backbone (images resized to
    320, fewer proposals). Arguments as :func:`fasterrcnn_resnet50_fpn` (trainable layers 0 to
    6, 3 by default)."""
    weights = FasterRCNN_MobileNet_V3_Large_320_FPN_Weights.verify(weights)
    weights_backbone = MobileNet_V3_Large_Weights.verify(weights_backbone)
    defaults = {"min_size": 320, "max_size": 640, "rpn_pre_nms_top_n_test": 150,
                "rpn_post_nms_top_n_test": 150, "rpn_score_thresh": 0.05}
    return _fasterrcnn_mobilenet_v3_large_fpn(weights, progress, num_classes, weights_backbone,
                                              trainable_backbone_layers,
                                              **{**defaults, **kwargs})


@register_model()
@weights_of(FasterRCNN_MobileNet_V3_Large_FPN_Weights)
def fasterrcnn_mobilenet_v3_large_fpn(
        *, weights: FasterRCNN_MobileNet_V3_Large_FPN_Weights | None = None,
        progress: bool = True, num_classes: int | None = None,
        weights_backbone: MobileNet_V3_Large_Weights | None = _MOBILENET_V1,
        trainable_backbone_layers: int | None = None, **kwargs) -> FasterRCNN:
    """High-resolution Faster R-CNN with a MobileNetV3-Large-FPN backbone. Arguments as
    :func:`fasterrcnn_resnet50_fpn` (trainable layers 0 to 6, 3 by default)."""
    weights = FasterRCNN_MobileNet_V3_Large_FPN_Weights.verify(weights)
    weights_backbone = MobileNet_V3_Large_Weights.verify(weights_backbone)
    defaults = {"rpn_score_thresh": 0.05}
    return _fasterrcnn_mobilenet_v3_large_fpn(weights, progress, num_classes, weights_backbone,
                                              trainable_backbone_layers,
                                              **{**defaults, **kwargs})


def _faster_rcnn_arguments(values: dict) -> dict:
    """The arguments of FasterRCNN.__init__ among a subclass's ``locals()`` (the subclasses
    repeat FasterRCNN's signature, as torchvision's do)."""
    import inspect

    names = list(inspect.signature(FasterRCNN.__init__).parameters)[1:-1]
    return {name: values[name] for name in names}


def _prepare(weights, weights_backbone, num_classes, default_classes: int = 91):
    """The builders' rule: pretrained weights replace the backbone's and fix the classes."""
    if weights is not None:
        weights_backbone = None
    return weights_backbone, _num_classes(weights, num_classes, default_classes)

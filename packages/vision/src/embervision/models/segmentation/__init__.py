"""``embervision.models.segmentation``: FCN, DeepLabV3 and LRASPP with torchvision's
builders, weights enums and state-dict keys."""

from embervision.models.segmentation.deeplabv3 import (
    DeepLabV3,
    DeepLabV3_MobileNet_V3_Large_Weights,
    DeepLabV3_ResNet50_Weights,
    DeepLabV3_ResNet101_Weights,
    deeplabv3_mobilenet_v3_large,
    deeplabv3_resnet50,
    deeplabv3_resnet101,
)
from embervision.models.segmentation.fcn import (
    FCN,
    FCN_ResNet50_Weights,
    FCN_ResNet101_Weights,
    fcn_resnet50,
    fcn_resnet101,
)
from embervision.models.segmentation.lraspp import (
    LRASPP,
    LRASPP_MobileNet_V3_Large_Weights,
    lraspp_mobilenet_v3_large,
)

__all__ = [
    "DeepLabV3",
    "DeepLabV3_MobileNet_V3_Large_Weights",
    "DeepLabV3_ResNet101_Weights",
    "DeepLabV3_ResNet50_Weights",
    "FCN",
    "FCN_ResNet101_Weights",
    "FCN_ResNet50_Weights",
    "LRASPP",
    "LRASPP_MobileNet_V3_Large_Weights",
    "deeplabv3_mobilenet_v3_large",
    "deeplabv3_resnet101",
    "deeplabv3_resnet50",
    "fcn_resnet101",
    "fcn_resnet50",
    "lraspp_mobilenet_v3_large",
]

"""``embervision.models.detection``: Faster R-CNN, RetinaNet, Mask R-CNN, Keypoint R-CNN,
FCOS, SSD and SSDlite with torchvision's builders, weights enums and state-dict keys."""

from embervision.models.detection.faster_rcnn import (
    FasterRCNN,
    FasterRCNN_MobileNet_V3_Large_320_FPN_Weights,
    FasterRCNN_MobileNet_V3_Large_FPN_Weights,
    FasterRCNN_ResNet50_FPN_V2_Weights,
    FasterRCNN_ResNet50_FPN_Weights,
    fasterrcnn_mobilenet_v3_large_320_fpn,
    fasterrcnn_mobilenet_v3_large_fpn,
    fasterrcnn_resnet50_fpn,
    fasterrcnn_resnet50_fpn_v2,
)
from embervision.models.detection.fcos import (
    FCOS,
    FCOS_ResNet50_FPN_Weights,
    fcos_resnet50_fpn,
)
from embervision.models.detection.keypoint_rcnn import (
    KeypointRCNN,
    KeypointRCNN_ResNet50_FPN_Weights,
    keypointrcnn_resnet50_fpn,
)
from embervision.models.detection.mask_rcnn import (
    MaskRCNN,
    MaskRCNN_ResNet50_FPN_V2_Weights,
    MaskRCNN_ResNet50_FPN_Weights,
    maskrcnn_resnet50_fpn,
    maskrcnn_resnet50_fpn_v2,
)
from embervision.models.detection.retinanet import (
    RetinaNet,
    RetinaNet_ResNet50_FPN_V2_Weights,
    RetinaNet_ResNet50_FPN_Weights,
    retinanet_resnet50_fpn,
    retinanet_resnet50_fpn_v2,
)
from embervision.models.detection.ssd import (
    SSD,
    SSD300_VGG16_Weights,
    ssd300_vgg16,
)
from embervision.models.detection.ssdlite import (
    SSDLite320_MobileNet_V3_Large_Weights,
    ssdlite320_mobilenet_v3_large,
)

__all__ = [
    "FCOS",
    "FCOS_ResNet50_FPN_Weights",
    "FasterRCNN",
    "FasterRCNN_MobileNet_V3_Large_320_FPN_Weights",
    "FasterRCNN_MobileNet_V3_Large_FPN_Weights",
    "FasterRCNN_ResNet50_FPN_V2_Weights",
    "FasterRCNN_ResNet50_FPN_Weights",
    "KeypointRCNN",
    "KeypointRCNN_ResNet50_FPN_Weights",
    "MaskRCNN",
    "MaskRCNN_ResNet50_FPN_V2_Weights",
    "MaskRCNN_ResNet50_FPN_Weights",
    "RetinaNet",
    "RetinaNet_ResNet50_FPN_V2_Weights",
    "RetinaNet_ResNet50_FPN_Weights",
    "SSD",
    "SSD300_VGG16_Weights",
    "SSDLite320_MobileNet_V3_Large_Weights",
    "fasterrcnn_mobilenet_v3_large_320_fpn",
    "fasterrcnn_mobilenet_v3_large_fpn",
    "fasterrcnn_resnet50_fpn",
    "fasterrcnn_resnet50_fpn_v2",
    "fcos_resnet50_fpn",
    "keypointrcnn_resnet50_fpn",
    "maskrcnn_resnet50_fpn",
    "maskrcnn_resnet50_fpn_v2",
    "retinanet_resnet50_fpn",
    "retinanet_resnet50_fpn_v2",
    "ssd300_vgg16",
    "ssdlite320_mobilenet_v3_large",
]

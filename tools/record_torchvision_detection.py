"""Records torchvision 0.29's detection models into the test data: the state-dict keys and
shapes of each builder (``weights=None, weights_backbone=None``) into
tests/vision/data/torchvision_state_dict_keys.json.gz, beside the classification and
segmentation ones, and each weights enum's URL and metadata into
tests/vision/data/torchvision_detection_weights.json.gz.

Run with torch 2.14.1 + torchvision 0.29.1 (an environment of their own):
``python tools/record_torchvision_detection.py``.
"""

import gzip
import json
from pathlib import Path

import torchvision
from torchvision.models import detection

DATA = Path(__file__).resolve().parent.parent / "tests" / "vision" / "data"
NAMES = [
    "fasterrcnn_resnet50_fpn", "fasterrcnn_resnet50_fpn_v2", "fasterrcnn_mobilenet_v3_large_fpn",
    "fasterrcnn_mobilenet_v3_large_320_fpn", "retinanet_resnet50_fpn",
    "retinanet_resnet50_fpn_v2", "maskrcnn_resnet50_fpn", "maskrcnn_resnet50_fpn_v2",
    "keypointrcnn_resnet50_fpn", "fcos_resnet50_fpn", "ssd300_vgg16",
    "ssdlite320_mobilenet_v3_large",
]


def keys_and_shapes(model):
    return [f"{k} {'x'.join(map(str, v.shape))}" for k, v in model.state_dict().items()]


def main():
    path = DATA / "torchvision_state_dict_keys.json.gz"
    record = json.loads(gzip.decompress(path.read_bytes()))
    weights = {}
    for name in NAMES:
        builder = getattr(detection, name)
        record["models"][name] = keys_and_shapes(builder(weights=None, weights_backbone=None))
        enum = torchvision.models.get_model_weights(name)
        weights[enum.__name__] = {
            member: {"url": w.url, "meta": w.meta, "transforms": type(w.transforms()).__name__}
            for member, w in enum.__members__.items()}
    # Pretrained v1 backbones use FrozenBatchNorm2d: their checkpoints have no batch counters.
    frozen = detection.faster_rcnn.FasterRCNN(
        detection.backbone_utils.resnet_fpn_backbone(backbone_name="resnet50", weights=None),
        num_classes=91)
    record["models"]["fasterrcnn_resnet50_fpn_frozen"] = keys_and_shapes(frozen)
    path.write_bytes(gzip.compress(json.dumps(record).encode(), mtime=0))
    (DATA / "torchvision_detection_weights.json.gz").write_bytes(
        gzip.compress(json.dumps(weights, default=list).encode(), mtime=0))


if __name__ == "__main__":
    main()

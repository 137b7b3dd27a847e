"""What the segmentation models share: a backbone, a classifier head, an optional auxiliary
head, and the upsampling of their outputs to the input size."""

from __future__ import annotations

from collections import OrderedDict

from ember import nn
from ember.nn import functional as F
from embervision.models._api import Weights
from embervision.models._meta import VOC_CATEGORIES


class _SimpleSegmentationModel(nn.Module):
    __constants__ = ["aux_classifier"]

    def __init__(self, backbone: nn.Module, classifier: nn.Module,
                 aux_classifier: nn.Module | None = None):
        super().__init__()
        self.backbone = backbone
        self.classifier = classifier
        self.aux_classifier = aux_classifier

    def forward(self, x):
        size = x.shape[-2:]
        features = self.backbone(x)
        result = OrderedDict()
        out = self.classifier(features["out"])
        result["out"] = F.interpolate(out, size=size, mode="bilinear", align_corners=False)
        if self.aux_classifier is not None:
            aux = self.aux_classifier(features["aux"])
            result["aux"] = F.interpolate(aux, size=size, mode="bilinear", align_corners=False)
        return result


def voc_weights(stem: str, num_params: int, recipe: str, miou: float, pixel_acc: float,
                ops: float, file_size: float) -> Weights:
    """Segmentation weights trained on the COCO subset with the 20 VOC classes, at
    download.pytorch.org/models/<stem>.pth, with the SemanticSegmentation(520) preset."""
    from functools import partial

    from embervision.transforms._presets import SemanticSegmentation

    return Weights(
        url=f"https://download.pytorch.org/models/{stem}.pth",
        transforms=partial(SemanticSegmentation, resize_size=520),
        meta={"min_size": (1, 1), "categories": VOC_CATEGORIES, "num_params": num_params,
              "recipe": recipe,
              "_metrics": {"COCO-val2017-VOC-labels": {"miou": miou, "pixel_acc": pixel_acc}},
              "_ops": ops, "_file_size": file_size},
    )


_RECIPES = "https://github.com/pytorch/vision/tree/main/references/segmentation"

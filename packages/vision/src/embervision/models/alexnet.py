"""AlexNet (Krizhevsky et al., 2012), in the one-GPU form of "One weird trick"."""

from __future__ import annotations

import ember
from ember import nn
from embervision.models._api import WeightsEnum, classification_weights, make_builder

__all__ = ["AlexNet", "AlexNet_Weights", "alexnet"]


class AlexNet(nn.Module):
    """AlexNet.

    Args:
        num_classes (int): Default: 1000.
        dropout (float): Default: 0.5.
    """

    def __init__(self, num_classes: int = 1000, dropout: float = 0.5):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 64, kernel_size=11, stride=4, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(64, 192, kernel_size=5, padding=2), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
            nn.Conv2d(192, 384, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(384, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.Conv2d(256, 256, kernel_size=3, padding=1), nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2),
        )
        self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout), nn.Linear(256 * 6 * 6, 4096), nn.ReLU(inplace=True),
            nn.Dropout(p=dropout), nn.Linear(4096, 4096), nn.ReLU(inplace=True),
            nn.Linear(4096, num_classes),
        )

    def forward(self, x):
        x = self.avgpool(self.features(x))
        return self.classifier(ember.flatten(x, 1))


class AlexNet_Weights(WeightsEnum):
    IMAGENET1K_V1 = classification_weights(
        "alexnet-owt-7be5be79", 61100840,
        "https://github.com/pytorch/vision/tree/main/references/classification"
        "#alexnet-and-vgg", 56.522, 79.066, 0.714, 233.087, min_size=(63, 63))
    DEFAULT = IMAGENET1K_V1


def _build(weights, progress, **kwargs):
    model = AlexNet(**kwargs)
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model


alexnet = make_builder("alexnet", AlexNet_Weights, _build, "AlexNet from torchvision's model zoo.")

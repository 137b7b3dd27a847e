"""``embervision.transforms``: image transforms for PIL images and tensors, as torchvision's.

Classes are in ``embervision.transforms``; their functional forms in
``embervision.transforms.functional``. Randomness comes from ember's default generator, so
``ember.manual_seed`` makes it repeatable.
"""

from embervision.transforms import functional
from embervision.transforms._color import (
    ColorJitter,
    Grayscale,
    RandomAdjustSharpness,
    RandomAutocontrast,
    RandomEqualize,
    RandomGrayscale,
    RandomInvert,
    RandomPosterize,
    RandomSolarize,
)
from embervision.transforms._container import (
    Compose,
    Lambda,
    RandomApply,
    RandomChoice,
    RandomOrder,
)
from embervision.transforms._conversion import ConvertImageDtype, PILToTensor, ToPILImage, ToTensor
from embervision.transforms._geometry import (
    CenterCrop,
    ElasticTransform,
    FiveCrop,
    Pad,
    RandomAffine,
    RandomCrop,
    RandomHorizontalFlip,
    RandomPerspective,
    RandomResizedCrop,
    RandomRotation,
    RandomVerticalFlip,
    Resize,
    TenCrop,
)
from embervision.transforms._misc import (
    GaussianBlur,
    LinearTransformation,
    Normalize,
    RandomErasing,
)
from embervision.transforms._utils import InterpolationMode
from embervision.transforms.autoaugment import (
    AugMix,
    AutoAugment,
    AutoAugmentPolicy,
    RandAugment,
    TrivialAugmentWide,
)

__all__ = [
    "AugMix",
    "AutoAugment",
    "AutoAugmentPolicy",
    "CenterCrop",
    "ColorJitter",
    "Compose",
    "ConvertImageDtype",
    "ElasticTransform",
    "FiveCrop",
    "GaussianBlur",
    "Grayscale",
    "InterpolationMode",
    "Lambda",
    "LinearTransformation",
    "Normalize",
    "PILToTensor",
    "Pad",
    "RandAugment",
    "RandomAdjustSharpness",
    "RandomAffine",
    "RandomApply",
    "RandomAutocontrast",
    "RandomChoice",
    "RandomCrop",
    "RandomEqualize",
    "RandomErasing",
    "RandomGrayscale",
    "RandomHorizontalFlip",
    "RandomInvert",
    "RandomOrder",
    "RandomPerspective",
    "RandomPosterize",
    "RandomResizedCrop",
    "RandomRotation",
    "RandomSolarize",
    "RandomVerticalFlip",
    "Resize",
    "TenCrop",
    "ToPILImage",
    "ToTensor",
    "TrivialAugmentWide",
    "functional",
]

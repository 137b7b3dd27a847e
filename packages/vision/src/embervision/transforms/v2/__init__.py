"""``embervision.transforms.v2``: transforms of images, videos, masks, bounding boxes and key
points together, as torchvision's.

A v2 transform takes any nested structure of tuples, lists and dicts, draws its random
parameters once per call and applies them to every image, video, mask, box set and point set
in it (dispatching on their :mod:`~embervision.tv_tensors` type), passing the rest through.
Randomness comes from ember's default generator (``ember.manual_seed``).
"""

from embervision.transforms._utils import InterpolationMode
from embervision.transforms.autoaugment import AutoAugmentPolicy
from embervision.transforms.v2 import functional
from embervision.transforms.v2._augment import JPEG, CutMix, MixUp, RandomErasing
from embervision.transforms.v2._auto_augment import (
    AugMix,
    AutoAugment,
    RandAugment,
    TrivialAugmentWide,
)
from embervision.transforms.v2._color import (
    RGB,
    ColorJitter,
    Grayscale,
    RandomAdjustSharpness,
    RandomAutocontrast,
    RandomChannelPermutation,
    RandomEqualize,
    RandomGrayscale,
    RandomInvert,
    RandomPhotometricDistort,
    RandomPosterize,
    RandomSolarize,
)
from embervision.transforms.v2._container import Compose, RandomApply, RandomChoice, RandomOrder
from embervision.transforms.v2._deprecated import ToTensor  # noqa: I001
from embervision.transforms.v2._geometry import (
    CenterCrop,
    ElasticTransform,
    FiveCrop,
    Pad,
    RandomAffine,
    RandomCrop,
    RandomHorizontalFlip,
    RandomIoUCrop,
    RandomPerspective,
    RandomResize,
    RandomResizedCrop,
    RandomRotation,
    RandomShortestSize,
    RandomVerticalFlip,
    RandomZoomOut,
    Resize,
    ScaleJitter,
    TenCrop,
)
from embervision.transforms.v2._meta import (
    ClampBoundingBoxes,
    ClampKeyPoints,
    ConvertBoundingBoxFormat,
    SetClampingMode,
)
from embervision.transforms.v2._misc import (
    ConvertImageDtype,
    GaussianBlur,
    GaussianNoise,
    Identity,
    Lambda,
    LinearTransformation,
    Normalize,
    SanitizeBoundingBoxes,
    SanitizeKeyPoints,
    ToDtype,
)
from embervision.transforms.v2._temporal import UniformTemporalSubsample
from embervision.transforms.v2._transform import Transform
from embervision.transforms.v2._type_conversion import (
    PILToTensor,
    ToImage,
    ToPILImage,
    ToPureTensor,
)
from embervision.transforms.v2._utils import (
    check_type,
    get_bounding_boxes,
    get_keypoints,
    has_all,
    has_any,
    query_chw,
    query_size,
)

__all__ = [
    "JPEG", "RGB", "AugMix", "AutoAugment", "AutoAugmentPolicy", "CenterCrop",
    "ClampBoundingBoxes", "ClampKeyPoints", "ColorJitter", "Compose", "ConvertBoundingBoxFormat",
    "ConvertImageDtype", "CutMix", "ElasticTransform", "FiveCrop", "GaussianBlur",
    "GaussianNoise", "Grayscale", "Identity", "InterpolationMode", "Lambda",
    "LinearTransformation", "MixUp", "Normalize", "PILToTensor", "Pad", "RandAugment",
    "RandomAdjustSharpness", "RandomAffine", "RandomApply", "RandomAutocontrast",
    "RandomChannelPermutation", "RandomChoice", "RandomCrop", "RandomEqualize", "RandomErasing",
    "RandomGrayscale", "RandomHorizontalFlip", "RandomInvert", "RandomIoUCrop", "RandomOrder",
    "RandomPerspective", "RandomPhotometricDistort", "RandomPosterize", "RandomResize",
    "RandomResizedCrop", "RandomRotation", "RandomShortestSize", "RandomSolarize",
    "RandomVerticalFlip", "RandomZoomOut", "Resize", "SanitizeBoundingBoxes",
    "SanitizeKeyPoints", "ScaleJitter", "SetClampingMode", "TenCrop", "ToDtype", "ToImage",
    "ToPILImage", "ToPureTensor", "ToTensor", "Transform", "TrivialAugmentWide",
    "UniformTemporalSubsample", "check_type", "functional", "get_bounding_boxes",
    "get_keypoints", "has_all", "has_any", "query_chw", "query_size",
]

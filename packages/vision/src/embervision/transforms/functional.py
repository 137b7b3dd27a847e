"""``embervision.transforms.functional``: the functional forms of the transforms.

Each function takes a PIL image or a ``(..., C, H, W)`` tensor (a batch of images where the
operation allows) and returns the same kind.
"""

from embervision.transforms._functional_color import (
    adjust_brightness,
    adjust_contrast,
    adjust_gamma,
    adjust_hue,
    adjust_saturation,
    adjust_sharpness,
    autocontrast,
    equalize,
    invert,
    posterize,
    rgb_to_grayscale,
    solarize,
    to_grayscale,
)
from embervision.transforms._functional_conversion import (
    convert_image_dtype,
    pil_to_tensor,
    to_pil_image,
    to_tensor,
)
from embervision.transforms._functional_geometry import (
    affine,
    center_crop,
    crop,
    elastic_transform,
    five_crop,
    hflip,
    pad,
    perspective,
    resize,
    resized_crop,
    rotate,
    ten_crop,
    vflip,
)
from embervision.transforms._functional_misc import erase, gaussian_blur, normalize
from embervision.transforms._utils import (
    InterpolationMode,
    get_dimensions,
    get_image_num_channels,
    get_image_size,
)

__all__ = [
    "InterpolationMode",
    "adjust_brightness",
    "adjust_contrast",
    "adjust_gamma",
    "adjust_hue",
    "adjust_saturation",
    "adjust_sharpness",
    "affine",
    "autocontrast",
    "center_crop",
    "convert_image_dtype",
    "crop",
    "elastic_transform",
    "equalize",
    "erase",
    "five_crop",
    "gaussian_blur",
    "get_dimensions",
    "get_image_num_channels",
    "get_image_size",
    "hflip",
    "invert",
    "normalize",
    "pad",
    "perspective",
    "pil_to_tensor",
    "posterize",
    "resize",
    "resized_crop",
    "rgb_to_grayscale",
    "rotate",
    "solarize",
    "ten_crop",
    "to_grayscale",
    "to_pil_image",
    "to_tensor",
    "vflip",
]

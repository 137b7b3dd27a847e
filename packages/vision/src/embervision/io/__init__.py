"""Reading and writing images: ``embervision.io``, torchvision.io's image functions on Pillow.

Decoded images are ``uint8`` tensors of shape ``(C, H, W)``, as torchvision returns them.
"""

from embervision.io.image import (
    ImageReadMode,
    decode_gif,
    decode_image,
    decode_jpeg,
    decode_png,
    decode_webp,
    encode_jpeg,
    encode_png,
    read_file,
    read_image,
    write_file,
    write_jpeg,
    write_png,
)

__all__ = [
    "ImageReadMode",
    "decode_gif",
    "decode_image",
    "decode_jpeg",
    "decode_png",
    "decode_webp",
    "encode_jpeg",
    "encode_png",
    "read_file",
    "read_image",
    "write_file",
    "write_jpeg",
    "write_png",
]

"""Image decoding and encoding with Pillow, in torchvision.io's API."""

from __future__ import annotations

import io
import os
from enum import Enum

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

import ember

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


class ImageReadMode(Enum):
    """The mode an image is converted to when it is decoded.

    * ``UNCHANGED``: the image's own channels
    * ``GRAY``: one channel
    * ``GRAY_ALPHA``: gray and alpha
    * ``RGB``: three channels
    * ``RGB_ALPHA`` (alias ``RGBA``): RGB and alpha
    """

    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4
    RGBA = RGB_ALPHA


_PIL_MODE = {
    ImageReadMode.GRAY: "L",
    ImageReadMode.GRAY_ALPHA: "LA",
    ImageReadMode.RGB: "RGB",
    ImageReadMode.RGB_ALPHA: "RGBA",
}


def _as_mode(mode) -> ImageReadMode:
    if isinstance(mode, str):
        try:
            return ImageReadMode[mode.upper()]
        except KeyError:
            names = ", ".join(m.name for m in ImageReadMode)
            raise ValueError(f"unknown image read mode {mode!r}; expected one of {names}") from None
    if not isinstance(mode, ImageReadMode):
        raise TypeError(f"mode must be an ImageReadMode or a str, got {type(mode).__name__}")
    return mode


def _bytes_of(data) -> bytes:
    if not isinstance(data, ember.Tensor):
        raise TypeError(f"expected a 1-D uint8 tensor of encoded bytes, got {type(data).__name__}")
    if data.dtype != ember.uint8 or data.dim() != 1:
        raise ValueError(
            f"expected a 1-D uint8 tensor of encoded bytes, got a {data.dim()}-D tensor "
            f"of dtype {data.dtype}"
        )
    if data.numel() == 0:
        raise RuntimeError("cannot decode an image from an empty tensor")
    return np.ascontiguousarray(data.cpu().numpy()).tobytes()


def _to_tensor(img: Image.Image, mode: ImageReadMode) -> ember.Tensor:
    if mode is ImageReadMode.UNCHANGED:
        if img.mode in ("I;16", "I;16B", "I;16L", "I"):
            # 16-bit PNGs: torchvision gives uint16, which ember lacks; int32 holds every value.
            arr = np.asarray(img, dtype=np.int32)[None]
            return ember.from_numpy(np.ascontiguousarray(arr))
        if img.mode == "P":
            img = img.convert("RGBA" if "transparency" in img.info else "RGB")
        elif img.mode == "PA":
            img = img.convert("RGBA")
        elif img.mode not in ("L", "LA", "RGB", "RGBA"):
            img = img.convert("RGB")
    else:
        target = _PIL_MODE[mode]
        if img.mode != target:
            if img.mode in ("I;16", "I;16B", "I;16L", "I") and target.startswith("L"):
                # Pillow's I;16 -> L conversion clips; scale 16 bits to 8 as libpng does.
                arr = (np.asarray(img, dtype=np.int64) >> 8).astype(np.uint8)
                img = Image.fromarray(arr, "L")
            if img.mode != target:
                img = img.convert(target)
    arr = np.asarray(img, dtype=np.uint8)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    return ember.from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))


def _decode(data: bytes, mode, apply_exif_orientation: bool, formats, what: str, name=None):
    mode = _as_mode(mode)
    try:
        img = Image.open(io.BytesIO(data), formats=formats)
        img.load()
        if apply_exif_orientation:
            img = ImageOps.exif_transpose(img)
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as error:
        source = f"{name!r}" if name is not None else "the given bytes"
        raise RuntimeError(f"could not decode {what} from {source}: {error}") from error
    return _to_tensor(img, mode)


def read_file(path) -> ember.Tensor:
    """Reads a file's bytes into a one-dimensional uint8 tensor.

    Args:
        path (str or ``pathlib.Path``): the file to read.

    Returns:
        Tensor[N]: the file's bytes.
    """
    with open(os.fspath(path), "rb") as f:
        data = f.read()
    return ember.from_numpy(np.frombuffer(data, dtype=np.uint8).copy())


def write_file(filename, data: ember.Tensor) -> None:
    """Writes the bytes of a one-dimensional uint8 tensor to a file.

    Args:
        filename (str or ``pathlib.Path``): the file to write.
        data (Tensor[N]): the bytes.
    """
    raw = _bytes_of(data) if data.numel() else b""
    with open(os.fspath(filename), "wb") as f:
        f.write(raw)


def decode_png(input: ember.Tensor, mode=ImageReadMode.UNCHANGED,
               apply_exif_orientation: bool = False) -> ember.Tensor:
    """Decodes a PNG image into a ``(C, H, W)`` uint8 tensor.

    Args:
        input (Tensor[N]): the PNG file's bytes.
        mode (ImageReadMode or str): the mode to convert the image to. Default: ``UNCHANGED``.
        apply_exif_orientation (bool): apply the EXIF orientation tag. Default: ``False``.

    Returns:
        Tensor[image_channels, image_height, image_width]. 16-bit PNGs decode to int32
        (torchvision gives uint16, which ember has not got).
    """
    return _decode(_bytes_of(input), mode, apply_exif_orientation, ["PNG"], "a PNG image")


def decode_jpeg(input, mode=ImageReadMode.UNCHANGED, device="cpu",
                apply_exif_orientation: bool = False):
    """Decodes JPEG image(s) into ``(C, H, W)`` uint8 tensor(s).

    Args:
        input (Tensor[N] or list of Tensor[N]): the JPEG file's bytes, or a list of them.
        mode (ImageReadMode or str): the mode to convert the image to. Default: ``UNCHANGED``.
        device (str or ember.device): where the decoded image is put. Default: ``"cpu"``.
        apply_exif_orientation (bool): apply the EXIF orientation tag. Default: ``False``.

    Returns:
        Tensor[image_channels, image_height, image_width] or a list of them.
    """
    if isinstance(input, (list, tuple)):
        return [decode_jpeg(x, mode, device, apply_exif_orientation) for x in input]
    out = _decode(_bytes_of(input), mode, apply_exif_orientation, ["JPEG", "MPO"],
                  "a JPEG image")
    return out if str(device) == "cpu" else out.to(device)


def decode_webp(input: ember.Tensor, mode=ImageReadMode.UNCHANGED) -> ember.Tensor:
    """Decodes a WebP image into a ``(C, H, W)`` uint8 tensor (its first frame).

    Args:
        input (Tensor[N]): the WebP file's bytes.
        mode (ImageReadMode or str): the mode to convert the image to. Default: ``UNCHANGED``.
    """
    return _decode(_bytes_of(input), mode, False, ["WEBP"], "a WebP image")


def decode_gif(input: ember.Tensor) -> ember.Tensor:
    """Decodes a GIF into RGB uint8: ``(C, H, W)`` for one frame, ``(N, C, H, W)`` for an
    animation of N frames.

    Args:
        input (Tensor[N]): the GIF file's bytes.
    """
    data = _bytes_of(input)
    try:
        img = Image.open(io.BytesIO(data), formats=["GIF"])
        frames = []
        for index in range(getattr(img, "n_frames", 1)):
            img.seek(index)
            frames.append(np.asarray(img.convert("RGB"), dtype=np.uint8).transpose(2, 0, 1))
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError) as error:
        raise RuntimeError(f"could not decode a GIF image from the given bytes: {error}") from error
    out = np.stack(frames) if len(frames) > 1 else frames[0]
    return ember.from_numpy(np.ascontiguousarray(out))


def decode_image(input, mode=ImageReadMode.UNCHANGED,
                 apply_exif_orientation: bool = False) -> ember.Tensor:
    """Decodes an image (JPEG, PNG, GIF, WebP, anything Pillow reads) into a uint8 tensor.

    Args:
        input (Tensor[N] or str or ``pathlib.Path``): the encoded bytes, or a path to the file.
        mode (ImageReadMode or str): the mode to convert the image to. Default: ``UNCHANGED``.
        apply_exif_orientation (bool): apply the EXIF orientation tag. Default: ``False``.

    Returns:
        Tensor[image_channels, image_height, image_width]

    Examples::

        >>> img = decode_image("cat.png", mode=ImageReadMode.RGB)
        >>> img.shape  # (3, H, W), uint8
    """
    name = None
    if not isinstance(input, ember.Tensor):
        name = os.fspath(input)
        input = read_file(name)
    return _decode(_bytes_of(input), mode, apply_exif_orientation, None, "an image", name)


def read_image(path, mode=ImageReadMode.UNCHANGED,
               apply_exif_orientation: bool = False) -> ember.Tensor:
    """Reads an image file into a ``(C, H, W)`` uint8 tensor: :func:`decode_image` of a path.

    A corrupt or truncated file raises a ``RuntimeError`` naming the file.
    """
    path = os.fspath(path)
    return _decode(_bytes_of(read_file(path)), mode, apply_exif_orientation, None, "an image",
                   path)


def _to_pil(input: ember.Tensor, what: str) -> Image.Image:
    if not isinstance(input, ember.Tensor):
        raise TypeError(f"{what} expects a tensor, got {type(input).__name__}")
    if input.dtype != ember.uint8:
        raise RuntimeError(f"{what} expects a uint8 tensor, got {input.dtype}")
    if input.dim() != 3 or input.shape[0] not in (1, 3):
        raise RuntimeError(
            f"{what} expects a (C, H, W) tensor with 1 or 3 channels, "
            f"got shape {tuple(input.shape)}"
        )
    arr = np.ascontiguousarray(input.cpu().numpy().transpose(1, 2, 0))
    return Image.fromarray(arr[:, :, 0], "L") if arr.shape[2] == 1 else Image.fromarray(arr, "RGB")


def _encoded(img: Image.Image, fmt: str, **options) -> ember.Tensor:
    buffer = io.BytesIO()
    img.save(buffer, format=fmt, **options)
    return ember.from_numpy(np.frombuffer(buffer.getvalue(), dtype=np.uint8).copy())


def encode_png(input: ember.Tensor, compression_level: int = 6) -> ember.Tensor:
    """Encodes a ``(C, H, W)`` uint8 tensor (1 or 3 channels) as PNG bytes.

    Args:
        input (Tensor[channels, image_height, image_width]): the image.
        compression_level (int): zlib compression level, 0 to 9. Default: 6.

    Returns:
        Tensor[N]: the PNG file's bytes.
    """
    if not 0 <= compression_level <= 9:
        raise ValueError("Compression level should be between 0 and 9")
    return _encoded(_to_pil(input, "encode_png"), "PNG", compress_level=compression_level)


def encode_jpeg(input, quality: int = 75):
    """Encodes ``(C, H, W)`` uint8 tensor(s) (1 or 3 channels) as JPEG bytes.

    Args:
        input (Tensor[channels, image_height, image_width] or a list of them): the image(s).
        quality (int): JPEG quality, 1 to 100. Default: 75.

    Returns:
        Tensor[N] or a list of them: the JPEG file's bytes.
    """
    if quality < 1 or quality > 100:
        raise ValueError("Image quality should be a positive number between 1 and 100")
    if isinstance(input, (list, tuple)):
        if not input:
            raise ValueError("encode_jpeg requires at least one input tensor when a list is passed")
        return [encode_jpeg(x, quality) for x in input]
    return _encoded(_to_pil(input, "encode_jpeg"), "JPEG", quality=quality)


def write_png(input: ember.Tensor, filename, compression_level: int = 6) -> None:
    """Writes a ``(C, H, W)`` uint8 tensor to a PNG file (see :func:`encode_png`)."""
    write_file(filename, encode_png(input, compression_level))


def write_jpeg(input: ember.Tensor, filename, quality: int = 75) -> None:
    """Writes a ``(C, H, W)`` uint8 tensor to a JPEG file (see :func:`encode_jpeg`)."""
    write_file(filename, encode_jpeg(input, quality))

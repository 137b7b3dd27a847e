"""Image utilities: grids of images, saving, and drawing boxes, masks, keypoints and flow."""

from __future__ import annotations

import math
import warnings

import numpy as np
from PIL import Image, ImageColor, ImageDraw, ImageFont

import ember

__all__ = [
    "draw_bounding_boxes",
    "draw_keypoints",
    "draw_segmentation_masks",
    "flow_to_image",
    "make_grid",
    "save_image",
]


def make_grid(tensor, nrow: int = 8, padding: int = 2, normalize: bool = False,
              value_range=None, scale_each: bool = False, pad_value: float = 0.0):
    """Lays a batch of images out in a grid.

    Args:
        tensor (Tensor or list of Tensor): ``(B, C, H, W)`` images, or a list of ``(C, H, W)``.
        nrow (int): images per row. Default: 8.
        padding (int): pixels between images. Default: 2.
        normalize (bool): shift and scale to ``[0, 1]`` by ``value_range`` (or the min and
            max). Default: False.
        value_range (tuple, optional): ``(min, max)`` for ``normalize``.
        scale_each (bool): normalize each image by its own range. Default: False.
        pad_value (float): the value of the padding. Default: 0.

    Returns:
        Tensor[C, H', W']: one-channel images are repeated to three channels.
    """
    if isinstance(tensor, (list, tuple)):
        for t in tensor:
            if not isinstance(t, ember.Tensor):
                raise TypeError(f"tensor or list of tensors expected, got a list containing "
                                f"{type(t)}")
        tensor = ember.stack(list(tensor), dim=0)
    elif not isinstance(tensor, ember.Tensor):
        raise TypeError(f"tensor or list of tensors expected, got {type(tensor)}")
    if tensor.dim() == 2:
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:
        if tensor.shape[0] == 1:
            tensor = ember.cat([tensor] * 3, dim=0)
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 4 and tensor.shape[1] == 1:
        tensor = ember.cat([tensor] * 3, dim=1)
    if normalize:
        if value_range is not None and not isinstance(value_range, tuple):
            raise TypeError("value_range has to be a tuple (min, max) if specified. min and max "
                            "are numbers")

        def norm(t):
            lo, hi = value_range if value_range is not None else (float(t.min()), float(t.max()))
            return (t.clamp(min=lo, max=hi) - lo) / max(hi - lo, 1e-5)

        tensor = ember.stack([norm(t) for t in tensor]) if scale_each else norm(tensor)
    if tensor.shape[0] == 1:
        return tensor.squeeze(0)
    nmaps = tensor.shape[0]
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(nmaps / xmaps))
    height, width = int(tensor.shape[2] + padding), int(tensor.shape[3] + padding)
    channels = tensor.shape[1]
    grid = ember.full((channels, height * ymaps + padding, width * xmaps + padding), pad_value,
                      dtype=tensor.dtype, device=tensor.device)
    for k in range(nmaps):
        y, x = divmod(k, xmaps)
        grid[:, y * height + padding:(y + 1) * height, x * width + padding:(x + 1) * width] = \
            tensor[k]
    return grid


def save_image(tensor, fp, format=None, **kwargs) -> None:
    """Saves an image, or a batch as a :func:`make_grid`, to a file.

    Float values in ``[0, 1]`` are scaled to 0..255 and rounded.

    Args:
        tensor (Tensor or list of Tensor): the image(s).
        fp (str, ``pathlib.Path`` or file object): where to write.
        format (str, optional): the image format; from the file name when None.
        **kwargs: passed to :func:`make_grid`.
    """
    grid = make_grid(tensor, **kwargs)
    arr = (grid.float() * 255 + 0.5).clamp(0, 255).permute(1, 2, 0).to(ember.uint8)
    Image.fromarray(np.ascontiguousarray(arr.cpu().numpy())).save(fp, format=format)


def _palette(n):
    base = np.array([2 ** 25 - 1, 2 ** 15 - 1, 2 ** 21 - 1])
    return [tuple(int(v) for v in (i * base) % 255) for i in range(n)]


def _parse_colors(colors, num_objects, floating=False):
    if colors is None:
        colors = _palette(num_objects)
    elif isinstance(colors, list):
        if len(colors) < num_objects:
            raise ValueError(f"Number of colors must be equal or larger than the number of "
                             f"objects, but got {len(colors)} < {num_objects}.")
    elif not isinstance(colors, (tuple, str)):
        raise ValueError(f"colors must be a tuple or a string, or a list thereof, but got "
                         f"{colors}.")
    elif isinstance(colors, tuple) and len(colors) != 3:
        raise ValueError(f"If passed as tuple, colors should be an RGB triplet, but got {colors}.")
    else:
        colors = [colors] * num_objects
    colors = [ImageColor.getrgb(c) if isinstance(c, str) else tuple(c) for c in colors]
    if floating:
        colors = [tuple(v / 255 for v in c) for c in colors]
    return colors


def _check_image(image, channels):
    if not isinstance(image, ember.Tensor):
        raise TypeError(f"Tensor expected, got {type(image)}")
    if not (image.dtype == ember.uint8 or image.is_floating_point()):
        raise ValueError(f"The image dtype must be uint8 or float, got {image.dtype}")
    if image.dim() != 3:
        raise ValueError("Pass individual images, not batches")
    if image.shape[0] not in channels:
        raise ValueError("Only grayscale and RGB images are supported" if len(channels) > 1
                         else "Pass an RGB image. Other Image formats are not supported")


def _to_pil_rgb(image):
    if image.shape[0] == 1:
        image = ember.cat([image] * 3, dim=0)
    if image.is_floating_point():
        image = (image * 255).to(ember.uint8)
    return Image.fromarray(np.ascontiguousarray(image.cpu().numpy().transpose(1, 2, 0)))


def _from_pil(img, dtype):
    out = ember.from_numpy(np.ascontiguousarray(np.asarray(img)[:, :, :3].transpose(2, 0, 1)))
    return out.to(dtype) / 255 if dtype.is_floating_point else out


def draw_bounding_boxes(image, boxes, labels=None, colors=None, fill=False, width: int = 1,
                        font=None, font_size=None, label_colors=None,
                        label_background_colors=None, fill_labels: bool = False):
    """Draws ``(xmin, ymin, xmax, ymax)`` boxes (and labels) on a ``(C, H, W)`` image.

    Args:
        image (Tensor): uint8 or float, 1 or 3 channels.
        boxes (Tensor[N, 4]): the boxes, in pixels.
        labels (list of str, optional): one per box.
        colors (color or list of colors, optional): PIL colour names or RGB tuples; a palette
            when None.
        fill (bool): fill the boxes with their colour at alpha 100. Default: False.
        width (int): line width. Default: 1.
        font (str, optional): a TrueType font file; Pillow's default font when None.
        font_size (int, optional): with ``font``. Default: 10.
        label_colors, label_background_colors, fill_labels: the labels' text colour, their
            background colour and whether it is drawn.

    Returns:
        Tensor[3, H, W] of the image's dtype.
    """
    _check_image(image, (1, 3))
    if boxes.shape[-1] != 4:
        raise ValueError(f"boxes must be of shape (N, 4), got {tuple(boxes.shape)}")
    if bool((boxes[:, 0] > boxes[:, 2]).any()) or bool((boxes[:, 1] > boxes[:, 3]).any()):
        raise ValueError("Boxes need to be in (xmin, ymin, xmax, ymax) format. Use "
                         "embervision.ops.box_convert to convert them")
    n = boxes.shape[0]
    if n == 0:
        warnings.warn("boxes doesn't contain any box. No box was drawn", stacklevel=2)
        return image
    if labels is None:
        labels = [None] * n
    elif len(labels) != n:
        raise ValueError(f"Number of boxes ({n}) and labels ({len(labels)}) mismatch. Please "
                         "specify labels for each box.")
    colors = _parse_colors(colors, n)
    if label_colors or fill_labels:
        label_colors = _parse_colors(label_colors or "black", n)
    else:
        label_colors = list(colors)
    if fill_labels and label_background_colors:
        label_background_colors = _parse_colors(label_background_colors, n)
    else:
        label_background_colors = list(colors)
    txt_font = (ImageFont.load_default() if font is None
                else ImageFont.truetype(font=font, size=font_size or 10))
    dtype = image.dtype
    img = _to_pil_rgb(image)
    draw = ImageDraw.Draw(img, "RGBA") if fill else ImageDraw.Draw(img)
    for box, color, label, lcolor, bg in zip(boxes.to(ember.int64).tolist(), colors, labels,
                                             label_colors, label_background_colors):
        draw.rectangle(box, width=width, outline=color, fill=color + (100,) if fill else None)
        if label is not None:
            margin = width + 1
            xy = (box[0] + margin, box[1] + margin)
            if fill_labels:
                left, top, right, bottom = draw.textbbox(xy, label, font=txt_font)
                draw.rectangle((left - 1, top - 1, right + 1, bottom + 1), fill=bg)
            draw.text(xy, label, fill=lcolor, font=txt_font)
    return _from_pil(img, dtype)


def draw_segmentation_masks(image, masks, alpha: float = 0.8, colors=None):
    """Draws boolean masks on an RGB image; pixels under several masks are drawn black.

    Args:
        image (Tensor[3, H, W]): uint8 or float in ``[0, 1]``.
        masks (Tensor[N, H, W] or Tensor[H, W]): bool.
        alpha (float): opacity of the masks. Default: 0.8.
        colors (color or list of colors, optional): a palette when None.
    """
    _check_image(image, (3,))
    if masks.dim() == 2:
        masks = masks[None]
    if masks.dim() != 3:
        raise ValueError("masks must be of shape (H, W) or (batch_size, H, W)")
    if masks.dtype != ember.bool:
        raise ValueError(f"The masks must be of dtype bool. Got {masks.dtype}")
    if tuple(masks.shape[-2:]) != tuple(image.shape[-2:]):
        raise ValueError("The image and the masks must have the same height and width")
    n = masks.shape[0]
    if n == 0:
        warnings.warn("masks doesn't contain any mask. No mask was drawn", stacklevel=2)
        return image
    dtype = image.dtype
    colors = _parse_colors(colors, n, floating=dtype.is_floating_point)
    arr = image.cpu().numpy()
    m = masks.cpu().numpy()
    drawn = arr.copy()
    for mask, color in zip(m, colors):
        drawn[:, mask] = np.asarray(color, dtype=arr.dtype)[:, None]
    drawn[:, m.sum(0) > 1] = 0
    # float32 arithmetic, as PyTorch does for a uint8 tensor times a Python float.
    work = np.float32 if arr.dtype != np.float64 else np.float64
    out = arr.astype(work) * work(1 - alpha) + drawn.astype(work) * work(alpha)
    return ember.from_numpy(out.astype(arr.dtype)).to(image.device)


def draw_keypoints(image, keypoints, connectivity=None, colors=None, radius: int = 2,
                   width: int = 3, visibility=None):
    """Draws keypoints (and the lines between connected ones) on a ``(3, H, W)`` image.

    Args:
        image (Tensor[3, H, W]): uint8 or float.
        keypoints (Tensor[K, N, 2]): ``(x, y)`` of N keypoints of K instances.
        connectivity (list of (int, int), optional): pairs of keypoints to join.
        colors (str or tuple, optional): the colour of the points and lines.
        radius (int): Default: 2.
        width (int): line width. Default: 3.
        visibility (Tensor[K, N], optional): bool; invisible keypoints and their lines are
            not drawn.
    """
    _check_image(image, (3,))
    if keypoints.dim() != 3:
        raise ValueError("keypoints must be of shape (num_instances, K, 2)")
    if visibility is None:
        visibility = ember.ones(keypoints.shape[:-1], dtype=ember.bool)
    if visibility.dim() == 3:
        visibility = visibility.squeeze(-1)
    if tuple(visibility.shape) != tuple(keypoints.shape[:-1]):
        raise ValueError(f"keypoints and visible shapes must match, got {tuple(keypoints.shape)} "
                         f"and {tuple(visibility.shape)}")
    dtype = image.dtype
    img = _to_pil_rgb(image)
    draw = ImageDraw.Draw(img)
    pts = keypoints.to(ember.int64).tolist()
    vis = visibility.tolist()
    for inst, inst_vis in zip(pts, vis):
        for (x, y), v in zip(inst, inst_vis):
            if v:
                draw.ellipse([x - radius, y - radius, x + radius, y + radius], fill=colors,
                             outline=None, width=0)
        for a, b in connectivity or []:
            if inst_vis[a] and inst_vis[b]:
                # Lines are drawn in Pillow's default colour (white), as torchvision does.
                draw.line([tuple(inst[a]), tuple(inst[b])], width=width)
    return _from_pil(img, dtype)


def _colorwheel() -> np.ndarray:
    # Baker et al., "A Database and Evaluation Methodology for Optical Flow" (ICCV 2007):
    # hue segments red-yellow, yellow-green, green-cyan, cyan-blue, blue-magenta, magenta-red.
    segments = [(15, 0, 1, True), (6, 1, 0, False), (4, 1, 2, True), (11, 2, 1, False),
                (13, 2, 0, True), (6, 0, 2, False)]
    rows = []
    for n, full, ramp, rising in segments:
        block = np.zeros((n, 3))
        block[:, full] = 255
        r = np.floor(255 * np.arange(n) / n)
        block[:, ramp] = r if rising else 255 - r
        rows.append(block)
    return np.concatenate(rows)


def flow_to_image(flow: ember.Tensor) -> ember.Tensor:
    """Colours an optical flow: hue from direction, saturation from magnitude.

    Args:
        flow (Tensor): ``(2, H, W)`` or ``(N, 2, H, W)`` float32.

    Returns:
        Tensor: uint8 ``(3, H, W)`` or ``(N, 3, H, W)``.
    """
    if flow.dtype != ember.float32:
        raise ValueError(f"Flow should be of dtype torch.float, got {flow.dtype}.")
    shape = tuple(flow.shape)
    f = flow.cpu().numpy()
    if f.ndim == 3:
        f = f[None]
    if f.ndim != 4 or f.shape[1] != 2:
        raise ValueError(f"Input flow should have shape (2, H, W) or (N, 2, H, W), got {shape}.")
    max_norm = np.sqrt((f ** 2).sum(1)).max() if f.size else np.float32(0)
    f = f / (max_norm + np.finfo(np.float32).eps)
    wheel = _colorwheel()
    ncols = wheel.shape[0]
    norm = np.sqrt((f ** 2).sum(1))
    a = np.arctan2(-f[:, 1], -f[:, 0]) / np.pi
    fk = (a + 1) / 2 * (ncols - 1)
    k0 = np.floor(fk).astype(np.int64)
    k1 = np.where(k0 + 1 == ncols, 0, k0 + 1)
    frac = (fk - k0).astype(np.float32)
    out = np.zeros((f.shape[0], 3, *f.shape[2:]), dtype=np.uint8)
    for c in range(3):
        col0 = (wheel[k0, c] / 255.0).astype(np.float32)
        col1 = (wheel[k1, c] / 255.0).astype(np.float32)
        col = (1 - frac) * col0 + frac * col1
        col = 1 - norm * (1 - col)
        out[:, c] = np.floor(255 * col).astype(np.uint8)
    img = ember.from_numpy(out)
    return img[0] if len(shape) == 3 else img

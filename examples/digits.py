"""Handwritten-digit-like data for the demo: a generator and a reader for MNIST IDX files.

``synthetic_digits`` draws 28x28 grayscale digits from a 5x7 bitmap font with random
stroke width, scale, shear, shift and noise, so that the demo trains on real pixels
without a download. ``read_idx`` reads the IDX files MNIST is distributed in
(``train-images-idx3-ubyte`` and friends, optionally gzipped).
"""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import numpy as np

# 5x7 bitmaps of the digits 0-9, one string of five columns' bits per row.
_FONT = {
    0: ["01110", "10001", "10011", "10101", "11001", "10001", "01110"],
    1: ["00100", "01100", "00100", "00100", "00100", "00100", "01110"],
    2: ["01110", "10001", "00001", "00010", "00100", "01000", "11111"],
    3: ["11111", "00010", "00100", "00010", "00001", "10001", "01110"],
    4: ["00010", "00110", "01010", "10010", "11111", "00010", "00010"],
    5: ["11111", "10000", "11110", "00001", "00001", "10001", "01110"],
    6: ["00110", "01000", "10000", "11110", "10001", "10001", "01110"],
    7: ["11111", "00001", "00010", "00100", "01000", "01000", "01000"],
    8: ["01110", "10001", "10001", "01110", "10001", "10001", "01110"],
    9: ["01110", "10001", "10001", "01111", "00001", "00010", "01100"],
}
_GLYPHS = np.array([[[c == "1" for c in row] for row in _FONT[d]] for d in range(10)],
                   dtype=np.float32)


def _render(glyph, rng):
    """One 28x28 image of a 7x5 glyph under a random affine map, blurred and noisy."""
    size = 28
    scale = rng.uniform(2.6, 3.4)
    shear = rng.uniform(-0.25, 0.25)
    angle = rng.uniform(-0.2, 0.2)
    cx, cy = 14 + rng.uniform(-2.5, 2.5), 14 + rng.uniform(-2.5, 2.5)
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    # map each output pixel back into glyph coordinates (inverse affine)
    x0, y0 = (xx - cx) / scale, (yy - cy) / scale
    c, s = np.cos(angle), np.sin(angle)
    gx = c * x0 + s * y0 - shear * y0 + 2.5
    gy = -s * x0 + c * y0 + 3.5
    ix, iy = np.floor(gx).astype(int), np.floor(gy).astype(int)
    inside = (ix >= 0) & (ix < 5) & (iy >= 0) & (iy < 7)
    img = np.zeros((size, size), np.float32)
    img[inside] = glyph[iy[inside], ix[inside]]
    # thicken or thin the strokes, then a light blur
    k = rng.integers(0, 2)
    if k:
        img = np.maximum(img, np.roll(img, 1, axis=1))
    blur = (img + np.roll(img, 1, 0) + np.roll(img, -1, 0) + np.roll(img, 1, 1)
            + np.roll(img, -1, 1)) / 5
    img = np.clip(0.6 * img + 0.6 * blur + rng.normal(0, 0.08, img.shape), 0, 1)
    return img.astype(np.float32)


def synthetic_digits(n: int, seed: int = 0):
    """``n`` random 28x28 digit images (float32 in [0, 1]) and their labels (int64)."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, size=n)
    images = np.stack([_render(_GLYPHS[d], rng) for d in labels])
    return images, labels.astype(np.int64)


def read_idx(path) -> np.ndarray:
    """Read an IDX file (MNIST's format, optionally .gz) into a NumPy array."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0:
        raise ValueError(f"{path} is not an IDX file (bad magic number)")
    dtypes = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4",
              0x0E: ">f8"}
    if data[2] not in dtypes:
        raise ValueError(f"{path}: unknown IDX element type 0x{data[2]:02x}")
    ndim = data[3]
    shape = struct.unpack(f">{ndim}I", data[4:4 + 4 * ndim])
    body = np.frombuffer(data, dtype=dtypes[data[2]], offset=4 + 4 * ndim)
    if body.size != int(np.prod(shape)):
        raise ValueError(f"{path}: expected {int(np.prod(shape))} values, found {body.size}")
    return body.reshape(shape)


def load_mnist(root):
    """(train_images, train_labels, test_images, test_labels) from MNIST IDX files in
    ``root``; images as float32 in [0, 1]."""
    root = Path(root)

    def find(stem):
        for name in (stem, stem + ".gz"):
            if (root / name).exists():
                return root / name
        raise FileNotFoundError(f"{stem}(.gz) not found in {root}")

    xtr = read_idx(find("train-images-idx3-ubyte")).astype(np.float32) / 255
    ytr = read_idx(find("train-labels-idx1-ubyte")).astype(np.int64)
    xte = read_idx(find("t10k-images-idx3-ubyte")).astype(np.float32) / 255
    yte = read_idx(find("t10k-labels-idx1-ubyte")).astype(np.int64)
    return xtr, ytr, xte, yte

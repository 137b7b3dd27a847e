"""Spatial transformers: ``affine_grid`` and ``grid_sample``.

``affine_grid`` is a batched matmul of a constant base grid with ``theta``.
``grid_sample`` is built so that autograd gives the gradients w.r.t. both input and grid
(to any order): the sampling positions and their integer taps are computed on arrays, the
tap weights with tensor ops on the grid (so the grid gradient is the derivative of the
weights), and the taps' values are fetched by one gather node whose backward is a
scatter-add (the backend's ``index_add_rows``). Out-of-range taps get weight 0. The
padding modes remap the coordinates piecewise-linearly; that remap is a node whose
backward multiplies by the slope of the piece (0, 1 or -1), with PyTorch's conventions at
the borders (a coordinate exactly on a border has slope 0).
"""

from __future__ import annotations

import warnings

import numpy as np

from ember._backend import backend_of
from ember._C._core import Node, is_grad_enabled
from ember._ops._util import TensorBase, apply, not_implemented, type_name, wrap, xp_of

__all__ = ["affine_grid", "grid_sample"]

_ALIGN_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
    "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
    "documentation of grid_sample for details.")


# ---------------------------------------------------------------------------------------
# affine_grid

def _base_coords(n, align_corners, dtype):
    if n <= 1:
        return np.zeros(max(n, 1), dtype)
    # PyTorch's linspace: from both ends towards the middle, in the dtype
    ct = dtype.type
    step = (ct(1) - ct(-1)) / ct(n - 1)
    i = np.arange(n)
    half = n // 2
    r = np.where(i < half, ct(-1) + step * i.astype(dtype),
                 ct(1) - step * (n - 1 - i).astype(dtype)).astype(dtype)
    if not align_corners:
        r = r * dtype.type(n - 1) / dtype.type(n)
    return r.astype(dtype)


def affine_grid(theta, size, align_corners=None):
    """Generate a 2-D or 3-D flow field (sampling grid) from a batch of affine matrices.

    Args:
        theta: ``(N, 2, 3)`` for 2-D or ``(N, 3, 4)`` for 3-D affine matrices.
        size: the target output image size, ``(N, C, H, W)`` or ``(N, C, D, H, W)``.
        align_corners: as in :func:`grid_sample`. Default: ``False``.

    Returns:
        ``(N, H, W, 2)`` or ``(N, D, H, W, 3)``, the ``(x, y[, z])`` sampling positions
        in ``[-1, 1]`` coordinates.

    Examples::

        >>> theta = ember.tensor([[[1., 0., 0.], [0., 1., 0.]]])
        >>> F.affine_grid(theta, (1, 1, 2, 3), align_corners=False).shape
        ember.Size([1, 2, 3, 2])
    """
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not isinstance(theta, TensorBase):
        raise TypeError(
            f"affine_grid(): argument 'theta' must be Tensor, not {type(theta).__name__}")
    if theta._data.dtype.kind != "f":
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = tuple(int(s) for s in size)
    if len(size) == 4:
        if theta.ndim != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.ndim != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
            f"respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
            "align_corners=True. This is not an intended use case of affine_grid. See the "
            "documentation of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    nd = len(spatial)
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {nd + 1}] but got: [{theta.shape[0]}, {nd + 1}].")
    dtype = theta._data.dtype
    # the base grid: (x, y[, z], 1) at every output position, x varying fastest
    axes = [_base_coords(n, align_corners, dtype) for n in spatial]
    mesh = np.meshgrid(*axes, indexing="ij")  # D, H, W order
    base = np.stack([m.reshape(-1) for m in reversed(mesh)] + [np.ones(mesh[0].size, dtype)], 1)
    xp = xp_of(theta._data)
    base_t = wrap(xp.asarray(base))
    grid = base_t.matmul(theta.transpose(1, 2))  # (N, P, nd)
    return grid.reshape((size[0],) + spatial + (nd,))


# ---------------------------------------------------------------------------------------
# grid_sample: coordinate maps on arrays

def _clip_with_slope(c, size):
    xp = xp_of(c)
    hi = c.dtype.type(size - 1)
    slope = ((c > 0) & (c < hi)).astype(c.dtype)  # borders count as outside
    return xp.clip(c, 0, hi), slope


def _reflect_with_slope(c, size, align_corners):
    """PyTorch's reflect_coordinates (then clip), with the slope of the result."""
    ct = c.dtype.type
    low = ct(0) if align_corners else ct(-0.5)
    twice_span = ct(2 * (size - 1)) if align_corners else ct(2 * size)
    xp = xp_of(c)
    if twice_span == 0:
        return xp.zeros_like(c), xp.zeros_like(c)
    shifted = c - low
    neg = shifted < 0
    mag = xp.abs(shifted)
    extra = mag - xp.trunc(mag / twice_span) * twice_span
    reflected = twice_span - extra
    flip = extra > reflected
    out = xp.where(flip, reflected, extra) + low
    slope = xp.where(flip ^ neg, ct(-1), ct(1))
    out, clip_slope = _clip_with_slope(out.astype(c.dtype), size)
    return out, (slope * clip_slope).astype(c.dtype)


def _pad_coords(c, size, padding_mode, align_corners):
    """PyTorch's compute_coordinates: (coordinates, slope), slope None for identity."""
    if padding_mode == "border":
        return _clip_with_slope(c, size)
    if padding_mode == "reflection":
        return _reflect_with_slope(c, size, align_corners)
    return c, None


def _unnormalize(g, size, align_corners, nd):
    """PyTorch's grid_sampler_unnormalize, rounded as its CPU kernels round it (the 2-d
    kernel is vectorized: ``(g + 1) * s`` or a fused ``g * s + (s - 0.5)``)."""
    ct = g.dtype.type
    if nd == 2:
        if align_corners:
            scale = ct((size - 1) / 2)
            return (g + ct(1)) * scale, float(scale)
        scale = ct(size / 2)
        if g.dtype == np.float32:  # a fused multiply-add, exact in float64 then rounded
            wide = g.astype(np.float64) * float(scale) + float(scale - ct(0.5))
            return wide.astype(np.float32), float(scale)
        return g * scale + (scale - ct(0.5)), float(scale)
    if align_corners:
        return (g + ct(1)) / ct(2) * ct(size - 1), (size - 1) / 2
    return ((g + ct(1)) * ct(size) - ct(1)) / ct(2), size / 2


class _Remap(Node):
    """A piecewise-linear map of coordinates: the value given (computed on arrays), the
    slope given (a number or an array of 0, 1 and -1)."""

    def forward(self, c, value, slope):
        self.slope = slope
        return value.astype(c.dtype, copy=False)

    def backward(self, g):
        if isinstance(self.slope, float):
            return g * self.slope
        return g * wrap(self.slope.astype(g._data.dtype, copy=False))


# ---------------------------------------------------------------------------------------
# grid_sample: the gather of taps and its transpose

def _gather_taps(x, index):
    """x (N, C, *S), index (N, K) into the flattened S -> (N, C, K)."""
    xp = xp_of(x)
    n, c = x.shape[:2]
    flat = x.reshape(n, c, _numel(x.shape[2:]))
    return xp.take_along_axis(flat, index[:, None, :], axis=2)


def _scatter_taps(g, index, spatial):
    """The transpose of ``_gather_taps``: g (N, C, K) summed into (N, C, *spatial)."""
    xp = xp_of(g)
    n, c, k = g.shape
    p = _numel(spatial)
    out = xp.zeros((n * p, c), dtype=g.dtype)
    if n * c * k:
        rows = (index + (xp.arange(n, dtype=index.dtype) * p)[:, None]).reshape(-1)
        src = xp.ascontiguousarray(g.transpose(0, 2, 1)).reshape(n * k, c)
        backend_of(out).kernel("index_add_rows")(out, rows, src)
    out = out.reshape(n, p, c).transpose(0, 2, 1)
    return xp.ascontiguousarray(out).reshape((n, c) + tuple(spatial))


class _GatherTaps(Node):
    def forward(self, x, index):
        self.index, self.spatial = index, x.shape[2:]
        return _gather_taps(x, index)

    def name(self):
        return "GridSamplerGatherBackward0"

    def backward(self, g):
        if is_grad_enabled():
            return apply(_ScatterTaps, g, self.index, self.spatial)
        return wrap(_scatter_taps(g._data, self.index, self.spatial))


class _ScatterTaps(Node):
    def forward(self, g, index, spatial):
        self.index = index
        return _scatter_taps(g, index, spatial)

    def backward(self, gg):
        return apply(_GatherTaps, gg, self.index)


# ---------------------------------------------------------------------------------------
# grid_sample

def _cubic_coefficients(t):
    a = -0.75

    def conv1(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def conv2(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [conv2(t + 1), conv1(t), conv1(1 - t), conv2(2 - t)]


def _check_grid_sample(input, grid, mode):
    if not isinstance(input, TensorBase) or not isinstance(grid, TensorBase):
        bad = "input" if not isinstance(input, TensorBase) else "grid"
        raise TypeError(f"grid_sampler(): argument '{bad}' must be Tensor, not "
                        f"{type(input if bad == 'input' else grid).__name__}")
    if input._data.dtype != grid._data.dtype:
        raise RuntimeError(f"expected scalar type {type_name(input._data.dtype)} but found "
                           f"{type_name(grid._data.dtype)}")
    ishape, gshape = list(input.shape), list(grid.shape)
    if input.ndim < 1 or grid.ndim < 1 or ishape[0] != gshape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {ishape} and grid with sizes {gshape}")
    if gshape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last "
                           f"dimension, but got grid with sizes {gshape}")
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise RuntimeError(
            f"grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, "
            f"but got input with sizes {ishape} and grid with sizes {gshape}")
    for d in range(2, input.ndim):
        if ishape[d] == 0:
            raise RuntimeError(
                f"grid_sampler(): expected input to have non-empty spatial dimensions, but "
                f"input has sizes {ishape} with dimension {d} being empty")
    if mode == "bicubic" and input.ndim != 4:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input._data.dtype.kind != "f":
        raise not_implemented(f"grid_sampler_{input.ndim - 2}d_cpu_kernel_impl",
                              input._data.dtype)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` at the positions given by ``grid``.

    Args:
        input: ``(N, C, H_in, W_in)`` (or ``(N, C, D_in, H_in, W_in)``).
        grid: ``(N, H_out, W_out, 2)`` (or ``(N, D_out, H_out, W_out, 3)``): the ``(x, y[,
            z])`` sampling positions, normalized so that ``-1`` and ``1`` are the input's
            extreme pixels (their centers with ``align_corners=True``, their outer edges
            otherwise).
        mode: ``'bilinear'`` (trilinear for 5-D input), ``'nearest'`` or ``'bicubic'``
            (4-D input only). Default: ``'bilinear'``.
        padding_mode: the values outside the input: ``'zeros'``, ``'border'`` (the nearest
            border value) or ``'reflection'`` (reflected by the border). Default: ``'zeros'``.
        align_corners: see ``grid``. Default: ``False``.

    Returns:
        ``(N, C, H_out, W_out)`` (or ``(N, C, D_out, H_out, W_out)``).

    Examples::

        >>> x = ember.arange(16.).reshape(1, 1, 4, 4)
        >>> grid = ember.zeros(1, 1, 1, 2)  # the center
        >>> F.grid_sample(x, grid, align_corners=False)
        tensor([[[[7.5000]]]])
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    _check_grid_sample(input, grid, mode)
    dtype = input._data.dtype
    if dtype.itemsize < 4:  # float16: computed in float32
        from ember import float32

        out = grid_sample(input.to(float32), grid.to(float32), mode, padding_mode,
                          align_corners)
        return out.to(input.dtype)
    return _grid_sample(input, grid, mode, padding_mode, bool(align_corners))


def _grid_sample(input, grid, mode, padding_mode, align_corners):
    xp = xp_of(input._data)
    n, c = input.shape[:2]
    spatial = tuple(input.shape[2:])  # (D,) H, W
    nd = len(spatial)
    out_spatial = tuple(grid.shape[1:-1])
    ct = input._data.dtype.type
    garr = grid._data
    # per spatial dim (in D, H, W order): the unnormalized coordinate as array and tensor
    coords, coord_t = [], []
    for d, size in enumerate(spatial):
        k = nd - 1 - d  # grid's last dim is (x, y[, z])
        value, scale = _unnormalize(garr[..., k], size, align_corners, nd)
        coords.append(value)
        coord_t.append(apply(_Remap, grid[..., k], value, scale))
    if mode == "bicubic":
        return _bicubic(input, coords, coord_t, spatial, padding_mode, align_corners, ct)
    # bilinear and nearest sample at the padded coordinates
    for d, size in enumerate(spatial):
        value, slope = _pad_coords(coords[d], size, padding_mode, align_corners)
        if slope is not None:
            coord_t[d] = apply(_Remap, coord_t[d], value, slope)
            coords[d] = value
    if mode == "nearest":
        idx = [xp.rint(cd).astype(np.int64) for cd in coords]
        flat, valid = _flat_index(idx, spatial)
        # the weight is 1 (0 outside) and, as in PyTorch, the grid gets a zero gradient
        w = coord_t[0] * 0 + wrap(valid.astype(ct))
        return _weighted_taps(input, [flat.reshape(n, _numel(out_spatial))], [w], out_spatial)
    lo = [xp.floor(cd).astype(np.int64) for cd in coords]
    frac = [coord_t[d] - wrap(lo[d].astype(ct)) for d in range(nd)]
    flats, weights = [], []
    for corner in range(2 ** nd):
        bits = [(corner >> (nd - 1 - d)) & 1 for d in range(nd)]
        flat, valid = _flat_index([lo[d] + bits[d] for d in range(nd)], spatial)
        w = None
        for d in range(nd):
            f = frac[d] if bits[d] else 1 - frac[d]
            w = f if w is None else w * f
        flats.append(flat.reshape(n, _numel(out_spatial)))
        weights.append(w * wrap(valid.astype(ct)))
    return _weighted_taps(input, flats, weights, out_spatial)


def _numel(shape):
    return int(np.prod(shape, dtype=np.int64))


def _flat_index(idx, spatial):
    """Flat indices into the spatial dims (clamped in range) and the in-range mask."""
    xp = xp_of(idx[0])
    valid = xp.ones(idx[0].shape, bool)
    flat = xp.zeros(idx[0].shape, np.int64)
    for i, size in zip(idx, spatial, strict=True):
        valid &= (i >= 0) & (i < size)
        flat = flat * size + xp.clip(i, 0, size - 1)
    return flat, valid


def _weighted_taps(input, flats, weights, out_spatial):
    """sum_k weights[k] * input at flats[k]; weights (N, *O) tensors, flats (N, P) arrays."""
    from ember import stack

    xp = xp_of(input._data)
    n, c = input.shape[:2]
    k = len(flats)
    index = xp.concatenate(flats, 1)  # (N, K * P)
    p = _numel(out_spatial)
    vals = apply(_GatherTaps, input, index).reshape(n, c, k, p)
    w = stack([wt.reshape(n, p) for wt in weights], 1)  # (N, K, P)
    out = (vals * w.unsqueeze(1)).sum(2)
    return out.reshape((n, c) + out_spatial)


def _bicubic(input, coords, coord_t, spatial, padding_mode, align_corners, ct):
    xp = xp_of(input._data)
    n = input.shape[0]
    out_spatial = coords[0].shape[1:]
    lo = [xp.floor(cd) for cd in coords]
    coeffs = [_cubic_coefficients(coord_t[d] - wrap(lo[d].astype(ct)))
              for d in range(2)]
    # the taps' integer positions, padded like the coordinates, per dim
    taps = []
    for d, size in enumerate(spatial):
        per = []
        for j in range(4):
            pos, _ = _pad_coords((lo[d] + (j - 1)).astype(ct), size, padding_mode,
                                 align_corners)
            per.append(pos.astype(np.int64))
        taps.append(per)
    flats, weights = [], []
    for i in range(4):  # rows (H)
        for j in range(4):  # columns (W)
            flat, valid = _flat_index([taps[0][i], taps[1][j]], spatial)
            flats.append(flat.reshape(n, _numel(out_spatial)))
            weights.append(coeffs[0][i] * coeffs[1][j] * wrap(valid.astype(ct)))
    return _weighted_taps(input, flats, weights, out_spatial)

"""Position-sensitive RoIPool (Dai et al., R-FCN): bin ``(i, j)`` of output channel ``c`` is
the average of input channel ``(c * ph + i) * pw + j`` over the bin."""

from __future__ import annotations

import math

import numpy as np

import ember
from ember import nn
from ember.autograd import Function
from embervision.ops._utils import check_roi_boxes_shape, pair
from embervision.ops.ps_roi_align import _check_ps_channels

__all__ = ["PSRoIPool", "ps_roi_pool"]


def _round(v: float) -> int:
    # Half away from zero, as C's round().
    return int(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)


# NOTE [ ps_roi_pool at the image border ]
# torchvision's CPU kernel clips the bins of the forward pass to ``H - 1`` / ``W - 1`` (the
# last row and column are never pooled) but those of the backward pass to ``H`` / ``W``. Both
# are reproduced, so that results and gradients equal torchvision's; for boxes that stay off
# the last row and column the two agree and the gradient is that of the forward.
def _bins(roi, h, w, ph, pw, spatial_scale):
    """``[(i, j, hs, he, ws, we)]`` of the non-empty bins of one roi, clipped to ``[0, h]``
    and ``[0, w]``."""
    sx, sy, ex, ey = (_round(float(v) * spatial_scale) for v in roi)
    roi_w, roi_h = max(ex - sx, 1), max(ey - sy, 1)
    bin_h, bin_w = roi_h / ph, roi_w / pw
    bins = []
    for i in range(ph):
        hs = min(max(int(math.floor(i * bin_h)) + sy, 0), h)
        he = min(max(int(math.ceil((i + 1) * bin_h)) + sy, 0), h)
        for j in range(pw):
            ws = min(max(int(math.floor(j * bin_w)) + sx, 0), w)
            we = min(max(int(math.ceil((j + 1) * bin_w)) + sx, 0), w)
            if he > hs and we > ws:
                bins.append((i, j, hs, he, ws, we))
    return bins


class _PSRoIPoolFunction(Function):
    @staticmethod
    def forward(ctx, input, rois, output_size, spatial_scale):
        x = input.detach().cpu().numpy()
        r = rois.detach().cpu().numpy()
        n, c, h, w = x.shape
        ph, pw = output_size
        c_out = _check_ps_channels(c, ph, pw)
        out = np.zeros((r.shape[0], c_out, ph, pw), dtype=x.dtype)
        plans = []
        for k, roi in enumerate(r):
            b = int(roi[0])
            if not 0 <= b < n:
                raise IndexError(f"roi {k} has batch index {b}, but the input has {n} images")
            plans.append((b, _bins(roi[1:], h, w, ph, pw, spatial_scale)))
            feat = x[b].reshape(c_out, ph, pw, h, w)
            for i, j, hs, he, ws, we in _bins(roi[1:], h - 1, w - 1, ph, pw, spatial_scale):
                out[k, :, i, j] = feat[:, i, j, hs:he, ws:we].mean(axis=(-1, -2))
        ctx.plans, ctx.input_shape, ctx.dtype = plans, x.shape, x.dtype
        ctx.mark_non_differentiable(rois)
        return ember.from_numpy(out).to(input.device)

    @staticmethod
    def backward(ctx, grad_output):
        g = grad_output.detach().cpu().numpy()
        n, c, h, w = ctx.input_shape
        c_out, ph, pw = g.shape[1:]
        grad = np.zeros((n, c_out, ph, pw, h, w), dtype=ctx.dtype)
        for k, (b, bins) in enumerate(ctx.plans):
            for i, j, hs, he, ws, we in bins:
                area = (he - hs) * (we - ws)
                grad[b, :, i, j, hs:he, ws:we] += (g[k, :, i, j] / area)[:, None, None]
        grad_input = ember.from_numpy(grad.reshape(n, c, h, w)).to(grad_output.device)
        return grad_input, None, None, None


def ps_roi_pool(input: ember.Tensor, boxes, output_size, spatial_scale: float = 1.0):
    """Position-sensitive Region of Interest Pool: average pooling of box bins, bin ``(i, j)``
    of output channel ``c`` from input channel ``(c * output_size[0] + i) * output_size[1] +
    j``.

    Args:
        input (Tensor[N, C, H, W]): ``C`` must be a multiple of ``output_size[0] *
            output_size[1]``.
        boxes (Tensor[K, 5] or list of Tensor[L, 4]): the boxes ``(x1, y1, x2, y2)`` (with the
            batch index first for a tensor).
        output_size (int or (int, int)): the pooled size.
        spatial_scale (float): scales box coordinates to input coordinates. Default: 1.0.

    Returns:
        Tensor[K, C / (output_size[0] * output_size[1]), output_size[0], output_size[1]]
    """
    if not isinstance(input, ember.Tensor) or input.dim() != 4:
        raise ValueError(f"input must be a Tensor[N, C, H, W], got "
                         f"{tuple(input.shape) if isinstance(input, ember.Tensor) else input}")
    rois = check_roi_boxes_shape(boxes)
    return _PSRoIPoolFunction.apply(input, rois.to(input.dtype), pair(output_size),
                                    float(spatial_scale))


class PSRoIPool(nn.Module):
    """Module form of :func:`ps_roi_pool`."""

    def __init__(self, output_size, spatial_scale: float):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale

    def forward(self, input, rois):
        return ps_roi_pool(input, rois, self.output_size, self.spatial_scale)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(output_size={self.output_size}, "
                f"spatial_scale={self.spatial_scale})")

"""RoIAlign (He et al., Mask R-CNN): bilinear pooling of box regions, forward and backward."""

from __future__ import annotations

import numpy as np

import ember
from ember import nn
from ember.autograd import Function
from embervision.ops._utils import check_roi_boxes_shape, pair

__all__ = ["RoIAlign", "roi_align"]


def _sample_weights(roi, height, width, ph, pw, scale, sampling_ratio, aligned):
    """For one roi: flat input indices ``(ph, pw, S, 4)``, their bilinear weights and the
    number of samples per bin (the divisor of the average)."""
    offset = 0.5 if aligned else 0.0
    x1, y1, x2, y2 = (float(v) * scale - offset for v in roi)
    roi_w, roi_h = x2 - x1, y2 - y1
    if not aligned:
        roi_w, roi_h = max(roi_w, 1.0), max(roi_h, 1.0)
    bin_h, bin_w = roi_h / ph, roi_w / pw
    gh = sampling_ratio if sampling_ratio > 0 else int(np.ceil(roi_h / ph))
    gw = sampling_ratio if sampling_ratio > 0 else int(np.ceil(roi_w / pw))
    count = max(gh * gw, 1)
    if gh <= 0 or gw <= 0:
        return None, None, count
    iy = (np.arange(gh) + 0.5) / gh
    ix = (np.arange(gw) + 0.5) / gw
    ys = y1 + (np.arange(ph)[:, None] + iy[None, :]) * bin_h  # (ph, gh)
    xs = x1 + (np.arange(pw)[:, None] + ix[None, :]) * bin_w  # (pw, gw)
    y = np.broadcast_to(ys[:, None, :, None], (ph, pw, gh, gw)).reshape(ph, pw, -1)
    x = np.broadcast_to(xs[None, :, None, :], (ph, pw, gh, gw)).reshape(ph, pw, -1)
    outside = (y < -1.0) | (y > height) | (x < -1.0) | (x > width)
    y = np.clip(y, 0, None)
    x = np.clip(x, 0, None)
    y_low = np.floor(y).astype(np.int64)
    x_low = np.floor(x).astype(np.int64)
    top_y = y_low >= height - 1
    top_x = x_low >= width - 1
    y_low = np.where(top_y, height - 1, y_low)
    x_low = np.where(top_x, width - 1, x_low)
    y = np.where(top_y, y_low, y)
    x = np.where(top_x, x_low, x)
    y_high = np.where(top_y, y_low, y_low + 1)
    x_high = np.where(top_x, x_low, x_low + 1)
    ly, lx = y - y_low, x - x_low
    hy, hx = 1.0 - ly, 1.0 - lx
    idx = np.stack([y_low * width + x_low, y_low * width + x_high,
                    y_high * width + x_low, y_high * width + x_high], axis=-1)
    w = np.stack([hy * hx, hy * lx, ly * hx, ly * lx], axis=-1)
    w[outside] = 0.0
    idx[outside] = 0
    return idx, w, count


class _RoIAlignFunction(Function):
    @staticmethod
    def forward(ctx, input, rois, output_size, spatial_scale, sampling_ratio, aligned):
        x = input.detach().cpu().numpy()
        r = rois.detach().cpu().numpy()
        n, c, h, w = x.shape
        ph, pw = output_size
        out = np.zeros((r.shape[0], c, ph, pw), dtype=x.dtype)
        plans = []
        for k, roi in enumerate(r):
            b = int(roi[0])
            if not 0 <= b < n:
                raise IndexError(f"roi {k} has batch index {b}, but the input has {n} images")
            idx, wts, count = _sample_weights(roi[1:], h, w, ph, pw, spatial_scale,
                                              sampling_ratio, aligned)
            plans.append((b, idx, wts, count))
            if idx is None or h == 0 or w == 0:
                continue
            feat = x[b].reshape(c, h * w)
            vals = feat[:, idx] * wts.astype(x.dtype)  # (c, ph, pw, S, 4)
            out[k] = vals.sum(axis=(-1, -2)) / count
        ctx.plans = plans
        ctx.input_shape = x.shape
        ctx.dtype = x.dtype
        ctx.mark_non_differentiable(rois)
        return ember.from_numpy(out).to(input.device)

    @staticmethod
    def backward(ctx, grad_output):
        g = grad_output.detach().cpu().numpy()
        n, c, h, w = ctx.input_shape
        grad = np.zeros((n, c, h * w), dtype=ctx.dtype)
        for k, (b, idx, wts, count) in enumerate(ctx.plans):
            if idx is None or h == 0 or w == 0:
                continue
            contrib = g[k][:, :, :, None, None] * (wts / count).astype(ctx.dtype)
            np.add.at(grad[b], (slice(None), idx.reshape(-1)), contrib.reshape(c, -1))
        grad_input = ember.from_numpy(grad.reshape(n, c, h, w)).to(grad_output.device)
        return grad_input, None, None, None, None, None


def roi_align(input: ember.Tensor, boxes, output_size, spatial_scale: float = 1.0,
              sampling_ratio: int = -1, aligned: bool = False) -> ember.Tensor:
    """Region of Interest Align: average of bilinear samples over each bin of each box.

    Args:
        input (Tensor[N, C, H, W]): the feature maps.
        boxes (Tensor[K, 5] or list of Tensor[L, 4]): ``(batch_index, x1, y1, x2, y2)``
            rows, or one ``(x1, y1, x2, y2)`` tensor per image.
        output_size (int or (int, int)): the pooled ``(height, width)``.
        spatial_scale (float): the scale from box coordinates to input coordinates.
            Default: 1.0.
        sampling_ratio (int): samples per bin along each axis; ``<= 0`` for
            ``ceil(roi_size / output_size)``. Default: -1.
        aligned (bool): shift the boxes by -0.5 pixel (the corrected version). Default: False.

    Returns:
        Tensor[K, C, output_size[0], output_size[1]]
    """
    if input.dim() != 4:
        raise ValueError(f"input must be a Tensor[N, C, H, W], got {tuple(input.shape)}")
    rois = check_roi_boxes_shape(boxes)
    return _RoIAlignFunction.apply(input, rois.to(input.dtype), pair(output_size),
                                   float(spatial_scale), int(sampling_ratio), bool(aligned))


class RoIAlign(nn.Module):
    """Module form of :func:`roi_align`."""

    def __init__(self, output_size, spatial_scale: float, sampling_ratio: int,
                 aligned: bool = False):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio
        self.aligned = aligned

    def forward(self, input, rois):
        return roi_align(input, rois, self.output_size, self.spatial_scale, self.sampling_ratio,
                         self.aligned)

    def extra_repr(self) -> str:
        return (f"output_size={self.output_size}, spatial_scale={self.spatial_scale}, "
                f"sampling_ratio={self.sampling_ratio}, aligned={self.aligned}")

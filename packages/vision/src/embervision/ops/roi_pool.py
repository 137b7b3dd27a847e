"""RoIPool (Girshick, Fast R-CNN): max pooling of box regions, forward and backward."""

from __future__ import annotations

import math

import numpy as np

import ember
from ember import nn
from ember.autograd import Function
from embervision.ops._utils import check_roi_boxes_shape, pair

__all__ = ["RoIPool", "roi_pool"]


class _RoIPoolFunction(Function):
    @staticmethod
    def forward(ctx, input, rois, output_size, spatial_scale):
        x = input.detach().cpu().numpy()
        r = rois.detach().cpu().numpy()
        n, c, h, w = x.shape
        ph, pw = output_size
        out = np.zeros((r.shape[0], c, ph, pw), dtype=x.dtype)
        argmax = np.full((r.shape[0], c, ph, pw), -1, dtype=np.int64)
        for k, roi in enumerate(r):
            b = int(roi[0])
            if not 0 <= b < n:
                raise IndexError(f"roi {k} has batch index {b}, but the input has {n} images")
            # Box corners are rounded half away from zero, as in the reference kernel.
            sx, sy, ex, ey = (int(math.floor(abs(v * spatial_scale) + 0.5))
                              * (1 if v >= 0 else -1) for v in roi[1:])
            roi_w, roi_h = max(ex - sx + 1, 1), max(ey - sy + 1, 1)
            bin_h, bin_w = roi_h / ph, roi_w / pw
            for i in range(ph):
                hs = min(max(int(math.floor(i * bin_h)) + sy, 0), h)
                he = min(max(int(math.ceil((i + 1) * bin_h)) + sy, 0), h)
                for j in range(pw):
                    ws = min(max(int(math.floor(j * bin_w)) + sx, 0), w)
                    we = min(max(int(math.ceil((j + 1) * bin_w)) + sx, 0), w)
                    if he <= hs or we <= ws:
                        continue
                    region = x[b, :, hs:he, ws:we].reshape(c, -1)
                    a = region.argmax(axis=1)
                    out[k, :, i, j] = region[np.arange(c), a]
                    rw = we - ws
                    argmax[k, :, i, j] = (hs + a // rw) * w + ws + a % rw
        ctx.argmax = argmax
        ctx.batch = r[:, 0].astype(np.int64)
        ctx.input_shape = x.shape
        ctx.dtype = x.dtype
        ctx.mark_non_differentiable(rois)
        return ember.from_numpy(out).to(input.device)

    @staticmethod
    def backward(ctx, grad_output):
        g = grad_output.detach().cpu().numpy()
        n, c, h, w = ctx.input_shape
        grad = np.zeros((n, c, h * w), dtype=ctx.dtype)
        for k, b in enumerate(ctx.batch):
            am = ctx.argmax[k].reshape(c, -1)
            gk = g[k].reshape(c, -1)
            valid = am >= 0
            chan = np.broadcast_to(np.arange(c)[:, None], am.shape)
            np.add.at(grad[b], (chan[valid], am[valid]), gk[valid])
        grad_input = ember.from_numpy(grad.reshape(n, c, h, w)).to(grad_output.device)
        return grad_input, None, None, None


def roi_pool(input: ember.Tensor, boxes, output_size, spatial_scale: float = 1.0):
    """Region of Interest Pooling: the maximum over each bin of each (rounded) box.

    Args:
        input (Tensor[N, C, H, W]): the feature maps.
        boxes (Tensor[K, 5] or list of Tensor[L, 4]): the boxes, as for
            :func:`~embervision.ops.roi_align`.
        output_size (int or (int, int)): the pooled ``(height, width)``.
        spatial_scale (float): Default: 1.0.

    Returns:
        Tensor[K, C, output_size[0], output_size[1]]
    """
    if input.dim() != 4:
        raise ValueError(f"input must be a Tensor[N, C, H, W], got {tuple(input.shape)}")
    rois = check_roi_boxes_shape(boxes)
    return _RoIPoolFunction.apply(input, rois.to(input.dtype), pair(output_size),
                                  float(spatial_scale))


class RoIPool(nn.Module):
    """Module form of :func:`roi_pool`."""

    def __init__(self, output_size, spatial_scale: float):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale

    def forward(self, input, rois):
        return roi_pool(input, rois, self.output_size, self.spatial_scale)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}, spatial_scale={self.spatial_scale}"

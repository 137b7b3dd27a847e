"""Position-sensitive RoIAlign (Dai et al., R-FCN): bin ``(i, j)`` of output channel ``c`` is
pooled from input channel ``(c * ph + i) * pw + j``."""

from __future__ import annotations

import numpy as np

import ember
from ember import nn
from ember.autograd import Function
from embervision.ops._utils import check_roi_boxes_shape, pair
from embervision.ops.roi_align import _sample_weights

__all__ = ["PSRoIAlign", "ps_roi_align"]


def _check_ps_channels(channels, ph, pw):
    if channels % (ph * pw) != 0:
        raise ValueError(f"the input has {channels} channels, which is not a multiple of "
                         f"output_size[0] * output_size[1] = {ph * pw}")
    return channels // (ph * pw)


class _PSRoIAlignFunction(Function):
    @staticmethod
    def forward(ctx, input, rois, output_size, spatial_scale, sampling_ratio):
        x = input.detach().cpu().numpy()
        r = rois.detach().cpu().numpy()
        n, c, h, w = x.shape
        ph, pw = output_size
        c_out = _check_ps_channels(c, ph, pw)
        out = np.zeros((r.shape[0], c_out, ph, pw), dtype=x.dtype)
        ii = np.arange(ph)[:, None, None]
        jj = np.arange(pw)[None, :, None]
        plans = []
        for k, roi in enumerate(r):
            b = int(roi[0])
            if not 0 <= b < n:
                raise IndexError(f"roi {k} has batch index {b}, but the input has {n} images")
            idx, wts, count = _sample_weights(roi[1:], h, w, ph, pw, spatial_scale,
                                              sampling_ratio, True)
            plans.append((b, idx, wts, count))
            if idx is None or h == 0 or w == 0:
                continue
            feat = x[b].reshape(c_out, ph, pw, h * w)
            # vals[c, i, j, s, t] = feat[c, i, j, idx[i, j, s, t]]
            vals = feat[:, ii[..., None], jj[..., None], idx]
            out[k] = (vals * wts.astype(x.dtype)).sum(axis=(-1, -2)) / count
        ctx.plans, ctx.input_shape, ctx.dtype = plans, x.shape, x.dtype
        ctx.mark_non_differentiable(rois)
        return ember.from_numpy(out).to(input.device)

    @staticmethod
    def backward(ctx, grad_output):
        g = grad_output.detach().cpu().numpy()
        n, c, h, w = ctx.input_shape
        c_out, ph, pw = g.shape[1:]
        grad = np.zeros((n, c_out, ph, pw, h * w), dtype=ctx.dtype)
        chan = np.arange(c_out)[:, None, None, None, None]
        ii = np.arange(ph)[None, :, None, None, None]
        jj = np.arange(pw)[None, None, :, None, None]
        for k, (b, idx, wts, count) in enumerate(ctx.plans):
            if idx is None or h == 0 or w == 0:
                continue
            contrib = g[k][:, :, :, None, None] * (wts / count).astype(ctx.dtype)
            target = np.broadcast_to(idx[None], contrib.shape)
            np.add.at(grad[b], (np.broadcast_to(chan, contrib.shape),
                                np.broadcast_to(ii, contrib.shape),
                                np.broadcast_to(jj, contrib.shape), target), contrib)
        grad_input = ember.from_numpy(grad.reshape(n, c, h, w)).to(grad_output.device)
        return grad_input, None, None, None, None


def ps_roi_align(input: ember.Tensor, boxes, output_size, spatial_scale: float = 1.0,
                 sampling_ratio: int = -1) -> ember.Tensor:
    """Position-sensitive Region of Interest Align.

    Args:
        input (Tensor[N, C, H, W]): ``C`` must be a multiple of ``output_size[0] *
            output_size[1]``.
        boxes (Tensor[K, 5] or list of Tensor[L, 4]): the boxes.
        output_size (int or (int, int)): the pooled size.
        spatial_scale (float): Default: 1.0.
        sampling_ratio (int): Default: -1 (adaptive).

    Returns:
        Tensor[K, C / (output_size[0] * output_size[1]), output_size[0], output_size[1]]
    """
    if input.dim() != 4:
        raise ValueError(f"input must be a Tensor[N, C, H, W], got {tuple(input.shape)}")
    rois = check_roi_boxes_shape(boxes)
    return _PSRoIAlignFunction.apply(input, rois.to(input.dtype), pair(output_size),
                                     float(spatial_scale), int(sampling_ratio))


class PSRoIAlign(nn.Module):
    """Module form of :func:`ps_roi_align`."""

    def __init__(self, output_size, spatial_scale: float, sampling_ratio: int):
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale
        self.sampling_ratio = sampling_ratio

    def forward(self, input, rois):
        return ps_roi_align(input, rois, self.output_size, self.spatial_scale,
                            self.sampling_ratio)

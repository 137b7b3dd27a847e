"""Deformable convolution (Dai et al., 2017; modulated: Zhu et al., 2019).

# NOTE [ deform_conv2d from differentiable ops ]
The kernel samples the input bilinearly at the regular grid moved by ``offset`` (zero outside
the image), scales each sample by ``mask``, and contracts the samples with ``weight``. It is
built from ember ops (floor, gather, matmul), so autograd gives the gradients to input,
offset, mask, weight and bias; the bilinear weights are differentiable in the offsets, the
corner indices are not (as in torchvision's kernel).
"""

from __future__ import annotations

import math

import ember
from ember import nn
from ember.nn import init
from embervision.ops._utils import pair

__all__ = ["DeformConv2d", "deform_conv2d"]


def _sample(x_flat, ys, xs, h, w, channels_per_group):
    """Bilinear samples of ``x_flat`` ``(N, C, H*W)`` at ``ys, xs`` ``(N, G, L)``: ``(N, C, L)``
    (zero outside the image)."""
    n, g, length = ys.shape
    y0 = ember.floor(ys)
    x0 = ember.floor(xs)
    ly, lx = ys - y0, xs - x0
    y0i, x0i = y0.to(ember.int64), x0.to(ember.int64)
    inside = ((ys > -1) & (ys < h) & (xs > -1) & (xs < w)).to(x_flat.dtype)
    out = None
    for dy, dx, wt in ((0, 0, (1 - ly) * (1 - lx)), (0, 1, (1 - ly) * lx),
                       (1, 0, ly * (1 - lx)), (1, 1, ly * lx)):
        yi, xi = y0i + dy, x0i + dx
        valid = ((yi >= 0) & (yi < h) & (xi >= 0) & (xi < w)).to(x_flat.dtype)
        index = (yi.clamp(0, h - 1) * w + xi.clamp(0, w - 1))
        # Each offset group's index serves its block of channels.
        index = index.repeat_interleave(channels_per_group, dim=1)
        vals = ember.gather(x_flat, 2, index)
        coef = (wt * valid * inside).repeat_interleave(channels_per_group, dim=1)
        out = vals * coef if out is None else out + vals * coef
    return out


def deform_conv2d(input, offset, weight, bias=None, stride=(1, 1), padding=(0, 0),
                  dilation=(1, 1), mask=None):
    """Deformable 2-D convolution (v2 when ``mask`` is given).

    Args:
        input (Tensor[N, C_in, H, W]): the input.
        offset (Tensor[N, 2 * offset_groups * kH * kW, H_out, W_out]): the ``(dy, dx)``
            displacement of each kernel point at each output location.
        weight (Tensor[C_out, C_in // groups, kH, kW]): the kernel.
        bias (Tensor[C_out], optional): the bias.
        stride (int or (int, int)): Default: 1.
        padding (int or (int, int)): Default: 0.
        dilation (int or (int, int)): Default: 1.
        mask (Tensor[N, offset_groups * kH * kW, H_out, W_out], optional): the modulation of
            each sample.

    Returns:
        Tensor[N, C_out, H_out, W_out]

    Examples::

        >>> x = ember.rand(1, 3, 8, 8)
        >>> w = ember.rand(5, 3, 3, 3)
        >>> off = ember.zeros(1, 2 * 9, 6, 6)
        >>> deform_conv2d(x, off, w).shape  # zero offsets: an ordinary convolution
        ember.Size([1, 5, 6, 6])
    """
    for name, t, dims in (("input", input, 4), ("offset", offset, 4), ("weight", weight, 4)):
        if not isinstance(t, ember.Tensor) or t.dim() != dims:
            raise ValueError(f"{name} must be a 4-D tensor, got "
                             f"{tuple(t.shape) if isinstance(t, ember.Tensor) else type(t)}")
    sh, sw = pair(stride)
    ph, pw = pair(padding)
    dh, dw = pair(dilation)
    n, c_in, h, w = input.shape
    c_out, c_per_group, kh, kw = weight.shape
    k = kh * kw
    if c_per_group == 0 or c_in % c_per_group != 0:
        raise ValueError(f"the input's {c_in} channels are not a multiple of the weight's "
                         f"{c_per_group} input channels per group")
    groups = c_in // c_per_group
    if c_out % groups != 0:
        raise ValueError(f"the weight's {c_out} output channels are not a multiple of "
                         f"groups={groups}")
    h_out = (h + 2 * ph - (dh * (kh - 1) + 1)) // sh + 1
    w_out = (w + 2 * pw - (dw * (kw - 1) + 1)) // sw + 1
    if offset.shape[1] % (2 * k) != 0 or offset.shape[1] == 0:
        raise RuntimeError(f"the shape of the offset tensor at dimension 1 is not valid. It "
                           f"should be a multiple of 2 * weight.size[2] * weight.size[3].\n"
                           f"Got offset.shape[1]={offset.shape[1]}, while 2 * weight.size[2] * "
                           f"weight.size[3]={2 * k}")
    offset_groups = offset.shape[1] // (2 * k)
    if c_in % offset_groups != 0:
        raise RuntimeError(f"the input's {c_in} channels are not a multiple of the "
                           f"{offset_groups} offset groups")
    if tuple(offset.shape) != (n, 2 * offset_groups * k, h_out, w_out):
        raise RuntimeError(f"offset must have shape {(n, 2 * offset_groups * k, h_out, w_out)}, "
                           f"got {tuple(offset.shape)}")
    if mask is not None and tuple(mask.shape) != (n, offset_groups * k, h_out, w_out):
        raise RuntimeError(f"mask must have shape {(n, offset_groups * k, h_out, w_out)}, got "
                           f"{tuple(mask.shape)}")
    dtype, device = input.dtype, input.device
    if n == 0 or h_out <= 0 or w_out <= 0:
        out = ember.zeros(n, c_out, max(h_out, 0), max(w_out, 0), dtype=dtype, device=device)
        return out if bias is None else out + bias.reshape(1, -1, 1, 1) * 0

    # The regular grid: base[k, i, j] = i * stride - pad + ki * dilation (and likewise x).
    ki = ember.arange(kh, dtype=dtype, device=device).repeat_interleave(kw) * dh
    kj = ember.arange(kw, dtype=dtype, device=device).repeat(kh) * dw
    oy = ember.arange(h_out, dtype=dtype, device=device) * sh - ph
    ox = ember.arange(w_out, dtype=dtype, device=device) * sw - pw
    base_y = ki.reshape(k, 1, 1) + oy.reshape(1, h_out, 1)
    base_x = kj.reshape(k, 1, 1) + ox.reshape(1, 1, w_out)
    off = offset.reshape(n, offset_groups, k, 2, h_out, w_out)
    ys = (base_y + off[:, :, :, 0]).reshape(n, offset_groups, -1)
    xs = (base_x + off[:, :, :, 1]).reshape(n, offset_groups, -1)
    cols = _sample(input.reshape(n, c_in, h * w), ys, xs, h, w, c_in // offset_groups)
    cols = cols.reshape(n, c_in, k, h_out * w_out)
    if mask is not None:
        m = mask.reshape(n, offset_groups, 1, k, h_out * w_out)
        cols = (cols.reshape(n, offset_groups, c_in // offset_groups, k, h_out * w_out) * m)
    # columns (N, groups, C_in/groups * K, L) contracted with weight (groups, C_out/groups, ...)
    cols = cols.reshape(n, groups, c_per_group * k, h_out * w_out)
    wmat = weight.reshape(groups, c_out // groups, c_per_group * k)
    out = ember.matmul(wmat.unsqueeze(0), cols).reshape(n, c_out, h_out, w_out)
    if bias is not None:
        out = out + bias.reshape(1, c_out, 1, 1)
    return out


class DeformConv2d(nn.Module):
    """Deformable convolution layer; see :func:`deform_conv2d`. The offsets (and mask) are
    passed to ``forward``.

    Args:
        in_channels (int): input channels.
        out_channels (int): output channels.
        kernel_size (int or (int, int)): the kernel size.
        stride (int or (int, int)): Default: 1.
        padding (int or (int, int)): Default: 0.
        dilation (int or (int, int)): Default: 1.
        groups (int): Default: 1.
        bias (bool): Default: ``True``.

    Shape:
        - input: ``(N, C_in, H, W)``, offset ``(N, 2 * offset_groups * kH * kW, H_out, W_out)``,
          mask ``(N, offset_groups * kH * kW, H_out, W_out)``
        - output: ``(N, C_out, H_out, W_out)``
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True):
        super().__init__()
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = pair(kernel_size)
        self.stride = pair(stride)
        self.padding = pair(padding)
        self.dilation = pair(dilation)
        self.groups = groups
        self.weight = nn.Parameter(ember.empty(out_channels, in_channels // groups,
                                               *self.kernel_size))
        if bias:
            self.bias = nn.Parameter(ember.empty(out_channels))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in = self.weight.shape[1] * self.kernel_size[0] * self.kernel_size[1]
            bound = 1 / math.sqrt(fan_in)
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input, offset, mask=None):
        return deform_conv2d(input, offset, self.weight, self.bias, stride=self.stride,
                             padding=self.padding, dilation=self.dilation, mask=mask)

    def extra_repr(self) -> str:
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        s += f", padding={self.padding}" if self.padding != (0, 0) else ""
        s += f", dilation={self.dilation}" if self.dilation != (1, 1) else ""
        s += f", groups={self.groups}" if self.groups != 1 else ""
        s += ", bias=False" if self.bias is None else ""
        return s

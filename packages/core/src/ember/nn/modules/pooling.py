"""Pooling layers: max, average, adaptive, LP pooling and max-unpooling."""

from __future__ import annotations

from ember.nn import functional as F
from ember.nn.modules.conv import _pair, _single, _triple
from ember.nn.modules.module import Module

__all__ = [
    "MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
    "AvgPool1d", "AvgPool2d", "AvgPool3d", "LPPool1d", "LPPool2d", "LPPool3d",
    "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d",
]


class _MaxPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "dilation", "return_indices",
                     "ceil_mode"]

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1,
                 return_indices: bool = False, ceil_mode: bool = False) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return ("kernel_size={kernel_size}, stride={stride}, padding={padding}"
                ", dilation={dilation}, ceil_mode={ceil_mode}".format(**self.__dict__))

    def forward(self, input):
        return self._fn(input, self.kernel_size, self.stride, self.padding, self.dilation,
                        ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class MaxPool1d(_MaxPoolNd):
    """Applies a 1D max pooling over an input signal composed of several input planes.

    Args:
        kernel_size: the size of the sliding window.
        stride: the stride of the window. Default: ``kernel_size``.
        padding: implicit negative infinity padding on both sides.
        dilation: the stride between elements within a window.
        return_indices: also return the argmax positions (for :class:`MaxUnpool1d`).
        ceil_mode: use ceil instead of floor to compute the output length.

    Shape:
        - Input: :math:`(N, C, L_{in})` or :math:`(C, L_{in})`; Output: the same with
          :math:`L_{out}`.
    """

    _fn = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """Applies a 2D max pooling over an input signal composed of several input planes.

    Args:
        kernel_size, stride, padding, dilation: an int or a tuple (h, w); stride
            defaults to kernel_size.
        return_indices: also return the argmax positions (for :class:`MaxUnpool2d`).
        ceil_mode: use ceil instead of floor to compute the output shape.

    Examples::

        >>> m = nn.MaxPool2d((3, 2), stride=(2, 1))
        >>> m(ember.randn(20, 16, 50, 32)).shape
        ember.Size([20, 16, 24, 31])
    """

    _fn = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """Applies a 3D max pooling over an input signal composed of several input planes
    (arguments as :class:`MaxPool2d`, with triples)."""

    _fn = staticmethod(F.max_pool3d)


class _MaxUnpoolNd(Module):
    _tuple = None
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0) -> None:
        super().__init__()
        t = type(self)._tuple
        self.kernel_size = t(kernel_size)
        self.stride = t(stride if (stride is not None) else kernel_size)
        self.padding = t(padding)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"

    def forward(self, input, indices, output_size=None):
        return type(self)._fn(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)


class MaxUnpool1d(_MaxUnpoolNd):
    """Computes a partial inverse of :class:`MaxPool1d`: the maxima go back to the
    positions given by ``indices``, zeros elsewhere.

    ``forward(input, indices, output_size=None)``.
    """

    _tuple = staticmethod(_single)
    _fn = staticmethod(F.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """Computes a partial inverse of :class:`MaxPool2d`.

    Examples::

        >>> pool = nn.MaxPool2d(2, stride=2, return_indices=True)
        >>> unpool = nn.MaxUnpool2d(2, stride=2)
        >>> out, idx = pool(ember.randn(1, 1, 4, 4))
        >>> unpool(out, idx).shape
        ember.Size([1, 1, 4, 4])
    """

    _tuple = staticmethod(_pair)
    _fn = staticmethod(F.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """Computes a partial inverse of :class:`MaxPool3d`."""

    _tuple = staticmethod(_triple)
    _fn = staticmethod(F.max_unpool3d)


class _AvgPoolNd(Module):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    """Applies a 1D average pooling over an input signal composed of several input planes.

    Args:
        kernel_size: the size of the window.
        stride: the stride of the window. Default: ``kernel_size``.
        padding: implicit zero padding on both sides.
        ceil_mode: use ceil instead of floor to compute the output length.
        count_include_pad: include the zero-padding in the averaging count.
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__()
        self.kernel_size = _single(kernel_size)
        self.stride = _single(stride if stride is not None else kernel_size)
        self.padding = _single(padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class _AvgPoolDiv(_AvgPoolNd):
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad",
                     "divisor_override"]
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override=None) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding,
                              self.ceil_mode, self.count_include_pad, self.divisor_override)


class AvgPool2d(_AvgPoolDiv):
    """Applies a 2D average pooling over an input signal composed of several input planes.

    Args:
        kernel_size, stride, padding: an int or a tuple (h, w); stride defaults to
            kernel_size.
        ceil_mode: use ceil instead of floor to compute the output shape.
        count_include_pad: include the zero-padding in the averaging count.
        divisor_override: if given, the divisor instead of the size of the window.
    """

    _fn = staticmethod(F.avg_pool2d)


class AvgPool3d(_AvgPoolDiv):
    """Applies a 3D average pooling over an input signal composed of several input planes
    (arguments as :class:`AvgPool2d`, with triples)."""

    _fn = staticmethod(F.avg_pool3d)


class _LPPoolNd(Module):
    __constants__ = ["norm_type", "kernel_size", "stride", "ceil_mode"]
    _fn = None

    def __init__(self, norm_type: float, kernel_size, stride=None,
                 ceil_mode: bool = False) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def extra_repr(self) -> str:
        return ("norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, "
                "ceil_mode={ceil_mode}".format(**self.__dict__))

    def forward(self, input):
        return type(self)._fn(input, float(self.norm_type), self.kernel_size, self.stride,
                              self.ceil_mode)


class LPPool1d(_LPPoolNd):
    """Applies a 1D power-average pooling: :math:`f(X) = \\sqrt[p]{\\sum_{x \\in X} x^p}`
    over each window (p = inf is max pooling, p = 1 sum pooling)."""

    _fn = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """Applies a 2D power-average pooling over an input signal composed of several input
    planes: :math:`f(X) = \\sqrt[p]{\\sum_{x \\in X} x^p}` over each window."""

    _fn = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """Applies a 3D power-average pooling over an input signal composed of several input
    planes."""

    _fn = staticmethod(F.lp_pool3d)


class _AdaptiveMaxPoolNd(Module):
    __constants__ = ["output_size", "return_indices"]
    _fn = None

    def __init__(self, output_size, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"

    def forward(self, input):
        return type(self)._fn(input, self.output_size, self.return_indices)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Applies a 1D adaptive max pooling: the output has ``output_size`` entries
    whatever the input length (``return_indices`` also returns the argmax positions)."""

    _fn = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Applies a 2D adaptive max pooling; ``output_size`` is an int or (H, W), None
    keeping that dim's input size."""

    _fn = staticmethod(F.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Applies a 3D adaptive max pooling; ``output_size`` is an int or (D, H, W)."""

    _fn = staticmethod(F.adaptive_max_pool3d)


class _AdaptiveAvgPoolNd(Module):
    __constants__ = ["output_size"]
    _fn = None

    def __init__(self, output_size) -> None:
        super().__init__()
        self.output_size = output_size

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"

    def forward(self, input):
        return type(self)._fn(input, self.output_size)


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Applies a 1D adaptive average pooling over an input signal composed of several
    input planes."""

    _fn = staticmethod(F.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Applies a 2D adaptive average pooling; ``output_size`` is an int or (H, W), None
    keeping that dim's input size.

    Examples::

        >>> m = nn.AdaptiveAvgPool2d((5, 7))
        >>> m(ember.randn(1, 64, 8, 9)).shape
        ember.Size([1, 64, 5, 7])
    """

    _fn = staticmethod(F.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Applies a 3D adaptive average pooling; ``output_size`` is an int or (D, H, W)."""

    _fn = staticmethod(F.adaptive_avg_pool3d)


class _FractionalMaxPoolNd(Module):
    __constants__ = ["kernel_size", "return_indices", "output_size", "output_ratio"]
    _nd = 0

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None) -> None:
        super().__init__()
        t = _pair if self._nd == 2 else _triple
        name = f"FractionalMaxPool{self._nd}d"
        self.kernel_size = t(kernel_size)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = t(output_size) if output_size is not None else None
        self.output_ratio = t(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a "
                             "pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        fn = F.fractional_max_pool2d if self._nd == 2 else F.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio,
                  self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    r"""Fractional max pooling over a 2-d input (`Graham, 2014
    <https://arxiv.org/abs/1412.6071>`__): ``kernel_size`` windows at pseudo-random
    positions whose count is the output size, placed as PyTorch places them.

    Args:
        kernel_size: the window size, ``k`` or ``(kH, kW)``.
        output_size: the output size, ``oH x oW`` (an int for a square).
        output_ratio: the output size as a fraction of the input's, in (0, 1).
        return_indices: also return the indices of the maxima (for ``MaxUnpool2d``).
        _random_samples: (N, C, 2) samples in [0, 1) fixing the windows (a buffer); new
            ones are drawn at every call when None.

    Shape:
        - Input: (N, C, H_in, W_in) or (C, H_in, W_in). Output: (N, C, H_out, W_out) or
          (C, H_out, W_out).

    Examples::

        >>> m = nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5))
        >>> m(ember.randn(20, 16, 50, 32)).shape
        ember.Size([20, 16, 25, 16])
    """

    _nd = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    r"""Fractional max pooling over a 3-d input (N, C, T, H, W) or (C, T, H, W); see
    :class:`FractionalMaxPool2d` (here with triples; ``_random_samples`` is (N, C, 3)).

    Examples::

        >>> m = nn.FractionalMaxPool3d(3, output_size=(13, 12, 11))
        >>> m(ember.randn(2, 4, 20, 16, 15)).shape
        ember.Size([2, 4, 13, 12, 11])
    """

    _nd = 3

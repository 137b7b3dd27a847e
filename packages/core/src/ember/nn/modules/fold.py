"""``Fold`` and ``Unfold``: sliding local blocks to columns and back."""

from __future__ import annotations

from ember.nn import functional as F
from ember.nn.modules.module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Combines an array of sliding local blocks into a large containing tensor
    (col2im); overlapping values are summed.

    Args:
        output_size: the spatial shape (H, W) of the output.
        kernel_size: the size of the sliding blocks.
        dilation: the stride of elements within a neighborhood. Default: 1.
        padding: implicit zero padding on both sides. Default: 0.
        stride: the stride of the sliding blocks. Default: 1.

    Shape:
        - Input: :math:`(N, C \\times \\prod(kernel\\_size), L)` or without N.
        - Output: :math:`(N, C, H, W)` or without N.
    """

    __constants__ = ["output_size", "kernel_size", "dilation", "padding", "stride"]

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self) -> str:
        return ("output_size={output_size}, kernel_size={kernel_size}, "
                "dilation={dilation}, padding={padding}, stride={stride}".format(
                    **self.__dict__))


class Unfold(Module):
    """Extracts sliding local blocks from a batched input tensor (im2col).

    Args:
        kernel_size: the size of the sliding blocks.
        dilation: the stride of elements within a neighborhood. Default: 1.
        padding: implicit zero padding on both sides. Default: 0.
        stride: the stride of the sliding blocks. Default: 1.

    Shape:
        - Input: :math:`(N, C, H, W)` or without N.
        - Output: :math:`(N, C \\times \\prod(kernel\\_size), L)` or without N.

    Examples::

        >>> unfold = nn.Unfold(kernel_size=(2, 3))
        >>> unfold(ember.randn(2, 5, 3, 4)).shape
        ember.Size([2, 30, 4])
    """

    __constants__ = ["kernel_size", "dilation", "padding", "stride"]

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return ("kernel_size={kernel_size}, dilation={dilation}, padding={padding},"
                " stride={stride}".format(**self.__dict__))

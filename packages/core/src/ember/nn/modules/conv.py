"""Convolution layers: ``Conv1d/2d/3d``, ``ConvTranspose1d/2d/3d`` and their lazy forms."""

from __future__ import annotations

import collections.abc
import math

from ember.nn import functional as F
from ember.nn.modules.lazy import LazyModuleMixin
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter, UninitializedParameter

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d"]


def _ntuple(n):
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return (x,) * n

    return parse


_single, _pair, _triple = _ntuple(1), _ntuple(2), _ntuple(3)


def _reverse_repeat_tuple(t, n):
    """(a, b) -> (b, b, a, a) for n = 2: the F.pad order of a per-dim padding."""
    return tuple(x for x in reversed(t) for _ in range(n))


class _ConvNd(Module):
    """The parameters, initialization and repr shared by the convolution layers."""

    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode",
                     "output_padding", "in_channels", "out_channels", "kernel_size"]

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None) -> None:
        from ember._ops.creation import empty

        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # the padding as F.pad takes it (last dim first), for the non-zero padding modes
        if isinstance(self.padding, str):
            rev = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1),
                                   strict=False):
                    total = d * (k - 1)
                    left = total // 2
                    rev[2 * i] = left
                    rev[2 * i + 1] = total - left
            self._reversed_padding_repeated_twice = rev
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(self.padding, 2)
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(empty(shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        from ember.nn import init

        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def extra_repr(self) -> str:
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _Conv(_ConvNd):
    _nd = 0
    _tuple = None
    _fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None) -> None:
        t = type(self)._tuple
        super().__init__(in_channels, out_channels, t(kernel_size), t(stride),
                         padding if isinstance(padding, str) else t(padding), t(dilation),
                         False, t(0), groups, bias, padding_mode, device=device, dtype=dtype)

    def _conv_forward(self, input, weight, bias):
        fn = type(self)._fn
        if self.padding_mode != "zeros":
            return fn(F.pad(input, self._reversed_padding_repeated_twice,
                            mode=self.padding_mode),
                      weight, bias, self.stride, type(self)._tuple(0), self.dilation,
                      self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """Applies a 1D convolution over an input signal composed of several input planes.

    Args:
        in_channels: channels of the input.
        out_channels: channels produced by the convolution.
        kernel_size: size of the convolving kernel.
        stride: stride of the convolution. Default: 1.
        padding: padding added to both sides of the input: an int, a tuple, or 'valid' /
            'same'. Default: 0.
        dilation: spacing between kernel elements. Default: 1.
        groups: blocked connections from input channels to output channels. Default: 1.
        bias: if ``True``, adds a learnable bias to the output. Default: ``True``.
        padding_mode: 'zeros', 'reflect', 'replicate' or 'circular'. Default: 'zeros'.

    Shape:
        - Input: :math:`(N, C_{in}, L_{in})` or :math:`(C_{in}, L_{in})`.
        - Output: :math:`(N, C_{out}, L_{out})` or :math:`(C_{out}, L_{out})`.

    Attributes:
        weight: shape ``(out_channels, in_channels / groups, kernel_size)``, initialized
            from :math:`U(-\\sqrt{k}, \\sqrt{k})`, :math:`k = groups / (C_{in} * kernel)`.
        bias: shape ``(out_channels,)``, from the same distribution.

    Examples::

        >>> m = nn.Conv1d(16, 33, 3, stride=2)
        >>> m(ember.randn(20, 16, 50)).shape
        ember.Size([20, 33, 24])
    """

    _nd = 1
    _tuple = staticmethod(_single)
    _fn = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """Applies a 2D convolution over an input signal composed of several input planes.

    Args:
        in_channels: channels of the input.
        out_channels: channels produced by the convolution.
        kernel_size: size of the convolving kernel (an int or (kH, kW)).
        stride: stride of the convolution. Default: 1.
        padding: an int, a tuple, or 'valid' / 'same'. Default: 0.
        dilation: spacing between kernel elements. Default: 1.
        groups: blocked connections from input channels to output channels (``groups ==
            in_channels`` is a depthwise convolution). Default: 1.
        bias: if ``True``, adds a learnable bias to the output. Default: ``True``.
        padding_mode: 'zeros', 'reflect', 'replicate' or 'circular'. Default: 'zeros'.

    Shape:
        - Input: :math:`(N, C_{in}, H_{in}, W_{in})` or :math:`(C_{in}, H_{in}, W_{in})`.
        - Output: :math:`(N, C_{out}, H_{out}, W_{out})` or without N.

    Examples::

        >>> m = nn.Conv2d(16, 33, (3, 5), stride=(2, 1), padding=(4, 2), dilation=(3, 1))
        >>> m(ember.randn(20, 16, 50, 100)).shape
        ember.Size([20, 33, 26, 100])
    """

    _nd = 2
    _tuple = staticmethod(_pair)
    _fn = staticmethod(F.conv2d)


class Conv3d(_Conv):
    """Applies a 3D convolution over an input signal composed of several input planes.

    Args:
        in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
        padding_mode: as :class:`Conv2d`, with triples for the sizes.

    Shape:
        - Input: :math:`(N, C_{in}, D_{in}, H_{in}, W_{in})` or without N.
        - Output: :math:`(N, C_{out}, D_{out}, H_{out}, W_{out})` or without N.

    Examples::

        >>> m = nn.Conv3d(16, 33, (3, 5, 2), stride=(2, 1, 1), padding=(4, 2, 0))
        >>> m(ember.randn(20, 16, 10, 50, 100)).shape
        ember.Size([20, 33, 8, 50, 99])
    """

    _nd = 3
    _tuple = staticmethod(_triple)
    _fn = staticmethod(F.conv3d)


class _ConvTransposeNd(_ConvNd):
    _nd = 0
    _tuple = None
    _fn = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None) -> None:
        if padding_mode != "zeros":
            raise ValueError(
                f'Only "zeros" padding mode is supported for {self.__class__.__name__}')
        t = type(self)._tuple
        super().__init__(in_channels, out_channels, t(kernel_size), t(stride), t(padding),
                         t(dilation), True, t(output_padding), groups, bias, padding_mode,
                         device=device, dtype=dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size,
                        num_spatial_dims, dilation=None):
        if output_size is None:
            return _single(self.output_padding)
        has_batch_dim = input.dim() == num_spatial_dims + 2
        num_non_spatial_dims = 2 if has_batch_dim else 1
        output_size = list(output_size)
        if len(output_size) == num_non_spatial_dims + num_spatial_dims:
            output_size = output_size[num_non_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(
                f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, output_size "
                f"must have {num_spatial_dims} or {num_non_spatial_dims + num_spatial_dims} "
                f"elements (got {len(output_size)})")
        min_sizes, max_sizes = [], []
        for d in range(num_spatial_dims):
            dim_size = ((input.size(d + num_non_spatial_dims) - 1) * stride[d]
                        - 2 * padding[d]
                        + (dilation[d] if dilation is not None else 1) * (kernel_size[d] - 1)
                        + 1)
            min_sizes.append(dim_size)
            max_sizes.append(min_sizes[d] + stride[d] - 1)
        for size, lo, hi in zip(output_size, min_sizes, max_sizes, strict=False):
            if size < lo or size > hi:
                raise ValueError(
                    f"requested an output size of {output_size}, but valid sizes range "
                    f"from {min_sizes} to {max_sizes} (for an input of "
                    f"{input.size()[2:]})")
        return [output_size[d] - min_sizes[d] for d in range(num_spatial_dims)]

    def forward(self, input, output_size=None):
        nd = type(self)._nd
        if self.padding_mode != "zeros":
            raise ValueError(
                f"Only `zeros` padding mode is supported for ConvTranspose{nd}d")
        output_padding = self._output_padding(input, output_size, self.stride, self.padding,
                                              self.kernel_size, nd, self.dilation)
        return type(self)._fn(input, self.weight, self.bias, self.stride, self.padding,
                              output_padding, self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """Applies a 1D transposed convolution operator over an input image composed of
    several input planes (the gradient of Conv1d with respect to its input).

    Args:
        in_channels: channels of the input.
        out_channels: channels produced by the convolution.
        kernel_size: size of the convolving kernel.
        stride: stride of the convolution. Default: 1.
        padding: ``dilation * (kernel_size - 1) - padding`` zero-padding is added to both
            sides of the input. Default: 0.
        output_padding: additional size added to one side of the output. Default: 0.
        groups: blocked connections from input channels to output channels. Default: 1.
        bias: if ``True``, adds a learnable bias to the output. Default: ``True``.
        dilation: spacing between kernel elements. Default: 1.

    ``forward(input, output_size=None)``: ``output_size`` picks the output_padding that
    gives that size.

    Attributes:
        weight: shape ``(in_channels, out_channels / groups, kernel_size)``.
        bias: shape ``(out_channels,)``.
    """

    _nd = 1
    _tuple = staticmethod(_single)
    _fn = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """Applies a 2D transposed convolution operator over an input image composed of
    several input planes (the gradient of Conv2d with respect to its input).

    Args:
        in_channels, out_channels, kernel_size, stride, padding, output_padding, groups,
        bias, dilation: as :class:`ConvTranspose1d`, with pairs for the sizes.

    Examples::

        >>> m = nn.ConvTranspose2d(16, 33, 3, stride=2)
        >>> x = ember.randn(1, 16, 12, 12)
        >>> m(x, output_size=[25, 25]).shape
        ember.Size([1, 33, 25, 25])
    """

    _nd = 2
    _tuple = staticmethod(_pair)
    _fn = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """Applies a 3D transposed convolution operator over an input image composed of
    several input planes (the gradient of Conv3d with respect to its input).

    Args:
        in_channels, out_channels, kernel_size, stride, padding, output_padding, groups,
        bias, dilation: as :class:`ConvTranspose1d`, with triples for the sizes.
    """

    _nd = 3
    _tuple = staticmethod(_triple)
    _fn = staticmethod(F.conv_transpose3d)


# ---------------------------------------------------------------------------
# the lazy forms: in_channels from the first input

class _LazyConvXdMixin(LazyModuleMixin):
    """``in_channels`` from the first input (dim 1, or 0 unbatched), then the weight and
    bias materialized and initialized as the regular layer does."""

    def _lazy_placeholders(self, out_channels, bias, factory_kwargs):
        self.weight = UninitializedParameter(**factory_kwargs)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(**factory_kwargs)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs) -> None:
        """Materialize ``weight`` and ``bias`` for ``input``'s channels."""
        if not self.has_uninitialized_params():
            if self.in_channels == 0:
                # loaded from a state_dict before the first call (PyTorch 2.13 leaves
                # in_channels at 0 there; ember takes it from the input, as LazyLinear does)
                self.in_channels = self._get_in_channels(input)
            return
        from ember.autograd.grad_mode import no_grad

        self.in_channels = self._get_in_channels(input)
        if self.in_channels % self.groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        with no_grad():
            if self.transposed:
                self.weight.materialize((self.in_channels, self.out_channels // self.groups,
                                         *self.kernel_size))
            else:
                self.weight.materialize((self.out_channels, self.in_channels // self.groups,
                                         *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input) -> int:
        nd = type(self).cls_to_become._nd
        if input.dim() not in (nd + 1, nd + 2):
            raise RuntimeError(
                f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                f"{self.__class__.__name__}, but got input of size: {input.shape}")
        return input.shape[1] if input.dim() == nd + 2 else input.shape[0]


def _lazy_conv(regular):
    class Lazy(_LazyConvXdMixin, regular):
        cls_to_become = regular

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                     groups=1, bias=True, padding_mode="zeros", device=None,
                     dtype=None) -> None:
            factory_kwargs = {"device": device, "dtype": dtype}
            # bias=False: the placeholders stand for the real parameters
            super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                             padding_mode, **factory_kwargs)
            self._lazy_placeholders(out_channels, bias, factory_kwargs)

    return Lazy


def _lazy_conv_transpose(regular):
    class Lazy(_LazyConvXdMixin, regular):
        cls_to_become = regular

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                     groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                     dtype=None) -> None:
            factory_kwargs = {"device": device, "dtype": dtype}
            super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups,
                             False, dilation, padding_mode, **factory_kwargs)
            self._lazy_placeholders(out_channels, bias, factory_kwargs)

    return Lazy


def _named(cls, name, doc):
    cls.__name__ = cls.__qualname__ = name
    cls.__doc__ = doc
    return cls


_LAZY_DOC = """A :class:`{regular}` whose ``in_channels`` is taken from its first input
    (``input.shape[1]``, or ``input.shape[0]`` unbatched).

    ``weight`` and ``bias`` are :class:`~ember.nn.parameter.UninitializedParameter` until
    the first call, which materializes and initializes them as ``{regular}`` does; the
    module then becomes a :class:`{regular}`. The arguments are ``{regular}``'s without
    ``in_channels``.

    Examples::

        >>> m = nn.{name}(8, 3)
        >>> y = m(ember.randn({shape}))
        >>> type(m).__name__
        '{regular}'
    """

_SHAPES = {1: "2, 4, 10", 2: "2, 4, 10, 10", 3: "2, 4, 6, 6, 6"}
LazyConv1d = _named(_lazy_conv(Conv1d), "LazyConv1d", _LAZY_DOC.format(
    regular="Conv1d", name="LazyConv1d", shape=_SHAPES[1]))
LazyConv2d = _named(_lazy_conv(Conv2d), "LazyConv2d", _LAZY_DOC.format(
    regular="Conv2d", name="LazyConv2d", shape=_SHAPES[2]))
LazyConv3d = _named(_lazy_conv(Conv3d), "LazyConv3d", _LAZY_DOC.format(
    regular="Conv3d", name="LazyConv3d", shape=_SHAPES[3]))
LazyConvTranspose1d = _named(_lazy_conv_transpose(ConvTranspose1d), "LazyConvTranspose1d",
                             _LAZY_DOC.format(regular="ConvTranspose1d",
                                              name="LazyConvTranspose1d", shape=_SHAPES[1]))
LazyConvTranspose2d = _named(_lazy_conv_transpose(ConvTranspose2d), "LazyConvTranspose2d",
                             _LAZY_DOC.format(regular="ConvTranspose2d",
                                              name="LazyConvTranspose2d", shape=_SHAPES[2]))
LazyConvTranspose3d = _named(_lazy_conv_transpose(ConvTranspose3d), "LazyConvTranspose3d",
                             _LAZY_DOC.format(regular="ConvTranspose3d",
                                              name="LazyConvTranspose3d", shape=_SHAPES[3]))

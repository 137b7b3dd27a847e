"""``Identity``, ``Linear``, ``Bilinear`` and ``LazyLinear``."""

from __future__ import annotations

import math

from ember.nn import functional as F
from ember.nn.modules.lazy import LazyModuleMixin
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter, UninitializedParameter

__all__ = ["Identity", "Linear", "Bilinear", "LazyLinear"]


# ---------------------------------------------------------------------------
# initialization: ember.nn.init's functions, with PyTorch's formulas as a stand-in for
# any that module does not provide

def _fan_in_and_fan_out(tensor):
    dims = tensor.dim()
    if dims < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than "
                         "2 dimensions")
    receptive = math.prod(tensor.shape[2:]) if dims > 2 else 1
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _uniform_(tensor, a=0.0, b=1.0, generator=None):
    from ember.autograd.grad_mode import no_grad

    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def _normal_(tensor, mean=0.0, std=1.0, generator=None):
    from ember.autograd.grad_mode import no_grad

    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def _constant_(tensor, val):
    from ember.autograd.grad_mode import no_grad

    with no_grad():
        return tensor.fill_(val)


def _kaiming_uniform_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu",
                      generator=None):
    if 0 in tensor.shape:
        return tensor
    fan_in, fan_out = _fan_in_and_fan_out(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    gain = math.sqrt(2.0 / (1 + a * a)) if nonlinearity == "leaky_relu" else math.sqrt(2.0)
    bound = math.sqrt(3.0) * gain / math.sqrt(fan)
    return _uniform_(tensor, -bound, bound, generator=generator)


_FALLBACK = {
    "uniform_": _uniform_, "normal_": _normal_, "constant_": _constant_,
    "kaiming_uniform_": _kaiming_uniform_,
    "_calculate_fan_in_and_fan_out": _fan_in_and_fan_out,
}


def _init(name):
    """``ember.nn.init.<name>``, or PyTorch's formula for it while that module lacks it."""
    from ember.nn import init

    fn = getattr(init, name, None)
    return fn if fn is not None else _FALLBACK[name]


# ---------------------------------------------------------------------------
# the layers

class Identity(Module):
    """A placeholder that returns its input; any constructor arguments are ignored.

    Examples::

        >>> m = nn.Identity(54, unused_argument1=0.1)
        >>> m(ember.ones(2)).shape
        ember.Size([2])
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x @ W.T + b``.

    Args:
        in_features: size of each input sample.
        out_features: size of each output sample.
        bias: if ``False``, the layer has no additive bias. Default: ``True``.

    Shape:
        - Input: :math:`(*, H_{in})`; Output: :math:`(*, H_{out})`.

    Attributes:
        weight: shape ``(out_features, in_features)``, initialized from
            :math:`U(-\\sqrt{k}, \\sqrt{k})` with :math:`k = 1 / \\text{in\\_features}`.
        bias: shape ``(out_features,)``, initialized from the same distribution.

    Examples::

        >>> m = nn.Linear(20, 30)
        >>> m(ember.randn(128, 20)).shape
        ember.Size([128, 30])
    """

    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        from ember._ops.creation import empty

        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in_features), device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _init("kaiming_uniform_")(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = _init("_calculate_fan_in_and_fan_out")(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            _init("uniform_")(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """A ``Linear`` (the out-projection of ``MultiheadAttention``; PyTorch gives it its own
    class so that dynamic quantization skips it)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)


class Bilinear(Module):
    """``y = x1^T A x2 + b``.

    Args:
        in1_features: size of each first input sample.
        in2_features: size of each second input sample.
        out_features: size of each output sample.
        bias: if ``False``, the layer has no additive bias. Default: ``True``.

    Attributes:
        weight: shape ``(out_features, in1_features, in2_features)``, initialized from
            :math:`U(-\\sqrt{k}, \\sqrt{k})` with :math:`k = 1 / \\text{in1\\_features}`.
        bias: shape ``(out_features,)``, initialized from the same distribution.
    """

    __constants__ = ["in1_features", "in2_features", "out_features"]

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device=None, dtype=None) -> None:
        from ember._ops.creation import empty

        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(empty((out_features, in1_features, in2_features),
                                      device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1 / math.sqrt(self.weight.size(1))
        _init("uniform_")(self.weight, -bound, bound)
        if self.bias is not None:
            _init("uniform_")(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class LazyLinear(LazyModuleMixin, Linear):
    """A :class:`Linear` whose ``in_features`` is taken from its first input (``input.shape[-1]``).

    ``weight`` and ``bias`` are :class:`~ember.nn.parameter.UninitializedParameter` until
    the first call, which materializes and initializes them as ``Linear`` does; the module
    then becomes a :class:`Linear`.

    Args:
        out_features: size of each output sample.
        bias: if ``False``, the layer has no additive bias. Default: ``True``.

    Examples::

        >>> m = nn.LazyLinear(30)
        >>> m(ember.randn(128, 20)).shape
        ember.Size([128, 30])
        >>> m
        Linear(in_features=20, out_features=30, bias=True)
    """

    cls_to_become = Linear

    def __init__(self, out_features: int, bias: bool = True, device=None, dtype=None) -> None:
        factory_kwargs = {"device": device, "dtype": dtype}
        # bias=False here: the placeholders below stand for the real parameters
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(**factory_kwargs)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(**factory_kwargs)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input) -> None:
        """``in_features`` from ``input``'s last dimension; materialize and initialize."""
        if self.has_uninitialized_params():
            from ember.autograd.grad_mode import no_grad

            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()
        if self.in_features == 0:
            # loaded from a state_dict before the first call
            if input.shape[-1] != self.weight.shape[-1]:
                raise AssertionError(
                    f"The in_features inferred from input: {input.shape[-1]} is not equal to "
                    f"in_features from self.weight: {self.weight.shape[-1]}")
            self.in_features = input.shape[-1]

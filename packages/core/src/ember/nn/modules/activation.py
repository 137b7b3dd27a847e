"""Activation layers: each ``forward`` is one call into ``ember.nn.functional``."""

from __future__ import annotations

import warnings

from ember.nn import functional as F
from ember.nn.modules.module import Module
from ember.nn.parameter import Parameter

__all__ = [
    "Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh",
    "SiLU", "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink",
    "LeakyReLU", "LogSigmoid", "Softplus", "Softshrink", "PReLU", "Softsign", "Tanhshrink",
    "Softmin", "Softmax", "Softmax2d", "LogSoftmax",
]


def _inplace_repr(inplace: bool, sep: str = "") -> str:
    return f"{sep}inplace=True" if inplace else ""


class _InplaceActivation(Module):
    """A layer whose only argument is ``inplace``: ``forward`` calls ``_fn(input, inplace)``
    (a functional form); ``inplace=True`` shows in the repr unless ``_repr_inplace`` is off
    (Hardsigmoid and Hardswish do not show it, as in PyTorch)."""

    _repr_inplace = True

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace) if self._repr_inplace else ""


class Threshold(Module):
    """``y = x if x > threshold else value``.

    Args:
        threshold: the value to threshold at.
        value: the value to replace with.
        inplace: do the operation in place. Default: ``False``.

    Shape:
        - Input: :math:`(*)`; Output: :math:`(*)`, same shape as the input.
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{_inplace_repr(self.inplace, ', ')}"


class ReLU(_InplaceActivation):
    """Rectified linear unit, ``max(0, x)``, elementwise.

    Args:
        inplace: do the operation in place. Default: ``False``.

    Examples::

        >>> m = nn.ReLU()
        >>> m(ember.tensor([-1.0, 2.0]))
        tensor([0., 2.])
    """

    _fn = staticmethod(F.relu)


class RReLU(Module):
    """Randomized leaky ReLU: in training, negative inputs are scaled by a slope drawn
    from ``U(lower, upper)``; in evaluation by ``(lower + upper) / 2``.

    Args:
        lower: lower bound of the uniform distribution. Default: 1/8.
        upper: upper bound of the uniform distribution. Default: 1/3.
        inplace: do the operation in place. Default: ``False``.
    """

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}{_inplace_repr(self.inplace, ', ')}"


class Hardtanh(Module):
    """``clamp(x, min_val, max_val)``, elementwise.

    Args:
        min_val: minimum value of the linear region. Default: -1.
        max_val: maximum value of the linear region. Default: 1.
        inplace: do the operation in place. Default: ``False``.
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError(
                f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return (f"min_val={self.min_val}, max_val={self.max_val}"
                f"{_inplace_repr(self.inplace, ', ')}")


class ReLU6(Hardtanh):
    """``min(max(0, x), 6)``, elementwise.

    Args:
        inplace: do the operation in place. Default: ``False``.
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace)


class Sigmoid(Module):
    """``1 / (1 + exp(-x))``, elementwise."""

    def forward(self, input):
        return input.sigmoid()


class Hardsigmoid(_InplaceActivation):
    """``relu6(x + 3) / 6``, elementwise.

    Args:
        inplace: do the operation in place. Default: ``False``.
    """

    _fn = staticmethod(F.hardsigmoid)
    _repr_inplace = False


class Tanh(Module):
    """The hyperbolic tangent, elementwise."""

    def forward(self, input):
        return input.tanh()


class SiLU(_InplaceActivation):
    """Sigmoid linear unit (swish), ``x * sigmoid(x)``.

    Args:
        inplace: do the operation in place. Default: ``False``.
    """

    _fn = staticmethod(F.silu)


class Mish(_InplaceActivation):
    """``x * tanh(softplus(x))``, elementwise.

    Args:
        inplace: do the operation in place. Default: ``False``.
    """

    _fn = staticmethod(F.mish)


class Hardswish(_InplaceActivation):
    """``x * relu6(x + 3) / 6``, elementwise.

    Args:
        inplace: do the operation in place. Default: ``False``.
    """

    _fn = staticmethod(F.hardswish)
    _repr_inplace = False


class ELU(Module):
    """Exponential linear unit: ``x`` if positive, else ``alpha * (exp(x) - 1)``.

    Args:
        alpha: the scale of the negative part. Default: 1.0.
        inplace: do the operation in place. Default: ``False``.
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_repr(self.inplace, ', ')}"


class CELU(Module):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``, elementwise.

    Args:
        alpha: the alpha of the CELU formulation. Default: 1.0.
        inplace: do the operation in place. Default: ``False``.
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_repr(self.inplace, ', ')}"


class SELU(_InplaceActivation):
    """Scaled exponential linear unit, with the self-normalizing constants.

    Args:
        inplace: do the operation in place. Default: ``False``.
    """

    _fn = staticmethod(F.selu)


class GLU(Module):
    """Gated linear unit, ``a * sigmoid(b)`` for the two halves ``a``, ``b`` of the input
    along ``dim``.

    Args:
        dim: the dimension to split the input on. Default: -1.
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class GELU(Module):
    """Gaussian error linear unit, ``x * Phi(x)``.

    Args:
        approximate: ``'none'`` (exact, with erf) or ``'tanh'`` (the tanh approximation).
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Hardshrink(Module):
    """``x`` where ``|x| > lambd``, else 0.

    Args:
        lambd: the threshold. Default: 0.5.
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return f"{self.lambd}"


class LeakyReLU(Module):
    """``x`` if positive, else ``negative_slope * x``.

    Args:
        negative_slope: the slope of the negative part. Default: 1e-2.
        inplace: do the operation in place. Default: ``False``.
    """

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}{_inplace_repr(self.inplace, ', ')}"


class LogSigmoid(Module):
    """``log(sigmoid(x))``, elementwise."""

    def forward(self, input):
        return F.logsigmoid(input)


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``; linear above ``threshold``.

    Args:
        beta: the beta of the formulation. Default: 1.
        threshold: above ``beta * x > threshold`` the identity is used. Default: 20.
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Softshrink(Module):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0.

    Args:
        lambd: the threshold (must be non-negative). Default: 0.5.
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class PReLU(Module):
    """``x`` if positive, else ``weight * x``, with a learnable slope: one shared, or one
    per channel (dim 1 of the input).

    Args:
        num_parameters: the number of slopes: 1 or the number of channels. Default: 1.
        init: the initial slope. Default: 0.25.

    Attributes:
        weight: the learnable slopes, shape ``(num_parameters,)``.
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None,
                 dtype=None) -> None:
        from ember._ops.creation import empty

        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        from ember.nn.modules.linear import _init

        _init("constant_")(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Softsign(Module):
    """``x / (1 + |x|)``, elementwise."""

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    """``x - tanh(x)``, elementwise."""

    def forward(self, input):
        return F.tanhshrink(input)


class _SoftmaxBase(Module):
    _fn = None

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input):
        return type(self)._fn(input, self.dim, _stacklevel=4)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmin(_SoftmaxBase):
    """``softmax(-x)`` along ``dim``.

    Args:
        dim: the dimension along which Softmin is computed.
    """

    _fn = staticmethod(F.softmin)


class Softmax(_SoftmaxBase):
    """``exp(x) / sum(exp(x))`` along ``dim``: the values along it become probabilities.

    Args:
        dim: the dimension along which Softmax is computed.

    Examples::

        >>> m = nn.Softmax(dim=1)
        >>> m(ember.zeros(2, 4))[0]
        tensor([0.2500, 0.2500, 0.2500, 0.2500])
    """

    _fn = staticmethod(F.softmax)


class Softmax2d(Module):
    """Softmax over the channels (dim -3) at each spatial location of a
    ``(N, C, H, W)`` or ``(C, H, W)`` input."""

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(
                f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D instead")
        return F.softmax(input, -3, _stacklevel=4)


class LogSoftmax(_SoftmaxBase):
    """``log(softmax(x))`` along ``dim``, computed stably.

    Args:
        dim: the dimension along which LogSoftmax is computed.
    """

    _fn = staticmethod(F.log_softmax)


def __getattr__(name):
    # PyTorch defines MultiheadAttention in this module; ember next to the Transformer
    # (imported on first use here: the transformer module is built on these layers)
    if name == "MultiheadAttention":
        from ember.nn.modules.transformer import MultiheadAttention

        return MultiheadAttention
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

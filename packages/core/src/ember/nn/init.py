"""``ember.nn.init``: in-place initialization of parameters, as ``torch.nn.init``.

Every function fills its tensor in place under ``no_grad`` (so it works on parameters
that require grad) and returns it. The random ones take ``generator=`` like PyTorch's.
"""

from __future__ import annotations

import math
import warnings

from ember._C import _core
from ember.autograd.grad_mode import no_grad

__all__ = [
    "calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_",
    "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
    "kaiming_normal_", "orthogonal_", "sparse_",
    "uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
    "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse",
]

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
               "conv_transpose3d")


def calculate_gain(nonlinearity, param=None) -> float:
    r"""The recommended gain for a nonlinearity (the ``nn.functional`` name).

    ================= ====================================================
    nonlinearity      gain
    ================= ====================================================
    Linear / Identity :math:`1`
    Conv{1,2,3}D      :math:`1`
    Sigmoid           :math:`1`
    Tanh              :math:`\frac{5}{3}`
    ReLU              :math:`\sqrt{2}`
    Leaky Relu        :math:`\sqrt{\frac{2}{1 + \text{negative\_slope}^2}}`
    SELU              :math:`\frac{3}{4}`
    ================= ====================================================

    Args:
        nonlinearity: the non-linear function (`nn.functional` name)
        param: optional parameter for the non-linear function (leaky_relu's slope)

    Examples:
        >>> gain = nn.init.calculate_gain("leaky_relu", 0.2)
    """
    if nonlinearity in _LINEAR_FNS or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif (not isinstance(param, bool) and isinstance(param, int)) or isinstance(param, float):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def uniform_(tensor, a: float = 0.0, b: float = 1.0, generator=None):
    r"""Fill ``tensor`` with values drawn from the uniform distribution :math:`\mathcal{U}(a, b)`.

    Examples:
        >>> w = ember.empty(3, 5)
        >>> nn.init.uniform_(w)
    """
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean: float = 0.0, std: float = 1.0, generator=None):
    r"""Fill ``tensor`` with values drawn from :math:`\mathcal{N}(\text{mean}, \text{std}^2)`.

    Examples:
        >>> w = ember.empty(3, 5)
        >>> nn.init.normal_(w)
    """
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator=None):
    r"""Fill ``tensor`` with values drawn from a truncated normal distribution: the normal
    distribution :math:`\mathcal{N}(\text{mean}, \text{std}^2)` restricted to :math:`[a, b]`.

    Examples:
        >>> w = ember.empty(3, 5)
        >>> nn.init.trunc_normal_(w)
    """
    from ember._ops.elementwise import where

    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if (mean < a - 2 * std) or (mean > b + 2 * std):
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    with no_grad():
        p = norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std)
        if p > 0.3:
            # most normal draws land in [a, b]: redraw the ones that do not
            result = tensor.detach().clone().normal_(mean, std, generator=generator)
            while True:
                mask = (result < a) | (result > b)
                if not mask.any():
                    break
                result = where(mask, result.new_empty(result.shape).normal_(
                    mean, std, generator=generator), result)
        else:
            # a narrow window far from the mean: rejection sampling from U(a, b) under
            # the normal density, scaled by its peak on [a, b]
            mode = max(a, min(mean, b))
            log_peak = -0.5 * ((mode - mean) / std) ** 2
            result = tensor.detach().clone().uniform_(a, b, generator=generator)

            def rejected(x):
                log_density = ((x - mean) / std) ** 2 * -0.5 - log_peak
                return x.new_empty(x.shape).uniform_(generator=generator).log() > log_density

            pending = rejected(result)
            while pending.any():
                candidates = result.new_empty(result.shape).uniform_(a, b, generator=generator)
                result = where(pending, candidates, result)
                pending = pending & rejected(result)
        tensor.copy_(result)
    return tensor


def constant_(tensor, val: float):
    r"""Fill ``tensor`` with the value ``val``.

    Examples:
        >>> w = ember.empty(3, 5)
        >>> nn.init.constant_(w, 0.3)
    """
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    r"""Fill ``tensor`` with the scalar value `1`."""
    with no_grad():
        return tensor.fill_(1.0)


def zeros_(tensor):
    r"""Fill ``tensor`` with the scalar value `0`."""
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    r"""Fill the 2-dimensional ``tensor`` with the identity matrix (as many inputs as
    possible are preserved in ``Linear`` layers).

    Examples:
        >>> w = ember.empty(3, 5)
        >>> nn.init.eye_(w)
    """
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    xp = _xp(tensor)
    with no_grad():
        tensor.copy_(_wrap(xp.eye(*tensor.shape, dtype=tensor._data.dtype)))
    return tensor


def dirac_(tensor, groups: int = 1):
    r"""Fill the {3, 4, 5}-dimensional ``tensor`` with the Dirac delta function (as many
    input channels as possible are preserved in convolutions; with ``groups > 1``, each
    group of channels preserves identity).

    Examples:
        >>> w = ember.empty(3, 16, 5, 5)
        >>> nn.init.dirac_(w)
        >>> w = ember.empty(3, 24, 5, 5)
        >>> nn.init.dirac_(w, 3)
    """
    dimensions = tensor.ndimension()
    if dimensions not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.size()
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_chans_per_grp = sizes[0] // groups
    min_dim = min(out_chans_per_grp, sizes[1])
    xp = _xp(tensor)
    arr = xp.zeros(tuple(sizes), dtype=tensor._data.dtype)
    d = xp.arange(min_dim)
    centers = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        arr[(g * out_chans_per_grp + d, d, *centers)] = 1
    with no_grad():
        tensor.copy_(_wrap(arr))
    return tensor


def _calculate_fan_in_and_fan_out(tensor) -> tuple[int, int]:
    dimensions = tensor.dim()
    if dimensions < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    num_input_fmaps = tensor.size(1)
    num_output_fmaps = tensor.size(0)
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return num_input_fmaps * receptive_field_size, num_output_fmaps * receptive_field_size


def xavier_uniform_(tensor, gain: float = 1.0, generator=None):
    r"""Fill ``tensor`` from :math:`\mathcal{U}(-a, a)` with
    :math:`a = \text{gain} \times \sqrt{6 / (\text{fan\_in} + \text{fan\_out})}`
    (Glorot initialization).

    Examples:
        >>> w = ember.empty(3, 5)
        >>> nn.init.xavier_uniform_(w, gain=nn.init.calculate_gain("relu"))
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    a = math.sqrt(3.0) * std
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain: float = 1.0, generator=None):
    r"""Fill ``tensor`` from :math:`\mathcal{N}(0, \text{std}^2)` with
    :math:`\text{std} = \text{gain} \times \sqrt{2 / (\text{fan\_in} + \text{fan\_out})}`
    (Glorot initialization).

    Examples:
        >>> w = ember.empty(3, 5)
        >>> nn.init.xavier_normal_(w)
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _calculate_correct_fan(tensor, mode) -> int:
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def kaiming_uniform_(tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None):
    r"""Fill ``tensor`` from :math:`\mathcal{U}(-\text{bound}, \text{bound})` with
    :math:`\text{bound} = \text{gain} \times \sqrt{3 / \text{fan\_mode}}` (He initialization).

    Args:
        tensor: an n-dimensional tensor
        a: the negative slope of the rectifier used after this layer (only used with
            ``'leaky_relu'``)
        mode: ``'fan_in'`` (default) or ``'fan_out'``
        nonlinearity: the non-linear function (`nn.functional` name)
        generator: the Generator to sample from (default: None)

    Examples:
        >>> w = ember.empty(3, 5)
        >>> nn.init.kaiming_uniform_(w, mode="fan_in", nonlinearity="relu")
    """
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    bound = math.sqrt(3.0) * gain / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None):
    r"""Fill ``tensor`` from :math:`\mathcal{N}(0, \text{std}^2)` with
    :math:`\text{std} = \text{gain} / \sqrt{\text{fan\_mode}}` (He initialization).

    Examples:
        >>> w = ember.empty(3, 5)
        >>> nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    """
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    gain = calculate_gain(nonlinearity, a)
    return normal_(tensor, 0, gain / math.sqrt(fan), generator)


def orthogonal_(tensor, gain: float = 1, generator=None):
    r"""Fill ``tensor`` with a (semi) orthogonal matrix (Saxe et al. 2013); dimensions
    after the first are flattened.

    Examples:
        >>> w = ember.empty(3, 5)
        >>> nn.init.orthogonal_(w)
    """
    if tensor.ndimension() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.size(0)
    cols = tensor.numel() // rows
    with no_grad():
        flat = tensor.new_empty((rows, cols)).normal_(0, 1, generator=generator)._data
    xp = _xp(tensor)
    dtype = flat.dtype
    if dtype.itemsize < 4:  # LAPACK has no half precision
        flat = flat.astype("float32")
    if rows < cols:
        flat = flat.T
    q, r = xp.linalg.qr(flat)
    q = q * xp.sign(xp.diagonal(r))  # makes the decomposition unique
    if rows < cols:
        q = q.T
    with no_grad():
        tensor.copy_(_wrap(q.astype(dtype, copy=False).reshape(tuple(tensor.shape))))
        tensor.mul_(gain)
    return tensor


def sparse_(tensor, sparsity, std: float = 0.01, generator=None):
    r"""Fill the 2-D ``tensor`` as a sparse matrix: in each column a fraction ``sparsity``
    of the rows (rounded up) are zero, the others drawn from :math:`\mathcal{N}(0, \text{std}^2)`.

    Unlike PyTorch, ``generator`` also picks which rows are zero (PyTorch uses the global
    generator there), so a seeded generator makes the whole result reproducible.

    Examples:
        >>> w = ember.empty(3, 5)
        >>> nn.init.sparse_(w, sparsity=0.1)
    """
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        if num_zeros and cols:
            # an independent random permutation of the rows for each column: argsort of
            # uniform keys; its first num_zeros entries are the rows set to zero
            keys = tensor.new_empty((rows, cols), dtype=_float64()).uniform_(
                generator=generator)
            zero_rows = keys.argsort(dim=0)[:num_zeros]
            tensor.scatter_(0, zero_rows, 0.0)
    return tensor


def _xp(tensor):
    from ember._ops._util import xp_of

    return xp_of(tensor._data)


def _wrap(array):
    return _core.make_tensor_from_array(array)


def _float64():
    from ember import _dtype

    return _dtype.float64


def _make_deprecate(meth):
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of "
                      f"`nn.init.{new_name}`.", FutureWarning, stacklevel=2)
        return meth(*args, **kwargs)

    deprecated_init.__doc__ = f"{old_name}(...): deprecated, use ``nn.init.{new_name}``."
    deprecated_init.__name__ = old_name
    return deprecated_init


uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)

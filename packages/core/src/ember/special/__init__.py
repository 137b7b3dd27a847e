"""Special functions, as ``torch.special``: the error and gamma-function families,
Bessel and Airy functions, the normal distribution's functions, the orthogonal
polynomials, and the softmax family under their ``torch.special`` names.

Every function takes tensors (integer inputs compute in the default float dtype) and
returns a tensor of the input's floating dtype. Gradients follow PyTorch: the Bessel,
Airy and polynomial functions have none; ``zeta`` and ``gammainc``/``gammaincc`` are
differentiable only in their second argument.

Examples::

    >>> import ember
    >>> ember.special.ndtr(ember.tensor([0.0, 1.0]))
    tensor([0.5000, 0.8413])
    >>> ember.special.zeta(2.0, ember.tensor([1.0]))
    tensor([1.6449])
"""

from ember._ops.reduction import logsumexp as _logsumexp
from ember._ops.special import (
    airy_ai,
    bessel_j0,
    bessel_j1,
    bessel_y0,
    bessel_y1,
    chebyshev_polynomial_t,
    chebyshev_polynomial_u,
    chebyshev_polynomial_v,
    chebyshev_polynomial_w,
    entr,
    erfcx,
    gammainc,
    gammaincc,
    hermite_polynomial_h,
    hermite_polynomial_he,
    i0,
    i0e,
    i1,
    i1e,
    laguerre_polynomial_l,
    legendre_polynomial_p,
    log_ndtr,
    modified_bessel_i0,
    modified_bessel_i1,
    modified_bessel_k0,
    modified_bessel_k1,
    multigammaln,
    ndtr,
    ndtri,
    polygamma,
    scaled_modified_bessel_k0,
    scaled_modified_bessel_k1,
    shifted_chebyshev_polynomial_t,
    shifted_chebyshev_polynomial_u,
    shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w,
    sinc,
    spherical_bessel_j0,
    xlog1py,
    xlogy,
    zeta,
)
from ember._ops.unary import digamma, erf, erfc, erfinv, exp2, expm1, log1p, logit, round
from ember._ops.unary import lgamma as gammaln
from ember._ops.unary import sigmoid as expit

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
    "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc",
    "gammaincc", "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e",
    "i1", "i1e", "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr",
    "log_softmax", "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1",
    "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma",
    "psi", "round", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "sinc", "softmax",
    "spherical_bessel_j0", "xlog1py", "xlogy", "zeta",
]

psi = digamma


def logsumexp(input, dim, keepdim=False, *, out=None):
    """``log(sum(exp(input), dim))``, computed stably.

    Args:
        input (Tensor): the input tensor.
        dim (int or tuple of ints): the dimension(s) to reduce.
        keepdim (bool): whether the output keeps ``dim`` with size 1.
    """
    return _logsumexp(input, dim, keepdim, out=out)


def softmax(input, dim, *, dtype=None):
    """The softmax of ``input`` along ``dim``: ``exp(x) / exp(x).sum(dim)``.

    Args:
        input (Tensor): the input tensor.
        dim (int): the dimension along which softmax is computed.
        dtype (ember.dtype, optional): if given, ``input`` is cast to it first.
    """
    from ember.nn.functional import softmax as _softmax

    return _softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """``log(softmax(input, dim))``, computed stably.

    Args:
        input (Tensor): the input tensor.
        dim (int): the dimension along which it is computed.
        dtype (ember.dtype, optional): if given, ``input`` is cast to it first.
    """
    from ember.nn.functional import log_softmax as _log_softmax

    return _log_softmax(input, dim, dtype=dtype)

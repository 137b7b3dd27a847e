"""Invertible transforms with their log-det-Jacobians, as
``torch.distributions.transforms``."""

from __future__ import annotations

import math
import numbers
import weakref

import ember
from ember.distributions import constraints
from ember.distributions.utils import _sum_rightmost, tril_matrix_to_vec, vec_to_tril_matrix

__all__ = [
    "AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
    "CorrCholeskyTransform",
    "CumulativeDistributionTransform", "ExpTransform", "IndependentTransform",
    "LowerCholeskyTransform", "PositiveDefiniteTransform", "PowerTransform",
    "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "SoftplusTransform",
    "StackTransform", "StickBreakingTransform", "TanhTransform", "Transform",
    "identity_transform",
]


def _softplus(x):
    return x.clamp(min=0) + (-x.abs()).exp().log1p()


class Transform:
    """An invertible map ``y = t(x)`` with ``log |dy/dx|``.

    Args:
        cache_size (int): 0 (no cache) or 1 (remember the latest pair ``x, y``, so that
            ``t.inv(t(x))`` returns ``x`` exactly).

    Attributes:
        domain, codomain (Constraint): the valid inputs and outputs.
        bijective (bool): whether the transform is bijective.
        sign (int): +1 or -1 for monotone increasing or decreasing elementwise maps.
    """

    bijective = False
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size=0):
        self._cache_size = cache_size
        self._inv = None
        if cache_size == 0:
            pass
        elif cache_size == 1:
            self._cached_x_y = None, None
        else:
            raise ValueError("cache_size must be 0 or 1")
        super().__init__()

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        """The inverse transform (``t.inv(t(x)) == x``)."""
        inv = None
        if self._inv is not None:
            inv = self._inv()
        if inv is None:
            inv = _InverseTransform(self)
            self._inv = weakref.ref(inv)
        return inv

    @property
    def sign(self):
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        """``log |dy/dx|`` at the pair ``x, y``."""
        raise NotImplementedError

    def __repr__(self):
        return self.__class__.__name__ + "()"

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape


class _ParameterlessTransform(Transform):
    """A transform without parameters: any two instances of its class are equal."""

    def __eq__(self, other):
        return isinstance(other, type(self))

    __hash__ = Transform.__hash__


class _InverseTransform(Transform):
    """The inverse of a transform."""

    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return self._inv.codomain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self.inv.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = Transform.__hash__

    def __repr__(self):
        return f"{self.__class__.__name__}({self._inv!r})"

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


class ComposeTransform(Transform):
    """Applies ``parts`` in order.

    Args:
        parts (list of Transform): the transforms to compose.
        cache_size (int): the cache size of the composition.
    """

    def __init__(self, parts, cache_size=0):
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = Transform.__hash__

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        inv = None
        if self._inv is not None:
            inv = self._inv()
        if inv is None:
            inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv = weakref.ref(inv)
            inv._inv = weakref.ref(self)
        return inv

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return ember.zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, a, b in zip(self.parts, xs[:-1], xs[1:], strict=True):
            terms.append(_sum_rightmost(part.log_abs_det_jacobian(a, b),
                                        event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
        result = terms[0]
        for t in terms[1:]:
            result = result + t
        return result

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        inner = ",\n    ".join([repr(p) for p in self.parts])
        return self.__class__.__name__ + "(\n    " + inner + "\n)"


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """Treats ``reinterpreted_batch_ndims`` rightmost dims of ``base_transform`` as event
    dims: its log-det-Jacobian is summed over them.

    Args:
        base_transform (Transform): the transform.
        reinterpreted_batch_ndims (int): the number of extra event dims.
    """

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        result = self.base_transform.log_abs_det_jacobian(x, y)
        return _sum_rightmost(result, self.reinterpreted_batch_ndims)

    def __repr__(self):
        return (f"{self.__class__.__name__}({self.base_transform!r}, "
                f"{self.reinterpreted_batch_ndims})")


class ReshapeTransform(Transform):
    """Reshapes the rightmost ``in_shape`` dims to ``out_shape`` (same number of elements).

    Args:
        in_shape (ember.Size): the input event shape.
        out_shape (ember.Size): the output event shape.
    """

    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape = ember.Size(in_shape)
        self.out_shape = ember.Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        batch_shape = x.shape[:x.dim() - len(self.in_shape)]
        return x.reshape(tuple(batch_shape) + tuple(self.out_shape))

    def _inverse(self, y):
        batch_shape = y.shape[:y.dim() - len(self.out_shape)]
        return y.reshape(tuple(batch_shape) + tuple(self.in_shape))

    def log_abs_det_jacobian(self, x, y):
        batch_shape = x.shape[:x.dim() - len(self.in_shape)]
        return ember.zeros(batch_shape, dtype=x.dtype)

    def forward_shape(self, shape):
        cut = len(shape) - len(self.in_shape)
        return ember.Size(tuple(shape[:cut]) + tuple(self.out_shape))

    def inverse_shape(self, shape):
        cut = len(shape) - len(self.out_shape)
        return ember.Size(tuple(shape[:cut]) + tuple(self.in_shape))


class ExpTransform(_ParameterlessTransform):
    """``y = exp(x)``."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """``y = x ** exponent`` on the positive reals.

    Args:
        exponent (float or Tensor): the exponent.
    """

    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = _as_tensors(exponent)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and bool(self.exponent.eq(other.exponent).all())

    __hash__ = Transform.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()


class SigmoidTransform(_ParameterlessTransform):
    """``y = 1 / (1 + exp(-x))``."""

    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def _call(self, x):
        finfo = ember.finfo(x.dtype)
        return ember.sigmoid(x).clamp(min=finfo.tiny, max=1.0 - finfo.eps)

    def _inverse(self, y):
        finfo = ember.finfo(y.dtype)
        y = y.clamp(min=finfo.tiny, max=1.0 - finfo.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -_softplus(-x) - _softplus(x)


class SoftplusTransform(_ParameterlessTransform):
    """``y = log(1 + exp(x))``."""

    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def _call(self, x):
        return _softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -_softplus(-x)


class TanhTransform(_ParameterlessTransform):
    """``y = tanh(x)``."""

    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return y.atanh()

    def log_abs_det_jacobian(self, x, y):
        # log(1 - tanh(x)^2) = 2 (log 2 - x - softplus(-2x)), stable
        return 2.0 * (math.log(2.0) - x - _softplus(-2.0 * x))


class AbsTransform(_ParameterlessTransform):
    """``y = |x|`` (not bijective; its inverse is the positive branch)."""

    domain = constraints.real
    codomain = constraints.positive

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """``y = loc + scale * x``.

    Args:
        loc (Tensor or float): the shift.
        scale (Tensor or float): the scale.
        event_dim (int): the number of event dims (the log-det-Jacobian sums over them).
    """

    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
                if a != b:
                    return False
            elif not bool((ember.as_tensor(a) == ember.as_tensor(b)).all()):
                return False
        return True

    __hash__ = Transform.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = x.shape
        scale = self.scale
        if isinstance(scale, numbers.Real):
            result = ember.full_like(x, math.log(abs(scale)))
        else:
            result = scale.abs().log()
        if self.event_dim:
            result_size = result.shape[:result.dim() - self.event_dim] + (-1,)
            result = result.reshape(result_size).sum(-1)
            shape = shape[:len(shape) - self.event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return ember.broadcast_shapes(tuple(shape), tuple(getattr(self.loc, "shape", ())),
                                      tuple(getattr(self.scale, "shape", ())))

    def inverse_shape(self, shape):
        return self.forward_shape(shape)


class SoftmaxTransform(_ParameterlessTransform):
    """From unconstrained space to the simplex by ``exp`` and normalization (not
    bijective; no log-det-Jacobian, as in PyTorch)."""

    domain = constraints.real_vector
    codomain = constraints.simplex

    def _call(self, x):
        logprobs = x
        probs = (logprobs - logprobs.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()


class StickBreakingTransform(_ParameterlessTransform):
    """From unconstrained vectors of size K - 1 to the K-simplex by stick breaking
    (bijective)."""

    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def _call(self, x):
        offset = x.shape[-1] + 1 - ember.arange(1, x.shape[-1] + 1, dtype=x.dtype)
        z = ember.sigmoid(x - offset.log())
        z_cumprod = (1 - z).cumprod(-1)
        ones = ember.ones(tuple(x.shape[:-1]) + (1,), dtype=x.dtype)
        return ember.cat([z, ones], -1) * ember.cat([ones, z_cumprod], -1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        offset = y.shape[-1] - ember.arange(1, y.shape[-1], dtype=y.dtype)
        sf = 1 - y_crop.cumsum(-1)
        finfo = ember.finfo(y.dtype)
        sf = sf.clamp(min=finfo.tiny)
        return y_crop.log() - sf.log() + offset.log()

    def log_abs_det_jacobian(self, x, y):
        offset = x.shape[-1] + 1 - ember.arange(1, x.shape[-1] + 1, dtype=x.dtype)
        x = x - offset.log()
        detj = (-x + ember.nn.functional.logsigmoid(x) + y[..., :-1].log()).sum(-1)
        return detj

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return ember.Size(tuple(shape[:-1]) + (shape[-1] + 1,))

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return ember.Size(tuple(shape[:-1]) + (shape[-1] - 1,))


class LowerCholeskyTransform(_ParameterlessTransform):
    """From unconstrained square matrices to lower-triangular matrices with a positive
    diagonal (the strictly lower part kept, the diagonal exponentiated)."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(_ParameterlessTransform):
    """From unconstrained square matrices to positive-definite ones: ``L L^T`` of their
    :class:`LowerCholeskyTransform`."""

    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def _call(self, x):
        lower = LowerCholeskyTransform()(x)
        return lower @ lower.transpose(-2, -1)

    def _inverse(self, y):
        from ember.distributions._nodes import cholesky

        return LowerCholeskyTransform().inv(cholesky(y))


class CorrCholeskyTransform(Transform):
    """From unconstrained vectors of length ``D (D - 1) / 2`` to Cholesky factors of
    ``D x D`` correlation matrices (lower triangular, positive diagonal, rows of unit
    Euclidean norm), bijective.

    The vector fills the strictly lower triangle in row order; each row ``X_i`` is mapped
    by ``r = tanh(X_i)`` into (-1, 1) and then by a signed stick-breaking of ``r ** 2``
    onto the unit sphere: ``y_ij = r_ij sqrt(1 - sum_{k<j} y_ik ** 2)``, the diagonal
    taking the rest of the unit norm. As in PyTorch, two instances compare equal only
    when they are the same object.

    Examples::

        >>> t = ember.distributions.transforms.CorrCholeskyTransform()
        >>> t(ember.zeros(3)).shape
        ember.Size([3, 3])
    """

    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        eps = ember.finfo(x.dtype).eps
        r = vec_to_tril_matrix(ember.tanh(x).clamp(min=-1 + eps, max=1 - eps), diag=-1)
        # y = sign(r) sqrt(z cumprod(1 - z)) with z = r ** 2, i.e. r sqrt(cumprod(1 - z))
        z1m_cumprod_sqrt = (1 - r * r).sqrt().cumprod(-1)
        eye = ember.eye(r.shape[-1], dtype=r.dtype, device=r.device)
        shifted = ember.nn.functional.pad(z1m_cumprod_sqrt[..., :-1], [1, 0], value=1.0)
        return (r + eye) * shifted

    def _inverse(self, y):
        y_cumsum = 1 - (y * y).cumsum(-1)
        y_cumsum_shifted = ember.nn.functional.pad(y_cumsum[..., :-1], [1, 0], value=1.0)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(y_cumsum_shifted, diag=-1).sqrt()
        return 0.5 * (t.log1p() - (-t).log1p())

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        # of x and the flattened strict lower triangle of y (the spaces differ in dimension)
        y1m_cumsum = 1 - (y * y).cumsum(-1)
        stick_breaking_logdet = 0.5 * tril_matrix_to_vec(y1m_cumsum, diag=-2).log().sum(-1)
        tanh_logdet = -2 * (x + _softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return ember.Size(tuple(shape[:-1]) + (d, d))

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return ember.Size(tuple(shape[:-2]) + (d * (d - 1) // 2,))


class CatTransform(Transform):
    """Applies ``tseq[i]`` to the i-th slice (of ``lengths[i]``) along ``dim``.

    Args:
        tseq (list of Transform): the transforms.
        dim (int): the dimension.
        lengths (list of int): the slice lengths (1 each by default).
    """

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = list(lengths) if lengths is not None else [1] * len(self.transforms)
        if len(self.lengths) != len(self.transforms):
            raise ValueError("lengths and tseq must have the same length")
        self.dim = dim

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _slices(self, x):
        start = 0
        for trans, length in zip(self.transforms, self.lengths, strict=True):
            yield trans, x.narrow(self.dim, start, length)
            start += length

    def _call(self, x):
        if x.shape[self.dim] != self.length:
            raise ValueError(f"CatTransform expects size {self.length} along dim {self.dim}")
        return ember.cat([t(v) for t, v in self._slices(x)], self.dim)

    def _inverse(self, y):
        return ember.cat([t.inv(v) for t, v in self._slices(y)], self.dim)

    def log_abs_det_jacobian(self, x, y):
        parts = []
        start = 0
        for trans, length in zip(self.transforms, self.lengths, strict=True):
            xs = x.narrow(self.dim, start, length)
            ys = y.narrow(self.dim, start, length)
            j = trans.log_abs_det_jacobian(xs, ys)
            if trans.event_dim < self.event_dim:
                j = _sum_rightmost(j, self.event_dim - trans.event_dim)
            parts.append(j)
            start += length
        dim = self.dim
        if dim >= 0:
            dim = dim - x.dim()
        dim = dim + self.event_dim
        if dim < 0:
            return ember.cat(parts, dim)
        total = parts[0]
        for p in parts[1:]:
            total = total + p
        return total

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Applies ``tseq[i]`` to the i-th index along ``dim``.

    Args:
        tseq (list of Transform): the transforms.
        dim (int): the dimension.
    """

    def __init__(self, tseq, dim=0, cache_size=0):
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z):
        return [z.select(self.dim, i) for i in range(z.shape[self.dim])]

    def _call(self, x):
        return ember.stack([t(v) for v, t in zip(self._slice(x), self.transforms, strict=True)],
                           self.dim)

    def _inverse(self, y):
        return ember.stack([t.inv(v) for v, t in zip(self._slice(y), self.transforms,
                                                     strict=True)], self.dim)

    def log_abs_det_jacobian(self, x, y):
        return ember.stack([t.log_abs_det_jacobian(a, b) for a, b, t in zip(
            self._slice(x), self._slice(y), self.transforms, strict=True)], self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """``y = distribution.cdf(x)``: onto the unit interval.

    Args:
        distribution (Distribution): a distribution with ``cdf``, ``icdf`` and ``log_prob``.
    """

    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return type(self)(self.distribution, cache_size=cache_size)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)


def _as_tensors(*values):
    out = []
    for v in values:
        out.append(v if isinstance(v, ember.Tensor) else ember.tensor(float(v)))
    return out

"""ExponentialFamily: distributions of the form
``p(x; theta) = exp(<t(x), theta> - F(theta) + k(x))``."""

from __future__ import annotations

import ember
from ember.distributions.distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """The base class of exponential-family distributions. Subclasses give
    ``_natural_params`` (theta), ``_log_normalizer(*theta)`` (F) and
    ``_mean_carrier_measure`` (E[k(x)]); :meth:`entropy` then follows from the Bregman
    divergence of F: ``H = F(theta) - <theta, grad F(theta)> - E[k(x)]``.
    """

    @property
    def _natural_params(self):
        """The natural parameters, a tuple of tensors."""
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        """The log normalizer F of the natural parameters."""
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        """The expectation of the carrier measure k(x)."""
        raise NotImplementedError

    def entropy(self):
        """The entropy, by the Bregman divergence of the log normalizer (autograd)."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        with ember.enable_grad():
            lg_normal = self._log_normalizer(*nparams)
            gradients = ember.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for param, grad in zip(nparams, gradients, strict=True):
            term = param * grad
            if term.dim() > len(self._batch_shape):
                term = term.flatten(len(self._batch_shape)).sum(-1)
            result = result - term
        return result

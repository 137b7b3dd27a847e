"""Probability distributions, as ``torch.distributions``: parameterizable distributions
with sampling (reparameterized where PyTorch has ``rsample``), log-densities, moments and
entropies; constraints; invertible transforms; closed-form KL divergences.

Examples::

    >>> import ember
    >>> from ember.distributions import Normal, kl_divergence
    >>> p = Normal(ember.tensor(0.0), ember.tensor(1.0))
    >>> q = Normal(ember.tensor(1.0), ember.tensor(2.0))
    >>> kl_divergence(p, q)
    tensor(0.4431)
"""

# the submodules at torch.distributions' paths (``ember.distributions.gamma`` and the
# like) are attributes of the package, as torch's
from ember.distributions import (  # noqa: F401
    beta,
    cauchy,
    chi2,
    constraints,
    fishersnedecor,
    gamma,
    geometric,
    gumbel,
    half_cauchy,
    half_normal,
    inverse_gamma,
    kumaraswamy,
    laplace,
    log_normal,
    logistic_normal,
    multinomial,
    negative_binomial,
    one_hot_categorical,
    pareto,
    poisson,
    relaxed_bernoulli,
    relaxed_categorical,
    studentT,
    transforms,
    weibull,
)
from ember.distributions.bernoulli import Bernoulli, Geometric
from ember.distributions.binomial import Binomial, Multinomial, NegativeBinomial
from ember.distributions.categorical import (
    Categorical,
    OneHotCategorical,
    OneHotCategoricalStraightThrough,
)
from ember.distributions.constraint_registry import biject_to, transform_to
from ember.distributions.continuous_bernoulli import ContinuousBernoulli
from ember.distributions.dirichlet import Beta, Dirichlet
from ember.distributions.distribution import Distribution
from ember.distributions.exp_family import ExponentialFamily
from ember.distributions.exponential import Chi2, Exponential, Gamma, Poisson
from ember.distributions.generalized_pareto import GeneralizedPareto
from ember.distributions.gumbel import Gumbel
from ember.distributions.independent import Independent
from ember.distributions.kl import kl_divergence, register_kl
from ember.distributions.lkj_cholesky import LKJCholesky
from ember.distributions.lowrank_multivariate_normal import LowRankMultivariateNormal
from ember.distributions.mixture_same_family import MixtureSameFamily
from ember.distributions.multivariate_normal import MultivariateNormal
from ember.distributions.normal import Cauchy, Laplace, Normal
from ember.distributions.relaxed import RelaxedBernoulli, RelaxedOneHotCategorical
from ember.distributions.student_t import FisherSnedecor, StudentT
from ember.distributions.transformed_distribution import (
    HalfCauchy,
    HalfNormal,
    LogNormal,
    TransformedDistribution,
)
from ember.distributions.transformed_families import (
    InverseGamma,
    Kumaraswamy,
    LogisticNormal,
    Pareto,
    Weibull,
)
from ember.distributions.transforms import *  # noqa: F403
from ember.distributions.uniform import Uniform
from ember.distributions.von_mises import VonMises
from ember.distributions.wishart import Wishart

__all__ = [
    "Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli",
    "Dirichlet", "Distribution", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma",
    "GeneralizedPareto", "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent",
    "InverseGamma", "Kumaraswamy", "LKJCholesky", "Laplace", "LogNormal", "LogisticNormal",
    "LowRankMultivariateNormal", "MixtureSameFamily", "Multinomial", "MultivariateNormal",
    "NegativeBinomial", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough",
    "Pareto", "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT",
    "TransformedDistribution", "Uniform", "VonMises", "Weibull", "Wishart", "biject_to",
    "constraints", "kl_divergence", "register_kl", "transform_to", "transforms",
] + transforms.__all__

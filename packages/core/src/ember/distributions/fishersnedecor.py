"""The module path of ``torch.distributions.fishersnedecor``: :class:`FisherSnedecor` (defined in
:mod:`ember.distributions.student_t`)."""

from ember.distributions.student_t import FisherSnedecor

__all__ = ["FisherSnedecor"]

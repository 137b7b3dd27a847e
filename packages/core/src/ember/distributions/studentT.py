"""The module path of ``torch.distributions.studentT``: :class:`StudentT` (defined in
:mod:`ember.distributions.student_t`)."""

from ember.distributions.student_t import StudentT

__all__ = ["StudentT"]

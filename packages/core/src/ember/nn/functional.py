"""``ember.nn.functional``: the functional form of every layer and loss.

The implementations live in ``ember.nn._functional``, one private module per family;
this module is the public namespace that re-exports them.
"""

from ember.nn import _functional_rest
from ember.nn._functional import *  # noqa: F403
from ember.nn._functional import __all__  # noqa: F401
from ember.nn._functional_rest import *  # noqa: E402,F403

__all__ = __all__ + _functional_rest.__all__  # noqa: PLE0605

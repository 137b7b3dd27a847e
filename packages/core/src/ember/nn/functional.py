"""``ember.nn.functional``: the functional form of every layer and loss.

The implementations live in ``ember.nn._functional``, one private module per family;
this module is the public namespace that re-exports them.
"""

from ember.nn._functional import *  # noqa: F403
from ember.nn._functional import __all__  # noqa: F401

# The rest of torch.nn.functional's names (Tensor, the __torch_function__ queries,
# grouped_mm, scaled_mm, ...) are attributes here but stay out of __all__, which lists the
# registered ops (tests/core/test_registry.py); torch.nn.functional has no __all__.
from ember.nn._functional_rest import *  # noqa: E402,F403

"""Op definitions, one module per family; forward and backward side by side.

Each family module defines its ops (``Node`` subclasses), the public functions that
call them, and ``METHODS``: the Tensor methods it provides, installed onto
``ember.Tensor`` by ``ember._tensor._install_methods``.
"""

from ember._ops import (
    conversion,
    creation,
    cumulative,
    elementwise,
    indexing,
    join,
    linalg,
    random,
    reduction,
    scatter,
    shape,
    sort,
    special,
)

FAMILIES = (conversion, creation, elementwise, reduction, cumulative, shape, join, indexing,
            scatter, linalg, sort, random, special)

__all__ = ["FAMILIES"]

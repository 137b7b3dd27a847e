"""Op definitions, one module per family; forward and backward side by side.

Each family module defines its ops (``Node`` subclasses), the public functions that
call them, and ``METHODS``: the Tensor methods it provides. The families register
themselves in the op registry below (NOTE [ The op registry ] in ``_registry``), from
which ``ember._tensor._install_methods`` installs the Tensor methods.
"""

from ember._ops import (
    complex_ops,
    conversion,
    creation,
    cumulative,
    elementwise,
    indexing,
    join,
    linalg,
    matrix,
    random,
    reduction,
    scatter,
    shape,
    sort,
    special,
    spectral,
)

FAMILIES = (conversion, creation, elementwise, reduction, cumulative, shape, join, indexing,
            scatter, linalg, matrix, spectral, complex_ops, sort, random, special)

# the math ops of PyTorch's top-level namespace that came with the public-surface work
from ember._ops import (  # noqa: E402
    calculus,
    distance,
    index_reduce,
    pointwise,
    shape_inplace,
    statistics,
    structure,
)

FAMILIES += (pointwise, statistics, calculus, distance, structure, index_reduce, shape_inplace)

from ember._ops._registry import register_family  # noqa: E402

for _family in FAMILIES:
    register_family(_family, "ember")

__all__ = ["FAMILIES"]

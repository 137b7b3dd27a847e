"""``ember.library``: register ops and kernels, as the core does (NOTE [ The op registry ],
NOTE [ Kernels by name ]).

Domain packages (embervision's nms and roi_align, embertext's tokenizer kernels,
emberaudio's filters) and user code add their ops here the way ember's own families do:
an op is a :class:`Node` subclass with ``forward`` on arrays and ``backward`` on tensors
side by side, run by :func:`apply` (which records it in the graph and passes the dispatch
point), a public function calling it, and optional Tensor methods. A kernel is an
array-level function registered by name for a device type; ``forward`` fetches it with
:func:`kernel`, and the array's device decides which implementation runs.

Examples::

    >>> import numpy as np, ember, ember.library as library
    >>> @library.register_kernel("mylib_clip01", "any")
    ... def _clip01(x):
    ...     return library.array_module(x).clip(x, 0, 1)
    >>> class Clip01(library.Node):
    ...     saves_inputs = (0,)          # backward gets the input back as a tensor
    ...     def forward(self, x):        # arrays in, arrays out
    ...         return library.kernel("mylib_clip01", x)(x)
    ...     def backward(self, g):       # tensors in, one gradient per input out
    ...         (x,) = self.saved_tensors
    ...         return g * ((x > 0) & (x < 1))
    >>> def clip01(t):
    ...     return library.apply(Clip01, t)
    >>> _ = library.register_op("clip01", clip01, namespace="mylib", nodes=[Clip01],
    ...                         methods=["clip01"])
    >>> ember.tensor([-1.0, 0.5, 2.0]).clip01()
    tensor([0.0000, 0.5000, 1.0000])
"""

from collections.abc import Callable, Sequence

from ember._backend import backend_of as _backend_of
from ember._backend import xp_of as _xp_of
from ember._backend._base import kernel_entries
from ember._backend._base import register_kernel as _register_kernel
from ember._C._core import Node, apply
from ember._ops import _registry
from ember._ops._registry import OpDef, get_op, op_of_node, registered_ops

__all__ = ["Node", "apply", "OpDef", "register_op", "register_kernel", "kernel",
           "kernel_entries", "registered_ops", "get_op", "op_of_node", "array_module"]


def register_op(name: str, function: Callable, *, namespace: str, nodes=(), methods=None,
                differentiable: bool | None = None) -> OpDef:
    """Register op ``namespace.name`` and install its Tensor ``methods`` (a list of names
    for the function itself, or a dict name -> callable); returns the :class:`OpDef`.

    ``nodes`` are the ``Node`` classes that record the op in the graph: they take the op's
    name at the dispatch point (the profiler shows it).
    """
    from ember._tensor import _install_methods

    if not namespace or not isinstance(namespace, str):
        raise ValueError("register_op: namespace must be a non-empty string, e.g. "
                         "'embervision.ops'")
    op = _registry.register_op(name, function, namespace=namespace, nodes=nodes,
                               methods=methods, differentiable=differentiable)
    if op.methods:
        _install_methods()
    return op


def register_kernel(name: str, device_types: str | Sequence[str], fn: Callable | None = None,
                    *, dtypes=None, contiguous: bool = False):
    """Register ``fn`` as kernel ``name`` for ``device_types`` (``"cpu"``, ``"cuda"``, or
    ``"any"`` for an implementation written against the array module); ``dtypes`` and
    ``contiguous`` restrict the arrays it takes. Usable as a decorator."""
    types = (device_types,) if isinstance(device_types, str) else tuple(device_types)

    def add(f):
        for t in types:
            _register_kernel(name, t, f, dtypes=dtypes, contiguous=contiguous)
        return f

    return add if fn is None else add(fn)


def kernel(name: str, array) -> Callable:
    """The implementation of kernel ``name`` for ``array`` on its device."""
    return _backend_of(array).kernel(name, array)


def array_module(array):
    """The array module (NumPy or CuPy) holding ``array``: kernels written for ``"any"``
    device use it instead of importing one."""
    return _xp_of(array)


# typing names used by the annotations above: not part of the public namespace
del Callable, Sequence

"""What a converter sees while it writes one fx node as ONNX: :class:`Context`, and the
tables that map fx node targets to converters.

NOTE [ Values while exporting ]
Every fx node becomes either a :class:`~ember.onnx._builder.Value` (a tensor of the ONNX
graph) or a Python value (an int, a float, a tuple, None, a dtype, an ember Tensor that is
a parameter, a buffer or a folded constant). Sizes are Python ints where they are fixed
in the graph and 0-d int64 Values where they follow a dynamic axis: ``x.size()`` is a
tuple of both kinds, so ``b, t, c = x.shape``, ``x.shape[:-1] + (h, d)`` and
``x.view(b * t, -1)`` need no converter of their own. A converter takes the node's
arguments mapped this way, with the signature of the ember function it converts, and
returns the same kinds.
"""

from __future__ import annotations

import importlib
import operator

import numpy as np

from ember.onnx._builder import Value, onnx_type
from ember.onnx.errors import SymbolicValueError, UnsupportedOperatorError

__all__ = ["Context", "converts", "converts_module", "FUNCTIONS", "METHODS", "MODULES",
           "lookup_function", "lookup_method", "lookup_module", "result_dtype"]

# public path ("ember.nn.functional.relu", "operator.add") -> converter; resolved lazily
_FUNCTION_PATHS: dict = {}
FUNCTIONS: dict = {}  # id(callable) -> (callable, converter, public path)
METHODS: dict = {}  # Tensor method name -> converter
MODULES: dict = {}  # module class -> converter
_MODULE_PATHS: dict = {}  # "ember.nn.Linear" -> converter
_resolved = False


def converts(*paths: str, methods=()):
    """Register a converter for the functions at ``paths`` and the Tensor ``methods``."""

    def deco(fn):
        for p in paths:
            _FUNCTION_PATHS[p] = fn
        for m in methods:
            METHODS[m] = fn
        return fn

    return deco


_CUSTOM: dict = {}  # op name -> (symbolic_fn, opset_version)


def register_custom(name: str, fn, opset_version: int) -> None:
    _CUSTOM[name] = (fn, opset_version)


def unregister_custom(name: str) -> None:
    _CUSTOM.pop(name, None)


def custom_symbolic(name: str):
    """A converter calling the symbolic function registered for op ``name``, or None."""
    hit = _CUSTOM.get(name)
    if hit is None:
        return None
    fn, _ = hit

    def convert(ctx, *args, **kwargs):
        return fn(SymbolicContext(ctx), *args, **kwargs)

    return convert


class SymbolicContext:
    """The ``g`` of a custom symbolic function: ``g.op("Name", *inputs, **attrs)`` with
    torch.onnx's attribute suffixes (``alpha_f``, ``axes_i``, ``mode_s``, ``value_t``) and
    ``outputs=n``; ``"domain::Name"`` for an operator of another domain."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        self.opset = ctx.opset

    def op(self, name: str, *inputs, outputs: int = 1, **attrs):
        domain, _, op_type = name.rpartition("::")
        values = [None if x is None else self.ctx.tensor(x) for x in inputs]
        clean = {}
        for k, v in attrs.items():
            base, _, suffix = k.rpartition("_")
            if base and suffix in ("i", "f", "s", "t"):
                if suffix == "t":
                    import onnx

                    arr = v.detach().cpu().numpy() if hasattr(v, "detach") else v
                    v = onnx.numpy_helper.from_array(np.asarray(arr))
                clean[base] = v
            else:
                clean[k] = v
        if domain:
            self.ctx.b.domains.setdefault(domain, 1)
        dtype = values[0].dtype if values and values[0] is not None else np.float32
        return self.ctx.op(op_type, values, outputs=outputs, domain=domain, dtype=dtype,
                           **clean)


def converts_module(*paths: str):
    """Register a converter ``fn(ctx, module, *args, **kwargs)`` for module classes."""

    def deco(fn):
        for p in paths:
            _MODULE_PATHS[p] = fn
        return fn

    return deco


def _resolve_path(path: str):
    parts = path.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            obj = getattr(obj, name, None)
            if obj is None:
                return None
        return obj
    return None


def resolve_tables() -> None:
    """Look up the registered public paths (once, at the first export)."""
    global _resolved
    if _resolved:
        return
    # the converters register themselves on import
    from ember.onnx import _attention, _modules, _ops_index, _ops_nn, _ops_tensor, _rnn  # noqa: F401

    for path, fn in _FUNCTION_PATHS.items():
        obj = _resolve_path(path)
        if obj is not None and callable(obj):
            FUNCTIONS.setdefault(id(obj), (obj, fn, path))
    for path, fn in _MODULE_PATHS.items():
        cls = _resolve_path(path)
        if isinstance(cls, type):
            MODULES.setdefault(cls, fn)
    _resolved = True


def mapped_names() -> dict:
    """``{"functions": [...], "methods": [...], "modules": [...]}``: what has a converter."""
    resolve_tables()
    return {"functions": sorted(p for _, _, p in FUNCTIONS.values()),
            "methods": sorted(METHODS),
            "modules": sorted(f"{c.__module__}.{c.__qualname__}" for c in MODULES)}


def lookup_function(target):
    """The converter of a ``call_function`` target, or None."""
    resolve_tables()
    hit = FUNCTIONS.get(id(target))
    if hit is not None and hit[0] is target:
        return hit[1]
    original = getattr(target, "_fx_original", None) or getattr(target, "__wrapped__", None)
    if original is not None and original is not target:
        return lookup_function(original)
    return None


def lookup_method(name: str):
    resolve_tables()
    return METHODS.get(name)


def lookup_module(module):
    """The converter of a module: its class's, or a base class's when ``forward`` is the
    base class's own (a subclass with its own forward is traced through)."""
    resolve_tables()
    cls = type(module)
    for base in cls.__mro__:
        fn = MODULES.get(base)
        if fn is not None:
            if base is cls or cls.forward is base.forward:
                return fn
            return None
    return None


def target_name(target) -> str:
    """A readable public name of a call_function target (``"ember.linalg.svd"``)."""
    if isinstance(target, str):
        return target
    if target.__class__.__module__ == "builtins" and getattr(target, "__module__", None) in (
            "_operator", "operator"):
        return f"operator.{target.__name__}"
    mod = getattr(target, "__module__", None) or ""
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", repr(target))
    for public in ("ember.nn.functional", "ember.linalg", "ember.fft", "ember.special"):
        m = importlib.import_module(public)
        if getattr(m, getattr(target, "__name__", ""), None) is target:
            return f"{public}.{target.__name__}"
    import ember

    if getattr(ember, getattr(target, "__name__", ""), None) is target:
        return f"ember.{target.__name__}"
    if mod in ("_operator", "operator"):
        return f"operator.{name}"
    return f"{mod}.{name}" if mod else name


# -- dtypes -----------------------------------------------------------------------------------

def _category(dtype) -> int:
    kind = np.dtype(dtype).kind
    return {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}.get(kind, 2)


def _promote(a, b):
    a, b = np.dtype(a), np.dtype(b)
    ca, cb = _category(a), _category(b)
    if ca != cb:
        return a if ca > cb else b
    if a == b:
        return a
    if a.name == "bfloat16" or b.name == "bfloat16":
        return np.dtype(np.float32)
    return np.promote_types(a, b)


def _scalar_category(x) -> int:
    if isinstance(x, bool | np.bool_):
        return 0
    if isinstance(x, int | np.integer):
        return 1
    if isinstance(x, complex):
        return 3
    return 2


def result_dtype(*operands):
    """PyTorch's type promotion of Values and Python scalars: dimensioned tensors first,
    then 0-d tensors, then scalars, each winning only with a higher category."""
    dims = [v.dtype for v in operands if isinstance(v, Value) and v.rank != 0]
    zero = [v.dtype for v in operands if isinstance(v, Value) and v.rank == 0]
    scalars = [x for x in operands if not isinstance(x, Value) and x is not None]
    out = None
    for d in dims:
        out = d if out is None else _promote(out, d)
    for d in zero:
        if out is None:
            out = d
        elif _category(d) > _category(out):
            out = d
    for s in scalars:
        c = _scalar_category(s)
        if out is None or c > _category(out):
            out = np.dtype({0: np.bool_, 1: np.int64, 2: _default_float(), 3: np.complex64}[c])
    return np.dtype(np.float32) if out is None else out


def _default_float():
    import ember

    return ember.get_default_dtype().numpy


# -- the context --------------------------------------------------------------------------------

class Context:
    """The state of one export that converters use: the builder ``b``, the root module,
    the module path being converted (for error messages) and helpers to make Values.

    Attributes:
        b: the :class:`~ember.onnx._builder.GraphBuilder`.
        opset: the opset version.
        path: the dotted path of the module whose code is being converted.
        node: the fx node being converted (None inside helper graphs).
        out: what the run of the model says about the node's result (a Value-like
            description with ``dtype`` and ``shape``), or None.
    """

    def __init__(self, builder, root, *, export_params: bool = True) -> None:
        self.b = builder
        self.opset = builder.opset
        self.root = root
        self.path = ""
        self.node = None
        self.out = None
        self.export_params = export_params
        self._tensor_names = {}
        for name, t in root.named_parameters(remove_duplicate=True):
            self._tensor_names.setdefault(id(t), name)
        for name, t in root.named_buffers(remove_duplicate=True):
            self._tensor_names.setdefault(id(t), name)
        self._tensors: dict = {}  # id(ember tensor) -> (tensor, Value)
        self._shapes: dict = {}  # value name -> Shape Value

    # -- errors ---------------------------------------------------------------------------------

    def unsupported(self, name: str, supported_version: int | None = None):
        return UnsupportedOperatorError(name, self.opset, supported_version, self.path or None)

    def need_opset(self, version: int, what: str) -> None:
        if self.opset < version:
            raise self.unsupported(what, version)

    def fail(self, message: str):
        where = f" (in module '{self.path}')" if self.path else ""
        return SymbolicValueError(f"ember.onnx.export: {message}{where}")

    # -- making Values -------------------------------------------------------------------------

    def tensor(self, x, dtype=None) -> Value:
        """``x`` as a Value: a Value (cast to ``dtype`` if given), an ember Tensor (an
        initializer, or a graph input for parameters without ``export_params``), or a
        Python number/list (a constant of ``dtype``, or of its own kind)."""
        from ember import Tensor

        if isinstance(x, Value):
            return x if dtype is None else self.b.cast(x, dtype)
        if isinstance(x, Tensor):
            hit = self._tensors.get(id(x))
            if hit is None:
                array = np.asarray(x.detach().cpu().numpy())
                name = self._tensor_names.get(id(x))
                if name is not None and not self.export_params and _is_parameter(x):
                    v = self.b.add_input(name, array.dtype, array.shape)
                elif name is not None and name not in self.b._names:
                    v = self.b.initializer(array, name=name)
                else:
                    v = self.b.initializer(array, hint=self._hint("const"))
                hit = self._tensors[id(x)] = (x, v)
            v = hit[1]
            return v if dtype is None else self.b.cast(v, dtype)
        if isinstance(x, tuple | list) and any(isinstance(e, Value) for e in x):
            return self.shape_vector(x) if dtype is None else self.b.cast(self.shape_vector(x),
                                                                          dtype)
        if dtype is None:
            dtype = _python_dtype(x)
        return self.b.constant(np.asarray(x, dtype=np.dtype(dtype)))

    def scalar_like(self, x, like: Value) -> Value:
        """A Python scalar as a 0-d constant of ``like``'s dtype; a Value as it is."""
        if isinstance(x, Value):
            return x
        return self.b.constant(np.asarray(x, dtype=like.dtype))

    def _hint(self, default: str) -> str:
        return self.node.name if self.node is not None else default

    def op(self, op_type: str, inputs, **kw):
        """``b.op`` with the fx node's name as the default name of the outputs."""
        kw.setdefault("hint", self._hint(op_type.lower()))
        return self.b.op(op_type, inputs, **kw)

    # -- shapes --------------------------------------------------------------------------------

    def shape_of(self, x: Value) -> Value:
        """``Shape(x)`` (made once per value)."""
        s = self._shapes.get(x.name)
        if s is None:
            s = self._shapes[x.name] = self.b.op("Shape", [x], dtype=np.int64,
                                                  shape=(x.rank,), hint=f"{x.name}_shape")
        return s

    def dim(self, x: Value, i: int):
        """Size ``i`` of ``x``: an int where it is fixed, else a 0-d int64 Value."""
        if x.shape is None:
            raise self.fail(f"the rank of {x.name!r} is unknown")
        i = i + x.rank if i < 0 else i
        if not 0 <= i < x.rank:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-x.rank}, {x.rank - 1}], but got {i})")
        d = x.shape[i]
        if d is not None:
            return int(d)
        return self.b.op("Gather", [self.shape_of(x), self.b.constant(np.int64(i))], axis=0,
                         dtype=np.int64, shape=(), hint=f"{x.name}_size{i}")

    def sizes(self, x: Value) -> tuple:
        return tuple(self.dim(x, i) for i in range(x.rank))

    def shape_vector(self, parts) -> Value:
        """A 1-D int64 Value from ints, 0-d or 1-D int Values and tuples of those."""
        flat = []

        def add(p):
            if isinstance(p, tuple | list):
                for q in p:
                    add(q)
            else:
                flat.append(p)

        add(parts)
        pieces, run = [], []
        for p in flat:
            if isinstance(p, Value):
                if run:
                    pieces.append(self.b.ints(run))
                    run = []
                p = self.b.cast(p, np.int64)
                pieces.append(self.b.unsqueeze(p, [0], shape=(1,)) if p.rank == 0 else p)
            else:
                run.append(_as_int(p))
        if run or not pieces:
            pieces.append(self.b.ints(run))
        if len(pieces) == 1:
            return pieces[0]
        return self.b.op("Concat", pieces, axis=0, dtype=np.int64, shape=(None,))

    # -- arithmetic helpers -----------------------------------------------------------------

    def binary(self, op_type: str, a, b, dtype=None, out_dtype=None) -> Value:
        """``op_type`` of two operands (Values or scalars) after casting both to ``dtype``
        (default: their promoted dtype); the output is ``out_dtype`` (default ``dtype``)."""
        dtype = np.dtype(dtype) if dtype is not None else result_dtype(a, b)
        va, vb = self.tensor(a, dtype), self.tensor(b, dtype)
        shape = _broadcast_shape(va.shape, vb.shape)
        return self.op(op_type, [va, vb], dtype=out_dtype or dtype, shape=shape)

    def unary(self, op_type: str, x: Value, **attrs) -> Value:
        return self.op(op_type, [x], dtype=x.dtype, shape=x.shape, **attrs)

    def cast(self, x, dtype) -> Value:
        return self.b.cast(self.tensor(x), dtype)


def _is_parameter(t) -> bool:
    from ember.nn.parameter import Parameter

    return isinstance(t, Parameter)


def _as_int(p) -> int:
    if isinstance(p, bool) or not isinstance(p, int | np.integer):
        raise SymbolicValueError(f"ember.onnx.export: a size must be an int, got {p!r}")
    return int(p)


def _python_dtype(x):
    if isinstance(x, bool | np.bool_):
        return np.bool_
    if isinstance(x, int | np.integer):
        return np.int64
    if isinstance(x, float | np.floating):
        return _default_float()
    arr = np.asarray(x)
    if arr.dtype.kind == "f":
        return _default_float()
    return arr.dtype


def _broadcast_shape(a, b):
    if a is None or b is None:
        return None
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None or y is None:
            out.append(x if y is None else y)
        else:
            out.append(max(x, y))
    return tuple(out)


def is_operator(target) -> bool:
    return getattr(target, "__module__", None) in ("_operator", "operator") or \
        target in vars(operator).values()


__all__ += ["onnx_type", "target_name", "mapped_names", "resolve_tables", "is_operator"]

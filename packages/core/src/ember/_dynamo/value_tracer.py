"""Tracing with the example inputs' values, for graphs compiled for one shape.

NOTE [ Tracing with values ]
fx's symbolic tracer knows nothing of its inputs, so ``B, T, C = x.size()`` gives Proxies
and ``assert T <= self.block_size`` (or ``if x.dim() == 3``) stops the trace: minGPT-style
models ran eagerly under ``ember.compile``. A graph compiled for one shape (the static
guards: dtype, device, requires_grad and shape of every tensor input) may take such
metadata as constants, as PyTorch's dynamo specializes on sizes. So :class:`ValueTracer`
runs every recorded op on the real values as it records it (the trace is the first call:
its result is returned, and nothing runs twice, so a batch norm's running statistics move
once), and :class:`ValueProxy` answers the questions the guards make constant (``shape``,
``size()``, ``dim()``, ``numel()``, ``dtype``, ``device``, ``len()`` and unpacking of a
tensor or of a tuple of them) with Python values. Questions on the values themselves
(``bool(x.sum() > 0)``, ``.item()``) still stop the trace: the guards do not cover them.
Graphs compiled for any size (``dynamic=True``) use the symbolic tracer.
"""

from __future__ import annotations

from ember._C._core import TensorBase
from ember.fx import Proxy, Tracer
from ember.fx.node import map_aggregate, map_arg
from ember.fx.passes.shape_prop import record_meta

__all__ = ["ValueTracer", "ValueProxy", "ProgramError"]

# tensor metadata the static guards fix (an attribute, or a method returning a Python value)
_FIXED_ATTRS = frozenset({"shape", "ndim", "dtype", "device", "is_cuda", "layout",
                          "is_sparse", "is_quantized", "is_meta"})
_FIXED_METHODS = frozenset({"size", "dim", "ndimension", "numel", "nelement",
                            "is_floating_point", "is_complex", "element_size", "get_device"})


class ProgramError(Exception):
    """An op of the traced program raised on the example values: the program's own error
    (its ``__cause__``), which eager would raise too, rather than a limit of tracing."""


class ValueProxy(Proxy):
    """A Proxy whose value in the example call is known (``tracer.values[node]``)."""

    @property
    def _value(self):
        return self.tracer.values.get(self.node)

    def __getattr__(self, k: str):
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        v = self._value
        if isinstance(v, TensorBase):
            if k in _FIXED_ATTRS or k in _FIXED_METHODS:
                return getattr(v, k)
            if not callable(getattr(type(v), k, None)):
                # a data attribute (x.T, x.mT, x.real): its node now, so that it has a value
                return self.tracer.create_proxy("call_function", getattr, (self, k), {})
        return super().__getattr__(k)

    def __len__(self) -> int:
        v = self._value
        if isinstance(v, (TensorBase, tuple, list)):
            return len(v)
        return super().__len__()

    def __iter__(self):
        v = self._value
        if isinstance(v, (TensorBase, tuple, list)):
            return (self[i] for i in range(len(v)))
        return super().__iter__()


class ValueTracer(Tracer):
    """fx's tracer, running each recorded op on the example values (see the NOTE above).

    Args:
        inputs: the values of the root's placeholders, in order.
    """

    def __init__(self, inputs) -> None:
        super().__init__()
        self._inputs = list(inputs)
        self._next_input = 0
        self.values: dict = {}
        self._module_attrs = None

    def trace(self, root, concrete_args=None):
        from ember.nn import Module

        # what a leaf module's real call runs with: Module's own __call__ / __getattr__,
        # not the tracing ones the trace installs
        self._module_attrs = (Module.__dict__["__call__"], Module.__dict__["__getattr__"])
        return super().trace(root, concrete_args)

    def proxy(self, node) -> ValueProxy:
        return ValueProxy(node, self)

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None):
        if kind == "placeholder":
            value = self._inputs[self._next_input]
            self._next_input += 1
        elif kind == "get_attr":
            value = self._fetch_attr(target)
        else:
            value = self._run(kind, target, map_aggregate(args, self._real),
                              map_aggregate(kwargs, self._real))
        proxy = super().create_proxy(kind, target, args, kwargs, name, type_expr,
                                     proxy_factory_fn)
        self.values[proxy.node] = value
        record_meta(proxy.node, value)
        return proxy

    def output_value(self, graph):
        """The value of ``graph``'s output in the example call."""
        out = next(n for n in reversed(graph.nodes) if n.op == "output")
        return map_arg(out.args[0], lambda n: self.values[n])

    # -- running the example ----------------------------------------------------------
    def _real(self, a):
        return self.values[a.node] if isinstance(a, Proxy) else a

    def _run(self, kind, target, args, kwargs):
        try:
            return self._run_op(kind, target, args, kwargs)
        except ProgramError:
            raise
        except Exception as exc:  # noqa: BLE001 - the program's own error, passed on
            raise ProgramError(str(exc)) from exc

    def _run_op(self, kind, target, args, kwargs):
        if kind == "call_function":
            return target(*args, **kwargs)
        if kind == "call_method":
            return getattr(args[0], target)(*args[1:], **kwargs)
        if kind == "call_module":
            from ember.nn import Module

            traced = (Module.__dict__["__call__"], Module.__dict__["__getattr__"])
            Module.__call__, Module.__getattr__ = self._module_attrs
            try:
                return self.root.get_submodule(target)(*args, **kwargs)
            finally:
                Module.__call__, Module.__getattr__ = traced
        raise RuntimeError(f"ValueTracer: unexpected node kind {kind!r}")

    def _fetch_attr(self, qualname: str):
        obj = self.root
        for part in qualname.split("."):
            d = obj.__dict__
            for store in ("_parameters", "_buffers", "_modules"):
                if part in d.get(store, ()):
                    obj = d[store][part]
                    break
            else:
                obj = object.__getattribute__(obj, part)
        return obj

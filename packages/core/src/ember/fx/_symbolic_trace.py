"""Symbolic tracing (as ``torch.fx._symbolic_trace``): :class:`Tracer`, :func:`symbolic_trace`,
:func:`wrap`.

The tracer runs a module's ``forward`` (or a function) on :class:`~ember.fx.Proxy` inputs.
For the length of ``Tracer.trace`` it patches, and afterwards restores:

- the public op callables of ember's namespaces (``ember.*``, ``ember.nn.functional``,
  ``ember.special``, ``ember.linalg``, ``ember.fft``: every registered op and the rest of
  their ``__all__``), and the same functions bound to other names in the traced code's
  globals (``from ember import relu``), with wrappers that record a ``call_function`` node
  when any argument is a Proxy (NOTE [ Tracing without __torch_function__ ] in proxy.py);
- ``ember.Tensor``'s operators and methods, for a real tensor meeting a Proxy operand;
- ``ember.nn.Module.__call__`` (a submodule call becomes a ``call_module`` node when
  :meth:`Tracer.is_leaf_module` says so, else its forward is traced through) and
  ``Module.__getattr__`` (parameters and buffers become ``get_attr`` nodes);
- the functions given to :func:`wrap`, and those of ``autowrap_modules`` (``math``).
"""

from __future__ import annotations

import builtins
import collections
import functools
import inspect
import math
import operator
import sys
import types
from collections.abc import Callable
from typing import Any

from ember.fx._names import public_op_namespaces
from ember.fx.graph import Graph
from ember.fx.node import Argument
from ember.fx.proxy import ParameterProxy, Scope, ScopeContextManager, TracerBase, _find_proxy

__all__ = ["Tracer", "symbolic_trace", "wrap", "PH", "PHBase", "is_fx_tracing",
           "is_fx_symbolic_tracing"]

# (id(globals dict), name) -> globals dict, filled by wrap() at module scope
_wrapped_fns_to_patch: dict = {}


class PHBase:
    """A placeholder marker for ``concrete_args``: the argument stays an input."""

    def __repr__(self) -> str:
        return "PH"


PH = PHBase()


def is_fx_tracing() -> bool:
    """Whether an ember.fx trace is running (code can take a traceable path then)."""
    return _active_traces[0] > 0


def is_fx_symbolic_tracing() -> bool:
    """Whether symbolic tracing (``Tracer.trace``) is running."""
    return _active_traces[0] > 0


def _assert_is_none(value, msg: str) -> None:
    """The check a ``concrete_args`` value of None leaves in the graph."""
    if value is not None:
        raise AssertionError(msg)


def _assert(condition, message: str) -> None:
    """The check a specialised ``concrete_args`` value leaves in the graph (as
    ``torch._assert``)."""
    if not bool(condition):
        raise AssertionError(message)


# ---------------------------------------------------------------------------------------
# wrappers that record a node when given a Proxy


_op_wrappers: dict = {}


def _op_wrapper(fn: Callable) -> Callable:
    """The tracing wrapper of ember op ``fn`` (cached; one per function)."""
    w = _op_wrappers.get(id(fn))
    if w is not None and w._fx_original is fn:
        return w

    def traced(*args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is not None:
            return proxy.tracer.create_proxy("call_function", fn, args, kwargs)
        return fn(*args, **kwargs)

    _copy_names(traced, fn)
    traced._fx_original = fn
    _op_wrappers[id(fn)] = traced
    return traced


def _wrapped_function(fn: Callable) -> Callable:
    """The tracing wrapper of a function given to ``wrap`` or found in ``autowrap_modules``:
    its node is marked ``is_wrapped`` so the generated code wraps it again when retraced."""

    def traced(*args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is not None:
            p = proxy.tracer.create_proxy("call_function", fn, args, kwargs)
            p.node.meta["is_wrapped"] = True
            return p
        return fn(*args, **kwargs)

    _copy_names(traced, fn)
    traced._fx_original = fn
    return traced


def _copy_names(wrapper, fn) -> None:
    for attr in ("__name__", "__qualname__", "__doc__", "__module__"):
        try:
            setattr(wrapper, attr, getattr(fn, attr))
        except (AttributeError, TypeError):
            pass
    wrapper.__wrapped__ = fn


_OPERATOR_DUNDERS = {
    "__add__": operator.add, "__sub__": operator.sub, "__mul__": operator.mul,
    "__truediv__": operator.truediv, "__floordiv__": operator.floordiv,
    "__mod__": operator.mod, "__pow__": operator.pow, "__matmul__": operator.matmul,
    "__and__": operator.and_, "__or__": operator.or_, "__xor__": operator.xor,
    "__lshift__": operator.lshift, "__rshift__": operator.rshift, "__eq__": operator.eq,
    "__ne__": operator.ne, "__lt__": operator.lt, "__le__": operator.le,
    "__gt__": operator.gt, "__ge__": operator.ge, "__getitem__": operator.getitem,
}


def _tensor_operator_wrapper(orig, target):
    def op(self, *args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is not None:
            return proxy.tracer.create_proxy("call_function", target, (self,) + args, kwargs)
        return orig(self, *args, **kwargs)

    op._fx_original = orig
    return op


def _tensor_method_wrapper(orig, name: str):
    def method(self, *args, **kwargs):
        proxy = _find_proxy(args, kwargs)
        if proxy is not None:
            return proxy.tracer.create_proxy("call_method", name, (self,) + args, kwargs)
        return orig(self, *args, **kwargs)

    method._fx_original = orig
    return method


class _Patcher:
    """Patches attributes and dict entries, and restores them all (in reverse) on exit."""

    def __init__(self) -> None:
        self._undo: list = []
        self._seen: set = set()

    def patch(self, namespace: dict, name: str, new) -> None:
        key = (id(namespace), name)
        if key in self._seen:
            return
        self._seen.add(key)
        if name in namespace:
            self._undo.append((namespace.__setitem__, (name, namespace[name])))
        else:
            self._undo.append((namespace.pop, (name, None)))
        namespace[name] = new

    def patch_attr(self, obj, name: str, new, own=None) -> None:
        key = (id(obj), name)
        if key in self._seen:
            return
        self._seen.add(key)
        own = obj.__dict__ if own is None else own
        if name in own:
            self._undo.append((setattr, (obj, name, own[name])))
        else:
            self._undo.append((delattr, (obj, name)))
        setattr(obj, name, new)

    def patch_cell(self, cell, new) -> None:
        """Set a closure cell's contents (a function's free variable)."""
        key = (id(cell), None)
        if key in self._seen:
            return
        self._seen.add(key)
        self._undo.append((setattr, (cell, "cell_contents", cell.cell_contents)))
        cell.cell_contents = new

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        while self._undo:
            fn, args = self._undo.pop()
            fn(*args)
        self._seen.clear()


_tables: dict = {"key": None}
_active_traces = [0]


def _internal_modules() -> list:
    """ember's own Python modules (not the compiled core, not ember.fx): where ember's code
    reaches ops through its globals (``from ember._ops.creation import full``)."""
    out = []
    for name, mod in list(sys.modules.items()):
        if mod is None or not (name == "ember" or name.startswith("ember.")):
            continue
        if name.startswith(("ember.fx", "ember._C")):
            continue
        if str(getattr(mod, "__file__", "") or "").endswith(".py"):
            out.append(mod)
    return out


def _tables_key():
    import ember
    from ember._ops._registry import registered_ops

    return (len(registered_ops()), len(vars(ember.Tensor)),
            sum(1 for n in sys.modules if n.startswith("ember.")))


def _op_function_table() -> dict:
    """``id(function) -> function`` of every op the tracer wraps (cached while the
    registry does not change)."""
    _refresh_tables()
    return _tables["ops"]


def _refresh_tables() -> None:
    if _tables["key"] is not None and _active_traces[0]:
        return  # a trace is running: its patches are in the namespaces, not the originals
    key = _tables_key()
    if _tables["key"] == key:
        return
    import ember
    from ember._ops._registry import registered_ops

    table = {}
    for op in registered_ops():
        if op.namespace != "ember.Tensor":
            table[id(op.function)] = op.function
    for _, mod in public_op_namespaces():
        for name in getattr(mod, "__all__", ()):
            fn = getattr(mod, name, None)
            if callable(fn) and not isinstance(fn, type) and not inspect.ismodule(fn):
                table.setdefault(id(fn), fn)
    # the entries bound to those functions: in the public namespaces, and in ember's own
    # modules, so that ember code run on a Proxy (a helper that builds a mask from a traced
    # size) records its ops too
    entries = []
    seen = set()
    for mod in [m for _, m in public_op_namespaces()] + _internal_modules():
        d = vars(mod)
        if id(d) in seen:
            continue
        seen.add(id(d))
        for name, value in list(d.items()):
            if not name.startswith("__") and table.get(id(value)) is value:
                entries.append((d, name, value))
    # the Tensor methods a real tensor might be called through with a Proxy argument
    names = set()
    for op in registered_ops():
        names.update(op.methods)
    for cls in type.mro(ember.Tensor):
        for name, value in vars(cls).items():
            if not name.startswith("_") and callable(value) and not isinstance(value, type):
                names.add(name)
    methods = []
    for name in sorted(names - _NOT_PATCHED):
        if name.startswith("_"):
            continue
        orig = getattr(ember.Tensor, name, None)
        if orig is None or isinstance(orig, property) or not callable(orig):
            continue
        methods.append((name, _tensor_method_wrapper(orig, name)))
    for name, target in _OPERATOR_DUNDERS.items():
        methods.append((name, _tensor_operator_wrapper(getattr(ember.Tensor, name), target)))
    _tables.update(key=key, ops=table, entries=entries, methods=methods)


# methods that never take a tensor argument worth recording (or must stay exact)
_NOT_PATCHED = {"register_hook", "backward", "numpy", "tolist", "item", "data_ptr",
                "storage", "untyped_storage", "dim", "size", "stride", "numel",
                "element_size", "is_contiguous", "is_floating_point", "is_complex",
                "get_device"}


# ---------------------------------------------------------------------------------------


class Tracer(TracerBase):
    """Records a module's ``forward`` (or a function) into a :class:`~ember.fx.Graph`.

    Args:
        autowrap_modules: modules whose functions, called with Proxy arguments, are
            recorded as ``call_function`` nodes instead of being run (default ``(math,)``).
        autowrap_functions: single functions treated the same way.
        param_shapes_constant: parameters' ``shape``/``size()``/``dim()``/``numel()`` are
            concrete during tracing (the graph specialises on them).

    Override :meth:`is_leaf_module` to choose which submodules stay ``call_module`` nodes,
    :meth:`create_proxy` / :meth:`create_node` to add metadata, :meth:`create_arg` for new
    argument types, :meth:`call_module` / :meth:`getattr` for module handling.

    Examples::

        >>> class NoLeaves(ember.fx.Tracer):
        ...     def is_leaf_module(self, m, qualname):
        ...         return False
        >>> graph = NoLeaves().trace(ember.nn.Sequential(ember.nn.Linear(2, 2)))
    """

    def __init__(self, autowrap_modules: tuple = (math,),
                 autowrap_functions: tuple = (), param_shapes_constant: bool = False) -> None:
        super().__init__()
        self._autowrap_function_ids = {
            id(value) for mod in autowrap_modules for name, value in vars(mod).items()
            if not name.startswith("_") and callable(value)}
        self._autowrap_function_ids.update(id(f) for f in autowrap_functions)
        self._autowrap_search = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths: dict | None = None
        self.root_module_name = ""
        self.scope = Scope("", None)
        self.module_stack: collections.OrderedDict = collections.OrderedDict()
        self.num_calls: dict = {}
        self.node_name_to_scope: dict = {}
        self.tensor_attrs: dict = {}

    # -- arguments ---------------------------------------------------------------------
    def create_arg(self, a: Any) -> Argument:
        """As :meth:`TracerBase.create_arg`, plus: parameters, buffers and modules of the
        root become ``get_attr`` nodes, other tensors become constants stored on the root
        (``_tensor_constant0``) and fetched with ``get_attr``."""
        import ember
        from ember.nn import Module, Parameter

        if isinstance(a, Parameter):
            for n, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, Module):
            for n, m in self.root.named_modules():
                if a is m:
                    return self.create_node("get_attr", n, (), {})
            raise NameError("module is not installed as a submodule")
        if isinstance(a, ember.Tensor):
            hit = self.tensor_attrs.get(id(a))
            if hit is not None and hit[1] is a:
                return self.create_node("get_attr", hit[0], (), {})
            for n, b in self.root.named_buffers():
                if a is b:
                    return self.create_node("get_attr", n, (), {})
            i = 0
            while hasattr(self.root, f"_tensor_constant{i}"):
                i += 1
            qualname = f"_tensor_constant{i}"
            setattr(self.root, qualname, a)
            self.tensor_attrs[id(a)] = (qualname, a)
            return self.create_node("get_attr", qualname, (), {})
        return super().create_arg(a)

    # -- modules -----------------------------------------------------------------------
    def is_leaf_module(self, m, module_qualified_name: str) -> bool:
        """Whether submodule ``m`` is recorded as one ``call_module`` node (True for
        ember.nn's own modules, except ``Sequential``) or traced through."""
        from ember.nn import Sequential

        return ((m.__module__.startswith("ember.nn") or m.__module__.startswith("ember.ao.nn"))
                and not isinstance(m, Sequential))

    def path_of_module(self, mod) -> str:
        """The dotted path of submodule ``mod`` in the root (``"layer1.0.conv1"``)."""
        if self.submodule_paths:
            path = self.submodule_paths.get(id(mod))
            if path is None:
                raise NameError("module is not installed as a submodule")
            return path
        for n, p in self.root.named_modules():
            if mod is p:
                return n
        raise NameError("module is not installed as a submodule")

    def call_module(self, m, forward: Callable, args: tuple, kwargs: dict):
        """Called for ``m(*args, **kwargs)`` during tracing: a leaf module gives a
        ``call_module`` node, any other has its ``forward`` traced through."""
        module_qualified_name = self.path_of_module(m)
        calls = self.num_calls.get(module_qualified_name, 0)
        self.num_calls[module_qualified_name] = calls + 1
        key = module_qualified_name if calls == 0 else f"{module_qualified_name}@{calls}"
        self.module_stack[key] = (module_qualified_name, type(m))
        try:
            with ScopeContextManager(self.scope, Scope(module_qualified_name, type(m))):
                if not self.is_leaf_module(m, module_qualified_name):
                    return forward(*args, **kwargs)
                return self.create_proxy("call_module", module_qualified_name, args, kwargs)
        finally:
            self.module_stack.pop(key, None)

    def getattr(self, attr: str, attr_val, parameter_proxy_cache: dict):
        """Called for ``module.attr`` during tracing: parameters (and buffers, with
        ``proxy_buffer_attributes``) of the root give ``get_attr`` Proxies."""
        import ember
        from ember.nn import Parameter

        def lookup(collection):
            for n, p in collection:
                if attr_val is p:
                    if n not in parameter_proxy_cache:
                        if self.param_shapes_constant and isinstance(p, Parameter):
                            node = self.create_node("get_attr", n, (), {})
                            parameter_proxy_cache[n] = ParameterProxy(self, node, n, attr_val)
                        else:
                            parameter_proxy_cache[n] = self.create_proxy("get_attr", n, (), {})
                    return parameter_proxy_cache[n]
            return None

        if isinstance(attr_val, Parameter):
            hit = lookup(self.root.named_parameters())
            if hit is not None:
                return hit
        if self.proxy_buffer_attributes and isinstance(attr_val, ember.Tensor):
            hit = lookup(self.root.named_buffers())
            if hit is not None:
                return hit
        return attr_val

    # -- the root's inputs -------------------------------------------------------------
    def create_args_for_root(self, root_fn: Callable, is_module: bool,
                             concrete_args: dict | None = None):
        """Placeholders for ``root_fn``'s parameters; ``concrete_args`` fixes some of them
        (the graph then checks at run time that the same value is passed). Returns the
        function to call and its arguments (``self`` first for a module)."""
        fn = inspect.unwrap(root_fn)
        sig = inspect.signature(fn)
        params = list(sig.parameters.values())
        skip_self = 1 if is_module else 0
        names = [p.name for p in params[skip_self:]]
        concrete_args = dict(concrete_args or {})
        for k in concrete_args:
            if k not in names:
                raise TypeError(f"concrete_args names {k!r}, which is not an argument of "
                                f"{getattr(fn, '__qualname__', fn)} (its arguments: {names})")
        values: dict = {}
        counter = [0]
        for p in params[skip_self:]:
            if p.kind == p.VAR_POSITIONAL:
                # the tuple of extra inputs is one placeholder (``*args``), as in torch.fx
                values[p.name] = self.create_proxy("placeholder", f"*{p.name}", (), {})
            elif p.kind == p.VAR_KEYWORD:
                values[p.name] = self.create_proxy("placeholder", f"**{p.name}", (), {})
            elif p.name in concrete_args and not isinstance(concrete_args[p.name], PHBase):
                values[p.name] = self._concrete_placeholder(p.name, concrete_args[p.name],
                                                            counter)
            else:
                default = () if p.default is inspect.Parameter.empty else (p.default,)
                values[p.name] = self.create_proxy(
                    "placeholder", p.name, default, {},
                    type_expr=fn.__annotations__.get(p.name, None))
        head = [self.root] if is_module else []
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
            return self._flatten_star_params(root_fn, fn, head, values)
        args = head + [values[p.name] for p in params[skip_self:] if p.kind != p.KEYWORD_ONLY]
        kwargs = {p.name: values[p.name] for p in params if p.kind == p.KEYWORD_ONLY}
        if kwargs:
            def fn_with_kwargs(*a):
                return root_fn(*a, **kwargs)

            return fn_with_kwargs, args
        return root_fn, args

    @staticmethod
    def _flatten_star_params(root_fn, fn, head: list, values: dict):
        # ``def f(x, *args, **kw)`` is called with the Proxies of ``args`` and ``kw``
        # themselves (so ``args[0]`` records a getitem): a copy of the function whose
        # parameters are all positional, in the order of its code's variable names
        if not isinstance(fn, types.FunctionType) or fn is not root_fn:
            raise NotImplementedError(f"tracing {getattr(fn, '__qualname__', fn)}: *args and "
                                      "**kwargs are supported on plain (undecorated) functions")
        co = fn.__code__
        nparams = co.co_argcount + co.co_kwonlyargcount + \
            bool(co.co_flags & inspect.CO_VARARGS) + bool(co.co_flags & inspect.CO_VARKEYWORDS)
        flat = types.FunctionType(
            co.replace(co_argcount=nparams, co_posonlyargcount=0, co_kwonlyargcount=0,
                       co_flags=co.co_flags & ~(inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)),
            fn.__globals__, fn.__name__, None, fn.__closure__)
        names = co.co_varnames[len(head):nparams]
        return flat, head + [values[n] for n in names]

    def _concrete_placeholder(self, name: str, value, counter: list):
        counter[0] += 1
        ph = self.create_proxy("placeholder", f"{name}_{counter[0]}", (), {})
        if value is None:
            self.create_proxy("call_function", _assert_is_none,
                              (ph, f"{name} has been specialized to have value None but got "
                                   "another value"), {})
        elif isinstance(value, (bool, int, float, str)):
            eq = self.create_proxy("call_function", operator.eq, (ph, value), {})
            self.create_proxy("call_function", _assert,
                              (eq, f"{name} has been specialized to have value {value} but "
                                   "got another value"), {})
        return value

    # -- the trace ---------------------------------------------------------------------
    def trace(self, root, concrete_args: dict | None = None) -> Graph:
        """Trace ``root`` (an ``ember.nn.Module`` or a function) into a new Graph.

        Args:
            root: what to trace; a module's ``forward`` is traced with ``self`` bound.
            concrete_args: argument values to specialise on (``{"flag": True}``); the
                value :data:`PH` keeps an argument an input.

        Returns:
            the Graph (also ``self.graph``; ``self.root`` is the module traced).
        """
        import ember
        from ember.nn import Module

        if isinstance(root, Module):
            self.root = root
            fn = getattr(type(root), self.traced_func_name)
            self.root_module_name = root._get_name() if hasattr(root, "_get_name") \
                else type(root).__name__
            self.submodule_paths = {id(mod): name for name, mod in root.named_modules()}
        else:
            self.root = Module()
            fn = root
        tracer_cls = getattr(self, "__class__", None)
        self.graph = Graph(tracer_cls=tracer_cls)
        self.tensor_attrs = {}

        def collect_tensor_attrs(m, prefix):
            for k, v in vars(m).items():
                if isinstance(v, ember.Tensor) and not k.startswith("__"):
                    self.tensor_attrs[id(v)] = (".".join(prefix + [k]), v)
            for k, child in m.named_children():
                collect_tensor_attrs(child, prefix + [k])

        collect_tensor_attrs(self.root, [])
        root_fn, root_args = self.create_args_for_root(fn, isinstance(root, Module),
                                                       concrete_args)
        parameter_proxy_cache: dict = {}
        orig_getattr = Module.__getattr__
        orig_call = Module._call_impl  # not __call__: a compiled submodule is traced through
        tracer = self

        def module_getattr_wrapper(mod, attr):
            return tracer.getattr(attr, orig_getattr(mod, attr), parameter_proxy_cache)

        ops = _op_function_table()
        _active_traces[0] += 1
        try:
            with _Patcher() as patcher:

                def module_call_wrapper(mod, *args, **kwargs):
                    def forward(*args, **kwargs):
                        return orig_call(mod, *args, **kwargs)

                    self._patch_function(patcher, getattr(mod, "forward", mod), ops)
                    self._patch_module_attrs(patcher, mod, ops)
                    return tracer.call_module(mod, forward, args, kwargs)

                patcher.patch_attr(Module, "__getattr__", module_getattr_wrapper)
                patcher.patch_attr(Module, "__call__", module_call_wrapper)
                self._patch_namespaces(patcher, ops)
                self._patch_function(patcher, fn, ops)
                if isinstance(root, Module):
                    self._patch_module_attrs(patcher, root, ops)
                for mod in self._autowrap_search:
                    self._patch_autowrap(patcher, vars(mod))
                out = root_fn(*root_args)
                self.create_node("output", "output", (self.create_arg(out),), {},
                                 type_expr=getattr(fn, "__annotations__", {}).get("return"))
        finally:
            _active_traces[0] -= 1
        self.submodule_paths = None
        return self.graph

    def _patch_namespaces(self, patcher: _Patcher, ops: dict) -> None:
        import ember

        _refresh_tables()
        for d, name, orig in _tables["entries"]:
            if d.get(name) is orig:  # (skip a binding replaced since the table was made)
                patcher.patch(d, name, _op_wrapper(orig))
        own = dict(ember.Tensor.__dict__)
        for name, wrapper in _tables["methods"]:
            if getattr(ember.Tensor, name, None) is wrapper._fx_original:
                patcher.patch_attr(ember.Tensor, name, wrapper, own)
            else:  # the method was replaced since the table was made
                current = getattr(ember.Tensor, name, None)
                if current is not None:
                    make = _tensor_operator_wrapper if name in _OPERATOR_DUNDERS else None
                    new = make(current, _OPERATOR_DUNDERS[name]) if make else \
                        _tensor_method_wrapper(current, name)
                    patcher.patch_attr(ember.Tensor, name, new, own)
        for (_, name), glb in list(_wrapped_fns_to_patch.items()):
            orig = glb.get(name, getattr(builtins, name, None))
            if orig is not None:
                orig = getattr(orig, "_fx_original", orig)
                patcher.patch(glb, name, _wrapped_function(orig))

    def _tracing_value(self, value, ops: dict):
        """What a reference to ``value`` is patched to while tracing: the tracing wrapper
        of an ember op or an autowrapped function, a ``functools.partial`` of one with the
        wrapper inside; None for anything else."""
        if id(value) in ops and ops[id(value)] is value:
            return _op_wrapper(value)
        if id(value) in self._autowrap_function_ids:
            return _wrapped_function(value)
        if type(value) is functools.partial:
            inner = self._tracing_value(value.func, ops)
            if inner is not None:
                return functools.partial(inner, *value.args, **value.keywords)
        return None

    def _patch_globals(self, patcher: _Patcher, glb: dict, ops: dict) -> None:
        """Patch the names of one module's globals that are bound to ember ops
        (``from ember import relu``), autowrapped functions (``from math import sqrt``) or
        partials of them."""
        for name, value in list(glb.items()):
            if name.startswith("__"):
                continue
            new = self._tracing_value(value, ops)
            if new is not None:
                patcher.patch(glb, name, new)

    def _patch_function(self, patcher: _Patcher, fn, ops: dict) -> None:
        """Patch what a traced function reaches ops through: its module's globals and its
        closure's cells (``act = ember.tanh; def f(x): return act(x)``)."""
        fn = inspect.unwrap(fn)
        if isinstance(fn, types.MethodType):
            fn = fn.__func__
        glb = getattr(fn, "__globals__", None)
        if glb is not None:
            self._patch_globals(patcher, glb, ops)
        for cell in getattr(fn, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            new = self._tracing_value(value, ops)
            if new is not None:
                patcher.patch_cell(cell, new)

    def _patch_module_attrs(self, patcher: _Patcher, mod, ops: dict) -> None:
        """Patch a module's plain attributes that hold ops or partials of them
        (``self.act = ember.tanh``)."""
        for name, value in list(vars(mod).items()):
            new = self._tracing_value(value, ops)
            if new is not None:
                patcher.patch_attr(mod, name, new)

    def _patch_autowrap(self, patcher: _Patcher, d: dict) -> None:
        for name, value in list(d.items()):
            if not name.startswith("_") and id(value) in self._autowrap_function_ids:
                patcher.patch(d, name, _wrapped_function(value))

    def __deepcopy__(self, memo):
        import copy

        new = type(self).__new__(type(self))
        for k, v in self.__dict__.items():
            new.__dict__[k] = v if k in ("root", "graph") else copy.deepcopy(v, memo)
        return new


def symbolic_trace(root, concrete_args: dict | None = None):
    """Trace ``root`` (an ``ember.nn.Module`` or a function) into a
    :class:`~ember.fx.GraphModule` whose ``forward`` runs the recorded ops.

    Args:
        root: the module or function to trace.
        concrete_args: values for some of the inputs to specialise on (control flow on
            them is then resolved at trace time); the traced module checks that calls pass
            the same values.

    Returns:
        GraphModule: the traced module; ``.graph`` is its graph and ``.code`` its source.

    Examples::

        >>> class M(ember.nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.linear = ember.nn.Linear(4, 4)
        ...     def forward(self, x):
        ...         return ember.relu(self.linear(x)) + 1
        >>> gm = ember.fx.symbolic_trace(M())
        >>> print(gm.code)  # doctest: +SKIP
        def forward(self, x):
            linear = self.linear(x);  x = None
            relu = ember.relu(linear);  linear = None
            add = relu + 1;  relu = None
            return add
    """
    from ember.fx.graph_module import GraphModule

    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = root.__class__.__name__ if hasattr(root, "named_modules") else root.__name__
    return GraphModule(tracer.root, graph, name)


def wrap(fn_or_name):
    """Make a module-level function a leaf of tracing: called with Proxy arguments in the
    module that calls ``wrap``, it is recorded as one ``call_function`` node instead of
    being traced through. Must be called at the top level of a module.

    Args:
        fn_or_name: the function, or the name of a global (or builtin, such as
            ``"len"``) of the calling module.

    Returns:
        ``fn_or_name`` (usable as a decorator).

    Examples::

        >>> def my_op(x, y):
        ...     return ember.sqrt(x * x + y * y)
        >>> ember.fx.wrap("my_op")  # doctest: +SKIP
    """
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError("Unsupported type for global function! Must be either a callable "
                           "or string name")
    if callable(fn_or_name):
        if isinstance(fn_or_name, str):
            raise AssertionError("unreachable")
        name = fn_or_name.__name__
    else:
        name = fn_or_name
    frame = sys._getframe(1)
    if frame.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    glb = frame.f_globals
    _wrapped_fns_to_patch[(id(glb), name)] = glb
    return fn_or_name


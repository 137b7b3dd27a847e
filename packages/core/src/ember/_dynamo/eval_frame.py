"""What ``ember.compile`` returns: :class:`CompiledFunction` and :class:`OptimizedModule`.

NOTE [ Capture, guards and recompiles ]
A call first computes its *guard key*: grad mode, the training flags of the module's
submodules, and per argument its kind: for a tensor its dtype, device, requires_grad and
shape (with ``dynamic=True`` only its rank and which sizes are 1), for a Python value the
value itself (a bool, int, float, str or None is specialised on, as dynamo does: it may
decide control flow), for another object its identity. A key seen before runs that key's
compiled graph. A new key is a (re)compilation: the forward is traced by ember.fx with the
non-tensor arguments as ``concrete_args``, run once by ShapeProp on the real arguments
(that run is the call's result, so a model's side effects such as batch-norm statistics
happen once), and handed to the backend, which for ``"inductor"`` fuses the elementwise
ops into C kernels (ember._inductor). With ``dynamic=None`` the first graph is specialised
on shapes; a key that differs from a compiled one only in sizes compiles a dynamic graph
that then serves every size of those ranks. After ``recompile_limit`` keys (8, as
PyTorch's), new keys run eagerly and a warning says so. Where tracing fails (control flow
on a tensor's value, a Python int taken from a tensor, an op fx cannot record) the call
runs eagerly and the reason is kept (``.reasons``, ``ember._dynamo.explain``, and printed
with ``EMBER_COMPILE_DEBUG=1``); ``fullgraph=True`` raises it instead.
"""

from __future__ import annotations

import functools
import inspect
import sys
import time
import types
import warnings
import weakref

import numpy as np

from ember._C import _core
from ember._C._core import TensorBase
from ember._dynamo import config
from ember._dynamo.exc import Unsupported

__all__ = ["CompiledFunction", "CompiledEntry"]  # and OptimizedModule (made on first use)

_all_compiled: weakref.WeakSet = weakref.WeakSet()


def _debug(msg: str) -> None:
    if config.debug:
        print(f"[ember.compile] {msg}", file=sys.stderr)


def _value_key(v, dynamic):
    if isinstance(v, TensorBase):
        d = v._data
        shape = d.shape
        if dynamic:
            shape = (len(shape),) + tuple(s == 1 for s in shape)
        dev = type(d) if type(d) is np.ndarray else str(v.device)
        return (d.dtype, dev, v.requires_grad, shape)
    if v is None or isinstance(v, (bool, int, float, str)):
        return (type(v), v)
    if isinstance(v, (tuple, list)):
        return (type(v), tuple(_value_key(x, dynamic) for x in v))
    return ("id", id(v))


def _traced(v) -> bool:
    """Whether an argument is a graph input (a placeholder) rather than specialised on."""
    if isinstance(v, TensorBase):
        return True
    if isinstance(v, (tuple, list)):
        return any(_traced(x) for x in v)
    return False


class CompiledEntry:
    """One guard set's compiled graph.

    Attributes:
        graph_module: the traced GraphModule (ember.fx), before any backend pass.
        compiled: what runs: the backend's callable (for ``"inductor"`` a GraphModule whose
            graph calls the fused kernels), or None where the call runs eagerly.
        kernels: the FusedKernel objects of the graph (their ``source`` and ``path``).
        dynamic: whether the graph serves every shape of its ranks.
        guards: the guard key, described.
        reason: why the entry runs eagerly, or None.
    """

    def __init__(self, key, dynamic):
        self.key, self.dynamic = key, dynamic
        self.graph_module = None
        self.compiled = None
        self.kernels: list = []
        self.dynamic_key = None
        self.run = None  # what a call runs: compiled, or its forward
        self.reason = None
        self.guards = ""
        self.compile_time = 0.0

    @property
    def code(self) -> str:
        """The generated Python code of the compiled graph."""
        return getattr(self.compiled, "code", "") or ""


class CompiledFunction:
    """A compiled callable (a function, or a module's forward): see ``ember.compile``.

    Attributes:
        entries: the compiled guard sets, in the order they were compiled.
        reasons: why calls ran eagerly (graph breaks, the recompile limit).
        compile_count: how many graphs were compiled (the first one and the recompiles).
        recompiles: ``compile_count - 1`` when positive.
    """

    def __init__(self, fn, *, module=None, fullgraph=False, dynamic=None, backend="inductor",
                 options=None, recompile_limit=None, name=None, eager=None,
                 hooks_outside=False):
        self._fn = fn
        self._module = module
        self._hooks_outside = hooks_outside  # the module's own hooks run around the call
        # what runs eagerly: for a module its __call__ (its hooks run, as without compile),
        # or ``eager`` (Module.compile: the module's forward, its __call__ runs the hooks)
        self._eager = eager if eager is not None else module if module is not None else fn
        self.fullgraph, self.dynamic, self.backend = fullgraph, dynamic, backend
        self.options = dict(options or {})
        self.recompile_limit = recompile_limit
        self._static: dict = {}
        self._dynamic: dict = {}
        self.entries: list = []
        self.reasons: list = []
        self._limit_warned = False
        self._signature = inspect.signature(fn)
        params = list(self._signature.parameters.values())
        self._simple = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                           and p.default is p.empty for p in params)
        self._varargs = any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)
        self._nparams = len(params)
        self._submodules = tuple(module.modules()) if module is not None else ()
        self._module_units = None  # the submodules compiled on their own (see _units)
        functools.update_wrapper(self, fn)
        if name is not None:
            self.__name__ = name
        _all_compiled.add(self)

    # --- bookkeeping -------------------------------------------------------------------
    @property
    def compile_count(self) -> int:
        return sum(1 for e in self.entries if e.compiled is not None)

    @property
    def recompiles(self) -> int:
        return max(self.compile_count - 1, 0)

    def reset(self) -> None:
        """Forget every compiled graph."""
        self._static.clear()
        self._dynamic.clear()
        self.entries.clear()
        self.reasons.clear()
        self._limit_warned = False

    def __get__(self, obj, objtype=None):
        # used as a method decorator: bind like a function
        return self if obj is None else types.MethodType(self, obj)

    def __repr__(self) -> str:
        return f"<compiled {getattr(self, '__qualname__', self._fn)!r}>"

    # --- calling -----------------------------------------------------------------------
    def _bind(self, args, kwargs):
        if not kwargs and self._simple and len(args) == self._nparams:
            return args, None
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return tuple(bound.arguments.values()), tuple(bound.arguments)

    def _key(self, values, dynamic):
        if not self._submodules:
            return (_core.is_grad_enabled(), tuple([_value_key(v, dynamic) for v in values]))
        return (_core.is_grad_enabled(), tuple([m.training for m in self._submodules]),
                tuple([_value_key(v, dynamic) for v in values]))

    def __call__(self, *args, **kwargs):
        values, names = self._bind(args, kwargs)
        key = self._key(values, False)
        entry = self._static.get(key)
        if entry is None and self.dynamic is not False:
            dkey = self._key(values, True)
            entry = self._dynamic.get(dkey)
        if entry is None:
            return self._compile_and_run(values, names, key, args, kwargs)
        if entry.run is None:
            return self._run_eager(entry, args, kwargs)
        return entry.run(*values)

    # NOTE [ Graph breaks at submodules ]
    # ember captures a whole forward with fx or nothing (there is no bytecode rewriting to
    # split a function at the line that cannot be traced). Where a module's forward cannot
    # be captured, its call runs eagerly, but each submodule the tracer would trace through
    # (not ember.nn's own layers; inside ModuleList / ModuleDict too) is compiled on its
    # own, recursively: ``if x.sum() > 0: x = self.block(x)`` at the top still runs
    # ``block`` compiled. The submodules' compiled calls are installed (as
    # Module.compile does) only for the length of this eager call, so the modules called
    # outside it stay as they are.
    def _units(self):
        if self._module_units is None:
            from ember.fx import Tracer
            from ember.nn import ModuleDict, ModuleList

            tracer, units = Tracer(), []

            def walk(mod, prefix):
                for name, child in mod.named_children():
                    qualname = prefix + name
                    if isinstance(child, (ModuleList, ModuleDict)):
                        walk(child, qualname + ".")
                    elif not tracer.is_leaf_module(child, qualname) \
                            and "_compiled_call_impl" not in vars(child):
                        units.append((child, CompiledFunction(
                            child.forward, module=child, eager=child.forward,
                            hooks_outside=True, dynamic=self.dynamic, backend=self.backend,
                            options=self.options, recompile_limit=self.recompile_limit,
                            name=f"{type(self._module).__name__}.{qualname}")))

            walk(self._module, "")
            self._module_units = units
            if units:
                _debug(f"{getattr(self, '__qualname__', '?')}: its submodules compile on "
                       f"their own: {', '.join(cf.__name__ for _, cf in units)}")
        return self._module_units

    def _run_eager(self, entry, args, kwargs):
        """The eager call of a forward that was not captured (NOTE [ Graph breaks at
        submodules ])."""
        if self._module is None or entry is None or entry.reason is None:
            return self._eager(*args, **kwargs)
        installed = []
        for mod, cf in self._units():
            d = mod.__dict__
            if "_compiled_call_impl" not in d:
                d["_compiled_call_impl"] = cf
                installed.append(d)
        try:
            return self._eager(*args, **kwargs)
        finally:
            for d in installed:
                d.pop("_compiled_call_impl", None)

    def _compile_and_run(self, values, names, key, args, kwargs):
        dynamic = self.dynamic is True
        if self.dynamic is None:
            dkey = self._key(values, True)
            # a key that differs from a compiled one only in sizes: compile for any size
            dynamic = any(e.compiled is not None and e.dynamic_key == dkey
                          for e in self.entries)
        limit = self.recompile_limit if self.recompile_limit is not None \
            else config.recompile_limit
        if len(self.entries) >= limit:
            if not self._limit_warned:
                self._limit_warned = True
                msg = (f"ember.compile hit recompile_limit ({limit}) for "
                       f"{getattr(self, '__qualname__', '?')}: new inputs run eagerly")
                self.reasons.append(msg)
                warnings.warn(msg, UserWarning, stacklevel=3)
            return self._eager(*args, **kwargs)
        from ember._dynamo.value_tracer import ProgramError

        start = time.perf_counter()
        traced = error = None
        try:
            traced = self._trace(values, names, dynamic)
        except Exception as exc:  # noqa: BLE001 - any failure to trace is a graph break
            error = exc
        if isinstance(error, ProgramError):
            raise error.__cause__ from None  # the program's own error, as eager raises it
        if error is not None and dynamic and self.dynamic is None:
            # a size-generic trace failed (B, T = x.size() used as Python ints): specialise
            # on this shape instead, as for the first call
            dynamic = False
            try:
                traced, error = self._trace(values, names, dynamic), None
            except ProgramError as exc:
                raise exc.__cause__ from None
            except Exception as exc:  # noqa: BLE001
                error = exc
        entry = CompiledEntry(key, dynamic)
        entry.dynamic_key = self._key(values, True)
        entry.guards = _describe_guards(self, values, names, dynamic)
        (self._dynamic if dynamic else self._static)[entry.dynamic_key if dynamic else key] \
            = entry
        self.entries.append(entry)
        try:
            if error is not None:
                raise error
            gm, example_result = traced
        except Exception as exc:  # noqa: BLE001 - any failure to trace is a graph break
            reason = f"{type(exc).__name__}: {exc}"
            entry.reason = reason
            self.reasons.append(reason)
            _debug(f"{getattr(self, '__qualname__', '?')} runs eagerly: {reason}")
            if self.fullgraph:
                self.reset()
                raise Unsupported(f"ember.compile(fullgraph=True) cannot capture "
                                  f"{getattr(self, '__qualname__', 'the function')}: "
                                  f"{reason}") from exc
            return self._run_eager(entry, args, kwargs)
        entry.graph_module = gm
        inputs = list(values)
        from ember._dynamo import backends

        try:
            result, compiled, kernels = backends.run_backend(
                self.backend, gm, inputs, dynamic=dynamic, options=self.options,
                reasons=self.reasons, result=example_result)
        except BaseException:
            # the call failed (the program's own error): nothing is compiled for its key
            self.entries.remove(entry)
            (self._dynamic if dynamic else self._static).pop(
                entry.dynamic_key if dynamic else key, None)
            raise
        entry.compiled, entry.kernels = compiled, kernels
        # a GraphModule has no hooks of its own: call its forward, not Module.__call__
        from ember.fx import GraphModule

        entry.run = compiled.forward if isinstance(compiled, GraphModule) else compiled
        entry.compile_time = time.perf_counter() - start
        _debug(f"compiled {getattr(self, '__qualname__', '?')} "
               f"({'dynamic' if dynamic else 'static'} shapes, {len(kernels)} fused kernels, "
               f"{entry.compile_time * 1e3:.1f} ms); guards: {entry.guards}")
        for k in kernels:
            _debug(f"  {k.name}: {' '.join(k.ops)} -> {k.path}")
        return result

    def _trace(self, values, names, dynamic):
        """(the GraphModule of the call, the call's result where tracing ran it, else
        None): a static graph is traced with the values (NOTE [ Tracing with values ])."""
        from ember.fx import GraphModule, Tracer

        if self._varargs:
            raise Unsupported("functions with *args or **kwargs are not captured")
        if names is None:
            names = tuple(self._signature.parameters)
        concrete = {n: v for n, v in zip(names, values) if not _traced(v)}
        from ember._dynamo.value_tracer import ValueTracer

        tracer = Tracer() if dynamic else ValueTracer(values)
        if self._module is not None:
            # the tracer calls forward itself, so hooks of traced-through modules would not run
            for qualname, m in self._module.named_modules():
                hooked = any(getattr(m, h, None) for h in
                             ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks"))
                if m is self._module and self._hooks_outside:
                    continue
                if hooked and (m is self._module or not tracer.is_leaf_module(m, qualname)):
                    raise Unsupported(f"hooks on {qualname or 'the module'} "
                                      f"({type(m).__name__}) are not captured")
        root = self._module if self._module is not None else self._fn
        graph = tracer.trace(root, concrete_args=concrete or None)
        _drop_specialisation_asserts(graph)
        gm = GraphModule(tracer.root, graph, getattr(self, "__name__", "compiled"))
        placeholders = [n for n in graph.nodes if n.op == "placeholder"]
        if len(placeholders) != len(names):
            raise Unsupported(f"the graph has {len(placeholders)} inputs for {len(names)} "
                              "arguments (*args and **kwargs are not captured)")
        if dynamic:
            return gm, None
        return gm, tracer.output_value(graph)


def _drop_specialisation_asserts(graph) -> None:
    """Remove the checks fx adds for ``concrete_args`` (the guard key checks those
    values already, and they would run at every call)."""
    from ember.fx import _symbolic_trace as st

    checks = (st._assert, st._assert_is_none)
    for node in reversed(list(graph.nodes)):
        if node.op == "call_function" and node.target in checks:
            inputs = node.all_input_nodes
            graph.erase_node(node)
            for i in inputs:
                if i.op == "call_function" and not i.users:
                    graph.erase_node(i)


def _describe_guards(cf, values, names, dynamic) -> str:
    names = names or tuple(cf._signature.parameters)
    parts = [f"grad_mode={_core.is_grad_enabled()}"]
    if cf._submodules:
        parts.append(f"training={cf._module.training}")
    for n, v in zip(names, values):
        if isinstance(v, TensorBase):
            shape = (f"rank {v.dim()}" if dynamic else f"shape {tuple(v.shape)}")
            parts.append(f"{n}: {v.dtype} {v.device} requires_grad={v.requires_grad} {shape}")
        elif _traced(v):
            parts.append(f"{n}: {type(v).__name__} of tensors")
        else:
            parts.append(f"{n} == {v!r}" if v is None or isinstance(v, (bool, int, float, str))
                         else f"{n} is <{type(v).__name__} at {id(v):#x}>")
    return "; ".join(parts)


def _optimized_module_class():
    from ember.nn import Module

    class OptimizedModule(Module):
        """A compiled module (``ember.compile(module)``): calls run the compiled forward
        of ``_orig_mod``, whose parameters and buffers it shares; its ``state_dict`` keys
        are the original's with the ``_orig_mod.`` prefix, as PyTorch's."""

        _ember_compiled: CompiledFunction

        def __init__(self, mod, compiled):
            super().__init__()
            self._orig_mod = mod
            object.__setattr__(self, "_ember_compiled", compiled)

        def forward(self, *args, **kwargs):
            return self._ember_compiled(*args, **kwargs)

        def __getattr__(self, name):
            try:
                return super().__getattr__(name)
            except AttributeError:
                return getattr(self._modules["_orig_mod"], name)

        def __repr__(self) -> str:
            return f"OptimizedModule(\n  (_orig_mod): {self._orig_mod!r}\n)"

    OptimizedModule.__module__ = "ember._dynamo.eval_frame"
    return OptimizedModule


_optimized: list = []


def __getattr__(name):
    if name == "OptimizedModule":
        if not _optimized:
            _optimized.append(_optimized_module_class())
        return _optimized[0]
    raise AttributeError(name)


def reset_all() -> None:
    for cf in list(_all_compiled):
        cf.reset()

"""Modules made from graphs (as ``torch.fx.graph_module``): :class:`GraphModule`.

A GraphModule holds a :class:`~ember.fx.Graph` and the submodules, parameters and buffers
its ``get_attr``/``call_module`` nodes name; its ``forward`` is the graph's generated code
(``gm.code``), compiled when the graph is set or :meth:`GraphModule.recompile` is called.
"""

from __future__ import annotations

import copy
import itertools
import linecache
from pathlib import Path

from ember.fx.graph import Graph
from ember.nn import Module

__all__ = ["GraphModule", "reduce_graph_module"]

_counter = itertools.count()


def _exec_with_source(src: str, globals_: dict) -> None:
    # register the source with linecache so that tracebacks show the generated lines
    key = f"<eval_with_key>.{next(_counter)}"
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    exec(compile(src, key, "exec"), globals_)  # noqa: S102 - the graph's generated code


def _forward_from_src(src: str, globals_: dict):
    g = dict(globals_)
    _exec_with_source(src, g)
    return g["forward"]


def _copy_attr(from_module, to_module, target: str) -> None:
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return  # a parent is already installed
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    _install(to_module, field, orig)


def _install(to_module, field: str, value) -> None:
    import ember
    from ember.nn import Parameter

    if isinstance(value, ember.Tensor) and not isinstance(value, Parameter):
        if field in to_module._buffers or not hasattr(to_module, field):
            to_module.register_buffer(field, value)
            return
    setattr(to_module, field, value)


def _assign_attr(value, to_module, target: str) -> None:
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    _install(to_module, field, value)


def _format_import_block(globals_: dict) -> str:
    """Import statements that bring the generated code's globals into a fresh module."""
    lines = []
    for name, obj in globals_.items():
        if name in ("inf", "nan"):
            lines.append(f"from math import {name}")
        elif name == "NoneType":
            lines.append("NoneType = type(None)")
        elif name == "ember":
            lines.append("import ember")
        elif name == "device":
            lines.append("from ember import device")
        else:
            module = getattr(obj, "__module__", None)
            qual = getattr(obj, "__qualname__", getattr(obj, "__name__", None))
            if module is None or qual is None or "<" in qual:
                raise RuntimeError(f"cannot import {obj!r} (global {name} of the generated "
                                   "code) by name")
            if module == "_operator":
                module = "operator"
            head, *rest = qual.split(".")
            lines.append(f"from {module} import {head} as {name}" if not rest else
                         f"from {module} import {head} as _{name}_owner\n"
                         f"{name} = _{name}_owner.{'.'.join(rest)}")
    return "\n".join(lines) + "\n"


def reduce_graph_module(body: dict, import_block: str):
    """Rebuild a pickled GraphModule from its ``__dict__`` and its code's imports."""
    forward = _forward_from_src(import_block + body["_code"], {})
    return _deserialize_graph_module(forward, body)


def _deserialize_graph_module(forward, body: dict):
    from ember.fx._symbolic_trace import Tracer

    class CodeOnlyModule(Module):
        def __init__(self, body):
            super().__init__()
            self.__dict__ = body

    CodeOnlyModule.forward = forward

    class KeepModules(Tracer):
        def is_leaf_module(self, m, qualname):
            return True

    com = CodeOnlyModule(body)
    graph = KeepModules().trace(com)
    return GraphModule(com, graph, class_name=body.get("_graphmodule_cls_name",
                                                       "GraphModule"))


class GraphModule(Module):
    """An ``ember.nn.Module`` whose ``forward`` is generated from a Graph.

    Args:
        root: the module the graph's ``get_attr``/``call_module`` targets are copied from
            (or a dict from those dotted targets to their values).
        graph: the graph; ``forward`` is compiled from it.
        class_name: the name the module prints with (its repr, ``print_readable``).

    Setting ``gm.graph`` recompiles; after editing the graph in place call
    :meth:`recompile`.

    Examples::

        >>> gm = ember.fx.symbolic_trace(model)  # doctest: +SKIP
        >>> for node in gm.graph.nodes:  # doctest: +SKIP
        ...     if node.target is ember.relu:
        ...         node.target = ember.nn.functional.gelu
        >>> gm.recompile()  # doctest: +SKIP
    """

    def __new__(cls, *args, **kwargs):
        # Each instance gets a class of its own, so that ``forward`` (a class attribute,
        # as in any module) can differ between GraphModules.
        for t in cls.__mro__:
            if t.__qualname__.split(".")[-1] != "GraphModuleImpl":
                cls = t
                break

        class GraphModuleImpl(cls):
            pass

        return super().__new__(GraphModuleImpl)

    def __init__(self, root, graph: Graph, class_name: str = "GraphModule") -> None:
        super().__init__()
        self.__class__.__name__ = class_name
        self.__class__.__qualname__ = class_name
        if isinstance(root, Module):
            self.training = getattr(root, "training", True)
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if not isinstance(node.target, str):
                        raise TypeError(f"{node.op} node {node} has a non-string target")
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            targets = []
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but "
                                           "that target was not provided in ``root``!")
                    targets.append(node.target)
            for t in sorted(set(targets), key=lambda t: t.count(".")):
                _assign_attr(root[t], self, t)
        else:
            raise RuntimeError(f"Unsupported type {root} passed for root!")
        self._tracer_cls = graph._tracer_cls
        self._tracer_extras = graph._tracer_extras
        self.meta: dict = {}
        self._graphmodule_cls_name = class_name
        self.graph = graph

    # -- the graph and its code --------------------------------------------------------
    @property
    def graph(self) -> Graph:
        """The graph; assigning a new one recompiles ``forward``."""
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        if not isinstance(g, Graph):
            raise TypeError(f"Expected a Graph instance, but got {type(g)}")
        self._graph = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The Python source of ``forward``, generated from the graph."""
        if not hasattr(self, "_code"):
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self._code

    def recompile(self):
        """Generate ``forward`` again from ``self.graph`` (after editing the graph in
        place). Returns the :class:`~ember.fx.graph.PythonCode`."""
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        self._globals = python_code.globals
        cls = type(self)
        cls.forward = _forward_from_src(self._code, python_code.globals)
        return python_code

    def print_readable(self, print_output: bool = True, include_stride: bool = False,
                       include_device: bool = False, colored: bool = False, *,
                       fast_sympy_print: bool = False, expanded_def: bool = False,
                       additional_meta: list | None = None) -> str:
        """The module as Python source: a class with its ``forward`` (values annotated
        with dtype and shape where ShapeProp recorded them, and where each node came from),
        nested GraphModules as nested classes. Printed unless ``print_output=False``;
        returns the text.

        Args:
            include_stride, include_device, colored, expanded_def, additional_meta: as in
                :meth:`Graph.python_code`.
            fast_sympy_print: has no effect (ember has no symbolic shapes to print).
        """
        return self._print_readable(print_output, 0, dict(
            include_stride=include_stride, include_device=include_device, colored=colored,
            expanded_def=expanded_def, additional_meta=additional_meta))

    def _print_readable(self, print_output: bool, indent: int, opts: dict) -> str:
        name = self._graphmodule_cls_name
        src = self._graph.python_code(root_module="self", verbose=True, **opts).src
        src = src.strip("\n")
        body = "\n".join("    " + line if line.strip() else "" for line in src.split("\n"))
        nested = []
        for child in self.children():
            if isinstance(child, GraphModule):
                nested.append(child._print_readable(False, 1, opts))
        text = f"class {name}(ember.nn.Module):\n"
        text += "".join(n + "\n" for n in nested)
        text += body.rstrip() + "\n"
        if indent:
            text = "\n".join(("    " * indent + ln) if ln.strip() else ln
                             for ln in text.split("\n"))
        if print_output:
            print(text)
        return text

    def __str__(self) -> str:
        return "\n".join([super().__repr__(), self._code,
                          "# To see more debug info, please use `graph_module.print_readable()`"])

    # -- submodules --------------------------------------------------------------------
    def add_submodule(self, target: str, m: Module) -> bool:
        """Install ``m`` at dotted path ``target``, creating empty parent modules as needed.
        Returns False if a parent on the path exists but is not a Module."""
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            sub = getattr(mod, item, None)
            if sub is None:
                sub = Module()
                setattr(mod, item, sub)
            if not isinstance(sub, Module):
                return False
            mod = sub
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target: str) -> bool:
        """Remove the submodule at dotted path ``target``; returns whether it existed."""
        *path, name = target.split(".")
        mod = self
        for item in path:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                return False
        if not hasattr(mod, name) or not isinstance(getattr(mod, name), Module):
            return False
        delattr(mod, name)
        return True

    def delete_all_unused_submodules(self) -> None:
        """Remove the submodules no ``call_module``/``get_attr`` node uses (nor contains
        the target of one)."""
        used: set = set()
        for node in self._graph.nodes:
            if node.op in ("call_module", "get_attr"):
                parts = node.target.split(".")
                used.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
                if node.op == "call_module":
                    sub = self.get_submodule(node.target)
                    used.update(f"{node.target}.{n}" for n, _ in sub.named_modules() if n)
        for name, _ in list(self.named_modules()):
            if name and name not in used:
                self.delete_submodule(name)

    # -- copies, pickling, saving ------------------------------------------------------
    def __reduce__(self):
        body = dict(self.__dict__)
        python_code = self.recompile()
        import_block = _format_import_block(python_code.globals)
        del body["_graph"]
        body.pop("_globals", None)
        return (reduce_graph_module, (body, import_block))

    def __deepcopy__(self, memo):
        res = Module.__new__(Module)
        memo[id(self)] = res
        fake = Module.__new__(Module)
        fake.__dict__ = copy.deepcopy({k: v for k, v in self.__dict__.items()
                                       if k not in ("_globals",)}, memo)
        gm = GraphModule(fake, fake.__dict__["_graph"], self._graphmodule_cls_name)
        for k in ("meta",):
            setattr(gm, k, copy.deepcopy(getattr(self, k, {}), memo))
        res.__class__ = type(gm)
        res.__dict__ = gm.__dict__
        res._graph.owning_module = res
        return res

    def __copy__(self):
        gm = GraphModule(self, self._graph, self._graphmodule_cls_name)
        gm.meta = dict(getattr(self, "meta", {}))
        return gm

    def to_folder(self, folder, module_name: str = "FxModule") -> None:
        """Write the module to ``folder`` as an importable package: ``module.py`` (a class
        ``module_name`` with the generated forward), ``state_dict.pt`` (its parameters and
        buffers, saved with ``ember.save``) and ``__init__.py``. Submodules that are
        ember.nn modules are rebuilt from their repr; others are pickled next to it.

        Examples::

            >>> gm.to_folder("exported", "MyModel")  # doctest: +SKIP
            >>> from exported import MyModel  # doctest: +SKIP
        """
        import ember

        folder = Path(folder).resolve()
        folder.mkdir(parents=True, exist_ok=True)
        ember.save(self.state_dict(), folder / "state_dict.pt")
        tab = " " * 4
        blobified = []
        model_lines = []
        for name, mod in self.named_children():
            ctor = _module_ctor(mod)
            if ctor is None:
                ember.save(mod, folder / f"{name}.pt")
                blobified.append(name)
                ctor = f"ember.load(r'{folder}/{name}.pt', weights_only=False)"
            model_lines.append(f"{tab * 2}self.{name} = {ctor}")
        for name, buf in self._buffers.items():
            if buf is not None:
                model_lines.append(f"{tab * 2}self.register_buffer('{name}', "
                                   f"ember.empty({list(buf.shape)}, dtype=ember."
                                   f"{str(buf.dtype).split('.')[-1]}))")
        for name, p in self._parameters.items():
            if p is not None:
                model_lines.append(f"{tab * 2}self.{name} = ember.nn.Parameter(ember.empty("
                                   f"{list(p.shape)}, dtype=ember."
                                   f"{str(p.dtype).split('.')[-1]}))")
        python_code = self._graph.python_code(root_module="self")
        imports = _format_import_block(python_code.globals)
        body = "\n".join(tab + line for line in python_code.src.strip("\n").split("\n"))
        init_lines = "\n".join(model_lines) if model_lines else f"{tab * 2}pass"
        module_src = f"""{imports}
import ember
from ember.nn import *  # noqa: F401,F403


class {module_name}(ember.nn.Module):
    def __init__(self):
        super().__init__()
{init_lines}
        self.load_state_dict(ember.load(r'{folder}/state_dict.pt'))

{body}
"""
        (folder / "module.py").write_text(module_src)
        (folder / "__init__.py").write_text(f"from .module import {module_name}\n")
        if blobified:
            import warnings

            warnings.warn("Was not able to save the following children modules as "
                          f"reprs - saved as pickled files instead: {blobified}",
                          stacklevel=2)


def _module_ctor(mod) -> str | None:
    """``ember.nn.Linear(in_features=3, out_features=4, bias=True)`` for a module of
    ember.nn whose repr is a constructor call, else None."""
    import ember.nn as nn

    cls = type(mod)
    if getattr(nn, cls.__name__, None) is not cls or list(mod.children()):
        return None
    text = repr(mod)
    if "\n" in text:
        return None
    return f"ember.nn.{text}"


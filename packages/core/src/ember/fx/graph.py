"""The graph of a traced program (as ``torch.fx.graph``): :class:`Graph` and its code generator.

A :class:`Graph` is a list of :class:`~ember.fx.Node` in program order, from the
placeholders (the inputs) to one ``output`` node. ``Graph.python_code`` turns it back into
the source of a ``forward`` function, printed as torch.fx prints it (``ember.relu(x)``,
``x + y``, ``self.linear(x)``, values freed after their last use).
"""

from __future__ import annotations

import builtins
import copy
import inspect
import keyword
import math
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ember.fx._names import is_from_ember, qualified_name
from ember.fx.node import Node, _type_repr, map_arg

__all__ = ["Graph", "PythonCode", "CodeGen"]

reflectable_magic_methods = {
    "add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}",
    "truediv": "{} / {}", "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}",
    "lshift": "{} << {}", "rshift": "{} >> {}", "and_": "{} & {}", "or_": "{} | {}",
    "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}",
}

magic_methods = {
    "eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}", "le": "{} <= {}",
    "ge": "{} >= {}", "pos": "+{}", "neg": "-{}", "invert": "~{}",
    **reflectable_magic_methods,
}

inplace_methods = {
    "iadd": "{} += {}", "iand": "{} &= {}", "ifloordiv": "{} //= {}", "ilshift": "{} <<= {}",
    "imod": "{} %= {}", "imul": "{} *= {}", "imatmul": "{} @= {}", "ior": "{} |= {}",
    "ipow": "{} **= {}", "irshift": "{} >>= {}", "isub": "{} -= {}", "itruediv": "{} /= {}",
    "ixor": "{} ^= {}", "setitem": "{}[{}] = {}",
}


def _custom_builtins() -> dict:
    """Names every generated function can use without an import: torch.fx has ``inf``,
    ``nan``, ``NoneType``, ``torch`` and ``device``; ember's code has ``ember``."""
    import ember

    return {"inf": math.inf, "nan": math.nan, "NoneType": type(None), "ember": ember,
            "device": ember.device}


_illegal_names = {k: object() for k in keyword.kwlist}
_illegal_names.update(builtins.__dict__)
_illegal_names.update({"inf": math.inf, "nan": math.nan, "NoneType": type(None),
                       "ember": object(), "device": object()})

_snake_case_sub = re.compile(r"(?<=[a-z])([A-Z])").sub
_illegal_char_regex = re.compile("[^0-9a-zA-Z_]+")
_name_regex = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")


def _snake_case(s: str) -> str:
    """``pascalCase`` -> ``pascal_case`` (the name a node gets from its target)."""
    return _snake_case_sub(r"_\1", s).lower()


class _Namespace:
    """Unique names: each object one name, each name once, no shadowed builtins."""

    def __init__(self) -> None:
        self._obj_to_name: dict = {}
        self._used_names: set = set()
        self._base_count: dict = {}

    def create_name(self, candidate: str, obj) -> str:
        if obj is not None and id(obj) in self._obj_to_name:
            return self._obj_to_name[id(obj)][0]
        match = _name_regex.match(candidate)
        if match is None:
            candidate = _illegal_char_regex.sub("_", candidate) or "_unnamed"
            if candidate[0].isdigit():
                candidate = f"_{candidate}"
            match = _name_regex.match(candidate)
        base, num = match.group(1, 2)
        if num is None or candidate in self._used_names:
            num = self._base_count.get(base, 0)
            if candidate in _illegal_names and _illegal_names[candidate] is not obj:
                num += 1
                candidate = f"{base}_{num}"
        else:
            num = int(num)
        while candidate in self._used_names:
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[id(obj)] = (candidate, obj)
        return candidate


@dataclass
class PythonCode:
    """The generated source of a graph's ``forward`` and the globals it runs in.

    Attributes:
        src: the source text (a ``def forward(self, ...):``).
        globals: the names the source uses besides builtins (``ember``, wrapped functions).
    """

    src: str
    globals: dict
    _lineno_map: dict | None = None


def _format_target(base: str, target: str) -> str:
    out = base
    for part in target.split("."):
        out = f"{out}.{part}" if part.isidentifier() else f'getattr({out}, "{part}")'
    return out


class CodeGen:
    """Turns a graph into Python source. Subclass and override ``gen_fn_def`` /
    ``generate_output`` / ``process_inputs`` / ``process_outputs`` for another calling
    convention (``Graph.set_codegen``)."""

    def __init__(self) -> None:
        self._func_name = "forward"

    def gen_fn_def(self, free_vars: list, maybe_return_annotation: str) -> str:
        """``def forward(self, x, y):`` for free variables ``['x', 'y']``."""
        if not free_vars or free_vars[0] != "self":
            free_vars.insert(0, "self")
        return f"def {self._func_name}({', '.join(free_vars)}){maybe_return_annotation}:"

    def _expanded_fn_def(self, free_vars: list, maybe_return_annotation: str) -> str:
        if not free_vars or free_vars[0] != "self":
            free_vars.insert(0, "self")
        args = "".join(f"    {v},\n" for v in free_vars)
        return f"def {self._func_name}(\n{args}){maybe_return_annotation}:"

    def generate_output(self, output_args, repr_fn=repr) -> str:
        """The return statement (without indentation)."""
        return f"return {repr_fn(output_args)}"

    def process_inputs(self, *args):
        """Transform the inputs before the generated function sees them (identity)."""
        return args

    def process_outputs(self, outputs):
        """Transform the outputs of the generated function (identity)."""
        return outputs

    def additional_globals(self) -> list:
        """Extra ``(name, value)`` globals the generated code needs."""
        return []

    def _gen_python_code(self, nodes, root_module: str, namespace: _Namespace, *,
                         verbose: bool = False, include_stride: bool = False,
                         include_device: bool = False, colored: bool = False,
                         expanded_def: bool = False, record_func: bool = False,
                         additional_meta: list | None = None) -> PythonCode:
        red, blue, dim_blue, dim_green, dim = (_colors if colored else _no_colors)
        free_vars: list = []
        body: list = []
        globals_: dict = {}
        wrapped_fns: dict = {}
        ret_annotation = [""]

        def add_global(name_hint: str, obj) -> str:
            if is_from_ember(obj) and obj is not globals_.get("device"):
                return qualified_name(obj)
            name = namespace.create_name(name_hint, obj)
            if name in globals_ and globals_[name] is not obj:
                raise RuntimeError(f"global name {name} already names another object")
            globals_[name] = obj
            return name

        for name, obj in _custom_builtins().items():
            globals_[name] = obj
            namespace._used_names.add(name)
            namespace._obj_to_name[id(obj)] = (name, obj)

        def type_repr(o) -> str:
            if o == ():
                return "()"
            return add_global(_type_repr(o), o)

        def get_repr(arg) -> str:
            if isinstance(arg, Node):
                return repr(arg)
            if isinstance(arg, tuple) and hasattr(arg, "_fields"):
                cls = add_global(qualified_name(type(arg)), type(arg))
                return f"{cls}{tuple(arg)!r}"
            if isinstance(arg, tuple):
                if len(arg) == 1:
                    return f"({get_repr(arg[0])},)"
                return "(" + ", ".join(get_repr(a) for a in arg) + ")"
            if isinstance(arg, list):
                return "[" + ", ".join(get_repr(a) for a in arg) + "]"
            if isinstance(arg, slice):
                return f"slice({get_repr(arg.start)}, {get_repr(arg.stop)}, " \
                    f"{get_repr(arg.step)})"
            import ember

            if isinstance(arg, ember.dtype):
                return f"ember.{str(arg).split('.')[-1]}"
            if isinstance(arg, ember.device):
                return f"device({str(arg)!r})"
            if isinstance(arg, ember.Tensor):
                return f"ember.Tensor(size={list(arg.shape)}, " \
                    f"dtype={str(arg.dtype).split('.')[-1]})"
            if isinstance(arg, float) and not math.isfinite(arg):
                return repr(arg)  # inf, -inf, nan: names the globals provide
            return repr(arg)

        def format_args(args, kwargs) -> str:
            out = [get_repr(a) for a in args]
            out.extend(f"{k} = {get_repr(v)}" for k, v in kwargs.items())
            return ", ".join(out)

        # free each value after its last use, as torch.fx's code does
        last_use: dict = {}
        to_free: dict = {}
        for node in reversed(nodes):
            for inp in node._input_nodes:
                if inp not in last_use:
                    last_use[inp] = node
                    to_free.setdefault(node, []).append(inp)

        def free_after(user) -> None:
            if user.op == "placeholder":
                return
            if user.op == "output":
                body.append("\n")
                return
            dead = list(to_free.get(user, []))
            if not user.users:
                dead.append(user)
            if dead:
                body.append(";  " + dim(" = ".join([repr(n) for n in dead] + ["None"])) + "\n")
            else:
                body.append("\n")

        def annotation(node) -> str | None:
            # verbose code shows each value's dtype and shape, as torch.fx's does
            import ember

            val = node.meta.get("val", node.meta.get("tensor_meta"))
            if isinstance(val, ember.Tensor) or type(val).__name__ == "TensorMetadata":
                dtype = _dtype_abbrs.get(str(val.dtype).split(".")[-1], str(val.dtype))
                text = f"{red(dtype)}{blue(_shape_str(val.shape))}"
                if include_stride:
                    stride = val.stride() if callable(val.stride) else val.stride
                    text += dim_blue(_shape_str(stride))
                if include_device and isinstance(val, ember.Tensor):
                    text += dim_green(str(val.device))
                return f': "{text}"'
            return None

        def emit(node) -> None:
            ann = "" if node.type is None else f" : {type_repr(node.type)}"
            if verbose and node.op != "output":
                ann = annotation(node) or ann
            if node.op == "placeholder":
                default = "" if not node.args else f" = {get_repr(node.args[0])}"
                free_vars.append(f"{node.target}{ann}{default}")
                raw = node.target.replace("*", "")
                if raw != repr(node):
                    body.append(f"{repr(node)} = {raw}\n")
                return
            if node.op == "call_method":
                body.append(f"{repr(node)}{ann} = "
                            f"{_format_target(get_repr(node.args[0]), node.target)}"
                            f"({format_args(node.args[1:], node.kwargs)})")
                return
            if node.op == "call_function":
                target = node.target
                mod = getattr(target, "__module__", "")
                tname = getattr(target, "__name__", "")
                if mod == "_operator" and tname in magic_methods and not node.kwargs:
                    body.append(f"{repr(node)}{ann} = " + magic_methods[tname].format(
                        *(get_repr(a) for a in node.args)))
                    return
                if mod == "_operator" and tname in inplace_methods and not node.kwargs:
                    body.append(inplace_methods[tname].format(
                        *(get_repr(a) for a in node.args))
                        + f";  {repr(node)}{ann} = {get_repr(node.args[0])}")
                    return
                gname = add_global(qualified_name(target), target)
                if (gname == "getattr" and len(node.args) == 2
                        and isinstance(node.args[1], str) and node.args[1].isidentifier()):
                    body.append(f"{repr(node)}{ann} = "
                                f"{_format_target(get_repr(node.args[0]), node.args[1])}")
                    return
                body.append(f"{repr(node)}{ann} = {gname}({format_args(node.args, node.kwargs)})")
                if node.meta.get("is_wrapped", False):
                    wrapped_fns.setdefault(gname)
                return
            if node.op == "call_module":
                body.append(f"{repr(node)}{ann} = {_format_target(root_module, node.target)}"
                            f"({format_args(node.args, node.kwargs)})")
                return
            if node.op == "get_attr":
                body.append(f"{repr(node)}{ann} = {_format_target(root_module, node.target)}")
                return
            if node.op == "output":
                if node.type is not None:
                    ret_annotation[0] = f" -> {type_repr(node.type)}"
                body.append(self.generate_output(node.args[0], repr_fn=get_repr))
                return
            raise NotImplementedError(f"node: {node.op} {node.target}")

        prev_summary = [None]

        def summary(node) -> None:
            # the source line a node came from (or that none was recorded), once per run
            if additional_meta:
                parts = [f"{k}: {node.meta[k]}" for k in additional_meta if k in node.meta]
                if parts:
                    body.append(f"# {', '.join(parts)}\n")
            text = _stack_summary(node.stack_trace)
            if text != prev_summary[0]:
                prev_summary[0] = text
                body.append(f"\n{dim('# ' + text)}\n")

        if record_func:
            from ember.profiler import record_function

            rf = add_global("record_function", record_function)
            body.append(f"_rf = {rf}('graph'); _rf.__enter__()\n")
        for node in nodes:
            if verbose and node.op not in ("placeholder", "output"):
                summary(node)
            recorded = record_func and node.op in ("call_function", "call_method",
                                                   "call_module")
            if recorded:
                body.append(f"_rf_{node.name} = {rf}('{node.name}'); "
                            f"_rf_{node.name}.__enter__()\n")
            emit(node)
            free_after(node)
            if recorded:
                body.append(f"_rf_{node.name}.__exit__(None, None, None)\n")
        if record_func:
            body.insert(len(body) - 2, "_rf.__exit__(None, None, None)\n")  # before return
        if not body:
            body.append("pass\n")
        wrap_stmts = ""
        if wrapped_fns:
            from ember.fx._symbolic_trace import wrap

            wrap_name = add_global("wrap", wrap)
            wrap_stmts = "\n".join(f'{wrap_name}("{n}")' for n in wrapped_fns)
        for name, value in self.additional_globals():
            add_global(name, value)
        if expanded_def:
            prologue = self._expanded_fn_def(free_vars, ret_annotation[0])
        else:
            prologue = self.gen_fn_def(free_vars, ret_annotation[0])
        code = "".join(body).lstrip("\n")
        code = "\n".join("    " + line for line in code.split("\n"))
        src = f"\n{wrap_stmts}\n\n{prologue}\n{code}"
        return PythonCode(src, globals_)


_dtype_abbrs = {
    "float64": "f64", "float32": "f32", "float16": "f16", "bfloat16": "bf16",
    "float8_e4m3fn": "f8e4m3fn", "float8_e5m2": "f8e5m2", "complex128": "c128",
    "complex64": "c64", "complex32": "c32", "int64": "i64", "int32": "i32", "int16": "i16",
    "int8": "i8", "uint64": "u64", "uint32": "u32", "uint16": "u16", "uint8": "u8",
    "bool": "b8",
}


def _ansi(code: str):
    return lambda s: f"\033[{code}m{s}\033[0m"


_colors = (_ansi("31"), _ansi("34"), _ansi("2m\033[34"), _ansi("2m\033[32"), _ansi("2"))
_no_colors = (str,) * 5


def _shape_str(shape) -> str:
    return "[" + ", ".join(str(x) for x in shape) + "]"


def _stack_summary(stack_trace: str | None) -> str:
    """``File: path:line in fn, code: text`` of a node's innermost frame."""
    if not stack_trace:
        return "No stacktrace found for following nodes"
    lines = stack_trace.rstrip().splitlines()
    for i in range(len(lines) - 1, -1, -1):
        m = re.match(r'\s*File "(.+)", line (\d+), in (.+)', lines[i])
        if m:
            code = lines[i + 1].strip() if i + 1 < len(lines) else ""
            return f"File: {m.group(1)}:{m.group(2)} in {m.group(3)}, code: {code}"
    return "No stacktrace found for following nodes"


class _node_list:  # noqa: N801 - torch's name
    """A live view of a graph's nodes; iteration survives erasing the current node."""

    def __init__(self, graph: Graph, direction: str = "_next") -> None:
        self.graph = graph
        self.direction = direction

    def __len__(self) -> int:
        return self.graph._len

    def __iter__(self):
        root = self.graph._root
        cur = getattr(root, self.direction)
        while cur is not root:
            nxt = getattr(cur, self.direction)
            if not cur._erased:
                yield cur
            cur = nxt

    def __reversed__(self):
        return iter(_node_list(self.graph, "_prev" if self.direction == "_next" else "_next"))

    def __repr__(self) -> str:
        return repr(list(self))


class _InsertPoint:
    def __init__(self, graph: Graph, new_insert: Callable) -> None:
        self.graph = graph
        self.orig_insert, graph._insert = graph._insert, new_insert

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.graph._insert = self.orig_insert


class Graph:
    """The graph of a traced program: a list of :class:`~ember.fx.Node` in order.

    Args:
        owning_module: the module whose attributes ``get_attr``/``call_module`` nodes name
            (set by :class:`~ember.fx.GraphModule`).
        tracer_cls: the tracer class that built the graph (kept for re-tracing).
        tracer_extras: keyword arguments of that tracer's ``trace``.

    Examples::

        >>> g = ember.fx.Graph()
        >>> x = g.placeholder("x")
        >>> r = g.call_function(ember.relu, (x,))
        >>> _ = g.output(r)
        >>> print(g.python_code("self").src)  # doctest: +SKIP
        def forward(self, x):
            relu = ember.relu(x);  x = None
            return relu
    """

    def __init__(self, owning_module=None, tracer_cls=None, tracer_extras=None) -> None:
        self._root = Node(self, "", "root", "", (), {})
        self._used_names: dict = {}
        self._insert = self._root.prepend
        self._len = 0
        self._graph_namespace = _Namespace()
        self._owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._codegen = CodeGen()

    # -- the node list -----------------------------------------------------------------
    @property
    def nodes(self) -> _node_list:
        """The nodes in program order (a live view: ``len``, iteration, ``reversed``)."""
        return _node_list(self)

    @property
    def owning_module(self):
        """The GraphModule this graph belongs to (or None)."""
        return self._owning_module

    @owning_module.setter
    def owning_module(self, mod) -> None:
        self._owning_module = mod

    def find_nodes(self, *, op: str, target=None, sort: bool = True) -> list:
        """The nodes with ``op`` (and ``target`` if given), in graph order."""
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # -- building ----------------------------------------------------------------------
    def create_node(self, op: str, target, args: tuple | None = None,
                    kwargs: dict | None = None, name: str | None = None,
                    type_expr=None) -> Node:
        """Create a node and insert it at the insert point (the end, unless inside
        ``inserting_before``/``inserting_after``).

        Args:
            op: the node's opcode (``call_function``, ``call_method``, ...).
            target: what it calls or fetches.
            args, kwargs: its arguments (Nodes of this graph and constants).
            name: a name hint (made unique); by default derived from ``target``.
            type_expr: an optional type annotation.
        """
        args = () if args is None else tuple(args)
        kwargs = {} if kwargs is None else dict(kwargs)
        candidate = name if name is not None else self._target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        n = Node(self, name, op, target, args, kwargs, type_expr)
        self._insert(n)
        self._len += 1
        return n

    def _target_to_str(self, target) -> str:
        if callable(target) and not isinstance(target, str):
            op = getattr(target, "__name__", None) or type(target).__name__
        else:
            op = str(target)
            if op.startswith("__") and op.endswith("__"):
                op = op[2:-2]
        return _snake_case(op)

    def placeholder(self, name: str, type_expr=None,
                    default_value: Any = inspect.Signature.empty) -> Node:
        """An input of the graph named ``name`` (with ``default_value`` if given)."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr=None) -> Node:
        """Fetch the attribute at dotted path ``qualified_name`` of the owning module."""
        mod = self._owning_module
        if mod is not None and not _has_path(mod, qualified_name):
            warnings.warn(f"Attempted to insert a get_attr Node with no underlying reference "
                          f"in the owning GraphModule! Call GraphModule.add_submodule to add "
                          f"the necessary submodule, GraphModule.add_parameter to add the "
                          f"necessary Parameter, or nn.Module.register_buffer to add the "
                          f"necessary buffer (target: {qualified_name})", stacklevel=2)
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name: str, args: tuple | None = None,
                    kwargs: dict | None = None, type_expr=None) -> Node:
        """Call the submodule at dotted path ``module_name`` of the owning module."""
        mod = self._owning_module
        if mod is not None and not _has_path(mod, module_name):
            warnings.warn("Attempted to insert a call_module Node with no underlying "
                          "reference in the owning GraphModule! Call "
                          "GraphModule.add_submodule to add the necessary submodule "
                          f"(target: {module_name})", stacklevel=2)
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args: tuple | None = None,
                    kwargs: dict | None = None, type_expr=None) -> Node:
        """Call method ``method_name`` on ``args[0]``."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function: Callable, args: tuple | None = None,
                      kwargs: dict | None = None, type_expr=None,
                      name: str | None = None) -> Node:
        """Call the Python callable ``the_function`` (``name``: a name hint)."""
        return self.create_node("call_function", the_function, args, kwargs, name=name,
                                type_expr=type_expr)

    def output(self, result, type_expr=None) -> Node:
        """The graph's return value (a Node or a nested structure of them)."""
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def node_copy(self, node: Node, arg_transform: Callable = lambda x: x) -> Node:
        """Copy ``node`` (of another graph) into this one; ``arg_transform`` maps its
        argument Nodes to Nodes of this graph."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        name = node.name if node.op != "placeholder" else node.target
        if node.op == "placeholder":
            result = self.create_node("placeholder", node.target, args, kwargs, name,
                                      node.type)
        else:
            result = self.create_node(node.op, node.target, args, kwargs, name, node.type)
        result.meta = copy.copy(node.meta)
        return result

    def graph_copy(self, g: Graph, val_map: dict, return_output_node: bool = False):
        """Copy every node of ``g`` into this graph; ``val_map`` (filled in) maps ``g``'s
        nodes to the copies. Returns the copy of ``g``'s output value (not its output
        node, unless ``return_output_node``)."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return rv if not return_output_node else (rv, node)
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo=None) -> Graph:
        memo = memo if memo is not None else {}
        g = Graph(tracer_cls=self._tracer_cls, tracer_extras=self._tracer_extras)
        output_vals = g.graph_copy(self, val_map=memo, return_output_node=True)
        g._codegen = copy.deepcopy(self._codegen)
        if output_vals is not None:
            rv, old_out = output_vals
            new_out = g.output(rv, type_expr=getattr(old_out, "type", None))
            new_out.meta = copy.copy(old_out.meta)
        return g

    def erase_node(self, to_erase: Node) -> None:
        """Remove node ``to_erase``, which must have no users."""
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had "
                               f"{len(to_erase.users)} users in the graph: "
                               f"{dict(to_erase.users)}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            warnings.warn(f"erase_node({to_erase}) on an already erased node", stacklevel=2)
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase.args, to_erase.kwargs = (), {}

    def inserting_before(self, n: Node | None = None) -> _InsertPoint:
        """Context manager: nodes created inside go just before ``n`` (at the start of
        the graph if None).

        Examples::

            >>> with g.inserting_before(node):
            ...     new = g.call_function(ember.relu, (node.args[0],))
        """
        if n is None:
            return self.inserting_after(self._root)
        if n.graph is not self:
            raise ValueError("Node to insert before is not in graph.")
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n: Node | None = None) -> _InsertPoint:
        """Context manager: nodes created inside go just after ``n`` (then after each
        other; at the end of the graph if None)."""
        if n is None:
            return self.inserting_before(self._root)
        if n.graph is not self:
            raise ValueError("Node to insert after is not in graph.")
        return _InsertPoint(self, n.append)

    # -- code --------------------------------------------------------------------------
    def python_code(self, root_module: str, *, verbose: bool = False,
                    include_stride: bool = False, include_device: bool = False,
                    colored: bool = False, expanded_def: bool = False,
                    record_func: bool = False, additional_meta: list | None = None
                    ) -> PythonCode:
        """The source of the graph's ``forward`` and its globals.

        Args:
            root_module: the name ``get_attr``/``call_module`` nodes are looked up on
                (``"self"`` in a GraphModule).
            verbose: annotate values with dtype and shape (from ``meta['tensor_meta']`` or
                ``meta['val']``) and say where each node came from (its stack trace).
            include_stride: with ``verbose``, add strides to the annotations.
            include_device: with ``verbose``, add devices (for ``meta['val']`` tensors).
            colored: color the annotations with ANSI escapes (for a terminal).
            expanded_def: one parameter per line in the ``def``.
            record_func: run each node inside ``ember.profiler.record_function`` named
                after it (so a profile shows the graph's nodes).
            additional_meta: meta keys to print as a comment above each node (verbose).
        """
        namespace = _Namespace()
        for node in self.nodes:
            namespace.create_name(node.name, node)
        return self._codegen._gen_python_code(
            list(self.nodes), root_module, namespace, verbose=verbose,
            include_stride=include_stride, include_device=include_device, colored=colored,
            expanded_def=expanded_def, record_func=record_func,
            additional_meta=additional_meta)

    def set_codegen(self, codegen: CodeGen) -> None:
        """Use ``codegen`` to turn this graph into source."""
        self._codegen = codegen

    def process_inputs(self, *args):
        """The inputs as the generated function takes them (the code generator's
        ``process_inputs``; the identity unless ``set_codegen`` changed it)."""
        return self._codegen.process_inputs(*args)

    def process_outputs(self, out):
        """The outputs as callers get them (the code generator's ``process_outputs``)."""
        return self._codegen.process_outputs(out)

    def __str__(self) -> str:
        ret = [""]
        lines = [n.format_node(None, ret) for n in self.nodes]
        s = f"graph(){ret[0]}:"
        for line in lines:
            if line:
                s += "\n    " + line
        return s

    def print_tabular(self) -> None:
        """Print the nodes as a table (opcode, name, target, args, kwargs); needs the
        ``tabulate`` package, as torch.fx's does."""
        try:
            from tabulate import tabulate
        except ImportError:
            print("`print_tabular` relies on the library `tabulate`, which could not be "
                  "found on this machine. Run `pip install tabulate` to install the library.")
            raise
        rows = [[n.op, n.name, n._pretty_print_target(n.target), n.args, n.kwargs]
                for n in self.nodes]
        print(tabulate(rows, headers=["opcode", "name", "target", "args", "kwargs"]))

    # -- checks and passes -------------------------------------------------------------
    def lint(self) -> None:
        """Check the graph is well formed: every node belongs to it, arguments are defined
        before use, names are unique, and ``get_attr``/``call_module`` targets exist on the
        owning module. Raises ``RuntimeError`` naming the first problem."""
        seen: set = set()
        names: set = set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' does not belong "
                                       "to this Graph, but was used as an argument! If you "
                                       "are copying nodes from another graph, make sure to "
                                       "use ``arg_transform`` on node_copy() to remap values"
                                       f"\n{self}")
                if arg not in seen:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before "
                                       "it has been defined! Please check that Nodes in the "
                                       "graph are topologically ordered\n" + str(self))
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen.add(node)
            names.add(node.name)
        mod = self._owning_module
        if mod is None:
            return
        for node in self.nodes:
            if node.op in ("get_attr", "call_module"):
                if not _has_path(mod, node.target):
                    raise RuntimeError(f"Node {node} target {node.target} references "
                                       f"nonexistent attribute of {type(mod).__name__}")
                if node.op == "call_module":
                    from ember.nn import Module

                    if not isinstance(_fetch(mod, node.target), Module):
                        raise RuntimeError(f"Node {node} target {node.target} is not a "
                                           "Module")

    def eliminate_dead_code(self, is_impure_node: Callable[[Node], bool] | None = None
                            ) -> bool:
        """Remove the nodes nothing uses and that have no side effects (see
        :func:`~ember.fx.has_side_effect`), last to first. Returns whether any was removed.

        Args:
            is_impure_node: overrides ``Node.is_impure`` to decide which nodes stay.
        """
        self.lint()
        impure = is_impure_node or (lambda n: n.is_impure())
        changed = False
        for node in reversed(self.nodes):
            if not node.users and not impure(node):
                self.erase_node(node)
                changed = True
        return changed


def _fetch(mod, path: str):
    obj = mod
    for part in path.split(".") if path else ():
        obj = getattr(obj, part)
    return obj


def _has_path(mod, path: str) -> bool:
    try:
        _fetch(mod, path)
    except AttributeError:
        return False
    return True


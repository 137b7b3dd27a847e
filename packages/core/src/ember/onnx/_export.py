"""``ember.onnx.export``: trace with ember.fx, run the traced graph to learn shapes, write
one ONNX node group per fx node, check the model, then write the file.

NOTE [ Which sizes are dynamic ]
The model is traced once with ember.fx and run on the example inputs to learn every node's
dtype and shape. When ``dynamic_axes`` (or ``dynamic_shapes``) names axes, the traced graph
is run twice more with those axes one and two longer (inputs repeated along the axis, so
that token ids stay valid). A size that changes between the runs follows a dynamic axis:
it is computed in the graph (``Shape``/``Gather``); a size that does not is fixed. Python
values computed from fixed sizes (``x.size(-1) ** 0.5``) are folded into constants.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import tempfile

import numpy as np

from ember.onnx import _context as C
from ember.onnx._builder import DEFAULT_OPSET, GraphBuilder, Value
from ember.onnx.errors import CheckerError, OnnxExporterError, UnsupportedOperatorError

__all__ = ["export_model", "in_export"]

_IN_EXPORT = [False]
# ops whose results are not a function of their inputs: never folded into constants
_RANDOM = {"rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "randperm",
           "bernoulli", "multinomial", "normal", "poisson", "dropout", "uniform_", "normal_",
           "bernoulli_", "exponential_", "random_", "empty", "empty_like"}


def in_export() -> bool:
    return _IN_EXPORT[0]


# -- running the traced graph ------------------------------------------------------------------

def _describe(value):
    """What a run records of a node's result: ("tensor", shape, dtype) for tensors,
    nested tuples for containers, the value itself for the rest."""
    from ember import Tensor

    if isinstance(value, Tensor):
        return ("tensor", tuple(value.shape), value.dtype.numpy)
    if isinstance(value, tuple | list):
        return ("seq", type(value), tuple(_describe(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, _describe(v)) for k, v in value.items()))
    return ("py", value)


def _run_graph(gm, args, keep: set):
    """Run ``gm`` on ``args``; the description of every node, and the values of the nodes
    in ``keep`` (to fold into constants)."""
    from ember import no_grad
    from ember.fx import Interpreter

    described, kept = {}, {}

    class _Recorder(Interpreter):
        def run_node(self, n):
            result = super().run_node(n)
            described[n] = _describe(result)
            if n in keep:
                kept[n] = result
            return result

    with no_grad():
        _Recorder(gm).run(*args)
    return described, kept


def _merge(a, b):
    """The description of two runs: sizes that differ become None."""
    if a[0] == "tensor" and b[0] == "tensor":
        shape = a[1] if len(a[1]) != len(b[1]) else tuple(
            x if x == y else None for x, y in zip(a[1], b[1]))
        return ("tensor", shape, a[2])
    if a[0] == "seq" and b[0] == "seq" and len(a[2]) == len(b[2]):
        return ("seq", a[1], tuple(_merge(x, y) for x, y in zip(a[2], b[2])))
    if a[0] == "dict" and b[0] == "dict":
        bd = dict(b[1])
        return ("dict", tuple((k, _merge(v, bd[k]) if k in bd else v) for k, v in a[1]))
    if a[0] == "py" and b[0] == "py":
        same = type(a[1]) is type(b[1]) and _equal(a[1], b[1])
        return a if same else ("dyn", a[1])
    return ("dyn", None)


def _equal(x, y) -> bool:
    try:
        return bool(x == y)
    except Exception:  # noqa: BLE001 - values without a plain equality are not folded
        return False


def _grow(t, axes: dict, delta: int):
    """``t`` with each axis in ``axes`` ``delta`` longer (rows repeated cyclically)."""
    import ember

    a = t.detach().cpu().numpy()
    for ax in sorted(axes):
        n = a.shape[ax]
        if n == 0:
            raise OnnxExporterError("ember.onnx.export: a dynamic axis of size 0 cannot be "
                                    "traced; give example inputs with sizes of at least 1")
        idx = np.arange(n + delta) % n
        a = np.take(a, idx, axis=ax)
    return ember.tensor(a, dtype=t.dtype, device=t.device)


# -- arguments ------------------------------------------------------------------------------------

def _flatten_tensors(value, out: list) -> None:
    from ember import Tensor

    if isinstance(value, Tensor):
        out.append(value)
    elif isinstance(value, tuple | list):
        for v in value:
            _flatten_tensors(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _flatten_tensors(v, out)


def _has_tensor(value) -> bool:
    found: list = []
    _flatten_tensors(value, found)
    return bool(found)


def _bind_arguments(model, args, kwargs):
    """Positional values of forward's parameters, and concrete_args for the rest."""
    if not isinstance(args, tuple):
        args = (args,)
    kwargs = dict(kwargs or {})
    if args and isinstance(args[-1], dict) and not kwargs:
        # torch.onnx's convention: a trailing dict holds keyword arguments
        kwargs = dict(args[-1])
        args = args[:-1]
    sig = inspect.signature(model.forward)
    params = [p for p in sig.parameters.values()
              if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in sig.parameters.values()):
        raise OnnxExporterError("ember.onnx.export: a forward with *args or **kwargs cannot "
                                "be exported; give it named parameters")
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"ember.onnx.export: the example arguments do not fit "
                        f"{type(model).__name__}.forward{sig}: {e}") from None
    tensor_params, concrete = [], {}
    _PARAM_ORDER[0] = tuple(p.name for p in params)
    for p in params:
        if p.name in bound.arguments:
            value = bound.arguments[p.name]
        else:
            value = p.default
        if _has_tensor(value):
            tensor_params.append((p.name, value))
        else:
            concrete[p.name] = value
    return tensor_params, concrete


# -- dynamic axes ---------------------------------------------------------------------------

def _dynamic_axes_table(dynamic_axes, names: list) -> dict:
    """``{value name: {axis: dim name}}`` from torch.onnx's two forms (a list of axes gets
    names ``<name>_dynamic_axes_<k>``)."""
    table = {}
    for key, spec in (dynamic_axes or {}).items():
        if key not in names:
            raise ValueError(f"ember.onnx.export: dynamic_axes names {key!r}, which is not "
                             f"an input or output name (they are {names})")
        if isinstance(spec, dict):
            table[key] = {int(ax): str(dim) for ax, dim in spec.items()}
        elif isinstance(spec, list | tuple):
            table[key] = {int(ax): f"{key}_dynamic_axes_{k + 1}" for k, ax in enumerate(spec)}
        else:
            raise TypeError(f"ember.onnx.export: dynamic_axes[{key!r}] must be a dict of "
                            f"axis -> name or a list of axes, got {type(spec).__name__}")
    return table


def _dynamic_shapes_to_axes(dynamic_shapes, arg_names: list, input_names: list) -> dict:
    """torch.export-style ``dynamic_shapes`` (per argument: {axis: name/Dim} or a list of
    axes) as ``dynamic_axes`` keyed by input names."""
    if dynamic_shapes is None:
        return {}
    if isinstance(dynamic_shapes, dict):
        items = [(arg_names.index(k) if k in arg_names else None, k, v)
                 for k, v in dynamic_shapes.items()]
    else:
        items = [(i, arg_names[i] if i < len(arg_names) else i, v)
                 for i, v in enumerate(dynamic_shapes)]
    out = {}
    for index, key, spec in items:
        if index is None or index >= len(input_names):
            raise ValueError(f"ember.onnx.export: dynamic_shapes names {key!r}, which is not "
                             f"a tensor argument of forward ({arg_names})")
        if spec is None:
            continue
        if isinstance(spec, dict):
            axes = {int(ax): (getattr(d, "__name__", None) or getattr(d, "name", None) or
                              (d if isinstance(d, str) else f"{input_names[index]}_dim_{ax}"))
                    for ax, d in spec.items() if d is not None}
        else:
            axes = {int(ax): f"{input_names[index]}_dim_{ax}" for ax in spec}
        out[input_names[index]] = axes
    return out


# -- the conversion ---------------------------------------------------------------------------

class _ExportTracer:
    """Builds the fx tracer: a module with a converter is one call_module node (leaf), any
    other module is traced through."""

    @staticmethod
    def make():
        from ember import fx
        from ember.nn import ModuleDict, ModuleList, Sequential

        class Tracer(fx.Tracer):
            def is_leaf_module(self, m, qualname):
                if isinstance(m, Sequential | ModuleList | ModuleDict):
                    return False
                return C.lookup_module(m) is not None

        return Tracer()


_ROOT = "_ember_onnx_root"


def _leaf_root(model, tensor_params, concrete):
    """A graph of one call_module node, for a root module that has a converter (its own
    forward is not traced: it may call ember's internals)."""
    from ember.fx import Graph, GraphModule
    from ember.nn import Module

    holder = Module()
    setattr(holder, _ROOT, model)
    graph = Graph()
    names = [n for n in _PARAM_ORDER[0] if n in dict(tensor_params) or n in concrete]
    nodes = {n: graph.placeholder(n) for n in names}
    tensors = {n for n, _ in tensor_params}
    last = max((i for i, n in enumerate(names) if n in tensors), default=-1)
    args = tuple(nodes[n] for n in names[:last + 1])
    kwargs = {n: nodes[n] for n in names[last + 1:]}
    graph.output(graph.call_module(_ROOT, args, kwargs))
    return GraphModule(holder, graph), graph


def _module_path(node) -> str:
    stack = node.meta.get("nn_module_stack")
    if not stack:
        return ""
    path = list(stack.values())[-1]
    return path[0] if isinstance(path, tuple) else str(path)


def _value_from_description(desc, builder_value: Value):
    if desc is not None and desc[0] == "tensor":
        builder_value.dtype = np.dtype(desc[2])
        builder_value.shape = desc[1]
    return builder_value


def _fix(result, desc, ctx):
    """Give a converter's result the dtype and shape the run recorded."""
    if isinstance(result, Value) and desc is not None and desc[0] == "tensor":
        dtype = np.dtype(desc[2])
        if result.dtype != dtype:
            result = ctx.b.cast(result, dtype)
        if result.rank is not None and result.rank != len(desc[1]):
            raise OnnxExporterError(
                f"ember.onnx.export: internal error converting {ctx.node.format_node()}: "
                f"rank {result.rank}, expected {len(desc[1])}")
        result.shape = desc[1]
        return result
    if isinstance(result, tuple | list) and desc is not None and desc[0] == "seq" and \
            len(result) == len(desc[2]):
        items = [_fix(r, d, ctx) for r, d in zip(result, desc[2])]
        return type(result)(*items) if hasattr(result, "_fields") else type(result)(items)
    return result


def _map(value, env):
    from ember.fx import Node

    if isinstance(value, Node):
        return env[value]
    if isinstance(value, tuple):
        return tuple(_map(v, env) for v in value)
    if isinstance(value, list):
        return [_map(v, env) for v in value]
    if isinstance(value, dict):
        return {k: _map(v, env) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(_map(value.start, env), _map(value.stop, env), _map(value.step, env))
    return value


def _is_const(value) -> bool:
    if isinstance(value, Value):
        return False
    if isinstance(value, tuple | list):
        return all(_is_const(v) for v in value)
    if isinstance(value, dict):
        return all(_is_const(v) for v in value.values())
    if isinstance(value, slice):
        return all(_is_const(v) for v in (value.start, value.stop, value.step))
    return True


def _static_python(desc) -> bool:
    return desc is not None and desc[0] == "py"


def _node_name(node) -> str:
    t = node.target
    if node.op == "call_method":
        return f"Tensor.{t}"
    if node.op == "call_module":
        return str(t)
    return C.target_name(t)


def _convert(gm, graph, ctx, inputs: dict, described: dict, kept: dict, fold: bool):
    """Write every node of ``graph``; returns the output node's mapped value."""
    env = {}
    for node in graph.nodes:
        ctx.node = node
        ctx.path = _module_path(node)
        desc = described.get(node)
        ctx.out = desc
        if node.op == "placeholder":
            if node.target in inputs:
                env[node] = inputs[node.target]
            else:
                env[node] = kept.get(node, desc[1] if _static_python(desc) else None)
            continue
        if node.op == "get_attr":
            env[node] = _fetch_attr(gm, node.target)
            continue
        if node.op == "output":
            return _map(node.args[0], env)
        args = _map(node.args, env)
        kwargs = _map(node.kwargs, env)
        if _static_python(desc):
            env[node] = desc[1]  # a Python value fixed in the graph: folded
            continue
        if fold and node in kept:
            env[node] = kept[node]  # a tensor computed from constants only: folded
            continue
        env[node] = _fix(_call_converter(gm, node, ctx, args, kwargs), desc, ctx)
    raise OnnxExporterError("ember.onnx.export: the traced graph has no output")


def _fetch_attr(gm, target: str):
    obj = gm
    for part in target.split("."):
        obj = getattr(obj, part)
    return obj


def _call_converter(gm, node, ctx, args, kwargs):
    if node.op == "call_module":
        module = _fetch_attr(gm, node.target)
        ctx.path = "" if node.target == _ROOT else str(node.target)
        fn = C.lookup_module(module)
        if fn is None:
            raise UnsupportedOperatorError(type(module).__qualname__, ctx.opset, None,
                                           ctx.path or None)
        return fn(ctx, module, *args, **kwargs)
    if node.op == "call_method":
        fn = C.custom_symbolic(node.target) or C.lookup_method(node.target)
        if fn is None:
            raise ctx.unsupported(f"Tensor.{node.target}")
        return fn(ctx, *args, **kwargs)
    fn = C.lookup_function(node.target)
    custom = C.custom_symbolic(getattr(node.target, "__name__", ""))
    if custom is not None and not C.is_operator(node.target):
        fn = custom
    if fn is None:
        raise ctx.unsupported(C.target_name(node.target))
    return fn(ctx, *args, **kwargs)


def _const_nodes(graph, concrete: dict) -> set:
    """The nodes computed from parameters, buffers and constants only (foldable)."""
    const = set()
    for node in graph.nodes:
        if node.op == "get_attr":
            const.add(node)
        elif node.op == "placeholder":
            if node.target in concrete:
                const.add(node)
        elif node.op in ("call_function", "call_method"):
            name = node.target if isinstance(node.target, str) else \
                getattr(node.target, "__name__", "")
            if name in _RANDOM:
                continue
            if all(a in const for a in node.all_input_nodes):
                const.add(node)
    return const


def _outputs(value, out: list, path="output") -> None:
    if value is None:
        return
    if isinstance(value, tuple | list):
        for i, v in enumerate(value):
            _outputs(v, out, f"{path}.{i}")
    elif isinstance(value, dict):
        for k, v in value.items():
            _outputs(v, out, f"{path}.{k}")
    else:
        out.append(value)


def export_model(model, args, *, kwargs=None, export_params=True, verbose=False,
                 input_names=None, output_names=None, opset_version=None, dynamic_axes=None,
                 dynamic_shapes=None, keep_initializers_as_inputs=False,
                 do_constant_folding=True, training=None):
    """The ONNX ``ModelProto`` of ``model`` on ``args`` (see :func:`ember.onnx.export`)."""
    from ember import Tensor
    from ember.fx import GraphModule
    from ember.nn import Module
    from ember.onnx import TrainingMode, select_model_mode_for_export

    try:
        import onnx
    except ImportError:
        raise ImportError("ember.onnx.export needs the onnx package: pip install "
                          "'ember[onnx]' (or pip install onnx)") from None
    if not isinstance(model, Module):
        raise TypeError(f"ember.onnx.export: model must be an ember.nn.Module, got "
                        f"{type(model).__name__}")
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    builder = GraphBuilder(opset)
    training = TrainingMode.EVAL if training is None else training
    C.resolve_tables()
    with select_model_mode_for_export(model, training), _exporting():
        tensor_params, concrete = _bind_arguments(model, args, kwargs)
        if C.lookup_module(model) is not None:
            gm, graph = _leaf_root(model, tensor_params, concrete)
        else:
            tracer = _ExportTracer.make()
            try:
                graph = tracer.trace(model, concrete_args=concrete or None)
            except UnsupportedOperatorError:
                raise
            except Exception as e:  # noqa: BLE001 - say which export failed
                raise OnnxExporterError(f"ember.onnx.export: tracing {type(model).__name__} "
                                        f"with ember.fx failed: {type(e).__name__}: {e}") from e
            for node in graph.nodes:
                # every run passes all placeholders; defaults could make invalid code
                # ("x=None, y") when a fixed argument follows one with a default
                if node.op == "placeholder" and node.args:
                    node.args = ()
            gm = GraphModule(model, graph)

        # the graph inputs: every tensor in the tensor arguments, flattened in order
        flat, per_param = [], []
        for name, value in tensor_params:
            items: list = []
            _flatten_tensors(value, items)
            per_param.append((name, value, len(items)))
            flat.extend(items)
        names = list(input_names or [])
        if len(names) > len(flat):
            raise ValueError(f"ember.onnx.export: {len(names)} input_names for {len(flat)} "
                             f"input tensors")
        default_names = []
        for name, _, n in per_param:
            default_names.extend([name] if n == 1 else [f"{name}_{i}" for i in range(n)])
        names += default_names[len(names):]

        placeholders = [n for n in graph.nodes if n.op == "placeholder"]
        const = _const_nodes(graph, concrete) if do_constant_folding else set()
        keep = const | set(placeholders)
        described, kept = _run_graph(gm, _positional(placeholders, tensor_params, concrete),
                                     keep)

        # which axes are dynamic: run again with them longer
        out_names_guess = list(output_names or [])
        axes = _dynamic_shapes_to_axes(dynamic_shapes, [p for p, _ in tensor_params], names)
        axes.update(_dynamic_axes_table(dynamic_axes, names + out_names_guess + [
            k for k in (dynamic_axes or {}) if k not in names]))
        in_axes = {k: v for k, v in axes.items() if k in names}
        if in_axes:
            described = _vary(gm, placeholders, tensor_params, concrete, flat, names,
                              in_axes, described)

        # inputs of the ONNX graph
        inputs, pos = {}, 0
        for pname, value, n in per_param:
            vals = []  # the graph inputs of this argument
            for t in flat[pos:pos + n]:
                iname = names[pos]
                dims = list(t.shape)
                for ax, dim in in_axes.get(iname, {}).items():
                    if not -len(dims) <= ax < len(dims):
                        raise ValueError(f"ember.onnx.export: dynamic axis {ax} of input "
                                         f"{iname!r}, which has {len(dims)} dimensions")
                    dims[ax] = dim
                vals.append(builder.add_input(iname, t.dtype.numpy, dims))
                pos += 1
            inputs[pname] = vals[0] if isinstance(value, Tensor) else _restructure(value, vals)

        ctx = C.Context(builder, model, export_params=export_params)
        result = _convert(gm, graph, ctx, inputs, described, kept, do_constant_folding)

        outs: list = []
        _outputs(result, outs)
        if not outs:
            raise OnnxExporterError("ember.onnx.export: the model returns no tensor")
        onames = list(output_names or [])
        if len(onames) > len(outs):
            raise ValueError(f"ember.onnx.export: {len(onames)} output_names for "
                             f"{len(outs)} outputs")
        defaults = ["output"] if len(outs) == 1 else [f"output_{i}" for i in range(len(outs))]
        onames += defaults[len(onames):]
        for v, oname in zip(outs, onames):
            if not isinstance(v, Value):
                if isinstance(v, Tensor) or isinstance(v, int | float | bool):
                    v = ctx.tensor(v)
                else:
                    raise OnnxExporterError(f"ember.onnx.export: output {oname!r} is a "
                                            f"{type(v).__name__}, not a tensor")
            shape = list(v.shape) if v.shape is not None else None
            if shape is not None:
                for ax, dim in axes.get(oname, {}).items():
                    shape[ax] = dim
            builder.add_output(v, oname, shape=shape)
        if set(axes) - set(names) - set(onames):
            unknown = sorted(set(axes) - set(names) - set(onames))
            raise ValueError(f"ember.onnx.export: dynamic_axes names {unknown}, which are not "
                             f"input or output names")
        from ember.onnx._fold import fold_constants

        if do_constant_folding:
            fold_constants(builder)
        import ember

        proto = builder.make_model(producer_version=ember.__version__,
                                   keep_initializers_as_inputs=keep_initializers_as_inputs)
    try:
        onnx.checker.check_model(proto, full_check=True)
    except Exception as e:  # noqa: BLE001 - onnx raises several kinds
        raise CheckerError(f"ember.onnx.export: the exported model does not pass "
                           f"onnx.checker: {e}") from e
    if verbose:
        print(onnx.printer.to_text(proto.graph))
    return proto


def _restructure(value, vals: list):
    it = iter(vals)

    def rebuild(v):
        from ember import Tensor

        if isinstance(v, Tensor):
            return next(it)
        if isinstance(v, tuple | list):
            return type(v)(rebuild(x) for x in v)
        if isinstance(v, dict):
            return {k: rebuild(x) for k, x in v.items()}
        return v

    return rebuild(value)


def _positional(placeholders, tensor_params, concrete):
    """The run arguments of the GraphModule, one per placeholder (the placeholders are
    forward's parameters in order; fx may rename the fixed ones)."""
    values = dict(tensor_params)
    values.update(concrete)
    order = [n for n in _PARAM_ORDER[0] if n in values]
    if len(order) != len(placeholders):
        raise OnnxExporterError(f"ember.onnx.export: the traced graph has "
                                f"{len(placeholders)} inputs for forward's {len(order)} "
                                f"parameters")
    return [values[n] for n in order]


_PARAM_ORDER: list = [()]


def _vary(gm, placeholders, tensor_params, concrete, flat, names, in_axes, described):
    """Rerun with the dynamic axes longer; merge the descriptions (NOTE above)."""
    from ember import Tensor

    merged = described
    ok = 0
    errors = []
    for delta in (1, 2):
        for sign in (1, -1):
            d = delta * sign
            grown = {}
            try:
                for i, t in enumerate(flat):
                    ax = {a % t.dim() for a in in_axes.get(names[i], {})}
                    grown[id(t)] = _grow(t, ax, d) if ax else t
                if any(t.shape[a % t.dim()] + d < 1 for i, t in enumerate(flat)
                       for a in in_axes.get(names[i], {})):
                    continue

                def swap(v, grown=grown):
                    if isinstance(v, Tensor):
                        return grown[id(v)]
                    if isinstance(v, tuple | list):
                        return type(v)(swap(x, grown) for x in v)
                    if isinstance(v, dict):
                        return {k: swap(x, grown) for k, x in v.items()}
                    return v

                params = [(n, swap(v)) for n, v in tensor_params]
                other, _ = _run_graph(gm, _positional(placeholders, params, concrete), set())
            except Exception as e:  # noqa: BLE001 - try the other direction
                errors.append(f"{type(e).__name__}: {e}")
                continue
            merged = {n: _merge(merged[n], other[n]) if n in other else merged[n]
                      for n in merged}
            ok += 1
            break
    if not ok:
        raise OnnxExporterError(
            "ember.onnx.export: the model does not run with the dynamic axes one longer or "
            f"shorter than in the example inputs, so they cannot be dynamic: {errors[-1]}")
    return merged


@contextlib.contextmanager
def _exporting():
    previous = _IN_EXPORT[0]
    _IN_EXPORT[0] = True
    try:
        yield
    finally:
        _IN_EXPORT[0] = previous


def write_model(proto, f) -> None:
    """Write ``proto`` to a path (through a temporary file in the same folder, renamed when
    complete) or to a binary file object."""
    data = proto.SerializeToString()
    if isinstance(f, str | os.PathLike):
        path = os.fspath(f)
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".ember-onnx-", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    elif hasattr(f, "write"):
        f.write(data)
    else:
        raise TypeError(f"ember.onnx.export: f must be a path or a binary file object, got "
                        f"{type(f).__name__}")


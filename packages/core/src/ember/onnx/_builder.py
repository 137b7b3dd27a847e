"""The ONNX emission layer: a small graph builder over ``onnx.helper``.

:class:`GraphBuilder` owns the names of the graph (every value name is unique), its nodes,
inputs, outputs and initializers, and the opset; it hides the few places where an ONNX
operator's form changed between opsets (``axes`` an attribute or an input, ``Split``'s sizes).
:class:`Value` is a tensor of the graph being built, with its element type and what is known
of its shape. Nothing here knows about fx or ember modules; the converters in the sibling
modules call it.
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["GraphBuilder", "Value", "MIN_OPSET", "DEFAULT_OPSET", "max_opset"]

MIN_OPSET = 14  # Trilu, Reshape's allowzero, and the 13+ forms of Split/Squeeze/ReduceSum
DEFAULT_OPSET = 18  # torch.onnx's default in torch 2.13


def _onnx():
    import onnx

    return onnx


def max_opset() -> int:
    """The newest default-domain opset the installed ``onnx`` package knows."""
    return _onnx().defs.onnx_opset_version()


class Value:
    """A tensor of the graph: its ``name``, NumPy ``dtype`` and ``shape``.

    ``shape`` is a tuple whose entries are ints (a size fixed in the graph) or None (a size
    known only when the graph runs), or None when not even the rank is known.
    """

    __slots__ = ("name", "dtype", "shape")

    def __init__(self, name: str, dtype, shape=None) -> None:
        self.name = name
        self.dtype = np.dtype(dtype)
        self.shape = None if shape is None else tuple(shape)

    @property
    def rank(self):
        return None if self.shape is None else len(self.shape)

    def __repr__(self) -> str:
        return f"Value({self.name!r}, {self.dtype}, {self.shape})"


def onnx_type(dtype) -> int:
    """The ``TensorProto`` element type of a NumPy dtype."""
    dtype = np.dtype(dtype)
    if dtype.name == "bfloat16":
        return _onnx().TensorProto.BFLOAT16
    return _onnx().helper.np_dtype_to_tensor_dtype(dtype)


_NAME_OK = re.compile(r"[^A-Za-z0-9_.:/\-]")


class GraphBuilder:
    """Collects the nodes, initializers, inputs and outputs of one ONNX graph.

    Args:
        opset: the default-domain opset version the graph is written for.

    Examples::

        >>> b = GraphBuilder(18)
        >>> x = b.add_input("x", np.float32, ("batch", 4))
        >>> y = b.op("Relu", [x], dtype=np.float32, shape=x.shape)
        >>> b.add_output(y, "y")
        >>> model = b.make_model()
    """

    def __init__(self, opset: int = DEFAULT_OPSET) -> None:
        if not MIN_OPSET <= opset <= max_opset():
            raise ValueError(f"ember.onnx.export supports opset_version {MIN_OPSET} to "
                             f"{max_opset()} (the installed onnx package's newest), "
                             f"got {opset}")
        self.opset = opset
        self.nodes: list = []
        self.inputs: list = []
        self.outputs: list = []
        self.initializers: dict = {}  # name -> TensorProto, in insertion order
        self._names: set = set()
        self._counts: dict = {}
        self._constants: dict = {}  # (dtype, shape, bytes) -> Value, for small constants
        self._node_count = 0
        self.domains: dict = {}  # custom operator domains -> version
        self.default_hint = None
        self._renamed: dict = {}  # value names given to graph outputs

    # -- names -----------------------------------------------------------------------------

    def fresh(self, hint: str = "v") -> str:
        """A value name not used yet, made from ``hint``."""
        hint = _NAME_OK.sub("_", hint) or "v"
        if hint not in self._names:
            self._names.add(hint)
            return hint
        n = self._counts.get(hint, 0)
        while True:
            n += 1
            name = f"{hint}_{n}"
            if name not in self._names:
                self._counts[hint] = n
                self._names.add(name)
                return name

    # -- graph inputs, outputs, initializers ----------------------------------------------

    def add_input(self, name: str, dtype, shape) -> Value:
        """A graph input; ``shape`` entries are ints, strings (named dynamic sizes) or None."""
        if name in self._names:
            raise ValueError(f"the input name {name!r} is used twice")
        self._names.add(name)
        info = _onnx().helper.make_tensor_value_info(name, onnx_type(dtype), list(shape))
        self.inputs.append(info)
        return Value(name, dtype, tuple(d if isinstance(d, int) else None for d in shape))

    def add_output(self, value: Value, name: str, shape=None) -> Value:
        """Make ``value`` a graph output called ``name``: the value is renamed, or passed
        through an Identity node when it is an input, an initializer or another output."""
        shape = value.shape if shape is None else shape
        if shape is None:
            raise ValueError(f"the rank of the output {name!r} is unknown")
        src = self._renamed.get(value.name, value.name)
        if any(o.name == name for o in self.outputs):
            raise ValueError(f"the output name {name!r} is used twice")
        if name != value.name:
            if name in self._names:
                raise ValueError(f"the output name {name!r} is used twice")
            self._names.add(name)
            producer = self._producer(src)
            if producer is None or any(o.name == src for o in self.outputs):
                self.nodes.append(_onnx().helper.make_node(
                    "Identity", [src], [name], name=self._node_name("Identity")))
            else:  # rename the value everywhere
                self._renamed[src] = name
                for node in self.nodes:
                    for i, n in enumerate(node.output):
                        if n == src:
                            node.output[i] = name
                    for i, n in enumerate(node.input):
                        if n == src:
                            node.input[i] = name
        info = _onnx().helper.make_tensor_value_info(name, onnx_type(value.dtype), list(shape))
        self.outputs.append(info)
        return Value(name, value.dtype, value.shape)

    def _producer(self, name: str):
        for node in self.nodes:
            if name in node.output:
                return node
        return None

    def initializer(self, array, hint: str = "const", *, name: str | None = None) -> Value:
        """An initializer holding ``array`` (a NumPy array), named ``name`` exactly when
        given, else a fresh name from ``hint``."""
        array = np.asarray(array)
        if name is None:
            name = self.fresh(hint)
        elif name in self._names:
            raise ValueError(f"the initializer name {name!r} is used twice")
        else:
            self._names.add(name)
        self.initializers[name] = _to_tensor_proto(array, name)
        return Value(name, array.dtype, array.shape)

    def constant(self, value, dtype=None) -> Value:
        """A constant tensor (an initializer; small ones are shared by equal values)."""
        array = np.asarray(value, dtype=dtype)
        if array.size <= 64:
            key = (array.dtype.str, array.shape, array.tobytes())
            hit = self._constants.get(key)
            if hit is None:
                hit = self._constants[key] = self.initializer(array, "const")
            return hit
        return self.initializer(array, "const")

    def ints(self, values) -> Value:
        """A 1-D int64 constant."""
        return self.constant(np.asarray(list(values), dtype=np.int64).reshape(-1))

    # -- nodes -----------------------------------------------------------------------------

    def _node_name(self, op_type: str) -> str:
        self._node_count += 1
        return f"{op_type}_{self._node_count}"

    def op(self, op_type: str, inputs, *, dtype=None, shape=None, outputs: int = 1,
           hint: str | None = None, domain: str = "", **attrs):
        """Add a node; returns its output Value (a list of them when ``outputs`` > 1).

        ``inputs`` are Values, names, or None for an omitted optional input. ``dtype`` (a
        dtype, or a list per output) and ``shape`` describe the outputs; ``dtype`` defaults
        to the first input's. Attributes whose value is None are left out.
        """
        names = []
        for v in inputs:
            names.append("" if v is None else (v.name if isinstance(v, Value) else str(v)))
        while names and names[-1] == "":
            names.pop()
        if dtype is None:
            first = next((v for v in inputs if isinstance(v, Value)), None)
            if first is None:
                raise ValueError(f"{op_type}: the output dtype must be given")
            dtype = first.dtype
        dtypes = list(dtype) if isinstance(dtype, (list, tuple)) else [dtype] * outputs
        shapes = list(shape) if (outputs > 1 and isinstance(shape, list)) else [shape] * outputs
        base = hint or self.default_hint or op_type.lower()
        out_names = [self.fresh(base) for _ in range(outputs)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        node = _onnx().helper.make_node(op_type, names, out_names,
                                        name=self._node_name(op_type), domain=domain or None,
                                        **attrs)
        self.nodes.append(node)
        values = [Value(n, d, s) for n, d, s in zip(out_names, dtypes, shapes)]
        return values[0] if outputs == 1 else values

    # -- forms that changed between opsets -------------------------------------------------

    def reduce(self, op_type: str, x: Value, axes, keepdims: bool, *, dtype=None,
               shape=None) -> Value:
        """``ReduceSum/Mean/Max/Min/Prod/L2``... over ``axes`` (None: all of them)."""
        as_input = self.opset >= 18 or op_type == "ReduceSum"
        kd = int(bool(keepdims))
        if axes is None:
            return self.op(op_type, [x], keepdims=kd, dtype=dtype, shape=shape)
        axes = [int(a) for a in axes]
        if as_input:
            return self.op(op_type, [x, self.ints(axes)], keepdims=kd, dtype=dtype, shape=shape)
        return self.op(op_type, [x], axes=axes, keepdims=kd, dtype=dtype, shape=shape)

    def unsqueeze(self, x: Value, axes, shape=None) -> Value:
        return self.op("Unsqueeze", [x, self.ints(axes)], shape=shape)

    def squeeze(self, x: Value, axes=None, shape=None) -> Value:
        ins = [x] if axes is None else [x, self.ints(axes)]
        return self.op("Squeeze", ins, shape=shape)

    def split(self, x: Value, sizes, axis: int, shapes=None) -> list:
        """``Split`` into pieces of the given sizes along ``axis`` (always a list)."""
        n = len(sizes)
        shapes = shapes if shapes is not None else [None] * n
        if n == 1:
            return [self.op("Identity", [x], shape=shapes[0])]
        return self.op("Split", [x, self.ints(sizes)], axis=axis, outputs=n, shape=list(shapes))

    def cast(self, x: Value, dtype) -> Value:
        """``x`` as ``dtype`` (no node when it already is)."""
        dtype = np.dtype(dtype)
        if x.dtype == dtype:
            return x
        return self.op("Cast", [x], to=onnx_type(dtype), dtype=dtype, shape=x.shape)

    # -- the model ---------------------------------------------------------------------------

    def make_model(self, *, graph_name: str = "main_graph", producer_version: str = "",
                   doc_string: str = "", keep_initializers_as_inputs: bool = False):
        """The ``ModelProto`` of everything added, dead nodes removed."""
        helper = _onnx().helper
        self.prune()
        initializers = list(self.initializers.values())
        inputs = list(self.inputs)
        if keep_initializers_as_inputs:
            known = {i.name for i in inputs}
            for t in initializers:
                if t.name not in known:
                    inputs.append(helper.make_tensor_value_info(t.name, t.data_type,
                                                                list(t.dims)))
        graph = helper.make_graph(self.nodes, graph_name, inputs, self.outputs, initializers,
                                  doc_string=doc_string or None)
        opsets = [helper.make_opsetid("", self.opset)]
        opsets += [helper.make_opsetid(d, v) for d, v in self.domains.items()]
        model = helper.make_model(graph, opset_imports=opsets,
                                  producer_name="ember", producer_version=producer_version)
        model.ir_version = min(model.ir_version, _ir_version_for(self.opset))
        return model

    def prune(self) -> None:
        """Remove the nodes and initializers no graph output depends on."""
        needed = {o.name for o in self.outputs}
        kept = []
        for node in reversed(self.nodes):
            if any(o in needed for o in node.output):
                kept.append(node)
                needed.update(i for i in node.input if i)
        kept.reverse()
        self.nodes = kept
        input_names = {i.name for i in self.inputs}
        self.initializers = {k: v for k, v in self.initializers.items()
                             if k in needed or k in input_names}


def _ir_version_for(opset: int) -> int:
    """The newest IR version whose runtimes know ``opset`` (onnx.helper's table)."""
    table = getattr(_onnx().helper, "VERSION_TABLE", [])
    best = None
    for row in table:
        # (release, ir_version, default opset, ml opset, ...)
        if len(row) >= 3 and row[2] == opset:
            best = row[1] if best is None else min(best, row[1])
    return best if best is not None else 10


def _to_tensor_proto(array: np.ndarray, name: str):
    onnx = _onnx()
    if array.dtype.name == "bfloat16":
        tensor = onnx.helper.make_tensor(name, onnx.TensorProto.BFLOAT16, array.shape,
                                         array.view(np.uint16).tobytes(), raw=True)
        return tensor
    if not array.flags.c_contiguous:
        array = array.copy(order="C")  # np.ascontiguousarray would make 0-d arrays 1-d
    return onnx.numpy_helper.from_array(array, name)

"""Constant folding of the ONNX graph (``do_constant_folding=True``): nodes whose inputs
are all initializers (a transposed weight, LSTM weights with their gates reordered) are
computed once with ``onnx.reference`` and become initializers themselves."""

from __future__ import annotations

import numpy as np

__all__ = ["fold_constants"]

# operators cheap and exact to precompute; never random ones
_FOLDABLE = {"Transpose", "Split", "Concat", "Unsqueeze", "Squeeze", "Reshape", "Slice",
             "Gather", "Cast", "Mul", "Add", "Sub", "Div", "Neg", "Identity", "Sqrt",
             "Expand", "Tile", "Flatten", "Shape", "Size", "ConstantOfShape", "Range",
             "Trilu", "Where", "Equal", "Not", "Pow", "Reciprocal"}
_MAX_FOLDED = 1 << 26  # bytes: a folded tensor larger than this stays an operator


def fold_constants(builder) -> None:
    from onnx import helper, numpy_helper
    from onnx.reference import ReferenceEvaluator

    input_names = {i.name for i in builder.inputs}
    const = {name for name in builder.initializers if name not in input_names}
    arrays: dict = {}
    kept = []
    for node in builder.nodes:
        ins = [i for i in node.input if i]
        if node.op_type in _FOLDABLE and node.domain in ("", "ai.onnx") and ins and \
                all(i in const for i in ins):
            for i in ins:
                if i not in arrays:
                    arrays[i] = numpy_helper.to_array(builder.initializers[i])
            graph = helper.make_graph(
                [node], "fold", [helper.make_tensor_value_info(i, builder.initializers[i]
                                                               .data_type, None)
                                 for i in dict.fromkeys(ins)],
                [helper.make_tensor_value_info(o, 0, None) for o in node.output])
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid(
                "", builder.opset)])
            try:
                results = ReferenceEvaluator(model).run(None, {i: arrays[i] for i in ins})
            except Exception:  # noqa: BLE001 - leave the node to the runtime
                kept.append(node)
                continue
            if sum(np.asarray(r).nbytes for r in results) > _MAX_FOLDED:
                kept.append(node)
                continue
            for name, value in zip(node.output, results):
                value = np.asarray(value)
                builder.initializers[name] = numpy_helper.from_array(value, name)
                arrays[name] = value
                const.add(name)
        else:
            kept.append(node)
    builder.nodes = kept

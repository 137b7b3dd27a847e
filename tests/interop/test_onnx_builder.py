"""The ONNX emission layer of ember.onnx: GraphBuilder's names, initializers, opset forms,
pruning and constant folding, checked with onnx.checker and onnxruntime."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from ember.onnx._builder import GraphBuilder, Value  # noqa: E402
from ember.onnx._fold import fold_constants  # noqa: E402


def _run(model, **feeds):
    onnx.checker.check_model(model, full_check=True)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def test_names_are_unique_and_sanitized():
    b = GraphBuilder(18)
    names = [b.fresh("relu") for _ in range(3)] + [b.fresh("a b/c")]
    assert names == ["relu", "relu_1", "relu_2", "a_b/c"]
    b.add_input("x", np.float32, ("batch", 3))
    with pytest.raises(ValueError, match="used twice"):
        b.add_input("x", np.float32, (2,))
    assert b.fresh("x") == "x_1"


def test_small_constants_are_shared_and_zero_d_stays_zero_d():
    b = GraphBuilder(18)
    c1, c2 = b.constant(np.int64(0)), b.constant(np.int64(0))
    c3 = b.ints([0])
    assert c1.name == c2.name != c3.name
    assert list(b.initializers[c1.name].dims) == [] and list(b.initializers[c3.name].dims) == [1]
    big = b.constant(np.zeros(100, np.float32))
    assert big.name != b.constant(np.zeros(100, np.float32)).name


def test_graph_runs_with_dynamic_axes_identity_outputs_and_pruning():
    b = GraphBuilder(18)
    x = b.add_input("x", np.float32, ("batch", 3))
    w = b.initializer(np.arange(6, dtype=np.float32).reshape(3, 2), name="fc.weight")
    y = b.op("MatMul", [x, w], shape=(None, 2))
    b.op("Relu", [x])  # dead: pruned
    b.add_output(y, "y", shape=["batch", 2])
    b.add_output(x, "x_out")  # an input as an output: through Identity
    b.add_output(y, "y_again")  # an output twice: through Identity
    model = b.make_model()
    assert [n.op_type for n in model.graph.node] == ["MatMul", "Identity", "Identity"]
    assert model.graph.node[0].output[0] == "y"  # renamed, not copied
    assert model.graph.output[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    xs = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    got_y, got_x, again = _run(model, x=xs)
    np.testing.assert_array_equal(again, got_y)
    np.testing.assert_allclose(got_y, xs @ np.arange(6, dtype=np.float32).reshape(3, 2),
                               rtol=1e-6)
    np.testing.assert_array_equal(got_x, xs)


@pytest.mark.parametrize("opset", [14, 17, 18, 21])
def test_reduce_squeeze_split_forms_per_opset(opset):
    b = GraphBuilder(opset)
    x = b.add_input("x", np.float32, (2, 3, 4))
    m = b.reduce("ReduceMean", x, [1], keepdims=False)
    s = b.reduce("ReduceSum", x, [2], keepdims=True)
    mx = b.reduce("ReduceMax", x, None, keepdims=False)
    u = b.squeeze(b.unsqueeze(m, [0]), [0])
    a, c = b.split(x, [1, 2], axis=1)
    shapes = {"m": (2, 4), "s": (2, 3, 1), "mx": (), "a": (2, 1, 4), "c": (2, 2, 4)}
    for v, name in ((u, "m"), (s, "s"), (mx, "mx"), (a, "a"), (c, "c")):
        b.add_output(v, name, shape=shapes[name])
    with pytest.raises(ValueError, match="rank"):
        b.add_output(Value("q", np.float32), "q")
    model = b.make_model()
    assert model.opset_import[0].version == opset
    mean = next(n for n in model.graph.node if n.op_type == "ReduceMean")
    assert (len(mean.input) == 2) == (opset >= 18)
    xs = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    got = _run(model, x=xs)
    np.testing.assert_allclose(got[0], xs.mean(1), rtol=1e-6)
    np.testing.assert_allclose(got[1], xs.sum(2, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(got[2], xs.max(), rtol=1e-6)
    np.testing.assert_array_equal(got[3], xs[:, :1])
    np.testing.assert_array_equal(got[4], xs[:, 1:])


def test_opset_range_and_cast_and_ir_version():
    with pytest.raises(ValueError, match="opset_version 14"):
        GraphBuilder(13)
    b = GraphBuilder(17)
    x = b.add_input("x", np.int32, (2,))
    assert b.cast(x, np.int32) is x
    y = b.cast(x, np.float32)
    assert isinstance(y, Value) and y.dtype == np.float32
    b.add_output(y, "y", shape=(2,))
    model = b.make_model()
    assert model.ir_version <= 8  # the IR version of onnx 1.12, whose default opset is 17
    np.testing.assert_array_equal(_run(model, x=np.array([1, 2], np.int32))[0], [1.0, 2.0])


def test_constant_folding_of_initializer_only_nodes():
    b = GraphBuilder(18)
    x = b.add_input("x", np.float32, (2, 3))
    w = b.initializer(np.arange(6, dtype=np.float32).reshape(2, 3), name="w")
    wt = b.op("Transpose", [w], perm=[1, 0])
    b.add_output(b.op("MatMul", [x, wt], shape=(2, 2)), "y")
    fold_constants(b)
    model = b.make_model()
    assert [n.op_type for n in model.graph.node] == ["MatMul"]
    xs = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(_run(model, x=xs)[0], xs @ np.arange(6.0).reshape(2, 3).T)

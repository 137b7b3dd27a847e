"""ember.onnx.export op by op: each mapped function, method and layer against eager in
onnxruntime; opsets; errors; files; the torch.onnx names."""

import io
import math
import os

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from test_onnx_export import _run, export_and_compare  # noqa: E402


class Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


def _x(*shape):
    ember.manual_seed(3)
    return ember.randn(*shape)


FUNCTION_CASES = {
    "relu": lambda x: F.relu(x), "gelu": lambda x: F.gelu(x),
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"), "silu": lambda x: F.silu(x),
    "sigmoid": lambda x: ember.sigmoid(x), "tanh": lambda x: x.tanh(),
    "softmax": lambda x: F.softmax(x, dim=-1), "log_softmax": lambda x: x.log_softmax(1),
    "leaky_relu": lambda x: F.leaky_relu(x, 0.2), "elu": lambda x: F.elu(x, 0.7),
    "hardswish": lambda x: F.hardswish(x), "hardsigmoid": lambda x: F.hardsigmoid(x),
    "mish": lambda x: F.mish(x), "softplus": lambda x: F.softplus(x, beta=2.0),
    "relu6": lambda x: F.relu6(x * 4), "hardtanh": lambda x: F.hardtanh(x, -0.5, 0.5),
    "selu": lambda x: F.selu(x), "logsigmoid": lambda x: F.logsigmoid(x),
    "glu": lambda x: F.glu(x, -1), "normalize": lambda x: F.normalize(x, dim=-1),
    "arith": lambda x: (x + 1) * 2 - x / 3 + 2 ** x - x ** 2,
    "rsub_neg": lambda x: 1 - (-x), "floordiv": lambda x: x // 0.3,
    "mod": lambda x: x % 0.7, "abs_exp_log": lambda x: ember.log(ember.exp(x).abs() + 1),
    "sqrt_rsqrt": lambda x: x.abs().sqrt() + (x.abs() + 1).rsqrt(),
    "clamp": lambda x: x.clamp(-0.5, 0.3) + ember.clamp(x, min=0.1),
    "where": lambda x: ember.where(x > 0, x, x * 0.1),
    "masked_fill": lambda x: x.masked_fill(x < 0, -1.0),
    "compare": lambda x: ((x > 0) & (x < 1)) | (x == 0) | ~(x >= -1),
    "sum_mean": lambda x: x.sum(-1) + x.mean(dim=(1, 2)).unsqueeze(-1),
    "max_min": lambda x: x.max(dim=1)[0] + x.min(1, keepdim=True).values.squeeze(1),
    "amax_argmax": lambda x: x.amax(-1) + x.argmax(-1).float(),
    "var_std": lambda x: x.var(-1) + x.std(dim=1).sum(-1, keepdim=True),
    "cumsum": lambda x: x.cumsum(1),
    "view_reshape": lambda x: x.view(x.size(0), -1).reshape(-1, 2, 2),
    "flatten": lambda x: x.flatten(1) + ember.flatten(x, 0, 1).reshape(x.size(0), -1),
    "transpose_permute": lambda x: x.transpose(0, 1).permute(2, 0, 1).contiguous(),
    "t_matmul": lambda x: x[0] @ x[0].t() + ember.matmul(x, x.transpose(1, 2)).sum(0),
    "bmm": lambda x: ember.bmm(x, x.transpose(-1, -2)),
    "cat_stack": lambda x: (ember.cat([x, x * 2], dim=1).sum(1)
                            + ember.stack([x, x]).sum(0).sum(1)),
    "split_chunk": lambda x: x.split(3, dim=-1)[1] + x.chunk(2, -1)[0],
    "unbind": lambda x: x.unbind(1)[2],
    "getitem": lambda x: x[:, 1:3, ::2] + x[..., 0:1][:, :2] + x[0, None, :2, -1:],
    "getitem_index": lambda x: x[:, ember.tensor([2, 0])],
    "unsqueeze_squeeze_expand": lambda x: x[:, :1].squeeze(1).unsqueeze(-1).expand(-1, -1, 3),
    "expand_as_repeat": lambda x: x[:, :1].expand_as(x) + x.repeat(1, 1, 1),
    "shape_math": lambda x: x.reshape(x.shape[0] * x.shape[1], x.shape[-1] // 2, 2),
    "size_tuple": lambda x: x.view(x.size()[:-1] + (2, -1)),
    "to_dtype": lambda x: x.to(ember.float64).to(dtype=ember.float32) + x.int().float(),
    "type_as_long": lambda x: x.type_as(x) + x.long().float(),
    "zeros_ones_full_like": lambda x: (ember.zeros_like(x) + ember.ones_like(x)
                                       + ember.full_like(x, 2.0)),
    "arange_dynamic": lambda x: x + ember.arange(x.size(-1)).float(),
    "zeros_dynamic": lambda x: x + ember.zeros(x.size(0), 1, x.size(2)),
    "triu_tril": lambda x: ember.triu(x, 1) + x.tril(),
    "dropout_eval": lambda x: F.dropout(x, 0.5, training=False),
    "einsum": lambda x: ember.einsum("bij,bkj->bik", x, x),
    "sdpa_plain": lambda x: F.scaled_dot_product_attention(x, x, x),
    "pad": lambda x: (F.pad(x, (1, 2)).sum(-1)
                      + F.pad(x, (1, 1, 1, 1), "reflect").mean((1, 2)).unsqueeze(1)),
    "layer_norm_f": lambda x: F.layer_norm(x, (x.shape[-1],)),
}


@pytest.mark.parametrize("name", sorted(FUNCTION_CASES))
def test_functions(name):
    x = _x(3, 4, 6)
    export_and_compare(Fn(FUNCTION_CASES[name]), (x,), [(_x(5, 4, 6),)], input_names=["x"],
                       dynamic_axes={"x": {0: "batch"}})


IMAGE_LAYERS = {
    "conv2d_stride_groups": nn.Conv2d(4, 8, 3, stride=2, padding=1, groups=2),
    "conv2d_same_dilation": nn.Conv2d(4, 4, 3, padding="same", dilation=2, bias=False),
    "conv_transpose2d": nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1),
    "batchnorm2d": nn.BatchNorm2d(4), "groupnorm": nn.GroupNorm(2, 4),
    "instancenorm2d": nn.InstanceNorm2d(4, affine=True),
    "maxpool2d": nn.MaxPool2d(3, stride=2, padding=1),
    "maxpool2d_ceil": nn.MaxPool2d(2, ceil_mode=True),
    "avgpool2d": nn.AvgPool2d(2), "avgpool2d_pad": nn.AvgPool2d(3, 2, 1,
                                                                count_include_pad=False),
    "adaptive_avg_global": nn.AdaptiveAvgPool2d(1), "adaptive_avg_2": nn.AdaptiveAvgPool2d(2),
    "adaptive_max_global": nn.AdaptiveMaxPool2d((1, 1)),
    "upsample_nearest": nn.Upsample(scale_factor=2),
    "upsample_bilinear": nn.Upsample(scale_factor=2, mode="bilinear"),
    "upsample_bilinear_ac": nn.Upsample(size=(5, 7), mode="bilinear", align_corners=True),
    "upsample_nearest_size": nn.Upsample(size=(3, 9)),
    "pixel_shuffle": nn.PixelShuffle(2), "flatten": nn.Flatten(),
    "zeropad": nn.ZeroPad2d((1, 0, 2, 1)), "prelu": nn.PReLU(4),
    "dropout2d": nn.Dropout2d(0.3), "identity": nn.Identity(),
}


@pytest.mark.parametrize("name", sorted(IMAGE_LAYERS))
def test_image_layers(name):
    layer = IMAGE_LAYERS[name]
    for m in layer.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-1, 1)
            m.running_var.uniform_(0.5, 2)
    export_and_compare(layer, (_x(2, 4, 8, 8),), [(_x(3, 4, 8, 8),)], input_names=["x"],
                       dynamic_axes={"x": {0: "batch"}})


SEQUENCE_LAYERS = {
    "conv1d": nn.Conv1d(6, 5, 3, padding=1), "maxpool1d": nn.MaxPool1d(2),
    "avgpool1d": nn.AvgPool1d(3, 1, 1), "batchnorm1d": nn.BatchNorm1d(6),
    "adaptive_avg1d": nn.AdaptiveAvgPool1d(1), "linear": nn.Linear(8, 3),
    "layernorm": nn.LayerNorm(8), "layernorm_2d": nn.LayerNorm((6, 8), bias=False),
    "gelu": nn.GELU("tanh"), "softmax": nn.Softmax(dim=1), "elu": nn.ELU(),
    "leaky": nn.LeakyReLU(0.3), "hardswish": nn.Hardswish(), "silu": nn.SiLU(),
    "sigmoid": nn.Sigmoid(), "tanh": nn.Tanh(), "softplus": nn.Softplus(),
    "logsoftmax": nn.LogSoftmax(-1), "relu6": nn.ReLU6(), "mish": nn.Mish(),
}


@pytest.mark.parametrize("name", sorted(SEQUENCE_LAYERS))
def test_sequence_layers(name):
    export_and_compare(SEQUENCE_LAYERS[name], (_x(2, 6, 8),), [(_x(4, 6, 8),)],
                       input_names=["x"], dynamic_axes={"x": {0: "batch"}})


def test_embedding_gather_and_int_inputs():
    emb = nn.Embedding(10, 4, padding_idx=0)
    export_and_compare(emb, (ember.tensor([[1, 2, 0], [9, 3, 3]]),),
                       [(ember.tensor([[4], [5], [0]]),)], input_names=["ids"],
                       dynamic_axes={"ids": {0: "b", 1: "s"}})


def test_dynamic_sequence_interpolate_and_size_arithmetic():
    class M(nn.Module):
        def forward(self, x):
            b, c, t = x.shape
            y = F.interpolate(x, scale_factor=2.0, mode="linear")
            return y.reshape(b, c * 2, t) + x.repeat(1, 2, 1)

    export_and_compare(M(), (_x(2, 3, 5),), [(_x(1, 3, 9),)], input_names=["x"],
                       dynamic_axes={"x": {0: "b", 2: "t"}})


@pytest.mark.parametrize("opset", [14, 17, 18, 20])
def test_opsets(opset):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(6, 8), nn.LayerNorm(8), nn.GELU(),
                                     nn.Linear(8, 4))

        def forward(self, x):
            return self.net(x).sum(-1) + x.mean(-1)

    data = export_and_compare(M(), (_x(2, 3, 6),),
                              [(_x(4, 3, 6),)], opset_version=opset,
                              dynamic_axes={"x": [0]})
    assert onnx.load_from_string(data).opset_import[0].version == opset


def test_bad_opset():
    with pytest.raises(ValueError, match="opset_version"):
        ember.onnx.export(nn.ReLU(), (_x(2),), None, opset_version=9)


class _SVD(nn.Module):
    def forward(self, x):
        return ember.linalg.svd(x)[0]


class _Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = _SVD()

    def forward(self, x):
        return self.attn(x) + 1


class _Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Module()
        self.encoder.layers = nn.ModuleList([_Layer()])

    def forward(self, x):
        return self.encoder.layers[0](x)


def test_unsupported_op_names_op_and_module_and_writes_nothing(tmp_path):
    path = tmp_path / "model.onnx"
    with pytest.raises(ember.onnx.errors.UnsupportedOperatorError) as info:
        ember.onnx.export(_Net(), (_x(3, 3),), str(path))
    assert str(info.value) == ("ember.onnx.export: no ONNX mapping for 'ember.linalg.svd' "
                               "(in module 'encoder.layers.0.attn')")
    assert isinstance(info.value, ember.onnx.OnnxExporterError)
    assert os.listdir(tmp_path) == []


def test_unsupported_method_and_training_dropout():
    with pytest.raises(ember.onnx.errors.UnsupportedOperatorError, match="Tensor.unfold"):
        ember.onnx.export(Fn(lambda x: x.unfold(0, 2, 1)), (_x(4, 3),), None)
    drop = nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))
    with pytest.raises(ember.onnx.errors.UnsupportedOperatorError, match="training mode"):
        ember.onnx.export(drop, (_x(2, 3),), None, training=ember.onnx.TrainingMode.TRAINING)
    assert drop.training  # the mode is restored


def test_checker_failure_writes_nothing(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise onnx.checker.ValidationError("broken")

    monkeypatch.setattr(onnx.checker, "check_model", broken)
    path = tmp_path / "m.onnx"
    with pytest.raises(ember.onnx.errors.CheckerError):
        ember.onnx.export(nn.Linear(2, 2), (_x(1, 2),), path)
    assert os.listdir(tmp_path) == []


def test_file_path_file_object_program_and_export_params(tmp_path):
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh()).eval()
    x = _x(2, 3)
    path = tmp_path / "m.onnx"
    prog = ember.onnx.export(model, (x,), path)
    assert os.listdir(tmp_path) == ["m.onnx"]
    with ember.no_grad():
        expected = model(x).numpy()
    np.testing.assert_allclose(_run(path.read_bytes(), x)[0], expected, rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(prog(x)[0].numpy(), expected, rtol=1e-5, atol=1e-6)
    buf = io.BytesIO()
    prog.save(buf)
    assert buf.getvalue() == path.read_bytes()
    assert ember.onnx.export(model, (x,), io.BytesIO(), dynamo=False) is None
    with pytest.raises(ValueError, match="f is required"):
        ember.onnx.export(model, (x,), dynamo=False)
    no_params = ember.onnx.export(model, (x,), export_params=False).model_proto
    names = [i.name for i in no_params.graph.input]
    assert names == ["input", "0.weight", "0.bias"] and not no_params.graph.initializer
    kept = ember.onnx.export(model, (x,), keep_initializers_as_inputs=True).model_proto
    assert [i.name for i in kept.graph.input] == ["input", "0.weight", "0.bias"]
    assert len(kept.graph.initializer) == 2


def test_verbose_kwargs_and_non_tensor_arguments(capsys):
    class M(nn.Module):
        def forward(self, x, mask=None, scale=1.0, flip=False):
            y = x * scale
            if mask is not None:
                y = y.masked_fill(mask, 0.0)
            return -y if flip else y

    x = _x(2, 3)
    mask = x > 0
    prog = ember.onnx.export(M(), (x,), None, kwargs={"mask": mask, "flip": True},
                             verbose=True)
    assert "Where" in capsys.readouterr().out
    assert [i.name for i in prog.model_proto.graph.input] == ["x", "mask"]
    np.testing.assert_allclose(prog(x, mask)[0].numpy(), -x.masked_fill(mask, 0).numpy())


def test_dynamic_axes_errors_and_dynamic_shapes():
    lin = nn.Linear(3, 2)
    with pytest.raises(ValueError, match="input or output name"):
        ember.onnx.export(lin, (_x(2, 3),), None, dynamic_axes={"nope": [0]})
    prog = ember.onnx.export(lin, (_x(2, 3),), None, dynamic_shapes=({0: "batch"},))
    dim = prog.model_proto.graph.input[0].type.tensor_type.shape.dim[0]
    assert dim.dim_param == "batch"
    np.testing.assert_allclose(prog(_x(5, 3))[0].numpy(), lin(_x(5, 3)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_constant_folding_precomputes_parameter_ops():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(ember.randn(4, 3))

        def forward(self, x):
            return x @ self.w.t() * 2

    folded = ember.onnx.export(M(), (_x(2, 3),), None).model_proto
    plain = ember.onnx.export(M(), (_x(2, 3),), None, do_constant_folding=False).model_proto
    assert "Transpose" not in [n.op_type for n in folded.graph.node]
    assert "Transpose" in [n.op_type for n in plain.graph.node]
    m = M().eval()
    x = _x(2, 3)
    got = _run(ember.onnx.export(m, (x,), None, do_constant_folding=False)
               .model_proto.SerializeToString(), x)[0]
    np.testing.assert_allclose(got, (x @ m.w.t() * 2).detach().numpy(), rtol=1e-5)


def test_custom_op_symbolic_and_small_names():
    def symbolic(g, input):
        return g.op("Sub", input, g.op("Tanh", input))

    with pytest.raises(ember.onnx.errors.UnsupportedOperatorError, match="tanhshrink"):
        ember.onnx.export(Fn(lambda x: F.tanhshrink(x)), (_x(4, 3),), None)
    ember.onnx.register_custom_op_symbolic("aten::tanhshrink", symbolic, 18)
    try:
        export_and_compare(Fn(lambda x: F.tanhshrink(x)), (_x(4, 3),))
    finally:
        ember.onnx.unregister_custom_op_symbolic("aten::tanhshrink", 18)
    with pytest.raises(ValueError, match="domain::name"):
        ember.onnx.register_custom_op_symbolic("unfold", symbolic, 18)
    assert ember.onnx.is_in_onnx_export() is False
    seen = []
    ember.onnx.export(Fn(lambda x: seen.append(ember.onnx.is_in_onnx_export()) or x * 2),
                      (_x(2),), None)
    assert seen and all(seen)
    m = nn.Linear(2, 2)
    with ember.onnx.select_model_mode_for_export(m, ember.onnx.TrainingMode.EVAL):
        assert not m.training
    assert m.training
    with pytest.raises(TypeError, match="TrainingMode"):
        with ember.onnx.select_model_mode_for_export(m, "eval"):
            pass
    assert ember.onnx.OperatorExportTypes.ONNX.value == 0


def test_exportable_module_and_input_observer():
    class M(ember.onnx.ExportableModule):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 2)

        def forward(self, x):
            return self.lin(x)

        def example_arguments(self):
            return (_x(2, 3),), None

        def input_names(self):
            return ["features"]

        def dynamic_shapes(self):
            return ({0: "batch"},)

    prog = M().to_onnx()
    assert prog.model_proto.graph.input[0].name == "features"
    assert prog.model_proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "batch"
    obs = ember.onnx.InputObserver()
    lin = nn.Linear(3, 2)
    with obs(lin):
        lin(_x(2, 3))
        lin(_x(5, 3))
    assert obs.infer_dynamic_shapes() == ({0: "arg0_dim0"},)
    assert tuple(obs.infer_arguments()[0].shape) == (2, 3)
    assert tuple(obs.infer_arguments(1, flat=True)[0].shape) == (5, 3)
    assert obs.infer_arguments(as_args_kwargs=True)[1] == {}
    assert "forward" not in vars(lin)


def test_mapped_names_listing():
    from ember.onnx._context import mapped_names

    names = mapped_names()
    for fn in ("ember.nn.functional.scaled_dot_product_attention", "operator.getitem",
               "ember.cat", "ember.nn.functional.interpolate"):
        assert fn in names["functions"]
    for m in ("view", "reshape", "size", "permute", "masked_fill"):
        assert m in names["methods"]
    assert any(n.endswith(".LSTM") for n in names["modules"])


MORE_LAYERS = {
    "bilinear": (lambda: nn.Bilinear(6, 6, 3), (2, 6)),
    "rmsnorm": (lambda: nn.RMSNorm(8), (2, 4, 8)),
    "unflatten": (lambda: nn.Unflatten(2, (2, 4)), (2, 4, 8)),
    "reflection_pad1d": (lambda: nn.ReflectionPad1d(2), (2, 4, 8)),
    "replication_pad2d": (lambda: nn.ReplicationPad2d(1), (2, 4, 5, 5)),
    "conv3d": (lambda: nn.Conv3d(2, 3, 3, padding=1), (1, 2, 4, 4, 4)),
    "conv_transpose1d": (lambda: nn.ConvTranspose1d(4, 2, 3, stride=2), (2, 4, 8)),
    "conv1d_circular": (lambda: nn.Conv1d(4, 2, 3, padding=1, padding_mode="circular"),
                        (2, 4, 8)),
    "adaptive_avg3d": (lambda: nn.AdaptiveAvgPool3d(1), (1, 2, 4, 4, 4)),
    "instancenorm1d": (lambda: nn.InstanceNorm1d(4), (2, 4, 8)),
}


@pytest.mark.parametrize("name", sorted(MORE_LAYERS))
def test_more_layers(name):
    make, shape = MORE_LAYERS[name]
    layer = make()
    x = _x(*shape)
    if name == "bilinear":
        class Pair(nn.Module):
            def __init__(self):
                super().__init__()
                self.b = layer

            def forward(self, x):
                return self.b(x, x * 2)

        layer = Pair()
    export_and_compare(layer, (x,), opset_version=19 if "circular" in name else None)


def test_index_ops_and_addmm():
    class M(nn.Module):
        def forward(self, x, idx):
            g = ember.gather(x, 1, idx) + x.index_select(1, idx[0])
            return ember.addmm(g[:, :1], x, x.t()[:, :3], beta=0.5, alpha=2.0)

    x = _x(3, 4)
    idx = ember.tensor([[0, 3, 1, 2], [1, 1, 0, 0], [2, 3, 3, 0]])
    export_and_compare(M(), (x, idx))


def test_transformer_decoder_and_unbatched_attention():
    ember.manual_seed(0)
    layer = nn.TransformerDecoderLayer(16, 2, dim_feedforward=32, norm_first=True)
    dec = nn.TransformerDecoder(layer, 2, norm=nn.LayerNorm(16))

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.dec = dec
            self.mha = nn.MultiheadAttention(16, 4, batch_first=True, kdim=8, vdim=8)

        def forward(self, tgt, mem, kv):
            causal = nn.Transformer.generate_square_subsequent_mask(tgt.size(0))
            y = self.dec(tgt, mem, tgt_mask=causal)
            out, w = self.mha(tgt[:, 0], kv[0], kv[0], average_attn_weights=False)
            return y, out, w

    args = (_x(5, 2, 16), _x(7, 2, 16), _x(2, 6, 8))
    export_and_compare(M(), args, [(_x(8, 2, 16), _x(3, 2, 16), _x(2, 6, 8))],
                       rtol=1e-3, atol=1e-4, input_names=["tgt", "mem", "kv"],
                       dynamic_axes={"tgt": {0: "t"}, "mem": {0: "s"}})


MORE_FUNCTIONS = {
    "trig": lambda x: (ember.sin(x) + x.cos() + ember.tan(x * 0.3) + x.sinh() + ember.cosh(x)
                       + x.tanh()),
    "inverse_trig": lambda x: (ember.asin(x.clamp(-0.9, 0.9)) + x.clamp(-0.9, 0.9).acos()
                               + ember.atan(x) + x.asinh() + (x.abs() + 1.5).acosh()
                               + x.clamp(-0.9, 0.9).atanh()),
    "rounding": lambda x: (ember.floor(x) + x.ceil() + ember.round(x * 3) + x.sign()
                           + ember.reciprocal(x.abs() + 1) + x.erf() + ember.expm1(x)
                           + (x.abs()).log1p() + ember.square(x) + x.positive()),
    "min_max_binary": lambda x: (ember.maximum(x, x * 0.5)
                                 + x.minimum(x * -1) + ember.fmax(x, x * 2)
                                 + ember.fmin(x, x * 2) + ember.fmod(x, 0.4)),
    "logic": lambda x: (ember.logical_and(x > 0, x < 1) | ember.logical_or(x > 1, x < -1)
                        | ember.logical_xor(x > 0, x > 0.5) | (x <= 0.2) | (x != 0.1)
                        | x.le(0) | x.ne(1.0) | (x > 0) ^ (x > 1)).float(),
    "reductions": lambda x: (x.amin(-1) + x.argmin(-1).float() + x.prod(-1)
                             + ember.prod(x, 1).sum(-1, keepdim=True)),
    "casts": lambda x: (x.double().float() + x.half().float() + (x > 0).byte().float()
                        + x.short().float() + x.char().float() + (x > 0).bool().float()),
    "rsub_and_numel": lambda x: ember.rsub(x, 2.0) + x.numel() + x.nelement() + x.dim(),
    "shape_like": lambda x: (x.view_as(x) + x.reshape_as(x) + x.new_zeros(x.shape)
                             + x.new_ones(x.size(0), x.size(1), x.size(2))
                             + ember.broadcast_to(x[:, :1], x.shape)
                             + ember.ones(x.size(0), 4, 6)
                             + x.unflatten(-1, (2, 3)).flatten(-2)),
    "functional_layers": lambda x: (F.celu(x) + F.softsign(x) + F.softmin(x, -1)
                                    + F.rms_norm(x, (6,)) + F.prelu(x, ember.tensor([0.2]))),
    "math_sqrt": lambda x: x * math.sqrt(x.size(-1)) + x.type(ember.float32),
}


@pytest.mark.parametrize("name", sorted(MORE_FUNCTIONS))
def test_more_functions(name):
    export_and_compare(Fn(MORE_FUNCTIONS[name]), (_x(3, 4, 6),), [(_x(5, 4, 6),)],
                       input_names=["x"], dynamic_axes={"x": {0: "batch"}})


MORE_MODULES = {
    "activations": lambda: nn.Sequential(nn.CELU(0.5), nn.SELU(), nn.Hardtanh(-0.3, 0.4),
                                         nn.Hardsigmoid(), nn.LogSigmoid(), nn.Softsign(),
                                         nn.Softmin(-1), nn.GLU(-1)),
    "pools_3d": lambda: nn.Sequential(nn.MaxPool3d(2), nn.AvgPool3d(1),
                                      nn.AdaptiveMaxPool3d(1)),
    "conv_transpose3d": lambda: nn.ConvTranspose3d(2, 2, 2, stride=2),
    "adaptive_max1d": lambda: nn.Sequential(nn.Flatten(2), nn.AdaptiveMaxPool1d(1)),
}


@pytest.mark.parametrize("name", sorted(MORE_MODULES))
def test_more_modules(name):
    x = _x(2, 2, 4, 4, 4)
    export_and_compare(MORE_MODULES[name](), (x,), [(_x(3, 2, 4, 4, 4),)], input_names=["x"],
                       dynamic_axes={"x": {0: "batch"}})


def test_encoder_and_decoder_layers_alone():
    ember.manual_seed(0)
    enc = nn.TransformerEncoderLayer(8, 2, 16, activation=nn.GELU(), norm_first=True)
    dec = nn.TransformerDecoderLayer(8, 2, 16, batch_first=True)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc, self.dec = enc, dec

        def forward(self, x):
            return self.dec(self.enc(x), x)

    export_and_compare(M(), (_x(2, 5, 8),), [(_x(3, 7, 8),)], rtol=1e-3, atol=1e-4,
                       input_names=["x"], dynamic_axes={"x": {0: "a", 1: "b"}})


def test_functional_forms_of_the_layers():
    ember.manual_seed(0)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(ember.randn(4, 2, 3, 3) * 0.3)
            self.wt = nn.Parameter(ember.randn(4, 4, 2, 2) * 0.3)
            self.w1 = nn.Parameter(ember.randn(3, 4, 3) * 0.3)
            self.lin = nn.Parameter(ember.randn(5, 4))
            self.emb = nn.Parameter(ember.randn(10, 4))
            self.register_buffer("mean", ember.rand(4))
            self.register_buffer("var", ember.rand(4) + 0.5)

        def forward(self, x, ids):
            y = F.conv2d(x, self.w, padding=1)
            y = F.batch_norm(y, self.mean, self.var, training=False)
            y = F.group_norm(y, 2) + F.instance_norm(y)
            y = F.dropout2d(y, 0.5, training=False) + F.conv_transpose2d(
                F.avg_pool2d(y, 2), self.wt, stride=2)
            y = F.pixel_shuffle(ember.cat([y, y, y, y], 1), 2)[:, :4]
            y = F.adaptive_avg_pool2d(y, 1).flatten(1) + F.adaptive_max_pool2d(y, 1).flatten(1)
            z = F.conv1d(F.max_pool1d(y.unsqueeze(1).expand(-1, 4, -1), 1), self.w1, padding=1)
            z = F.avg_pool1d(z, 1).mean(1) + F.adaptive_avg_pool1d(z, 1).squeeze(-1).mean(1, True)
            e = F.embedding(ids, self.emb).mean(1)
            out = F.linear(y + e + z, self.lin)
            return out + ember.isnan(out).float() + out.dim()

    x, ids = _x(2, 2, 6, 6), ember.tensor([[1, 2], [3, 9]])
    export_and_compare(M(), (x, ids), [(_x(3, 2, 6, 6), ember.tensor([[0, 1], [2, 3], [4, 5]]))],
                       rtol=1e-4, atol=1e-4, input_names=["x", "ids"],
                       dynamic_axes={"x": {0: "b"}, "ids": {0: "b"}})

"""Converters of the standard ember.nn layers (leaf modules of the export's trace). Each
calls the converter of the functional form with the module's attributes. A module without
a converter is traced through instead (its forward's ops are converted one by one)."""

from __future__ import annotations

from ember.onnx import _ops_nn as N
from ember.onnx import _ops_tensor as T
from ember.onnx._context import converts_module

__all__: list = []

M = "ember.nn."


@converts_module(M + "Linear", M + "modules.linear.NonDynamicallyQuantizableLinear")
def linear(ctx, m, input):
    return N.linear(ctx, input, m.weight, m.bias)


@converts_module(M + "Identity")
def identity(ctx, m, input, *args, **kwargs):
    return input


@converts_module(M + "Bilinear")
def bilinear(ctx, m, input1, input2):
    # y_k = x1^T W_k x2 + b_k, as einsum
    y = T.einsum(ctx, "bi,kij,bj->bk", input1, m.weight, input2)
    return T.add(ctx, y, m.bias) if m.bias is not None else y


def _conv(n, transposed):
    def convert(ctx, m, input, output_size=None):
        if m.padding_mode != "zeros":
            mode = {"reflect": "reflect", "replicate": "replicate",
                    "circular": "circular"}[m.padding_mode]
            pads = []
            for p in reversed(m.padding if isinstance(m.padding, tuple) else (m.padding,) * n):
                pads += [p, p]
            input = N.pad(ctx, input, pads, mode)
            padding = 0
        else:
            padding = m.padding
        if transposed:
            if output_size is not None:
                raise ctx.unsupported(f"ConvTranspose{n}d with output_size")
            return N._conv(n, True)(ctx, input, m.weight, m.bias, m.stride, padding,
                                    m.output_padding, m.groups, m.dilation)
        return N._conv(n)(ctx, input, m.weight, m.bias, m.stride, padding, m.dilation,
                          m.groups)

    return convert


for _n in (1, 2, 3):
    converts_module(M + f"Conv{_n}d")(_conv(_n, False))
    converts_module(M + f"ConvTranspose{_n}d")(_conv(_n, True))
    converts_module(M + f"MaxPool{_n}d")(
        lambda ctx, m, input, _n=_n: N._max_pool(_n)(
            ctx, input, m.kernel_size, m.stride, m.padding, m.dilation, m.ceil_mode,
            m.return_indices))
    converts_module(M + f"AvgPool{_n}d")(
        lambda ctx, m, input, _n=_n: N._avg_pool(_n)(
            ctx, input, m.kernel_size, m.stride, m.padding, m.ceil_mode, m.count_include_pad,
            getattr(m, "divisor_override", None)))
    converts_module(M + f"AdaptiveAvgPool{_n}d")(
        lambda ctx, m, input, _n=_n: N._adaptive_pool(_n, "avg")(ctx, input, m.output_size))
    converts_module(M + f"AdaptiveMaxPool{_n}d")(
        lambda ctx, m, input, _n=_n: N._adaptive_pool(_n, "max")(ctx, input, m.output_size,
                                                                   m.return_indices))


@converts_module(M + "BatchNorm1d", M + "BatchNorm2d", M + "BatchNorm3d")
def batch_norm(ctx, m, input):
    use_batch_stats = m.training or not m.track_running_stats
    if use_batch_stats:
        raise ctx.unsupported(f"{type(m).__name__} in training mode or without running "
                              f"statistics (export in eval mode)")
    return N.batch_norm(ctx, input, m.running_mean, m.running_var, m.weight, m.bias, False,
                        0.0, m.eps)


@converts_module(M + "InstanceNorm1d", M + "InstanceNorm2d", M + "InstanceNorm3d")
def instance_norm(ctx, m, input):
    use_input_stats = m.training or not m.track_running_stats
    return N.instance_norm(ctx, input, m.running_mean, m.running_var, m.weight, m.bias,
                           use_input_stats, 0.0, m.eps)


@converts_module(M + "LayerNorm")
def layer_norm(ctx, m, input):
    return N.layer_norm(ctx, input, m.normalized_shape, m.weight, m.bias, m.eps)


@converts_module(M + "RMSNorm")
def rms_norm(ctx, m, input):
    return N.rms_norm(ctx, input, m.normalized_shape, m.weight, m.eps)


@converts_module(M + "GroupNorm")
def group_norm(ctx, m, input):
    return N.group_norm(ctx, input, m.num_groups, m.weight, m.bias, m.eps)


@converts_module(M + "Embedding")
def embedding(ctx, m, input):
    return N.embedding(ctx, input, m.weight, m.padding_idx, m.max_norm)


@converts_module(M + "Dropout", M + "Dropout1d", M + "Dropout2d", M + "Dropout3d",
                 M + "AlphaDropout", M + "FeatureAlphaDropout")
def dropout(ctx, m, input):
    if m.training and m.p > 0:
        raise ctx.unsupported(f"{type(m).__name__} in training mode (export in eval mode)")
    return input


@converts_module(M + "Flatten")
def flatten(ctx, m, input):
    return T.flatten(ctx, input, m.start_dim, m.end_dim)


@converts_module(M + "Unflatten")
def unflatten(ctx, m, input):
    return T.unflatten(ctx, input, m.dim, m.unflattened_size)


@converts_module(M + "Upsample", M + "UpsamplingNearest2d", M + "UpsamplingBilinear2d")
def upsample(ctx, m, input):
    return N.interpolate(ctx, input, m.size, m.scale_factor, m.mode, m.align_corners,
                         getattr(m, "recompute_scale_factor", None))


@converts_module(M + "PixelShuffle")
def pixel_shuffle(ctx, m, input):
    return N.pixel_shuffle(ctx, input, m.upscale_factor)


@converts_module(M + "ZeroPad1d", M + "ZeroPad2d", M + "ZeroPad3d", M + "ConstantPad1d",
                 M + "ConstantPad2d", M + "ConstantPad3d")
def constant_pad(ctx, m, input):
    return N.pad(ctx, input, list(m.padding), "constant", getattr(m, "value", 0.0))


@converts_module(M + "ReflectionPad1d", M + "ReflectionPad2d", M + "ReflectionPad3d")
def reflection_pad(ctx, m, input):
    return N.pad(ctx, input, list(m.padding), "reflect")


@converts_module(M + "ReplicationPad1d", M + "ReplicationPad2d", M + "ReplicationPad3d")
def replication_pad(ctx, m, input):
    return N.pad(ctx, input, list(m.padding), "replicate")


# -- activations ----------------------------------------------------------------------------------

_ACTIVATIONS = {
    "ReLU": lambda ctx, m, x: N.relu(ctx, x),
    "ReLU6": lambda ctx, m, x: N.relu6(ctx, x),
    "LeakyReLU": lambda ctx, m, x: N.leaky_relu(ctx, x, m.negative_slope),
    "ELU": lambda ctx, m, x: N.elu(ctx, x, m.alpha),
    "CELU": lambda ctx, m, x: N.celu(ctx, x, m.alpha),
    "SELU": lambda ctx, m, x: N._simple("Selu")(ctx, x),
    "GELU": lambda ctx, m, x: N.gelu(ctx, x, m.approximate),
    "SiLU": lambda ctx, m, x: N.silu(ctx, x),
    "Mish": lambda ctx, m, x: N.mish(ctx, x),
    "Sigmoid": lambda ctx, m, x: ctx.unary("Sigmoid", N._float(ctx, x)),
    "Tanh": lambda ctx, m, x: ctx.unary("Tanh", N._float(ctx, x)),
    "Hardtanh": lambda ctx, m, x: N.hardtanh(ctx, x, m.min_val, m.max_val),
    "Hardsigmoid": lambda ctx, m, x: N.hardsigmoid(ctx, x),
    "Hardswish": lambda ctx, m, x: N.hardswish(ctx, x),
    "Softplus": lambda ctx, m, x: N.softplus(ctx, x, m.beta, m.threshold),
    "Softsign": lambda ctx, m, x: N._simple("Softsign")(ctx, x),
    "LogSigmoid": lambda ctx, m, x: N.logsigmoid(ctx, x),
    "PReLU": lambda ctx, m, x: N.prelu(ctx, x, m.weight),
    "GLU": lambda ctx, m, x: N.glu(ctx, x, m.dim),
    "Softmax": lambda ctx, m, x: N._softmax("Softmax")(ctx, x, m.dim),
    "LogSoftmax": lambda ctx, m, x: N._softmax("LogSoftmax")(ctx, x, m.dim),
    "Softmin": lambda ctx, m, x: N._softmax("Softmin")(ctx, x, m.dim),
}

for _name, _fn in _ACTIVATIONS.items():
    converts_module(M + _name)(_fn)

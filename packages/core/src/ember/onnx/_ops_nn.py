"""Converters of ``ember.nn.functional``: activations, linear and convolution layers,
pooling, normalization, embedding, dropout, padding and interpolation. The module
converters (``_modules.py``) call these with the module's attributes, so a module and its
functional form cannot be exported differently."""

from __future__ import annotations

import math

import numpy as np

from ember.onnx._builder import Value
from ember.onnx._context import converts
from ember.onnx._ops_tensor import _norm_dim, _reshape, matmul

__all__: list = []

F = "ember.nn.functional."


def _ntuple(v, n):
    if isinstance(v, tuple | list):
        if len(v) == 1:
            return tuple(v) * n
        return tuple(int(x) for x in v)
    return (int(v),) * n


def _float(ctx, x):
    x = ctx.tensor(x)
    return x if x.dtype.kind == "f" else ctx.b.cast(x, np.float32)


# -- activations ---------------------------------------------------------------------------------

def _simple(op_type, **attrs):
    def convert(ctx, input, *args, inplace=False, **kwargs):
        x = _float(ctx, input)
        return ctx.op(op_type, [x], shape=x.shape, **attrs)

    return convert


@converts(F + "relu", "ember.relu", methods=("relu",))
def relu(ctx, input, inplace=False):
    return ctx.unary("Relu", ctx.tensor(input))



converts(F + "selu", "ember.selu")(_simple("Selu"))
converts(F + "softsign")(_simple("Softsign"))


@converts(F + "silu")
def silu(ctx, input, inplace=False):
    x = _float(ctx, input)
    return ctx.op("Mul", [x, ctx.unary("Sigmoid", x)], shape=x.shape)


@converts(F + "relu6")
def relu6(ctx, input, inplace=False):
    return hardtanh(ctx, input, 0.0, 6.0)


@converts(F + "hardtanh")
def hardtanh(ctx, input, min_val=-1.0, max_val=1.0, inplace=False):
    x = _float(ctx, input)
    return ctx.op("Clip", [x, ctx.tensor(min_val, x.dtype), ctx.tensor(max_val, x.dtype)],
                  shape=x.shape)


@converts(F + "leaky_relu")
def leaky_relu(ctx, input, negative_slope=0.01, inplace=False):
    return ctx.unary("LeakyRelu", _float(ctx, input), alpha=float(negative_slope))


@converts(F + "elu")
def elu(ctx, input, alpha=1.0, inplace=False):
    return ctx.unary("Elu", _float(ctx, input), alpha=float(alpha))


@converts(F + "celu", "ember.celu")
def celu(ctx, input, alpha=1.0, inplace=False):
    return ctx.unary("Celu", _float(ctx, input), alpha=float(alpha))


@converts(F + "gelu")
def gelu(ctx, input, approximate="none"):
    x = _float(ctx, input)
    if approximate not in ("none", "tanh"):
        raise ValueError(f"approximate argument must be either none or tanh, got "
                         f"{approximate!r}")
    if ctx.opset >= 20:
        return ctx.unary("Gelu", x, approximate=approximate)
    if approximate == "tanh":
        # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        x3 = ctx.op("Mul", [ctx.op("Mul", [x, x], shape=x.shape), x], shape=x.shape)
        inner = ctx.binary("Add", x, ctx.binary("Mul", x3, 0.044715))
        t = ctx.unary("Tanh", ctx.binary("Mul", inner, math.sqrt(2.0 / math.pi)))
        return ctx.binary("Mul", ctx.binary("Mul", x, 0.5), ctx.binary("Add", t, 1.0))
    e = ctx.unary("Erf", ctx.binary("Mul", x, 1.0 / math.sqrt(2.0)))
    return ctx.binary("Mul", ctx.binary("Mul", x, 0.5), ctx.binary("Add", e, 1.0))


@converts(F + "mish")
def mish(ctx, input, inplace=False):
    x = _float(ctx, input)
    return ctx.op("Mul", [x, ctx.unary("Tanh", ctx.unary("Softplus", x))], shape=x.shape)


@converts(F + "hardsigmoid")
def hardsigmoid(ctx, input, inplace=False):
    return ctx.unary("HardSigmoid", _float(ctx, input), alpha=1.0 / 6.0, beta=0.5)


@converts(F + "hardswish")
def hardswish(ctx, input, inplace=False):
    x = _float(ctx, input)
    return ctx.op("Mul", [x, hardsigmoid(ctx, x)], shape=x.shape)


@converts(F + "softplus")
def softplus(ctx, input, beta=1.0, threshold=20.0):
    x = _float(ctx, input)
    if beta == 1.0:
        sp = ctx.unary("Softplus", x)
    else:
        sp = ctx.binary("Div", ctx.unary("Softplus", ctx.binary("Mul", x, float(beta))),
                        float(beta))
    # PyTorch returns x itself where beta * x > threshold
    big = ctx.binary("Greater", ctx.binary("Mul", x, float(beta)), float(threshold),
                     out_dtype=np.bool_)
    return ctx.op("Where", [big, x, sp], shape=x.shape)


@converts(F + "logsigmoid")
def logsigmoid(ctx, input):
    x = _float(ctx, input)
    return ctx.unary("Neg", ctx.unary("Softplus", ctx.unary("Neg", x)))


@converts(F + "prelu", "ember.prelu")
def prelu(ctx, input, weight):
    x = _float(ctx, input)
    w = ctx.tensor(weight, x.dtype)
    if x.rank >= 2 and w.shape != (1,) and w.rank == 1:
        w = ctx.b.op("Reshape", [w, ctx.b.ints([-1] + [1] * (x.rank - 2))])
    return ctx.op("PRelu", [x, w], shape=x.shape)


@converts(F + "glu")
def glu(ctx, input, dim=-1):
    x = _float(ctx, input)
    axis = _norm_dim(dim, x.rank)
    n = ctx.dim(x, axis)
    if isinstance(n, Value):
        ctx.need_opset(18, "glu over a dynamic axis")
        a, b = ctx.op("Split", [x], axis=axis, num_outputs=2, outputs=2)
    else:
        a, b = ctx.b.split(x, [n // 2, n // 2], axis)
    return ctx.op("Mul", [a, ctx.unary("Sigmoid", b)])


def _softmax(op_type):
    def convert(ctx, input, dim=None, _stacklevel=3, dtype=None):
        x = ctx.tensor(input)
        if dtype is not None:
            x = ctx.b.cast(x, dtype.numpy if hasattr(dtype, "numpy") else dtype)
        elif x.dtype.kind != "f":
            x = ctx.b.cast(x, np.float32)
        if dim is None:
            dim = 0 if x.rank in (0, 1, 3) else 1  # PyTorch's legacy implicit dim
        axis = _norm_dim(dim, max(x.rank, 1))
        if op_type == "Softmin":
            return ctx.unary("Softmax", ctx.unary("Neg", x), axis=axis)
        return ctx.unary(op_type, x, axis=axis)

    return convert


converts(F + "softmax", "ember.softmax", methods=("softmax",))(_softmax("Softmax"))
converts(F + "log_softmax", "ember.log_softmax", methods=("log_softmax",))(
    _softmax("LogSoftmax"))
converts(F + "softmin")(_softmax("Softmin"))


@converts(F + "normalize")
def normalize(ctx, input, p=2.0, dim=1, eps=1e-12, out=None):
    x = _float(ctx, input)
    axis = _norm_dim(dim, x.rank)
    if p == 2:
        n = ctx.b.reduce("ReduceL2", x, [axis], True, dtype=x.dtype)
    elif p == 1:
        n = ctx.b.reduce("ReduceL1", x, [axis], True, dtype=x.dtype)
    else:
        raise ctx.unsupported(f"ember.nn.functional.normalize with p={p}")
    n = ctx.op("Max", [n, ctx.tensor(eps, x.dtype)], shape=None)
    return ctx.op("Div", [x, n], shape=x.shape)


# -- linear and convolution ------------------------------------------------------------------

@converts(F + "linear")
def linear(ctx, input, weight, bias=None):
    x = ctx.tensor(input)
    w = ctx.tensor(weight, x.dtype)
    if x.rank == 2:
        ins = [x, w] + ([ctx.tensor(bias, x.dtype)] if bias is not None else [])
        return ctx.op("Gemm", ins, transB=1, dtype=x.dtype)
    wt = ctx.b.op("Transpose", [w], perm=[1, 0], hint=f"{w.name}_t")
    y = matmul(ctx, x, wt)
    if bias is not None:
        y = ctx.op("Add", [y, ctx.tensor(bias, x.dtype)], dtype=x.dtype)
    return y


def _conv(n, transposed=False):
    def convert(ctx, input, weight, bias=None, stride=1, padding=0, *rest, **kw):
        if transposed:
            names = ["output_padding", "groups", "dilation"]
            defaults = {"output_padding": 0, "groups": 1, "dilation": 1}
        else:
            names = ["dilation", "groups"]
            defaults = {"dilation": 1, "groups": 1}
        opts = dict(defaults)
        opts.update(dict(zip(names, rest)))
        opts.update(kw)
        x = _float(ctx, input)
        unbatched = x.rank == n + 1
        if unbatched:
            x = ctx.b.unsqueeze(x, [0])
        w = ctx.tensor(weight, x.dtype)
        ins = [x, w] + ([ctx.tensor(bias, x.dtype)] if bias is not None else [])
        attrs = {"strides": list(_ntuple(stride, n)), "dilations": list(_ntuple(
            opts["dilation"], n)), "group": int(opts["groups"])}
        wshape = w.shape
        if wshape is not None and None not in wshape:
            attrs["kernel_shape"] = [int(k) for k in wshape[2:]]
        if isinstance(padding, str):
            if padding == "valid":
                attrs["pads"] = [0] * (2 * n)
            elif padding == "same":
                # PyTorch pads the extra element at the end, as SAME_UPPER
                k = attrs.get("kernel_shape")
                pads_begin, pads_end = [], []
                for ki, di in zip(k, attrs["dilations"]):
                    total = di * (ki - 1)
                    pads_begin.append(total // 2)
                    pads_end.append(total - total // 2)
                attrs["pads"] = pads_begin + pads_end
            else:
                raise ValueError(f"Invalid padding string {padding!r}")
        else:
            p = list(_ntuple(padding, n))
            attrs["pads"] = p + p
        if transposed:
            attrs["output_padding"] = list(_ntuple(opts["output_padding"], n))
            y = ctx.op("ConvTranspose", ins, dtype=x.dtype, **attrs)
        else:
            y = ctx.op("Conv", ins, dtype=x.dtype, **attrs)
        if unbatched:
            y = ctx.b.squeeze(y, [0])
        return y

    return convert


for _n in (1, 2, 3):
    converts(F + f"conv{_n}d", f"ember.conv{_n}d")(_conv(_n))
    converts(F + f"conv_transpose{_n}d", f"ember.conv_transpose{_n}d")(_conv(_n, True))


# -- pooling ----------------------------------------------------------------------------------

def _pool_input(ctx, input, n):
    x = _float(ctx, input)
    unbatched = x.rank == n + 1
    return (ctx.b.unsqueeze(x, [0]) if unbatched else x), unbatched


def _max_pool(n):
    def convert(ctx, input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                return_indices=False):
        if return_indices:
            raise ctx.unsupported(f"ember.nn.functional.max_pool{n}d(return_indices=True)")
        x, unbatched = _pool_input(ctx, input, n)
        k = _ntuple(kernel_size, n)
        s = _ntuple(stride if stride not in (None, [], ()) else kernel_size, n)
        p = list(_ntuple(padding, n))
        y = ctx.op("MaxPool", [x], kernel_shape=list(k), strides=list(s), pads=p + p,
                   dilations=list(_ntuple(dilation, n)), ceil_mode=int(bool(ceil_mode)))
        return ctx.b.squeeze(y, [0]) if unbatched else y

    return convert


def _avg_pool(n):
    def convert(ctx, input, kernel_size, stride=None, padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None):
        if divisor_override is not None:
            raise ctx.unsupported(f"ember.nn.functional.avg_pool{n}d(divisor_override=...)")
        x, unbatched = _pool_input(ctx, input, n)
        k = _ntuple(kernel_size, n)
        s = _ntuple(stride if stride not in (None, [], ()) else kernel_size, n)
        p = list(_ntuple(padding, n))
        y = ctx.op("AveragePool", [x], kernel_shape=list(k), strides=list(s), pads=p + p,
                   ceil_mode=int(bool(ceil_mode)),
                   count_include_pad=int(bool(count_include_pad)))
        return ctx.b.squeeze(y, [0]) if unbatched else y

    return convert


def _adaptive_pool(n, kind):
    def convert(ctx, input, output_size, return_indices=False):
        if return_indices:
            raise ctx.unsupported(f"adaptive_max_pool{n}d(return_indices=True)")
        x, unbatched = _pool_input(ctx, input, n)
        out = _ntuple(output_size, n) if not isinstance(output_size, tuple | list) or \
            None not in output_size else tuple(output_size)
        spatial = x.shape[2:]
        out = tuple(spatial[i] if o is None else o for i, o in enumerate(out))
        if all(o == 1 for o in out):
            y = ctx.op("GlobalAveragePool" if kind == "avg" else "GlobalMaxPool", [x])
        elif all(isinstance(s, int) and s % o == 0 for s, o in zip(spatial, out)):
            k = [s // o for s, o in zip(spatial, out)]
            op = "AveragePool" if kind == "avg" else "MaxPool"
            y = ctx.op(op, [x], kernel_shape=k, strides=k)
        else:
            raise ctx.unsupported(
                f"ember.nn.functional.adaptive_{kind}_pool{n}d with output size {out} of "
                f"input size {tuple(spatial)} (only global pooling, or sizes that divide "
                f"fixed input sizes, map to ONNX pooling)")
        return ctx.b.squeeze(y, [0]) if unbatched else y

    return convert


for _n in (1, 2, 3):
    converts(F + f"max_pool{_n}d", f"ember.max_pool{_n}d")(_max_pool(_n))
    converts(F + f"avg_pool{_n}d", f"ember.avg_pool{_n}d")(_avg_pool(_n))
    converts(F + f"adaptive_avg_pool{_n}d", f"ember.adaptive_avg_pool{_n}d")(
        _adaptive_pool(_n, "avg"))
    converts(F + f"adaptive_max_pool{_n}d", f"ember.adaptive_max_pool{_n}d")(
        _adaptive_pool(_n, "max"))


# -- normalization ----------------------------------------------------------------------------

@converts(F + "batch_norm", "ember.batch_norm")
def batch_norm(ctx, input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5, *args):
    if training:
        raise ctx.unsupported("ember.nn.functional.batch_norm in training mode (export in "
                              "eval mode, or with running statistics)")
    if running_mean is None:
        raise ctx.unsupported("ember.nn.functional.batch_norm without running statistics")
    x = _float(ctx, input)
    mean = ctx.tensor(running_mean, x.dtype)
    c = mean.shape[0]
    scale = ctx.tensor(weight, x.dtype) if weight is not None else ctx.tensor(
        np.ones(c, dtype=x.dtype))
    b = ctx.tensor(bias, x.dtype) if bias is not None else ctx.tensor(np.zeros(c, x.dtype))
    var = ctx.tensor(running_var, x.dtype)
    unbatched = x.rank == 1
    if unbatched:
        x = ctx.b.unsqueeze(x, [0])
    y = ctx.op("BatchNormalization", [x, scale, b, mean, var], epsilon=float(eps),
               shape=x.shape)
    return ctx.b.squeeze(y, [0]) if unbatched else y


@converts(F + "layer_norm", "ember.layer_norm")
def layer_norm(ctx, input, normalized_shape, weight=None, bias=None, eps=1e-5):
    x = _float(ctx, input)
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else \
        tuple(normalized_shape)
    axis = x.rank - len(shape)
    w = ctx.tensor(weight, x.dtype) if weight is not None else \
        ctx.tensor(np.ones(shape, dtype=x.dtype))
    b = ctx.tensor(bias, x.dtype) if bias is not None else None
    if ctx.opset >= 17:
        return ctx.op("LayerNormalization", [x, w, b], axis=axis, epsilon=float(eps),
                      shape=x.shape)
    axes = list(range(axis, x.rank))
    y = _normalize_over(ctx, x, axes, eps)
    y = ctx.op("Mul", [y, w], shape=x.shape)
    return ctx.op("Add", [y, b], shape=x.shape) if b is not None else y


def _normalize_over(ctx, x, axes, eps):
    m = ctx.b.reduce("ReduceMean", x, axes, True, dtype=x.dtype)
    d = ctx.op("Sub", [x, m], shape=x.shape)
    v = ctx.b.reduce("ReduceMean", ctx.op("Mul", [d, d], shape=x.shape), axes, True,
                     dtype=x.dtype)
    denom = ctx.unary("Sqrt", ctx.binary("Add", v, float(eps)))
    return ctx.op("Div", [d, denom], shape=x.shape)


@converts(F + "rms_norm", "ember.rms_norm")
def rms_norm(ctx, input, normalized_shape, weight=None, eps=None):
    x = _float(ctx, input)
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else \
        tuple(normalized_shape)
    axes = list(range(x.rank - len(shape), x.rank))
    if eps is None:
        eps = float(np.finfo(x.dtype).eps)
    ms = ctx.b.reduce("ReduceMean", ctx.op("Mul", [x, x], shape=x.shape), axes, True,
                      dtype=x.dtype)
    y = ctx.op("Div", [x, ctx.unary("Sqrt", ctx.binary("Add", ms, float(eps)))],
               shape=x.shape)
    return ctx.op("Mul", [y, ctx.tensor(weight, x.dtype)], shape=x.shape) \
        if weight is not None else y


@converts(F + "group_norm", "ember.group_norm")
def group_norm(ctx, input, num_groups, weight=None, bias=None, eps=1e-5):
    x = _float(ctx, input)
    sizes = ctx.sizes(x)
    c = sizes[1]
    if isinstance(c, Value):
        raise ctx.fail("group_norm needs a fixed number of channels")
    g = _reshape(ctx, x, ((0, num_groups, -1),))
    g.shape = (x.shape[0], num_groups, None)
    y = _normalize_over(ctx, g, [2], eps)
    y = ctx.op("Reshape", [y, ctx.shape_of(x)], shape=x.shape)
    bshape = [c] + [1] * (x.rank - 2)
    if weight is not None:
        w = ctx.b.op("Reshape", [ctx.tensor(weight, x.dtype), ctx.b.ints(bshape)])
        y = ctx.op("Mul", [y, w], shape=x.shape)
    if bias is not None:
        b = ctx.b.op("Reshape", [ctx.tensor(bias, x.dtype), ctx.b.ints(bshape)])
        y = ctx.op("Add", [y, b], shape=x.shape)
    return y


@converts(F + "instance_norm", "ember.instance_norm")
def instance_norm(ctx, input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    x = _float(ctx, input)
    if not use_input_stats:
        return batch_norm(ctx, x, running_mean, running_var, weight, bias, False, momentum,
                          eps)
    y = _normalize_over(ctx, x, list(range(2, x.rank)), eps)
    bshape = [-1] + [1] * (x.rank - 2)
    if weight is not None:
        w = ctx.b.op("Reshape", [ctx.tensor(weight, x.dtype), ctx.b.ints(bshape)])
        y = ctx.op("Mul", [y, w], shape=x.shape)
    if bias is not None:
        b = ctx.b.op("Reshape", [ctx.tensor(bias, x.dtype), ctx.b.ints(bshape)])
        y = ctx.op("Add", [y, b], shape=x.shape)
    return y


# -- embedding, dropout, padding ----------------------------------------------------------------

@converts(F + "embedding", "ember.embedding")
def embedding(ctx, input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    if max_norm is not None:
        raise ctx.unsupported("ember.nn.functional.embedding(max_norm=...) (it renormalizes "
                              "the weight in place)")
    idx = ctx.cast(input, np.int64)
    w = ctx.tensor(weight)
    return ctx.op("Gather", [w, idx], axis=0, dtype=w.dtype)


def _dropout(name):
    def convert(ctx, input, p=0.5, training=True, inplace=False):
        if training and p > 0:
            raise ctx.unsupported(f"ember.nn.functional.{name} in training mode (export the "
                                  f"model in eval mode)")
        return input

    return convert


for _name in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
              "feature_alpha_dropout"):
    converts(F + _name, f"ember.{_name}")(_dropout(_name))


@converts(F + "pad")
def pad(ctx, input, pad, mode="constant", value=None):
    x = ctx.tensor(input)
    if len(pad) % 2:
        raise ValueError("Padding length must be divisible by 2")
    k = len(pad) // 2
    begins = [0] * x.rank
    ends = [0] * x.rank
    for i in range(k):
        axis = x.rank - 1 - i
        begins[axis] = pad[2 * i]
        ends[axis] = pad[2 * i + 1]
    modes = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
             "circular": "wrap"}
    if mode not in modes:
        raise ValueError(f"Unrecognised padding mode {mode}")
    if mode == "circular":
        ctx.need_opset(19, "pad(mode='circular')")
    ins = [x, ctx.shape_vector(begins + ends)]
    if mode == "constant":
        ins.append(ctx.tensor(0 if value is None else value, x.dtype))
    return ctx.op("Pad", ins, mode=modes[mode], dtype=x.dtype)


# -- interpolation ------------------------------------------------------------------------

@converts(F + "interpolate", F + "upsample")
def interpolate(ctx, input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    x = _float(ctx, input)
    n = x.rank - 2
    if antialias:
        raise ctx.unsupported("ember.nn.functional.interpolate(antialias=True)")
    modes = {"nearest": ("nearest", "asymmetric"), "linear": ("linear", None),
             "bilinear": ("linear", None), "trilinear": ("linear", None),
             "bicubic": ("cubic", None), "nearest-exact": ("nearest", "half_pixel")}
    if mode not in modes:
        raise ValueError(f"interpolate: unknown mode {mode!r}")
    onnx_mode, transform = modes[mode]
    if transform is None:
        transform = "align_corners" if align_corners else (
            "half_pixel" if onnx_mode == "cubic" else "pytorch_half_pixel")
    attrs = {"mode": onnx_mode, "coordinate_transformation_mode": transform}
    if onnx_mode == "nearest":
        attrs["nearest_mode"] = "floor" if mode == "nearest" else "round_prefer_ceil"
    if onnx_mode == "cubic":
        attrs["cubic_coeff_a"] = -0.75
    lead = list(ctx.sizes(x)[:2])
    if size is not None:
        sizes = _ntuple(size, n) if not isinstance(size, tuple | list) else tuple(size)
        target = ctx.shape_vector(lead + list(sizes))
        return ctx.op("Resize", [x, "", "", target], **attrs)
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    scales = scale_factor if isinstance(scale_factor, tuple | list) else (scale_factor,) * n
    if recompute_scale_factor:
        out = [ctx.op("Floor", [ctx.binary("Mul", ctx.cast(ctx.dim(x, 2 + i), np.float32),
                                           float(s))]) if isinstance(ctx.dim(x, 2 + i), Value)
               else int(math.floor(ctx.dim(x, 2 + i) * s)) for i, s in enumerate(scales)]
        out = [ctx.cast(o, np.int64) if isinstance(o, Value) else o for o in out]
        return ctx.op("Resize", [x, "", "", ctx.shape_vector(lead + out)], **attrs)
    sc = ctx.tensor(np.asarray([1.0, 1.0] + [float(s) for s in scales], dtype=np.float32))
    return ctx.op("Resize", [x, "", sc], **attrs)


@converts(F + "pixel_shuffle", "ember.pixel_shuffle")
def pixel_shuffle(ctx, input, upscale_factor):
    x = _float(ctx, input)
    if x.rank != 4:
        raise ctx.unsupported("pixel_shuffle of a tensor that is not 4-D")
    return ctx.op("DepthToSpace", [x], blocksize=int(upscale_factor), mode="CRD")

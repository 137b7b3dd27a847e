"""Converters of the tensor ops: operators, arithmetic, comparisons, reductions, shape ops,
indexing, creation and casts (ember functions, ``operator`` and Tensor methods)."""

from __future__ import annotations

import builtins
import collections
import math

import numpy as np

from ember.onnx._builder import Value
from ember.onnx._context import converts, result_dtype

__all__: list = []

INT64_MAX = np.iinfo(np.int64).max


def _norm_dim(d: int, rank: int) -> int:
    if not -rank <= d < max(rank, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, "
                         f"{rank - 1}], but got {d})")
    return d + rank if d < 0 else d


def _np_dtype(dtype):
    if dtype is None:
        return None
    return dtype.numpy if hasattr(dtype, "numpy") else np.dtype(dtype)


def _has_value(x) -> bool:
    if isinstance(x, Value):
        return True
    if isinstance(x, tuple | list):
        return any(_has_value(v) for v in x)
    return False


@converts("operator.add", "operator.iadd", "ember.add", methods=("add",))
def add(ctx, input, other, *, alpha=1, out=None):
    if isinstance(input, tuple | list) and isinstance(other, tuple | list):
        return tuple(input) + tuple(other)
    if alpha != 1:
        other = mul(ctx, other, alpha)
    return ctx.binary("Add", input, other)


@converts("operator.sub", "operator.isub", "ember.sub", "ember.subtract",
          methods=("sub", "subtract"))
def sub(ctx, input, other, *, alpha=1, out=None):
    if alpha != 1:
        other = mul(ctx, other, alpha)
    return ctx.binary("Sub", input, other)


@converts("ember.rsub", methods=("rsub",))
def rsub(ctx, input, other, alpha=1):
    return sub(ctx, other, input, alpha=alpha)


@converts("operator.mul", "operator.imul", "ember.mul", "ember.multiply",
          methods=("mul", "multiply"))
def mul(ctx, input, other, *, out=None):
    return ctx.binary("Mul", input, other)


@converts("operator.truediv", "operator.itruediv", "ember.div", "ember.divide",
          "ember.true_divide", methods=("div", "divide", "true_divide"))
def div(ctx, input, other, *, rounding_mode=None, out=None):
    dtype = result_dtype(input, other)
    if rounding_mode is None:
        if dtype.kind not in "fc":
            dtype = np.dtype(np.float32)
        return ctx.binary("Div", input, other, dtype=dtype)
    if rounding_mode == "trunc":
        if dtype.kind in "iu":
            return ctx.binary("Div", input, other, dtype=dtype)  # ONNX int Div truncates
        q = ctx.binary("Div", input, other, dtype=dtype)
        # trunc(q) = sign(q) * floor(|q|)
        return ctx.op("Mul", [ctx.unary("Sign", q), ctx.unary("Floor", ctx.unary("Abs", q))],
                      dtype=dtype, shape=q.shape)
    if rounding_mode == "floor":
        return floor_divide(ctx, input, other)
    raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                     f"found '{rounding_mode}'")


@converts("operator.floordiv", "operator.ifloordiv", "ember.floor_divide",
          methods=("floor_divide",))
def floor_divide(ctx, input, other, *, out=None):
    dtype = result_dtype(input, other)
    if dtype.kind in "iu":
        q = ctx.binary("Div", input, other, dtype=np.float64)
        return ctx.b.cast(ctx.unary("Floor", q), dtype)
    q = ctx.binary("Div", input, other, dtype=dtype)
    return ctx.unary("Floor", q)


@converts("operator.mod", "ember.remainder", methods=("remainder",))
def remainder(ctx, input, other, *, out=None):
    dtype = result_dtype(input, other)
    if dtype.kind in "iu":
        return ctx.binary("Mod", input, other, dtype=dtype)  # fmod=0: the divisor's sign
    return _float_mod(ctx, input, other, dtype)


def _float_mod(ctx, a, b, dtype):
    # Python's modulo (the sign of the divisor): a - floor(a / b) * b
    q = ctx.unary("Floor", ctx.binary("Div", a, b, dtype=dtype))
    return ctx.binary("Sub", a, ctx.binary("Mul", q, b, dtype=dtype), dtype=dtype)


@converts("ember.fmod", methods=("fmod",))
def fmod(ctx, input, other, *, out=None):
    dtype = result_dtype(input, other)
    return ctx.op("Mod", [ctx.tensor(input, dtype), ctx.tensor(other, dtype)],
                  fmod=1 if dtype.kind == "f" else 0, dtype=dtype)


@converts("operator.pow", "operator.ipow", "ember.pow", methods=("pow",))
def pow_(ctx, input, exponent, *, out=None):  # noqa: A001 - ember's name
    dtype = result_dtype(input, exponent)
    if not isinstance(exponent, Value) and exponent == 2:
        x = ctx.tensor(input, dtype)
        return ctx.op("Mul", [x, x], dtype=dtype, shape=x.shape)
    if not isinstance(exponent, Value) and exponent == 0.5 and dtype.kind == "f":
        return ctx.unary("Sqrt", ctx.tensor(input, dtype))
    return ctx.binary("Pow", input, exponent, dtype=dtype)


@converts("ember.square", methods=("square",))
def square(ctx, input):
    return pow_(ctx, input, 2)


@converts("operator.matmul", "ember.matmul", "ember.mm", "ember.bmm",
          methods=("matmul", "mm", "bmm"))
def matmul(ctx, input, other, *, out=None):
    a, b = ctx.tensor(input), ctx.tensor(other)
    dtype = result_dtype(a, b)
    return ctx.op("MatMul", [ctx.b.cast(a, dtype), ctx.b.cast(b, dtype)], dtype=dtype)


@converts("ember.addmm", methods=("addmm",))
def addmm(ctx, input, mat1, mat2, *, beta=1, alpha=1, out=None):
    m = ctx.op("Gemm", [ctx.tensor(mat1), ctx.tensor(mat2), ctx.tensor(input)],
               alpha=float(alpha), beta=float(beta))
    return m


@converts("ember.einsum")
def einsum(ctx, equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], tuple | list):
        operands = tuple(operands[0])
    vals = [ctx.tensor(o) for o in operands]
    dtype = result_dtype(*vals)
    return ctx.op("Einsum", [ctx.b.cast(v, dtype) for v in vals],
                  equation=equation.replace(" ", ""), dtype=dtype)


_UNARY = {"neg": "Neg", "abs": "Abs", "exp": "Exp", "log": "Log", "sqrt": "Sqrt",
          "sin": "Sin", "cos": "Cos", "tan": "Tan", "tanh": "Tanh", "sigmoid": "Sigmoid",
          "floor": "Floor", "ceil": "Ceil", "sign": "Sign", "erf": "Erf",
          "reciprocal": "Reciprocal", "asin": "Asin", "acos": "Acos", "atan": "Atan",
          "sinh": "Sinh", "cosh": "Cosh", "asinh": "Asinh", "acosh": "Acosh",
          "atanh": "Atanh", "round": "Round", "isnan": "IsNaN"}


def _unary_converter(name, op_type):
    def convert(ctx, input, *, out=None):
        x = ctx.tensor(input)
        if op_type not in ("Neg", "Abs", "Sign", "IsNaN") and x.dtype.kind not in "fc":
            x = ctx.b.cast(x, np.float32)
        dtype = np.bool_ if op_type == "IsNaN" else x.dtype
        return ctx.op(op_type, [x], dtype=dtype, shape=x.shape)

    convert.__name__ = name
    return convert


for _name, _op in _UNARY.items():
    paths = [f"ember.{_name}"]
    if _name in ("sigmoid", "tanh"):
        paths.append(f"ember.nn.functional.{_name}")
    if _name == "neg":
        paths += ["operator.neg", "ember.negative"]
    if _name == "abs":
        paths += ["operator.abs", "ember.absolute"]
    converts(*paths, methods=(_name,) + (("negative",) if _name == "neg" else ()))(
        _unary_converter(_name, _op))


@converts("operator.pos", "ember.positive", methods=("positive",))
def positive(ctx, input):
    return input


@converts("ember.rsqrt", methods=("rsqrt",))
def rsqrt(ctx, input, *, out=None):
    return ctx.unary("Reciprocal", _unary_converter("sqrt", "Sqrt")(ctx, input))


@converts("ember.log1p", methods=("log1p",))
def log1p(ctx, input, *, out=None):
    return ctx.unary("Log", ctx.binary("Add", input, 1.0))


@converts("ember.expm1", methods=("expm1",))
def expm1(ctx, input, *, out=None):
    return ctx.binary("Sub", ctx.unary("Exp", ctx.tensor(input)), 1.0)


@converts("ember.clamp", "ember.clip", methods=("clamp", "clip"))
def clamp(ctx, input, min=None, max=None, *, out=None):  # noqa: A002 - ember's names
    x = ctx.tensor(input)
    if isinstance(min, Value) and min.rank != 0 or isinstance(max, Value) and max.rank != 0:
        if min is not None:
            x = ctx.binary("Max", x, min, dtype=x.dtype)
        if max is not None:
            x = ctx.binary("Min", x, max, dtype=x.dtype)
        return x
    lo = None if min is None else ctx.tensor(min, x.dtype)
    hi = None if max is None else ctx.tensor(max, x.dtype)
    return ctx.op("Clip", [x, lo or "", hi], dtype=x.dtype, shape=x.shape)


@converts("ember.maximum", "ember.fmax",
          methods=("maximum",))
def maximum(ctx, input, other, *, out=None):
    return ctx.binary("Max", input, other)


@converts("ember.minimum", "ember.fmin", methods=("minimum",))
def minimum(ctx, input, other, *, out=None):
    return ctx.binary("Min", input, other)


# -- comparisons and logic --------------------------------------------------------------------

def _compare(op_type, negate=False):
    def convert(ctx, input, other, *, out=None):
        if not _has_value(input) and not _has_value(other):
            return None
        dtype = result_dtype(input, other)
        v = ctx.binary(op_type, input, other, dtype=dtype, out_dtype=np.bool_)
        return ctx.op("Not", [v], dtype=np.bool_, shape=v.shape) if negate else v

    return convert


for _names, _op, _neg in (
        (("eq",), "Equal", False), (("ne", "not_equal"), "Equal", True),
        (("lt", "less"), "Less", False), (("le", "less_equal"), "LessOrEqual", False),
        (("gt", "greater"), "Greater", False), (("ge", "greater_equal"), "GreaterOrEqual",
                                                False)):
    converts(f"operator.{_names[0]}", *(f"ember.{n}" for n in _names), methods=_names)(
        _compare(_op, _neg))


def _logic(op_type):
    def convert(ctx, input, other, *, out=None):
        a, b = ctx.tensor(input), ctx.tensor(other)
        if a.dtype.kind == "b" and b.dtype.kind == "b" or op_type.startswith("logical"):
            return ctx.binary(op_type.replace("logical_", "").capitalize(), ctx.cast(a, bool),
                              ctx.cast(b, bool), dtype=np.bool_)
        dtype = result_dtype(a, b)
        names = {"and": "BitwiseAnd", "or": "BitwiseOr", "xor": "BitwiseXor"}
        ctx.need_opset(18, f"bitwise_{op_type} of integer tensors")
        return ctx.binary(names[op_type], a, b, dtype=dtype)

    return convert


for _name in ("and", "or", "xor"):
    converts(f"operator.{_name}_" if _name != "xor" else "operator.xor", f"operator.i{_name}",
             f"ember.bitwise_{_name}",
             methods=(f"bitwise_{_name}", f"__{_name}__"))(_logic(_name))
    converts(f"ember.logical_{_name}", methods=(f"logical_{_name}",))(_logic(f"logical_{_name}"))


@converts("operator.invert", "ember.logical_not", "ember.bitwise_not",
          methods=("logical_not", "bitwise_not"))
def logical_not(ctx, input, *, out=None):
    x = ctx.tensor(input)
    if x.dtype.kind != "b":
        x = ctx.op("Equal", [x, ctx.tensor(0, x.dtype)], dtype=np.bool_, shape=x.shape)
        return x
    return ctx.op("Not", [x], dtype=np.bool_, shape=x.shape)


@converts("ember.where", methods=("where",))
def where(ctx, condition, input=None, other=None, *, out=None):
    if input is None:
        raise ctx.unsupported("ember.where(condition) (a data-dependent shape)")
    dtype = result_dtype(input, other)
    cond = ctx.cast(condition, np.bool_)
    a, b = ctx.tensor(input, dtype), ctx.tensor(other, dtype)
    return ctx.op("Where", [cond, a, b], dtype=dtype)


@converts("ember.masked_fill", methods=("masked_fill",))
def masked_fill(ctx, input, mask, value):
    x = ctx.tensor(input)
    v = ctx.tensor(value, x.dtype)
    return ctx.op("Where", [ctx.cast(mask, np.bool_), v, x], dtype=x.dtype)


# -- reductions -------------------------------------------------------------------------------

def _dims(dim, rank):
    if dim is None:
        return None
    if isinstance(dim, int):
        dim = [dim]
    return [_norm_dim(d, rank) for d in dim]


def _reduce(ctx, op_type, input, dim, keepdim, dtype=None):
    x = ctx.tensor(input)
    if dtype is not None:
        x = ctx.b.cast(x, _np_dtype(dtype))
    elif op_type in ("ReduceSum", "ReduceProd") and x.dtype.kind in "bi" and \
            x.dtype != np.int64:
        x = ctx.b.cast(x, np.int64)
    axes = _dims(dim, x.rank)
    if axes is not None and len(axes) == 0:
        axes = None
    return ctx.b.reduce(op_type, x, axes, keepdim, dtype=x.dtype, shape=None) \
        if ctx.node is None else _named_reduce(ctx, op_type, x, axes, keepdim)


def _named_reduce(ctx, op_type, x, axes, keepdim):
    ctx.b.default_hint = ctx.node.name
    try:
        return ctx.b.reduce(op_type, x, axes, keepdim, dtype=x.dtype)
    finally:
        ctx.b.default_hint = None


@converts("ember.sum", methods=("sum",))
def sum_(ctx, input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001
    return _reduce(ctx, "ReduceSum", input, dim, keepdim, dtype)


@converts("ember.mean", methods=("mean",))
def mean(ctx, input, dim=None, keepdim=False, *, dtype=None):
    return _reduce(ctx, "ReduceMean", input, dim, keepdim, dtype)


@converts("ember.prod", methods=("prod",))
def prod(ctx, input, dim=None, keepdim=False, *, dtype=None):
    return _reduce(ctx, "ReduceProd", input, dim, keepdim, dtype)


@converts("ember.amax", methods=("amax",))
def amax(ctx, input, dim=(), keepdim=False):
    return _reduce(ctx, "ReduceMax", input, dim, keepdim)


@converts("ember.amin", methods=("amin",))
def amin(ctx, input, dim=(), keepdim=False):
    return _reduce(ctx, "ReduceMin", input, dim, keepdim)


_ValuesIndices = collections.namedtuple("_ValuesIndices", ["values", "indices"])


def _max_min(reduce_op, arg_op, binary_op):
    def convert(ctx, input, dim=None, keepdim=False, *, out=None):
        if isinstance(dim, Value):  # max(input, other)
            return ctx.binary(binary_op, input, dim)
        x = ctx.tensor(input)
        if dim is None:
            return ctx.b.reduce(reduce_op, x, None, False, dtype=x.dtype, shape=())
        axis = _norm_dim(dim, x.rank)
        values = ctx.b.reduce(reduce_op, x, [axis], keepdim, dtype=x.dtype)
        indices = ctx.op(arg_op, [x], axis=axis, keepdims=int(bool(keepdim)), dtype=np.int64)
        return _ValuesIndices(values, indices)

    return convert


converts("ember.max", methods=("max",))(_max_min("ReduceMax", "ArgMax", "Max"))
converts("ember.min", methods=("min",))(_max_min("ReduceMin", "ArgMin", "Min"))


def _arg(op_type):
    def convert(ctx, input, dim=None, keepdim=False):
        x = ctx.tensor(input)
        if dim is None:
            x = ctx.op("Reshape", [x, ctx.b.ints([-1])], shape=(None,))
            return ctx.op(op_type, [x], axis=0, keepdims=0, dtype=np.int64, shape=())
        return ctx.op(op_type, [x], axis=_norm_dim(dim, x.rank), keepdims=int(bool(keepdim)),
                      dtype=np.int64)

    return convert


converts("ember.argmax", methods=("argmax",))(_arg("ArgMax"))
converts("ember.argmin", methods=("argmin",))(_arg("ArgMin"))


@converts("ember.var", methods=("var",))
def var(ctx, input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _variance(ctx, input, dim, unbiased, keepdim, correction)


@converts("ember.std", methods=("std",))
def std(ctx, input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return ctx.unary("Sqrt", _variance(ctx, input, dim, unbiased, keepdim, correction))


def _variance(ctx, input, dim, unbiased, keepdim, correction):
    if isinstance(dim, bool):  # var(input, unbiased)
        dim, unbiased = None, dim
    x = ctx.tensor(input)
    if correction is None:
        correction = 0 if unbiased is False else 1
    axes = _dims(dim, x.rank)
    m = ctx.b.reduce("ReduceMean", x, axes, True, dtype=x.dtype)
    d = ctx.binary("Sub", x, m, dtype=x.dtype)
    sq = ctx.op("Mul", [d, d], dtype=x.dtype, shape=x.shape)
    total = ctx.b.reduce("ReduceSum", sq, axes, keepdim, dtype=x.dtype)
    sizes = ctx.sizes(x)
    count = 1
    for i in (axes if axes is not None else range(x.rank)):
        count = mul(ctx, count, sizes[i]) if isinstance(sizes[i], Value) or isinstance(
            count, Value) else count * sizes[i]
    denom = sub(ctx, count, correction) if isinstance(count, Value) else count - correction
    return ctx.binary("Div", total, ctx.cast(denom, x.dtype) if isinstance(denom, Value)
                      else float(denom), dtype=x.dtype)


@converts("ember.cumsum", methods=("cumsum",))
def cumsum(ctx, input, dim, *, dtype=None, out=None):
    x = ctx.tensor(input)
    if dtype is not None:
        x = ctx.b.cast(x, _np_dtype(dtype))
    elif x.dtype.kind in "bi" and x.dtype != np.int64:
        x = ctx.b.cast(x, np.int64)
    axis = ctx.b.constant(np.int64(_norm_dim(dim, x.rank)))
    return ctx.op("CumSum", [x, axis], dtype=x.dtype, shape=x.shape)


# -- sizes ---------------------------------------------------------------------------------

@converts(methods=("size",))
def size_(ctx, input, dim=None):
    x = ctx.tensor(input)
    if dim is None:
        return ctx.sizes(x)
    return ctx.dim(x, dim)


@converts(methods=("numel", "nelement"))
def numel(ctx, input):
    x = ctx.tensor(input)
    return ctx.b.reduce("ReduceProd", ctx.shape_of(x), None, False, dtype=np.int64, shape=())


@converts(methods=("dim", "ndimension"))
def dim_(ctx, input):
    return ctx.tensor(input).rank


@converts("builtins.getattr")
def getattr_(ctx, obj, name, *default):
    if isinstance(obj, Value):
        if name == "shape":
            return ctx.sizes(obj)
        if name == "ndim":
            return obj.rank
        if name == "T":
            return permute(ctx, obj, *reversed(range(obj.rank)))
        if name == "mT":
            return transpose(ctx, obj, -2, -1)
        if name == "dtype":
            import ember

            return ember._dtype.from_numpy(obj.dtype) if hasattr(ember._dtype, "from_numpy") \
                else obj.dtype
        raise ctx.unsupported(f"Tensor.{name}")
    if isinstance(obj, tuple | list) and name in ("count", "index"):
        raise ctx.unsupported(f"getattr({type(obj).__name__}, {name!r})")
    return builtins.getattr(obj, name, *default)


@converts("builtins.len")
def len_(ctx, obj):
    if isinstance(obj, Value):
        d = ctx.dim(obj, 0)
        return d
    return builtins.len(obj)


@converts("math.sqrt")
def math_sqrt(ctx, x):
    if isinstance(x, Value):
        return ctx.unary("Sqrt", ctx.cast(x, np.float32))
    return math.sqrt(x)


# -- shape ops ---------------------------------------------------------------------------------

def _shape_args(shape):
    if len(shape) == 1 and isinstance(shape[0], tuple | list | Value):
        shape = shape[0]
        if isinstance(shape, Value):
            return shape
    return tuple(shape)


def _reshape(ctx, x, shape):
    x = ctx.tensor(x)
    parts = _shape_args(shape)
    target = parts if isinstance(parts, Value) else ctx.shape_vector(parts)
    return ctx.op("Reshape", [x, target], dtype=x.dtype)


@converts("ember.reshape", methods=("reshape", "view"))
def reshape(ctx, input, *shape):
    if len(shape) == 1 and not isinstance(shape[0], tuple | list | Value | int) and \
            shape[0] is not None:
        return to(ctx, input, shape[0])  # view(dtype)
    return _reshape(ctx, input, shape)


@converts(methods=("view_as", "reshape_as"))
def view_as(ctx, input, other):
    return ctx.op("Reshape", [ctx.tensor(input), ctx.shape_of(ctx.tensor(other))])


@converts("ember.flatten", methods=("flatten",))
def flatten(ctx, input, start_dim=0, end_dim=-1):
    x = ctx.tensor(input)
    if x.rank == 0:
        return _reshape(ctx, x, ((1,),))
    s, e = _norm_dim(start_dim, x.rank), _norm_dim(end_dim, x.rank)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return x
    if e == x.rank - 1 and s == 0:
        return _reshape(ctx, x, ((-1,),))
    if e == x.rank - 1 and s == 1:
        return ctx.op("Flatten", [x], axis=1)  # (N, rest): also for a dynamic N
    sizes = ctx.sizes(x)
    return _reshape(ctx, x, (tuple(sizes[:s]) + (-1,) + tuple(sizes[e + 1:]),))


@converts("ember.unflatten", methods=("unflatten",))
def unflatten(ctx, input, dim, sizes):
    x = ctx.tensor(input)
    d = _norm_dim(dim, x.rank)
    old = ctx.sizes(x)
    return _reshape(ctx, x, (tuple(old[:d]) + tuple(sizes) + tuple(old[d + 1:]),))


@converts("ember.transpose", "ember.swapaxes", "ember.swapdims",
          methods=("transpose", "swapaxes", "swapdims"))
def transpose(ctx, input, dim0, dim1):
    x = ctx.tensor(input)
    perm = list(range(x.rank))
    a, b = _norm_dim(dim0, x.rank), _norm_dim(dim1, x.rank)
    perm[a], perm[b] = perm[b], perm[a]
    return _transpose(ctx, x, perm)


def _transpose(ctx, x, perm):
    if perm == list(range(x.rank)):
        return x
    shape = None if x.shape is None else tuple(x.shape[p] for p in perm)
    return ctx.op("Transpose", [x], perm=list(perm), shape=shape)


@converts("ember.permute", methods=("permute",))
def permute(ctx, input, *dims):
    x = ctx.tensor(input)
    if len(dims) == 1 and isinstance(dims[0], tuple | list):
        dims = tuple(dims[0])
    return _transpose(ctx, x, [_norm_dim(d, x.rank) for d in dims])


@converts("ember.t", methods=("t",))
def t(ctx, input):
    x = ctx.tensor(input)
    return x if x.rank < 2 else transpose(ctx, x, 0, 1)


@converts("ember.unsqueeze", methods=("unsqueeze",))
def unsqueeze(ctx, input, dim):
    x = ctx.tensor(input)
    d = _norm_dim(dim, x.rank + 1)
    shape = None if x.shape is None else x.shape[:d] + (1,) + x.shape[d:]
    return ctx.op("Unsqueeze", [x, ctx.b.ints([d])], shape=shape)


@converts("ember.squeeze", methods=("squeeze",))
def squeeze(ctx, input, dim=None):
    x = ctx.tensor(input)
    if dim is None:
        axes = [i for i, s in enumerate(x.shape) if s == 1]
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
        axes = [_norm_dim(d, x.rank) for d in dims]
        axes = [a for a in axes if x.shape[a] == 1]
    if not axes:
        return x
    return ctx.op("Squeeze", [x, ctx.b.ints(axes)],
                  shape=tuple(s for i, s in enumerate(x.shape) if i not in axes))


@converts(methods=("expand",))
def expand(ctx, input, *sizes):
    x = ctx.tensor(input)
    sizes = _shape_args(sizes)
    lead = len(sizes) - x.rank
    parts = []
    for i, s in enumerate(sizes):
        if not isinstance(s, Value) and s == -1:
            if i < lead:
                raise RuntimeError("expand: -1 is not allowed in a leading, new dimension")
            parts.append(ctx.dim(x, i - lead))
        else:
            parts.append(s)
    return ctx.op("Expand", [x, ctx.shape_vector(parts)])


@converts("ember.broadcast_to", methods=("broadcast_to",))
def broadcast_to(ctx, input, size):
    return expand(ctx, input, *size)


@converts(methods=("expand_as",))
def expand_as(ctx, input, other):
    return ctx.op("Expand", [ctx.tensor(input), ctx.shape_of(ctx.tensor(other))])


@converts(methods=("repeat",))
def repeat(ctx, input, *sizes):
    x = ctx.tensor(input)
    sizes = _shape_args(sizes)
    lead = len(sizes) - x.rank
    if lead > 0:
        x = ctx.op("Reshape", [x, ctx.shape_vector((1,) * lead + ctx.sizes(x))])
    return ctx.op("Tile", [x, ctx.shape_vector(sizes)])


@converts("ember.cat", "ember.concat", "ember.concatenate")
def cat(ctx, tensors, dim=0, *, out=None):
    vals = [ctx.tensor(t) for t in tensors]
    vals = [v for v in vals if not (v.shape == (0,) and (vals[0].rank or 0) > 1)]
    dtype = result_dtype(*vals)
    axis = _norm_dim(dim, vals[0].rank)
    if builtins.len(vals) == 1:
        return ctx.b.cast(vals[0], dtype)
    return ctx.op("Concat", [ctx.b.cast(v, dtype) for v in vals], axis=axis, dtype=dtype)


@converts("ember.stack")
def stack(ctx, tensors, dim=0, *, out=None):
    vals = [ctx.tensor(t) for t in tensors]
    d = _norm_dim(dim, vals[0].rank + 1)
    return cat(ctx, [unsqueeze(ctx, v, d) for v in vals], d)


def _out_count(ctx):
    desc = ctx.out
    if desc is not None and desc[0] == "seq":
        return builtins.len(desc[2])
    return None


def _split_sizes(ctx, x, axis, split_size_or_sections):
    total = ctx.dim(x, axis)
    if isinstance(split_size_or_sections, int):
        if isinstance(total, Value):
            return None
        step = split_size_or_sections
        sizes = [step] * (total // step) + ([total % step] if total % step else [])
        return sizes or [0]
    return list(split_size_or_sections)


@converts("ember.split", methods=("split",))
def split(ctx, tensor, split_size_or_sections, dim=0):
    x = ctx.tensor(tensor)
    axis = _norm_dim(dim, x.rank)
    sizes = _split_sizes(ctx, x, axis, split_size_or_sections)
    if sizes is None:
        return _split_dynamic(ctx, x, axis, _out_count(ctx))
    return tuple(ctx.b.split(x, sizes, axis))


def _split_dynamic(ctx, x, axis, n):
    if n is None:
        raise ctx.fail("split of a dynamic axis into an unknown number of pieces")
    ctx.need_opset(18, "split/chunk of a dynamic axis")
    if n == 1:
        return (x,)
    return tuple(ctx.op("Split", [x], axis=axis, num_outputs=n, outputs=n))


@converts("ember.chunk", methods=("chunk",))
def chunk(ctx, input, chunks, dim=0):
    x = ctx.tensor(input)
    axis = _norm_dim(dim, x.rank)
    total = ctx.dim(x, axis)
    if isinstance(total, Value):
        return _split_dynamic(ctx, x, axis, _out_count(ctx) or chunks)
    step = -(-total // chunks) if total else 1
    return split(ctx, x, step, axis)


@converts("ember.unbind", methods=("unbind",))
def unbind(ctx, input, dim=0):
    x = ctx.tensor(input)
    axis = _norm_dim(dim, x.rank)
    total = ctx.dim(x, axis)
    if isinstance(total, Value):
        pieces = _split_dynamic(ctx, x, axis, _out_count(ctx))
    else:
        pieces = ctx.b.split(x, [1] * total, axis)
    return tuple(ctx.b.squeeze(p, [axis]) for p in pieces)


@converts("ember.contiguous", "ember.clone", "ember.detach",
          methods=("contiguous", "clone", "detach", "requires_grad_", "cpu", "cuda"))
def identity(ctx, input, *args, **kwargs):
    return input


# -- casts -----------------------------------------------------------------------------------

@converts(methods=("to",))
def to(ctx, input, *args, **kwargs):
    import ember

    dtype = kwargs.get("dtype")
    for a in args:
        if isinstance(a, ember.dtype):
            dtype = a
        elif isinstance(a, Value):
            dtype = a.dtype
    if dtype is None:
        return input
    return ctx.cast(input, _np_dtype(dtype))


@converts(methods=("type_as",))
def type_as(ctx, input, other):
    return ctx.cast(input, ctx.tensor(other).dtype)


@converts(methods=("type",))
def type_(ctx, input, dtype=None, non_blocking=False):  # noqa: A001
    if dtype is None:
        raise ctx.unsupported("Tensor.type() (a string result)")
    return to(ctx, input, dtype)


for _m, _dt in (("float", np.float32), ("double", np.float64), ("half", np.float16),
                ("long", np.int64), ("int", np.int32), ("short", np.int16),
                ("bool", np.bool_), ("byte", np.uint8), ("char", np.int8)):
    converts(methods=(_m,))(lambda ctx, input, memory_format=None, _dt=_dt:
                            ctx.cast(input, _dt))


"""The elementwise ops the compiler fuses, each as a C expression and its derivative rules.

NOTE [ One table for forward and backward ]
An entry gives the forward as a C expression of its operands ``{a}`` (and ``{b}``) and one
derivative rule per operand, a C expression of the operands, the result ``{r}`` and the
incoming gradient ``{g}``. The generated forward kernel evaluates the forward expressions
of a fused group in order; the backward kernel recomputes them and then walks the group
backwards, adding each rule's value to its operand's gradient (reverse-mode AD on scalars,
inside one loop). ``T`` is the element type (float or double) and the capitalised names
(``EXP``, ``TANH`` ...) are macros that the kernel header maps to the float or double C
functions. The rules are PyTorch's derivatives (``tools/autograd/derivatives.yaml``), with
its choices at the kinks (relu's gradient at 0 is 0, abs's is 0, clamp passes the gradient
where min <= x <= max).

:func:`match` turns an fx node into ``(op, operands)`` where ``op`` is a :class:`Pointwise`
bound to its scalar parameters and the operands are fx nodes or Python numbers; a node
this table does not cover (or covers only for other arguments: ``rounding_mode``, ``out=``,
``inplace=True``) is None and stays an eager op.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

__all__ = ["Pointwise", "match", "c_number"]


@dataclass(frozen=True)
class Pointwise:
    """One fusable op: ``forward`` and ``grads`` (one per operand) as C templates."""

    name: str
    forward: str
    grads: tuple


def c_number(value) -> str:
    """A Python number as a C literal of type ``T``."""
    v = float(value)
    if math.isnan(v):
        return "((T)NAN)"
    if math.isinf(v):
        return "((T)INFINITY)" if v > 0 else "(-(T)INFINITY)"
    return f"((T){v!r})"


def _unary(name, forward, grad):
    return Pointwise(name, forward, (grad,))


_ONE = "(T)1"
_TABLE = {p.name: p for p in (
    _unary("neg", "(-{a})", "(-{g})"),
    _unary("exp", "EXP({a})", "{g}*{r}"),
    _unary("log", "LOG({a})", "{g}/{a}"),
    _unary("tanh", "TANH({a})", "{g}*(" + _ONE + "-{r}*{r})"),
    _unary("sigmoid", "sigmoid_({a})", "{g}*{r}*(" + _ONE + "-{r})"),
    _unary("relu", "({a} <= (T)0 ? (T)0 : {a})", "({r} > (T)0 ? {g} : (T)0)"),
    _unary("sin", "SIN({a})", "{g}*COS({a})"),
    _unary("cos", "COS({a})", "(-{g})*SIN({a})"),
    _unary("sqrt", "SQRT({a})", "{g}/((T)2*{r})"),
    _unary("rsqrt", "(" + _ONE + "/SQRT({a}))", "((T)-0.5)*{g}*{r}*{r}*{r}"),
    _unary("abs", "FABS({a})", "{g}*(T)(({a} > (T)0) - ({a} < (T)0))"),
    _unary("reciprocal", "(" + _ONE + "/{a})", "(-{g})*{r}*{r}"),
    _unary("square", "({a}*{a})", "(T)2*{a}*{g}"),
    _unary("silu", "({a}*sigmoid_({a}))",
           "{g}*sigmoid_({a})*(" + _ONE + "+{a}*(" + _ONE + "-sigmoid_({a})))"),
    _unary("gelu", "gelu_({a})", "{g}*gelu_grad_({a})"),
    _unary("gelu_tanh", "gelu_tanh_({a})", "{g}*gelu_tanh_grad_({a})"),
    Pointwise("add", "({a}+{b})", ("{g}", "{g}")),
    Pointwise("sub", "({a}-{b})", ("{g}", "(-{g})")),
    Pointwise("mul", "({a}*{b})", ("{g}*{b}", "{g}*{a}")),
    Pointwise("div", "({a}/{b})", ("{g}/{b}", "(-{g})*{a}/({b}*{b})")),
)}


def _scaled(base: str, k) -> Pointwise:
    """add/sub with ``alpha``: a + alpha * b."""
    c = c_number(k)
    sign = "+" if base == "add" else "-"
    return Pointwise(f"{base}_alpha", f"({{a}}{sign}{c}*{{b}})",
                     ("{g}", f"({sign}{c})*{{g}}"))


def _leaky_relu(slope) -> Pointwise:
    c = c_number(slope)
    return _unary("leaky_relu", f"({{a}} > (T)0 ? {{a}} : {{a}}*{c})",
                  f"({{a}} > (T)0 ? {{g}} : {{g}}*{c})")


def _clamp(lo, hi) -> Pointwise:
    expr, keep = "{a}", []
    if hi is not None:
        expr = f"({{a}} > {c_number(hi)} ? {c_number(hi)} : {expr})"
        keep.append(f"{{a}} <= {c_number(hi)}")
    if lo is not None:
        expr = f"({{a}} < {c_number(lo)} ? {c_number(lo)} : {expr})"
        keep.append(f"{{a}} >= {c_number(lo)}")
    return _unary("clamp", expr, f"(({' && '.join(keep)}) ? {{g}} : (T)0)")


def _pow_scalar(c) -> Pointwise:
    c = float(c)
    if c == 0.0:
        return _unary("pow", _ONE, "(T)0")
    if c == 1.0:
        return _unary("pow", "{a}", "{g}")
    if c == 2.0:
        return _unary("pow", "({a}*{a})", "(T)2*{a}*{g}")
    if c == 3.0:
        return _unary("pow", "({a}*{a}*{a})", "(T)3*{a}*{a}*{g}")
    k = c_number(c)
    return _unary("pow", f"POW({{a}}, {k})", f"{{g}}*{k}*POW({{a}}, {c_number(c - 1)})")


# --- matching fx nodes ------------------------------------------------------------------

# the spelling of each op's arguments: (names of the positional parameters, defaults)
_SIGNATURES = {
    "add": (("input", "other", "alpha"), {"alpha": 1}),
    "sub": (("input", "other", "alpha"), {"alpha": 1}),
    "mul": (("input", "other"), {}),
    "div": (("input", "other", "rounding_mode"), {"rounding_mode": None}),
    "pow": (("input", "exponent"), {}),
    "clamp": (("input", "min", "max"), {"min": None, "max": None}),
    "gelu": (("input", "approximate"), {"approximate": "none"}),
    "leaky_relu": (("input", "negative_slope", "inplace"),
                   {"negative_slope": 0.01, "inplace": False}),
    "relu": (("input", "inplace"), {"inplace": False}),
    "silu": (("input", "inplace"), {"inplace": False}),
}
_UNARY_NAMES = ("neg", "negative", "exp", "log", "tanh", "sigmoid", "relu", "sin", "cos", "sqrt",
                "rsqrt", "abs", "absolute", "reciprocal", "square", "silu", "gelu")
_ALIASES = {"negative": "neg", "absolute": "abs", "multiply": "mul", "subtract": "sub",
            "divide": "div", "true_divide": "div", "clip": "clamp", "expit": "sigmoid"}
_FUNCTION_NAMES = _UNARY_NAMES + ("add", "sub", "subtract", "mul", "multiply", "div", "divide",
                                  "true_divide", "pow", "clamp", "clip", "leaky_relu")
_OPERATORS = {operator.add: "add", operator.sub: "sub", operator.mul: "mul",
              operator.truediv: "div", operator.neg: "neg", operator.pow: "pow"}
_targets: dict = {}


def _function_targets() -> dict:
    """``id(callable) -> op name`` for ember's, F's and ember.special's callables."""
    if not _targets:
        import ember
        import ember.nn.functional as F
        import ember.special

        for mod in (ember, F, ember.special):
            for name in _FUNCTION_NAMES + ("expit",):
                fn = getattr(mod, name, None)
                if fn is not None:
                    _targets[id(fn)] = (_ALIASES.get(name, name), fn)
        for fn, name in _OPERATORS.items():
            _targets[id(fn)] = (name, fn)
    return _targets


_MODULES = {"ReLU": "relu", "GELU": "gelu", "SiLU": "silu", "Sigmoid": "sigmoid", "Tanh": "tanh",
            "LeakyReLU": "leaky_relu"}


def _bind(name, args, kwargs):
    """The op's arguments by parameter name, or None for a spelling we do not fuse."""
    names, defaults = _SIGNATURES.get(name, (("input",), {}))
    if len(args) > len(names) or any(k not in names for k in kwargs):
        return None
    bound = dict(defaults)
    bound.update(zip(names, args))
    for k, v in kwargs.items():
        if k in bound and names.index(k) < len(args):
            return None
        bound[k] = v
    if any(n not in bound for n in names):
        return None
    return bound


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _resolve(name, bound):
    """(Pointwise, operands) for a bound call, or None."""
    from ember.fx.node import Node

    def operand(v):
        return v if isinstance(v, Node) or _is_number(v) else None

    a = operand(bound["input"])
    if a is None or bound.get("inplace"):
        return None
    if name in ("add", "sub", "mul", "div"):
        b = operand(bound["other"])
        if b is None or bound.get("rounding_mode") is not None:
            return None
        alpha = bound.get("alpha", 1)
        if not _is_number(alpha):
            return None
        op = _TABLE[name] if alpha == 1 else _scaled(name, alpha)
        return op, (a, b)
    if name == "pow":
        e = bound["exponent"]
        return (_pow_scalar(e), (a,)) if _is_number(e) else None
    if name == "clamp":
        lo, hi = bound["min"], bound["max"]
        if (lo is None and hi is None) or not all(v is None or _is_number(v) for v in (lo, hi)):
            return None
        return _clamp(lo, hi), (a,)
    if name == "leaky_relu":
        s = bound["negative_slope"]
        return (_leaky_relu(s), (a,)) if _is_number(s) else None
    if name == "gelu":
        approx = bound["approximate"]
        if approx not in ("none", "tanh"):
            return None
        return _TABLE["gelu" if approx == "none" else "gelu_tanh"], (a,)
    op = _TABLE.get(name)
    return (op, (a,)) if op is not None else None


def match(node, root=None):
    """``(Pointwise, operands)`` for an fx node the compiler can fuse, else None.

    ``root`` is the traced module, where ``call_module`` targets are looked up.
    """
    if node.op == "call_function":
        hit = _function_targets().get(id(node.target))
        if hit is None or hit[1] is not node.target:
            return None
        name = hit[0]
        if node.target in _OPERATORS:
            if node.kwargs:
                return None
            bound = dict(zip(("input", "other"), node.args))
            if name == "pow":
                bound = {"input": node.args[0], "exponent": node.args[1]}
            if len(node.args) != (1 if name == "neg" else 2):
                return None
        else:
            bound = _bind(name, node.args, node.kwargs)
    elif node.op == "call_method":
        if not node.args:
            return None
        name = _ALIASES.get(node.target, node.target)
        if name not in _TABLE and name not in _SIGNATURES or name in ("gelu", "silu",
                                                                      "leaky_relu"):
            return None
        bound = _bind(name, node.args, node.kwargs)
    elif node.op == "call_module" and root is not None:
        mod = root.get_submodule(node.target)
        name = _MODULES.get(type(mod).__name__)
        if name is None or type(mod).__module__.split(".")[0] != "ember" or node.kwargs \
                or len(node.args) != 1 or getattr(mod, "inplace", False):
            return None
        bound = {"input": node.args[0]}
        if name == "gelu":
            bound["approximate"] = mod.approximate
        elif name == "leaky_relu":
            bound["negative_slope"] = mod.negative_slope
    else:
        return None
    if bound is None:
        return None
    return _resolve(name, bound)


def match_reduction(node, ndim: int):
    """``(kind, keepdim, input, r)`` for a sum or mean over the last ``r`` of ``ndim``
    dimensions (``x.sum(-1)``, ``ember.mean(x, dim=(-2, -1), keepdim=True)``, ``x.sum()``
    over all of them), else None."""
    from ember.fx.node import Node

    if node.op == "call_method":
        name = node.target
    elif node.op == "call_function":
        import ember

        name = next((n for n in ("sum", "mean") if getattr(ember, n) is node.target), None)
    else:
        return None
    if name not in ("sum", "mean") or not node.args or not isinstance(node.args[0], Node):
        return None
    names = ("input", "dim", "keepdim")
    if len(node.args) > 3 or any(k not in names[1:] for k in node.kwargs):
        return None
    bound = {"keepdim": False, **dict(zip(names, node.args)), **node.kwargs}
    if not isinstance(bound["keepdim"], bool):
        return None
    dim = bound.get("dim")
    if dim is None:  # every dimension (x.sum(), x.mean())
        return (name, bound["keepdim"], bound["input"], ndim) if ndim else None
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    if not dims or any(not isinstance(d, int) or isinstance(d, bool) or not -ndim <= d < ndim
                       for d in dims):
        return None
    dims = sorted(d % ndim for d in dims)
    if dims != list(range(ndim - len(dims), ndim)):
        return None  # not the trailing dimensions (or one twice: eager raises for it)
    return name, bound["keepdim"], bound["input"], len(dims)

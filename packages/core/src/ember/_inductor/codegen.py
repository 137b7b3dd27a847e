"""C source for a fused group of elementwise ops: the forward loop and the backward loop.

A group computes a few outputs of one shape (the *domain*, ``n`` elements in C order) from
inputs that are either of that shape or broadcast to it. An input broadcast along leading
and trailing dimensions of the domain (``b`` of shape ``(C,)`` or ``(C, 1)`` against
``(N, C, L)``, a scalar, a column) is one *block* of consecutive domain dimensions and is
read at ``(i / inner) % mid``: no index arrays and no per-dimension arithmetic. Other
broadcasts are not fused (the op stays eager).

The forward loop loads each input once, evaluates the steps (NOTE [ One table for forward
and backward ] in pointwise.py) in registers and stores the outputs. The backward loop
recomputes the steps from the inputs (recomputing costs a few flops per element; saving the
intermediates would cost memory bandwidth, which is what the loop is bound by) and then
accumulates the adjoints in reverse order; an input's gradient is written at full domain
size and summed back to the input's shape by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass

from ember._inductor.pointwise import Pointwise, c_number

__all__ = ["Operand", "Step", "KernelSpec", "broadcast_block", "generate_source"]

_CHUNK = 1 << 16  # elements per OpenMP task
_PARALLEL_MIN = 1 << 22  # below this, one thread beats waking (and waiting for) a team


@dataclass(frozen=True)
class Operand:
    """An operand of a step: input ``k`` ("in"), an earlier step ``k`` ("t"), or a number
    ("c")."""

    kind: str
    value: object


@dataclass(frozen=True)
class Step:
    op: Pointwise
    operands: tuple
    label: str  # the fx node's name, as a comment in the source


@dataclass
class KernelSpec:
    """Everything the source depends on."""

    dtype: str  # "float32" or "float64"
    blocks: list  # per input: (start, stop) of its block of domain dims, or None (scalar)
    domain: tuple | None  # the domain shape; None for a kernel of any shape (dynamic)
    steps: list
    outputs: list  # indices of the steps that are the group's outputs
    openmp: bool = True
    # a trailing sum or mean over the trailing domain dimensions: (step index, scale, the
    # elements of a row), its result the last output (one value per row)
    reduction: tuple | None = None


def broadcast_block(shape, domain):
    """``(start, stop)``: the domain dimensions ``shape`` spans, when ``shape`` (aligned
    to the right) equals the domain on them and is 1 elsewhere; ``None`` for one element;
    raises ValueError for a broadcast that is not one block."""
    shape, domain = tuple(shape), tuple(domain)
    if len(shape) > len(domain):
        raise ValueError("input has more dimensions than the domain")
    aligned = (1,) * (len(domain) - len(shape)) + shape
    dims = [d for d, s in enumerate(aligned) if s != 1 and domain[d] != 1]
    if any(aligned[d] != domain[d] for d in range(len(domain)) if aligned[d] != 1):
        raise ValueError("not a broadcast of the domain")
    if not dims:
        return None
    lo, hi = dims[0], dims[-1] + 1
    if any(aligned[d] != domain[d] for d in range(lo, hi)):
        raise ValueError("a broadcast that is not one block of dimensions")
    return lo, hi


def _prod(xs) -> int:
    p = 1
    for x in xs:
        p *= int(x)
    return p


_HEADER = {
    "float32": "typedef float T;\n" + "".join(
        f"#define {m} {f}f\n" for m, f in (("EXP", "exp"), ("LOG", "log"), ("TANH", "tanh"),
                                           ("SIN", "sin"), ("COS", "cos"), ("SQRT", "sqrt"),
                                           ("FABS", "fabs"), ("POW", "pow"), ("ERF", "erf"))),
    "float64": "typedef double T;\n" + "".join(
        f"#define {m} {f}\n" for m, f in (("EXP", "exp"), ("LOG", "log"), ("TANH", "tanh"),
                                          ("SIN", "sin"), ("COS", "cos"), ("SQRT", "sqrt"),
                                          ("FABS", "fabs"), ("POW", "pow"), ("ERF", "erf"))),
}

# glibc's vector math library (libmvec) has SIMD versions of these; declaring them
# "omp declare simd" lets gcc vectorize the loops without -ffast-math (which would change
# NaN and infinity semantics). math.h declares them so only under __FAST_MATH__.
_MVEC_FUNCTIONS = ("exp", "log", "tanh", "sin", "cos", "pow", "erf")


def _mvec_declarations() -> str:
    lines = ["#ifdef EMBER_MVEC"]
    for f in _MVEC_FUNCTIONS:
        args_f = "float, float" if f == "pow" else "float"
        args_d = "double, double" if f == "pow" else "double"
        lines += ["#pragma omp declare simd notinbranch", f"float {f}f({args_f});",
                  "#pragma omp declare simd notinbranch", f"double {f}({args_d});"]
    lines.append("#endif")
    return "\n".join(lines) + "\n"


_HELPERS = r"""
#pragma omp declare simd notinbranch
static inline T sigmoid_(T x) { return (T)1 / ((T)1 + EXP(-x)); }
static inline T gelu_(T x) { return (T)0.5 * x * ((T)1 + ERF(x * (T)0.70710678118654752440)); }
static inline T gelu_grad_(T x) {
    return (T)0.5 * ((T)1 + ERF(x * (T)0.70710678118654752440))
        + x * EXP((T)-0.5 * x * x) * (T)0.39894228040143267794;
}
static inline T gelu_tanh_(T x) {
    T u = (T)0.79788456080286535588 * (x + (T)0.044715 * x * x * x);
    return (T)0.5 * x * ((T)1 + TANH(u));
}
static inline T gelu_tanh_grad_(T x) {
    T x2 = x * x;
    T t = TANH((T)0.79788456080286535588 * (x + (T)0.044715 * x2 * x));
    return (T)0.5 * ((T)1 + t)
        + (T)0.5 * x * ((T)1 - t * t) * (T)0.79788456080286535588 * ((T)1 + (T)0.134145 * x2);
}
"""

_ENTRY = r"""
static PyObject* py_@NAME@(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != @NARGS@) {
        PyErr_SetString(PyExc_TypeError, "@NAME@: wrong number of arguments");
        return NULL;
    }
    int64_t n = PyLong_AsLongLong(args[0]);
    if (n == -1 && PyErr_Occurred()) return NULL;
    int64_t p[@NPARAMS1@];
    for (int j = 0; j < @NPARAMS@; j++) {
        p[j] = PyLong_AsLongLong(args[1 + @NBUF@ + j]);
        if (p[j] == -1 && PyErr_Occurred()) return NULL;
    }
    Py_buffer b[@NBUF@];
    void* ptr[@NBUF@];
    int got = 0;
    for (int j = 0; j < @NBUF@; j++) {
        if (args[1 + j] == Py_None) { ptr[j] = NULL; continue; }
        int flags = j >= @NREAD@ ? PyBUF_WRITABLE : PyBUF_SIMPLE;
        if (PyObject_GetBuffer(args[1 + j], &b[j], flags) < 0) {
            for (int k = 0; k < j; k++) if (args[1 + k] != Py_None) PyBuffer_Release(&b[k]);
            return NULL;
        }
        ptr[j] = b[j].buf;
        got++;
    }
    if (n >= @PARALLEL@) {
        Py_BEGIN_ALLOW_THREADS
        @NAME@_loop(n, ptr, p);
        Py_END_ALLOW_THREADS
    } else {
        @NAME@_loop(n, ptr, p);
    }
    for (int j = 0; j < @NBUF@; j++) if (args[1 + j] != Py_None) PyBuffer_Release(&b[j]);
    (void)got;
    Py_RETURN_NONE;
}
"""

_MODULE = r"""
static PyMethodDef methods[] = {
    {"forward", (PyCFunction)(void(*)(void))py_forward, METH_FASTCALL, "the fused forward"},
    {"backward", (PyCFunction)(void(*)(void))py_backward, METH_FASTCALL, "the fused backward"},
    {NULL, NULL, 0, NULL}
};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "@MODULE@", NULL, -1, methods};
PyMODINIT_FUNC PyInit_@MODULE@(void) { return PyModule_Create(&module); }
"""


def _index_exprs(spec: KernelSpec) -> tuple:
    """Per input, the C expression of its element index; and the number of runtime
    parameters (a dynamic kernel reads inner/mid of each block from ``p``)."""
    exprs, nparams = [], 0
    for block in spec.blocks:
        if block is None:
            exprs.append("0")
            continue
        if block == "full":
            exprs.append("i")
            continue
        lo, hi = block
        if spec.domain is not None:
            inner, mid = _prod(spec.domain[hi:]), _prod(spec.domain[lo:hi])
            if lo == 0 or all(s == 1 for s in spec.domain[:lo]):
                exprs.append("i" if inner == 1 else f"(i / {inner})")
            else:
                exprs.append(f"(i % {mid})" if inner == 1 else f"((i / {inner}) % {mid})")
            continue
        exprs.append(f"((i / p[{nparams}]) % p[{nparams + 1}])")
        nparams += 2
    return exprs, nparams


def _arg(operand: Operand, inputs: list) -> str:
    if operand.kind == "in":
        return inputs[operand.value]
    if operand.kind == "t":
        return f"t{operand.value}"
    return c_number(operand.value)


def _subst(template: str, operands, r="", g="") -> str:
    names = dict(zip("ab", operands))
    return template.format(a=names.get("a", ""), b=names.get("b", ""), r=r, g=g)


def _loop(name: str, body: list, pointers: list, omp: bool, reduce=None) -> str:
    """``<name>_loop(n, ptr, p)``: the elements in chunks, the chunks on OpenMP threads
    for large n (the vectorized loop is a function of its own: inside an OpenMP-outlined
    loop gcc loses the pointers' ``restrict`` and stops vectorizing). With ``reduce`` =
    (row length K, accumulated value, scale, output), ``n`` counts rows of K elements and
    each row's sum (times scale) is stored."""
    lines = [f"static void {name}_range(int64_t lo, int64_t hi, void** ptr, const int64_t* p) {{",
             "    (void)p;"]
    lines += [f"    {decl} = ({kind})ptr[{k}];" for k, (kind, decl) in enumerate(pointers)]
    chunk = _CHUNK
    if reduce is None:
        lines.append("    #pragma omp simd")
        lines.append("    for (int64_t i = lo; i < hi; i++) {")
        lines += ["        " + s for s in body]
        lines += ["    }"]
    else:
        k, acc, scale, out = reduce
        chunk = max(1, _CHUNK // max(k, 1))
        lines += ["    for (int64_t row = lo; row < hi; row++) {",
                  "        double acc = 0;  /* float32 rows too: long rows keep their digits */",
                  "        #pragma omp simd reduction(+:acc)",
                  f"        for (int64_t j = 0; j < {k}; j++) {{",
                  f"            const int64_t i = row * {k} + j;"]
        lines += ["            " + s for s in body]
        lines += [f"            acc += {acc};", "        }",
                  f"        {out}[row] = (T)(acc * {scale});", "    }"]
    lines += ["}", "",
              f"static void {name}_loop(int64_t n, void** ptr, const int64_t* p) {{"]
    if omp:
        threshold = _PARALLEL_MIN if reduce is None else max(1, _PARALLEL_MIN // max(reduce[0], 1))
        lines += [f"    if (n >= {threshold}) {{",
                  f"        int64_t chunks = (n + {chunk - 1}) / {chunk};",
                  "        #pragma omp parallel for schedule(static)",
                  "        for (int64_t c = 0; c < chunks; c++) {",
                  f"            int64_t hi = (c + 1) * {chunk};",
                  f"            {name}_range(c * {chunk}, hi < n ? hi : n, ptr, p);",
                  "        }",
                  "        return;",
                  "    }"]
    lines += [f"    {name}_range(0, n, ptr, p);", "}"]
    return "\n".join(lines)


def _forward_steps(spec: KernelSpec, inputs: list) -> list:
    body = []
    for j, step in enumerate(spec.steps):
        args = [_arg(o, inputs) for o in step.operands]
        body.append(f"const T t{j} = {_subst(step.op.forward, args)};  /* {step.label} */")
    return body


def generate_source(spec: KernelSpec) -> str:
    """The C file of a kernel module (its module name still ``@MODULE@``)."""
    nin, nfull = len(spec.blocks), len(spec.outputs)
    nout = nfull + (spec.reduction is not None)
    idx, nparams = _index_exprs(spec)
    inputs = [f"x{k}" for k in range(nin)]
    loads = [f"const T x{k} = in{k}[{idx[k]}];" for k in range(nin)]

    fwd_ptrs = ([("const T* restrict", f"const T* restrict in{k}") for k in range(nin)]
                + [("T* restrict", f"T* restrict out{k}") for k in range(nout)])
    fwd_body = loads + _forward_steps(spec, inputs) + [
        f"out{k}[i] = t{j};" for k, j in enumerate(spec.outputs)]
    reduce = None
    if spec.reduction is not None:
        step, scale, row = spec.reduction
        reduce = (row, f"t{step}", c_number(scale), f"out{nfull}")

    bwd_ptrs = ([("const T* restrict", f"const T* restrict in{k}") for k in range(nin)]
                + [("const T* restrict", f"const T* restrict gout{k}") for k in range(nout)]
                + [("T* restrict", f"T* restrict gin{k}") for k in range(nin)])
    bwd_body = loads + _forward_steps(spec, inputs)
    bwd_body += [f"T d{j} = 0;" for j in range(len(spec.steps))]
    bwd_body += [f"T e{k} = 0;" for k in range(nin)]
    bwd_body += [f"d{j} += gout{k}[i];" for k, j in enumerate(spec.outputs)]
    if reduce is not None:  # the reduced value's gradient, broadcast back along its row
        bwd_body.append(f"d{spec.reduction[0]} += gout{nfull}[i / {reduce[0]}] * "
                        f"{reduce[2]};")
    for j in reversed(range(len(spec.steps))):
        step = spec.steps[j]
        args = [_arg(o, inputs) for o in step.operands]
        for o, rule in zip(step.operands, step.op.grads):
            if o.kind == "c":
                continue
            target = f"d{o.value}" if o.kind == "t" else f"e{o.value}"
            bwd_body.append(f"{target} += {_subst(rule, args, r=f't{j}', g=f'd{j}')};"
                            f"  /* {step.label} */")
    bwd_body += [f"gin{k}[i] = e{k};" for k in range(nin)]  # unconditional: vectorizes

    def entry(name, nbuf, nread):
        return (_ENTRY.replace("@NAME@", name).replace("@NARGS@", str(1 + nbuf + nparams))
                .replace("@NPARAMS1@", str(max(nparams, 1))).replace("@NPARAMS@", str(nparams))
                .replace("@NBUF@", str(nbuf)).replace("@NREAD@", str(nread))
                .replace("@PARALLEL@", str(_PARALLEL_MIN)))

    parts = ["/* generated by ember.compile (ember._inductor.codegen) */",
             "#define PY_SSIZE_T_CLEAN", "#include <Python.h>", "#include <math.h>",
             "#include <stdint.h>", _mvec_declarations(), _HEADER[spec.dtype] + _HELPERS,
             _loop("forward", fwd_body, fwd_ptrs, spec.openmp, reduce),
             entry("forward", nin + nout, nin),
             _loop("backward", bwd_body, bwd_ptrs, spec.openmp),
             entry("backward", 2 * nin + nout, nin + nout),
             _MODULE]
    return "\n".join(parts)

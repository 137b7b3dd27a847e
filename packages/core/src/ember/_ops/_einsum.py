"""einsum: the equation parser, the parsed-equation cache, the node and its backward.

Private to the products family: ``ember._ops.linalg`` re-exports :func:`einsum`.
"""

from __future__ import annotations

import math

import numpy as np

from ember._C._core import Node
from ember._ops._util import TensorBase, apply, type_name, xp_of
from ember._ops._util import conj as _conj

__all__ = ["einsum"]

# NOTE [ einsum labels ]
# An equation is parsed into integer labels per operand: letters keep their code point
# and each dim covered by an ellipsis gets a label of its own (right-aligned across
# operands, so ellipsis dims broadcast). The array call rewrites the labels as letters.
# The gradient of each operand is another einsum: the output gradient times the
# other operands (conjugated), keeping the operand's labels. Labels that appear in
# the operand only (summed there) are brought back with a ones vector, and a label
# repeated in the operand (a diagonal) with an identity matrix, so that every
# gradient is itself an einsum and can be differentiated again.

_ELLIPSIS_BASE = 1000


class _EinsumSpec:
    __slots__ = ("inputs", "output", "sizes", "equation", "optimize", "to_int64")

    def __init__(self, inputs, output, sizes):
        self.inputs, self.output, self.sizes = inputs, output, sizes
        used = sorted({lab for labels in inputs for lab in labels} | set(output))
        if len(used) > 52:
            raise RuntimeError(f"einsum(): too many distinct subscripts ({len(used)}); at "
                               "most 52 are supported")
        letters = dict(zip(used, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"))
        self.equation = ",".join("".join(letters[x] for x in labels) for labels in inputs) \
            + "->" + "".join(letters[x] for x in output)
        work = math.prod(sizes[x] for x in used) if used else 1
        self.optimize = "greedy" if len(inputs) > 1 and work > 1 << 14 else False
        self.to_int64 = False


def _label_sizes(inputs, shapes):
    sizes = {}
    for labels, shape in zip(inputs, shapes):
        for lab, s in zip(labels, shape):
            prev = sizes.get(lab)
            if prev is None or prev == 1:
                sizes[lab] = s
    return sizes


class Einsum(Node):
    def forward(self, spec, *arrays):
        self.spec = spec
        xp = xp_of(arrays[0])
        if spec.to_int64:
            arrays = [x.astype(np.int64) for x in arrays]
        out = xp.einsum(spec.equation, *arrays, optimize=spec.optimize)
        if not isinstance(out, xp.ndarray):
            return xp.asarray(out)
        if any(xp.may_share_memory(out, x) for x in arrays):
            out = out.copy()  # a transpose or diagonal of an input: give it its own memory
        return out

    def backward(self, g):
        from ember._ops.reduction import sum_to

        spec = self.spec
        ops = self.saved_tensors
        need = self.needs_input_grad
        grads = [None]
        for k, op in enumerate(ops):
            if not need[k + 1]:
                grads.append(None)
                continue
            grads.append(sum_to(_einsum_operand_grad(spec, ops, k, g), op.shape))
        return tuple(grads)


_EINSUM_NODES: dict = {}


def _einsum_node(n):
    cls = _EINSUM_NODES.get(n)
    if cls is None:
        cls = type("Einsum", (Einsum,), {"saves_inputs": tuple(range(1, n + 1))})
        _EINSUM_NODES[n] = cls
    return cls


def _einsum_labels(tensors, inputs, output):
    """einsum on label lists (no parsing); ``tensors`` share one dtype."""
    spec = _EinsumSpec(tuple(tuple(x) for x in inputs), tuple(output),
                       _label_sizes(inputs, [t._data.shape for t in tensors]))
    return apply(_einsum_node(len(tensors)), spec, *tensors)


def _einsum_operand_grad(spec, ops, k, g):
    """The gradient of operand ``k`` of einsum ``spec`` for the output gradient ``g``."""
    from ember._ops.creation import eye, ones

    labels = spec.inputs[k]
    tensors = [g] + [_conj(op) for j, op in enumerate(ops) if j != k]
    term_labels = [spec.output] + [spec.inputs[j] for j in range(len(ops)) if j != k]
    available = {lab for lbls in term_labels for lab in lbls}
    unique = list(dict.fromkeys(labels))
    kept = [lab for lab in unique if lab in available]
    grad = _einsum_labels(tensors, term_labels, kept)
    full = [spec.sizes[lab] for lab in kept]
    if list(grad._data.shape) != full:  # a label broadcast from size 1 in the others
        grad = grad.expand(*full)
    if kept == list(labels):
        return grad
    # labels summed inside this operand only come back through ones vectors, repeated
    # labels (diagonals) through identity matrices
    extra, extra_labels = [], []
    for lab in unique:
        if lab not in available:
            extra.append(ones(spec.sizes[lab], dtype=g.dtype, device=g.device))
            extra_labels.append((lab,))
    target, seen, fresh = [], set(), max(max(spec.sizes), _ELLIPSIS_BASE) + 1
    for lab in labels:
        if lab in seen:
            extra.append(eye(spec.sizes[lab], dtype=g.dtype, device=g.device))
            extra_labels.append((lab, fresh))
            target.append(fresh)
            fresh += 1
        else:
            seen.add(lab)
            target.append(lab)
    return _einsum_labels([grad] + extra, [kept] + extra_labels, target)


def _parse_term(eq, start, stop, k, where):
    """Labels of one term of the equation (-1 marks the ellipsis)."""
    labels = []
    i = start
    while i < stop:
        c = eq[i]
        if c == " ":
            i += 1
            continue
        if c == ".":
            if -1 in labels:
                raise RuntimeError(
                    f"einsum(): found '.' for {where} for which an ellipsis was already found")
            if eq[i:i + 3] != "...":
                raise RuntimeError(
                    f"einsum(): found '.' for {where} that is not part of any ellipsis")
            labels.append(-1)
            i += 3
            continue
        if not ("a" <= c <= "z" or "A" <= c <= "Z"):
            raise RuntimeError(
                f"einsum(): invalid subscript given at index {i} in the equation string, "
                "subscripts must be in [a-zA-Z]")
        labels.append(ord(c))
        i += 1
    return labels


def _parse_sublists(args):
    """``einsum(op0, sub0, op1, sub1, ..., [out])`` as (equation, operands)."""
    def term(sub):
        out = []
        for s in sub:
            if s is Ellipsis:
                out.append("...")
            elif isinstance(s, int) and 0 <= s < 52:
                out.append(chr(ord("A") + s) if s < 26 else chr(ord("a") + s - 26))
            else:
                raise ValueError("einsum(): subscript in subscript list is not within the "
                                 "valid range [0, 52)")
        return "".join(out)

    operands = list(args[0::2][:len(args) // 2])
    terms = [term(s) for s in args[1::2][:len(args) // 2]]
    equation = ",".join(terms)
    if len(args) % 2:
        equation += "->" + term(args[-1])
    return equation, operands


def _parse_einsum(equation, operands):
    arrow = equation.find("->")
    lhs_stop = arrow if arrow >= 0 else len(equation)
    terms, start = [], 0
    for i in range(lhs_stop + 1):
        if i == lhs_stop or equation[i] == ",":
            k = len(terms)
            if k >= len(operands):
                raise RuntimeError(
                    "einsum(): fewer operands were provided than specified in the equation")
            terms.append(_parse_term(equation, start, i, k, f"operand {k}"))
            start = i + 1
    if len(terms) < len(operands):
        raise RuntimeError(
            "einsum(): more operands were provided than specified in the equation")
    # ellipsis dims and label sizes
    ell_dims = []
    for k, (labels, op) in enumerate(zip(terms, operands)):
        nlab = len([x for x in labels if x != -1])
        ndim = op._data.ndim
        if -1 in labels:
            if nlab > ndim:
                raise RuntimeError(
                    f"einsum(): the number of subscripts in the equation ({nlab}) is more than "
                    f"the number of dimensions ({ndim}) for operand {k}")
        elif nlab != ndim:
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({nlab}) does not match "
                f"the number of dimensions ({ndim}) for operand {k} and no ellipsis was given")
        ell_dims.append(ndim - nlab)
    n_ell = max(ell_dims) if ell_dims else 0
    inputs, sizes = [], {}
    for k, (labels, op, ne) in enumerate(zip(terms, operands, ell_dims)):
        full = []
        for lab in labels:
            if lab == -1:
                full.extend(_ELLIPSIS_BASE + n_ell - ne + t for t in range(ne))
            else:
                full.append(lab)
        shape = op._data.shape
        own = {}
        for d, (lab, s) in enumerate(zip(full, shape)):
            if lab in own:
                if own[lab] != s:
                    raise RuntimeError(f"einsum(): subscript {chr(lab)} is repeated for operand "
                                       f"{k} but the sizes don't match, {s} != {own[lab]}")
                continue
            own[lab] = s
            prev = sizes.get(lab)
            if prev is not None and prev != s and prev != 1 and s != 1:
                if lab >= _ELLIPSIS_BASE:
                    raise RuntimeError(
                        f"einsum(): dimension {d} covered by ellipsis in operand {k}has size "
                        f"{s} which does not broadcast with previously seen ellipsis with size "
                        f"{prev} for the respective dimension")
                raise RuntimeError(
                    f"einsum(): subscript {chr(lab)} has size {s} for operand {k} which does "
                    f"not broadcast with previously seen size {prev}")
            if prev is None or prev == 1:
                sizes[lab] = s
        inputs.append(tuple(full))
    ell = [_ELLIPSIS_BASE + t for t in range(n_ell)]
    if arrow >= 0:
        out_terms = _parse_term(equation, arrow + 2, len(equation), 0, "output")
        output = []
        for lab in out_terms:
            if lab == -1:
                output.extend(ell)
                continue
            if lab not in sizes:
                raise RuntimeError(f"einsum(): output subscript {chr(lab)} does not appear in "
                                   "the equation for any input operand")
            if lab in output:
                raise RuntimeError(
                    f"einsum(): output subscript {chr(lab)} appears more than once in the output")
            output.append(lab)
    else:
        counts: dict = {}
        for labels in inputs:
            for lab in labels:
                counts[lab] = counts.get(lab, 0) + 1
        output = ell + sorted(lab for lab, c in counts.items()
                              if c == 1 and lab < _ELLIPSIS_BASE)
    return inputs, tuple(output), sizes


def einsum(*args):
    """Sums of products of the operands' elements, named by Einstein notation.

    ``einsum(equation, *operands)``: the equation names each operand's dims with
    letters (``"ij,jk->ik"`` is a matrix product); letters left out of the output are
    summed; ``...`` stands for dims that broadcast; without ``->`` the output holds the
    letters seen once, in alphabetical order. The sublist form ``einsum(op1, [0, 1],
    op2, [1, 2], [0, 2])`` is accepted too.

    Examples::

        >>> a = ember.arange(9.).reshape(3, 3)
        >>> ember.einsum("ii", a)        # trace
        tensor(12.)
        >>> ember.einsum("ii->i", a)     # diagonal
        tensor([0., 4., 8.])
    """
    if not args:
        raise ValueError("einsum(): must specify the equation string and at least one "
                         "operand, or at least one operand and its subscripts list")
    if isinstance(args[0], str):
        equation, operands = args[0], list(args[1:])
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = list(operands[0])
    else:
        equation, operands = _parse_sublists(args)
    if not operands:
        raise ValueError("einsum(): must specify the equation string and at least one "
                         "operand, or at least one operand and its subscripts list")
    for i, op in enumerate(operands):
        if not isinstance(op, TensorBase):
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got "
                            f"{type(op).__name__}")
    dt = operands[0]._data.dtype
    for op in operands[1:]:
        if op._data.dtype != dt:
            raise RuntimeError(f"expected scalar type {type_name(dt)} but found "
                               f"{type_name(op._data.dtype)}")
    key = (equation, dt, tuple(op._data.shape for op in operands))
    spec = _SPEC_CACHE.get(key)
    if spec is None:
        inputs, output, sizes = _parse_einsum(equation, operands)
        spec = _EinsumSpec(tuple(inputs), output, sizes)
        summed = {lab for labels in inputs for lab in labels} - set(output)
        if dt.kind in "biu" and len(operands) == 1 and summed:
            spec.to_int64 = True  # a plain sum, which gives int64 for integers and bools
        elif dt.kind == "b" and summed:
            raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
        if len(_SPEC_CACHE) >= 512:
            _SPEC_CACHE.clear()
        _SPEC_CACHE[key] = spec
    return apply(_einsum_node(len(operands)), spec, *operands)


# parsed equations by (equation, dtype, operand shapes): a training loop calls the same few
_SPEC_CACHE: dict = {}

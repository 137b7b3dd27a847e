"""OpInfos for products: matmul and relatives, the add-product family, einsum,
tensordot, kron, cross and trace."""

from __future__ import annotations

import numpy as np

import ember
from ember.testing._opinfo.core import FLOATING, OpInfo, SampleInput, arr

_WITH_INT = FLOATING + (np.int64,)

# (input shape, other shape): 1-d cases, batches that broadcast, empty dims
_MATMUL_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3,)),
    ((3,), (5, 3, 4)), ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)),
    ((2, 1, 2, 3), (3, 3, 4)), ((0, 3), (3, 2)), ((2, 0), (0, 2)),
]


def _pairs(shapes, low=-3, high=3):
    def samples(dtype, rng):
        for sa, sb in shapes:
            yield SampleInput(arr(rng, sa, dtype, low, high), (arr(rng, sb, dtype, low, high),))
    return samples


def _triples(shapes, kwargs_list=({},)):
    def samples(dtype, rng):
        for kw in kwargs_list:
            if np.dtype(dtype).kind in "iu":
                kw = {k: int(v) for k, v in kw.items()}
            for s0, s1, s2 in shapes:
                yield SampleInput(arr(rng, s0, dtype), (arr(rng, s1, dtype), arr(rng, s2, dtype)),
                                  dict(kw))
    return samples


_SCALARS = ({}, {"beta": 0.5, "alpha": 2.0}, {"beta": 0.0, "alpha": -1.5})


def _add_ref(product):
    def ref(input, a, b, beta=1, alpha=1):
        p = product(a, b)
        return alpha * p if beta == 0 else beta * input + alpha * p
    return ref


def _t(name):
    return lambda torch: getattr(torch, name)


def _einsum_samples(cases):
    def samples(dtype, rng):
        for eq, shapes in cases:
            yield SampleInput(eq, tuple(arr(rng, s, dtype) for s in shapes), name=eq)
    return samples


_EINSUM_CASES = {
    "einsum_contract": [("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]),
                        ("i,i->", [(3,), (3,)]), ("i,j->ij", [(2,), (3,)]),
                        ("ij,jk", [(2, 3), (3, 4)]),
                        ("bn,anm,bm->ba", [(2, 3), (4, 3, 2), (2, 2)])],
    "einsum_repeated": [("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ii->", [(3, 3)]),
                        ("iij->ij", [(3, 3, 2)]), ("iij,j->i", [(3, 3, 2), (2,)]),
                        ("ii,i->i", [(3, 3), (3,)])],
    "einsum_sum_permute": [("ij->", [(2, 3)]), ("ij->j", [(2, 3)]), ("ij->ji", [(2, 3)]),
                           ("ab,cd->", [(2, 3), (2, 2)])],
    "einsum_ellipsis": [("...ij,...jk->...ik", [(2, 1, 2, 3), (3, 3, 2)]),
                        ("b...->...b", [(2, 3, 4)]), ("i...->...", [(2, 3)]),
                        ("...i,...i->...", [(4, 3), (3,)])],
    "einsum_broadcast": [("ij,ij->ij", [(2, 1), (2, 3)]), ("ij,jk->ik", [(2, 1), (3, 4)])],
}


def _tensordot_samples(dtype, rng):
    for sa, sb, dims in [((2, 3), (3, 4), 1), ((4, 3, 5), (3, 5, 2), 2), ((2, 3), (3, 4), 0),
                         ((4, 3, 5), (4, 5, 2), ([2, 0], [1, 0])),
                         ((2, 3), (4, 3), ([-1], [-1])), ((3,), (3,), 1)]:
        yield SampleInput(arr(rng, sa, dtype), (arr(rng, sb, dtype),), {"dims": dims})


def _cross_samples(dtype, rng):
    for sa, sb, dim in [((2, 3), (2, 3), 1), ((3, 2), (3, 2), 0), ((4, 3), (1, 3), -1),
                        ((2, 5, 3), (1, 5, 3), 2)]:
        yield SampleInput(arr(rng, sa, dtype), (arr(rng, sb, dtype), dim))


def _trace_samples(dtype, rng):
    for shape in [(3, 3), (2, 4), (4, 2), (0, 3), (1, 1)]:
        yield SampleInput(arr(rng, shape, dtype))


def _addbmm_np(a, b):
    return np.einsum("bij,bjk->ik", a, b)


OPS = [
    OpInfo("matmul", ember.matmul, _pairs(_MATMUL_SHAPES), ref=np.matmul, dtypes=_WITH_INT,
           torch_op=_t("matmul"), method="matmul", gradgrad=True),
    OpInfo("matmul_operator", lambda a, b: a @ b, _pairs(_MATMUL_SHAPES[:6]),
           ref=lambda a, b: a @ b, torch_op=lambda torch: lambda a, b: a @ b),
    OpInfo("mm", ember.mm, _pairs([((2, 3), (3, 4)), ((1, 5), (5, 1)), ((0, 2), (2, 3))]),
           ref=np.matmul, dtypes=_WITH_INT, torch_op=_t("mm"), method="mm"),
    OpInfo("bmm", ember.bmm, _pairs([((2, 2, 3), (2, 3, 4)), ((1, 3, 1), (1, 1, 2))]),
           ref=np.matmul, dtypes=_WITH_INT, torch_op=_t("bmm"), method="bmm"),
    OpInfo("mv", ember.mv, _pairs([((2, 3), (3,)), ((1, 4), (4,))]), ref=np.matmul,
           dtypes=_WITH_INT, torch_op=_t("mv"), method="mv"),
    OpInfo("dot", ember.dot, _pairs([((3,), (3,)), ((1,), (1,)), ((0,), (0,))]), ref=np.dot,
           dtypes=_WITH_INT, torch_op=_t("dot"), method="dot"),
    OpInfo("vdot", ember.vdot, _pairs([((3,), (3,)), ((5,), (5,))]), ref=np.vdot,
           dtypes=FLOATING + (np.complex128,), torch_op=_t("vdot"), method="vdot"),
    OpInfo("inner", ember.inner, _pairs([((2, 3), (4, 3)), ((2, 5, 3), (4, 3)), ((3,), (3,)),
                                         ((), (4, 3))]),
           ref=np.inner, dtypes=_WITH_INT, torch_op=_t("inner"), method="inner"),
    OpInfo("outer", ember.outer, _pairs([((2,), (3,)), ((1,), (4,)), ((0,), (2,))]),
           ref=np.outer, dtypes=_WITH_INT, torch_op=_t("outer"), method="outer"),
    OpInfo("ger", ember.ger, _pairs([((2,), (3,))]), ref=np.outer, torch_op=_t("ger"),
           method="ger"),
    OpInfo("addmm", ember.addmm,
           _triples([((3,), (2, 4), (4, 3)), ((2, 3), (2, 4), (4, 3)), ((2, 1), (2, 4), (4, 3))],
                    _SCALARS),
           ref=_add_ref(np.matmul), dtypes=_WITH_INT, torch_op=_t("addmm"), method="addmm",
           gradgrad=True),
    OpInfo("addmv", ember.addmv, _triples([((2,), (2, 4), (4,)), ((), (3, 2), (2,))], _SCALARS),
           ref=_add_ref(np.matmul), dtypes=_WITH_INT, torch_op=_t("addmv"), method="addmv"),
    OpInfo("addr", ember.addr, _triples([((2, 3), (2,), (3,)), ((1, 3), (2,), (3,))],
                                        _SCALARS[:2]),
           ref=_add_ref(np.outer), torch_op=_t("addr"), method="addr"),
    OpInfo("baddbmm", ember.baddbmm,
           _triples([((2, 2, 3), (2, 2, 4), (2, 4, 3)), ((2, 1, 3), (2, 2, 4), (2, 4, 3))],
                    _SCALARS),
           ref=_add_ref(np.matmul), dtypes=_WITH_INT, torch_op=_t("baddbmm"),
           method="baddbmm"),
    OpInfo("addbmm", ember.addbmm,
           _triples([((2, 3), (4, 2, 5), (4, 5, 3)), ((3,), (1, 2, 2), (1, 2, 3))], _SCALARS),
           ref=_add_ref(_addbmm_np), dtypes=_WITH_INT, torch_op=_t("addbmm"),
           method="addbmm"),
    *[OpInfo(name, ember.einsum, _einsum_samples(cases),
             ref=lambda eq, *ops: np.asarray(np.einsum(eq, *ops)), torch_op=_t("einsum"),
             gradgrad=name == "einsum_repeated")
      for name, cases in _EINSUM_CASES.items()],
    OpInfo("tensordot", ember.tensordot, _tensordot_samples,
           ref=lambda a, b, dims: np.tensordot(a, b, axes=dims), dtypes=_WITH_INT,
           torch_op=_t("tensordot")),
    OpInfo("kron", ember.kron, _pairs([((2, 3), (3,)), ((2, 3), (2, 2, 2)), ((2, 2), ()),
                                       ((2,), (3,))]),
           ref=np.kron, dtypes=_WITH_INT, torch_op=_t("kron"), method="kron"),
    OpInfo("cross", ember.cross, _cross_samples,
           ref=lambda a, b, dim: np.cross(a, b, axis=dim), dtypes=_WITH_INT,
           torch_op=_t("cross"), method="cross"),
    OpInfo("trace", ember.trace, _trace_samples, ref=np.trace, dtypes=_WITH_INT,
           torch_op=_t("trace"), method="trace"),
    OpInfo("chain_matmul", lambda a, b: ember.chain_matmul(a, b, b.mT),
           _pairs([((2, 3), (3, 4))]), ref=lambda a, b: a @ b @ b.T,
           torch_op=lambda torch: lambda a, b: torch.chain_matmul(a, b, b.mT)),
]

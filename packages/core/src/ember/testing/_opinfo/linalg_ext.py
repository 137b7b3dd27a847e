"""OpInfos for ember.linalg and the torch.* linear-algebra spellings: references from
NumPy and SciPy (SciPy is a test dependency; without it those entries compare with
PyTorch only), gradcheck in float64.

Decompositions whose outputs are defined up to signs (QR, SVD, eigh, eig) are
compared through sign-invariant functions of them (``output_process``); Hermitian
inputs are built as ``a a^T + n I`` inside the op so that gradcheck moves them along
Hermitian directions; complex paths are checked through ``ember.complex(re, im)``
(the generic tests perturb real inputs only).
"""

from __future__ import annotations

import math

import numpy as np

import ember
from ember.testing._opinfo.core import FLOATING, OpInfo, SampleInput, arr

try:
    import scipy.linalg as _sla
except ImportError:  # pragma: no cover - SciPy is in the test dependencies
    _sla = None

L = ember.linalg

_SQUARE = [(3, 3), (2, 4, 4), (1, 2, 2, 2)]
_RECT = [(4, 3), (2, 3, 5), (3, 3)]


def _square(shapes=_SQUARE, diag=3.0):
    """Well-conditioned square matrices (a diagonal shift keeps them away from
    singular)."""
    def samples(dtype, rng):
        for s in shapes:
            yield SampleInput(arr(rng, s, dtype, -1, 1) + diag * np.eye(s[-1], dtype=dtype))
    return samples


def _rect(shapes=_RECT):
    def samples(dtype, rng):
        for s in shapes:
            yield SampleInput(arr(rng, s, dtype, -1, 1))
    return samples


def _spd(a):
    """a a^T + n I for tensors and arrays alike."""
    n = a.shape[-1]
    if isinstance(a, np.ndarray):
        return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    return a @ a.mT + n * ember.eye(n, dtype=a.dtype)


def _spd_np(a):
    return _spd(a).astype(a.dtype)


def _sym(a):
    if isinstance(a, np.ndarray):
        return a + np.swapaxes(a, -1, -2)
    return a + a.mT


def _col_sign(o, axis):
    """Columns (axis=-2: rows) of a matrix times the (conjugated) first entry: the
    same for every sign or phase of a singular or eigen vector."""
    first = o[..., :1, :] if axis == -1 else o[..., :, :1]
    cplx = np.iscomplexobj(first) if isinstance(first, np.ndarray) else first.is_complex()
    return o * (first.conj() if cplx else first)


def _svd_process(o):
    return (_col_sign(o[0], -1), o[1], _col_sign(o[2], -2))


def _t(path):
    def get(torch):
        obj = torch
        for part in path.split("."):
            obj = getattr(obj, part)
        return obj
    return get


def _pairs(shapes_a, shapes_b, diag=3.0):
    def samples(dtype, rng):
        for sa, sb in zip(shapes_a, shapes_b, strict=True):
            a = arr(rng, sa, dtype, -1, 1) + diag * np.eye(sa[-1], dtype=dtype)
            yield SampleInput(a, (arr(rng, sb, dtype, -1, 1),))
    return samples


def _given(*cases, diag=0.0):
    """Samples of the given (input shape, (arg shapes...)), the input shifted by
    ``diag`` times the identity."""
    def samples(dtype, rng):
        for si, sargs in cases:
            x = arr(rng, si, dtype, -1, 1)
            if diag:
                x = (x + diag * np.eye(si[-1])).astype(dtype)
            yield SampleInput(x, tuple(arr(rng, s, dtype, -1, 1) for s in sargs))
    return samples


def _solve_tri(kw):
    return lambda a, b: L.solve_triangular(a, b, **kw)


def _solve_tri_np(kw):
    return lambda a, b: _np_tri_solve(a, b, **kw)


def _solve_tri_torch(kw):
    return lambda torch: lambda a, b: torch.linalg.solve_triangular(a, b, **kw)


def _np_solve(a, b):
    if b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1]):
        return np.linalg.solve(a, b[..., None])[..., 0]
    return np.linalg.solve(a, b)


def _np_lu_factor(a):
    lu, piv = _sla.lu_factor(a)
    return lu, piv + 1


def _np_tri_solve(a, b, upper, left=True, unitriangular=False):
    t = np.triu(a) if upper else np.tril(a)
    if unitriangular:
        t = t.copy()
        np.einsum("...ii->...i", t)[...] = 1
    if left:
        return np.linalg.solve(t, b)
    return np.swapaxes(np.linalg.solve(np.swapaxes(t, -1, -2), np.swapaxes(b, -1, -2)), -1, -2)


def _np_matrix_norm(a, ord):
    return np.linalg.norm(a, ord=ord, axis=(-2, -1))


def _np_expm(a):
    if _sla is None:
        return None
    flat = a.reshape(-1, *a.shape[-2:])
    return np.stack([_sla.expm(m) for m in flat]).reshape(a.shape)


def _np_householder(a, tau):
    m, n = a.shape[-2:]
    q = np.broadcast_to(np.eye(m), a.shape[:-2] + (m, m)).copy()
    for i in range(tau.shape[-1]):
        v = np.zeros(a.shape[:-1])
        v[..., i] = 1
        v[..., i + 1:] = a[..., i + 1:, i]
        h = np.eye(m) - tau[..., i, None, None] * v[..., :, None] * v[..., None, :]
        q = q @ h
    return q[..., :, :n]


def _householder_samples(dtype, rng):
    for s, k in [((4, 3), 2), ((2, 5, 3), 3)]:
        yield SampleInput(arr(rng, s, dtype, -1, 1), (arr(rng, s[:-2] + (k,), dtype, 0, 1.5),))


def _lstsq_samples(dtype, rng):
    for sa, sb in [((5, 3), (5, 2)), ((2, 4, 2), (2, 4, 3)), ((4, 2), (4,))]:
        yield SampleInput(arr(rng, sa, dtype, -1, 1) + np.eye(*sa[-2:], dtype=dtype),
                          (arr(rng, sb, dtype, -1, 1),))


def _np_lstsq(a, b):
    return np.linalg.pinv(a) @ b if b.ndim == a.ndim else (np.linalg.pinv(a) @ b[..., None])[..., 0]


def _matrix_power_samples(dtype, rng):
    for s in [(3, 3), (2, 2, 2)]:
        for n in (0, 1, 2, 3, -1, -2):
            a = arr(rng, s, dtype, -1, 1) + 2 * np.eye(s[-1], dtype=dtype)
            yield SampleInput(a, (n,), name=f"n={n}")


def _norm_samples(ords):
    def samples(dtype, rng):
        for o in ords:
            yield SampleInput(arr(rng, (2, 3, 4), dtype, -2, 2), (o,), name=str(o))
    return samples


def _complex_square(dtype, rng):
    for s in [(3, 3), (2, 2, 2)]:
        re = arr(rng, s, dtype, -1, 1) + 3 * np.eye(s[-1], dtype=dtype)
        yield SampleInput(re, (arr(rng, s, dtype, -1, 1),))


def _c(re, im):
    return ember.complex(re, im) if isinstance(re, ember.Tensor) else re + 1j * im


def _real_view(o):
    """A complex tensor (ember's or PyTorch's) or array as (real, imag) pairs."""
    if isinstance(o, ember.Tensor):
        return ember.view_as_real(o) if o.is_complex() else o
    if type(o).__module__.startswith("torch"):
        import torch

        return torch.view_as_real(o.resolve_conj()) if o.is_complex() else o
    o = np.asarray(o)
    return np.stack([o.real, o.imag], -1) if np.iscomplexobj(o) else o


def _lu_unpacked(o):
    return o[1:] if len(o) == 3 else o


OPS = [
    OpInfo("linalg.inv", L.inv, _square(), ref=np.linalg.inv, torch_op=_t("linalg.inv"),
           gradgrad=True),
    OpInfo("linalg.inv_ex", lambda a: L.inv_ex(a)[0], _square(), ref=np.linalg.inv,
           torch_op=lambda torch: lambda a: torch.linalg.inv_ex(a)[0]),
    OpInfo("inverse", ember.inverse, _square(), ref=np.linalg.inv, torch_op=_t("inverse"),
           method="inverse"),
    OpInfo("linalg.det", L.det, _square(), ref=np.linalg.det, torch_op=_t("linalg.det"),
           gradgrad=True),
    OpInfo("det", ember.det, _square(), ref=np.linalg.det, torch_op=_t("det"), method="det"),
    OpInfo("linalg.slogdet", L.slogdet, _square(), ref=lambda a: tuple(np.linalg.slogdet(a)),
           torch_op=_t("linalg.slogdet")),
    OpInfo("slogdet", ember.slogdet, _square(), ref=lambda a: tuple(np.linalg.slogdet(a)),
           torch_op=_t("slogdet"), method="slogdet"),
    OpInfo("logdet", lambda a: ember.logdet(_spd(a)), _rect([(3, 3), (2, 2, 2)]),
           ref=lambda a: np.linalg.slogdet(_spd_np(a))[1],
           torch_op=lambda torch: lambda a: torch.logdet(a @ a.mT + a.shape[-1] *
                                                         torch.eye(a.shape[-1], dtype=a.dtype))),
    OpInfo("linalg.solve", L.solve,
           _pairs([(3, 3), (2, 3, 3), (3, 3), (2, 3, 3), (2, 3, 3)],
                  [(3, 2), (2, 3, 1), (3,), (2, 3), (3, 4)]),
           ref=_np_solve, torch_op=_t("linalg.solve"), gradgrad=True),
    OpInfo("linalg.solve_left_false", lambda a, b: L.solve(a, b, left=False),
           _pairs([(3, 3), (2, 3, 3)], [(2, 3), (2, 4, 3)]),
           ref=lambda a, b: np.swapaxes(np.linalg.solve(np.swapaxes(a, -1, -2),
                                                        np.swapaxes(b, -1, -2)), -1, -2),
           torch_op=lambda torch: lambda a, b: torch.linalg.solve(a, b, left=False)),
    OpInfo("linalg.solve_ex", lambda a, b: L.solve_ex(a, b)[0],
           _pairs([(3, 3)], [(3, 2)]), ref=np.linalg.solve,
           torch_op=lambda torch: lambda a, b: torch.linalg.solve_ex(a, b)[0]),
    *[OpInfo(f"linalg.solve_triangular_{name}", _solve_tri(kw),
             _pairs([(3, 3), (2, 3, 3)], [(3, 2), (2, 3, 2)] if kw.get("left", True)
                    else [(2, 3), (2, 2, 3)]),
             ref=_solve_tri_np(kw), torch_op=_solve_tri_torch(kw))
      for name, kw in [("upper", {"upper": True}), ("lower", {"upper": False}),
                       ("right_unit", {"upper": False, "left": False, "unitriangular": True}),
                       ("upper_unit", {"upper": True, "unitriangular": True})]],
    OpInfo("linalg.cholesky", lambda a: L.cholesky(_spd(a)), _rect([(3, 3), (2, 4, 4)]),
           ref=lambda a: np.linalg.cholesky(_spd_np(a)),
           torch_op=lambda torch: lambda a: torch.linalg.cholesky(
               a @ a.mT + a.shape[-1] * torch.eye(a.shape[-1], dtype=a.dtype)),
           gradgrad=True),
    OpInfo("linalg.cholesky_upper", lambda a: L.cholesky(_spd(a), upper=True),
           _rect([(3, 3)]), ref=lambda a: np.swapaxes(np.linalg.cholesky(_spd_np(a)), -1, -2),
           torch_op=lambda torch: lambda a: torch.linalg.cholesky(
               a @ a.mT + a.shape[-1] * torch.eye(a.shape[-1], dtype=a.dtype), upper=True)),
    OpInfo("linalg.cholesky_ex", lambda a: L.cholesky_ex(_spd(a))[0], _rect([(3, 3)]),
           ref=lambda a: np.linalg.cholesky(_spd_np(a)),
           torch_op=lambda torch: lambda a: torch.linalg.cholesky_ex(
               a @ a.mT + a.shape[-1] * torch.eye(a.shape[-1], dtype=a.dtype))[0]),
    OpInfo("cholesky_solve", lambda b, a: ember.cholesky_solve(b, L.cholesky(_spd(a))),
           lambda dtype, rng: iter([SampleInput(arr(rng, (3, 2), dtype),
                                                (arr(rng, (3, 3), dtype),))]),
           ref=lambda b, a: np.linalg.solve(_spd_np(a), b),
           torch_op=lambda torch: lambda b, a: torch.cholesky_solve(b, torch.linalg.cholesky(
               a @ a.mT + a.shape[-1] * torch.eye(a.shape[-1], dtype=a.dtype)))),
    OpInfo("cholesky_inverse", lambda a: ember.cholesky_inverse(L.cholesky(_spd(a))),
           _rect([(3, 3)]), ref=lambda a: np.linalg.inv(_spd_np(a)),
           torch_op=lambda torch: lambda a: torch.cholesky_inverse(torch.linalg.cholesky(
               a @ a.mT + a.shape[-1] * torch.eye(a.shape[-1], dtype=a.dtype)))),
    OpInfo("linalg.lu_factor", L.lu_factor, _rect([(4, 4), (2, 3, 3)]),
           ref=None if _sla is None else _np_lu_factor, torch_op=_t("linalg.lu_factor"),
           output_process=lambda o: o[0]),
    OpInfo("linalg.lu", L.lu, _rect([(4, 4), (2, 3, 5), (5, 3)]),
           ref=None if _sla is None else lambda a: tuple(_sla.lu(a)),
           torch_op=_t("linalg.lu")),
    OpInfo("linalg.lu_solve", lambda a, b: L.lu_solve(*L.lu_factor(a), b),
           _pairs([(3, 3), (2, 3, 3)], [(3, 2), (2, 3, 1)]), ref=np.linalg.solve,
           torch_op=lambda torch: lambda a, b: torch.linalg.lu_solve(*torch.linalg.lu_factor(a),
                                                                     b)),
    OpInfo("linalg.lu_solve_adjoint_right",
           lambda a, b: L.lu_solve(*L.lu_factor(a), b, left=False, adjoint=True),
           _pairs([(3, 3)], [(2, 3)]),
           ref=lambda a, b: np.linalg.solve(a, b.T).T,
           torch_op=lambda torch: lambda a, b: torch.linalg.lu_solve(
               *torch.linalg.lu_factor(a), b, left=False, adjoint=True)),
    OpInfo("linalg.ldl_solve", lambda a, b: L.ldl_solve(*L.ldl_factor(a), b),
           _given(((3, 3), ((3, 2),)), ((2, 4, 4), ((2, 4, 1),)), diag=0.0),
           ref=lambda a, b: np.linalg.solve(np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2), b),
           differentiable=False,  # as in PyTorch
           torch_op=lambda torch: lambda a, b: torch.linalg.ldl_solve(
               *torch.linalg.ldl_factor(a), b)),
    OpInfo("linalg.ldl_factor", L.ldl_factor, _rect([(4, 4), (2, 3, 3)]), ref=None,
           differentiable=False, torch_op=_t("linalg.ldl_factor")),
    OpInfo("linalg.qr", L.qr, _rect([(4, 3), (2, 3, 3)]), ref=lambda a: tuple(np.linalg.qr(a)),
           torch_op=_t("linalg.qr"), output_process=lambda o: (_col_sign(o[0], -1), o[1]),
           gradgrad=True),
    OpInfo("linalg.qr_wide", L.qr, _rect([(2, 4), (2, 3, 5)]),
           ref=lambda a: tuple(np.linalg.qr(a)), torch_op=_t("linalg.qr")),
    OpInfo("linalg.qr_complete", lambda a: L.qr(a, mode="complete"), _rect([(3, 3), (2, 4)]),
           ref=lambda a: tuple(np.linalg.qr(a, mode="complete")),
           torch_op=lambda torch: lambda a: torch.linalg.qr(a, mode="complete")),
    OpInfo("linalg.qr_r", lambda a: L.qr(a, mode="r")[1], _rect([(4, 3)]),
           ref=lambda a: np.linalg.qr(a, mode="r"), differentiable=False,
           torch_op=lambda torch: lambda a: torch.linalg.qr(a, mode="r")[1]),
    OpInfo("linalg.svd", lambda a: L.svd(a, full_matrices=False), _rect(),
           ref=lambda a: tuple(np.linalg.svd(a, full_matrices=False)),
           torch_op=lambda torch: lambda a: torch.linalg.svd(a, full_matrices=False),
           output_process=_svd_process),
    OpInfo("linalg.svd_full", lambda a: L.svd(a)[1], _rect(),
           ref=lambda a: np.linalg.svd(a, compute_uv=False),
           torch_op=lambda torch: lambda a: torch.linalg.svd(a)[1]),
    OpInfo("svd", lambda a: ember.svd(a), _rect(),
           ref=lambda a: (lambda u, s, vh: (u, s, np.swapaxes(vh, -1, -2)))(
               *np.linalg.svd(a, full_matrices=False)),
           torch_op=_t("svd"), method="svd",
           output_process=lambda o: (_col_sign(o[0], -1), o[1], _col_sign(o[2], -1))),
    OpInfo("linalg.svdvals", L.svdvals, _rect(), ref=lambda a: np.linalg.svd(a, compute_uv=False),
           torch_op=_t("linalg.svdvals"), gradgrad=True),
    OpInfo("linalg.eigh", lambda a: L.eigh(_sym(a)), _rect([(3, 3), (2, 4, 4)]),
           ref=lambda a: tuple(np.linalg.eigh(_sym(a))),
           torch_op=lambda torch: lambda a: torch.linalg.eigh(a + a.mT),
           output_process=lambda o: (o[0], _col_sign(o[1], -1))),
    OpInfo("linalg.eigh_upper", lambda a: L.eigh(a, UPLO="U")[0], _rect([(3, 3)]),
           ref=lambda a: np.linalg.eigh(a, UPLO="U")[0], differentiable=False,
           torch_op=lambda torch: lambda a: torch.linalg.eigh(a, UPLO="U")[0]),
    OpInfo("linalg.eigvalsh", lambda a: L.eigvalsh(_sym(a)), _rect([(3, 3), (2, 4, 4)]),
           ref=lambda a: np.linalg.eigvalsh(_sym(a)),
           torch_op=lambda torch: lambda a: torch.linalg.eigvalsh(a + a.mT), gradgrad=True),
    OpInfo("linalg.eig", lambda a: L.eig(_spd(a)), _rect([(3, 3)]),
           ref=lambda a: tuple(x.astype(np.result_type(a, np.complex64))
                               for x in np.linalg.eig(_spd_np(a))),
           torch_op=lambda torch: lambda a: torch.linalg.eig(
               a @ a.mT + a.shape[-1] * torch.eye(a.shape[-1], dtype=a.dtype)),
           output_process=lambda o: (_real_view(o[0]), _real_view(_col_sign(o[1], -1)))),
    OpInfo("linalg.eigvals", lambda a: L.eigvals(_spd(a)), _rect([(3, 3), (2, 2, 2)]),
           ref=lambda a: np.sort(np.linalg.eigvals(_spd_np(a)).real, -1),
           torch_op=lambda torch: lambda a: torch.linalg.eigvals(
               a @ a.mT + a.shape[-1] * torch.eye(a.shape[-1], dtype=a.dtype)),
           output_process=lambda o: (np.sort(np.real(o), -1) if isinstance(o, np.ndarray)
                                     else o.real.sort(-1)[0])),
    OpInfo("linalg.pinv", L.pinv, _rect(), ref=np.linalg.pinv, torch_op=_t("linalg.pinv")),
    OpInfo("linalg.pinv_hermitian", lambda a: L.pinv(_spd(a), hermitian=True), _rect([(3, 3)]),
           ref=lambda a: np.linalg.pinv(_spd_np(a)),
           torch_op=lambda torch: lambda a: torch.linalg.pinv(
               a @ a.mT + a.shape[-1] * torch.eye(a.shape[-1], dtype=a.dtype), hermitian=True)),
    OpInfo("pinverse", ember.pinverse, _rect([(4, 3)]), ref=np.linalg.pinv,
           torch_op=_t("pinverse"), method="pinverse"),
    OpInfo("linalg.lstsq", lambda a, b: L.lstsq(a, b).solution, _lstsq_samples, ref=_np_lstsq,
           torch_op=lambda torch: lambda a, b: torch.linalg.lstsq(a, b).solution),
    OpInfo("linalg.matrix_rank", L.matrix_rank,
           lambda dtype, rng: iter([SampleInput(arr(rng, (4, 3), dtype)),
                                    SampleInput(np.outer(arr(rng, 4, dtype), arr(rng, 3, dtype))),
                                    SampleInput(np.zeros((2, 3, 3), dtype))]),
           ref=np.linalg.matrix_rank, differentiable=False, torch_op=_t("linalg.matrix_rank")),
    OpInfo("linalg.matrix_norm", L.matrix_norm,
           _norm_samples(["fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf]),
           ref=_np_matrix_norm, torch_op=_t("linalg.matrix_norm")),
    OpInfo("linalg.norm", L.norm,
           lambda dtype, rng: iter([SampleInput(arr(rng, (3, 4), dtype), (o,), name=str(o))
                                    for o in (None, "fro", "nuc", 2, 1, -math.inf)]),
           ref=lambda a, o: np.linalg.norm(a, o), torch_op=_t("linalg.norm")),
    OpInfo("linalg.vector_norm", L.vector_norm,
           lambda dtype, rng: iter([SampleInput(arr(rng, (3, 4), dtype), (o,), name=str(o))
                                    for o in (2, 1, 3.5, math.inf)]),
           ref=lambda a, o: np.linalg.norm(a.reshape(-1), o), torch_op=_t("linalg.vector_norm")),
    OpInfo("linalg.cond", L.cond, _square([(3, 3), (2, 3, 3)]), ref=np.linalg.cond,
           torch_op=_t("linalg.cond")),
    OpInfo("linalg.cond_p", lambda a, p: L.cond(a, p),
           lambda dtype, rng: iter([SampleInput(next(_square([(3, 3)])(dtype, rng)).input,
                                                (p,), name=str(p))
                                    for p in ("fro", "nuc", 1, -1, math.inf, -2)]),
           ref=lambda a, p: np.linalg.cond(a, p),
           # torch.linalg.cond's own backward fails for these p (an in-place error in
           # PyTorch 2.13): compare with its definition instead
           torch_op=lambda torch: lambda a, p: torch.linalg.cond(a, p) if p == -2 else
           torch.linalg.matrix_norm(a, p) * torch.linalg.matrix_norm(torch.linalg.inv(a), p)),
    OpInfo("linalg.matrix_power", L.matrix_power, _matrix_power_samples,
           ref=np.linalg.matrix_power, torch_op=_t("linalg.matrix_power")),
    OpInfo("matrix_power", ember.matrix_power, _matrix_power_samples,
           ref=np.linalg.matrix_power, torch_op=_t("matrix_power"), method="matrix_power"),
    OpInfo("linalg.matrix_exp", L.matrix_exp,
           lambda dtype, rng: iter([SampleInput(arr(rng, s, dtype, -lim, lim))
                                    for s, lim in [((3, 3), 1), ((2, 2, 2), 4), ((4, 4), 0.01)]]),
           ref=_np_expm if _sla is not None else None, torch_op=_t("linalg.matrix_exp"),
           method="matrix_exp"),
    OpInfo("linalg.vecdot", L.vecdot,
           _given(((2, 3), ((3,),)), ((4,), ((4,),))),
           ref=lambda x, y: (x * y).sum(-1), torch_op=_t("linalg.vecdot")),
    OpInfo("linalg.multi_dot", lambda a, b, c: L.multi_dot([a, b, c]),
           _given(((2, 3), ((3, 4), (4, 2))), ((3,), ((3, 4), (4,)))),
           ref=lambda a, b, c: np.linalg.multi_dot([a, b, c]),
           torch_op=lambda torch: lambda a, b, c: torch.linalg.multi_dot([a, b, c])),
    OpInfo("linalg.householder_product", L.householder_product, _householder_samples,
           ref=_np_householder, torch_op=_t("linalg.householder_product")),
    OpInfo("orgqr", ember.orgqr, _householder_samples, ref=_np_householder,
           torch_op=_t("orgqr"), method="orgqr"),
    OpInfo("linalg.tensorinv", lambda a: L.tensorinv(a, ind=1),
           lambda dtype, rng: iter([SampleInput((arr(rng, (4, 2, 2), dtype, -1, 1)
                                                 + 2 * np.eye(4).reshape(4, 2, 2)).astype(dtype))]),
           ref=lambda a: np.linalg.tensorinv(a, ind=1),
           torch_op=lambda torch: lambda a: torch.linalg.tensorinv(a, ind=1)),
    OpInfo("linalg.tensorsolve", L.tensorsolve,
           lambda dtype, rng: iter([SampleInput((arr(rng, (2, 3, 6), dtype, -1, 1)
                                                 + 2 * np.eye(6).reshape(2, 3, 6)).astype(dtype),
                                                (arr(rng, (2, 3), dtype),))]),
           ref=np.linalg.tensorsolve, torch_op=_t("linalg.tensorsolve")),
    OpInfo("linalg.vander", lambda x: L.vander(x, N=4),
           lambda dtype, rng: iter([SampleInput(arr(rng, (3,), dtype)),
                                    SampleInput(arr(rng, (2, 3), dtype))]),
           ref=lambda x: x[..., :, None] ** np.arange(4),
           torch_op=lambda torch: lambda x: torch.linalg.vander(x, N=4)),
    OpInfo("vander", ember.vander, lambda dtype, rng: iter([SampleInput(arr(rng, (4,), dtype))]),
           ref=np.vander,  # torch.vander's backward fails in PyTorch 2.13: its equivalent
           torch_op=lambda torch: lambda x: torch.linalg.vander(x).flip(-1)),
    OpInfo("triangular_solve", lambda b, a: ember.triangular_solve(b, a + 3 * ember.eye(3))[0],
           _given(((3, 2), ((3, 3),))),
           ref=lambda b, a: np.linalg.solve(np.triu(a) + 3 * np.eye(3), b),
           torch_op=lambda torch: lambda b, a: torch.triangular_solve(
               b, a + 3 * torch.eye(3, dtype=a.dtype))[0]),
    OpInfo("linalg.cross", L.cross,
           _given(((2, 3), ((1, 3),))),
           ref=np.cross, torch_op=_t("linalg.cross")),
    OpInfo("linalg.diagonal", lambda a: L.diagonal(a, offset=1), _rect([(2, 3, 4)]),
           ref=lambda a: np.diagonal(a, 1, -2, -1),
           torch_op=lambda torch: lambda a: torch.linalg.diagonal(a, offset=1)),
    # complex paths, built from real and imaginary parts
    OpInfo("linalg.inv_complex", lambda re, im: L.inv(_c(re, im)), _complex_square,
           ref=lambda re, im: np.linalg.inv(re + 1j * im),
           torch_op=lambda torch: lambda re, im: torch.linalg.inv(torch.complex(re, im)),
           output_process=_real_view),
    OpInfo("linalg.det_complex", lambda re, im: L.det(_c(re, im)), _complex_square,
           ref=lambda re, im: np.linalg.det(re + 1j * im),
           torch_op=lambda torch: lambda re, im: torch.linalg.det(torch.complex(re, im)),
           output_process=_real_view),
    OpInfo("linalg.slogdet_complex", lambda re, im: L.slogdet(_c(re, im))[1], _complex_square,
           ref=lambda re, im: np.linalg.slogdet(re + 1j * im)[1],
           torch_op=lambda torch: lambda re, im: torch.linalg.slogdet(torch.complex(re, im))[1]),
    OpInfo("linalg.solve_complex", lambda re, im: L.solve(_c(re, im), _c(im, re)),
           _complex_square, ref=lambda re, im: np.linalg.solve(re + 1j * im, im + 1j * re),
           torch_op=lambda torch: lambda re, im: torch.linalg.solve(torch.complex(re, im),
                                                                    torch.complex(im, re)),
           output_process=_real_view),
    OpInfo("linalg.svdvals_complex", lambda re, im: L.svdvals(_c(re, im)), _complex_square,
           ref=lambda re, im: np.linalg.svd(re + 1j * im, compute_uv=False),
           torch_op=lambda torch: lambda re, im: torch.linalg.svdvals(torch.complex(re, im))),
    OpInfo("linalg.cholesky_complex",
           lambda re, im: L.cholesky(_c(re, im) @ _c(re, im).mH), _complex_square,
           ref=lambda re, im: np.linalg.cholesky((re + 1j * im) @ (re + 1j * im).conj()
                                                 .swapaxes(-1, -2)),
           torch_op=lambda torch: lambda re, im: torch.linalg.cholesky(
               torch.complex(re, im) @ torch.complex(re, im).mH),
           output_process=_real_view),
    OpInfo("linalg.matrix_exp_complex", lambda re, im: L.matrix_exp(_c(re, im) * 0.3),
           _complex_square,
           ref=None if _sla is None else lambda re, im: _np_expm((re + 1j * im) * 0.3),
           torch_op=lambda torch: lambda re, im: torch.linalg.matrix_exp(
               torch.complex(re, im) * 0.3),
           output_process=_real_view),
]
for _op in OPS:  # LAPACK routines take float32 and float64 only
    _op.dtypes = FLOATING

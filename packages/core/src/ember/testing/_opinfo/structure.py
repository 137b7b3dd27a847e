"""OpInfos for ``ember._ops.structure``: block_diag, diagflat, cartesian_prod,
combinations, rot90, tril_indices, triu_indices, unravel_index."""

from __future__ import annotations

import itertools

import numpy as np

import ember
from ember.testing._opinfo.core import FLOATING, OpInfo, SampleInput, arr

_FLOAT_AND_INT = FLOATING + (np.int64,)


def _t(name):
    return lambda torch: getattr(torch, name)


def _block_diag_samples(dtype, rng):
    yield SampleInput(arr(rng, (2, 3), dtype), (arr(rng, (), dtype), arr(rng, (4,), dtype),
                                                arr(rng, (1, 2), dtype)))
    yield SampleInput(arr(rng, (0, 2), dtype), (arr(rng, (2, 0), dtype),), name="empty blocks")


def _ref_block_diag(*blocks):
    blocks = [b.reshape(1, 1) if b.ndim == 0 else b.reshape(1, -1) if b.ndim == 1 else b
              for b in blocks]
    out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)),
                   blocks[0].dtype)
    r = c = 0
    for b in blocks:
        out[r:r + b.shape[0], c:c + b.shape[1]] = b
        r, c = r + b.shape[0], c + b.shape[1]
    return out


def _diagflat_samples(dtype, rng):
    yield SampleInput(arr(rng, (2, 2), dtype))
    yield SampleInput(arr(rng, (3,), dtype), (1,))
    yield SampleInput(arr(rng, (), dtype), (-2,))
    yield SampleInput(arr(rng, (0,), dtype))


def _cartesian_samples(dtype, rng):
    yield SampleInput(arr(rng, (2,), dtype), (arr(rng, (3,), dtype), arr(rng, (2,), dtype)))
    yield SampleInput(arr(rng, (3,), dtype), name="one tensor")
    yield SampleInput(arr(rng, (2,), dtype), (arr(rng, (0,), dtype),), name="empty")


def _ref_cartesian_prod(*ts):
    if len(ts) == 1:
        return ts[0]
    return np.array(list(itertools.product(*ts)), ts[0].dtype).reshape(-1, len(ts))


def _combinations_samples(dtype, rng):
    v = arr(rng, (4,), dtype)
    yield SampleInput(v)
    yield SampleInput(v, (3,))
    yield SampleInput(v, (2, True), name="with replacement")
    yield SampleInput(v, (5,), name="r > n")
    yield SampleInput(v, (1,))


def _ref_combinations(v, r=2, with_replacement=False):
    if r == 0:
        return np.zeros(0, v.dtype)
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    return np.array([v[list(c)] for c in pick(range(len(v)), r)], v.dtype).reshape(-1, r)


def _rot90_samples(dtype, rng):
    x = arr(rng, (3, 4), dtype)
    for k in (1, 2, 3, 0, -1, 5):
        yield SampleInput(x, (k,), name=f"k={k}")
    yield SampleInput(arr(rng, (2, 3, 4), dtype), (1, [2, 0]), name="dims")
    yield SampleInput(arr(rng, (2, 3, 4), dtype), (-1, (-1, -2)), name="negative dims")


def _ref_rot90(x, k=1, dims=(0, 1)):
    return np.rot90(x, k, axes=tuple(dims)).copy()


def _triangle_samples(dtype, rng):
    for args in [(3, 3), (3, 4, 1), (4, 3, -1), (0, 3), (3, 4, -5), (2, 5, 10)]:
        yield SampleInput(args[0], args[1:])


def _ref_tril_indices(row, col, offset=0):
    return np.stack(np.tril_indices(row, offset, col)).astype(np.int64)


def _ref_triu_indices(row, col, offset=0):
    return np.stack(np.triu_indices(row, offset, col)).astype(np.int64)


def _unravel_samples(dtype, rng):
    yield SampleInput(np.array([5, 11, 0]), ((3, 4),))
    yield SampleInput(np.arange(24).reshape(2, 3, 4), ((2, 3, 4),))
    yield SampleInput(np.array(7), (10,), name="int shape")
    yield SampleInput(np.array([-1, 13]), ((3, 4),), name="negative, wrapping")
    yield SampleInput(np.array([2, 3], np.int32), ((2, 2),), name="int32")


def _ref_unravel_index(indices, shape):
    shape = (shape,) if isinstance(shape, int) else shape
    return tuple(np.unravel_index(np.mod(indices, int(np.prod(shape))), shape))


OPS = [
    OpInfo("block_diag", ember.block_diag, _block_diag_samples, ref=_ref_block_diag,
           dtypes=_FLOAT_AND_INT, torch_op=_t("block_diag")),
    OpInfo("diagflat", ember.diagflat, _diagflat_samples, ref=lambda x, k=0: np.diagflat(x, k),
           dtypes=_FLOAT_AND_INT, torch_op=_t("diagflat"), method="diagflat"),
    OpInfo("cartesian_prod", ember.cartesian_prod, _cartesian_samples, ref=_ref_cartesian_prod,
           dtypes=_FLOAT_AND_INT, torch_op=_t("cartesian_prod")),
    OpInfo("combinations", ember.combinations, _combinations_samples, ref=_ref_combinations,
           dtypes=_FLOAT_AND_INT, torch_op=_t("combinations")),
    OpInfo("rot90", ember.rot90, _rot90_samples, ref=_ref_rot90, dtypes=_FLOAT_AND_INT,
           torch_op=_t("rot90"), method="rot90"),
    OpInfo("tril_indices", ember.tril_indices, _triangle_samples, ref=_ref_tril_indices,
           dtypes=(np.int64,), differentiable=False, torch_op=_t("tril_indices")),
    OpInfo("triu_indices", ember.triu_indices, _triangle_samples, ref=_ref_triu_indices,
           dtypes=(np.int64,), differentiable=False, torch_op=_t("triu_indices")),
    OpInfo("unravel_index", ember.unravel_index, _unravel_samples, ref=_ref_unravel_index,
           dtypes=(np.int64,), differentiable=False, torch_op=_t("unravel_index")),
]

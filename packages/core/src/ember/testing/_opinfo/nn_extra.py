"""OpInfos for the nn.functional ops of the public-surface work: fractional max pooling,
``conv_tbc`` and ``gumbel_softmax``.

The references are loops over the windows (fractional pooling, with PyTorch's interval
formula) and over the kernel taps (``conv_tbc``); ``gumbel_softmax`` is random, so it is
gradchecked under a fixed seed (its distribution is tested in tests/core and against
PyTorch with fixed noise in tests/interop).
"""

from __future__ import annotations

import itertools

import numpy as np

import ember
import ember.nn.functional as F
from ember.testing._opinfo.core import OpInfo, SampleInput, arr


def _F(name):
    return lambda torch: getattr(torch.nn.functional, name)


_SAMPLE_OF_DIM = {2: (1, 0), 3: (0, 1, 2)}


def _starts(u, in_size, out_size, k, dtype):
    if out_size == 1:
        return [in_size - k]
    alpha = dtype.type(in_size - k) / dtype.type(out_size - 1)
    u = dtype.type(u)
    return [int((dtype.type(i) + u) * alpha) - int(u * alpha) for i in range(out_size - 1)] \
        + [in_size - k]


def _fractional_ref(nd):
    def ref(x, kernel, out_size, samples, return_indices=False):
        samples = np.asarray(samples, dtype=x.dtype)
        k = (kernel,) * nd if isinstance(kernel, int) else tuple(kernel)
        o = (out_size,) * nd if isinstance(out_size, int) else tuple(out_size)
        N, C, *sp = x.shape
        out = np.empty((N, C) + o, x.dtype)
        idx = np.empty((N, C) + o, np.int64)
        for n, c in itertools.product(range(N), range(C)):
            starts = [_starts(samples[n, c, _SAMPLE_OF_DIM[nd][d]], sp[d], o[d], k[d], x.dtype)
                      for d in range(nd)]
            for pos in itertools.product(*(range(v) for v in o)):
                best, where = -np.inf, None
                for off in itertools.product(*(range(v) for v in k)):
                    at = tuple(starts[d][pos[d]] + off[d] for d in range(nd))
                    v = x[(n, c) + at]
                    # PyTorch's scan: a larger value or a NaN takes the place
                    if where is None or v > best or np.isnan(v):
                        best, where = v, at
                out[(n, c) + pos] = best
                idx[(n, c) + pos] = np.ravel_multi_index(where, sp)
        return (out, idx) if return_indices else out
    return ref


def _fractional_op(nd, with_indices):
    fn = getattr(F, f"fractional_max_pool{nd}d" + ("_with_indices" if with_indices else ""))

    def op(x, kernel, out_size, samples, return_indices=False):
        s = ember.tensor(np.asarray(samples), dtype=x.dtype)
        return fn(x, kernel, out_size, return_indices=return_indices, _random_samples=s)
    return op


def _fractional_samples(nd, with_indices):
    def samples(dtype, rng):
        cases = {2: [((2, 3, 7, 8), 2, (3, 4)), ((1, 2, 9, 9), (3, 2), 4),
                     ((1, 1, 5, 6), 2, 1)],
                 3: [((1, 2, 5, 6, 5), 2, (2, 3, 2)), ((1, 1, 4, 5, 6), (2, 1, 3), 2)]}[nd]
        for shape, k, o in cases:
            x = arr(rng, shape, dtype)
            s = rng.random((shape[0], shape[1], nd)).tolist()
            yield SampleInput(x, (k, o, s), {"return_indices": True} if not with_indices
                              and shape[0] == 1 else {})
    return samples


def _conv_tbc_ref(x, w, b, pad=0):
    T, B, _ = x.shape
    k = w.shape[0]
    xp = np.pad(x, ((pad, pad), (0, 0), (0, 0)))
    out = np.broadcast_to(b, (T + 2 * pad - k + 1, B, w.shape[2])).astype(x.dtype)
    for t in range(k):
        out = out + np.einsum("tbc,co->tbo", xp[t:t + out.shape[0]], w[t])
    return out


def _conv_tbc_samples(dtype, rng):
    yield SampleInput(arr(rng, (6, 2, 3), dtype), (arr(rng, (3, 3, 4), dtype),
                                                   arr(rng, (4,), dtype)))
    yield SampleInput(arr(rng, (5, 1, 2), dtype), (arr(rng, (2, 2, 3), dtype),
                                                   arr(rng, (3,), dtype), 2))


def _seeded_gumbel(x, **kwargs):
    ember.manual_seed(0)
    return F.gumbel_softmax(x, **kwargs)


def _gumbel_samples(dtype, rng):
    yield SampleInput(arr(rng, (3, 5), dtype))
    yield SampleInput(arr(rng, (4, 3), dtype), kwargs={"tau": 0.5, "dim": 0})
    # straight-through: its gradient is the soft sample's, not the one-hot's (no gradcheck)
    yield SampleInput(arr(rng, (2, 4), dtype), kwargs={"hard": True}, grad=False)


OPS = []
for _nd in (2, 3):
    for _wi in (False, True):
        _name = f"fractional_max_pool{_nd}d" + ("_with_indices" if _wi else "")
        OPS.append(OpInfo(_name, _fractional_op(_nd, _wi), _fractional_samples(_nd, _wi),
                          ref=(lambda r, wi: (lambda *a, **kw: r(*a, **(
                              {"return_indices": True} if wi else kw))))(_fractional_ref(_nd),
                                                                         _wi),
                          dtypes=(np.float32, np.float64),
                          output_process=lambda r: tuple(r) if isinstance(r, (tuple, list))
                          else r))
OPS.append(OpInfo("conv_tbc", F.conv_tbc, _conv_tbc_samples, ref=_conv_tbc_ref,
                  dtypes=(np.float32, np.float64), torch_op=_F("conv_tbc")))
OPS.append(OpInfo("gumbel_softmax", _seeded_gumbel, _gumbel_samples,
                  dtypes=(np.float32, np.float64)))


def _linear_ce_ref(x, w, target, linear_bias=None, reduction="mean"):
    logits = x @ w.reshape(w.shape[0] * int(np.prod(w.shape[1:-1])), w.shape[-1]).T
    if linear_bias is not None:
        logits = logits + linear_bias.reshape(-1)
    logits = logits.reshape((x.shape[0],) + w.shape[:-1])
    m = logits.max(axis=1, keepdims=True)
    logp = logits - m - np.log(np.exp(logits - m).sum(axis=1, keepdims=True))
    picked = -np.take_along_axis(logp, target[:, None], axis=1)[:, 0]
    return picked.mean() if reduction == "mean" else picked.sum() if reduction == "sum" \
        else picked


def _linear_ce_samples(dtype, rng):
    yield SampleInput(arr(rng, (4, 5), dtype), (arr(rng, (6, 5), dtype),
                                                rng.integers(0, 6, 4)))
    yield SampleInput(arr(rng, (3, 4), dtype), (arr(rng, (5, 4), dtype),
                                                rng.integers(0, 5, 3)),
                      {"linear_bias": arr(rng, (5,), dtype), "reduction": "sum"})
    yield SampleInput(arr(rng, (2, 3), dtype), (arr(rng, (4, 2, 3), dtype),
                                                rng.integers(0, 4, (2, 2))),
                      {"reduction": "none"})


OPS.append(OpInfo("linear_cross_entropy", F.linear_cross_entropy, _linear_ce_samples,
                  ref=_linear_ce_ref, dtypes=(np.float32, np.float64),
                  torch_op=_F("linear_cross_entropy")))

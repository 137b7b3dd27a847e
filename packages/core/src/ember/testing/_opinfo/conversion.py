"""OpInfos for copies, conversions and in-place fills: clone, contiguous, to, copy_, fill_,
zero_, as_strided, sum_to_size, unary plus, conj, F.relu_ (with gradients through them)."""

from __future__ import annotations

import numpy as np

import ember
from ember.testing._opinfo.core import OpInfo, SampleInput, arr


def _shapes(*shapes):
    def samples(dtype, rng):
        for shape in shapes:
            yield SampleInput(arr(rng, shape, dtype))
            if len(shape) == 2:  # a transposed (non-contiguous) input
                yield SampleInput(arr(rng, shape[::-1], dtype).T, name="transposed")
    return samples


def _pair(*shapes):
    def samples(dtype, rng):
        for dst, src in shapes:
            yield SampleInput(arr(rng, dst, dtype), (arr(rng, src, dtype),))
    return samples


def _as_strided_samples(dtype, rng):
    yield SampleInput(arr(rng, (12,), dtype), ((3, 2), (2, 1)))
    yield SampleInput(arr(rng, (12,), dtype), ((2, 2), (1, 3), 1))
    yield SampleInput(arr(rng, (4, 3), dtype), ((3, 3), (3, 1)))


def _np_as_strided(x, size, stride, offset=0):
    flat = np.ascontiguousarray(x).reshape(-1)[offset:]
    item = flat.itemsize
    return np.lib.stride_tricks.as_strided(flat, size, [s * item for s in stride]).copy()


def _np_sum_to(x, size):
    lead = x.ndim - len(size)
    y = x.sum(axis=tuple(range(lead))) if lead else x
    axes = tuple(i for i, n in enumerate(size) if n == 1 and y.shape[i] != 1)
    return y.sum(axis=axes, keepdims=True) if axes else y


def _as_strided(x, *args):
    # as_strided reads the storage: on the contiguous values, so that the generic
    # non-contiguous test compares like with like
    return ember.as_strided(x.contiguous(), *args)


def _sum_to_size_samples(dtype, rng):
    yield SampleInput(arr(rng, (2, 3, 4), dtype), ((3, 1),))
    yield SampleInput(arr(rng, (2, 3), dtype), ((1, 3),))
    yield SampleInput(arr(rng, (2, 3), dtype), ((2, 3),))


def _copy_(x, src):
    return x.clone().copy_(src)


def _fill_(x, v):
    return (x * 1).fill_(v)


def _zero_(x):
    return (x * 1).zero_()


def _relu_(x):
    return ember.nn.functional.relu_(x * 1)


OPS = [
    OpInfo("clone", ember.clone, _shapes((3, 4), (), (0, 2)), ref=np.copy,
           torch_op=lambda torch: torch.clone),
    OpInfo("contiguous", lambda x: x.contiguous(), _shapes((3, 4), (5,)), ref=np.copy,
           method="contiguous", torch_op=lambda torch: lambda x: x.contiguous()),
    OpInfo("to_float64", lambda x: x.to(ember.float64), _shapes((2, 3)),
           ref=lambda x: x.astype(np.float64),
           torch_op=lambda torch: lambda x: x.to(torch.float64)),
    OpInfo("to_float32", lambda x: ember.to(x, ember.float32), _shapes((2, 3)),
           ref=lambda x: x.astype(np.float32), rtol=1e-6, atol=1e-6,
           differentiable=False,  # float32 results: to_float64 checks the gradient
           torch_op=lambda torch: lambda x: x.to(torch.float32)),
    OpInfo("copy_", _copy_, _pair(((2, 3), (2, 3)), ((2, 3), (3,)), ((4,), (1,))),
           ref=lambda x, s: np.broadcast_to(s, x.shape).copy(),
           torch_op=lambda torch: lambda x, s: x.clone().copy_(s)),
    OpInfo("fill_", lambda x: _fill_(x, 2.5), _shapes((2, 3)),
           ref=lambda x: np.full_like(x, 2.5),
           torch_op=lambda torch: lambda x: (x * 1).fill_(2.5)),
    OpInfo("zero_", _zero_, _shapes((2, 3), (0,)), ref=np.zeros_like,
           torch_op=lambda torch: lambda x: (x * 1).zero_()),
    OpInfo("as_strided", _as_strided, _as_strided_samples, ref=_np_as_strided,
           torch_op=lambda torch: lambda x, *a: torch.as_strided(x.contiguous(), *a)),
    OpInfo("sum_to_size", lambda x, size: x.sum_to_size(size), _sum_to_size_samples,
           ref=_np_sum_to, method="sum_to_size",
           torch_op=lambda torch: lambda x, size: x.sum_to_size(size)),
    OpInfo("pos", lambda x: +x, _shapes((2, 3)), ref=np.positive,
           torch_op=lambda torch: lambda x: +x),
    OpInfo("conj", ember.conj, _shapes((2, 3)), ref=np.conj,
           torch_op=lambda torch: lambda x: torch.conj(x).resolve_conj()),
    OpInfo("relu_", _relu_, _shapes((3, 4)), ref=lambda x: np.maximum(x, 0),
           torch_op=lambda torch: lambda x: torch.nn.functional.relu_(x * 1)),
]

"""Large elementwise ops and reductions on every core (issue 24): 32M float32 elements, the
throughput of ember against torch's, with the effective GB/s of each library.

ember runs these on several threads above a size threshold (NOTE [ Threads for large ops ]
in ember._backend._cpu_threads); torch runs them on its intra-op pool.
"""

from __future__ import annotations

import functools

import numpy as np

from .registry import Target, workload
from .workloads import F32, N_LARGE, THROUGHPUT, _bandwidth_extra, tensor

N = 32 * 2**20
ROWS, COLS = 8192, 4096  # softmax over the last dim: N elements
assert ROWS * COLS == N

AT_LEAST_09 = Target("throughput ember/torch", ">=", 0.9)
AT_LEAST_10 = Target("throughput ember/torch", ">=", 1.0)


def _gbs_extra(arrays: int):
    """The effective GB/s of an op moving ``arrays`` float32 arrays of N elements (the
    throughput rows' extra, counted in arrays of their N_LARGE elements)."""
    return _bandwidth_extra(arrays * N // N_LARGE)


# a call takes 5-50 ms: few samples, short blocks, so that --quick stays fast
_BIG = dict(group=THROUGHPUT, source="#24", repeats=9, budget_s=6.0, block_s=0.05)


@functools.lru_cache(maxsize=1)
def _arrays():
    """The two input arrays, made once for every row and library (drawing 2 x 32M numbers
    took most of a --quick row's time)."""
    rng = np.random.default_rng(0)
    return rng.uniform(0.5, 1.5, N).astype(F32), rng.uniform(0.5, 1.5, N).astype(F32)


def _inputs(lib, device):
    a, b = _arrays()
    return tensor(lib, a, device), tensor(lib, b, device)


def _binary_out(name):
    def make(lib, device):
        a, b = _inputs(lib, device)
        c = lib.empty_like(a)
        fn = getattr(lib, name)
        return lambda: fn(a, b, out=c)

    return make


def _binary(op):
    def make(lib, device):
        a, b = _inputs(lib, device)
        return lambda: op(a, b)

    return make


workload("add_32M_out", title="add(a, b, out=c), 32M float32", targets=(AT_LEAST_09,),
         requires=("add", "empty_like"), extra=_gbs_extra(3), **_BIG)(_binary_out("add"))
workload("mul_32M_out", title="mul(a, b, out=c), 32M float32", targets=(AT_LEAST_09,),
         requires=("mul", "empty_like"), extra=_gbs_extra(3), **_BIG)(_binary_out("mul"))
workload("add_32M", title="a + b, 32M float32", targets=(AT_LEAST_10,), extra=_gbs_extra(3),
         **_BIG)(_binary(lambda a, b: a + b))
workload("mul_32M", title="a * b, 32M float32", targets=(AT_LEAST_10,), extra=_gbs_extra(3),
         **_BIG)(_binary(lambda a, b: a * b))


@workload("sum_32M", title="a.sum(), 32M float32", targets=(AT_LEAST_09,), requires=("sum",),
          extra=_gbs_extra(1), **_BIG)
def sum_32m(lib, device):
    a, _ = _inputs(lib, device)
    return lambda: a.sum()


@workload("mean_32M", title="a.mean(), 32M float32", targets=(AT_LEAST_09,),
          requires=("mean",), extra=_gbs_extra(1), **_BIG)
def mean_32m(lib, device):
    a, _ = _inputs(lib, device)
    return lambda: a.mean()


@workload("softmax_32M", title=f"softmax(x, dim=-1), {ROWS}x{COLS} float32",
          targets=(AT_LEAST_09,), requires=("softmax",), extra=_gbs_extra(2), **_BIG)
def softmax_32m(lib, device):
    rng = np.random.default_rng(0)
    x = tensor(lib, rng.standard_normal((ROWS, COLS)).astype(F32), device)
    softmax = lib.softmax
    return lambda: softmax(x, -1)

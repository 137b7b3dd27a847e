"""Every tensor collective against NumPy, on every rank (run under mpiexec -n 2 or 4).

Each rank can compute every rank's input (they are seeded by rank), so each check computes
the expected result with NumPy and compares. Prints "CHECKED <n>" per rank at the end; any
failed check raises (and the launcher's exit code says so).
"""

from __future__ import annotations

import sys
from datetime import timedelta

import ml_dtypes
import numpy as np

import ember
import ember.distributed as dist
from ember.distributed import ReduceOp

dist.init_process_group("gloo", timeout=timedelta(seconds=60))
R, N = dist.get_rank(), dist.get_world_size()
checks = 0

DTYPES = {
    "float32": (ember.float32, np.float32), "float64": (ember.float64, np.float64),
    "float16": (ember.float16, np.float16), "bfloat16": (ember.bfloat16, ml_dtypes.bfloat16),
    "int64": (ember.int64, np.int64), "int32": (ember.int32, np.int32),
    "int8": (ember.int8, np.int8), "uint8": (ember.uint8, np.uint8),
    "bool": (ember.bool, np.bool_), "complex64": (ember.complex64, np.complex64),
}
OPS = [ReduceOp.SUM, ReduceOp.AVG, ReduceOp.PRODUCT, ReduceOp.MIN, ReduceOp.MAX,
       ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR]


def data(rank: int, shape, name: str, salt: int = 0) -> np.ndarray:
    """Rank ``rank``'s input: small values, so products of N ranks do not overflow."""
    rng = np.random.default_rng(1000 * salt + rank)
    np_dtype = DTYPES[name][1]
    if name == "bool":
        return rng.random(shape) < 0.5
    if name.startswith(("int", "uint")):
        lo = 0 if name == "uint8" else -3
        return rng.integers(lo, 4, shape).astype(np_dtype)
    if name == "complex64":
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np_dtype)
    return rng.uniform(0.5, 1.5, shape).astype(np_dtype)


def tensor(arr: np.ndarray, layout: str = "contiguous"):
    """An ember tensor of ``arr``'s values: contiguous, or a non-contiguous view."""
    if layout == "contiguous":
        return ember.from_numpy(arr.copy())
    # a transposed view of a bigger buffer: non-contiguous, with an offset
    big = np.zeros((arr.shape[1], arr.shape[0] * 2), dtype=arr.dtype)
    base = ember.from_numpy(big)
    view = base[:, ::2].t()
    view.copy_(ember.from_numpy(arr.copy()))
    assert not view.is_contiguous()
    return view


def as_np(t) -> np.ndarray:
    return t.detach().numpy().copy()


def expected_reduce(arrs, op, name: str) -> np.ndarray:
    dtype = DTYPES[name][1]
    if name == "bool":
        table = {ReduceOp.SUM: np.logical_or, ReduceOp.MAX: np.logical_or,
                 ReduceOp.BOR: np.logical_or, ReduceOp.PRODUCT: np.logical_and,
                 ReduceOp.MIN: np.logical_and, ReduceOp.BAND: np.logical_and,
                 ReduceOp.BXOR: np.logical_xor}
        return table[op].reduce(np.stack(arrs))
    wide = np.stack([a.astype(np.complex128 if name == "complex64" else
                              np.float64 if a.dtype.kind == "f" or name == "bfloat16" else
                              np.int64) for a in arrs])
    if op in (ReduceOp.SUM, ReduceOp.AVG):
        out = wide.sum(0)
        if op == ReduceOp.AVG:
            out = np.trunc(out / len(arrs)) if name.startswith(("int", "uint")) else \
                out / len(arrs)
    elif op == ReduceOp.PRODUCT:
        out = wide.prod(0)
    elif op == ReduceOp.MIN:
        out = wide.min(0)
    elif op == ReduceOp.MAX:
        out = wide.max(0)
    else:
        ufunc = {ReduceOp.BAND: np.bitwise_and, ReduceOp.BOR: np.bitwise_or,
                 ReduceOp.BXOR: np.bitwise_xor}[op]
        out = ufunc.reduce(wide, axis=0)
    return out.astype(dtype)


def close(got: np.ndarray, want: np.ndarray, name: str, what: str) -> None:
    global checks
    checks += 1
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    tol = {"float16": 5e-3, "bfloat16": 3e-2, "float32": 1e-5, "complex64": 1e-5,
           "float64": 1e-12}.get(name)
    if tol is None:
        assert np.array_equal(got, want), f"{what}: {got} != {want}"
    else:
        np.testing.assert_allclose(got.astype(np.complex128 if name == "complex64" else
                                              np.float64),
                                   want.astype(np.complex128 if name == "complex64" else
                                               np.float64), rtol=tol, atol=tol,
                                   err_msg=what)


def valid(op, name: str) -> bool:
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR):
        return name in ("int64", "int32", "int8", "uint8", "bool")
    if name == "complex64":
        return op in (ReduceOp.SUM, ReduceOp.AVG)
    return not (name == "bool" and op == ReduceOp.AVG)


# -- all_reduce: every op, dtype and layout ----------------------------------------------
for name, (edtype, _) in DTYPES.items():
    for op in OPS:
        if not valid(op, name):
            continue
        for layout, shape in (("contiguous", (3, 4)), ("strided", (3, 4)),
                              ("contiguous", (0, 3))):
            arrs = [data(r, shape, name) for r in range(N)]
            t = tensor(arrs[R], layout)
            assert t.dtype == edtype
            dist.all_reduce(t, op=op)
            close(as_np(t), expected_reduce(arrs, op, name), name,
                  f"all_reduce {op} {name} {layout} {shape}")

# big buffers (>= 1 MiB: the blocking path in the helper thread), contiguous and strided
for op in (ReduceOp.SUM, ReduceOp.AVG, ReduceOp.MAX):
    for layout in ("contiguous", "strided"):
        arrs = [data(r, (512, 300), "float64", 20) for r in range(N)]
        t = tensor(arrs[R], layout)
        dist.all_reduce(t, op=op)
        close(as_np(t), expected_reduce(arrs, op, "float64"), "float64", f"big {op} {layout}")

# the errors of ops a dtype cannot take
for name, op, err in (("float32", ReduceOp.BAND, RuntimeError),
                      ("complex64", ReduceOp.MAX, ValueError),
                      ("bool", ReduceOp.AVG, RuntimeError),
                      ("float32", ReduceOp.PREMUL_SUM, RuntimeError)):
    try:
        dist.all_reduce(tensor(data(R, (2,), name)), op=op)
    except err as e:
        checks += 1
        assert str(op).split(".")[-1] in str(e) or "complex" in str(e), str(e)
    else:
        raise AssertionError(f"all_reduce {op} on {name} did not raise")
try:
    dist.all_reduce(np.zeros(3))
except TypeError as e:
    assert "Expected parameter `tensor` of type torch.Tensor" in str(e)
    checks += 1

# -- reduce: to the last rank; the others keep their input --------------------------------
for name in ("float32", "float16", "int64", "bool"):
    for op in (ReduceOp.SUM, ReduceOp.MAX, ReduceOp.AVG):
        if not valid(op, name):
            continue
        arrs = [data(r, (5,), name, 1) for r in range(N)]
        t = tensor(arrs[R])
        dist.reduce(t, dst=N - 1, op=op)
        want = expected_reduce(arrs, op, name) if R == N - 1 else arrs[R]
        close(as_np(t), want, name, f"reduce {op} {name}")
arrs = [data(r, (4, 3), "float64", 2) for r in range(N)]
t = tensor(arrs[R], "strided")
dist.reduce(t, group_dst=0, op=ReduceOp.PRODUCT)
close(as_np(t), expected_reduce(arrs, ReduceOp.PRODUCT, "float64") if R == 0 else arrs[R],
      "float64", "reduce strided group_dst")

# -- broadcast ------------------------------------------------------------------------------
for name in ("float32", "bfloat16", "bool", "int8", "complex64"):
    for layout, shape in (("contiguous", (2, 3)), ("strided", (3, 2)), ("contiguous", (0,))):
        src = N - 1
        t = tensor(data(R, shape, name, 3), layout)
        dist.broadcast(t, src=src)
        close(as_np(t), data(src, shape, name, 3), name, f"broadcast {name} {layout}")

# -- all_gather (uneven sizes, strided outputs), all_gather_into_tensor --------------------
for name in ("float32", "float16", "int64", "bool"):
    outs = [tensor(np.zeros((r + 1, 2), DTYPES[name][1]), "strided" if r % 2 else
                   "contiguous") for r in range(N)]
    dist.all_gather(outs, tensor(data(R, (R + 1, 2), name, 4)))
    for r in range(N):
        close(as_np(outs[r]), data(r, (r + 1, 2), name, 4), name, f"all_gather {name} {r}")
for name in ("float64", "bfloat16"):
    for out_shape in ((N * 2, 3), (N, 2, 3)):
        out = ember.zeros(*out_shape, dtype=DTYPES[name][0])
        dist.all_gather_into_tensor(out, tensor(data(R, (2, 3), name, 5)))
        want = np.stack([data(r, (2, 3), name, 5) for r in range(N)]).reshape(out_shape)
        close(as_np(out), want, name, f"all_gather_into_tensor {out_shape}")
try:
    dist.all_gather_into_tensor(ember.zeros(N * 2 + 1), ember.zeros(2))
except ValueError as e:
    assert "world_size" in str(e)
    checks += 1

# -- reduce_scatter, reduce_scatter_tensor ---------------------------------------------------
for name in ("float32", "float16", "int32"):
    for op in (ReduceOp.SUM, ReduceOp.MAX, ReduceOp.AVG):
        # rank r's input list: N chunks; chunk i has i + 1 elements
        ins = {r: [data(r * N + i, (i + 1,), name, 6) for i in range(N)] for r in range(N)}
        out = ember.zeros(R + 1, dtype=DTYPES[name][0])
        dist.reduce_scatter(out, [tensor(a) for a in ins[R]], op=op)
        want = expected_reduce([ins[r][R] for r in range(N)], op, name)
        close(as_np(out), want, name, f"reduce_scatter {op} {name}")
        full = {r: data(r, (N * 2, 3), name, 7) for r in range(N)}
        out = tensor(np.zeros((2, 3), DTYPES[name][1]), "strided")
        dist.reduce_scatter_tensor(out, tensor(full[R]), op=op)
        want = expected_reduce([full[r][2 * R:2 * R + 2] for r in range(N)], op, name)
        close(as_np(out), want, name, f"reduce_scatter_tensor {op} {name}")

# -- gather, scatter ------------------------------------------------------------------------
for name in ("float32", "bool", "bfloat16"):
    dst = N - 1
    glist = [ember.zeros(3, 2, dtype=DTYPES[name][0]) for _ in range(N)] if R == dst else None
    dist.gather(tensor(data(R, (3, 2), name, 8), "strided"), glist, dst=dst)
    if R == dst:
        for r in range(N):
            close(as_np(glist[r]), data(r, (3, 2), name, 8), name, f"gather {name}")
    slist = [tensor(data(100 + r, (2, 2), name, 9)) for r in range(N)] if R == 0 else None
    out = tensor(np.zeros((2, 2), DTYPES[name][1]), "strided")
    dist.scatter(out, slist, src=0)
    close(as_np(out), data(100 + R, (2, 2), name, 9), name, f"scatter {name}")
if R == 0:   # the destination must give gather_list (checked before anything is sent)
    try:
        dist.gather(ember.zeros(2), None, dst=0)
    except ValueError as e:
        assert "gather_list" in str(e)
        checks += 1
    else:
        raise AssertionError("gather without gather_list on dst did not raise")
dist.barrier()

# -- all_to_all, all_to_all_single (uneven splits) ---------------------------------------------
for name in ("float32", "int64", "float16"):
    # rank r sends (r + j + 1) elements to rank j
    ins = [tensor(data(10 * R + j, (R + j + 1,), name, 10)) for j in range(N)]
    outs = [ember.zeros(j + R + 1, dtype=DTYPES[name][0]) for j in range(N)]
    dist.all_to_all(outs, ins)
    for j in range(N):
        close(as_np(outs[j]), data(10 * j + R, (j + R + 1,), name, 10), name,
              f"all_to_all {name} from {j}")
    # all_to_all_single: rank r sends j + 1 rows to rank j
    isplit = [j + 1 for j in range(N)]
    osplit = [R + 1] * N
    src = {r: data(r, (sum(isplit), 2), name, 11) for r in range(N)}
    out = ember.zeros(sum(osplit), 2, dtype=DTYPES[name][0])
    dist.all_to_all_single(out, tensor(src[R]), osplit, isplit)
    offs = np.cumsum([0] + isplit)
    want = np.concatenate([src[r][offs[R]:offs[R + 1]] for r in range(N)])
    close(as_np(out), want, name, f"all_to_all_single {name}")
    out = ember.zeros(N * 2, 3, dtype=DTYPES[name][0])
    src = {r: data(r, (N * 2, 3), name, 12) for r in range(N)}
    dist.all_to_all_single(out, tensor(src[R]))
    want = np.concatenate([src[r][2 * R:2 * R + 2] for r in range(N)])
    close(as_np(out), want, name, f"all_to_all_single equal {name}")

# -- point to point: a ring; any-source receive; batch_isend_irecv -----------------------------
right, left = (R + 1) % N, (R - 1) % N
for name in ("float64", "bool", "bfloat16"):
    send_t = tensor(data(R, (4, 2), name, 13), "strided")
    recv_t = tensor(np.zeros((4, 2), DTYPES[name][1]), "strided")
    ops = [dist.P2POp(dist.isend, send_t, right), dist.P2POp(dist.irecv, recv_t, left)]
    works = dist.batch_isend_irecv(ops)
    assert len(works) == 2 and all(isinstance(w, dist.Work) for w in works)
    for w in works:
        w.wait()
    close(as_np(recv_t), data(left, (4, 2), name, 13), name, f"batch_isend_irecv {name}")
if R % 2 == 0 and R + 1 < N:
    dist.send(ember.arange(5, dtype=ember.int64) * R, dst=R + 1, tag=7)
    sender = dist.recv(got := ember.zeros(3), tag=8)
    assert sender == R + 1, sender
    close(as_np(got), np.full(3, R + 1, np.float32), "float32", "recv any source")
elif R % 2 == 1:
    got = ember.zeros(5, dtype=ember.int64)
    assert dist.recv(got, src=R - 1, tag=7) == R - 1
    close(as_np(got), np.arange(5) * (R - 1), "int64", "send/recv")
    w = dist.isend(ember.full((3,), float(R)), dst=R - 1, tag=8)
    assert w.wait() is True and w.is_completed()
try:
    dist.send(ember.zeros(1), dst=R)
except ValueError as e:
    assert "destination rank should not be the same" in str(e)
    checks += 1

# -- async handles and futures ---------------------------------------------------------------
t = ember.ones(1000) * (R + 1)
work = dist.all_reduce(t, async_op=True)
assert isinstance(work, dist.Work)
assert work.wait() is True and work.is_completed() and work.is_success()
assert work.exception() is None
close(as_np(t), np.full(1000, N * (N + 1) / 2, np.float32), "float32", "async all_reduce")
t = ember.ones(3) * (R + 1)
fut = dist.all_reduce(t, async_op=True).get_future()
doubled = fut.then(lambda f: f.value()[0] * 2)
close(as_np(doubled.wait()), np.full(3, N * (N + 1), np.float32), "float32", "future then")
assert fut.done() and fut.value()[0] is t
works = [dist.broadcast(x := ember.full((2,), float(R)), src=0, async_op=True)
         for _ in range(3)]
while not all(w.is_completed() for w in works):
    pass
assert dist.barrier(async_op=True).wait()
dist.barrier(timeout=timedelta(seconds=30))
dist.monitored_barrier(timeout=timedelta(seconds=30), wait_all_ranks=True)
checks += 1


# -- object collectives: through the checkpoint unpickler ----------------------------------------
import os  # noqa: E402
import pickle  # noqa: E402


class Evil:
    """Unpickling this would run a shell command."""

    def __reduce__(self):
        return (os.system, ("echo pwned > /dev/null",))


payload = {"rank": R, "name": f"r{R}", "t": ember.arange(R + 2), "nested": [1.5, (2, "x")]}
gathered = [None] * N
dist.all_gather_object(gathered, payload)
for r in range(N):
    assert gathered[r]["rank"] == r and gathered[r]["nested"] == [1.5, (2, "x")]
    close(as_np(gathered[r]["t"]), np.arange(r + 2), "int64", "all_gather_object tensor")
objs = [{"lr": 0.1}, "text", 3, None] if R == 0 else [None] * 4
dist.broadcast_object_list(objs, src=0)
assert objs == [{"lr": 0.1}, "text", 3, None], objs
dst = N - 1
out = [None] * N if R == dst else None
dist.gather_object(("g", R), out, dst=dst)
assert R != dst or out == [("g", r) for r in range(N)], out
got = [None]
dist.scatter_object_list(got, [f"s{r}" for r in range(N)] if R == 0 else None, src=0)
assert got == [f"s{R}"], got
if R % 2 == 0 and R + 1 < N:
    dist.send_object_list([{"to": R + 1}, [R]], dst=R + 1)
elif R % 2 == 1:
    box = [None, None]
    assert dist.recv_object_list(box) == R - 1
    assert box == [{"to": R}, [R - 1]], box
# a malicious object from rank 0 is refused on every rank, and the group goes on
try:
    dist.all_gather_object([None] * N, Evil() if R == 0 else "fine")
except pickle.UnpicklingError as e:
    assert "rank 0" in str(e) and "system" in str(e), str(e)
    checks += 1
else:
    raise AssertionError("a pickle calling os.system was loaded")
dist.barrier()
checks += 1

# -- ProcessGroup's own methods ---------------------------------------------------------------
pg = dist.group.WORLD
a, b = ember.ones(3) * (R + 1), ember.ones(2) * (R + 1)
work = pg.allreduce([a, b], dist.AllreduceOptions())
assert work.wait()
close(as_np(a), np.full(3, N * (N + 1) / 2, np.float32), "float32", "pg.allreduce list")
close(as_np(b), np.full(2, N * (N + 1) / 2, np.float32), "float32", "pg.allreduce list")
pg.allreduce(a, dist.ReduceOp.MAX).wait()
close(as_np(a), np.full(3, N * (N + 1) / 2, np.float32), "float32", "pg.allreduce max")
c = ember.full((2,), float(R))
pg.broadcast([c], N - 1).wait()
close(as_np(c), np.full(2, N - 1, np.float32), "float32", "pg.broadcast")
outs = [ember.zeros(1) for _ in range(N)]
pg.allgather([outs], [ember.full((1,), float(R))]).wait()
close(np.concatenate([as_np(o) for o in outs]), np.arange(N, dtype=np.float32), "float32",
      "pg.allgather")
pg.barrier().wait()
assert pg.rank() == R and pg.size() == N and pg.name() == "gloo"

# -- groups ----------------------------------------------------------------------------------
assert dist.is_initialized() and dist.get_backend() == "gloo"
assert dist.group.WORLD is dist.GroupMember.WORLD
assert isinstance(dist.group.WORLD, dist.ProcessGroup)
pair = dist.new_group([0, N - 1])
if R in (0, N - 1):
    assert isinstance(pair, dist.ProcessGroup)
    assert dist.get_world_size(pair) == 2 and dist.get_rank(pair) == (0 if R == 0 else 1)
    assert dist.get_process_group_ranks(pair) == [0, N - 1]
    assert dist.get_global_rank(pair, 1) == N - 1 and dist.get_group_rank(pair, N - 1) == 1
    t = ember.full((2,), float(R))
    dist.all_reduce(t, group=pair)
    close(as_np(t), np.full(2, N - 1, np.float32), "float32", "all_reduce in a group")
    t = ember.full((2,), float(R))
    dist.broadcast(t, group=pair, group_src=1)
    close(as_np(t), np.full(2, N - 1, np.float32), "float32", "broadcast group_src")
else:
    assert pair == dist.GroupMember.NON_GROUP_MEMBER
    assert dist.get_rank(pair) == -1 and dist.get_world_size(pair) == -1
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert dist.all_reduce(ember.zeros(1), group=pair) is None
    assert "does not belong to the given group" in str(caught[0].message)
if R < 2:   # made by its members only
    local = dist.new_group([0, 1], use_local_synchronization=True)
    t = ember.full((1,), float(R + 1))
    dist.all_reduce(t, group=local)
    close(as_np(t), np.full(1, 3, np.float32), "float32", "locally synchronized group")
mine, subgroups = dist.new_subgroups(group_size=2)
assert len(subgroups) == N // 2 and dist.get_world_size(mine) == 2
assert dist.get_process_group_ranks(mine) == [R - R % 2, R - R % 2 + 1]
t = ember.full((1,), float(R))
dist.all_reduce(t, group=mine)
close(as_np(t), np.full(1, 2 * (R - R % 2) + 1, np.float32), "float32", "subgroup all_reduce")
mine2, _ = dist.new_subgroups_by_enumeration([list(range(N))[::-1]])
assert dist.get_rank(mine2) == R           # the ranks are sorted, as in PyTorch
backwards = dist.new_group(list(range(N))[::-1], sort_ranks=False)
assert dist.get_rank(backwards) == N - 1 - R
t = ember.full((1,), float(R))
dist.broadcast(t, group=backwards, group_src=0)
close(as_np(t), np.full(1, N - 1, np.float32), "float32", "unsorted group")
for bad in (dict(group_size=0), dict(group_size=3 if N == 2 else 5)):
    try:
        dist.new_subgroups(**bad)
    except ValueError:
        checks += 1
    else:
        raise AssertionError(f"new_subgroups({bad}) did not raise")
# -- TORCH_DISTRIBUTED_DEBUG=DETAIL: mismatched collectives raise instead of mixing data ------
dist.set_debug_level(dist.DebugLevel.DETAIL)
t = ember.ones(4)
dist.all_reduce(t)
close(as_np(t), np.full(4, N, np.float32), "float32", "DETAIL all_reduce")
try:
    dist.all_reduce(ember.ones(4 + R))
except RuntimeError as e:
    assert "Detected mismatch between collectives" in str(e), str(e)
    checks += 1
else:
    raise AssertionError("mismatched all_reduce sizes passed the DETAIL check")
dist.set_debug_level("OFF")
with dist.record_comm("grad sync"):
    work = dist.all_reduce(ember.ones(2), async_op=True)
assert "grad sync (all_reduce)" in repr(work), repr(work)
work.wait()

# DistributedSampler reads the world size and the rank from the default group
from ember.utils.data.distributed import DistributedSampler  # noqa: E402

sampler = DistributedSampler(range(10), shuffle=False)
assert sampler.num_replicas == N and sampler.rank == R
assert list(sampler) == list(DistributedSampler(range(10), N, R, shuffle=False))
checks += 1
dist.destroy_process_group(pair)
print(f"CHECKED {checks} rank {R}", flush=True)
dist.destroy_process_group()
assert not dist.is_initialized()
sys.exit(0)

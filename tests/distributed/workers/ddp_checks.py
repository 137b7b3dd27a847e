"""The checks of DDP, SyncBatchNorm and distributed checkpoints, run on every rank of one
mpiexec launch (test_ddp.py starts it): ``python ddp_checks.py OUTDIR CKPTDIR NAME...``.

Each check runs on every rank; a rank writes ``OUTDIR/<rank>.json`` with ``{name: "ok"}`` or
the traceback of the failure. The single-process reference of each check is computed in the
same process, on the whole batch, from the same seed.
"""

from __future__ import annotations

import copy
import json
import os
import sys
import time
import traceback
import warnings
from datetime import timedelta

import numpy as np

import ember
import ember.distributed as dist
import ember.distributed.checkpoint as dcp
from ember import nn
from ember.distributed.algorithms.ddp_comm_hooks import default_hooks
from ember.nn.parallel import DistributedDataParallel as DDP

CHECKS = {}


def check(fn):
    CHECKS[fn.__name__] = fn
    return fn


def rank() -> int:
    return dist.get_rank()


def world() -> int:
    return dist.get_world_size()


def assert_close(a, b, tol=1e-12, what=""):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    if a.shape != b.shape or not np.allclose(a, b, rtol=tol, atol=tol):
        diff = np.abs(a - b).max() if a.shape == b.shape else "shape"
        raise AssertionError(f"{what}: not close (max diff {diff}, tol {tol})")


def net(seed=0):
    ember.manual_seed(seed)
    layers = [nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 8), nn.Tanh(), nn.Linear(8, 3)]
    m = nn.Sequential(*layers).double()
    return m


def batch(n, seed):
    g = np.random.default_rng(seed)
    return (ember.from_numpy(g.standard_normal((n, 6))),
            ember.from_numpy(g.standard_normal((n, 3))))


def train_compare(steps=3, per_rank=4, ddp_kwargs=None, hook=None, tol=1e-12, momentum=0.9):
    """Train DDP on this rank's slice and a plain copy on the whole batch: same params."""
    ref = net(seed=100)
    local = net(seed=100 + rank())            # different start: DDP broadcasts rank 0's
    ddp = DDP(local, **(ddp_kwargs or {}))
    if hook is not None:
        ddp.register_comm_hook(None, hook)
    for p, q in zip(ddp.module.parameters(), ref.parameters()):
        assert_close(p, q, 0, "parameters after construction")
    opt = ember.optim.SGD(ddp.parameters(), lr=0.1, momentum=momentum)
    opt_ref = ember.optim.SGD(ref.parameters(), lr=0.1, momentum=momentum)
    W = world()
    for step in range(steps):
        x, y = batch(per_rank * W, seed=step)
        lo, hi = rank() * per_rank, (rank() + 1) * per_rank
        opt.zero_grad()
        ((ddp(x[lo:hi]) - y[lo:hi]) ** 2).mean().backward()
        opt.step()
        opt_ref.zero_grad()
        ((ref(x) - y) ** 2).mean().backward()
        opt_ref.step()
    for (n, p), q in zip(ddp.module.named_parameters(), ref.parameters()):
        assert_close(p, q, tol, f"parameter {n} after {steps} steps")
    return ddp


@check
def ddp_equals_single_process():
    ddp = train_compare()
    # after the first iteration the buckets were rebuilt in gradient-ready order
    assert ddp.reducer.has_rebuilt_buckets
    assert ddp.module.state_dict().keys() == net().state_dict().keys()
    assert all(k.startswith("module.") for k in ddp.state_dict())


@check
def ddp_small_buckets():
    # a tiny bucket cap: one bucket per parameter after the rebuild, all overlapped
    ddp = train_compare(ddp_kwargs={"bucket_cap_mb": 1e-4})
    # 104-byte buckets: a weight closes its bucket, a bias shares one with the next weight
    assert len(ddp.reducer.buckets) == 4, len(ddp.reducer.buckets)
    # the first bucket holds the last layer (its gradients come first)
    params = list(ddp.module.parameters())
    assert [id(p) for p in ddp.reducer.buckets[0].params] == [id(params[-1]), id(params[-2])]


@check
def ddp_gradient_as_bucket_view():
    ddp = train_compare(ddp_kwargs={"gradient_as_bucket_view": True, "bucket_cap_mb": 1e-4})
    for i, p in enumerate(ddp.reducer.params):
        b, pos = ddp.reducer.locate[i]
        assert p.grad is b.views[pos]


@check
def ddp_static_graph():
    train_compare(ddp_kwargs={"static_graph": True})
    # a parameter unused in every iteration: found in the first, skipped afterwards
    ember.manual_seed(0)
    ref = Branchy().double()
    ddp = DDP(copy.deepcopy(ref), static_graph=True)
    x = ember.randn(2 * world(), 4, dtype=ember.float64)
    for _ in range(3):
        ddp.zero_grad()
        ref.zero_grad()
        ddp(x[2 * rank():2 * rank() + 2]).sum().backward()
        (ref(x).sum() / world()).backward()
        assert ddp.module.never.weight.grad is None
        for (n, p), q in zip(ddp.module.named_parameters(), ref.parameters()):
            if not n.startswith("never"):
                assert_close(p.grad, q.grad, 1e-12, f"{n} grad (static graph)")
    assert ddp.reducer.static_unused == [4, 5], ddp.reducer.static_unused


@check
def ddp_no_sync_accumulation():
    ref = net(seed=5)
    ddp = DDP(net(seed=5 + rank()))
    W, B, M = world(), 3, 3
    x, y = batch(B * M * W, seed=7)
    # rank r's micro-batches: rows [r*B*M + m*B, ...)
    with ddp.no_sync():
        for m in range(M - 1):
            lo = rank() * B * M + m * B
            (((ddp(x[lo:lo + B]) - y[lo:lo + B]) ** 2).sum() / (B * M)).backward()
    lo = rank() * B * M + (M - 1) * B
    (((ddp(x[lo:lo + B]) - y[lo:lo + B]) ** 2).sum() / (B * M)).backward()
    (((ref(x) - y) ** 2).sum() / (B * M * W)).backward()
    for p, q in zip(ddp.parameters(), ref.parameters()):
        assert_close(p.grad, q.grad, 1e-12, "accumulated gradient")


class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(4, 4)
        self.b = nn.Linear(4, 4)
        self.never = nn.Linear(4, 4)

    def forward(self, x, use_b=True):
        x = self.a(x)
        return self.b(x) if use_b else x


@check
def ddp_find_unused_parameters():
    ember.manual_seed(0)
    ref = Branchy().double()
    ddp = DDP(copy.deepcopy(ref), find_unused_parameters=True)
    x = ember.randn(2 * world(), 4, dtype=ember.float64)
    for _step in range(2):
        ddp.zero_grad()
        ref.zero_grad()
        use_b = rank() == 0          # b used on rank 0 only
        lo = 2 * rank()
        ddp(x[lo:lo + 2], use_b=use_b).sum().backward()
        # reference: rank 0's slice through b, the others without it; averaged over ranks
        total = 0
        for r in range(world()):
            total = total + ref(x[2 * r:2 * r + 2], use_b=(r == 0)).sum()
        (total / world()).backward()
        for n, p in ddp.module.named_parameters():
            q = dict(ref.named_parameters())[n]
            if n.startswith("never"):
                assert p.grad is None, f"{n}: unused everywhere, grad must stay None"
            else:
                assert_close(p.grad, q.grad, 1e-12, f"{n} grad")


@check
def ddp_unused_without_find_unused_raises():
    ember.manual_seed(0)
    ddp = DDP(Branchy().double())
    x = ember.randn(2, 4, dtype=ember.float64)
    ddp(x)
    ddp(x)                           # forwards that no backward follows: no error
    ddp(x).sum().backward()          # self.never got no gradient
    try:
        ddp(x)
    except RuntimeError as e:
        assert "Expected to have finished reduction in the prior iteration" in str(e), e
        assert "find_unused_parameters=True" in str(e)
        assert "Parameter indices which did not receive grad for rank" in str(e)
    else:
        raise AssertionError("the second forward should raise")


class WithBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.register_buffer("scale", ember.ones(3))

    def forward(self, x):
        return self.lin(x) * self.scale


@check
def ddp_buffers_broadcast():
    ember.manual_seed(rank())
    m = WithBuffer()
    m.scale.fill_(float(rank() + 1))
    ddp = DDP(m)
    assert m.scale.tolist() == [1.0, 1.0, 1.0], "buffers broadcast at construction"
    m.scale.fill_(float(rank() + 10))
    ddp(ember.ones(1, 3)).sum().backward()
    assert m.scale.tolist() == [10.0] * 3, "buffers broadcast before each forward"
    # forward_sync_buffers=False: broadcast at construction only
    m2 = WithBuffer()
    ddp2 = DDP(m2, forward_sync_buffers=False)
    m2.scale.fill_(float(rank() + 10))
    ddp2(ember.ones(1, 3)).sum().backward()
    assert m2.scale.tolist() == [float(rank() + 10)] * 3
    assert ddp.will_sync_module_buffers() and not ddp2.will_sync_module_buffers()
    assert ddp.broadcast_buffers is True and ddp2.broadcast_buffers is False
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        DDP(WithBuffer(), broadcast_buffers=False)
    assert any(issubclass(x.category, FutureWarning) for x in w), "deprecated"


@check
def ddp_comm_hooks():
    train_compare(hook=default_hooks.allreduce_hook, tol=1e-12)
    train_compare(hook=default_hooks.fp16_compress_hook, tol=2e-3)
    train_compare(hook=default_hooks.bf16_compress_hook, tol=2e-2)
    train_compare(hook=default_hooks.fp16_compress_wrapper(default_hooks.allreduce_hook),
                  tol=2e-3)
    seen = []

    def inspect(state, bucket):
        assert state == "state"
        grads = bucket.gradients()
        assert len(grads) == len(bucket.parameters())
        for g, p in zip(grads, bucket.parameters()):
            assert g.shape == p.shape
        assert bucket.buffer().numel() == sum(p.numel() for p in bucket.parameters())
        seen.append((bucket.index(), bucket.is_last()))
        ready.append(sum(ddp.reducer.ready))
        return default_hooks.allreduce_hook(None, bucket)

    ready = []
    ddp = DDP(net(seed=0), bucket_cap_mb=1e-4)
    ddp.register_comm_hook("state", inspect)
    for _ in range(2):
        x, y = batch(4, seed=1)
        ((ddp(x) - y) ** 2).mean().backward()
    n = len(ddp.reducer.buckets)
    assert seen[-n:] == [(i, i == n - 1) for i in range(n)], seen
    # overlap: each bucket was started during backward, as soon as its gradients were in
    # (the first one with 2 of the 6 gradients ready: the last layer's), not at the end
    assert ready[-n:] == [2, 4, 5, 6], ready
    try:
        ddp.register_comm_hook(None, inspect)
    except RuntimeError as e:
        assert "can only be called once" in str(e)
    else:
        raise AssertionError("a second hook must be refused")


@check
def ddp_join_uneven_inputs():
    ref = net(seed=3)
    ddp = DDP(net(seed=3 + rank()))
    W, B = world(), 2
    steps = [3 + r for r in range(W)]          # rank r has 3 + r batches
    opt = ember.optim.SGD(ddp.parameters(), lr=0.1)
    opt_ref = ember.optim.SGD(ref.parameters(), lr=0.1)
    with ddp.join():
        for s in range(steps[rank()]):
            x, y = batch(B, seed=100 * rank() + s)
            opt.zero_grad()
            ((ddp(x) - y) ** 2).mean().backward()
            opt.step()
    # reference: in step s the ranks that still have data contribute, averaged over W
    for s in range(max(steps)):
        opt_ref.zero_grad()
        total = 0
        for r in range(W):
            if s < steps[r]:
                x, y = batch(B, seed=100 * r + s)
                total = total + ((ref(x) - y) ** 2).mean()
        (total / W).backward()
        opt_ref.step()
    for p, q in zip(ddp.module.parameters(), ref.parameters()):
        assert_close(p, q, 1e-12, "parameters after uneven training")
    # divide_by_initial_world_size=False: the average over the ranks still training
    ref2 = net(seed=3)
    ddp3 = DDP(net(seed=3 + rank()))
    opt3 = ember.optim.SGD(ddp3.parameters(), lr=0.1)
    opt_ref2 = ember.optim.SGD(ref2.parameters(), lr=0.1)
    with ddp3.join(divide_by_initial_world_size=False):
        for s in range(steps[rank()]):
            x, y = batch(B, seed=100 * rank() + s)
            opt3.zero_grad()
            ((ddp3(x) - y) ** 2).mean().backward()
            opt3.step()
    for s in range(max(steps)):
        opt_ref2.zero_grad()
        active = [r for r in range(W) if s < steps[r]]
        total = 0
        for r in active:
            x, y = batch(B, seed=100 * r + s)
            total = total + ((ref2(x) - y) ** 2).mean()
        (total / len(active)).backward()
        opt_ref2.step()
    for p, q in zip(ddp3.module.parameters(), ref2.parameters()):
        assert_close(p, q, 1e-12, "parameters, divided by the ranks still training")
    # throw_on_early_termination: every rank raises once one runs out
    ddp2 = DDP(net(seed=0))
    try:
        with ddp2.join(throw_on_early_termination=True):
            for s in range(steps[rank()]):
                x, y = batch(B, seed=s)
                ((ddp2(x) - y) ** 2).mean().backward()
    except RuntimeError as e:
        assert "exhausted" in str(e), e
    else:
        raise AssertionError("throw_on_early_termination must raise")


@check
def ddp_subgroups():
    # two DDP groups of two ranks each: each pair averages within itself only
    groups = [dist.new_group([0, 1]), dist.new_group([2, 3])]
    mine = groups[rank() // 2]
    first = 2 * (rank() // 2)
    ref = net(seed=50 + first)                     # the group's first rank's start
    ddp = DDP(net(seed=50 + rank()), process_group=mine)
    x, y = batch(8, seed=first)
    lo = 4 * (rank() % 2)
    ((ddp(x[lo:lo + 4]) - y[lo:lo + 4]) ** 2).mean().backward()
    ((ref(x) - y) ** 2).mean().backward()
    for p, q in zip(ddp.module.parameters(), ref.parameters()):
        assert_close(p, q, 0, "parameters broadcast from the group's first rank")
        assert_close(p.grad, q.grad, 1e-12, "gradients averaged within the group")


def sync_bn_data(n_per_rank, c=3, seed=11):
    g = np.random.default_rng(seed)
    total = sum(n_per_rank)
    x = ember.from_numpy(g.standard_normal((total, c, 4, 5)) * 2 + 1)
    go = ember.from_numpy(g.standard_normal((total, c, 4, 5)))
    starts = np.cumsum([0] + list(n_per_rank))
    return x, go, int(starts[rank()]), int(starts[rank() + 1])


@check
def sync_batchnorm_matches_batchnorm():
    W = world()
    for counts in ([4] * W, [2 + r for r in range(W)], [0] + [3] * (W - 1)):
        x, go, lo, hi = sync_bn_data(counts)
        bn = nn.BatchNorm2d(3).double()
        with ember.no_grad():
            bn.weight.copy_(ember.tensor([0.5, 1.5, -1.0], dtype=ember.float64))
            bn.bias.copy_(ember.tensor([0.1, 0.2, 0.3], dtype=ember.float64))
        sbn = nn.SyncBatchNorm.convert_sync_batchnorm(copy.deepcopy(bn))
        assert isinstance(sbn, nn.SyncBatchNorm)
        xr = x.clone().requires_grad_(True)
        out_ref = bn(xr)
        out_ref.backward(go)
        xl = x[lo:hi].clone().requires_grad_(True)
        out = sbn(xl)
        out.backward(go[lo:hi])
        assert_close(out, out_ref[lo:hi], 1e-10, f"{counts} output")
        assert_close(xl.grad, xr.grad[lo:hi], 1e-10, f"{counts} input grad")
        gw = sbn.weight.grad.clone()
        gb = sbn.bias.grad.clone()
        dist.all_reduce(gw)
        dist.all_reduce(gb)
        assert_close(gw, bn.weight.grad, 1e-10, f"{counts} weight grad (summed)")
        assert_close(gb, bn.bias.grad, 1e-10, f"{counts} bias grad (summed)")
        assert_close(sbn.running_mean, bn.running_mean, 1e-12, "running mean")
        assert_close(sbn.running_var, bn.running_var, 1e-12, "running var")
        sbn.eval()
        bn.eval()
        assert_close(sbn(x[lo:hi]), bn(x[lo:hi]), 1e-12, "eval")


@check
def sync_batchnorm_in_ddp():
    ember.manual_seed(0)
    ref = nn.Sequential(nn.Conv2d(2, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(),
                        nn.Linear(4 * 4 * 4, 2)).double()
    model = nn.SyncBatchNorm.convert_sync_batchnorm(copy.deepcopy(ref))
    ddp = DDP(model)
    opt = ember.optim.SGD(ddp.parameters(), lr=0.1)
    opt_ref = ember.optim.SGD(ref.parameters(), lr=0.1)
    W, B = world(), 3
    for step in range(2):
        g = np.random.default_rng(step)
        x = ember.from_numpy(g.standard_normal((B * W, 2, 6, 6)))
        lo = rank() * B
        opt.zero_grad()
        (ddp(x[lo:lo + B]) ** 2).mean().backward()
        opt.step()
        opt_ref.zero_grad()
        (ref(x) ** 2).mean().backward()
        opt_ref.step()
    for (n, p), q in zip(model.state_dict().items(), ref.state_dict().values()):
        assert_close(p, q, 1e-10, n)


def checkpoint_state():
    ember.manual_seed(42)
    model = nn.Sequential(nn.Linear(40, 30), nn.ReLU(), nn.Linear(30, 5))
    opt = ember.optim.Adam(model.parameters(), lr=0.01)
    model(ember.randn(2, 40)).sum().backward()
    opt.step()
    return model, opt


@check
def checkpoint_save_two_ranks():
    ckpt = sys.argv[2]
    model, opt = checkpoint_state()
    ddp = DDP(model)
    state = {"model": ddp.module.state_dict(), "optim": opt.state_dict(), "step": 7}
    md = dcp.save(state, storage_writer=dcp.FileSystemWriter(ckpt, shard_rows_over_bytes=1000))
    dist.barrier()
    files = sorted(f for f in os.listdir(ckpt))
    assert files == [".metadata"] + [f"__{r}_0.distcp" for r in range(world())], files
    # the big weight (30 x 40 floats) went out in row shards, one per rank
    chunks = md.state_dict_metadata["model.0.weight"].chunks
    assert [c.offsets for c in chunks] == [(0, 0), (15, 0)], chunks
    assert [c.sizes for c in chunks] == [(15, 40), (15, 40)], chunks
    # load on the same ranks into fresh state
    ember.manual_seed(7)
    fresh, fresh_opt = checkpoint_state()
    fresh.apply(lambda m: m.reset_parameters() if hasattr(m, "reset_parameters") else None)
    target = {"model": fresh.state_dict(), "optim": fresh_opt.state_dict(), "step": 0}
    dcp.load(target, checkpoint_id=ckpt)
    assert target["step"] == 7
    for k, v in model.state_dict().items():
        assert_close(target["model"][k], v, 0, k)


@check
def checkpoint_load_other_world_size():
    ckpt = sys.argv[2]
    model, opt = checkpoint_state()
    fresh = nn.Sequential(nn.Linear(40, 30), nn.ReLU(), nn.Linear(30, 5))
    ddp = DDP(fresh)
    target = {"model": ddp.module.state_dict(), "optim": opt.state_dict(), "step": 0}
    dcp.load(target, checkpoint_id=ckpt)
    fresh.load_state_dict(target["model"])
    for k, v in model.state_dict().items():
        assert_close(fresh.state_dict()[k], v, 0, k)
    assert target["step"] == 7


def main():
    out, names = sys.argv[1], sys.argv[3:]
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    results, seconds = {}, {}
    for name in names:
        start = time.perf_counter()
        try:
            CHECKS[name]()
            results[name] = "ok"
        except Exception:  # noqa: BLE001 - reported to the test
            results[name] = traceback.format_exc()
        dist.barrier()
        seconds[name] = round(time.perf_counter() - start, 3)
    results["_seconds"] = seconds
    with open(os.path.join(out, f"{rank()}.json"), "w") as f:
        json.dump(results, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

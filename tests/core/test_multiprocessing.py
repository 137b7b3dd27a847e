"""ember.multiprocessing: tensors put in a Queue or a Pipe or passed to a Process share
memory with the sender (fork and spawn), share_memory_/is_shared, Module.share_memory,
spawn(), and Hogwild: several processes train one shared model lock-free with SGD and
the shared model's loss goes down.
"""

from __future__ import annotations

import multiprocessing as python_multiprocessing

import numpy as np
import pytest

import ember
import ember.multiprocessing as mp
from ember import nn
from ember.multiprocessing import is_shared, share_memory_

# -- children (module level: a spawned child imports them) -----------------------------


def _add_one_from_queue(q, done):
    x = q.get()
    x.add_(1)
    done.put(bool(is_shared(x)))


def _fill_from_pipe(conn):
    x = conn.recv()
    x.fill_(7)
    conn.send(x.shape)
    conn.close()


def _send_own_tensor(conn):
    x = ember.ones(4)
    conn.send(x)
    conn.recv()  # the parent changed it in place meanwhile
    conn.send(x.sum().item())
    conn.close()


def _double_arg(x):
    x.mul_(2)


def _grad_in_child(q, out):
    p = q.get()
    (p * 2).sum().backward()
    out.put((type(p).__name__, bool(p.requires_grad), p.grad.tolist()))


def _raise_in_child(i, message):
    if i == 1:
        raise ValueError(message)


def _write_rank(i, t):
    t[i] = i + 1


def _hogwild_train(rank, model, x, y, steps):
    ember.manual_seed(rank)
    opt = ember.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(steps):
        idx = ember.randint(0, x.shape[0], (16,))
        loss = ((model(x[idx]) - y[idx]) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


# -- sharing in one process ---------------------------------------------------------------

def test_share_memory_moves_data_in_place():
    t = ember.arange(12.0).reshape(3, 4)
    assert not is_shared(t)
    assert share_memory_(t) is t
    assert is_shared(t) and t.tolist() == np.arange(12.0).reshape(3, 4).tolist()
    data = t._data
    share_memory_(t)
    assert t._data is data  # already shared: a no-op
    tt = ember.arange(6.0).reshape(2, 3).t()  # non-contiguous
    share_memory_(tt)
    assert is_shared(tt) and tt.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    e = ember.empty(0)
    assert share_memory_(e) is e


def test_share_memory_of_a_view_moves_its_base():
    base = ember.arange(12.0)
    v = base[2:6]
    share_memory_(v)
    assert is_shared(v) and is_shared(base) and v.tolist() == [2.0, 3.0, 4.0, 5.0]
    base[3] = 100.0  # still a view of its base
    assert v[1].item() == 100.0


def test_module_share_memory():
    model = nn.Linear(3, 2)
    w = model.weight
    model.share_memory()
    assert model.weight is w and isinstance(w, nn.Parameter)
    assert all(is_shared(p) for p in model.parameters())
    out = model(ember.ones(1, 3)).sum()
    out.backward()
    ember.optim.SGD(model.parameters(), lr=0.1).step()
    assert is_shared(model.weight)  # updated in place


def test_sharing_strategy():
    assert mp.get_sharing_strategy() == "file_descriptor"
    assert "file_descriptor" in mp.get_all_sharing_strategies()
    mp.set_sharing_strategy("file_descriptor")
    with pytest.raises(ValueError, match="invalid sharing strategy"):
        mp.set_sharing_strategy("nope")


def test_drop_in_names():
    for name in ("get_context", "Process", "Queue", "Pipe", "SimpleQueue", "Event", "Lock",
                 "cpu_count", "set_start_method", "get_start_method", "Pool"):
        assert getattr(mp, name) is getattr(python_multiprocessing, name), name


def test_non_leaf_requiring_grad_refuses():
    from multiprocessing.reduction import ForkingPickler

    x = ember.ones(2, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        ForkingPickler.dumps(x)


def test_pickled_tensor_is_a_descriptor_not_bytes():
    from multiprocessing.reduction import ForkingPickler

    ctx = mp.get_context("fork")
    a, b = ctx.Pipe()
    x = ember.zeros(100_000)
    a.send(x)
    y = b.recv()  # same process: the descriptor comes back through the resource sharer
    assert len(ForkingPickler.dumps(x)) < 1000
    y[5] = 3.0
    assert x[5].item() == 3.0  # one memory
    a.close()
    b.close()


# -- across processes ---------------------------------------------------------------------

@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_queue_shares_memory(method):
    ctx = mp.get_context(method)
    q, done = ctx.Queue(), ctx.Queue()
    x = ember.zeros(5)
    p = ctx.Process(target=_add_one_from_queue, args=(q, done))
    p.start()
    q.put(x)
    assert done.get(timeout=60) is True
    p.join(60)
    assert p.exitcode == 0
    assert is_shared(x) and x.tolist() == [1.0] * 5


def test_pipe_shares_memory_both_ways():
    ctx = mp.get_context("fork")
    a, b = ctx.Pipe()
    x = ember.zeros(2, 3)
    p = ctx.Process(target=_fill_from_pipe, args=(b,))
    p.start()
    a.send(x)
    assert tuple(a.recv()) == (2, 3)
    p.join(30)
    assert x.tolist() == [[7.0] * 3] * 2

    p = ctx.Process(target=_send_own_tensor, args=(b,))
    p.start()
    y = a.recv()  # the child's tensor, mapped here
    y.fill_(5)
    a.send("changed")
    assert a.recv() == 20.0  # the child sees our writes
    p.join(30)
    assert p.exitcode == 0


def test_spawned_process_argument_shares_memory():
    ctx = mp.get_context("spawn")
    x = ember.arange(4.0)
    p = ctx.Process(target=_double_arg, args=(x,))
    p.start()
    p.join(60)
    assert p.exitcode == 0 and x.tolist() == [0.0, 2.0, 4.0, 6.0]


def test_parameter_keeps_type_and_grads_stay_per_process():
    ctx = mp.get_context("fork")
    q, out = ctx.Queue(), ctx.Queue()
    param = nn.Parameter(ember.ones(3))
    p = ctx.Process(target=_grad_in_child, args=(q, out))
    p.start()
    q.put(param)
    assert out.get(timeout=30) == ("Parameter", True, [2.0, 2.0, 2.0])
    p.join(30)
    assert param.grad is None  # the child's gradient stayed in the child


def test_spawn_helper():
    t = share_memory_(ember.zeros(3))
    assert mp.spawn(_write_rank, args=(t,), nprocs=3, start_method="fork") is None
    assert t.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(mp.ProcessRaisedException, match="ValueError: boom") as info:
        mp.spawn(_raise_in_child, args=("boom",), nprocs=2, start_method="fork")
    assert "Process 1 terminated with the following error" in str(info.value)


def _regression(seed=0, n=256):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 8)).astype(np.float32)
    w = rng.standard_normal((8, 1)).astype(np.float32)
    return ember.from_numpy(x), ember.from_numpy(x @ w + 0.5)


def _loss(model, x, y):
    with ember.no_grad():
        return ((model(x) - y) ** 2).mean().item()


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_hogwild(method):
    ember.manual_seed(0)
    x, y = _regression()
    model = nn.Linear(8, 1)
    model.share_memory()
    before = _loss(model, x, y)
    ctx = mp.get_context(method)
    procs = [ctx.Process(target=_hogwild_train, args=(rank, model, x, y, 60))
             for rank in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    after = _loss(model, x, y)
    assert after < 0.1 * before, (before, after)  # the children trained our parameters
    assert model.weight.grad is None

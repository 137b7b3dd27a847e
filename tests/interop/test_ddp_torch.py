"""DistributedDataParallel, SyncBatchNorm, the comm hooks and the checkpoint API against
PyTorch's: signatures, and, in a world of one process (gloo for torch, MPI's singleton for
ember, in a subprocess), the same gradients, state_dict keys, unused-parameter handling and
error message."""

from __future__ import annotations

import inspect
import subprocess
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("mpi4py")

import ember  # noqa: E402


def _params(fn):
    return [(p.name, p.default, p.kind) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize("path", [
    "nn.parallel.DistributedDataParallel.__init__",
    "nn.parallel.DistributedDataParallel.no_sync",
    "nn.parallel.DistributedDataParallel.join",
    "nn.parallel.DistributedDataParallel.register_comm_hook",
    "nn.SyncBatchNorm.__init__",
    "nn.SyncBatchNorm.convert_sync_batchnorm",
    "distributed.algorithms.Join.__init__",
    "distributed.algorithms.ddp_comm_hooks.default_hooks.allreduce_hook",
    "distributed.algorithms.ddp_comm_hooks.default_hooks.fp16_compress_hook",
    "distributed.algorithms.ddp_comm_hooks.default_hooks.bf16_compress_hook",
    "distributed.algorithms.ddp_comm_hooks.default_hooks.fp16_compress_wrapper",
    "distributed.checkpoint.save",
    "distributed.checkpoint.load",
    "distributed.checkpoint.save_state_dict",
    "distributed.checkpoint.load_state_dict",
    "distributed.checkpoint.FileSystemReader.__init__",
])
def test_signatures_like_torch(path):
    import importlib

    def resolve(root):
        parts = path.split(".")
        obj = root
        for i, p in enumerate(parts):
            if not hasattr(obj, p):
                obj = importlib.import_module(".".join([root.__name__, *parts[:i + 1]]))
            else:
                obj = getattr(obj, p)
        return obj

    assert _params(resolve(ember)) == _params(resolve(torch))


def test_file_system_writer_takes_torchs_arguments():
    t = [p[:2] for p in _params(torch.distributed.checkpoint.FileSystemWriter.__init__)]
    e = [p[:2] for p in _params(ember.distributed.checkpoint.FileSystemWriter.__init__)]
    # the enum default compared by value; then ember's keyword-only shard_rows_over_bytes
    norm = [(n, getattr(d, "value", d)) for n, d in t]
    assert [(n, getattr(d, "value", d)) for n, d in e[:len(t)]] == norm
    assert e[len(t):] == [("shard_rows_over_bytes", 1 << 20)]
    with pytest.raises(ValueError, match="TORCH_SAVE shards only"):
        ember.distributed.checkpoint.FileSystemWriter(
            "x", serialization_format=ember.distributed.checkpoint.filesystem
            .SerializationFormat.SAFETENSORS)


def test_grad_bucket_methods_like_torch():
    public = {n for n in dir(torch.distributed.GradBucket) if not n.startswith("_")}
    assert public <= set(dir(ember.distributed.GradBucket))


SCRIPT = r'''
import os, sys, tempfile, warnings
warnings.simplefilter("ignore")
import numpy as np
import torch, torch.distributed as tdist
import ember, ember.distributed as edist

store = os.path.join(tempfile.mkdtemp(), "store")
tdist.init_process_group("gloo", init_method="file://" + store, rank=0, world_size=1)
edist.init_process_group("gloo")

def make(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = lib.nn.Linear(4, 3)
            self.unused = lib.nn.Linear(3, 3)
            self.bn = lib.nn.BatchNorm1d(3)
        def forward(self, x):
            return self.bn(self.a(x))
    lib.manual_seed(0)
    return Net().double()

tm, em = make(torch), make(ember)
em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
x = np.random.default_rng(0).standard_normal((5, 4))
if True:
    td = torch.nn.parallel.DistributedDataParallel(tm, find_unused_parameters=True)
    ed = ember.nn.parallel.DistributedDataParallel(em, find_unused_parameters=True)
    assert list(td.state_dict()) == list(ed.state_dict())
    for _ in range(2):
        td(torch.tensor(x)).pow(2).sum().backward()
        ed(ember.tensor(x)).pow(2).sum().backward()
    for (n, p), q in zip(tm.named_parameters(), em.parameters()):
        if p.grad is None:
            assert q.grad is None, n
        else:
            np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-12, atol=1e-12)
    print("GRADS OK")

msgs = []
for lib, ddp_cls, mod in ((torch, torch.nn.parallel.DistributedDataParallel, make(torch)),
                          (ember, ember.nn.parallel.DistributedDataParallel, make(ember))):
    d = ddp_cls(mod)
    d(lib.ones(5, 4, dtype=lib.float64)).sum().backward()
    try:
        d(lib.ones(5, 4, dtype=lib.float64))
    except RuntimeError as e:
        msgs.append(str(e))
    else:
        msgs.append("no error")
t, e = msgs
first = "Expected to have finished reduction in the prior iteration before starting a new one."
assert t.startswith(first) and e.startswith(first), (t, e)
line = "Parameter indices which did not receive grad for rank 0: 2 3"
assert line in t and line in e, (t, e)
print("MESSAGE OK")
'''


def test_ddp_in_a_world_of_one_like_torch():
    env = {k: v for k, v in __import__("os").environ.items()
           if not k.startswith(("OMPI_", "PMIX_", "PRTE_", "RANK", "WORLD_SIZE", "MASTER_"))}
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(SCRIPT)], capture_output=True,
                          text=True, timeout=180, env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "GRADS OK" in out and "MESSAGE OK" in out, out

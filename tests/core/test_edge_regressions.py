"""Regressions for answers that were silently wrong under edge-case input (issue 16), each
checked where the right answer is known without a reference library: zeros, unchanged
running statistics, a raised error. tests/interop/test_edge_regressions_torch.py checks the
same cases against PyTorch."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import zipfile

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn

# ---------------------------------------------------------------------------
# 1. the weight gradient of a convolution on an empty batch


@pytest.mark.parametrize("fn,x_shape,w_shape,kwargs", [
    (F.conv1d, (0, 2, 5), (3, 2, 3), {}),
    (F.conv2d, (0, 2, 5, 5), (3, 2, 3, 3), {}),
    (F.conv3d, (0, 2, 4, 4, 4), (3, 2, 3, 3, 3), {}),
    (F.conv2d, (0, 16, 6, 6), (16, 16, 3, 3), {"padding": 1}),  # the Winograd path
    (F.conv2d, (0, 4, 5, 5), (4, 2, 3, 3), {"groups": 2}),
    (F.conv_transpose1d, (0, 2, 4), (2, 3, 3), {"stride": 2}),
    (F.conv_transpose2d, (0, 2, 4, 4), (2, 3, 3, 3), {}),
], ids=["conv1d", "conv2d", "conv3d", "winograd", "groups", "conv_transpose1d",
        "conv_transpose2d"])
def test_conv_empty_batch_gives_zero_weight_gradient(fn, x_shape, w_shape, kwargs):
    out_channels = w_shape[1] if "transpose" in fn.__name__ else w_shape[0]
    for _ in range(3):  # fresh buffers each time: garbage would differ between rounds
        x = ember.randn(*x_shape, requires_grad=True)
        w = ember.randn(*w_shape, requires_grad=True)
        b = ember.randn(out_channels, requires_grad=True)
        y = fn(x, w, b, **kwargs)
        assert y.shape[0] == 0
        y.sum().backward()
        assert w.grad.shape == w.shape and not w.grad.numpy().any()
        assert b.grad.shape == b.shape and not b.grad.numpy().any()
        assert x.grad.shape == x.shape


@pytest.mark.parametrize("module", [nn.Conv1d(2, 3, 3), nn.Conv2d(2, 3, 3)])
def test_conv_module_empty_batch(module):
    x = ember.zeros((0, 2) + (5,) * (module.weight.dim() - 2))
    module(x).sum().backward()
    assert not module.weight.grad.numpy().any() and not module.bias.grad.numpy().any()


# ---------------------------------------------------------------------------
# 2. batch norm in training mode on an empty batch


@pytest.mark.parametrize("module,shape", [(nn.BatchNorm1d(3), (0, 3)),
                                          (nn.BatchNorm2d(3), (0, 3, 4, 4)),
                                          (nn.BatchNorm1d(3), (2, 3, 0))])
def test_batch_norm_empty_batch_leaves_running_stats(module, shape):
    module.train()
    module(ember.randn(8, *shape[1:2], *([4] * (len(shape) - 2)))).sum()
    mean, var = module.running_mean.clone(), module.running_var.clone()
    x = ember.zeros(*shape, requires_grad=True)
    y = module(x)
    assert y.shape == x.shape
    np.testing.assert_array_equal(module.running_mean.numpy(), mean.numpy())
    np.testing.assert_array_equal(module.running_var.numpy(), var.numpy())
    y.sum().backward()
    assert not module.weight.grad.numpy().any() and not module.bias.grad.numpy().any()
    module.eval()
    assert np.isfinite(module(ember.randn(4, *shape[1:2], *([4] * (len(shape) - 2))))
                       .detach().numpy()).all()


def test_instance_norm_empty_batch_leaves_running_stats():
    m = nn.InstanceNorm1d(3, track_running_stats=True)
    m(ember.randn(0, 3, 5))
    np.testing.assert_array_equal(m.running_mean.numpy(), np.zeros(3))
    np.testing.assert_array_equal(m.running_var.numpy(), np.ones(3))


# ---------------------------------------------------------------------------
# 3. where the dims of an advanced index go when integers lie among the indices


def test_integer_and_tensor_index_keeps_pytorch_dim_order():
    x = ember.arange(36.0).reshape(6, 2, 3)
    # integers are applied first: x[3, :, t] is x[3][:, t]
    assert x[3, :, ember.tensor([0, 2])].tolist() == [[18.0, 20.0], [21.0, 23.0]]
    assert x[1, None, ember.tensor([0, 1])].shape == (1, 2, 3)
    assert x[1, None, ember.tensor([0, 1])].tolist() == [[[6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]]
    # separated by a slice the index dims still go first
    y = ember.arange(24.0).reshape(2, 3, 4)
    assert y[ember.tensor([0, 1]), :, ember.tensor([1, 2])].shape == (2, 3)
    assert y[ember.tensor([1]), :, 0].tolist() == [[12.0, 16.0, 20.0]]
    assert y[:, 0, ember.tensor([3, 0])].tolist() == [[3.0, 0.0], [15.0, 12.0]]


def test_integer_and_tensor_setitem_and_gradients():
    x = ember.zeros(6, 2, 3)
    x[3, :, ember.tensor([0, 2])] = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert x[3].tolist() == [[1.0, 0.0, 2.0], [3.0, 0.0, 4.0]]
    x[4, :, ember.tensor([1, 2])] = ember.tensor([5.0, 6.0])  # broadcast over the slice
    assert x[4].tolist() == [[0.0, 5.0, 6.0], [0.0, 5.0, 6.0]]
    a = ember.zeros(6, 2, 3, requires_grad=True)
    w = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    (a[3, :, ember.tensor([0, 2])] * w).sum().backward()
    assert a.grad[3].tolist() == [[1.0, 0.0, 2.0], [3.0, 0.0, 4.0]]
    v = ember.zeros(2, 2, requires_grad=True)
    b = ember.zeros(6, 2, 3) * 1
    b[3, :, ember.tensor([0, 2])] = v
    (b * ember.arange(36.0).reshape(6, 2, 3)).sum().backward()
    assert v.grad.tolist() == [[18.0, 20.0], [21.0, 23.0]]


# ---------------------------------------------------------------------------
# 4. which index-taking ops accept negative indices


def test_index_select_refuses_negative_indices():
    x = ember.arange(20.0).reshape(4, 5)
    with pytest.raises(IndexError, match="index -1 is out of bounds for dimension 0"):
        x.index_select(0, ember.tensor([-1]))
    with pytest.raises(IndexError, match="index -1 is out of bounds for dimension 1"):
        ember.index_select(x, 1, ember.tensor([0, -1]))
    assert x.index_select(0, ember.tensor([3])).tolist() == [[15.0, 16.0, 17.0, 18.0, 19.0]]


def test_take_along_dim_counts_negative_indices_from_the_end():
    x = ember.arange(20.0).reshape(4, 5)
    got = ember.take_along_dim(x, ember.tensor([[-1, 0, -4, 3, 2]]), 0)
    assert got.tolist() == [[15.0, 1.0, 2.0, 18.0, 14.0]]
    for bad in (4, -5):
        with pytest.raises(IndexError, match=f"index {bad} is out of bounds"):
            ember.take_along_dim(x, ember.tensor([[bad]]), 0)
    # without dim the input is read as 1-d and negatives are refused, as by gather
    with pytest.raises(IndexError, match="index -1 is out of bounds"):
        ember.take_along_dim(x, ember.tensor([-1]))


@pytest.mark.parametrize("name,call", [
    ("gather", lambda x, i: x.gather(0, i.reshape(1, 1))),
    ("scatter_", lambda x, i: x.clone().scatter_(0, i.reshape(1, 1), 1.0)),
    ("scatter_add_", lambda x, i: x.clone().scatter_add_(0, i.reshape(1, 1), ember.ones(1, 1))),
    ("index_add_", lambda x, i: x.clone().index_add_(0, i, ember.ones(1, 5))),
    ("index_copy_", lambda x, i: x.clone().index_copy_(0, i, ember.ones(1, 5))),
    ("embedding", lambda x, i: F.embedding(i, x)),
    ("one_hot", lambda x, i: F.one_hot(i, 4)),
    ("nll_loss", lambda x, i: F.nll_loss(x[:1], i)),
])
def test_ops_refusing_negative_indices(name, call):
    x = ember.arange(20.0).reshape(4, 5)
    with pytest.raises((IndexError, RuntimeError)):
        call(x, ember.tensor([-1]))


@pytest.mark.parametrize("name,call,expected", [
    ("getitem", lambda x, i: x[i], [15.0, 16.0, 17.0, 18.0, 19.0]),
    ("take", lambda x, i: x.take(i), [19.0]),
    ("index_fill_", lambda x, i: x.clone().index_fill_(0, i, -1.0)[3], [-1.0] * 5),
    ("index_put_", lambda x, i: x.clone().index_put_((i,), ember.tensor(-1.0))[3], [-1.0] * 5),
    ("put_", lambda x, i: x.clone().put_(i, ember.tensor([-1.0]))[3, 4:], [-1.0]),
])
def test_ops_accepting_negative_indices(name, call, expected):
    x = ember.arange(20.0).reshape(4, 5)
    assert call(x, ember.tensor([-1])).reshape(-1).tolist() == expected


# ---------------------------------------------------------------------------
# 5. a tensor hook may not change the gradient's shape, dtype or kind


def _leaf_and_target(leaf):
    x = ember.ones(3, requires_grad=True)
    return (x, x) if leaf else (x, x * 2)


@pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "non-leaf"])
def test_hook_changing_shape_or_dtype_raises(leaf):
    def grow(g):
        return ember.ones(4)

    for hook, exc, msg in [
        (grow, RuntimeError, "hook 'grow' has changed the size of value"),
        (lambda g: ember.ones(1, 3), RuntimeError, "has changed the size of value"),
        (lambda g: g.double(), RuntimeError,
         r"has changed the type of value \(was torch.FloatTensor got torch.DoubleTensor\)"),
        (lambda g: g.long(), RuntimeError, "has changed the type of value"),
        (lambda g: 3.0, TypeError, "expected Variable, but hook returned 'float'"),
    ]:
        x, t = _leaf_and_target(leaf)
        t.register_hook(hook)
        with pytest.raises(exc, match=msg):
            t.sum().backward()


@pytest.mark.parametrize("leaf", [True, False], ids=["leaf", "non-leaf"])
def test_hook_returning_same_kind_replaces_gradient(leaf):
    x, t = _leaf_and_target(leaf)
    t.register_hook(lambda g: g * 3)
    t.sum().backward()
    assert x.grad.tolist() == ([3.0] * 3 if leaf else [6.0] * 3)


def test_node_prehook_changing_shape_raises():
    x = ember.ones(3, requires_grad=True)
    y = x * 2
    y.grad_fn.register_prehook(lambda grads: (ember.ones(4),))
    with pytest.raises(RuntimeError, match="has changed the size of value"):
        y.sum().backward()
    z = x * 2
    z.grad_fn.register_prehook(lambda grads: (grads[0], grads[0]))
    with pytest.raises(RuntimeError, match="incorrect number of values"):
        z.sum().backward()


# ---------------------------------------------------------------------------
# 6. in-place ops whose input partly overlaps the written-to tensor, and writes into an
#    expanded tensor

_PARTIAL = "some elements of the input tensor and the written-to tensor refer to a single"
_INTERNAL = "more than one element of the written-to tensor refers to a single memory location"


@pytest.mark.parametrize("name,op", [
    ("add_", lambda x: x[1:].add_(x[:-1])),
    ("mul_", lambda x: x[:-1].mul_(x[1:])),
    ("copy_", lambda x: x[1:].copy_(x[:-1])),
    ("setitem", lambda x: x[1:].__setitem__(slice(None), x[:-1])),
    ("clamp_", lambda x: x[1:].clamp_(min=x[:-1])),
    ("lerp_", lambda x: x[1:].lerp_(x[:-1], 0.5)),
    ("transposed", lambda x: x[:4].reshape(2, 2).add_(x[:4].reshape(2, 2).t())),
])
def test_partly_overlapping_inplace_raises(name, op):
    x = ember.arange(5.0)
    with pytest.raises(RuntimeError, match=_PARTIAL):
        op(x)
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_overlap_rules_that_allow_the_op():
    x = ember.arange(6.0)
    x.add_(x)  # the same elements
    assert x.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    x[:3].mul_(x[3:])  # disjoint parts of one storage
    assert x.tolist() == [0.0, 16.0, 40.0, 6.0, 8.0, 10.0]
    y = ember.arange(6.0)
    y[::2].add_(y[1::2])  # interleaved: not dense, so not refused (as in PyTorch)
    assert y.tolist() == [1.0, 1.0, 5.0, 3.0, 9.0, 5.0]


@pytest.mark.parametrize("op", [lambda e: e.add_(1), lambda e: e.copy_(ember.ones(3)),
                                lambda e: e.relu_(), lambda e: e.mul_(ember.ones(3))],
                         ids=["add_", "copy_", "relu_", "mul_"])
def test_writing_into_expanded_tensor_raises(op):
    with pytest.raises(RuntimeError, match=_INTERNAL):
        op(ember.zeros(1).expand(3))


@pytest.mark.parametrize("opt", ["SGD", "Adam"])
def test_optimizer_step_on_expanded_parameter_raises(opt):
    p = nn.Parameter(ember.zeros(1).expand(3))
    p.grad = ember.ones(3)
    with pytest.raises(RuntimeError, match=_INTERNAL):
        getattr(ember.optim, opt)([p], lr=0.1).step()


# ---------------------------------------------------------------------------
# 7. as_strided with a negative storage offset


@pytest.mark.parametrize("size", [(2,), (0,)])
def test_as_strided_refuses_negative_storage_offset(size):
    x = ember.arange(5.0)
    with pytest.raises(RuntimeError, match="invalid storage offset -1"):
        x.as_strided(size, (1,), -1)
    with pytest.raises(RuntimeError, match="invalid storage offset -3"):
        ember.as_strided(x, size, (1,), -3)
    assert x.as_strided((2,), (1,), 3).tolist() == [3.0, 4.0]


# ---------------------------------------------------------------------------
# 8. checkpoint files: records outside the archive, declared sizes, stale temporaries


def _checkpoint_with(tmp_path, extra=None, replace=None, compress=zipfile.ZIP_STORED):
    """A checkpoint of arange(4.) rewritten with an extra record, or one record replaced."""
    src = tmp_path / "src.pt"
    ember.save(ember.arange(4.0), src)
    dst = tmp_path / "ck.pt"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if replace is not None and info.filename.endswith(replace[0]):
                zout.writestr(info.filename, replace[1], compress_type=compress)
            else:
                zout.writestr(info.filename, data)
        if extra is not None:
            zout.writestr(extra, b"hello")
    return dst


@pytest.mark.parametrize("member", ["../../x", "/abs/x", "other/x", "src/../x",
                                    "src/data/../../x"])
def test_load_refuses_records_outside_the_archive(tmp_path, member):
    path = _checkpoint_with(tmp_path, extra=member)
    with pytest.raises(RuntimeError, match="not inside the archive's folder"):
        ember.load(path)


@pytest.mark.parametrize("nbytes,compress", [(32, zipfile.ZIP_STORED), (8, zipfile.ZIP_STORED),
                                             (32, zipfile.ZIP_DEFLATED)])
def test_load_checks_record_size_against_storage(tmp_path, nbytes, compress):
    path = _checkpoint_with(tmp_path, replace=("data/0", bytes(nbytes)), compress=compress)
    with pytest.raises(RuntimeError, match=f"holds {nbytes} bytes where 16 were expected"):
        ember.load(path)
    with pytest.raises(RuntimeError, match=f"holds {nbytes} bytes where 16 were expected"):
        ember.load(path, mmap=True)


def test_deflated_record_is_not_inflated_before_its_size_is_checked(tmp_path, monkeypatch):
    big = 16 << 20  # a small file declaring 16 MiB behind a 16-byte storage
    path = _checkpoint_with(tmp_path, replace=("data/0", bytes(big)),
                            compress=zipfile.ZIP_DEFLATED)
    assert path.stat().st_size < big // 100
    opened = []
    real_open = zipfile.ZipFile.open

    def spy(self, name, *args, **kwargs):
        opened.append(getattr(name, "filename", name))
        return real_open(self, name, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "open", spy)
    with pytest.raises(RuntimeError, match=f"holds {big} bytes where 16 were expected"):
        ember.load(path)
    assert not any(n.endswith("data/0") for n in opened)


def _stale(tmp_path, name, age=3600.0):
    p = tmp_path / name
    p.write_bytes(b"partial checkpoint")
    old = time.time() - age
    os.utime(p, (old, old))
    return p


@pytest.mark.skipif(os.name != "posix", reason="advisory locks (fcntl) are POSIX")
def test_save_removes_stale_temporaries_only(tmp_path):
    import fcntl

    stale = [_stale(tmp_path, ".ck.pt.0123456789ab.tmp"),
             _stale(tmp_path, ".ck.pt.ffffffffffff.tmp")]
    kept = [_stale(tmp_path, ".ck.pt.0123456789ab.tmp.bak"), _stale(tmp_path, ".ck.pt.xyz.tmp"),
            _stale(tmp_path, ".other.pt.0123456789ab.tmp"), _stale(tmp_path, "ck.pt.tmp"),
            _stale(tmp_path, ".ck.pt.aaaaaaaaaaaa.tmp", age=0.0)]  # too young
    busy = _stale(tmp_path, ".ck.pt.bbbbbbbbbbbb.tmp")
    link = tmp_path / ".ck.pt.cccccccccccc.tmp"
    link.symlink_to(kept[0])
    with open(busy, "rb") as held:  # a save in progress holds its lock
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        ember.save(ember.ones(2), tmp_path / "ck.pt")
    assert not any(p.exists() for p in stale)
    assert all(p.exists() for p in kept) and busy.exists() and link.is_symlink()
    assert ember.load(tmp_path / "ck.pt").tolist() == [1.0, 1.0]


@pytest.mark.skipif(os.name != "posix", reason="kill -9 and advisory locks are POSIX")
def test_killed_save_leaves_a_temporary_that_the_next_save_removes(tmp_path, monkeypatch):
    from ember._serialization import _save

    target = tmp_path / "ck.pt"
    code = ("import ember, sys\n"
            "t = ember.zeros(32 << 20, dtype=ember.uint8)\n"
            "while True:\n"
            "    ember.save(t, sys.argv[1])\n")
    for _ in range(5):  # the kill may land between two saves: try again
        child = subprocess.Popen([sys.executable, "-c", code, str(target)])
        try:
            deadline = time.time() + 60
            while not list(tmp_path.glob(".ck.pt.*.tmp")) and time.time() < deadline:
                time.sleep(0.01)
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait()
        if list(tmp_path.glob(".ck.pt.*.tmp")):
            break
    assert list(tmp_path.glob(".ck.pt.*.tmp")), "no save was caught in progress"
    monkeypatch.setattr(_save, "STALE_AFTER_SECONDS", 0.0)
    ember.save(ember.ones(3), target)
    assert not list(tmp_path.glob(".ck.pt.*.tmp"))
    assert ember.load(target).tolist() == [1.0, 1.0, 1.0]


# ---------------------------------------------------------------------------
# found by the fuzz suite (tests/interop/test_fuzz_torch.py): empty inputs whose backward
# reshaped with -1, which cannot infer a dim next to a zero


@pytest.mark.parametrize("fn", [lambda x: F.max_pool1d(x, 1),
                                lambda x: F.max_pool2d(x[..., None], 1),
                                lambda x: F.adaptive_max_pool1d(x, 1)],
                         ids=["max_pool1d", "max_pool2d", "adaptive_max_pool1d"])
def test_max_pool_backward_on_empty_batch(fn):
    x = ember.zeros(0, 2, 3, requires_grad=True)
    fn(x).sum().backward()
    assert x.grad.shape == (0, 2, 3)


def test_embedding_and_linear_with_zero_features():
    w = ember.zeros(4, 0, requires_grad=True)
    F.embedding(ember.tensor([[0, 3]]), w).sum().backward()
    assert w.grad.shape == (4, 0)
    x = ember.zeros(2, 0, 0, requires_grad=True)
    w2 = ember.zeros(3, 0, requires_grad=True)
    y = F.linear(x, w2)
    assert y.shape == (2, 0, 3)
    y.sum().backward()
    assert x.grad.shape == (2, 0, 0) and w2.grad.tolist() == [[], [], []]
    v = ember.zeros(0, requires_grad=True)
    F.linear(v, ember.zeros(0, 0, requires_grad=True)).sum().backward()
    assert v.grad.shape == (0,)


def test_conv_refuses_empty_spatial_dims_of_a_nonempty_batch():
    with pytest.raises(RuntimeError, match="Only zero batch or zero channel inputs"):
        F.conv2d(ember.zeros(2, 2, 0, 3), ember.zeros(2, 2, 1, 1), padding=1)
    with pytest.raises(RuntimeError, match="Only zero batch or zero channel inputs"):
        F.conv_transpose1d(ember.zeros(1, 1, 0), ember.zeros(1, 1, 1))
    assert F.conv_transpose1d(ember.zeros(0, 1, 0), ember.zeros(1, 1, 1)).shape == (0, 1, 0)


def test_area_interpolation_keeps_an_infinity_in_its_windows():
    x = ember.arange(12.0).reshape(1, 1, 3, 4)
    x[0, 0, 0, 1] = float("inf")
    y = F.interpolate(x, scale_factor=1.5, mode="area")
    assert np.isfinite(y[0, 0, 2:].numpy()).all()  # windows without the inf stay finite
    assert y[0, 0, 0, 1].item() == float("inf")


def test_nll_loss_ignored_positions_add_nothing_whatever_they_hold():
    x = ember.tensor([[[float("nan"), 1.0], [0.0, 2.0], [3.0, -0.0]]])
    t = ember.tensor([[0, 1]])
    w = ember.tensor([1.5, 2.0, 0.5])
    assert F.nll_loss(x, t, weight=w, ignore_index=0, reduction="sum").item() == -4.0
    assert F.nll_loss(x, t, ignore_index=0, reduction="none").tolist() == [[0.0, -2.0]]


def test_inplace_on_empty_expanded_clone():
    v = ember.ones(0, 4).expand(0, 4).clone()
    v.clamp_(min=1.0)  # nothing is written: no overlap to refuse
    assert v.shape == (0, 4)
    loss = F.gaussian_nll_loss(ember.zeros(0, 4), ember.zeros(0, 4), ember.ones(1, 4).expand(0, 4),
                               reduction="sum")
    assert loss.item() == 0.0

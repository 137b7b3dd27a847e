"""The edge-case regressions of issue 16 against PyTorch 2.13 (see
tests/core/test_edge_regressions.py for the checks that need no reference)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402
import ember.nn.functional as F  # noqa: E402


def _pair(shape, seed=0, requires_grad=True, dtype=np.float32):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return (ember.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, requires_grad=requires_grad))


def _np(t):
    return t.detach().numpy()


# ---------------------------------------------------------------------------
# 1. conv weight gradient on an empty batch

@pytest.mark.parametrize("name,x_shape,w_shape,kwargs", [
    ("conv1d", (0, 2, 5), (3, 2, 3), {}),
    ("conv2d", (0, 2, 5, 5), (3, 2, 3, 3), {}),
    ("conv3d", (0, 2, 4, 4, 4), (3, 2, 3, 3, 3), {"stride": 2}),
    ("conv2d", (0, 16, 6, 6), (16, 16, 3, 3), {"padding": 1}),
    ("conv2d", (0, 4, 5, 5), (4, 2, 3, 3), {"groups": 2}),
    ("conv_transpose2d", (0, 2, 4, 4), (2, 3, 3, 3), {"stride": 2}),
])
def test_conv_empty_batch_matches_torch(name, x_shape, w_shape, kwargs):
    (ex, tx), (ew, tw) = _pair(x_shape), _pair(w_shape, 1)
    ey = getattr(F, name)(ex, ew, **kwargs)
    ty = getattr(torch.nn.functional, name)(tx, tw, **kwargs)
    assert tuple(ey.shape) == tuple(ty.shape)
    (ey * 2).sum().backward()
    (ty * 2).sum().backward()
    np.testing.assert_array_equal(_np(ew.grad), _np(tw.grad))
    assert tuple(ex.grad.shape) == tuple(tx.grad.shape)


# ---------------------------------------------------------------------------
# 2. batch norm on an empty batch in training mode

@pytest.mark.parametrize("cls,shape", [("BatchNorm1d", (0, 3)), ("BatchNorm2d", (0, 3, 2, 2)),
                                       ("BatchNorm1d", (4, 3, 0))])
def test_batch_norm_empty_batch_matches_torch(cls, shape):
    em, tm = getattr(ember.nn, cls)(3), getattr(torch.nn, cls)(3)
    warm = (5, 3) + {2: (), 3: (4,), 4: (2, 2)}[len(shape)]
    ew, tw = _pair(warm, 3, requires_grad=False)
    em(ew), tm(tw)
    (ex, tx) = _pair(shape)
    ey, ty = em(ex), tm(tx)
    assert tuple(ey.shape) == tuple(ty.shape)
    ey.sum().backward()
    ty.sum().backward()
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(_np(getattr(em, name)), _np(getattr(tm, name)), rtol=1e-6)
    np.testing.assert_array_equal(_np(em.weight.grad), _np(tm.weight.grad))
    np.testing.assert_array_equal(_np(em.bias.grad), _np(tm.bias.grad))


# ---------------------------------------------------------------------------
# 3. integers among advanced indices: PyTorch's dim order for get, set and gradients

def _i(*v):
    return np.array(v, dtype=np.int64)


_S = slice(None)
MIXED_INDEXES = [
    (1, _S, _i(0, 2)), (1, None, _i(0, 1)), (0, _S, _i(0, 1), _S), (_S, 0, _S, _i(1, 2)),
    (_i(0, 1), _S, 1), (_i(0, 1), 0, _i(1, 2)), (0, _i(0, 1), _S, _i(1, 2)),
    (Ellipsis, 0, _i(1, 2)), (0, Ellipsis, _i(1, 2)), (0, Ellipsis, _i(1, 2), 1),
    (None, 1, _S, _i(0, 2)), (1, True, _S, _i(0, 2)), (1, _S, _i(0, 2)[:, None], _i(1, 3)),
    (_S, 1, None, _i(0, 2)), (1, _S, True, _i(0, 1)), (1, slice(0, 2), 2, _i(0, 1)),
    (_i(1), 0, _S, 1), (0, 0, _i(0, 1, 2)), (0, _i(1, 2), 0, _i(3)), (_S, _i(0, 2), 0, _S),
    (1, None, _S, None, _i(0, 1)),
]


def _lib_index(lib, idx):
    return tuple(lib.tensor(v) if isinstance(v, np.ndarray) else v for v in idx)


@pytest.mark.parametrize("idx", MIXED_INDEXES, ids=[str(i) for i in range(len(MIXED_INDEXES))])
def test_mixed_integer_tensor_index_matches_torch(idx):
    a = np.arange(120.0).reshape(2, 3, 4, 5)
    rng = np.random.default_rng(0)
    out = {}
    for lib in (ember, torch):
        x = lib.tensor(a, requires_grad=True)
        picked = (x * 1)[_lib_index(lib, idx)]
        w = rng.standard_normal(tuple(picked.shape)) if lib is ember else out["w"]
        (picked * lib.tensor(w)).sum().backward()
        value = np.arange(w.size, dtype=np.float64).reshape(w.shape) + 1000
        plain = lib.tensor(a)
        plain[_lib_index(lib, idx)] = lib.tensor(value)
        v = lib.tensor(value, requires_grad=True)
        b = lib.tensor(a) * 1
        b[_lib_index(lib, idx)] = v * 3
        (b * lib.tensor(a)).sum().backward()
        out["w"] = w
        out[lib.__name__] = [_np(picked), _np(x.grad), _np(plain), _np(b), _np(v.grad)]
    for e, t in zip(out["ember"], out["torch"], strict=True):
        assert e.shape == t.shape
        np.testing.assert_array_equal(e, t)


# ---------------------------------------------------------------------------
# 4. the range rules of every index-taking op: in range, negative, too large

_INDEX_OPS = {
    "index_select": lambda lib, x, i: x.index_select(0, i),
    "gather": lambda lib, x, i: x.gather(0, i.reshape(1, 1)),
    "scatter_": lambda lib, x, i: x.clone().scatter_(0, i.reshape(1, 1), 1.0),
    "scatter_add_": lambda lib, x, i: x.clone().scatter_add_(0, i.reshape(1, 1),
                                                             lib.ones(1, 1)),
    "scatter_reduce_": lambda lib, x, i: x.clone().scatter_reduce_(
        0, i.reshape(1, 1), lib.ones(1, 1), "amax"),
    "index_add_": lambda lib, x, i: x.clone().index_add_(0, i, lib.ones(1, 5)),
    "index_copy_": lambda lib, x, i: x.clone().index_copy_(0, i, lib.ones(1, 5)),
    "index_fill_": lambda lib, x, i: x.clone().index_fill_(0, i, 1.0),
    "index_put_": lambda lib, x, i: x.clone().index_put_((i,), lib.tensor(1.0)),
    "index_put_acc": lambda lib, x, i: x.clone().index_put_((i,), lib.tensor(1.0), True),
    "take": lambda lib, x, i: x.take(i),
    "put_": lambda lib, x, i: x.clone().put_(i, lib.tensor([1.0])),
    "take_along_dim": lambda lib, x, i: lib.take_along_dim(x, i.reshape(1, 1), 0),
    "take_along_dim_flat": lambda lib, x, i: lib.take_along_dim(x, i),
    "getitem": lambda lib, x, i: x[i],
    "setitem": lambda lib, x, i: x.clone().__setitem__(i, 1.0),
    "select": lambda lib, x, i: x.select(0, int(i)),
    "narrow": lambda lib, x, i: x.narrow(0, int(i), 1),
    "embedding": lambda lib, x, i: lib.nn.functional.embedding(i, x),
    "embedding_bag": lambda lib, x, i: lib.nn.functional.embedding_bag(i, x, lib.tensor([0])),
    "embedding_padding_idx": lambda lib, x, i: lib.nn.functional.embedding(
        lib.tensor([0, 3]), x, padding_idx=int(i)),
    "nll_loss": lambda lib, x, i: lib.nn.functional.nll_loss(x[:1], i),
    "cross_entropy": lambda lib, x, i: lib.nn.functional.cross_entropy(x[:1], i),
    "multi_margin_loss": lambda lib, x, i: lib.nn.functional.multi_margin_loss(x[:1], i),
    "one_hot": lambda lib, x, i: lib.nn.functional.one_hot(i, 4),
    "bincount": lambda lib, x, i: lib.bincount(i),
    "max_unpool1d": lambda lib, x, i: lib.nn.functional.max_unpool1d(
        lib.ones(1, 1, 1), i.reshape(1, 1, 1), 4),
}

# PyTorch 2.13's own bugs (see tests/interop/TORCH_BUGS.md): take_along_dim with a dim
# wraps any index modulo the size instead of checking it.
_TORCH_BUGS = {("take_along_dim", 4), ("take_along_dim", -5)}


def _outcome(fn):
    try:
        r = fn()
    except (IndexError, RuntimeError, ValueError, AssertionError) as e:
        return type(e).__mro__[1] if type(e).__name__ == "IndexOutOfBoundsError" else type(e)
    if isinstance(r, tuple):
        r = r[0]
    return None if r is None else r.detach().numpy()


@pytest.mark.parametrize("value", [3, 0, -1, -4, 4, -5])
@pytest.mark.parametrize("name", sorted(_INDEX_OPS))
def test_index_range_rules_match_torch(name, value):
    fn = _INDEX_OPS[name]
    e = _outcome(lambda: fn(ember, ember.arange(20.0).reshape(4, 5), ember.tensor([value])))
    if (name, value) in _TORCH_BUGS:
        assert e is IndexError  # ember checks the range PyTorch forgets
        return
    t = _outcome(lambda: fn(torch, torch.arange(20.0).reshape(4, 5), torch.tensor([value])))
    if isinstance(t, type) or isinstance(e, type):
        assert isinstance(t, type) and isinstance(e, type), (e, t)
    else:
        np.testing.assert_array_equal(e, t)


# ---------------------------------------------------------------------------
# 5. hooks that change a gradient's shape or dtype

_HOOK_RESULTS = {
    "bigger": lambda lib, g: lib.ones(4),
    "unsqueezed": lambda lib, g: g.unsqueeze(0),
    "float64": lambda lib, g: g.double(),
    "int64": lambda lib, g: g.long(),
    "number": lambda lib, g: 2.0,
    "scaled": lambda lib, g: g * 2,
    "none": lambda lib, g: None,
}


def _hook_outcome(lib, where, make):
    x = lib.ones(3, requires_grad=True)
    t = x if where == "leaf" else x * 2
    if where == "node":
        t.grad_fn.register_prehook(lambda grads: None if make(lib, grads[0]) is None
                                   else (make(lib, grads[0]),))
    else:
        t.register_hook(lambda g: make(lib, g))
    try:
        t.sum().backward()
    except (RuntimeError, TypeError) as e:
        return type(e), str(e).replace("torch.", "ember.")
    return _np(x.grad)


# (a node pre-hook returns a tuple of tensors: no "number" case there)
@pytest.mark.parametrize("where,result", [(w, r) for w in ("leaf", "non-leaf", "node")
                                          for r in sorted(_HOOK_RESULTS)
                                          if (w, r) != ("node", "number")])
def test_hook_checks_match_torch(where, result):
    e = _hook_outcome(ember, where, _HOOK_RESULTS[result])
    t = _hook_outcome(torch, where, _HOOK_RESULTS[result])
    if isinstance(t, tuple):
        assert e == t
    else:
        np.testing.assert_array_equal(e, t)


# ---------------------------------------------------------------------------
# 6. overlapping in-place ops

_OVERLAP_CASES = {
    "partial add_": lambda lib: lib.arange(5.0)[1:].add_(lib.arange(5.0)[:-1]),
    "self partial add_": lambda lib: (lambda x: x[1:].add_(x[:-1]))(lib.arange(5.0)),
    "self same add_": lambda lib: (lambda x: x.add_(x))(lib.arange(5.0)),
    "disjoint mul_": lambda lib: (lambda x: x[:3].mul_(x[3:]))(lib.arange(6.0)),
    "interleaved add_": lambda lib: (lambda x: x[::2].add_(x[1::2]))(lib.arange(6.0)),
    "transposed add_": lambda lib: (lambda x: x.add_(x.t()))(lib.arange(9.0).reshape(3, 3)),
    "row of 1xN": lambda lib: (lambda x: x.add_(x[0]))(lib.zeros(1, 3)),
    "copy_ overlap": lambda lib: (lambda x: x[1:].copy_(x[:-1]))(lib.arange(5.0)),
    "copy_ same": lambda lib: (lambda x: x[1:3].copy_(x[1:3]))(lib.arange(4.0)),
    "setitem overlap": lambda lib: (lambda x: x.__setitem__(slice(1, None), x[:-1]))(
        lib.arange(5.0)),
    "clamp_ overlap": lambda lib: (lambda x: x[1:].clamp_(min=x[:-1]))(lib.arange(5.0)),
    "lerp_ overlap": lambda lib: (lambda x: x[1:].lerp_(x[:-1], 0.5))(lib.arange(5.0)),
    "expanded add_": lambda lib: lib.zeros(1).expand(3).add_(1),
    "expanded copy_": lambda lib: lib.zeros(1).expand(3).copy_(lib.ones(3)),
    "expanded relu_": lambda lib: lib.zeros(3, 1).expand(3, 3).relu_(),
    "expanded source": lambda lib: (lambda x: x.add_(x.expand(2, 3)[0]))(lib.zeros(3)),
}


def _overlap_outcome(fn):
    try:
        r = fn()
    except RuntimeError as e:
        return str(e)
    return r.numpy().tolist() if r is not None else None


@pytest.mark.parametrize("name", sorted(_OVERLAP_CASES))
def test_inplace_overlap_rules_match_torch(name):
    fn = _OVERLAP_CASES[name]
    assert _overlap_outcome(lambda: fn(ember)) == _overlap_outcome(lambda: fn(torch))


@pytest.mark.parametrize("opt", ["SGD", "Adam", "RMSprop"])
def test_optimizer_on_expanded_parameter_matches_torch(opt):
    msgs = []
    for lib in (ember, torch):
        p = lib.nn.Parameter(lib.zeros(1).expand(3))
        p.grad = lib.ones(3)
        with pytest.raises(RuntimeError) as info:
            getattr(lib.optim, opt)([p], lr=0.1).step()
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]


# ---------------------------------------------------------------------------
# 7. as_strided's storage offset

@pytest.mark.parametrize("args", [((2,), (1,), -1), ((0,), (1,), -1), ((2,), (1,), 3),
                                  ((2,), (1,), 4), ((2, 2), (1, 1), 0), ((3,), (2,), None)])
def test_as_strided_offsets_match_torch(args):
    got = []
    for lib in (ember, torch):
        try:
            got.append(lib.arange(6.0)[1:].as_strided(*args).tolist())
        except RuntimeError as e:
            got.append(str(e))
    assert got[0] == got[1]


# ---------------------------------------------------------------------------
# 8. checkpoints that PyTorch refuses, ember too

def _rewritten(tmp_path, saver, extra=None, replace=None, compress=None):
    import zipfile

    src, dst = tmp_path / "src.pt", tmp_path / "ck.pt"
    saver(src)
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if replace is not None and info.filename.endswith(replace[0]):
                zout.writestr(info.filename, replace[1],
                              compress_type=compress or zipfile.ZIP_STORED)
            else:
                zout.writestr(info.filename, data)
        if extra is not None:
            zout.writestr(extra, b"hello")
    return dst


_SAVERS = {"torch": lambda p: torch.save(torch.arange(4.0), p),
           "ember": lambda p: ember.save(ember.arange(4.0), p)}


@pytest.mark.parametrize("writer", sorted(_SAVERS))
@pytest.mark.parametrize("change", ["../../x", "/abs/x", "other/x", "size 32", "size 8",
                                    "deflated 32", "deflated 16"])
def test_damaged_checkpoints_refused_like_torch(tmp_path, writer, change):
    import zipfile

    if change.startswith(("size", "deflated")):
        n = int(change.split()[1])
        path = _rewritten(tmp_path, _SAVERS[writer],
                          replace=("data/0", np.arange(n // 4, dtype=np.float32).tobytes()),
                          compress=zipfile.ZIP_DEFLATED if "deflated" in change else None)
    else:
        path = _rewritten(tmp_path, _SAVERS[writer], extra=change)
    outcomes = []
    for lib in (ember, torch):
        try:
            outcomes.append(lib.load(path, weights_only=True).tolist())
        except RuntimeError:
            outcomes.append("refused")
    assert outcomes[0] == outcomes[1]

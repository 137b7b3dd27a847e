"""View semantics: views share storage and the version counter with their base, in-place
changes show through both, copies do not, and autograd through in-place ops on views of
non-leaf tensors gives PyTorch's gradients."""

from __future__ import annotations

import numpy as np
import pytest

import ember

# (name, function making a view of a (2, 3, 4) float tensor), with PyTorch's method names
VIEW_OPS = [
    ("view", lambda t: t.view(6, 4)),
    ("view_-1", lambda t: t.view(-1)),
    ("view_as", lambda t: t.view_as(t.new_zeros(4, 6))),
    ("reshape", lambda t: t.reshape(4, 6)),
    ("reshape_as", lambda t: t.reshape_as(t.new_zeros(24))),
    ("flatten", lambda t: t.flatten(1)),
    ("unflatten", lambda t: t.unflatten(2, (2, 2))),
    ("ravel", lambda t: t.ravel()),
    ("squeeze", lambda t: t[:1].squeeze(0)),
    ("unsqueeze", lambda t: t.unsqueeze(1)),
    ("permute", lambda t: t.permute(2, 0, 1)),
    ("transpose", lambda t: t.transpose(0, 2)),
    ("swapaxes", lambda t: t.swapaxes(1, 2)),
    ("t", lambda t: t[0].t()),
    ("T", lambda t: t[0].T),
    ("mT", lambda t: t.mT),
    ("movedim", lambda t: t.movedim(0, -1)),
    ("narrow", lambda t: t.narrow(2, 1, 2)),
    ("select", lambda t: t.select(1, -1)),
    ("unbind", lambda t: t.unbind(2)[1]),
    ("split", lambda t: t.split(2, 2)[1]),
    ("split_sizes", lambda t: t.split([1, 3], 2)[1]),
    ("chunk", lambda t: t.chunk(3, 1)[2]),
    ("tensor_split", lambda t: t.tensor_split([1], 2)[1]),
    ("hsplit", lambda t: t.hsplit(3)[1]),
    ("diagonal", lambda t: t.diagonal(1, 1, 2)),
    ("unfold", lambda t: t.unfold(2, 2, 2)),
    ("as_strided", lambda t: t.as_strided((3, 2), (4, 1), 5)),
    ("getitem_int", lambda t: t[1]),
    ("getitem_slices", lambda t: t[:, 1:, ::2]),
    ("getitem_none_ellipsis", lambda t: t[None, ..., 1]),
    ("getitem_0d_tensor", lambda t: t[ember.tensor(1)]),
    ("atleast_3d", lambda t: ember.atleast_3d(t[0, 0])),
    ("chain", lambda t: t.transpose(0, 1)[1:].reshape(2, 2, 4)[:, 0].t()),
]

# copies: they must not share storage with the input
COPY_OPS = [
    ("flip", lambda t: t.flip(0)),
    ("roll", lambda t: t.roll(1, 2)),
    ("repeat", lambda t: t.repeat(1, 1, 1)),
    ("cat", lambda t: ember.cat([t, t])),
    ("stack", lambda t: ember.stack([t])),
    ("reshape_noncontiguous", lambda t: t.transpose(0, 2).reshape(-1)),
    ("getitem_advanced", lambda t: t[[0, 1]]),
    ("getitem_mask", lambda t: t[t > 0]),
    ("diag", lambda t: ember.diag(t[0])),
    ("tril", lambda t: t.tril()),
    ("index_select", lambda t: t.index_select(0, ember.tensor([0, 1]))),
]


def _base():
    return ember.arange(24.0).reshape(2, 3, 4).clone()


@pytest.mark.parametrize("make", [f for _, f in VIEW_OPS], ids=[n for n, _ in VIEW_OPS])
def test_view_shares_storage_both_ways(make):
    base = _base()
    v = make(base)
    assert v._base is base
    assert np.shares_memory(v.numpy(), base.numpy())
    # in place on the base shows in the view
    before = v.numpy().copy()
    base.add_(100)
    np.testing.assert_array_equal(v.numpy(), before + 100)
    assert v._version == base._version == 1
    # in place on the view shows in the base
    v.mul_(0)
    assert not v.numpy().any()
    assert base._version == v._version == 2
    assert (base.numpy() == 0).sum() >= v.numel() or v.numel() == 0


@pytest.mark.parametrize("make", [f for _, f in COPY_OPS], ids=[n for n, _ in COPY_OPS])
def test_copies_do_not_share_storage(make):
    base = _base()
    out = make(base)
    assert out._base is None
    assert not np.shares_memory(out.numpy(), base.numpy())
    out.add_(1)
    np.testing.assert_array_equal(base.numpy(), np.arange(24.0).reshape(2, 3, 4))
    assert base._version == 0


def test_views_match_pytorch_aliasing():
    torch = pytest.importorskip("torch")
    for name, make in VIEW_OPS:
        t = torch.arange(24.0).reshape(2, 3, 4).clone()
        tv = _with_torch_names(make, torch)(t)
        assert tv._base is t, name
        ev = make(_base())
        assert tuple(ev.shape) == tuple(tv.shape), name
        # the stride of a size-1 dim is arbitrary (NumPy gives 0 where PyTorch does not)
        assert [s for s, n in zip(ev.stride(), ev.shape, strict=True) if n > 1] == \
            [s for s, n in zip(tv.stride(), tv.shape, strict=True) if n > 1], name
        assert ev.storage_offset() == tv.storage_offset(), name
        np.testing.assert_array_equal(ev.numpy(), tv.numpy(), err_msg=name)


def test_expand_is_a_read_only_view():
    base = ember.arange(3.0).reshape(3, 1).clone()
    e = base.expand(3, 4)
    assert e._base is base and e.stride() == (1, 0)
    base.add_(1)
    np.testing.assert_array_equal(e.numpy(), np.broadcast_to(np.arange(1.0, 4.0)[:, None],
                                                             (3, 4)))
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        e[0, 0] = 5


def test_flip_copies_with_non_negative_strides():
    t = ember.arange(12.0).reshape(3, 4)
    f = t.flip(0, 1)
    assert all(s >= 0 for s in f.stride()) and f.is_contiguous()
    assert f._base is None


def test_view_of_view_has_the_root_as_base():
    base = _base()
    v = base[1].t()[2:]
    assert v._base is base
    v.mul_(0).sub_(1)
    np.testing.assert_array_equal(base.numpy()[1, :, 2:], -1)


def test_version_counter_is_shared_and_checked_by_autograd():
    a = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = a.exp()  # saves its output
    v = b[1:]
    v.mul_(2)  # bumps b's version through the view
    assert b._version == v._version == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        b.sum().backward()


def test_in_place_on_view_of_leaf_is_an_error():
    a = ember.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        a[1:].add_(1)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        a[0] = 1.0
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        a[[0]] = 1.0
    with ember.no_grad():
        a[0] = 5.0
    assert a.tolist() == [5.0, 0.0, 0.0]


# ---------------------------------------------------------------------------
# in-place ops on views of non-leaf tensors: gradients for the base, as in PyTorch

INPLACE_ON_VIEW = [
    ("narrow_mul", lambda b: b.narrow(1, 1, 2).mul_(3)),
    ("select_add_tensor", lambda b, w: b.select(0, 1).add_(w[:4])),
    ("transpose_row_mul", lambda b: b.t()[1].mul_(-2)),
    ("diagonal_mul", lambda b: b.diagonal().mul_(5)),
    ("getitem_mul", lambda b: b[1:, ::2].mul_(b[:2, 1::2].detach().clone())),
    ("view_chain", lambda b, w: b.view(2, 6)[:, 1:3].t().mul_(w[:2])),
    ("unsqueeze_exp", lambda b: b.unsqueeze(0)[0, 2].exp_()),
    ("column_tanh", lambda b: b[:, 3].tanh_()),
    ("narrow_pow", lambda b: b.narrow(0, 2, 1).pow_(2)),
    ("unfold_sigmoid", lambda b: b[0].unfold(0, 2, 2).sigmoid_()),
    ("setitem_basic", lambda b, w: b.__setitem__((slice(None), 1), w[:3])),
    ("setitem_number", lambda b: b.__setitem__((0, slice(1, 3)), 7.0)),
    ("setitem_advanced", lambda b, w: b.__setitem__(([0, 2], [3, 1]), w[:2] * 2)),
    ("setitem_mask", lambda b: b.__setitem__(b > 5, 0.0)),
    ("setitem_on_view", lambda b, w: b.t().__setitem__((slice(1, 3), 0), w[:2])),
    ("setitem_advanced_on_view", lambda b, w: b[1:].__setitem__((0, [0, 3]), w[2:4])),
    ("masked_fill_on_view", lambda b: b[:, 1:].masked_fill_(b[:, 1:] > 3, -1.0)),
    ("index_add_on_view", lambda b, w: b.t().index_add_(0, ember.tensor([1, 1]),
                                                        w[:6].reshape(2, 3))),
]


def _run_inplace(lib, fn):
    rng = np.random.default_rng(0)
    a_np, w_np, g_np = rng.standard_normal((3, 4)), rng.standard_normal(6), \
        rng.standard_normal((3, 4))
    a = lib.tensor(a_np, requires_grad=True)
    w = lib.tensor(w_np, requires_grad=True)
    b = a * 1.5
    if fn.__code__.co_argcount == 2:
        fn(b, w)
    else:
        fn(b)
    (b * lib.tensor(g_np)).sum().backward()
    return b.detach().numpy(), a.grad.numpy(), None if w.grad is None else w.grad.numpy()


@pytest.mark.parametrize("fn", [f for _, f in INPLACE_ON_VIEW],
                         ids=[n for n, _ in INPLACE_ON_VIEW])
def test_inplace_on_view_of_non_leaf_gradients_match_torch(fn):
    torch = pytest.importorskip("torch")
    got = _run_inplace(ember, fn)
    exp = _run_inplace(torch, _with_torch_names(fn, torch))
    for g, e in zip(got, exp, strict=True):
        if e is None:
            assert g is None or not g.any()
        else:
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)


def _with_torch_names(fn, torch):
    """``fn`` with the global name ``ember`` bound to torch (they share the API)."""
    import types

    return types.FunctionType(fn.__code__, {**fn.__globals__, "ember": torch}, fn.__name__,
                              fn.__defaults__, fn.__closure__)


def test_inplace_on_view_of_non_leaf_gradcheck():
    def f(a, w):
        b = a * 2
        b[1:, 0] = w
        b.t()[2].mul_(w.sum())
        return b
    a = ember.tensor(np.random.default_rng(1).standard_normal((3, 4)), requires_grad=True)
    w = ember.tensor([0.5, -1.5], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(f, (a, w))


def test_inplace_on_output_of_multi_view_op_gradcheck():
    # PyTorch refuses in-place ops on outputs of unbind/split; ember allows them, and
    # the gradients must still be right.
    def f(a):
        b = a * 1
        b.unbind(1)[2].mul_(3)
        b.split(1)[0].exp_()
        return b
    a = ember.tensor(np.random.default_rng(2).standard_normal((2, 3)), requires_grad=True)
    assert ember.autograd.gradcheck(f, (a,))


def test_setitem_value_only_gets_gradient_of_written_positions():
    a = ember.ones(2, 3, requires_grad=True)
    v = ember.tensor([10.0, 20.0], requires_grad=True)
    b = a * 3
    b[:, 0] = v
    b.sum().backward()
    assert a.grad.tolist() == [[0.0, 3.0, 3.0], [0.0, 3.0, 3.0]]
    assert v.grad.tolist() == [1.0, 1.0]


def test_view_made_before_inplace_on_base_sees_new_history():
    a = ember.arange(6.0).reshape(2, 3).requires_grad_()
    b = a * 1
    v = b[0]
    b.mul_(2)
    v.sum().backward()
    assert a.grad.tolist() == [[2.0, 2.0, 2.0], [0.0, 0.0, 0.0]]

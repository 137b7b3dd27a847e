"""nn.Embedding and nn.EmbeddingBag, F.embedding and F.embedding_bag: forward against NumPy
references, gradients with finite differences, max_norm renormalization, errors.

(Split from test_nn_layers.py.)"""

from __future__ import annotations

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(1)


def t64(a, requires_grad=True):
    return ember.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def arr(t):
    return t.detach().numpy()

# ---------------------------------------------------------------------------
# embedding

def test_embedding_forward_and_grad():
    w = RNG.standard_normal((6, 3))
    idx = np.array([[0, 2, 2], [5, 1, 2]])
    out = F.embedding(ember.tensor(idx), ember.tensor(w))
    np.testing.assert_array_equal(arr(out), w[idx])
    assert gradcheck(lambda wt: F.embedding(ember.tensor(idx), wt), (t64(w),))
    assert gradgradcheck(lambda wt: F.embedding(ember.tensor(idx), wt) ** 2, (t64(w),))
    # the gradient: a scatter-add of the rows
    wt = t64(w)
    g = RNG.standard_normal((2, 3, 3))
    F.embedding(ember.tensor(idx), wt).backward(ember.tensor(g))
    ref = np.zeros_like(w)
    np.add.at(ref, idx.reshape(-1), g.reshape(-1, 3))
    np.testing.assert_allclose(wt.grad.numpy(), ref, rtol=1e-12)
    # int32 indices and a 0-d index
    assert F.embedding(ember.tensor([1, 2], dtype=ember.int32), ember.tensor(w)).shape == (2, 3)
    assert F.embedding(ember.tensor(2), ember.tensor(w)).shape == (3,)


def test_embedding_padding_and_frequency():
    w = t64(RNG.standard_normal((5, 2)))
    idx = ember.tensor([0, 3, 3, 1, 3, 0])
    g = RNG.standard_normal((6, 2))
    F.embedding(idx, w, padding_idx=3).backward(ember.tensor(g))
    ref = np.zeros((5, 2))
    np.add.at(ref, [0, 1, 0], g[[0, 3, 5]])
    np.testing.assert_allclose(w.grad.numpy(), ref, rtol=1e-12)
    w.grad = None
    F.embedding(idx, w, padding_idx=-2, scale_grad_by_freq=True).backward(ember.tensor(g))
    ref = np.zeros((5, 2))
    np.add.at(ref, [0, 1, 0], g[[0, 3, 5]] / np.array([2, 1, 2])[:, None])
    np.testing.assert_allclose(w.grad.numpy(), ref, rtol=1e-12)


def test_embedding_max_norm_renormalizes_in_place():
    w = np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0], [1.0, 0.0]])
    weight = ember.tensor(w.copy(), requires_grad=True)
    v0 = weight._version
    out = F.embedding(ember.tensor([0, 1, 0]), weight, max_norm=1.0)
    expect = w.copy()
    expect[0] = w[0] * (1.0 / (5.0 + 1e-7))
    np.testing.assert_allclose(weight.detach().numpy(), expect)  # row 2 unused: unchanged
    np.testing.assert_allclose(arr(out), expect[[0, 1, 0]])
    assert weight._version > v0
    emb = nn.Embedding(4, 2, max_norm=2.0, norm_type=1.0, _weight=ember.tensor(w))
    emb(ember.tensor([2]))
    np.testing.assert_allclose(emb.weight.detach().numpy()[2], w[2] * 2 / (14 + 1e-7),
                               rtol=1e-6)



def test_embedding_max_norm_on_an_expanded_weight_is_refused_clearly():
    # its rows share memory: the in-place renorm raises the in-place ops' error (was
    # NumPy's "assignment destination is read-only"); below max_norm nothing is written
    w = ember.full((1, 3), 5.0).expand(4, 3)
    with pytest.raises(RuntimeError, match="clone"):
        F.embedding(ember.tensor([0, 2]), w, max_norm=1.0)
    out = F.embedding(ember.tensor([0, 2]), w, max_norm=100.0)
    np.testing.assert_allclose(arr(out), np.full((2, 3), 5.0))

def test_embedding_errors():
    w = ember.randn(5, 3)
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices' to have "
                                           "one of the following scalar types: Long, Int; but "
                                           "got torch.FloatTensor instead"):
        F.embedding(ember.tensor([1.0]), w)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(ember.tensor([1, 7]), w)
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(ember.tensor([-1]), w)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        F.embedding(ember.tensor([1]), w, padding_idx=5)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(5, 3, padding_idx=-6)
    with pytest.raises(NotImplementedError, match="sparse=True is not supported"):
        nn.Embedding(5, 3, sparse=True)
    with pytest.raises(RuntimeError, match="'weight' must be 2-D"):
        F.embedding(ember.tensor([1]), ember.randn(5))


def test_embedding_from_pretrained():
    w = ember.tensor(RNG.standard_normal((4, 3)).astype(np.float32))
    emb = nn.Embedding.from_pretrained(w)
    assert not emb.weight.requires_grad
    np.testing.assert_array_equal(arr(emb(ember.tensor([1, 3]))), arr(w)[[1, 3]])
    emb2 = nn.Embedding.from_pretrained(w, freeze=False, padding_idx=1)
    assert emb2.weight.requires_grad and emb2.padding_idx == 1
    np.testing.assert_array_equal(emb2.weight.detach().numpy()[1], arr(w)[1])  # not zeroed
    bag = nn.EmbeddingBag.from_pretrained(w, mode="max")
    assert not bag.weight.requires_grad and bag.mode == "max"
    with pytest.raises(AssertionError, match="Embeddings parameter is expected to be "
                                             "2-dimensional"):
        nn.Embedding.from_pretrained(ember.randn(3))
    with pytest.raises(AssertionError, match="Shape of weight does not match num_embeddings "
                                             "and embedding_dim"):
        nn.Embedding(3, 3, _weight=ember.randn(4, 3))


def _bag_reference(w, idx, offsets, mode, psw=None, padding_idx=None, include_last=False):
    n = len(idx)
    ends = list(offsets[1:]) + ([] if include_last else [n])
    starts = list(offsets[:len(ends)])
    out = np.zeros((len(starts), w.shape[1]))
    for b, (s, e) in enumerate(zip(starts, ends)):
        rows = [(j, idx[j]) for j in range(s, e) if idx[j] != padding_idx]
        if not rows:
            continue
        vals = np.stack([w[i] * (1 if psw is None else psw[j]) for j, i in rows])
        out[b] = {"sum": vals.sum(0), "mean": vals.mean(0), "max": vals.max(0)}[mode]
    return out


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 2])
@pytest.mark.parametrize("include_last", [False, True])
def test_embedding_bag(mode, padding_idx, include_last):
    w = RNG.standard_normal((6, 3))
    idx = np.array([1, 2, 4, 5, 4, 3, 2, 2, 0])
    offsets = np.array([0, 2, 2, 5, 7]) if not include_last else np.array([0, 2, 2, 5, 7, 8])
    ref = _bag_reference(w, idx, offsets, mode, padding_idx=padding_idx,
                         include_last=include_last)

    def run(wt):
        return F.embedding_bag(ember.tensor(idx), wt, ember.tensor(offsets), mode=mode,
                               padding_idx=padding_idx, include_last_offset=include_last)

    np.testing.assert_allclose(arr(run(ember.tensor(w))), ref, rtol=1e-12)
    assert gradcheck(run, (t64(w),))


def test_embedding_bag_2d_input_and_per_sample_weights():
    w = RNG.standard_normal((6, 3))
    idx = np.array([[1, 2, 4], [5, 4, 4]])
    out = F.embedding_bag(ember.tensor(idx), ember.tensor(w), mode="mean")
    np.testing.assert_allclose(arr(out), w[idx].mean(1), rtol=1e-12)
    psw = RNG.standard_normal((2, 3))
    out = F.embedding_bag(ember.tensor(idx), ember.tensor(w), mode="sum",
                          per_sample_weights=ember.tensor(psw))
    np.testing.assert_allclose(arr(out), (w[idx] * psw[..., None]).sum(1), rtol=1e-12)

    def run(wt, pt):
        return F.embedding_bag(ember.tensor(idx), wt, mode="sum", per_sample_weights=pt,
                               padding_idx=4)

    assert gradcheck(run, (t64(w), t64(psw)))
    assert gradgradcheck(run, (t64(w), t64(psw)))
    flat = ember.tensor(idx.reshape(-1))
    assert gradcheck(lambda wt, pt: F.embedding_bag(flat, wt, ember.tensor([0, 4]), mode="sum",
                                                    per_sample_weights=pt),
                     (t64(w), t64(psw.reshape(-1))))
    # scale_grad_by_freq divides each row's gradient by its count in the input
    wt = t64(w)
    F.embedding_bag(flat, wt, ember.tensor([0, 4]), mode="sum",
                    scale_grad_by_freq=True).sum().backward()
    counts = np.bincount(idx.reshape(-1), minlength=6)
    np.testing.assert_allclose(wt.grad.numpy()[:, 0], np.where(counts > 0, 1.0, 0.0))
    bag = nn.EmbeddingBag(6, 3, mode="sum")
    assert bag(ember.tensor(idx), per_sample_weights=ember.ones(2, 3)).shape == (2, 3)


def test_embedding_bag_edge_cases_and_errors():
    w = ember.randn(5, 3)
    i3 = ember.tensor([1, 2, 3])
    assert F.embedding_bag(i3, w, ember.tensor([], dtype=ember.int64)).shape == (0, 3)
    np.testing.assert_array_equal(
        arr(F.embedding_bag(ember.tensor([], dtype=ember.int64), w, ember.tensor([0, 0]))),
        np.zeros((2, 3)))
    out = F.embedding_bag(i3, w, ember.tensor([0, 3]), mode="max")
    np.testing.assert_array_equal(arr(out)[1], 0)
    with pytest.raises(RuntimeError, match="offsets\\[0\\] has to be 0, i.e., the first "
                                           "sequence in the mini-batch has to start from "
                                           "position 0. However, got 1"):
        F.embedding_bag(i3, w, ember.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="offsets\\[-1\\] can not be greater than input's "
                                           "length 3 but got offsets\\[-1\\] of 4"):
        F.embedding_bag(i3, w, ember.tensor([0, 4]))
    with pytest.raises(RuntimeError, match="Index 1 of input takes value 9 which is not in "
                                           "the valid range \\[0, 5\\)"):
        F.embedding_bag(ember.tensor([1, 9, 3]), w, ember.tensor([0, 2]))
    with pytest.raises(RuntimeError, match="padding_idx must be within the number of "
                                           "embeddings, -5 through 4, but got 7"):
        F.embedding_bag(i3, w, ember.tensor([0, 2]), padding_idx=7)
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(i3, w)
    with pytest.raises(ValueError, match="if input is 2D, then offsets has to be None"):
        F.embedding_bag(ember.tensor([[1, 2]]), w, ember.tensor([0]))
    with pytest.raises(ValueError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(i3, w, ember.tensor([0]), mode="min")
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported for "
                                                  "mode='sum' \\(got mode='mean'\\)"):
        F.embedding_bag(i3, w, ember.tensor([0]), per_sample_weights=ember.ones(3))
    with pytest.raises(ValueError, match="max mode does not support scaling the gradient by "
                                         "the frequency"):
        F.embedding_bag(i3, w, ember.tensor([0]), mode="max", scale_grad_by_freq=True)
    with pytest.raises(ValueError, match="weight has to be a 2D Tensor, but got Tensor of "
                                         "dimension 1"):
        F.embedding_bag(i3, ember.randn(5), ember.tensor([0]))
    with pytest.raises(RuntimeError, match="Expected tensor for argument #1 'indices'"):
        F.embedding_bag(i3, w, ember.tensor([0.0]))

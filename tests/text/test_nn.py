"""embertext.nn: ScaledDotProduct against a NumPy softmax attention, and the container."""

import numpy as np
import pytest

import ember
from ember import nn
from embertext.nn import (
    InProjContainer,
    MultiheadAttentionContainer,
    ScaledDotProduct,
    generate_square_subsequent_mask,
)


def numpy_attention(q, k, v, mask=None):
    q, k, v = (np.swapaxes(x, 0, 1).astype(np.float64) for x in (q, k, v))
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, -1e8, scores)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    return np.swapaxes(weights @ v, 0, 1), weights


@ember.no_grad()
def test_scaled_dot_product_against_numpy():
    rng = np.random.default_rng(0)
    q = rng.standard_normal((5, 6, 4)).astype(np.float32)
    k = rng.standard_normal((7, 6, 4)).astype(np.float32)
    v = rng.standard_normal((7, 6, 4)).astype(np.float32)
    mask = rng.random((6, 5, 7)) > 0.6
    mask[..., 0] = False
    out, weights = ScaledDotProduct()(ember.tensor(q), ember.tensor(k), ember.tensor(v),
                                      attn_mask=ember.tensor(mask))
    expected, expected_weights = numpy_attention(q, k, v, mask)
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(weights.numpy(), expected_weights, rtol=1e-5, atol=1e-6)
    # bias_k / bias_v add one key and value at the end.
    bk = rng.standard_normal((1, 6, 4)).astype(np.float32)
    bv = rng.standard_normal((1, 6, 4)).astype(np.float32)
    out, weights = ScaledDotProduct()(ember.tensor(q), ember.tensor(k), ember.tensor(v),
                                      bias_k=ember.tensor(bk), bias_v=ember.tensor(bv))
    expected, _ = numpy_attention(q, np.concatenate([k, bk]), np.concatenate([v, bv]))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5, atol=1e-6)
    assert tuple(weights.shape) == (6, 5, 8)


def test_scaled_dot_product_errors():
    q = ember.randn(5, 6, 4)
    sdp = ScaledDotProduct()
    with pytest.raises(RuntimeError, match="3D"):
        sdp(q, q, q, attn_mask=ember.zeros(5, 5, dtype=ember.bool))
    with pytest.raises(RuntimeError, match="size of the attn_mask"):
        sdp(q, q, q, attn_mask=ember.zeros(2, 5, 5, dtype=ember.bool))
    with pytest.raises(RuntimeError, match="bool"):
        sdp(q, q, q, attn_mask=ember.zeros(1, 5, 5))
    with pytest.raises(AssertionError, match="feature dim"):
        sdp(q, ember.randn(5, 6, 3), ember.randn(5, 6, 3))


def test_container_shapes_and_gradients():
    embed_dim, heads = 10, 5
    mha = MultiheadAttentionContainer(
        heads, InProjContainer(*(nn.Linear(embed_dim, embed_dim) for _ in range(3))),
        ScaledDotProduct(), nn.Linear(embed_dim, embed_dim))
    query, key = ember.rand(21, 3, embed_dim), ember.rand(16, 3, embed_dim)
    out, weights = mha(query, key, key)
    assert tuple(out.shape) == (21, 3, 10) and tuple(weights.shape) == (15, 21, 16)
    out.sum().backward()
    assert mha.in_proj_container.query_proj.weight.grad is not None
    bad = MultiheadAttentionContainer(3, InProjContainer(*(nn.Linear(10, 10) for _ in range(3))),
                                      ScaledDotProduct(), nn.Linear(10, 10))
    with pytest.raises(AssertionError, match="divisible"):
        bad(query, key, key)


def test_generate_square_subsequent_mask():
    mask = generate_square_subsequent_mask(2, 3)
    assert mask.tolist() == [[[True, False, False], [True, True, False], [True, True, True]]] * 2

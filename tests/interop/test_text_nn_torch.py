"""embertext.nn's MultiheadAttentionContainer against torch.nn.MultiheadAttention with the same
weights (the check torchtext itself makes)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("embertext")  # the interop session of CI has only ember

import ember  # noqa: E402
from ember import nn  # noqa: E402
from embertext.nn import InProjContainer, MultiheadAttentionContainer, ScaledDotProduct  # noqa: E402


def linear_from(weight, bias):
    layer = nn.Linear(weight.shape[1], weight.shape[0])
    layer.weight.data = ember.tensor(weight.detach().numpy())
    layer.bias.data = ember.tensor(bias.detach().numpy())
    return layer


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("masked", [False, True])
def test_matches_torch_multihead_attention(batch_first, masked):
    torch.manual_seed(0)
    embed_dim, heads, batch, tgt, src = 12, 3, 4, 5, 7
    reference = torch.nn.MultiheadAttention(embed_dim, heads, batch_first=batch_first).eval()
    wq, wk, wv = reference.in_proj_weight.chunk(3)
    bq, bk, bv = reference.in_proj_bias.chunk(3)
    ours = MultiheadAttentionContainer(
        heads, InProjContainer(linear_from(wq, bq), linear_from(wk, bk), linear_from(wv, bv)),
        ScaledDotProduct(), linear_from(reference.out_proj.weight, reference.out_proj.bias),
        batch_first=batch_first).eval()
    shape_q = (batch, tgt, embed_dim) if batch_first else (tgt, batch, embed_dim)
    shape_k = (batch, src, embed_dim) if batch_first else (src, batch, embed_dim)
    query, key = torch.randn(shape_q), torch.randn(shape_k)
    value = torch.randn(shape_k)
    mask = torch.rand(tgt, src) > 0.7 if masked else None
    mask_ours = None
    if masked:
        mask[:, 0] = False  # every query attends to something
        mask_ours = ember.tensor(mask.numpy()).unsqueeze(0)
    with torch.no_grad():
        expected, expected_weights = reference(query, key, value, attn_mask=mask,
                                               average_attn_weights=False)
    with ember.no_grad():
        got, weights = ours(ember.tensor(query.numpy()), ember.tensor(key.numpy()),
                            ember.tensor(value.numpy()), attn_mask=mask_ours)
    np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(weights.numpy().reshape(batch, heads, tgt, src),
                               expected_weights.numpy(), rtol=1e-5, atol=1e-6)

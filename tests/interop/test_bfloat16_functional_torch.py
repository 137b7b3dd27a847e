"""bfloat16 activations, softmax and norms against PyTorch's CPU kernels (which compute in
float32 and round to bfloat16, as ember does: NOTE [ bfloat16 through float32 ])."""

import numpy as np
import pytest

import ember
import ember.nn.functional as EF

torch = pytest.importorskip("torch")
TF = torch.nn.functional

A = np.random.default_rng(5).standard_normal((2, 4, 3, 2)).astype(np.float32)

CASES = {
    "elu": lambda F, x: F.elu(x), "gelu": lambda F, x: F.gelu(x),
    "gelu_tanh": lambda F, x: F.gelu(x, approximate="tanh"), "silu": lambda F, x: F.silu(x),
    "mish": lambda F, x: F.mish(x), "softplus": lambda F, x: F.softplus(x),
    "leaky_relu": lambda F, x: F.leaky_relu(x, 0.1), "hardswish": lambda F, x: F.hardswish(x),
    "logsigmoid": lambda F, x: F.logsigmoid(x), "softmax": lambda F, x: F.softmax(x, 1),
    "log_softmax": lambda F, x: F.log_softmax(x, -1),
    "layer_norm": lambda F, x: F.layer_norm(x, (3, 2)),
    "group_norm": lambda F, x: F.group_norm(x, 2),
    "batch_norm": lambda F, x: F.batch_norm(x, None, None, training=True),
}


def _bits_apart(a, b):
    """How many bfloat16 steps apart two bfloat16 arrays' values are."""
    ia = a.view(np.uint16).astype(np.int32)
    ib = b.view(np.uint16).astype(np.int32)
    return np.abs(ia - ib).max()


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch_within_one_bfloat16_step(name):
    import ml_dtypes

    fn = CASES[name]
    got = fn(EF, ember.tensor(A).bfloat16())
    want = fn(TF, torch.tensor(A).bfloat16())
    assert want.dtype == torch.bfloat16 and got.dtype is ember.bfloat16
    g = got.float().numpy()
    # torch's bfloat16 normalization and log_softmax kernels round intermediates: they are
    # within a step or two of bfloat16 precision at the output's scale, not bit-exact
    np.testing.assert_allclose(g, want.float().numpy(), rtol=2**-7, atol=2**-6)
    # ember's is torch's float32 result on the same (rounded) inputs, rounded
    rounded = fn(TF, torch.tensor(A).bfloat16().float()).bfloat16()
    w = rounded.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    assert _bits_apart(got.numpy().astype(ml_dtypes.bfloat16), w) <= 1

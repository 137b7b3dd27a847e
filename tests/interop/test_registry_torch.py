"""Tensor methods installed from the op registry, against PyTorch."""

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def test_tensor_has_the_methods_of_nn_functional_that_torch_tensor_has():
    import torch.nn.functional as TF

    both = {n for n in dir(TF) if not n.startswith("_") and n in dir(torch.Tensor)}
    both -= {"grad", "unfold"}  # Tensor.grad is the attribute; Tensor.unfold is another op
    missing = sorted(n for n in both if not hasattr(ember.Tensor, n))
    assert not missing


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", [None, "float64"])
def test_softmax_methods_match_torch(name, dim, dtype):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 5)).astype(np.float32)
    kw = {} if dtype is None else {"dtype": getattr(ember, dtype)}
    tkw = {} if dtype is None else {"dtype": getattr(torch, dtype)}
    xe = ember.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    ye = getattr(xe, name)(dim, **kw)
    yt = getattr(xt, name)(dim, **tkw)
    assert str(ye.dtype).split(".")[-1] == str(yt.dtype).split(".")[-1]
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-6, atol=1e-6)
    w = rng.standard_normal((3, 5))
    (ye * ember.tensor(w, dtype=ye.dtype)).sum().backward()
    (yt * torch.tensor(w, dtype=yt.dtype)).sum().backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_hardshrink_and_prelu_methods_match_torch():
    x = np.array([-1.0, -0.3, 0.2, 0.7, 3.0], np.float32)
    for lambd in (0.5, 0.25):
        np.testing.assert_allclose(ember.tensor(x).hardshrink(lambd).numpy(),
                                   torch.tensor(x).hardshrink(lambd).numpy())
    w = np.array([0.1], np.float32)
    np.testing.assert_allclose(ember.tensor(x).prelu(ember.tensor(w)).numpy(),
                               torch.tensor(x).prelu(torch.tensor(w)).numpy())

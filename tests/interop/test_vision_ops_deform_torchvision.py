"""deform_conv2d and ps_roi_pool against torchvision 0.29 (``nox -s vision_torch``):
outputs and gradients."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")

import ember  # noqa: E402
from embervision import ops  # noqa: E402

CASES = [  # n, c_in, h, w, c_out, kh, kw, groups, offset_groups, stride, padding, dilation, mask
    (2, 4, 7, 8, 6, 3, 3, 2, 2, (1, 1), (1, 1), (1, 1), True),
    (1, 3, 6, 5, 2, 2, 3, 1, 1, (2, 1), (0, 2), (1, 2), False),
    (1, 4, 5, 5, 4, 3, 3, 4, 4, (1, 2), (2, 1), (2, 1), True),
]


@pytest.mark.parametrize("case", CASES)
def test_deform_conv2d_matches(case):
    n, cin, h, w, cout, kh, kw, groups, og, stride, pad, dil, use_mask = case
    rng = np.random.default_rng(0)
    ho = (h + 2 * pad[0] - (dil[0] * (kh - 1) + 1)) // stride[0] + 1
    wo = (w + 2 * pad[1] - (dil[1] * (kw - 1) + 1)) // stride[1] + 1
    arrays = [rng.standard_normal((n, cin, h, w)),
              rng.standard_normal((n, 2 * og * kh * kw, ho, wo)) * 2,
              rng.standard_normal((cout, cin // groups, kh, kw)), rng.standard_normal(cout),
              rng.uniform(0, 1, (n, og * kh * kw, ho, wo))]
    grad_out = rng.standard_normal((n, cout, ho, wo))
    results = []
    for lib, fn in ((torch, torchvision.ops.deform_conv2d), (ember, ops.deform_conv2d)):
        ts = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = fn(ts[0], ts[1], ts[2], ts[3], stride, pad, dil, ts[4] if use_mask else None)
        (out * lib.tensor(grad_out)).sum().backward()
        results.append([out.detach().numpy()] + [t.grad.numpy() if t.grad is not None else None
                                                 for t in ts])
    for ref, got in zip(*results):
        if ref is None:
            assert got is None or not np.any(got)
        else:
            np.testing.assert_allclose(got, ref, atol=1e-10)


def test_deform_conv2d_module_matches():
    torch.manual_seed(0)
    ref = torchvision.ops.DeformConv2d(4, 6, 3, padding=1, groups=2)
    layer = ops.DeformConv2d(4, 6, 3, padding=1, groups=2)
    layer.load_state_dict({k: ember.from_numpy(v.detach().numpy())
                           for k, v in ref.state_dict().items()})
    x = np.random.default_rng(1).standard_normal((1, 4, 5, 5)).astype(np.float32)
    off = np.random.default_rng(2).standard_normal((1, 18, 5, 5)).astype(np.float32)
    np.testing.assert_allclose(
        layer(ember.from_numpy(x), ember.from_numpy(off)).detach().numpy(),
        ref(torch.from_numpy(x), torch.from_numpy(off)).detach().numpy(), atol=1e-5)
    assert repr(layer).replace("ember", "torch") == repr(ref)


def test_ps_roi_pool_matches():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 8, 10, 12))
    rois = np.array([[0, 1.2, 2.7, 8.4, 9.1], [1, -2, 0.5, 5.5, 3.4], [0, 3, 3, 3.2, 3.1],
                     [1, 0, 0, 30, 30]])
    grad_out = rng.standard_normal((4, 2, 2, 2))
    results = []
    for lib, fn in ((torch, torchvision.ops.ps_roi_pool), (ember, ops.ps_roi_pool)):
        t = lib.tensor(x, requires_grad=True)
        out = fn(t, lib.tensor(rois), (2, 2), 0.8)
        (out * lib.tensor(grad_out)).sum().backward()
        results.append((out.detach().numpy(), t.grad.numpy()))
    np.testing.assert_allclose(results[1][0], results[0][0], atol=1e-12)
    np.testing.assert_allclose(results[1][1], results[0][1], atol=1e-12)


def test_ops_names_match_torchvision():
    assert set(torchvision.ops.__all__) - set(ops.__all__) == set()

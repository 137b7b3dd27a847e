"""embervision.ops against torchvision.ops (its C++ kernels) on random boxes, with ties and
degenerate boxes. Skips without torchvision."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
tv_ops = pytest.importorskip("torchvision.ops")

import ember  # noqa: E402
import embervision.ops as ops  # noqa: E402


def _boxes(n, seed, ties=True):
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, 50, (n, 2))
    wh = rng.uniform(0, 20, (n, 2))
    wh[::7] = 0.0  # degenerate boxes
    boxes = np.concatenate([xy, xy + wh], 1).astype(np.float32)
    scores = rng.uniform(0, 1, n).astype(np.float32)
    if ties:
        scores[::5] = 0.5
        boxes[3] = boxes[2]
    return boxes, scores


def _pair(a):
    return ember.from_numpy(a.copy()), torch.from_numpy(a.copy())


@pytest.mark.parametrize("name", ["box_iou", "generalized_box_iou", "distance_box_iou",
                                  "complete_box_iou"])
def test_iou_variants(name):
    a, _ = _boxes(20, 0, ties=False)
    b, _ = _boxes(15, 1, ties=False)
    a[:, 2:] += 1
    b[:, 2:] += 1
    ea, ta = _pair(a)
    eb, tb = _pair(b)
    np.testing.assert_allclose(getattr(ops, name)(ea, eb).numpy(),
                               getattr(tv_ops, name)(ta, tb).numpy(), rtol=1e-5, atol=1e-6)


def test_box_convert_and_area():
    a, _ = _boxes(10, 2)
    e, t = _pair(a)
    for fmt in ("xywh", "cxcywh"):
        np.testing.assert_allclose(ops.box_convert(e, "xyxy", fmt).numpy(),
                                   tv_ops.box_convert(t, "xyxy", fmt).numpy(), atol=1e-5)
        np.testing.assert_allclose(ops.box_convert(e, fmt, "xyxy").numpy(),
                                   tv_ops.box_convert(t, fmt, "xyxy").numpy(), atol=1e-5)
    np.testing.assert_allclose(ops.box_area(e).numpy(), tv_ops.box_area(t).numpy(), rtol=1e-6)


@pytest.mark.parametrize("threshold", [0.0, 0.3, 0.5, 0.9])
def test_nms_and_batched_nms(threshold):
    b, s = _boxes(300, 3)
    eb, tb = _pair(b)
    es, ts = _pair(s)
    np.testing.assert_array_equal(ops.nms(eb, es, threshold).numpy(),
                                  tv_ops.nms(tb, ts, threshold).numpy())
    idx = np.random.default_rng(4).integers(0, 4, 300)
    ei, ti = _pair(idx)
    np.testing.assert_array_equal(ops.batched_nms(eb, es, ei, threshold).numpy(),
                                  tv_ops.batched_nms(tb, ts, ti, threshold).numpy())


def _rois(k, seed):
    rng = np.random.default_rng(seed)
    xy = rng.uniform(-3, 14, (k, 2))
    wh = rng.uniform(0, 9, (k, 2))
    idx = rng.integers(0, 2, (k, 1))
    return np.concatenate([idx, xy, xy + wh], 1).astype(np.float64)


@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("sampling_ratio", [-1, 2])
def test_roi_align_forward_backward(aligned, sampling_ratio):
    x = np.random.default_rng(5).standard_normal((2, 3, 12, 14))
    rois = _rois(9, 6)
    ex = ember.from_numpy(x.copy()).requires_grad_()
    tx = torch.from_numpy(x.copy()).requires_grad_()
    eo = ops.roi_align(ex, ember.from_numpy(rois), (3, 4), 0.8, sampling_ratio, aligned)
    to = tv_ops.roi_align(tx, torch.from_numpy(rois), (3, 4), 0.8, sampling_ratio, aligned)
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), atol=1e-10)
    g = np.random.default_rng(7).standard_normal(tuple(to.shape))
    eo.backward(ember.from_numpy(g))
    to.backward(torch.from_numpy(g))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), atol=1e-10)


def test_roi_pool_forward_backward():
    x = np.random.default_rng(8).standard_normal((2, 3, 12, 14))
    rois = _rois(9, 9)
    ex = ember.from_numpy(x.copy()).requires_grad_()
    tx = torch.from_numpy(x.copy()).requires_grad_()
    eo = ops.roi_pool(ex, ember.from_numpy(rois), (3, 2), 0.7)
    to = tv_ops.roi_pool(tx, torch.from_numpy(rois), (3, 2), 0.7)
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy())
    g = np.random.default_rng(10).standard_normal(tuple(to.shape))
    eo.backward(ember.from_numpy(g))
    to.backward(torch.from_numpy(g))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy())


def test_focal_loss_and_misc():
    rng = np.random.default_rng(11)
    logits = rng.standard_normal((4, 6)).astype(np.float32)
    targets = (rng.uniform(size=(4, 6)) > 0.5).astype(np.float32)
    for reduction in ("none", "mean", "sum"):
        np.testing.assert_allclose(
            ops.sigmoid_focal_loss(ember.from_numpy(logits), ember.from_numpy(targets),
                                   reduction=reduction).numpy(),
            tv_ops.sigmoid_focal_loss(torch.from_numpy(logits), torch.from_numpy(targets),
                                      reduction=reduction).numpy(), rtol=1e-5, atol=1e-7)
    masks = np.zeros((2, 9, 7), dtype=np.uint8)
    masks[0, 2:5, 1:3] = 1
    masks[1, 8, 6] = 1
    np.testing.assert_array_equal(ops.masks_to_boxes(ember.from_numpy(masks)).numpy(),
                                  tv_ops.masks_to_boxes(torch.from_numpy(masks)).numpy())


def test_module_state_dict_keys():
    pairs = [
        (ops.Conv2dNormActivation(3, 8, 3), tv_ops.Conv2dNormActivation(3, 8, 3)),
        (ops.SqueezeExcitation(8, 2), tv_ops.SqueezeExcitation(8, 2)),
        (ops.MLP(4, [8, 8, 3], norm_layer=ember.nn.LayerNorm),
         tv_ops.MLP(4, [8, 8, 3], norm_layer=torch.nn.LayerNorm)),
        (ops.FrozenBatchNorm2d(5), tv_ops.FrozenBatchNorm2d(5)),
    ]
    for ours, theirs in pairs:
        a = {k: tuple(v.shape) for k, v in ours.state_dict().items()}
        b = {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
        assert a == b

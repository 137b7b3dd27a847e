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


def test_feature_pyramid_network_and_multiscale_roi_align(tmp_path):
    from collections import OrderedDict

    from torchvision.ops.feature_pyramid_network import LastLevelMaxPool as TvPool
    from torchvision.ops.feature_pyramid_network import LastLevelP6P7 as TvP6P7

    from embervision.ops.feature_pyramid_network import LastLevelMaxPool, LastLevelP6P7

    rng = np.random.default_rng(12)
    feats = {"a": rng.standard_normal((2, 4, 16, 20)), "b": rng.standard_normal((2, 6, 8, 10)),
             "c": rng.standard_normal((2, 8, 4, 5))}
    feats = {k: v.astype(np.float32) for k, v in feats.items()}
    for ours_extra, theirs_extra in [(LastLevelMaxPool(), TvPool()),
                                     (LastLevelP6P7(8, 5), TvP6P7(8, 5))]:
        torch.manual_seed(0)
        ref = tv_ops.FeaturePyramidNetwork([4, 6, 8], 5, extra_blocks=theirs_extra)
        torch.save(ref.state_dict(), tmp_path / "fpn.pth")
        ours = ops.FeaturePyramidNetwork([4, 6, 8], 5, extra_blocks=ours_extra)
        ours.load_state_dict(ember.load(tmp_path / "fpn.pth"), strict=True)
        a = ours(OrderedDict((k, ember.from_numpy(v)) for k, v in feats.items()))
        b = ref(OrderedDict((k, torch.from_numpy(v)) for k, v in feats.items()))
        assert list(a) == list(b)
        for k in a:
            np.testing.assert_allclose(a[k].detach().numpy(), b[k].detach().numpy(), atol=1e-5)
    maps = {"p2": rng.standard_normal((2, 3, 32, 32)), "p3": rng.standard_normal((2, 3, 16, 16)),
            "p4": rng.standard_normal((2, 3, 8, 8)), "extra": rng.standard_normal((2, 3, 4, 4))}
    maps = {k: v.astype(np.float32) for k, v in maps.items()}
    boxes = [np.array([[0, 0, 20, 30], [5, 5, 120, 100], [10, 20, 60, 40]], np.float32),
             np.array([[1, 2, 127, 127], [30, 30, 34, 36]], np.float32)]
    shapes = [(128, 128), (120, 128)]
    ours = ops.MultiScaleRoIAlign(["p2", "p3", "p4"], 3, 2)
    theirs = tv_ops.MultiScaleRoIAlign(["p2", "p3", "p4"], 3, 2)
    a = ours({k: ember.from_numpy(v) for k, v in maps.items()},
             [ember.from_numpy(b) for b in boxes], shapes)
    b = theirs({k: torch.from_numpy(v) for k, v in maps.items()},
               [torch.from_numpy(b) for b in boxes], shapes)
    np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-5)


@pytest.mark.parametrize("sampling_ratio", [-1, 2])
def test_ps_roi_align_forward_backward(sampling_ratio):
    x = np.random.default_rng(13).standard_normal((2, 12, 12, 14))
    rois = _rois(9, 14)
    ex = ember.from_numpy(x.copy()).requires_grad_()
    tx = torch.from_numpy(x.copy()).requires_grad_()
    eo = ops.ps_roi_align(ex, ember.from_numpy(rois), (3, 2), 0.8, sampling_ratio)
    to = tv_ops.ps_roi_align(tx, torch.from_numpy(rois), (3, 2), 0.8, sampling_ratio)
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), atol=1e-10)
    g = np.random.default_rng(15).standard_normal(tuple(to.shape))
    eo.backward(ember.from_numpy(g))
    to.backward(torch.from_numpy(g))
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), atol=1e-10)


@pytest.mark.parametrize("name", ["generalized_box_iou_loss", "distance_box_iou_loss",
                                  "complete_box_iou_loss"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_iou_losses_and_gradients(name, reduction):
    a, _ = _boxes(12, 16, ties=False)
    b, _ = _boxes(12, 17, ties=False)
    a[:, 2:] += 1
    b[:, 2:] += 1
    a, b = a.astype(np.float64), b.astype(np.float64)
    ea = ember.from_numpy(a.copy()).requires_grad_()
    ta = torch.from_numpy(a.copy()).requires_grad_()
    eo = getattr(ops, name)(ea, ember.from_numpy(b), reduction=reduction)
    to = getattr(tv_ops, name)(ta, torch.from_numpy(b), reduction=reduction)
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), rtol=1e-10)
    eo.sum().backward()
    to.sum().backward()
    np.testing.assert_allclose(ea.grad.numpy(), ta.grad.numpy(), rtol=1e-8, atol=1e-12)

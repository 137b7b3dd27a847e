"""embervision.ops: box ops against closed forms, NMS against a brute-force greedy loop,
RoI pooling gradients against finite differences, and the model blocks."""

import numpy as np
import pytest

import ember
import embervision.ops as ops
from ember.autograd import gradcheck


def test_box_iou_closed_form():
    a = ember.tensor([[0.0, 0.0, 2.0, 2.0]])
    b = ember.tensor([[1.0, 1.0, 3.0, 3.0], [5.0, 5.0, 6.0, 6.0], [0.0, 0.0, 2.0, 2.0]])
    np.testing.assert_allclose(ops.box_iou(a, b).numpy(), [[1 / 7, 0.0, 1.0]], rtol=1e-6)
    # GIoU of the first pair: 1/7 - (9 - 7) / 9
    np.testing.assert_allclose(ops.generalized_box_iou(a, b).numpy()[0, 0], 1 / 7 - 2 / 9,
                               rtol=1e-6)
    # DIoU: centres (1,1) and (2,2), enclosing diagonal^2 = 18
    np.testing.assert_allclose(ops.distance_box_iou(a, b).numpy()[0, 0], 1 / 7 - 2 / 18,
                               rtol=1e-5)
    # same aspect ratio: CIoU == DIoU
    np.testing.assert_allclose(ops.complete_box_iou(a, b).numpy(),
                               ops.distance_box_iou(a, b).numpy(), rtol=1e-6)
    assert tuple(ops.box_iou(ember.zeros(0, 4), b).shape) == (0, 3)


def test_box_convert_roundtrip_and_area():
    b = ember.tensor([[1.0, 2.0, 4.0, 8.0]])
    np.testing.assert_allclose(ops.box_convert(b, "xyxy", "xywh").numpy(), [[1, 2, 3, 6]])
    np.testing.assert_allclose(ops.box_convert(b, "xyxy", "cxcywh").numpy(), [[2.5, 5, 3, 6]])
    np.testing.assert_allclose(
        ops.box_convert(ops.box_convert(b, "xyxy", "cxcywh"), "cxcywh", "xyxy").numpy(),
        b.numpy())
    assert float(ops.box_area(b)) == 18.0
    with pytest.raises(ValueError, match="Unsupported"):
        ops.box_convert(b, "xyxy", "yxyx")
    with pytest.raises(ValueError, match=r"\(\.\.\., 4\)"):
        ops.box_area(ember.zeros(3, 3))


def _greedy(boxes, scores, thr):
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    keep = []
    for i in order:
        ok = True
        for j in keep:
            iou = ops.box_iou(ember.tensor(boxes[i:i + 1]), ember.tensor(boxes[j:j + 1]))
            if float(iou) > thr:
                ok = False
                break
        if ok:
            keep.append(i)
    return keep


def test_nms_matches_greedy_definition():
    rng = np.random.default_rng(0)
    xy = rng.uniform(0, 20, (40, 2))
    boxes = np.concatenate([xy, xy + rng.uniform(1, 10, (40, 2))], 1).astype(np.float32)
    scores = rng.permutation(40).astype(np.float32)
    keep = ops.nms(ember.tensor(boxes), ember.tensor(scores), 0.4)
    assert keep.dtype == ember.int64
    assert keep.tolist() == _greedy(boxes, scores, 0.4)
    assert ops.nms(ember.zeros(0, 4), ember.zeros(0), 0.5).numel() == 0
    with pytest.raises(RuntimeError, match="boxes and scores should have same number"):
        ops.nms(ember.tensor(boxes), ember.tensor(scores[:3]), 0.5)


def test_batched_nms_keeps_categories_apart():
    boxes = ember.tensor([[0.0, 0, 10, 10], [0.0, 0, 10, 10], [1.0, 1, 10, 10]])
    scores = ember.tensor([0.9, 0.8, 0.7])
    assert ops.batched_nms(boxes, scores, ember.tensor([0, 1, 0]), 0.5).tolist() == [0, 1]
    assert ops.nms(boxes, scores, 0.5).tolist() == [0]


def test_small_boxes_clip_and_masks():
    b = ember.tensor([[0.0, 0, 1, 5], [0.0, 0, 3, 3], [-2.0, -1, 30, 7]])
    assert ops.remove_small_boxes(b, 2.0).tolist() == [1, 2]
    np.testing.assert_array_equal(ops.clip_boxes_to_image(b, (6, 20)).numpy()[2], [0, 0, 20, 6])
    masks = ember.zeros(1, 5, 6, dtype=ember.uint8)
    masks[0, 1:3, 2:5] = 1
    np.testing.assert_array_equal(ops.masks_to_boxes(masks).numpy(), [[2, 1, 4, 2]])


def test_roi_align_closed_form_and_gradcheck():
    # On a linear ramp, bilinear sampling is exact: the bin average is the value at its centre.
    x = ember.arange(8, dtype=ember.float64).reshape(1, 1, 1, 8).expand(1, 1, 8, 8).contiguous()
    rois = ember.tensor([[0.0, 1.0, 1.0, 5.0, 5.0]], dtype=ember.float64)
    out = ops.roi_align(x, rois, 2, aligned=True)
    np.testing.assert_allclose(out.numpy()[0, 0], [[1.5, 3.5], [1.5, 3.5]], atol=1e-12)
    inp = ember.rand(2, 2, 6, 7, dtype=ember.float64).requires_grad_()
    boxes = [ember.tensor([[0.5, 1.0, 4.0, 5.5]], dtype=ember.float64),
             ember.tensor([[1.0, 0.2, 6.0, 3.0], [2.0, 2.0, 3.0, 3.0]], dtype=ember.float64)]
    assert gradcheck(lambda t: ops.roi_align(t, boxes, (2, 3), 1.0, 2, False), (inp,))
    assert gradcheck(lambda t: ops.RoIAlign((2, 2), 0.5, -1, True)(t, boxes), (inp,))


def test_roi_pool_max_and_gradcheck():
    x = ember.arange(36, dtype=ember.float64).reshape(1, 1, 6, 6)
    out = ops.roi_pool(x, ember.tensor([[0.0, 0, 0, 5, 5]], dtype=ember.float64), 2)
    np.testing.assert_array_equal(out.numpy()[0, 0], [[14, 17], [32, 35]])
    inp = ember.from_numpy(np.random.default_rng(0).permutation(84).reshape(1, 2, 6, 7)
                           .astype(np.float64)).requires_grad_()
    rois = ember.tensor([[0.0, 0.0, 1.0, 4.0, 5.0]], dtype=ember.float64)
    assert gradcheck(lambda t: ops.RoIPool((2, 2), 1.0)(t, rois), (inp,))
    with pytest.raises(ValueError, match="Tensor\\[K, 5\\]"):
        ops.roi_pool(inp, ember.zeros(3, 4), 2)
    with pytest.raises(IndexError, match="batch index"):
        ops.roi_align(inp, ember.tensor([[3.0, 0, 0, 1, 1]], dtype=ember.float64), 2)


def test_sigmoid_focal_loss_gamma_zero_is_bce():
    x = ember.randn(5, 3)
    t = (ember.rand(5, 3) > 0.5).float()
    bce = ember.nn.functional.binary_cross_entropy_with_logits(x, t, reduction="sum")
    np.testing.assert_allclose(float(ops.sigmoid_focal_loss(x, t, alpha=-1, gamma=0,
                                                            reduction="sum")), float(bce),
                               rtol=1e-5)
    with pytest.raises(ValueError, match="reduction"):
        ops.sigmoid_focal_loss(x, t, reduction="avg")


def test_blocks():
    block = ops.Conv2dNormActivation(3, 8, 3, stride=2)
    assert list(block.state_dict()) == ["0.weight", "1.weight", "1.bias", "1.running_mean",
                                        "1.running_var", "1.num_batches_tracked"]
    assert tuple(block(ember.rand(2, 3, 9, 9)).shape) == (2, 8, 5, 5)
    assert block[0].bias is None
    se = ops.SqueezeExcitation(8, 2)
    assert tuple(se(ember.rand(2, 8, 4, 4)).shape) == (2, 8, 4, 4)
    mlp = ops.MLP(4, [8, 3], dropout=0.1)
    assert [type(m).__name__ for m in mlp] == ["Linear", "ReLU", "Dropout", "Linear", "Dropout"]
    assert tuple(ops.Permute([0, 2, 3, 1])(ember.rand(1, 2, 3, 4)).shape) == (1, 3, 4, 2)


def test_frozen_batchnorm_matches_eval_batchnorm():
    bn = ember.nn.BatchNorm2d(4)
    bn.running_mean.copy_(ember.randn(4))
    bn.running_var.copy_(ember.rand(4) + 0.5)
    bn.weight.data.copy_(ember.randn(4))
    bn.eval()
    frozen = ops.FrozenBatchNorm2d(4)
    frozen.load_state_dict(bn.state_dict())
    x = ember.randn(2, 4, 3, 3)
    np.testing.assert_allclose(frozen(x).numpy(), bn(x).detach().numpy(), atol=1e-5)


def test_stochastic_depth():
    x = ember.ones(1000, 3)
    ember.manual_seed(0)
    out = ops.stochastic_depth(x, 0.3, "row")
    rows = out[:, 0].numpy()
    assert np.all(np.isclose(rows, 0.0) | np.isclose(rows, 1 / 0.7))
    assert (out.numpy() == out.numpy()[:, :1]).all()
    assert abs((rows == 0).mean() - 0.3) < 0.06
    assert ops.stochastic_depth(x, 0.3, "row", training=False) is x
    m = ops.StochasticDepth(0.5, "batch").eval()
    assert m(x) is x
    with pytest.raises(ValueError, match="mode"):
        ops.stochastic_depth(x, 0.3, "col")


def test_feature_pyramid_network_shapes_and_top_down_sum():
    from collections import OrderedDict

    from embervision.ops.feature_pyramid_network import LastLevelMaxPool, LastLevelP6P7

    x = OrderedDict(c3=ember.rand(1, 4, 8, 8), c4=ember.rand(1, 6, 4, 4))
    fpn = ops.FeaturePyramidNetwork([4, 6], 3, extra_blocks=LastLevelMaxPool())
    out = fpn(x)
    assert list(out) == ["c3", "c4", "pool"]
    assert [tuple(v.shape) for v in out.values()] == [(1, 3, 8, 8), (1, 3, 4, 4), (1, 3, 2, 2)]
    with ember.no_grad():
        top = fpn.inner_blocks[1](x["c4"])
        up = ember.nn.functional.interpolate(top, size=(8, 8), mode="nearest")
        expected = fpn.layer_blocks[0](fpn.inner_blocks[0](x["c3"]) + up)
        np.testing.assert_allclose(out["c3"].detach().numpy(), expected.numpy(), atol=1e-6)
    p67 = ops.FeaturePyramidNetwork([4, 6], 3, extra_blocks=LastLevelP6P7(6, 3))(x)
    assert list(p67) == ["c3", "c4", "p6", "p7"]
    assert list(fpn.state_dict())[:2] == ["inner_blocks.0.0.weight", "inner_blocks.0.0.bias"]
    with pytest.raises(TypeError, match="ExtraFPNBlock"):
        ops.FeaturePyramidNetwork([4], 3, extra_blocks=ember.nn.ReLU())


def test_multiscale_roi_align_picks_levels():
    feats = {"p2": ember.rand(1, 2, 64, 64), "p3": ember.rand(1, 2, 32, 32)}
    boxes = [ember.tensor([[0.0, 0.0, 20.0, 20.0], [0.0, 0.0, 250.0, 250.0]])]
    pooler = ops.MultiScaleRoIAlign(["p2", "p3"], 2, 2)
    out = pooler(feats, boxes, [(256, 256)])
    assert tuple(out.shape) == (2, 2, 2, 2) and pooler.scales == [0.25, 0.125]
    small = ops.roi_align(feats["p2"], [boxes[0][:1]], 2, 0.25, 2)
    large = ops.roi_align(feats["p3"], [boxes[0][1:]], 2, 0.125, 2)
    np.testing.assert_allclose(out.numpy()[0], small.numpy()[0], atol=1e-6)
    np.testing.assert_allclose(out.numpy()[1], large.numpy()[0], atol=1e-6)


def test_ps_roi_align_channels_and_gradcheck():
    # Bin (i, j) of output channel c reads input channel (c * 2 + i) * 2 + j: on constant
    # channels the output is that channel's constant.
    x = ember.arange(8, dtype=ember.float64).reshape(1, 8, 1, 1).expand(1, 8, 6, 6).contiguous()
    out = ops.ps_roi_align(x, [ember.tensor([[0.5, 0.5, 5.0, 5.0]], dtype=ember.float64)], 2)
    np.testing.assert_allclose(out.numpy()[0], np.arange(8).reshape(2, 2, 2), atol=1e-12)
    inp = ember.rand(1, 8, 5, 6, dtype=ember.float64).requires_grad_()
    rois = ember.tensor([[0.0, 0.5, 1.0, 4.0, 4.5]], dtype=ember.float64)
    assert gradcheck(lambda t: ops.PSRoIAlign(2, 1.0, 2)(t, rois), (inp,))
    with pytest.raises(ValueError, match="multiple"):
        ops.ps_roi_align(ember.rand(1, 6, 4, 4), [ember.tensor([[0.0, 0, 2, 2]])], 2)


def test_iou_losses_closed_forms():
    a = ember.tensor([[0.0, 0.0, 2.0, 2.0]], dtype=ember.float64)
    b = ember.tensor([[1.0, 1.0, 3.0, 3.0]], dtype=ember.float64)
    np.testing.assert_allclose(ops.generalized_box_iou_loss(a, b).numpy(), [1 - (1 / 7 - 2 / 9)],
                               rtol=1e-6)
    np.testing.assert_allclose(ops.distance_box_iou_loss(a, b).numpy(), [1 - 1 / 7 + 2 / 18],
                               rtol=1e-6)
    np.testing.assert_allclose(ops.complete_box_iou_loss(a, b).numpy(),
                               ops.distance_box_iou_loss(a, b).numpy(), rtol=1e-12)
    assert float(ops.generalized_box_iou_loss(a, a, reduction="sum")) == pytest.approx(0, abs=1e-6)
    assert float(ops.distance_box_iou_loss(ember.zeros(0, 4), ember.zeros(0, 4),
                                           reduction="mean")) == 0.0
    a.requires_grad_()
    assert gradcheck(lambda t: ops.complete_box_iou_loss(t, b + 0.3), (a,))
    with pytest.raises(ValueError, match="reduction"):
        ops.generalized_box_iou_loss(a, b, reduction="max")


@pytest.mark.parametrize("dims", [2, 3])
def test_drop_block_drops_squares_and_rescales(dims):
    fn = ops.drop_block2d if dims == 2 else ops.drop_block3d
    shape = (2, 3) + (24,) * dims if dims == 2 else (2, 3) + (10,) * dims
    x = ember.ones(*shape)
    ember.manual_seed(0)
    out = fn(x, 0.3, 3).numpy()
    kept = out != 0
    scale = out[kept]
    assert np.allclose(scale, scale[0]) and scale[0] > 1
    np.testing.assert_allclose(scale[0], kept.size / kept.sum(), rtol=1e-4)
    assert 0.1 < 1 - kept.mean() < 0.5
    if dims == 2:
        # Every dropped pixel lies in a fully dropped 3x3 square (clipped at the borders).
        dropped = np.argwhere(~kept)
        n, c, i, j = dropped[0]
        assert any((~kept[n, c, max(a, 0):a + 3, max(b, 0):b + 3]).all()
                   for a in range(i - 2, i + 1) for b in range(j - 2, j + 1))
    assert fn(x, 0.0, 3) is x and fn(x, 0.5, 3, training=False) is x
    module = (ops.DropBlock2d if dims == 2 else ops.DropBlock3d)(0.5, 3).eval()
    assert module(x) is x
    with pytest.raises(ValueError, match="dimensional"):
        fn(ember.ones(2, 3), 0.1, 3)

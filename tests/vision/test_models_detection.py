"""embervision.models.detection: state-dict keys and shapes equal torchvision 0.29's
(recorded by tools/record_torchvision_detection.py), the weights enums' URLs and metadata, the
registry, pretrained weights through the hub cache, and each detector (on small backbones, so
that the file stays fast) in training mode (the loss dict, finite, backward) and eval mode (one
dict of boxes/labels/scores, masks, keypoints per image, in the original image coordinates);
the building blocks against NumPy and hand-computed values. NumPy only; no download."""

import gzip
import json
import math
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

import ember
import ember.nn.init as init
import embervision.models as models
from ember import nn
from embervision.models import detection
from embervision.models.detection import _utils as det_utils
from embervision.models.detection.anchor_utils import AnchorGenerator, DefaultBoxGenerator
from embervision.models.detection.backbone_utils import (
    BackboneWithFPN,
    _resnet_fpn_extractor,
    mobilenet_backbone,
    resnet_fpn_backbone,
)
from embervision.models.detection.faster_rcnn import FastRCNNPredictor, TwoMLPHead
from embervision.models.detection.image_list import ImageList
from embervision.models.detection.keypoint_rcnn import KeypointRCNNHeads, KeypointRCNNPredictor
from embervision.models.detection.mask_rcnn import MaskRCNNHeads, MaskRCNNPredictor
from embervision.models.detection.roi_heads import heatmaps_to_keypoints, paste_masks_in_image
from embervision.models.detection.rpn import RPNHead
from embervision.models.detection.transform import GeneralizedRCNNTransform
from embervision.ops.feature_pyramid_network import LastLevelP6P7

DATA = Path(__file__).parent / "data"
RECORDED = json.loads(gzip.decompress((DATA / "torchvision_state_dict_keys.json.gz").read_bytes()))
WEIGHTS = json.loads(gzip.decompress((DATA / "torchvision_detection_weights.json.gz").read_bytes()))
NAMES = [
    "fasterrcnn_resnet50_fpn", "fasterrcnn_resnet50_fpn_v2", "fasterrcnn_mobilenet_v3_large_fpn",
    "fasterrcnn_mobilenet_v3_large_320_fpn", "retinanet_resnet50_fpn",
    "retinanet_resnet50_fpn_v2", "maskrcnn_resnet50_fpn", "maskrcnn_resnet50_fpn_v2",
    "keypointrcnn_resnet50_fpn", "fcos_resnet50_fpn", "ssd300_vgg16",
    "ssdlite320_mobilenet_v3_large",
]
# The v1 models' meta counts the backbone with FrozenBatchNorm2d, which has no parameters.
FROZEN_IN_META = {"fasterrcnn_resnet50_fpn", "fasterrcnn_mobilenet_v3_large_fpn",
                  "fasterrcnn_mobilenet_v3_large_320_fpn", "retinanet_resnet50_fpn",
                  "maskrcnn_resnet50_fpn", "keypointrcnn_resnet50_fpn", "fcos_resnet50_fpn"}
SSD300_CHANNELS = [512, 1024, 512, 256, 256, 256]


def _keys(model):
    return [f"{k} {'x'.join(map(str, v.shape))}" for k, v in model.state_dict().items()]


@pytest.fixture
def no_init(monkeypatch):
    """Skips the random initialization (keys and shapes do not depend on it, and drawing
    40M numbers is most of the time of building a detector)."""
    for name in ("uniform_", "normal_", "kaiming_uniform_", "kaiming_normal_",
                 "xavier_uniform_", "trunc_normal_"):
        monkeypatch.setattr(init, name, lambda t, *a, **k: t)
    # SSD300 finds its channels by running VGG on a 300x300 image: known, and slow.
    monkeypatch.setattr(det_utils, "retrieve_out_channels",
                        lambda model, size: SSD300_CHANNELS if size == (300, 300)
                        else _retrieve(model, size))


_retrieve = det_utils.retrieve_out_channels


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")  # uninitialized weights
@pytest.mark.parametrize("name", NAMES)
def test_keys_shapes_and_num_params(name, no_init):
    model = getattr(detection, name)(weights=None, weights_backbone=None)
    assert _keys(model) == RECORDED["models"][name]
    count = sum(p.numel() for p in model.parameters())
    if name in FROZEN_IN_META:
        count -= sum(p.numel() for m in model.backbone.modules() if isinstance(m, nn.BatchNorm2d)
                     and m not in set(model.backbone.fpn.modules()) for p in m.parameters())
    assert count == models.get_model_weights(name).DEFAULT.meta["num_params"]


def test_frozen_backbone_keys(no_init):
    # Pretrained v1 backbones use FrozenBatchNorm2d, as the COCO checkpoints do.
    backbone = resnet_fpn_backbone(backbone_name="resnet50", weights=None)
    model = detection.FasterRCNN(backbone, num_classes=91)
    assert _keys(model) == RECORDED["models"]["fasterrcnn_resnet50_fpn_frozen"]
    trainable = {n.split(".")[2] for n, p in model.named_parameters()
                 if p.requires_grad and n.startswith("backbone.body")}
    assert trainable == {"layer2", "layer3", "layer4"}


def test_weights_urls_and_meta():
    for name in NAMES:
        enum = models.get_model_weights(name)
        recorded = WEIGHTS[enum.__name__]
        assert list(enum.__members__) == list(recorded)
        for member, w in enum.__members__.items():
            assert w.url == recorded[member]["url"]
            assert json.loads(json.dumps(w.meta, default=list)) == recorded[member]["meta"]
            assert type(w.transforms()).__name__ == recorded[member]["transforms"]
    image = ember.randint(0, 256, (3, 5, 4), dtype=ember.uint8)
    out = detection.FasterRCNN_ResNet50_FPN_Weights.DEFAULT.transforms()(image)
    np.testing.assert_allclose(out.numpy(), image.numpy() / 255.0, rtol=1e-6)


def test_registry(no_init):
    assert models.list_models(module=detection) == sorted(NAMES)
    assert set(NAMES) <= set(models.list_models())
    model = models.get_model("fcos_resnet50_fpn", weights=None, weights_backbone=None,
                             num_classes=4)
    assert isinstance(model, detection.FCOS)
    weight = models.get_weight("SSD300_VGG16_Weights.COCO_V1")
    assert weight is detection.SSD300_VGG16_Weights.COCO_V1
    keypoints = models.get_model_weights("keypointrcnn_resnet50_fpn").DEFAULT
    assert keypoints.meta["keypoint_names"][0] == "nose"


def test_builder_rules(no_init):
    with pytest.raises(ValueError, match="num_classes"):
        detection.fasterrcnn_resnet50_fpn(weights="DEFAULT", num_classes=3)
    with pytest.raises(ValueError, match="Trainable backbone layers"):
        detection.fasterrcnn_mobilenet_v3_large_fpn(
            weights=None, weights_backbone=MobileNetWeights.IMAGENET1K_V1,
            trainable_backbone_layers=7)
    with pytest.warns(UserWarning, match="trainable_backbone_layers"):
        detection.retinanet_resnet50_fpn(weights=None, weights_backbone=None,
                                         trainable_backbone_layers=2)
    m = detection.keypointrcnn_resnet50_fpn(weights=None, weights_backbone=None)
    assert m.roi_heads.box_predictor.cls_score.out_features == 2  # no person, person
    assert m.roi_heads.keypoint_predictor.out_channels == 17
    assert m.transform.min_size == (640, 672, 704, 736, 768, 800)
    m = detection.fasterrcnn_mobilenet_v3_large_320_fpn(weights=None, weights_backbone=None)
    assert (m.transform.min_size, m.transform.max_size, m.rpn._pre_nms_top_n["testing"],
            m.rpn.score_thresh) == ((320,), 640, 150, 0.05)
    with pytest.raises(TypeError, match="rpn_anchor_generator"):
        detection.FasterRCNN(m.backbone, 3, rpn_anchor_generator="x")
    with pytest.raises(ValueError, match="num_classes should not be None"):
        detection.FasterRCNN(m.backbone)


MobileNetWeights = models.MobileNet_V3_Large_Weights


def test_pretrained_weights_load_from_the_hub_cache(tmp_path, monkeypatch):
    ember.manual_seed(0)
    ref = detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None)
    url = detection.SSDLite320_MobileNet_V3_Large_Weights.COCO_V1.url
    cache = tmp_path / "hub" / "checkpoints"
    cache.mkdir(parents=True)
    ember.save(ref.state_dict(), cache / url.rsplit("/", 1)[1])
    monkeypatch.setenv("EMBER_HOME", str(tmp_path))
    model = detection.ssdlite320_mobilenet_v3_large(weights="DEFAULT")
    for (k, a), b in zip(ref.state_dict().items(), model.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)


# --- the detectors, on a small backbone ---

def _body(widths=(8, 16, 32, 32)):
    layers = OrderedDict(stem=nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU()))
    previous = 8
    for i, w in enumerate(widths, start=1):
        layers[f"layer{i}"] = nn.Sequential(nn.Conv2d(previous, w, 3, 2, 1), nn.ReLU())
        previous = w
    return nn.Sequential(layers)


def _fpn(returned=(1, 2, 3, 4), extra=None):
    widths = (8, 16, 32, 32)
    return BackboneWithFPN(_body(widths), {f"layer{k}": str(v) for v, k in enumerate(returned)},
                           [widths[k - 1] for k in returned], 32, extra_blocks=extra)


RCNN_SMALL = dict(min_size=64, max_size=96, rpn_pre_nms_top_n_train=200,
                  rpn_pre_nms_top_n_test=100, rpn_post_nms_top_n_train=100,
                  rpn_post_nms_top_n_test=50, box_batch_size_per_image=32,
                  box_score_thresh=0.0, box_detections_per_img=20,
                  box_head=TwoMLPHead(32 * 49, 32), box_predictor=FastRCNNPredictor(32, 3))


def _faster():
    return detection.FasterRCNN(_fpn(), **RCNN_SMALL)


def _mask():
    return detection.MaskRCNN(_fpn(), mask_head=MaskRCNNHeads(32, [16], 1),
                              mask_predictor=MaskRCNNPredictor(16, 8, 3), **RCNN_SMALL)


def _keypoint():
    return detection.KeypointRCNN(_fpn(), keypoint_head=KeypointRCNNHeads(32, [16]),
                                  keypoint_predictor=KeypointRCNNPredictor(16, 5), **RCNN_SMALL)


def _retina():
    return detection.RetinaNet(_fpn((2, 3, 4), LastLevelP6P7(32, 32)), 3, min_size=64,
                               max_size=96, score_thresh=0.0, detections_per_img=20)


def _fcos():
    return detection.FCOS(_fpn((2, 3, 4), LastLevelP6P7(32, 32)), 3, min_size=64, max_size=96,
                          score_thresh=0.0, detections_per_img=20)


class _TwoMaps(nn.Module):
    # No out_channels: SSD finds them by running the backbone.
    def __init__(self):
        super().__init__()
        self.a = nn.Sequential(nn.Conv2d(3, 8, 3, 4, 1), nn.ReLU())
        self.b = nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.ReLU())

    def forward(self, x):
        a = self.a(x)
        return OrderedDict([("0", a), ("1", self.b(a))])


def _ssd():
    return detection.SSD(_TwoMaps(), DefaultBoxGenerator([[2], [2, 3]]), (64, 64), 3,
                         score_thresh=0.0, detections_per_img=20)


SIZES = [(64, 72), (48, 56)]


def _targets(kind=""):
    out = []
    for h, w in SIZES:
        t = {"boxes": ember.tensor([[4.0, 6.0, 30.0, 40.0], [20.0, 8.0, 50.0, 30.0]]),
             "labels": ember.tensor([1, 2])}
        if kind == "mask":
            m = ember.zeros(2, h, w, dtype=ember.uint8)
            m[0, 6:40, 4:30] = 1
            m[1, 8:30, 20:50] = 1
            t["masks"] = m
        if kind == "keypoint":
            kp = ember.rand(2, 5, 3) * 20 + ember.tensor([[[6.0, 8.0, 0.0]], [[22.0, 9.0, 0.0]]])
            kp[..., 2] = 1.0
            t["keypoints"] = kp
        out.append(t)
    return out


DETECTORS = {
    "faster": (_faster, "", ["loss_classifier", "loss_box_reg", "loss_objectness",
                             "loss_rpn_box_reg"], ["boxes", "labels", "scores"]),
    "mask": (_mask, "mask", ["loss_classifier", "loss_box_reg", "loss_mask", "loss_objectness",
                             "loss_rpn_box_reg"], ["boxes", "labels", "scores", "masks"]),
    "keypoint": (_keypoint, "keypoint", ["loss_classifier", "loss_box_reg", "loss_keypoint",
                                         "loss_objectness", "loss_rpn_box_reg"],
                 ["boxes", "labels", "scores", "keypoints", "keypoints_scores"]),
    "retina": (_retina, "", ["classification", "bbox_regression"],
               ["boxes", "scores", "labels"]),
    "fcos": (_fcos, "", ["classification", "bbox_regression", "bbox_ctrness"],
             ["boxes", "scores", "labels"]),
    "ssd": (_ssd, "", ["bbox_regression", "classification"], ["boxes", "scores", "labels"]),
}


@pytest.mark.parametrize("kind", sorted(DETECTORS))
def test_train_losses_backward_and_eval_outputs(kind):
    build, target_kind, loss_keys, out_keys = DETECTORS[kind]
    ember.manual_seed(0)
    model = build()
    images = [ember.rand(3, h, w) for h, w in SIZES]
    model.train()
    losses = model(images, _targets(target_kind))
    assert list(losses) == loss_keys
    for key, value in losses.items():
        assert value.dim() == 0 and math.isfinite(float(value)), key
    sum(losses.values()).backward()
    grads = [p.grad for p in model.parameters() if p.requires_grad]
    assert all(g is not None for g in grads[:4])
    assert any(float(g.abs().sum()) > 0 for g in grads if g is not None)
    model.eval()
    with ember.no_grad():
        outputs = model(images)
    assert len(outputs) == len(images)
    for out, (h, w) in zip(outputs, SIZES):
        assert list(out) == out_keys
        n = out["boxes"].shape[0]
        assert 0 < n <= 20
        assert tuple(out["boxes"].shape) == (n, 4) and out["labels"].dtype == ember.int64
        boxes = out["boxes"].numpy()
        assert (boxes[:, 0::2] >= 0).all() and (boxes[:, 0::2] <= w).all()
        assert (boxes[:, 1::2] >= 0).all() and (boxes[:, 1::2] <= h).all()
        # The R-CNNs and SSD never return the background; RetinaNet and FCOS have none.
        first = 0 if kind in ("retina", "fcos") else 1
        assert set(out["labels"].tolist()) <= set(range(first, 3))
        scores = out["scores"].numpy()
        assert (np.diff(scores) <= 0).all() and (scores >= 0).all() and (scores <= 1).all()
        if "masks" in out:
            assert tuple(out["masks"].shape) == (n, 1, h, w)
        if "keypoints" in out:
            assert tuple(out["keypoints"].shape) == (n, 5, 3)
            assert tuple(out["keypoints_scores"].shape) == (n, 5)


def test_training_needs_valid_targets():
    model = _faster().train()
    images = [ember.rand(3, 40, 40)]
    with pytest.raises(AssertionError, match="targets should not be none"):
        model(images)
    bad = [{"boxes": ember.tensor([[5.0, 5.0, 5.0, 9.0]]), "labels": ember.tensor([1])}]
    with pytest.raises(AssertionError, match="positive height and width"):
        model(images, bad)
    with pytest.raises(TypeError, match="labels must of int64"):
        model(images, [{"boxes": ember.tensor([[1.0, 1.0, 9.0, 9.0]]),
                        "labels": ember.tensor([1], dtype=ember.int32)}])


def test_images_without_objects_train():
    ember.manual_seed(0)
    for model in (_faster(), _retina(), _fcos(), _ssd()):
        model.train()
        empty = {"boxes": ember.zeros(0, 4), "labels": ember.zeros(0, dtype=ember.int64)}
        # Two images: on one, the GroupNorm of FCOS would see a single value at P7 (1x1).
        losses = model([ember.rand(3, 48, 48)] * 2, [empty, empty])
        assert all(math.isfinite(float(v)) for v in losses.values())


def test_mobilenet_builders_forward():
    ember.manual_seed(0)
    model = detection.ssdlite320_mobilenet_v3_large(weights=None, weights_backbone=None,
                                                    num_classes=3, detections_per_img=10).eval()
    with ember.no_grad():
        out = model([ember.rand(3, 40, 50)])
    assert tuple(out[0]["boxes"].shape) == (10, 4)
    assert float(out[0]["boxes"][:, 2].max()) <= 50
    backbone = mobilenet_backbone(backbone_name="mobilenet_v3_large", weights=None, fpn=False,
                                  trainable_layers=6)
    assert backbone.out_channels == 256


# --- the building blocks ---

def test_anchor_generator():
    gen = AnchorGenerator(((16, 32),), ((0.5, 1.0),))
    base = gen.cell_anchors[0].numpy()
    # Half-sizes: w = s / sqrt(r), h = s * sqrt(r), rounded (ratios first, then sizes).
    expected = []
    for r in (0.5, 1.0):
        for s in (16, 32):
            w, h = s / math.sqrt(r), s * math.sqrt(r)
            expected.append(np.round([-w / 2, -h / 2, w / 2, h / 2]))
    np.testing.assert_array_equal(base, np.array(expected, dtype=np.float32))
    images = ImageList(ember.zeros(2, 3, 32, 48), [(32, 48), (30, 40)])
    anchors = gen(images, [ember.zeros(2, 8, 4, 6)])
    assert len(anchors) == 2 and tuple(anchors[0].shape) == (4 * 6 * 4, 4)
    # Position (y=1, x=2) with stride 8: shifted by (16, 8).
    np.testing.assert_array_equal(anchors[0].numpy()[(1 * 6 + 2) * 4], base[0] + [16, 8, 16, 8])
    assert gen.num_anchors_per_location() == [4]


def test_default_box_generator():
    gen = DefaultBoxGenerator([[2]], min_ratio=0.2, max_ratio=0.8)
    assert gen.scales == [0.2, 0.8] and gen.num_anchors_per_location() == [4]
    images = ImageList(ember.zeros(1, 3, 20, 40), [(20, 40)])
    boxes = gen(images, [ember.zeros(1, 4, 2, 4)])[0].numpy()
    assert boxes.shape == (2 * 4 * 4, 4)
    # First position: centre (0.5/4, 0.5/2), square of side 0.2, in pixels.
    cx, cy = 0.125 * 40, 0.25 * 20
    np.testing.assert_allclose(boxes[0], [cx - 0.1 * 40, cy - 0.1 * 20, cx + 0.1 * 40,
                                          cy + 0.1 * 20], rtol=1e-6)
    s = math.sqrt(0.2 * 0.8)
    np.testing.assert_allclose(boxes[1], [cx - s / 2 * 40, cy - s / 2 * 20, cx + s / 2 * 40,
                                          cy + s / 2 * 20], rtol=1e-5)
    with pytest.raises(ValueError, match="same length"):
        DefaultBoxGenerator([[2], [3]], steps=[8])


def test_box_coder_against_numpy():
    rng = np.random.default_rng(0)
    xy = rng.uniform(0, 50, (6, 2))
    ref = np.concatenate([xy, xy + rng.uniform(5, 30, (6, 2))], 1).astype(np.float32)
    gt = ref + rng.uniform(-3, 3, ref.shape).astype(np.float32)
    coder = det_utils.BoxCoder((10.0, 10.0, 5.0, 5.0))
    codes = coder.encode_single(ember.tensor(gt), ember.tensor(ref)).numpy()
    w, h = ref[:, 2] - ref[:, 0], ref[:, 3] - ref[:, 1]
    gw, gh = gt[:, 2] - gt[:, 0], gt[:, 3] - gt[:, 1]
    expected = np.stack([10 * ((gt[:, 0] + gw / 2) - (ref[:, 0] + w / 2)) / w,
                         10 * ((gt[:, 1] + gh / 2) - (ref[:, 1] + h / 2)) / h,
                         5 * np.log(gw / w), 5 * np.log(gh / h)], 1)
    np.testing.assert_allclose(codes, expected, rtol=1e-4, atol=1e-5)
    decoded = coder.decode(ember.tensor(codes), [ember.tensor(ref)])
    assert tuple(decoded.shape) == (6, 1, 4)
    np.testing.assert_allclose(decoded[:, 0].numpy(), gt, rtol=1e-4, atol=1e-3)
    linear = det_utils.BoxLinearCoder(normalize_by_size=True)
    np.testing.assert_allclose(linear.decode(linear.encode(ember.tensor(ref), ember.tensor(gt)),
                                             ember.tensor(ref)).numpy(), gt, rtol=1e-5, atol=1e-4)


def test_matcher_and_sampler():
    quality = ember.tensor([[0.9, 0.4, 0.1, 0.35],
                            [0.2, 0.6, 0.05, 0.2]])
    plain = det_utils.Matcher(0.7, 0.3)(quality)
    assert plain.tolist() == [0, -2, -1, -2]
    low = det_utils.Matcher(0.7, 0.3, allow_low_quality_matches=True)(quality)
    assert low.tolist() == [0, 1, -1, -2]  # box 1 is ground truth 1's best
    assert det_utils.SSDMatcher(0.5)(quality).tolist() == [0, 1, -1, -1]
    with pytest.raises(ValueError, match="No ground-truth boxes"):
        det_utils.Matcher(0.7, 0.3)(ember.zeros(0, 3))
    sampler = det_utils.BalancedPositiveNegativeSampler(4, 0.25)
    labels = ember.tensor([1, 1, 1, 0, 0, 0, 0, 0, -1])
    pos, neg = sampler([labels])
    assert int(pos[0].sum()) == 1 and int(neg[0].sum()) == 3
    assert bool((labels[pos[0] > 0] == 1).all()) and bool((labels[neg[0] > 0] == 0).all())


def test_transform_resize_batch_and_postprocess():
    t = GeneralizedRCNNTransform(64, 96, [0.5, 0.5, 0.5], [0.25, 0.25, 0.25]).eval()
    images = [ember.full((3, 40, 60), 0.75), ember.full((3, 30, 30), 0.75)]
    target = [{"boxes": ember.tensor([[10.0, 4.0, 20.0, 8.0]]), "labels": ember.tensor([1])},
              {"boxes": ember.tensor([[0.0, 0.0, 30.0, 30.0]]), "labels": ember.tensor([1])}]
    batch, out = t(images, target)
    # 40x60: scale min(64/40, 96/60) = 1.6 -> 64x96; 30x30: 64/30 -> 64x64; padded to 32s.
    assert batch.image_sizes == [(64, 96), (64, 64)]
    assert tuple(batch.tensors.shape) == (2, 3, 64, 96)
    np.testing.assert_allclose(batch.tensors[1, :, :, :64].numpy(), 1.0, rtol=1e-6)
    assert float(batch.tensors[1, :, :, 64:].abs().max()) == 0
    np.testing.assert_allclose(out[0]["boxes"].numpy(), [[16.0, 6.4, 32.0, 12.8]], rtol=1e-6)
    assert target[0]["boxes"].tolist() == [[10.0, 4.0, 20.0, 8.0]]  # inputs untouched
    back = t.postprocess([{"boxes": out[0]["boxes"]}], batch.image_sizes[:1], [(40, 60)])
    np.testing.assert_allclose(back[0]["boxes"].numpy(), [[10.0, 4.0, 20.0, 8.0]], rtol=1e-5)
    with pytest.raises(TypeError, match="floating type"):
        t([ember.zeros(3, 8, 8, dtype=ember.uint8)])
    with pytest.raises(ValueError, match="3d tensors"):
        t([ember.zeros(8, 8)])
    fixed = GeneralizedRCNNTransform(300, 300, [0, 0, 0], [1, 1, 1], size_divisible=1,
                                     fixed_size=(30, 20)).eval()
    assert tuple(fixed([ember.rand(3, 50, 70)])[0].tensors.shape) == (1, 3, 20, 30)


def test_paste_masks_and_heatmaps_to_keypoints():
    masks = ember.ones(1, 1, 4, 4)
    pasted = paste_masks_in_image(masks, ember.tensor([[2.0, 3.0, 6.0, 8.0]]), (10, 12))
    assert tuple(pasted.shape) == (1, 1, 10, 12)
    inside = pasted[0, 0].numpy() > 0.5
    ys, xs = np.nonzero(inside)
    # The mask padded to 6x6 (scale 1.5) fills the expanded box [1, 1, 7, 9] (truncated):
    # bilinear from 6 to 7 columns / 9 rows is above 0.5 on columns 1-5 / rows 2-6 of it.
    assert (xs.min(), xs.max(), ys.min(), ys.max()) == (2, 6, 3, 7)
    assert tuple(paste_masks_in_image(ember.zeros(0, 1, 4, 4), ember.zeros(0, 4),
                                      (5, 5)).shape) == (0, 1, 5, 5)
    maps = ember.zeros(1, 2, 8, 8)
    maps[0, 0, 2, 5] = 10.0
    maps[0, 1, 6, 1] = 10.0
    kps, scores = heatmaps_to_keypoints(maps, ember.tensor([[10.0, 20.0, 18.0, 28.0]]))
    # The roi is 8x8: the maps keep their size, a cell maps to its centre.
    np.testing.assert_allclose(kps[0].numpy(), [[15.5, 22.5, 1.0], [11.5, 26.5, 1.0]])
    assert tuple(scores.shape) == (1, 2) and float(scores.min()) > 5


def test_rpn_head_and_backbone_utils():
    head = RPNHead(8, 3, conv_depth=2)
    logits, deltas = head([ember.rand(1, 8, 5, 6)])
    assert tuple(logits[0].shape) == (1, 3, 5, 6) and tuple(deltas[0].shape) == (1, 12, 5, 6)
    old = {k.replace("conv.0.0.", "conv."): v for k, v in RPNHead(8, 3).state_dict().items()}
    RPNHead(8, 3).load_state_dict(old)  # version-1 names load
    body = models.resnet18()
    fpn = _resnet_fpn_extractor(body, 2, returned_layers=[3, 4])
    assert [n for n, p in body.named_parameters() if p.requires_grad][0].startswith("layer3")
    with ember.no_grad():
        out = fpn(ember.rand(1, 3, 64, 64))
    assert {k: tuple(v.shape) for k, v in out.items()} == {
        "0": (1, 256, 4, 4), "1": (1, 256, 2, 2), "pool": (1, 256, 1, 1)}
    with pytest.raises(ValueError, match="range \\[1,4\\]"):
        _resnet_fpn_extractor(models.resnet18(), 2, returned_layers=[0, 1])
    assert det_utils.retrieve_out_channels(_TwoMaps(), (16, 16)) == [8, 16]

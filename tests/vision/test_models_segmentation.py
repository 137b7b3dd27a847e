"""embervision.models.segmentation: state-dict keys and shapes equal torchvision 0.29's
(recorded), parameter counts equal the weights' metadata, output dicts at the input size,
the builders' argument rules and the SemanticSegmentation preset. NumPy only; no download
(``weights_backbone=None``)."""

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

import ember
import embervision.models as models
from embervision.models import segmentation
from embervision.models._utils import IntermediateLayerGetter

RECORDED = json.loads(gzip.decompress(
    (Path(__file__).parent / "data" / "torchvision_state_dict_keys.json.gz").read_bytes()))
NAMES = ["fcn_resnet50", "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large"]


def _build(name, **kwargs):
    kwargs.setdefault("weights_backbone", None)
    if not name.startswith("lraspp"):
        kwargs.setdefault("aux_loss", True)
    return getattr(segmentation, name)(**kwargs)


@pytest.mark.parametrize("name", NAMES)
def test_keys_shapes_and_num_params(name):
    model = _build(name)
    ours = [f"{k} {'x'.join(map(str, v.shape))}" for k, v in model.state_dict().items()]
    assert ours == RECORDED["models"][name]
    count = sum(p.numel() for p in model.parameters())
    assert count == models.get_model_weights(name).DEFAULT.meta["num_params"]


@pytest.mark.parametrize("name", ["deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large"])
def test_outputs_at_the_input_size_and_deterministic(name):
    ember.manual_seed(0)
    model = _build(name, num_classes=3).eval()
    x = ember.randn(2, 3, 40, 36)
    with ember.no_grad():
        a, b = model(x), model(x)
    keys = ["out"] if name.startswith("lraspp") else ["out", "aux"]
    assert list(a) == keys
    for key in keys:
        assert tuple(a[key].shape) == (2, 3, 40, 36)
        np.testing.assert_array_equal(a[key].numpy(), b[key].numpy())


def test_builder_rules():
    assert models.list_models(module=segmentation) == [
        "deeplabv3_mobilenet_v3_large", "deeplabv3_resnet101", "deeplabv3_resnet50",
        "fcn_resnet101", "fcn_resnet50", "lraspp_mobilenet_v3_large"]
    assert "fcn_resnet50" in models.list_models()
    assert "fcn_resnet50" not in models.list_models(module=models)
    m = _build("lraspp_mobilenet_v3_large")
    assert m.classifier.low_classifier.out_channels == 21  # the VOC classes by default
    with pytest.raises(NotImplementedError, match="auxiliary"):
        segmentation.lraspp_mobilenet_v3_large(weights_backbone=None, aux_loss=True)
    weights = segmentation.FCN_ResNet50_Weights.COCO_WITH_VOC_LABELS_V1
    with pytest.raises(ValueError, match="num_classes"):
        segmentation.fcn_resnet50(weights=weights, num_classes=3)
    with pytest.raises(ValueError, match="aux_loss"):
        segmentation.fcn_resnet50(weights=weights, aux_loss=False)
    assert weights.meta["categories"][0] == "__background__"
    assert len(weights.meta["categories"]) == 21
    assert weights.meta["_metrics"] == {"COCO-val2017-VOC-labels": {"miou": 60.5,
                                                                    "pixel_acc": 91.4}}
    no_aux = segmentation.deeplabv3_mobilenet_v3_large(weights_backbone=None)
    assert no_aux.aux_classifier is None and list(no_aux.backbone.return_layers.values()) == [
        "out"]


def test_semantic_segmentation_preset():
    preset = segmentation.DeepLabV3_ResNet50_Weights.DEFAULT.transforms()
    img = ember.randint(0, 256, (3, 60, 80), dtype=ember.uint8)
    out = preset(img)
    assert tuple(out.shape) == (3, 520, 693) and out.dtype == ember.float32
    from embervision.transforms._presets import SemanticSegmentation

    plain = SemanticSegmentation(resize_size=None, mean=(0.0, 0.0, 0.0), std=(1.0, 1.0, 1.0))
    np.testing.assert_allclose(plain(img).numpy(), img.numpy() / 255.0, rtol=1e-6)


def test_intermediate_layer_getter():
    body = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.ReLU(), ember.nn.Linear(4, 2),
                               ember.nn.Linear(2, 2))
    getter = IntermediateLayerGetter(body, {"0": "first", "2": "third"})
    assert list(dict(getter.named_children())) == ["0", "1", "2"]  # stops after the last one
    x = ember.randn(5, 3)
    out = getter(x)
    assert list(out) == ["first", "third"]
    np.testing.assert_allclose(out["third"].detach().numpy(), body[2](body[1](body[0](x)))
                               .detach().numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="return_layers"):
        IntermediateLayerGetter(body, {"9": "x"})

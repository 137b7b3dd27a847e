"""embervision.models: builders, forward shapes, the registry and weight loading offline."""

import hashlib

import numpy as np
import pytest

import ember
import embervision.models as models
from embervision.models._api import load_state_dict_from_url


def test_resnet18_forward_and_backward():
    ember.manual_seed(0)
    m = models.resnet18(num_classes=7)
    x = ember.rand(2, 3, 32, 32)
    out = m(x)
    assert tuple(out.shape) == (2, 7)
    out.sum().backward()
    assert m.conv1.weight.grad is not None and m.fc.bias.grad is not None
    m.eval()
    with ember.no_grad():
        a, b = m(x), m(x)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_bottleneck_widths_and_dilation():
    m = models.resnext50_32x4d(num_classes=3)
    assert m.layer1[0].conv2.groups == 32 and m.layer1[0].conv2.weight.shape[0] == 128
    d = models.resnet50(num_classes=3, replace_stride_with_dilation=[False, True, True])
    assert d.layer4[1].conv2.dilation == (4, 4)
    assert tuple(d.eval()(ember.rand(1, 3, 32, 32)).shape) == (1, 3)
    with pytest.raises(ValueError, match="groups"):
        models.resnext50_32x4d(groups=2)


def test_builders_are_keyword_only_and_check_weights():
    with pytest.raises(TypeError):
        models.resnet18(None)
    with pytest.raises(ValueError, match="num_classes"):
        models.resnet18(weights=models.ResNet18_Weights.DEFAULT, num_classes=10)
    with pytest.raises(TypeError, match="Invalid Weight class"):
        models.resnet18(weights=models.ResNet50_Weights.DEFAULT)
    assert models.ResNet50_Weights.verify("IMAGENET1K_V2") is models.ResNet50_Weights.DEFAULT


def test_registry():
    names = models.list_models()
    assert {"resnet18", "resnet152", "resnext101_64x4d", "wide_resnet101_2"} <= set(names)
    assert models.list_models(include="resnext*") == ["resnext101_32x8d", "resnext101_64x4d",
                                                       "resnext50_32x4d"]
    assert "resnet18" not in models.list_models(exclude="resnet*")
    assert models.get_model_weights("resnet50") is models.ResNet50_Weights
    assert models.get_weight("ResNet50_Weights.IMAGENET1K_V1").url.endswith("0676ba61.pth")
    assert isinstance(models.get_model("resnet18", num_classes=4).fc, ember.nn.Linear)
    meta = models.ResNet18_Weights.DEFAULT.meta
    assert len(meta["categories"]) == 1000 and meta["categories"][0] == "tench"
    preset = models.ResNet50_Weights.IMAGENET1K_V2.transforms()
    assert tuple(preset(ember.randint(0, 256, (3, 300, 400), dtype=ember.uint8)).shape) == (
        3, 224, 224)
    with pytest.raises(ValueError, match="Unknown model"):
        models.get_model("resnet7")


def test_load_state_dict_from_url_checks_the_hash(tmp_path):
    sd = models.resnet18(num_classes=2).state_dict()
    src = tmp_path / "src.pth"
    ember.save(sd, src)
    digest = hashlib.sha256(src.read_bytes()).hexdigest()[:8]
    good = tmp_path / f"resnet18-{digest}.pth"
    src.rename(good)
    cache = tmp_path / "cache"
    loaded = load_state_dict_from_url(good.as_uri(), model_dir=str(cache), progress=False)
    assert list(loaded) == list(sd)
    assert (cache / good.name).exists()
    models.resnet18(num_classes=2).load_state_dict(loaded, strict=True)
    bad = tmp_path / "resnet18-00000000.pth"
    bad.write_bytes(good.read_bytes())
    with pytest.raises(RuntimeError, match="corrupt or incomplete"):
        load_state_dict_from_url(bad.as_uri(), model_dir=str(cache), progress=False)
    assert not (cache / bad.name).exists() and not (cache / (bad.name + ".partial")).exists()


def test_offline_error_says_where_to_put_the_file(tmp_path):
    url = (tmp_path / "missing-12345678.pth").as_uri()
    with pytest.raises(RuntimeError, match="put the file at"):
        load_state_dict_from_url(url, model_dir=str(tmp_path / "c"), progress=False)


@pytest.mark.parametrize("name", ["squeezenet1_1", "mobilenet_v2", "mobilenet_v3_small",
                                  "densenet121", "shufflenet_v2_x0_5"])
def test_small_architectures_forward(name):
    ember.manual_seed(0)
    m = models.get_model(name, num_classes=5).eval()
    with ember.no_grad():
        out = m(ember.rand(1, 3, 32, 32))
    assert tuple(out.shape) == (1, 5) and bool(ember.isfinite(out).all())


def test_densenet_loads_the_old_key_names(monkeypatch):
    from embervision.models import densenet

    m = models.densenet121(num_classes=4)
    old = {}
    for k, v in m.state_dict().items():
        for part in ("norm1", "norm2", "conv1", "conv2"):
            k = k.replace(f".{part}.", f".{part[:-1]}.{part[-1]}.") if "denselayer" in k else k
        old[k] = v
    assert "features.denseblock1.denselayer1.norm.1.weight" in old

    class FakeWeights:
        def get_state_dict(self, progress, check_hash):
            return dict(old)

    fresh = models.densenet121(num_classes=4)
    densenet._load_state_dict(fresh, FakeWeights(), False)
    np.testing.assert_array_equal(fresh.features.denseblock1.denselayer1.conv1.weight.detach().numpy(),
                                  m.features.denseblock1.denselayer1.conv1.weight.detach().numpy())


def test_all_builders_are_registered():
    expected = {"alexnet", "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn",
                "vgg19", "vgg19_bn", "squeezenet1_0", "squeezenet1_1", "mobilenet_v2",
                "mobilenet_v3_large", "mobilenet_v3_small", "densenet121", "densenet161",
                "densenet169", "densenet201"}
    assert expected <= set(models.list_models())
    assert models.VGG16_Weights.IMAGENET1K_FEATURES.meta["categories"] is None

"""embervision.models against torchvision.models: the same state-dict keys and shapes, a
torchvision checkpoint loads with strict=True, and eval outputs agree. Skips without
torchvision."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
tv_models = pytest.importorskip("torchvision.models")

import ember  # noqa: E402
import embervision.models as models  # noqa: E402

ALL = ["resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "resnext50_32x4d",
       "resnext101_32x8d", "resnext101_64x4d", "wide_resnet50_2", "wide_resnet101_2",
       "alexnet", "vgg11", "vgg11_bn", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19",
       "vgg19_bn", "squeezenet1_0", "squeezenet1_1", "mobilenet_v2", "mobilenet_v3_large",
       "mobilenet_v3_small", "densenet121", "densenet161", "densenet169", "densenet201",
       "shufflenet_v2_x0_5", "shufflenet_v2_x1_0", "shufflenet_v2_x1_5", "shufflenet_v2_x2_0"]
FORWARD = ["resnet18", "resnet50", "resnext50_32x4d", "alexnet", "vgg11_bn", "squeezenet1_0",
           "squeezenet1_1", "mobilenet_v2", "mobilenet_v3_large", "mobilenet_v3_small",
           "densenet121", "shufflenet_v2_x1_0"]
# Inputs big enough for every architecture's pooling (AlexNet needs 63x63).
SIZE = {"alexnet": 64, "vgg11_bn": 32}


@pytest.mark.parametrize("name", ALL)
def test_state_dict_keys_and_shapes(name):
    ours = getattr(models, name)().state_dict()
    theirs = getattr(tv_models, name)().state_dict()
    assert list(ours) == list(theirs)
    assert [tuple(v.shape) for v in ours.values()] == [tuple(v.shape) for v in theirs.values()]


@pytest.mark.parametrize("name", FORWARD)
def test_torchvision_checkpoint_loads_and_outputs_agree(name, tmp_path):
    torch.manual_seed(0)
    ref = getattr(tv_models, name)(num_classes=10).eval()
    # Non-trivial batch-norm statistics, so that eval mode is really tested.
    with torch.no_grad():
        for m in ref.modules():
            if isinstance(m, torch.nn.BatchNorm2d) and m.running_mean is not None:
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    torch.save(ref.state_dict(), tmp_path / "w.pth")
    ours = getattr(models, name)(num_classes=10)
    ours.load_state_dict(ember.load(tmp_path / "w.pth"), strict=True)
    ours.eval()
    side = SIZE.get(name, 64)
    x = np.random.default_rng(0).standard_normal((2, 3, side, side)).astype(np.float32)
    with torch.no_grad():
        expected = ref(torch.from_numpy(x)).numpy()
    with ember.no_grad():
        got = ours(ember.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def test_weights_metadata_matches():
    # The first wave's enums (test_vision_models_torchvision.py checks the later families).
    names = sorted({models.get_model_weights(n).__name__ for n in ALL})
    assert len(names) == 32
    for enum_name in names:
        ours, theirs = getattr(models, enum_name), getattr(tv_models, enum_name)
        assert [w.name for w in ours] == [w.name for w in theirs]
        for a, b in zip(ours, theirs):
            assert a.url == b.url
            assert a.meta["categories"] == b.meta["categories"]
            assert str(a.meta["_metrics"]) == str(b.meta["_metrics"])  # nan for VGG16 features
            assert a.meta["min_size"] == b.meta["min_size"]
            assert a.transforms().resize_size == b.transforms().resize_size
            assert a.meta["num_params"] == b.meta["num_params"]
        assert ours.DEFAULT.name == theirs.DEFAULT.name

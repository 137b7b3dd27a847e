"""The model families after the first wave against torchvision 0.29 (EfficientNet, RegNet,
ConvNeXt, MNASNet, GoogLeNet, Inception v3, ViT, Swin, MaxViT): the same state-dict keys and shapes
for every variant, the same weights metadata, a torchvision checkpoint (random init, fixed
seed) loads with strict=True into the smallest variant of each family and eval logits agree.
Runs in the vision_torch nox session; skips without torchvision."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
tv_models = pytest.importorskip("torchvision.models")

import ember  # noqa: E402
import embervision.models as models  # noqa: E402

FAMILIES = {
    "efficientnet": [f"efficientnet_b{i}" for i in range(8)]
    + ["efficientnet_v2_s", "efficientnet_v2_m", "efficientnet_v2_l"],
    "regnet": [f"regnet_y_{s}" for s in ("400mf", "800mf", "1_6gf", "3_2gf", "8gf", "16gf",
                                         "32gf", "128gf")]
    + [f"regnet_x_{s}" for s in ("400mf", "800mf", "1_6gf", "3_2gf", "8gf", "16gf", "32gf")],
    "convnext": ["convnext_tiny", "convnext_small", "convnext_base", "convnext_large"],
    "mnasnet": ["mnasnet0_5", "mnasnet0_75", "mnasnet1_0", "mnasnet1_3"],
    "googlenet": ["googlenet"],
    "inception": ["inception_v3"],
    "vit": ["vit_b_16", "vit_b_32", "vit_l_16", "vit_l_32", "vit_h_14"],
    "swin": ["swin_t", "swin_s", "swin_b", "swin_v2_t", "swin_v2_s", "swin_v2_b"],
    "maxvit": ["maxvit_t"],
}
ALL = [name for names in FAMILIES.values() for name in names]
# name: (extra builder arguments, input side)
FORWARD = {
    "efficientnet_b0": ({}, 64),
    "efficientnet_v2_s": ({}, 64),
    "regnet_y_400mf": ({}, 64),
    "regnet_x_400mf": ({}, 64),
    "convnext_tiny": ({}, 64),
    "mnasnet0_5": ({}, 64),
    "googlenet": ({"init_weights": True}, 64),
    "inception_v3": ({"init_weights": True}, 80),
    "vit_b_32": ({"image_size": 64}, 64),
    "swin_t": ({}, 64),
    "swin_v2_t": ({}, 64),
}


def _build(module, name, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # GoogLeNet/Inception init warning
        return getattr(module, name)(**kwargs)


@pytest.mark.parametrize("name", ALL)
def test_state_dict_keys_and_shapes(name):
    ours = _build(models, name).state_dict()
    theirs = _build(tv_models, name).state_dict()
    assert list(ours) == list(theirs)
    assert [tuple(v.shape) for v in ours.values()] == [tuple(v.shape) for v in theirs.values()]
    # Buffers that are computed, not learned, are computed alike.
    for key, value in theirs.items():
        if key.endswith(("relative_position_index", "relative_coords_table")):
            np.testing.assert_allclose(ours[key].numpy(), value.numpy(), rtol=1e-6, atol=0)


@pytest.mark.parametrize("name", sorted(FORWARD))
def test_torchvision_checkpoint_loads_and_outputs_agree(name, tmp_path):
    kwargs, side = FORWARD[name]
    torch.manual_seed(0)
    ref = _build(tv_models, name, num_classes=10, **kwargs).eval()
    with torch.no_grad():
        for m in ref.modules():  # non-trivial statistics, so that eval mode is really tested
            if isinstance(m, torch.nn.BatchNorm2d) and m.running_mean is not None:
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
        for p in ref.parameters():  # zero-initialized heads and tokens would hide mistakes
            if bool((p == 0).all()):
                p.normal_(0, 0.02)
    torch.save(ref.state_dict(), tmp_path / "w.pth")
    ours = _build(models, name, num_classes=10, **kwargs)
    ours.load_state_dict(ember.load(tmp_path / "w.pth"), strict=True)
    ours.eval()
    x = np.random.default_rng(0).standard_normal((2, 3, side, side)).astype(np.float32)
    with torch.no_grad():
        expected = ref(torch.from_numpy(x)).numpy()
    with ember.no_grad():
        got = ours(ember.from_numpy(x)).numpy()
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * scale)


def _enums():
    seen = []
    for name in ALL:
        enum = models.get_model_weights(name)
        if enum.__name__ not in seen:
            seen.append(enum.__name__)
    return seen


@pytest.mark.parametrize("enum_name", _enums())
def test_weights_metadata_matches(enum_name):
    ours, theirs = getattr(models, enum_name), getattr(tv_models, enum_name)
    assert [w.name for w in ours] == [w.name for w in theirs]
    assert ours.DEFAULT.name == theirs.DEFAULT.name
    for a, b in zip(ours, theirs):
        assert a.url == b.url
        meta_b = {k: v for k, v in b.meta.items() if k != "_docs"}
        assert a.meta == meta_b
        ta, tb = a.transforms(), b.transforms()
        assert ta.crop_size == tb.crop_size and ta.resize_size == tb.resize_size
        assert ta.mean == list(tb.mean) and ta.std == list(tb.std)
        assert ta.interpolation.value == tb.interpolation.value


def test_builders_and_registry_cover_torchvision_classification_models():
    theirs = set(tv_models.list_models(module=tv_models))
    ours = set(models.list_models())
    assert sorted(theirs - ours) == []


def test_maxvit_small_configuration_agrees(tmp_path):
    # MaxViT-T needs 224x224 inputs (7x7 partitions down to the last block): the same classes
    # at a small configuration instead.
    config = {"input_size": (32, 32), "stem_channels": 8, "partition_size": 2,
              "block_channels": [8, 16, 16], "block_layers": [1, 2, 1], "head_dim": 4,
              "stochastic_depth_prob": 0.1, "num_classes": 5}
    torch.manual_seed(0)
    ref = tv_models.MaxVit(**config).eval()
    with torch.no_grad():
        for m in ref.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    torch.save(ref.state_dict(), tmp_path / "w.pth")
    ours = models.MaxVit(**config)
    ours.load_state_dict(ember.load(tmp_path / "w.pth"), strict=True)
    ours.eval()
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype(np.float32)
    with torch.no_grad():
        expected = ref(torch.from_numpy(x)).numpy()
    with ember.no_grad():
        got = ours(ember.from_numpy(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


SEGMENTATION = ["fcn_resnet50", "fcn_resnet101", "deeplabv3_resnet50", "deeplabv3_resnet101",
                "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large"]


def _segmentation_kwargs(name):
    kwargs = {"weights_backbone": None}
    if not name.startswith("lraspp"):
        kwargs["aux_loss"] = True
    return kwargs


@pytest.mark.parametrize("name", SEGMENTATION)
def test_segmentation_keys_and_outputs(name, tmp_path):
    from torchvision.models import segmentation as tv_seg

    from embervision.models import segmentation as seg

    kwargs = _segmentation_kwargs(name)
    torch.manual_seed(0)
    ref = getattr(tv_seg, name)(num_classes=4, **kwargs).eval()
    with torch.no_grad():
        for m in ref.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
    ours = getattr(seg, name)(num_classes=4, **kwargs)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == [
        (k, tuple(v.shape)) for k, v in ref.state_dict().items()]
    torch.save(ref.state_dict(), tmp_path / "w.pth")
    ours.load_state_dict(ember.load(tmp_path / "w.pth"), strict=True)
    ours.eval()
    x = np.random.default_rng(0).standard_normal((1, 3, 48, 40)).astype(np.float32)
    with torch.no_grad():
        expected = ref(torch.from_numpy(x))
    with ember.no_grad():
        got = ours(ember.from_numpy(x))
    assert list(got) == list(expected)
    for key in expected:
        e = expected[key].numpy()
        scale = max(1.0, float(np.abs(e).max()))
        np.testing.assert_allclose(got[key].numpy(), e, rtol=1e-4, atol=1e-4 * scale)


@pytest.mark.parametrize("name", SEGMENTATION)
def test_segmentation_weights_metadata(name):
    from torchvision.models import get_model_weights

    ours, theirs = models.get_model_weights(name), get_model_weights(name)
    assert ours.__name__ == theirs.__name__
    assert [w.name for w in ours] == [w.name for w in theirs]
    for a, b in zip(ours, theirs):
        assert a.url == b.url
        assert a.meta == {k: v for k, v in b.meta.items() if k != "_docs"}
        assert a.transforms().resize_size == b.transforms().resize_size
        assert a.transforms().mean == list(b.transforms().mean)
    assert sorted(models.list_models(module=models.segmentation)) == sorted(
        tv_models.list_models(module=tv_models.segmentation))


@pytest.mark.parametrize("mode, image_size", [("bicubic", 112), ("bilinear", 80),
                                              ("bicubic", 48), ("nearest", 96)])
def test_interpolate_embeddings_matches(mode, image_size):
    from torchvision.models.vision_transformer import interpolate_embeddings as tv_interp

    from embervision.models.vision_transformer import interpolate_embeddings

    torch.manual_seed(0)
    ref_model = tv_models.VisionTransformer(image_size=64, patch_size=8, num_layers=1,
                                            num_heads=2, hidden_dim=16, mlp_dim=32)
    torch.nn.init.normal_(ref_model.encoder.pos_embedding)
    state = ref_model.state_dict()
    ours = {k: ember.from_numpy(v.numpy().copy()) for k, v in state.items()}
    if mode == "nearest":  # align_corners does not go with nearest: both refuse
        with pytest.raises(ValueError, match="align_corners"):
            tv_interp(image_size, 8, dict(state), interpolation_mode=mode)
        with pytest.raises(ValueError, match="align_corners"):
            interpolate_embeddings(image_size, 8, ours, interpolation_mode=mode)
        return
    ref = tv_interp(image_size, 8, state, interpolation_mode=mode, reset_heads=True)
    out = interpolate_embeddings(image_size, 8, ours, interpolation_mode=mode, reset_heads=True)
    assert list(out) == list(ref)
    # float32 interpolation: the sums of 16 weighted samples are rounded in another order
    np.testing.assert_allclose(out["encoder.pos_embedding"].numpy(),
                               ref["encoder.pos_embedding"].numpy(), rtol=1e-5, atol=1e-5)

"""embervision.models, the families after the first wave (EfficientNet, RegNet, ConvNeXt,
MNASNet, GoogLeNet, Inception v3, ViT, Swin, MaxViT): state-dict keys and shapes equal
torchvision 0.29's (recorded in data/torchvision_state_dict_keys.json.gz), parameter counts
equal the weights' metadata, forward shapes, eval determinism and the registry. NumPy only;
the smallest variants, at small resolutions."""

import gzip
import json
import warnings
from pathlib import Path

import numpy as np
import pytest

import ember
import embervision.models as models
from embervision.models.mnasnet import MNASNet, _get_depths, _stem
from embervision.models.swin_transformer import shifted_window_attention
from embervision.models.vision_transformer import MLPBlock, interpolate_embeddings

RECORDED = json.loads(gzip.decompress(
    (Path(__file__).parent / "data" / "torchvision_state_dict_keys.json.gz").read_bytes()))
# The classification models of the record (test_models_segmentation.py has the others).
RECORDED_HERE = sorted(set(RECORDED["models"]) & set(models.list_models(module=models)))

# builder: input side of the forward tests (on the models the fixture builds)
FORWARD = {"efficientnet_b0": 32, "efficientnet_v2_s": 33, "regnet_y_400mf": 32,
           "regnet_x_400mf": 32, "convnext_tiny": 32, "mnasnet0_5": 32, "googlenet": 32,
           "inception_v3": 75, "swin_t": 32, "swin_v2_t": 32}

NEW_MODELS = (
    [f"efficientnet_b{i}" for i in range(8)]
    + ["efficientnet_v2_s", "efficientnet_v2_m", "efficientnet_v2_l"]
    + [f"regnet_y_{s}" for s in ("400mf", "800mf", "1_6gf", "3_2gf", "8gf", "16gf", "32gf",
                                 "128gf")]
    + [f"regnet_x_{s}" for s in ("400mf", "800mf", "1_6gf", "3_2gf", "8gf", "16gf", "32gf")]
    + ["convnext_tiny", "convnext_small", "convnext_base", "convnext_large"]
    + ["mnasnet0_5", "mnasnet0_75", "mnasnet1_0", "mnasnet1_3", "googlenet", "inception_v3"]
    + ["vit_b_16", "vit_b_32", "vit_l_16", "vit_l_32", "vit_h_14"]
    + ["swin_t", "swin_s", "swin_b", "swin_v2_t", "swin_v2_s", "swin_v2_b", "maxvit_t"]
)


def _build(name, **kwargs):
    kwargs.setdefault("init_weights", True) if name in ("googlenet", "inception_v3") else None
    return getattr(models, name)(**kwargs)


@pytest.fixture(scope="module")
def built():
    """Each recorded model built once with its default (ImageNet) head."""
    return {name: _build(name) for name in RECORDED_HERE}


@pytest.mark.parametrize("name", RECORDED_HERE)
def test_state_dict_keys_and_shapes_equal_torchvision(name, built):
    ours = [f"{k} {'x'.join(map(str, v.shape))}" for k, v in built[name].state_dict().items()]
    assert ours == RECORDED["models"][name]


@pytest.mark.parametrize("name", RECORDED_HERE)
def test_num_params_equal_the_weights_meta(name, built):
    model = built[name]
    if name == "googlenet":  # the published weights come without the auxiliary heads
        model = _build(name, aux_logits=False)
    count = sum(p.numel() for p in model.parameters())
    for weights in models.get_model_weights(name):
        if weights.meta["min_size"][0] <= 224 or not name.startswith("vit"):
            assert weights.meta["num_params"] == count, weights
    # The same count from the recorded shapes, less the buffers (BN statistics, Swin's
    # position tables).
    shapes = [line.split(" ") for line in RECORDED["models"][name]]
    stats = ("running_mean", "running_var", "num_batches_tracked", "relative_position_index",
             "relative_coords_table")
    recorded = sum(int(np.prod([int(d) for d in s.split("x")])) if s else 1
                   for k, s in shapes if not k.endswith(stats))
    if name != "googlenet":
        assert recorded == count


@pytest.mark.parametrize("name", sorted(FORWARD))
def test_forward_shape_and_eval_determinism(name, built):
    side = FORWARD[name]
    model = built[name].eval()
    x = ember.randn(2, 3, side, side, generator=ember.Generator().manual_seed(0))
    with ember.no_grad():
        a, b = model(x), model(x)
    assert tuple(a.shape) == (2, 1000)
    assert np.isfinite(a.numpy()).all()
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_vision_transformer_small_forward():
    # ViT-B/32 is built by the fixture; a forward at 224 would be slow, so the same class at a
    # small configuration (and the builder at a small image_size in test_vit_checks...).
    ember.manual_seed(0)
    m = models.VisionTransformer(image_size=32, patch_size=16, num_layers=2, num_heads=2,
                                 hidden_dim=16, mlp_dim=32, num_classes=3,
                                 representation_size=8).eval()
    x = ember.randn(2, 3, 32, 32)
    with ember.no_grad():
        a, b = m(x), m(x)
    assert tuple(a.shape) == (2, 3) and m.seq_length == 5
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_registry_has_every_new_model():
    names = set(models.list_models())
    assert set(NEW_MODELS) <= names
    for name in NEW_MODELS:
        enum = models.get_model_weights(name)
        assert enum.DEFAULT in list(enum)
        for w in enum:
            stem = w.url.rsplit("/", 1)[1]
            assert w.url.startswith("https://download.pytorch.org/models/") and stem.endswith(
                ".pth")
            assert len(w.meta["categories"]) == 1000
            assert set(w.meta["_metrics"]["ImageNet-1K"]) == {"acc@1", "acc@5"}
    assert models.list_models(include="convnext_*") == ["convnext_base", "convnext_large",
                                                          "convnext_small", "convnext_tiny"]
    w = models.get_weight("EfficientNet_V2_L_Weights.IMAGENET1K_V1")
    assert w.transforms().mean == [0.5, 0.5, 0.5] and w.transforms().crop_size == [480]
    assert models.get_weight("ViT_H_14_Weights.IMAGENET1K_SWAG_E2E_V1").meta["min_size"] == (
        518, 518)
    assert "license" in models.RegNet_Y_16GF_Weights.IMAGENET1K_SWAG_E2E_V1.meta


def test_builders_check_weights_without_downloading():
    with pytest.raises(ValueError, match="num_classes"):
        models.efficientnet_b0(weights=models.EfficientNet_B0_Weights.DEFAULT, num_classes=3)
    with pytest.raises(ValueError, match="image_size"):
        models.vit_b_16(weights=models.ViT_B_16_Weights.IMAGENET1K_SWAG_E2E_V1, image_size=224)
    with pytest.raises(TypeError, match="Invalid Weight class"):
        models.convnext_tiny(weights=models.ConvNeXt_Base_Weights.DEFAULT)


def test_googlenet_and_inception_training_outputs_and_transform_input(built):
    g = built["googlenet"].train()
    try:
        out = g(ember.randn(2, 3, 64, 64))
    finally:
        g.eval()
    assert isinstance(out, models.GoogLeNetOutputs)
    assert [tuple(t.shape) for t in out] == [(2, 1000)] * 3
    # Inception's auxiliary head needs the 17x17 grid of a 299x299 input: the head on such a
    # grid, and the training-mode packing, without the full forward.
    inc = built["inception_v3"]
    with ember.no_grad():
        aux = inc.AuxLogits(ember.randn(2, 768, 17, 17))
    assert tuple(aux.shape) == (2, 1000)
    inc.train()
    try:
        out = inc.eager_outputs(ember.zeros(2, 1000), aux)
    finally:
        inc.eval()
    assert isinstance(out, models.InceptionOutputs) and out.aux_logits is aux
    inc = models.Inception3(num_classes=4, init_weights=False, aux_logits=False)
    assert inc.AuxLogits is None and tuple(inc.eval()(ember.randn(1, 3, 75, 75)).shape) == (1, 4)
    with pytest.warns(FutureWarning, match="initialization"):
        models.GoogLeNet(num_classes=2, aux_logits=False)
    # transform_input maps ImageNet normalization to (x - 0.5) / 0.5 of the raw pixels.
    raw = np.random.default_rng(0).random((1, 3, 4, 4)).astype(np.float32)
    mean = np.array([0.485, 0.456, 0.406], np.float32).reshape(1, 3, 1, 1)
    std = np.array([0.229, 0.224, 0.225], np.float32).reshape(1, 3, 1, 1)
    g.transform_input = True
    try:
        got = g._transform_input(ember.from_numpy((raw - mean) / std)).numpy()
    finally:
        g.transform_input = False
    np.testing.assert_allclose(got, (raw - 0.5) / 0.5, rtol=1e-5, atol=1e-6)


def test_mnasnet_loads_a_version_1_checkpoint():
    old = MNASNet(0.5, num_classes=3)
    for idx, layer in enumerate(_stem(_get_depths(0.5), (32, 16))):
        old.layers[idx] = layer
    state = old.state_dict()
    state._metadata[""]["version"] = 1
    new = MNASNet(0.5, num_classes=3)
    assert new.layers[0].out_channels == 16
    with pytest.warns(UserWarning, match="previous version"):
        new.load_state_dict(state)
    assert new.layers[0].out_channels == 32 and new._version == 1
    x = ember.randn(1, 3, 32, 32)
    with ember.no_grad():
        np.testing.assert_allclose(new.eval()(x).numpy(), old.eval()(x).numpy(), rtol=1e-5,
                                   atol=1e-6)
    with pytest.raises(ValueError, match="alpha"):
        MNASNet(0.0)


def test_vit_checks_and_old_mlp_keys():
    with pytest.raises(ValueError, match="indivisible"):
        models.vit_b_32(image_size=40)
    m = models.vit_b_32(image_size=32, num_classes=2)
    with pytest.raises(ValueError, match="Wrong image height"):
        m(ember.randn(1, 3, 64, 32))
    block = MLPBlock(4, 8, 0.0)
    renamed = {k.replace("0.", "linear_1.").replace("3.", "linear_2."): v
               for k, v in block.state_dict().items()}
    fresh = MLPBlock(4, 8, 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fresh.load_state_dict(renamed)  # no version metadata: the version-1 names
    np.testing.assert_array_equal(fresh[0].weight.detach().numpy(),
                                  block[0].weight.detach().numpy())


def _linear_align_corners(grid, size):
    """NumPy: ``grid`` (C, s, s) resized to (C, size, size) by separable linear
    interpolation with the corners' samples kept (align_corners=True)."""
    def along(a, axis):
        n = a.shape[axis]
        pos = np.arange(size) * (n - 1) / (size - 1)
        lo = np.minimum(np.floor(pos).astype(int), n - 2)
        frac = pos - lo
        shape = [1] * a.ndim
        shape[axis] = size
        frac = frac.reshape(shape)
        return np.take(a, lo, axis) * (1 - frac) + np.take(a, lo + 1, axis) * frac
    return along(along(grid, 1), 2)


def _small_vit(image_size, num_classes=3):
    return models.VisionTransformer(image_size=image_size, patch_size=8, num_layers=1,
                                    num_heads=2, hidden_dim=8, mlp_dim=16,
                                    num_classes=num_classes)


def test_interpolate_embeddings_resizes_the_patch_grid():
    ember.manual_seed(0)
    state = _small_vit(32).state_dict()  # a 4 x 4 grid of patches and the class token
    pos = state["encoder.pos_embedding"].detach().numpy().copy()
    assert pos.shape == (1, 17, 8)
    out = interpolate_embeddings(56, 8, state, interpolation_mode="bilinear")
    new = out["encoder.pos_embedding"].numpy()
    assert new.shape == (1, 50, 8) and out is state  # the entry is replaced in place
    np.testing.assert_array_equal(new[0, 0], pos[0, 0])  # the class token's is kept
    grid = pos[0, 1:].T.reshape(8, 4, 4)
    want = _linear_align_corners(grid.astype(np.float64), 7).reshape(8, 49).T
    np.testing.assert_allclose(new[0, 1:], want, rtol=1e-5, atol=1e-6)
    # the resized state loads into the model at the new size, heads and all
    model = _small_vit(56)
    model.load_state_dict(out)
    assert tuple(model.eval()(ember.randn(1, 3, 56, 56)).shape) == (1, 3)
    # bicubic (the default) with align_corners keeps the corner patches
    bicubic = interpolate_embeddings(64, 8, _small_vit(32).state_dict())
    assert bicubic["encoder.pos_embedding"].shape == (1, 65, 8)


def test_interpolate_embeddings_heads_and_errors():
    state = _small_vit(32).state_dict()
    same = interpolate_embeddings(32, 8, state, reset_heads=True)
    assert same is state and "heads.head.weight" in same  # nothing to resize: as it was
    reset = interpolate_embeddings(16, 8, _small_vit(32).state_dict(), reset_heads=True)
    assert not any(k.startswith("heads") for k in reset)
    assert list(reset) == [k for k in state if not k.startswith("heads")]
    model = _small_vit(16, num_classes=5)
    missing, unexpected = model.load_state_dict(reset, strict=False)
    assert sorted(missing) == ["heads.head.bias", "heads.head.weight"] and not unexpected
    with pytest.raises(ValueError, match="Unexpected position embedding shape"):
        interpolate_embeddings(16, 8, {"encoder.pos_embedding": ember.zeros(2, 17, 8)})
    with pytest.raises(ValueError, match="not a perfect square"):
        interpolate_embeddings(16, 8, {"encoder.pos_embedding": ember.zeros(1, 13, 8)})


def test_regnet_block_params_and_efficientnet_stochastic_depth():
    params = models.regnet.BlockParams.from_init_params(depth=16, w_0=48, w_a=27.89, w_m=2.09,
                                                        group_width=8, se_ratio=0.25)
    assert params.depths == [1, 3, 6, 6] and params.widths == [48, 104, 208, 440]
    with pytest.raises(ValueError, match="Invalid RegNet"):
        models.regnet.BlockParams.from_init_params(depth=4, w_0=12, w_a=1.0, w_m=2.0,
                                                   group_width=8)
    m = models.efficientnet_b0(stochastic_depth_prob=0.5)
    probs = [b.stochastic_depth.p for stage in m.features[1:-1] for b in stage]
    assert probs[0] == 0.0 and probs == sorted(probs) and probs[-1] == 0.5 * 15 / 16


def test_window_attention_over_one_window_is_plain_attention():
    rng = np.random.default_rng(0)
    c, heads, side = 8, 2, 5
    x = rng.standard_normal((1, side, side, c)).astype(np.float32)
    wqkv = rng.standard_normal((3 * c, c)).astype(np.float32) * 0.3
    wproj = rng.standard_normal((c, c)).astype(np.float32) * 0.3
    bias = rng.standard_normal((1, heads, side * side, side * side)).astype(np.float32)
    # A window larger than the map: one padded window, and the shift is dropped.
    got = shifted_window_attention(
        ember.from_numpy(x), ember.from_numpy(wqkv), ember.from_numpy(wproj),
        ember.from_numpy(np.pad(bias, ((0, 0), (0, 0), (0, 24), (0, 24)))), [7, 7], heads,
        [3, 3], training=False).numpy()
    # NumPy: the padded window attends to the zero padding too (bias 0 there).
    pad = np.zeros((1, 7, 7, c), np.float32)
    pad[:, :side, :side] = x
    tokens = pad.reshape(49, c)
    q, k, v = (tokens @ wqkv.T).reshape(49, 3, heads, c // heads).transpose(1, 2, 0, 3)
    full_bias = np.zeros((heads, 49, 49), np.float32)
    idx = [i * 7 + j for i in range(side) for j in range(side)]
    logits = q @ k.transpose(0, 2, 1) / np.sqrt(c // heads)
    full_bias += np.pad(bias[0], ((0, 0), (0, 24), (0, 24)))
    logits = logits + full_bias
    attn = np.exp(logits - logits.max(-1, keepdims=True))
    attn /= attn.sum(-1, keepdims=True)
    out = (attn @ v).transpose(1, 0, 2).reshape(49, c) @ wproj.T
    np.testing.assert_allclose(got.reshape(side * side, c), out[idx], rtol=1e-4, atol=1e-5)


def test_swin_relative_position_index_and_v2_bias():
    m = models.swin_v2_t(num_classes=2)
    attn = m.features[1][0].attn
    index = attn.relative_position_index.numpy().reshape(64, 64)
    # Positions (i1, j1) and (i2, j2) of an 8x8 window: index of (i1 - i2, j1 - j2).
    assert index[0, 0] == 7 * 15 + 7 and index[0, 63] == 0 and index[63, 0] == 14 * 15 + 14
    assert tuple(attn.relative_coords_table.shape) == (1, 15, 15, 2)
    np.testing.assert_allclose(attn.relative_coords_table.numpy()[0, 0, 0],
                               [-np.log2(9.0) / 3.0] * 2, rtol=1e-6)
    length = attn.qkv.bias.shape[0] // 3
    assert not attn.qkv.bias.detach().numpy()[length:2 * length].any()


def test_maxvit_small_configuration_forward_and_checks():
    ember.manual_seed(0)
    config = {"stem_channels": 8, "partition_size": 2, "block_channels": [8, 16],
              "block_layers": [1, 1], "head_dim": 4, "stochastic_depth_prob": 0.1}
    m = models.MaxVit(input_size=(16, 16), num_classes=3, **config).eval()
    x = ember.randn(2, 3, 16, 16)
    with ember.no_grad():
        a, b = m(x), m(x)
    assert tuple(a.shape) == (2, 3)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    with pytest.raises(ValueError, match="not divisible by partition size"):
        models.MaxVit(input_size=(20, 20), **config)
    with pytest.raises(ValueError, match="input_size"):
        models.maxvit_t(weights=models.MaxVit_T_Weights.DEFAULT, input_size=(448, 448))

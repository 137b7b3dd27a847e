"""embervision.models.video: state-dict keys and shapes equal torchvision 0.29's (recorded by
tools/record_torchvision_video.py), parameter counts equal the weights' num_params, the
weights enums' URLs and metadata, the registry, pretrained weights through the hub cache and
the offline error, forward shapes and a training step of each architecture (small clips, or
small configurations where the architecture fixes its input size), and the
VideoClassification preset against NumPy. NumPy only; no download."""

import gzip
import json
import math
from pathlib import Path

import numpy as np
import pytest

import ember
import ember.nn.init as init
import embervision.models as models
from ember import nn
from embervision.models import _api, video
from embervision.models.video.mvit import MSBlockConfig, _add_rel_pos, _relative_index
from embervision.models.video.swin_transformer import ShiftedWindowAttention3d
from embervision.transforms._presets import VideoClassification

DATA = Path(__file__).parent / "data"
RECORDED = json.loads(gzip.decompress((DATA / "torchvision_video.json.gz").read_bytes()))
NAMES = ["r3d_18", "mc3_18", "r2plus1d_18", "s3d", "mvit_v1_b", "mvit_v2_s", "swin3d_t",
         "swin3d_s", "swin3d_b"]


def _keys(model):
    return [f"{k} {'x'.join(map(str, v.shape))}" for k, v in model.state_dict().items()]


@pytest.fixture
def no_init(monkeypatch):
    """Skips the random initialization (keys and shapes do not depend on it, and drawing
    tens of millions of numbers is most of the time of building a model)."""
    for name in ("uniform_", "normal_", "kaiming_uniform_", "kaiming_normal_",
                 "xavier_uniform_", "trunc_normal_"):
        monkeypatch.setattr(init, name, lambda t, *a, **k: t)


@pytest.mark.parametrize("name", NAMES)
def test_keys_shapes_and_num_params(name, no_init):
    model = getattr(video, name)(weights=None)
    assert _keys(model) == RECORDED["models"][name]
    count = sum(p.numel() for p in model.parameters())
    assert count == models.get_model_weights(name).DEFAULT.meta["num_params"]


def test_weights_urls_meta_and_presets():
    for name in NAMES:
        enum = models.get_model_weights(name)
        recorded = RECORDED["weights"][enum.__name__]
        assert list(enum.__members__) == list(recorded)
        for member, w in enum.__members__.items():
            assert w.url == recorded[member]["url"]
            assert json.loads(json.dumps(w.meta, default=list)) == recorded[member]["meta"]
            assert len(w.meta["categories"]) == 400
            assert repr(w.transforms()) == recorded[member]["transforms"]


def test_registry(no_init):
    assert models.list_models(module=video) == sorted(NAMES)
    assert set(NAMES) <= set(models.list_models())
    assert not set(NAMES) & set(models.list_models(module=models))
    model = models.get_model("mc3_18", weights=None, num_classes=5)
    assert isinstance(model, video.VideoResNet) and model.fc.out_features == 5
    weight = models.get_weight("Swin3D_B_Weights.KINETICS400_IMAGENET22K_V1")
    assert weight is video.Swin3D_B_Weights.KINETICS400_IMAGENET22K_V1
    assert models.get_model_weights(video.s3d) is video.S3D_Weights
    assert video.R3D_18_Weights.verify("KINETICS400_V1") is video.R3D_18_Weights.DEFAULT


def test_builder_rules(no_init):
    with pytest.raises(TypeError):
        video.r3d_18(None)  # keyword-only
    with pytest.raises(ValueError, match="num_classes"):
        video.s3d(weights="DEFAULT", num_classes=3)
    with pytest.raises(TypeError, match="R3D_18_Weights"):
        video.r3d_18(weights=video.MC3_18_Weights.DEFAULT)
    with pytest.raises(ValueError, match="KINETICS"):
        video.swin3d_t(weights="IMAGENET1K_V1")
    # MViT's builders fix the input size, as torchvision's do.
    with pytest.raises(TypeError, match="spatial_size"):
        video.mvit_v1_b(spatial_size=(112, 112))
    with pytest.raises(ValueError, match="empty"):
        video.MViT((32, 32), 4, [], False, False, False, False)
    m = video.mvit_v2_s(stochastic_depth_prob=0.5, num_classes=7)
    assert m.blocks[-1].stochastic_depth.p == 0.5 and m.head[1].out_features == 7
    assert video.mvit_v1_b().blocks[-1].stochastic_depth.p == pytest.approx(0.2)
    with pytest.raises(ValueError, match="length 3"):
        ShiftedWindowAttention3d(8, [7, 7], [0, 0], 2)


def test_pretrained_weights_load_from_the_hub_cache(tmp_path, monkeypatch):
    ember.manual_seed(0)
    ref = video.s3d(weights=None)
    url = video.S3D_Weights.KINETICS400_V1.url
    cache = tmp_path / "hub" / "checkpoints"
    cache.mkdir(parents=True)
    ember.save(ref.state_dict(), cache / url.rsplit("/", 1)[1])
    monkeypatch.setenv("EMBER_HOME", str(tmp_path))
    model = video.s3d(weights="DEFAULT")
    for (k, a), b in zip(ref.state_dict().items(), model.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)


def test_missing_weights_offline_name_the_file(tmp_path, monkeypatch, no_init):
    def offline(url, path, **kwargs):
        raise OSError("no network")

    monkeypatch.setattr(_api, "download_file", offline)
    monkeypatch.setenv("EMBER_HOME", str(tmp_path))
    expected = tmp_path / "hub" / "checkpoints" / "mc3_18-a90a0ba3.pth"
    with pytest.raises(RuntimeError, match="Offline, put the file at") as info:
        video.mc3_18(weights=video.MC3_18_Weights.KINETICS400_V1)
    assert str(expected) in str(info.value)


# --- forward and training ---

def _train_step(model, clip, num_classes):
    model.train()
    optimizer = ember.optim.SGD(model.parameters(), lr=0.01)
    target = ember.arange(clip.shape[0]) % num_classes
    loss = nn.functional.cross_entropy(model(clip), target)
    optimizer.zero_grad()
    loss.backward()
    for name, p in model.named_parameters():
        assert p.grad is not None, name
        assert np.isfinite(p.grad.numpy()).all(), name
    before = [p.detach().clone() for p in model.parameters()]
    optimizer.step()
    assert any(not np.array_equal(a.numpy(), p.detach().numpy())
               for a, p in zip(before, model.parameters()))
    return float(loss)


@pytest.mark.parametrize("name", ["r3d_18", "mc3_18", "r2plus1d_18"])
def test_video_resnets(name):
    ember.manual_seed(0)
    model = getattr(video, name)(num_classes=3)
    clip = ember.randn(2, 3, 4, 32, 32)
    loss = _train_step(model, clip, 3)
    assert math.isfinite(loss)
    model.eval()
    with ember.no_grad():
        assert model(clip[:1]).shape == (1, 3)


def test_video_resnet_bottleneck_and_zero_init():
    ember.manual_seed(0)
    model = video.VideoResNet(video.resnet.Bottleneck, [video.resnet.Conv2Plus1D] * 4,
                              [1, 1, 1, 1], video.resnet.R2Plus1dStem, num_classes=4,
                              zero_init_residual=True)
    assert model.fc.in_features == 2048
    for m in model.modules():
        if isinstance(m, video.resnet.Bottleneck):
            assert not m.conv3[1].weight.detach().numpy().any()
    model.eval()
    with ember.no_grad():
        assert model(ember.randn(1, 3, 2, 16, 16)).shape == (1, 4)


def test_s3d_at_its_smallest_clip():
    # The final 2 x 7 x 7 pooling needs 14 frames of 224 x 224 (the weights' min sizes).
    ember.manual_seed(0)
    model = video.s3d(num_classes=5).eval()
    meta = video.S3D_Weights.DEFAULT.meta
    clip = ember.randn(1, 3, meta["min_temporal_size"], *meta["min_size"])
    with ember.no_grad():
        assert model(clip).shape == (1, 5)


def _tiny_mvit(v2, spatial=(32, 32), temporal=4, **kwargs):
    setting = [MSBlockConfig(1, 8, 16 if v2 else 8, [3, 3, 3], [3, 3, 3], [1, 2, 2],
                             [1, 2, 2]),
               MSBlockConfig(2, 16 if v2 else 8, 16, [3, 3, 3] if v2 else [], [3, 3, 3],
                             [1, 1, 1] if v2 else [], [1, 1, 1])]
    return video.MViT(spatial, temporal, setting, residual_pool=v2,
                      residual_with_cls_embed=False, rel_pos_embed=v2, proj_after_attn=v2,
                      num_classes=3, **kwargs)


@pytest.mark.parametrize("v2", [False, True])
def test_mvit_small_configuration(v2):
    ember.manual_seed(0)
    model = _tiny_mvit(v2, stochastic_depth_prob=0.2, attention_dropout=0.1)
    if v2:
        # 8 x 8 patches, pooled to 4 x 4: 2 * 4 - 1 offsets of a head's 16 channels
        assert model.blocks[0].attn.rel_pos_h.shape == (7, 16)
        assert model.pos_encoding.spatial_pos is None
    else:
        assert model.pos_encoding.spatial_pos.shape == (64, 8)  # 8 x 8 patches
    clip = ember.randn(2, 3, 4, 32, 32)
    assert math.isfinite(_train_step(model, clip, 3))
    model.eval()
    with ember.no_grad():
        assert model(clip).shape == (2, 3)


def test_mvit_odd_patch_grid_interpolates_the_relative_positions():
    # 9 x 9 patches pooled by 2 give 5 x 5 queries (ceil) where the tables were sized for
    # 9 // 2 = 4: the tables are resampled to the sizes met.
    ember.manual_seed(0)
    model = _tiny_mvit(True, spatial=(36, 36), temporal=2).eval()
    with ember.no_grad():
        assert model(ember.randn(1, 3, 2, 36, 36)).shape == (1, 3)


def test_relative_position_terms_against_numpy():
    rng = np.random.default_rng(0)
    q_thw, k_thw, dim = (2, 3, 4), (2, 3, 2), 5
    b, heads = 1, 2
    nq, nk = 1 + math.prod(q_thw), 1 + math.prod(k_thw)
    q = rng.standard_normal((b, heads, nq, dim)).astype(np.float32)
    attn = rng.standard_normal((b, heads, nq, nk)).astype(np.float32)
    tables = [rng.standard_normal((2 * max(a, c) - 1, dim)).astype(np.float32)
              for a, c in zip(q_thw, k_thw)]
    got = _add_rel_pos(ember.from_numpy(attn), ember.from_numpy(q), q_thw, k_thw,
                       ember.from_numpy(tables[1]), ember.from_numpy(tables[2]),
                       ember.from_numpy(tables[0])).numpy()
    expected = attn.copy()
    qs = [(t, h, w) for t in range(q_thw[0]) for h in range(q_thw[1]) for w in range(q_thw[2])]
    ks = [(t, h, w) for t in range(k_thw[0]) for h in range(k_thw[1]) for w in range(k_thw[2])]

    def position(i, j, axis):
        # query i and key j on a common grid, offset so that the farthest pair is 0
        qn, kn = q_thw[axis], k_thw[axis]
        return int(i * max(kn / qn, 1.0) - (j + 1 - kn) * max(qn / kn, 1.0))

    for i, qp in enumerate(qs):
        for j, kp in enumerate(ks):
            vector = q[0, :, 1 + i]
            expected[0, :, 1 + i, 1 + j] += sum(
                vector @ tables[a][position(qp[a], kp[a], a)] for a in range(3))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    assert _relative_index(3, 2).numpy().tolist() == [[1, 0], [2, 1], [3, 2]]


def _tiny_swin(**kwargs):
    return video.SwinTransformer3d(patch_size=[2, 4, 4], embed_dim=8, depths=[2, 2],
                                   num_heads=[2, 2], window_size=[2, 3, 3], num_classes=3,
                                   **kwargs)


def test_swin3d_small_configuration():
    ember.manual_seed(0)
    model = _tiny_swin(stochastic_depth_prob=0.2, dropout=0.1)
    clip = ember.randn(2, 3, 5, 30, 26)  # padded to whole patches and windows
    assert math.isfinite(_train_step(model, clip, 3))
    model.eval()
    with ember.no_grad():
        assert model(clip).shape == (2, 3)


def test_swin3d_builder_on_a_small_clip():
    # Windows larger than the clip shrink to it and stop shifting.
    ember.manual_seed(0)
    model = video.swin3d_t(num_classes=4).eval()
    with ember.no_grad():
        assert model(ember.randn(1, 3, 4, 32, 32)).shape == (1, 4)


def test_window_attention_without_shift_is_attention_per_window():
    # Plain windows over a clip of exactly one window: ordinary multi-head attention plus
    # the bias.
    ember.manual_seed(0)
    attn = ShiftedWindowAttention3d(8, [2, 2, 2], [0, 0, 0], 2).eval()
    x = ember.randn(1, 2, 2, 2, 8)
    with ember.no_grad():
        got = attn(x).numpy()
    tokens = x.numpy().reshape(8, 8)
    qkv = tokens @ attn.qkv.weight.detach().numpy().T + attn.qkv.bias.detach().numpy()
    q, k, v = (qkv[:, i * 8:(i + 1) * 8].reshape(8, 2, 4).transpose(1, 0, 2) for i in range(3))
    logits = q @ k.transpose(0, 2, 1) / 2.0 + attn.get_relative_position_bias([2, 2, 2])[
        0].detach().numpy()
    weights = np.exp(logits - logits.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    out = (weights @ v).transpose(1, 0, 2).reshape(8, 8)
    out = out @ attn.proj.weight.detach().numpy().T + attn.proj.bias.detach().numpy()
    np.testing.assert_allclose(got.reshape(8, 8), out, rtol=1e-4, atol=1e-5)


# --- the preset ---

def _resize_bilinear(frames, size):
    """NumPy bilinear resize (half-pixel centres, no antialiasing) of ``[..., H, W]``."""
    def weights(n_in, n_out):
        src = np.maximum((np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5, 0.0)
        lo = np.minimum(np.floor(src).astype(int), n_in - 1)
        hi = np.minimum(lo + 1, n_in - 1)
        return lo, hi, (src - lo)[:, None]

    lo, hi, lam = weights(frames.shape[-2], size[0])
    x = frames[..., lo, :] * (1 - lam) + frames[..., hi, :] * lam
    lo, hi, lam = weights(frames.shape[-1], size[1])
    return x[..., lo] * (1 - lam[:, 0]) + x[..., hi] * lam[:, 0]


def _preset_numpy(clip, crop, resize, mean, std):
    h, w = clip.shape[-2:]
    if len(resize) == 1:
        short, long = (h, w) if h <= w else (w, h)
        new_long = int(resize[0] * long / short)
        resize = (resize[0], new_long) if h <= w else (new_long, resize[0])
    x = _resize_bilinear(clip.astype(np.float64), resize)
    if clip.dtype == np.uint8:
        x = np.round(x) / 255.0
    top = int(round((resize[0] - crop[0]) / 2.0))
    left = int(round((resize[1] - crop[1]) / 2.0))
    x = x[..., top:top + crop[0], left:left + crop[1]]
    x = (x - np.array(mean)[:, None, None]) / np.array(std)[:, None, None]
    return np.moveaxis(x, -4, -3).astype(np.float32)  # (..., T, C, H, W) -> (..., C, T, H, W)


@pytest.mark.parametrize("resize", [(9, 13), (10,)])
def test_video_preset_against_numpy(resize):
    rng = np.random.default_rng(0)
    preset = VideoClassification(crop_size=(6, 8), resize_size=resize, mean=(0.4, 0.5, 0.6),
                                 std=(0.2, 0.25, 0.3))
    batch = rng.random((2, 3, 3, 12, 20), dtype=np.float32)
    got = preset(ember.from_numpy(batch))
    assert got.shape == (2, 3, 3, 6, 8) and got.dtype == ember.float32
    np.testing.assert_allclose(got.numpy(), _preset_numpy(batch, (6, 8), resize, preset.mean,
                                                          preset.std), rtol=1e-5, atol=1e-5)
    # one clip of uint8 frames, (T, C, H, W) -> (C, T, h, w); transposed (non-contiguous)
    frames = np.ascontiguousarray(rng.integers(0, 256, (4, 3, 20, 12), dtype=np.uint8)
                                  .transpose(0, 1, 3, 2))
    clip = ember.from_numpy(frames.transpose(0, 1, 3, 2).copy()).transpose(2, 3)
    got = preset(clip).numpy()
    expected = _preset_numpy(frames, (6, 8), resize, preset.mean, preset.std)
    assert got.shape == (3, 4, 6, 8)
    # a pixel at exactly x.5 may round the other way (float32 there, float64 here)
    diff = np.abs(got - expected)
    assert diff.max() <= 1 / 255 / 0.2 + 1e-5 and (diff > 1e-5).mean() < 0.01


def test_video_preset_of_the_weights():
    preset = video.R2Plus1D_18_Weights.DEFAULT.transforms()
    assert (preset.crop_size, preset.resize_size) == ([112, 112], [128, 171])
    assert preset.mean == [0.43216, 0.394666, 0.37645]
    out = preset(ember.zeros(2, 3, 120, 160, dtype=ember.uint8))
    assert out.shape == (3, 2, 112, 112)  # one clip of two frames
    np.testing.assert_allclose(out.numpy()[0], -0.43216 / 0.22803, rtol=1e-6)
    assert "(..., C, T, H, W)" in preset.describe()

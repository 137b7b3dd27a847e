"""embervision.models.video against torchvision 0.29: a checkpoint made by torchvision's
builder (random init with a fixed seed, then wider weights and non-trivial norm statistics)
loads with strict=True into embervision's builder, and the eval-mode logits agree to float32
tolerance, on the smallest clips each architecture takes (the ResNets and Video Swin any size;
S3D 14 x 224 x 224; MViT exactly 16 x 224 x 224); the VideoClassification presets; the public
names and signatures of torchvision.models.video. Runs in the vision_torch nox session; skips
without torchvision."""

import importlib
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
tv_video = pytest.importorskip("torchvision.models.video")

from _signatures import assert_public_names_match  # noqa: E402

import ember  # noqa: E402
import embervision.models as models  # noqa: E402
from embervision.models import video  # noqa: E402

# name: the clip (N, C, T, H, W)
CLIPS = {
    "r3d_18": (2, 3, 4, 32, 40),
    "mc3_18": (2, 3, 4, 32, 40),
    "r2plus1d_18": (2, 3, 4, 32, 40),
    "s3d": (1, 3, 14, 224, 224),
    "mvit_v1_b": (1, 3, 16, 224, 224),
    "mvit_v2_s": (1, 3, 16, 224, 224),
    # 9 x 16 x 16 patches: the 8 x 7 x 7 windows pad, and shift along every side
    "swin3d_t": (1, 3, 18, 64, 64),
    "swin3d_s": (1, 3, 18, 64, 64),
    "swin3d_b": (1, 3, 18, 64, 64),
}


def _randomize(model):
    # Weights wide enough that every layer matters in the logits, and norms that are not the
    # identity.
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.Linear):
                m.weight.normal_(0, 1.0 / math.sqrt(m.in_features))
                if m.bias is not None:
                    m.bias.uniform_(-0.2, 0.2)
            elif isinstance(m, torch.nn.BatchNorm3d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.1, 0.1)
            elif isinstance(m, torch.nn.LayerNorm):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.1, 0.1)


@pytest.mark.parametrize("name", list(CLIPS))
def test_logits_agree(name, tmp_path):
    torch.manual_seed(0)
    ref = getattr(tv_video, name)(weights=None)
    _randomize(ref)
    ref.eval()
    torch.save(ref.state_dict(), tmp_path / "w.pth")
    ours = getattr(video, name)(weights=None)
    ours.load_state_dict(ember.load(tmp_path / "w.pth"), strict=True)
    ours.eval()
    clip = np.random.default_rng(0).standard_normal(CLIPS[name], dtype=np.float32)
    with torch.no_grad():
        expected = ref(torch.from_numpy(clip)).numpy()
    with ember.no_grad():
        got = ours(ember.from_numpy(clip)).numpy()
    assert got.shape == expected.shape == (CLIPS[name][0], 400)
    scale = max(1.0, float(np.abs(expected).max()))
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4 * scale)


def test_a_mvit_image_is_one_frame(tmp_path):
    # MViT takes (N, C, H, W) as a one-frame clip.
    torch.manual_seed(0)
    config = [tv_video.mvit.MSBlockConfig(2, 16, 32, [3, 3, 3], [3, 3, 3], [1, 2, 2],
                                          [1, 2, 2]),
              tv_video.mvit.MSBlockConfig(2, 32, 32, [3, 3, 3], [3, 3, 3], [1, 1, 1],
                                          [1, 1, 1])]
    kwargs = dict(spatial_size=(32, 32), temporal_size=1, residual_pool=True,
                  residual_with_cls_embed=False, rel_pos_embed=True, proj_after_attn=True,
                  num_classes=5, patch_embed_kernel=(1, 7, 7), patch_embed_stride=(1, 4, 4),
                  patch_embed_padding=(0, 3, 3))
    ref = tv_video.MViT(block_setting=config, **kwargs)
    _randomize(ref)
    ref.eval()
    torch.save(ref.state_dict(), tmp_path / "w.pth")
    ours = video.MViT(block_setting=[video.mvit.MSBlockConfig(*vars(c).values())
                                     for c in config], **kwargs)
    ours.load_state_dict(ember.load(tmp_path / "w.pth"), strict=True)
    ours.eval()
    image = np.random.default_rng(1).standard_normal((2, 3, 32, 32), dtype=np.float32)
    with torch.no_grad():
        expected = ref(torch.from_numpy(image)).numpy()
    with ember.no_grad():
        got = ours(ember.from_numpy(image)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


def _tiny(lib, kind):
    """Small training-mode models (no dropout, no stochastic depth) of each family."""
    mod = tv_video if lib == "torch" else video
    if kind == "r2plus1d":
        return mod.r2plus1d_18(num_classes=3)
    if kind == "mvit":
        cfg = mod.mvit.MSBlockConfig
        setting = [cfg(1, 8, 16, [3, 3, 3], [3, 3, 3], [1, 2, 2], [1, 2, 2]),
                   cfg(2, 16, 16, [3, 3, 3], [3, 3, 3], [1, 1, 1], [1, 1, 1])]
        return mod.MViT((32, 32), 4, setting, residual_pool=True, residual_with_cls_embed=False,
                        rel_pos_embed=True, proj_after_attn=True, dropout=0.0, num_classes=3)
    return mod.SwinTransformer3d(patch_size=[2, 4, 4], embed_dim=8, depths=[2, 2],
                                 num_heads=[2, 2], window_size=[2, 3, 3],
                                 stochastic_depth_prob=0.0, num_classes=3)


# kind: the clip; the Swin's is padded to whole patches and windows
TINY_CLIPS = {"r2plus1d": (2, 3, 5, 30, 26), "mvit": (2, 3, 4, 32, 32),
              "swin3d": (2, 3, 5, 30, 26)}


# R(2+1)D's training-mode batch norms see 2 clips of 1-4 positions in the last stages, so
# their gradients are ill-conditioned in float32: torch's own float32 gradients are up to 3%
# (relative to each gradient's largest) away from its float64 ones, ember's up to 7% (both
# measured here). Its gradients are compared with both libraries in float64, where ember's
# are within 1e-12 of torch's; the other two in float32 against torch in float64.
FLOAT64_KINDS = {"r2plus1d"}


@pytest.mark.parametrize("kind", list(TINY_CLIPS))
def test_training_loss_and_gradients_agree(kind, tmp_path):
    # Training mode (batch statistics in the batch norms): the loss and every gradient.
    torch.manual_seed(0)
    ref = _tiny("torch", kind)
    _randomize(ref)
    torch.save(ref.state_dict(), tmp_path / "w.pth")
    ours = _tiny("ember", kind)
    ours.load_state_dict(ember.load(tmp_path / "w.pth"), strict=True)
    ref.double().train()
    ours.train()
    wide = kind in FLOAT64_KINDS
    if wide:
        ours.double()
    clip = np.random.default_rng(0).standard_normal(TINY_CLIPS[kind], dtype=np.float32)
    target = np.array([0, 2])
    loss_t = torch.nn.functional.cross_entropy(ref(torch.from_numpy(clip).double()),
                                               torch.from_numpy(target))
    loss_t.backward()
    loss_e = ember.nn.functional.cross_entropy(
        ours(ember.from_numpy(clip.astype(np.float64) if wide else clip)),
        ember.from_numpy(target))
    loss_e.backward()
    np.testing.assert_allclose(loss_e.item(), loss_t.item(), rtol=1e-10 if wide else 1e-4)
    theirs = dict(ref.named_parameters())
    for name, p in ours.named_parameters():
        expected = theirs[name].grad.numpy()
        scale = float(np.abs(expected).max())
        np.testing.assert_allclose(p.grad.numpy(), expected, rtol=0,
                                   atol=(1e-10 if wide else 1e-3) * scale + 1e-7,
                                   err_msg=name)


@pytest.mark.parametrize("name", list(CLIPS))
def test_weights_and_presets_agree(name):
    import torchvision

    theirs = torchvision.models.get_model_weights(name)
    ours = models.get_model_weights(name)
    assert list(ours.__members__) == list(theirs.__members__)
    rng = np.random.default_rng(0)
    single = rng.integers(0, 256, (3, 3, 150, 200), dtype=np.uint8)
    batch = rng.random((2, 2, 3, 130, 120), dtype=np.float32)
    for member, w in theirs.__members__.items():
        ours_w = ours[member]
        assert ours_w.url == w.url
        assert ours_w.meta == w.meta
        assert repr(ours_w.transforms()) == repr(w.transforms())
        preset = ours_w.transforms()
        expected = w.transforms()(torch.from_numpy(batch)).numpy()
        got = preset(ember.from_numpy(batch)).numpy()
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
        # uint8 frames are resized in float and rounded back: the two bilinear kernels differ
        # in the last bits (ember's weights in float64), which moves a pixel that lands on
        # x.5 by one level now and then.
        expected = w.transforms()(torch.from_numpy(single)).numpy()
        got = preset(ember.from_numpy(single)).numpy()
        assert got.shape == expected.shape
        level = 1 / 255 / min(preset.std)
        diff = np.abs(got - expected)
        assert diff.max() <= level + 1e-5
        assert (diff > 1e-5).mean() < 1e-4


@pytest.mark.parametrize("module", ["resnet", "s3d", "mvit", "swin_transformer"])
def test_public_names_and_signatures_match(module):
    theirs = importlib.import_module(f"torchvision.models.video.{module}")
    ours = importlib.import_module(f"embervision.models.video.{module}")
    assert ours.__all__ == theirs.__all__
    assert_public_names_match(theirs, ours)
    assert sorted(models.list_models(module=video)) == sorted(
        __import__("torchvision").models.list_models(module=tv_video))

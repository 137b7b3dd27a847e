"""embervision.transforms: closed forms, PIL/tensor agreement, batching and the classes."""

import numpy as np
import pytest
from PIL import Image

import ember
import embervision.transforms as T
import embervision.transforms.functional as F

RNG = np.random.default_rng(1)
ARR = RNG.integers(0, 256, (3, 12, 16), dtype=np.uint8)
IMG = ember.from_numpy(ARR.copy())
PIL_IMG = Image.fromarray(ARR.transpose(1, 2, 0))


def test_functional_all_matches_torchvision_names():
    names = {"get_dimensions", "get_image_size", "get_image_num_channels", "to_tensor",
             "pil_to_tensor", "convert_image_dtype", "to_pil_image", "normalize", "resize",
             "pad", "crop", "center_crop", "resized_crop", "hflip", "perspective", "vflip",
             "five_crop", "ten_crop", "adjust_brightness", "adjust_contrast",
             "adjust_saturation", "adjust_hue", "adjust_gamma", "rotate", "affine",
             "to_grayscale", "rgb_to_grayscale", "erase", "gaussian_blur", "invert",
             "posterize", "solarize", "adjust_sharpness", "autocontrast", "equalize",
             "elastic_transform"}
    assert names <= set(F.__all__)


def test_dimensions_and_conversions():
    assert F.get_dimensions(IMG) == [3, 12, 16] == F.get_dimensions(PIL_IMG)
    assert F.get_image_size(PIL_IMG) == [16, 12]
    t = F.to_tensor(PIL_IMG)
    assert t.dtype == ember.float32
    np.testing.assert_allclose(t.numpy(), ARR / 255.0, atol=1e-7)
    np.testing.assert_array_equal(F.pil_to_tensor(PIL_IMG).numpy(), ARR)
    np.testing.assert_array_equal(np.asarray(F.to_pil_image(IMG)), ARR.transpose(1, 2, 0))
    assert F.to_pil_image(IMG[:1]).mode == "L"
    assert F.to_tensor(ARR.transpose(1, 2, 0).astype(np.float64)).dtype == ember.float64
    with pytest.raises(TypeError):
        F.to_tensor([1, 2])
    with pytest.raises(ValueError, match="channels"):
        F.to_pil_image(ember.zeros(5, 2, 2))


def test_convert_image_dtype_closed_form():
    x = ember.tensor([[[0.0, 0.5, 1.0]]])
    np.testing.assert_array_equal(F.convert_image_dtype(x, ember.uint8).numpy(), [[[0, 127, 255]]])
    u = ember.tensor([[[0, 128, 255]]], dtype=ember.uint8)
    np.testing.assert_allclose(F.convert_image_dtype(u).numpy(), [[[0, 128 / 255, 1.0]]])
    with pytest.raises(RuntimeError, match="safely"):
        F.convert_image_dtype(x, ember.int64)


def test_flips_crops_and_batches():
    batch = ember.stack([IMG, IMG.flip(-1)])
    np.testing.assert_array_equal(F.hflip(batch).numpy()[0], ARR[:, :, ::-1])
    np.testing.assert_array_equal(F.vflip(IMG).numpy(), ARR[:, ::-1])
    np.testing.assert_array_equal(F.crop(IMG, 2, 3, 4, 5).numpy(), ARR[:, 2:6, 3:8])
    np.testing.assert_array_equal(np.asarray(F.crop(PIL_IMG, 2, 3, 4, 5)),
                                  ARR[:, 2:6, 3:8].transpose(1, 2, 0))
    assert tuple(F.center_crop(batch, 20).shape) == (2, 3, 20, 20)
    assert tuple(F.resize(batch, [6, 8]).shape) == (2, 3, 6, 8)
    five = F.five_crop(IMG, 4)
    np.testing.assert_array_equal(five[3].numpy(), ARR[:, -4:, -4:])
    with pytest.raises(ValueError, match="bigger"):
        F.five_crop(IMG, 13)


def test_pad_modes_match_numpy():
    for mode, np_mode in [("reflect", "reflect"), ("edge", "edge"), ("symmetric", "symmetric")]:
        out = F.pad(IMG, [1, 2, 3, 4], padding_mode=mode).numpy()
        np.testing.assert_array_equal(out, np.pad(ARR, [(0, 0), (2, 4), (1, 3)], mode=np_mode))
    np.testing.assert_array_equal(F.pad(IMG, 1, fill=9).numpy(),
                                  np.pad(ARR, [(0, 0), (1, 1), (1, 1)], constant_values=9))
    assert tuple(F.pad(IMG, [-1, -2]).shape) == (3, 8, 14)
    with pytest.raises(ValueError, match="Padding mode"):
        F.pad(IMG, 1, padding_mode="wrap")


def test_resize_sizes():
    assert F.get_dimensions(F.resize(IMG, 6)) == [3, 6, 8]
    assert F.get_dimensions(F.resize(IMG, 6, max_size=7)) == [3, 5, 7]
    assert F.resize(PIL_IMG, 6).size == (8, 6)
    assert F.resize(IMG, None, max_size=8).shape[-1] == 8
    with pytest.raises(ValueError, match="max_size"):
        F.resize(IMG, 6, max_size=5)
    with pytest.raises(ValueError):
        F.resize(IMG, [1, 2, 3])


def test_rotate_90_is_exact():
    sq = IMG[:, :12, :12]
    np.testing.assert_array_equal(F.rotate(sq, 90.0).numpy(), np.rot90(sq.numpy(), 1, (1, 2)))
    assert F.get_dimensions(F.rotate(IMG, 90.0, expand=True)) == [3, 16, 12]


def test_color_closed_forms():
    x = IMG.float() / 255
    np.testing.assert_allclose(F.adjust_brightness(x, 0.5).numpy(), ARR / 255 * 0.5, atol=1e-6)
    gray = 0.2989 * ARR[0] + 0.587 * ARR[1] + 0.114 * ARR[2]
    np.testing.assert_allclose(F.rgb_to_grayscale(x).numpy()[0], gray / 255, atol=1e-5)
    np.testing.assert_allclose(F.adjust_contrast(x, 0.0).numpy(),
                               np.full(ARR.shape, (gray / 255).mean()), atol=1e-5)
    np.testing.assert_array_equal(F.invert(IMG).numpy(), 255 - ARR)
    np.testing.assert_array_equal(F.posterize(IMG, 2).numpy(), ARR & 0xC0)
    expected = np.where(ARR >= 100, 255 - ARR, ARR)
    np.testing.assert_array_equal(F.solarize(IMG, 100).numpy(), expected)
    np.testing.assert_allclose(F.adjust_gamma(x, 2.0).numpy(), (ARR / 255) ** 2, atol=1e-6)
    np.testing.assert_allclose(F.adjust_hue(x, 0.0).numpy(), x.numpy(), atol=1e-5)
    auto = F.autocontrast(IMG).numpy()
    assert (auto.reshape(3, -1).min(1) == 0).all() and (auto.reshape(3, -1).max(1) == 255).all()
    eq = F.equalize(ember.stack([IMG, IMG])).numpy()
    np.testing.assert_array_equal(eq[0], eq[1])
    with pytest.raises(ValueError, match="hue_factor"):
        F.adjust_hue(x, 0.6)
    with pytest.raises(TypeError, match="uint8"):
        F.posterize(x, 2)
    with pytest.raises(ValueError, match="non-negative"):
        F.adjust_brightness(x, -1)


def test_gaussian_blur_kernel_sums_to_one():
    const = ember.full((1, 3, 9, 9), 0.25)
    np.testing.assert_allclose(F.gaussian_blur(const, 5, 1.3).numpy(), 0.25, atol=1e-6)
    with pytest.raises(ValueError, match="odd"):
        F.gaussian_blur(const, 4)


def test_normalize_and_erase():
    x = IMG.float() / 255
    out = F.normalize(x, [0.5, 0.5, 0.5], [0.25, 0.25, 0.25])
    np.testing.assert_allclose(out.numpy(), (ARR / 255 - 0.5) / 0.25, atol=1e-5)
    with pytest.raises(TypeError, match="float"):
        F.normalize(IMG, [0.5] * 3, [1.0] * 3)
    with pytest.raises(ValueError, match="std evaluated to zero"):
        F.normalize(x, [0.5] * 3, [0.0] * 3)
    erased = F.erase(x, 1, 2, 3, 4, 0.0)
    assert float(erased[:, 1:4, 2:6].abs().sum()) == 0.0
    assert float(x[:, 1:4, 2:6].abs().sum()) > 0


def test_random_transforms_are_seeded():
    pipeline = T.Compose([
        T.RandomResizedCrop(8), T.RandomHorizontalFlip(), T.ColorJitter(0.4, 0.4, 0.4, 0.1),
        T.RandomRotation(10), T.RandomAffine(5, translate=(0.1, 0.1), scale=(0.9, 1.1), shear=3),
        T.RandomPerspective(p=1.0), T.ConvertImageDtype(ember.float32),
        T.Normalize([0.5] * 3, [0.5] * 3), T.RandomErasing(p=1.0, value="random"),
    ])
    ember.manual_seed(3)
    a = pipeline(IMG)
    ember.manual_seed(3)
    b = pipeline(IMG)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert tuple(a.shape) == (3, 8, 8)


def test_classes_on_pil_and_tensor():
    ember.manual_seed(0)
    classes = [
        T.Resize(6), T.CenterCrop(5), T.RandomCrop(10, padding=2, pad_if_needed=True),
        T.Pad(2, padding_mode="symmetric"), T.RandomVerticalFlip(1.0), T.Grayscale(3),
        T.RandomGrayscale(1.0), T.GaussianBlur(3), T.RandomInvert(1.0), T.RandomPosterize(3, 1.0),
        T.RandomSolarize(128, 1.0), T.RandomAdjustSharpness(2, 1.0), T.RandomAutocontrast(1.0),
        T.RandomEqualize(1.0), T.ElasticTransform(alpha=5.0, sigma=1.0),
        T.RandomApply([T.RandomHorizontalFlip(1.0)], p=1.0),
        T.RandomChoice([T.RandomInvert(1.0), T.RandomVerticalFlip(1.0)]),
        T.RandomOrder([T.RandomInvert(1.0), T.RandomVerticalFlip(1.0)]),
        T.Lambda(lambda im: im),
    ]
    for t in classes:
        out_t = t(IMG)
        out_p = t(PIL_IMG)
        assert isinstance(out_t, ember.Tensor) and isinstance(out_p, Image.Image), t
        assert F.get_dimensions(out_t)[1:] == F.get_dimensions(out_p)[1:], t
    inv = T.RandomInvert(1.0)
    np.testing.assert_array_equal(np.asarray(inv(PIL_IMG)), (255 - ARR).transpose(1, 2, 0))
    assert len(T.TenCrop(4)(IMG)) == 10 and len(T.FiveCrop(4)(PIL_IMG)) == 5
    assert isinstance(T.ToPILImage()(T.ToTensor()(PIL_IMG)), Image.Image)
    assert T.PILToTensor()(PIL_IMG).dtype == ember.uint8
    with pytest.raises(TypeError, match="callable"):
        T.Lambda(3)


def test_linear_transformation_identity():
    x = ember.rand(2, 1, 2, 2)
    t = T.LinearTransformation(ember.eye(4), ember.zeros(4))
    np.testing.assert_allclose(t(x).numpy(), x.numpy())
    with pytest.raises(ValueError, match="square"):
        T.LinearTransformation(ember.zeros(2, 3), ember.zeros(2))


def test_random_resized_crop_params_in_range():
    ember.manual_seed(5)
    for _ in range(20):
        i, j, h, w = T.RandomResizedCrop.get_params(IMG, (0.08, 1.0), (3 / 4, 4 / 3))
        assert 0 <= i and i + h <= 12 and 0 <= j and j + w <= 16 and h > 0 and w > 0


def test_zero_size_and_noncontiguous_inputs():
    empty = ember.zeros(0, 3, 8, 8)
    assert tuple(F.resize(empty, [4, 4]).shape) == (0, 3, 4, 4)
    assert tuple(F.hflip(empty).shape) == (0, 3, 8, 8)
    strided = IMG.transpose(-1, -2)
    np.testing.assert_array_equal(F.hflip(strided).numpy(), ARR.transpose(0, 2, 1)[:, :, ::-1])


def test_autoaugment_family():
    from embervision.transforms.autoaugment import _apply_op

    u8 = ember.stack([IMG, IMG])
    for policy in T.AutoAugmentPolicy:
        aug = T.AutoAugment(policy)
        assert len(aug.policies) == 25
        ember.manual_seed(1)
        a = aug(u8)
        ember.manual_seed(1)
        b = aug(u8)
        np.testing.assert_array_equal(a.numpy(), b.numpy())
        assert a.dtype == ember.uint8 and tuple(a.shape) == tuple(u8.shape)
        assert isinstance(aug(PIL_IMG), Image.Image)
    for t in (T.RandAugment(), T.TrivialAugmentWide(), T.RandAugment(num_ops=3, magnitude=30)):
        ember.manual_seed(2)
        out = t(u8)
        assert out.dtype == ember.uint8 and tuple(out.shape) == tuple(u8.shape)
        assert t(PIL_IMG).size == PIL_IMG.size
    # An op at magnitude 0 is the identity, and Invert is 255 - x.
    np.testing.assert_array_equal(_apply_op(IMG, "Rotate", 0.0, T.InterpolationMode.NEAREST,
                                            None).numpy(), ARR)
    np.testing.assert_array_equal(_apply_op(IMG, "Invert", 0.0, T.InterpolationMode.NEAREST,
                                            None).numpy(), 255 - ARR)
    with pytest.raises(ValueError, match="not recognized"):
        _apply_op(IMG, "Blur", 1.0, T.InterpolationMode.NEAREST, None)


def test_augmix(monkeypatch):
    from embervision.transforms import autoaugment

    u8 = ember.stack([IMG, IMG])
    aug = T.AugMix()
    ember.manual_seed(4)
    a = aug(u8)
    ember.manual_seed(4)
    b = aug(u8)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert a.dtype == ember.uint8 and tuple(a.shape) == tuple(u8.shape)
    assert isinstance(T.AugMix(all_ops=False, chain_depth=2)(PIL_IMG), Image.Image)
    # With every operation the identity, the Dirichlet weights sum to one: the image comes back.
    monkeypatch.setattr(autoaugment, "_apply_op", lambda img, *args: img)
    x = IMG.float() / 255
    np.testing.assert_allclose(T.AugMix(mixture_width=4)(x).numpy(), x.numpy(), atol=1e-6)
    with pytest.raises(ValueError, match="severity"):
        T.AugMix(severity=11)

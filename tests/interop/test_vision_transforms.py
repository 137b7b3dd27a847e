"""embervision.transforms.functional against torchvision's on the same PIL images and tensors.

Skips without torchvision (it is not in CI's torch 2.13 environment; see `nox -s vision_torch`).
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
tv_F = pytest.importorskip("torchvision.transforms.functional")
tv_T = pytest.importorskip("torchvision.transforms")

from PIL import Image  # noqa: E402

import ember  # noqa: E402
import embervision.transforms.functional as F  # noqa: E402
from embervision.transforms import InterpolationMode  # noqa: E402

RNG = np.random.default_rng(0)
ARR = RNG.integers(0, 256, (2, 3, 17, 23), dtype=np.uint8)
PIL_IMG = Image.fromarray(ARR[0].transpose(1, 2, 0))


def _pair(dtype):
    if dtype == "uint8":
        return ember.from_numpy(ARR.copy()), torch.from_numpy(ARR.copy())
    f = ARR.astype(np.float32) / 255
    return ember.from_numpy(f.copy()), torch.from_numpy(f.copy())


def _close(ours, theirs, atol, dtype):
    a = ours.numpy().astype(np.float64)
    b = theirs.numpy().astype(np.float64)
    assert a.shape == b.shape
    if dtype == "uint8":
        # Rounding of float results may differ by one level in a few pixels.
        diff = np.abs(a - b)
        assert diff.max() <= max(atol, 1) and (diff > 0).mean() < 0.05
    else:
        np.testing.assert_allclose(a, b, atol=atol)


def _pil_equal(ours, theirs, atol=0):
    a, b = np.asarray(ours).astype(int), np.asarray(theirs).astype(int)
    assert a.shape == b.shape
    if atol is None:
        # Pixels on the edge of the warped area may fall in or out by rounding.
        assert (a != b).mean() < 0.02
    else:
        assert np.abs(a - b).max() <= atol


TENSOR_CASES = [
    ("resize_bilinear", lambda F, M: F.resize(M[0], [9, 11], M[1].BILINEAR), 1e-5),
    ("resize_up_bicubic", lambda F, M: F.resize(M[0], [30, 40], M[1].BICUBIC), 1e-4),
    ("resize_nearest", lambda F, M: F.resize(M[0], [9, 31], M[1].NEAREST), 0),
    ("resize_int", lambda F, M: F.resize(M[0], 10), 1e-5),
    ("resize_max_size", lambda F, M: F.resize(M[0], 10, max_size=12), 1e-5),
    ("center_crop", lambda F, M: F.center_crop(M[0], [7, 30]), 0),
    ("crop_outside", lambda F, M: F.crop(M[0], -2, 3, 20, 10), 0),
    ("pad_reflect", lambda F, M: F.pad(M[0], [1, 2, 3, 4], padding_mode="reflect"), 0),
    ("pad_symmetric", lambda F, M: F.pad(M[0], [3, 2], padding_mode="symmetric"), 0),
    ("pad_edge", lambda F, M: F.pad(M[0], 2, padding_mode="edge"), 0),
    ("pad_const", lambda F, M: F.pad(M[0], [1, 2], fill=7), 0),
    ("rotate", lambda F, M: F.rotate(M[0], 33.0), 1e-5),
    ("rotate_expand", lambda F, M: F.rotate(M[0], 30.0, M[1].BILINEAR, expand=True), 1e-4),
    ("rotate_fill", lambda F, M: F.rotate(M[0], 45.0, fill=[1.0, 0.5, 0.0]), 1e-5),
    ("affine", lambda F, M: F.affine(M[0], 20.0, [2, -3], 1.2, [10.0, 5.0], M[1].BILINEAR),
     1e-4),
    ("perspective", lambda F, M: F.perspective(
        M[0], [[0, 0], [22, 0], [22, 16], [0, 16]], [[2, 1], [20, 0], [22, 14], [1, 16]]), 1e-4),
    ("brightness", lambda F, M: F.adjust_brightness(M[0], 1.7), 1e-6),
    ("contrast", lambda F, M: F.adjust_contrast(M[0], 0.4), 1e-6),
    ("saturation", lambda F, M: F.adjust_saturation(M[0], 1.6), 1e-6),
    ("hue", lambda F, M: F.adjust_hue(M[0], 0.23), 1e-5),
    ("gamma", lambda F, M: F.adjust_gamma(M[0], 0.6, 1.1), 1e-6),
    ("sharpness", lambda F, M: F.adjust_sharpness(M[0], 2.5), 1e-5),
    ("grayscale", lambda F, M: F.rgb_to_grayscale(M[0], 3), 1e-6),
    ("invert", lambda F, M: F.invert(M[0]), 0),
    ("solarize", lambda F, M: F.solarize(M[0], 0.5 if M[0].is_floating_point() else 128), 0),
    ("autocontrast", lambda F, M: F.autocontrast(M[0]), 1e-6),
    ("blur", lambda F, M: F.gaussian_blur(M[0], [5, 3], [1.5, 0.7]), 1e-5),
    ("hflip", lambda F, M: F.hflip(M[0]), 0),
    ("vflip", lambda F, M: F.vflip(M[0]), 0),
]


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
@pytest.mark.parametrize("name, fn, atol", TENSOR_CASES, ids=[c[0] for c in TENSOR_CASES])
def test_tensor_functional(name, fn, atol, dtype):
    ours, theirs = _pair(dtype)
    a = fn(F, (ours, InterpolationMode))
    b = fn(tv_F, (theirs, tv_F.InterpolationMode))
    _close(a, b, atol, dtype)


def test_uint8_only_ops():
    ours, theirs = _pair("uint8")
    _close(F.posterize(ours, 3), tv_F.posterize(theirs, 3), 0, "uint8")
    np.testing.assert_array_equal(F.equalize(ours).numpy(), tv_F.equalize(theirs).numpy())


def test_convert_image_dtype():
    ours, theirs = _pair("float32")
    for dtype in ("uint8", "int16"):
        np.testing.assert_array_equal(
            F.convert_image_dtype(ours, getattr(ember, dtype)).numpy(),
            tv_F.convert_image_dtype(theirs, getattr(torch, dtype)).numpy())
    u_ours, u_theirs = _pair("uint8")
    np.testing.assert_allclose(F.convert_image_dtype(u_ours, ember.float64).numpy(),
                               tv_F.convert_image_dtype(u_theirs, torch.float64).numpy())
    np.testing.assert_array_equal(F.convert_image_dtype(u_ours, ember.int32).numpy(),
                                  tv_F.convert_image_dtype(u_theirs, torch.int32).numpy())


def test_normalize():
    ours, theirs = _pair("float32")
    m, s = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    np.testing.assert_allclose(F.normalize(ours, m, s).numpy(),
                               tv_F.normalize(theirs, m, s).numpy(), atol=1e-6)


PIL_CASES = [
    ("resize", lambda F, M: F.resize(PIL_IMG, [9, 40], M.BICUBIC), 0),
    ("resize_lanczos", lambda F, M: F.resize(PIL_IMG, 8, M.LANCZOS), 0),
    ("center_crop_pad", lambda F, M: F.center_crop(PIL_IMG, [20, 10]), 0),
    ("pad_symmetric", lambda F, M: F.pad(PIL_IMG, [2, 3, 1, 0], padding_mode="symmetric"), 0),
    ("pad_fill", lambda F, M: F.pad(PIL_IMG, 2, fill=(1, 2, 3)), 0),
    ("rotate", lambda F, M: F.rotate(PIL_IMG, 30, M.BILINEAR, expand=True, fill=9), 0),
    ("affine", lambda F, M: F.affine(PIL_IMG, 15.0, [3, 1], 0.9, [5.0, 2.0]), 0),
    ("perspective", lambda F, M: F.perspective(
        PIL_IMG, [[0, 0], [22, 0], [22, 16], [0, 16]], [[2, 1], [20, 0], [22, 14], [1, 16]]),
     None),
    ("brightness", lambda F, M: F.adjust_brightness(PIL_IMG, 1.3), 0),
    ("contrast", lambda F, M: F.adjust_contrast(PIL_IMG, 0.3), 0),
    ("saturation", lambda F, M: F.adjust_saturation(PIL_IMG, 0.3), 0),
    ("hue", lambda F, M: F.adjust_hue(PIL_IMG, -0.3), 0),
    ("hue_wraps_up", lambda F, M: F.adjust_hue(PIL_IMG, 0.45), 0),
    ("hue_wraps_down", lambda F, M: F.adjust_hue(PIL_IMG, -0.5), 0),
    ("gamma", lambda F, M: F.adjust_gamma(PIL_IMG, 1.4), 0),
    ("sharpness", lambda F, M: F.adjust_sharpness(PIL_IMG, 0.2), 0),
    ("gray3", lambda F, M: F.to_grayscale(PIL_IMG, 3), 0),
    ("posterize", lambda F, M: F.posterize(PIL_IMG, 2), 0),
    ("solarize", lambda F, M: F.solarize(PIL_IMG, 100), 0),
    ("equalize", lambda F, M: F.equalize(PIL_IMG), 0),
    ("autocontrast", lambda F, M: F.autocontrast(PIL_IMG), 0),
    ("blur", lambda F, M: F.gaussian_blur(PIL_IMG, 5), 1),
]


@pytest.mark.parametrize("name, fn, atol", PIL_CASES, ids=[c[0] for c in PIL_CASES])
def test_pil_functional(name, fn, atol):
    _pil_equal(fn(F, InterpolationMode), fn(tv_F, tv_F.InterpolationMode), atol)


def test_to_tensor_and_back():
    np.testing.assert_allclose(F.to_tensor(PIL_IMG).numpy(), tv_F.to_tensor(PIL_IMG).numpy())
    np.testing.assert_array_equal(F.pil_to_tensor(PIL_IMG).numpy(),
                                  tv_F.pil_to_tensor(PIL_IMG).numpy())
    ours, theirs = _pair("float32")
    _pil_equal(F.to_pil_image(ours[0]), tv_F.to_pil_image(theirs[0]))
    _pil_equal(F.to_pil_image(ours[0, :1]), tv_F.to_pil_image(theirs[0, :1]))


def test_five_and_ten_crop():
    ours, theirs = _pair("uint8")
    for a, b in zip(F.ten_crop(ours, [5, 7], vertical_flip=True),
                    tv_F.ten_crop(theirs, [5, 7], vertical_flip=True)):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_autoaugment_policies_and_ops_match():
    from torchvision.transforms import autoaugment as tv_aa

    from embervision.transforms import autoaugment as aa

    for policy in aa.AutoAugmentPolicy:
        ours = aa.AutoAugment(policy).policies
        theirs = tv_aa.AutoAugment(tv_aa.AutoAugmentPolicy(policy.value)).policies
        assert [tuple(tuple(s) for s in p) for p in ours] == [tuple(tuple(s) for s in p)
                                                                for p in theirs]
    ours_space = aa.AutoAugment._augmentation_space(10, (17, 23))
    theirs_space = tv_aa.AutoAugment(tv_aa.AutoAugmentPolicy.IMAGENET)._augmentation_space(
        10, (17, 23))
    for name, (mags, signed) in ours_space.items():
        expected, tv_signed = theirs_space[name]
        assert signed == tv_signed
        if mags is not None:
            np.testing.assert_allclose(mags, expected.numpy(), rtol=1e-6)
    trivial = aa.TrivialAugmentWide._augmentation_space(31)
    tv_trivial = tv_aa.TrivialAugmentWide()._augmentation_space(31)
    assert list(trivial) == list(tv_trivial)
    np.testing.assert_array_equal(trivial["Posterize"][0], tv_trivial["Posterize"][0].numpy())
    assert list(aa.RandAugment._augmentation_space(31, (8, 8))) == list(
        tv_aa.RandAugment()._augmentation_space(31, (8, 8)))
    ours_img, theirs_img = _pair("uint8")
    for name, magnitude in [("ShearX", 0.2), ("ShearY", -0.3), ("TranslateX", 5.0),
                            ("TranslateY", -4.0), ("Rotate", 20.0), ("Brightness", 0.5),
                            ("Color", -0.4), ("Contrast", 0.3), ("Sharpness", 0.8),
                            ("Posterize", 4), ("Solarize", 100.0), ("AutoContrast", 0.0),
                            ("Equalize", 0.0), ("Invert", 0.0)]:
        a = aa._apply_op(ours_img, name, magnitude, InterpolationMode.NEAREST, [0.0, 0.0, 0.0])
        b = tv_aa._apply_op(theirs_img, name, magnitude, tv_F.InterpolationMode.NEAREST,
                            [0.0, 0.0, 0.0])
        if name.startswith("Shear"):
            # Nearest sampling at exact half-pixel positions: ember's grid_sample and torch's
            # may round a few of those ties differently.
            assert (a.numpy() != b.numpy()).mean() < 0.03
        else:
            _close(a, b, 0, "uint8")
        pa = aa._apply_op(PIL_IMG, name, magnitude, InterpolationMode.NEAREST, None)
        pb = tv_aa._apply_op(PIL_IMG, name, magnitude, tv_F.InterpolationMode.NEAREST, None)
        _pil_equal(pa, pb)


@pytest.mark.parametrize("all_ops", [True, False])
def test_augmix_space_matches(all_ops):
    from embervision.transforms import AugMix

    ours = AugMix(all_ops=all_ops)._augmentation_space(10, (17, 23))
    theirs = tv_T.AugMix(all_ops=all_ops)._augmentation_space(10, (17, 23))
    assert list(ours) == list(theirs)
    for name, (mags, signed) in ours.items():
        assert signed == theirs[name][1]
        if mags is not None:
            np.testing.assert_allclose(mags, theirs[name][0].numpy(), rtol=1e-6)

"""embervision.transforms.v2: images, masks, boxes and points stay consistent; nested inputs;
seeded randomness; the meta, misc and augment transforms. NumPy only (torchvision
comparisons are in tests/interop/test_vision_v2_torchvision.py)."""

import collections
import math

import numpy as np
import pytest
from PIL import Image as PILImage

import ember
from embervision import tv_tensors
from embervision.transforms import v2
from embervision.transforms.v2 import functional as F

H, W = 20, 30


def _box_sample(box=(4, 3, 14, 11)):
    # A mask that is 1 exactly inside the box, and a point in the middle of one pixel.
    x1, y1, x2, y2 = box
    mask = np.zeros((1, H, W), np.uint8)
    mask[0, y1:y2, x1:x2] = 1
    image = np.zeros((1, H, W), np.uint8)
    image[0, 7, 21] = 255
    return {
        "image": tv_tensors.Image(ember.from_numpy(image)),
        "mask": tv_tensors.Mask(ember.from_numpy(mask)),
        "boxes": tv_tensors.BoundingBoxes([list(box)], format="XYXY", canvas_size=(H, W)),
        "points": tv_tensors.KeyPoints([[21.0, 7.0]], canvas_size=(H, W)),
        "label": 3,
    }


def _mask_box(mask):
    ys, xs = np.nonzero(mask.numpy()[0])
    return [xs.min(), ys.min(), xs.max() + 1, ys.max() + 1]


def _bright_pixel(image):
    y, x = np.unravel_index(np.argmax(image.numpy()[0]), image.shape[-2:])
    return [x, y]


@pytest.mark.parametrize("transform", [
    v2.RandomHorizontalFlip(p=1.0), v2.RandomVerticalFlip(p=1.0), v2.Pad([3, 1, 2, 5]),
    v2.Resize([40, 60], interpolation=v2.InterpolationMode.NEAREST),
    v2.RandomRotation([90, 90], expand=True), v2.CenterCrop([16, 24]),
    v2.RandomCrop([15, 25]), v2.RandomZoomOut(p=1.0),
], ids=lambda t: type(t).__name__)
def test_boxes_masks_points_follow_the_image(transform):
    ember.manual_seed(0)
    out = transform(_box_sample())
    assert set(out) == {"image", "mask", "boxes", "points", "label"} and out["label"] == 3
    assert type(out["mask"]) is tv_tensors.Mask and type(out["boxes"]) is tv_tensors.BoundingBoxes
    canvas = tuple(out["image"].shape[-2:])
    assert out["boxes"].canvas_size == canvas == out["points"].canvas_size
    np.testing.assert_allclose(out["boxes"].numpy()[0], _mask_box(out["mask"]), atol=1e-4)
    # Points are pixel indices (hflip: W - 1 - x), as torchvision's; resizing and rotating
    # them maps the index, not the pixel centre, so only 1:1 maps put them on the pixel.
    if not isinstance(transform, (v2.Resize, v2.RandomRotation)):
        np.testing.assert_allclose(out["points"].numpy()[0], _bright_pixel(out["image"]),
                                   atol=1e-4)


def test_rotated_and_affine_boxes_hold_their_mask():
    ember.manual_seed(1)
    out = v2.RandomAffine(degrees=25, translate=(0.1, 0.1), scale=(0.9, 1.1), shear=5)(
        _box_sample())
    x1, y1, x2, y2 = out["boxes"].numpy()[0]
    mx1, my1, mx2, my2 = _mask_box(out["mask"])
    # The envelope of the moved corners holds every moved pixel (nearest resampling).
    assert x1 <= mx1 + 1 and y1 <= my1 + 1 and x2 >= mx2 - 1 and y2 >= my2 - 1


def test_same_parameters_for_every_input_and_seeded():
    a = ember.randint(0, 200, (3, H, W), dtype=ember.uint8)
    sample = [tv_tensors.Image(a), tv_tensors.Image(a + 1)]
    t = v2.Compose([v2.RandomResizedCrop(12, interpolation=v2.InterpolationMode.NEAREST),
                    v2.RandomHorizontalFlip(), v2.RandomRotation(30)])
    ember.manual_seed(7)
    first = t(sample)
    out_a, out_b = first
    rotated_in = out_a.numpy() > 0  # rotation fills with 0 outside
    np.testing.assert_array_equal((out_b.numpy() - out_a.numpy())[rotated_in],
                                  np.ones_like(out_a.numpy())[rotated_in])
    ember.manual_seed(7)
    again = t(sample)
    np.testing.assert_array_equal(again[0].numpy(), first[0].numpy())
    ember.manual_seed(8)
    assert not np.array_equal(t(sample)[0].numpy(), first[0].numpy())


def test_nested_inputs_and_pure_tensor_heuristic():
    Pair = collections.namedtuple("Pair", "image extra")
    img = ember.rand(3, H, W)
    other = ember.rand(3, H, W)
    sample = [Pair(img, other), {"name": "x", "none": None, "n": 3}]
    out = v2.RandomHorizontalFlip(p=1.0)(sample)
    assert isinstance(out, list) and isinstance(out[0], Pair)
    np.testing.assert_array_equal(out[0].image.numpy(), img.numpy()[..., ::-1])
    assert out[0].extra is other  # only the first pure tensor is an image
    assert out[1] == {"name": "x", "none": None, "n": 3}
    # With a tv_tensors.Image present, pure tensors pass through.
    image = tv_tensors.Image(img)
    flipped, passed = v2.RandomHorizontalFlip(p=1.0)(image, other)
    assert passed is other and type(flipped) is tv_tensors.Image
    # A single argument comes back as itself, several as a tuple.
    assert isinstance(v2.Identity()(img, other), tuple)
    pil = PILImage.fromarray(np.zeros((H, W, 3), np.uint8))
    assert v2.RandomHorizontalFlip(p=1.0)(pil).size == (W, H)


def test_functional_dispatch_and_errors():
    boxes = tv_tensors.BoundingBoxes([[1, 2, 5, 6]], format="XYXY", canvas_size=(H, W))
    np.testing.assert_array_equal(F.hflip(boxes).numpy(), [[W - 5, 2, W - 1, 6]])
    with pytest.raises(TypeError, match="supports inputs of type"):
        F.resize("an image", [4, 4])
    with pytest.raises(TypeError, match="supports inputs of type"):
        F.adjust_hue(tv_tensors.Mask(ember.zeros(1, 2, 2)), 0.1)
    # Transforms pass what they cannot handle through.
    mask = tv_tensors.Mask(ember.zeros(1, 4, 4, dtype=ember.uint8))
    assert v2.ColorJitter(hue=0.2)(mask) is mask
    with pytest.raises(TypeError, match="not supported"):
        v2.FiveCrop(4)(tv_tensors.Image(ember.zeros(3, 8, 8)), boxes)
    with pytest.raises(TypeError, match="does not support PIL"):
        v2.Normalize([0.5], [0.5])(PILImage.new("L", (4, 4)))
    with pytest.raises(ValueError, match="multiple HxW"):
        v2.RandomCrop(4)(tv_tensors.Image(ember.zeros(3, 8, 8)),
                         tv_tensors.Mask(ember.zeros(1, 9, 9)))
    with pytest.raises(ValueError, match="not supported with bounding boxes"):
        F.pad(boxes, 2, padding_mode="reflect")
    assert v2.RandomCrop.get_params is not None and v2.RandomResizedCrop.get_params


def test_register_kernel_for_a_custom_tv_tensor():
    class Heatmap(tv_tensors.TVTensor):
        def __new__(cls, data):
            return cls._wrap(cls._to_tensor(data))

    @F.register_kernel(F.hflip, Heatmap)
    def _flip_heatmap(inpt):
        return tv_tensors.wrap(ember.Tensor.as_subclass(inpt, ember.Tensor).flip(-1) * 2,
                               like=inpt)

    heat = Heatmap(ember.tensor([[1.0, 2.0]]))
    out = v2.RandomHorizontalFlip(p=1.0)(heat)
    np.testing.assert_array_equal(out.numpy(), [[4.0, 2.0]])
    with pytest.raises(ValueError, match="builtin"):
        F.register_kernel(F.hflip, tv_tensors.Image)


def test_convert_bounding_box_format_closed_forms():
    xyxy = ember.tensor([[1.0, 2.0, 4.0, 6.0]])
    np.testing.assert_allclose(F.convert_bounding_box_format(xyxy, "XYXY", "XYWH").numpy(),
                               [[1, 2, 3, 4]])
    np.testing.assert_allclose(F.convert_bounding_box_format(xyxy, "XYXY", "CXCYWH").numpy(),
                               [[2.5, 4, 3, 4]])
    xywhr = ember.tensor([[0.0, 0.0, 2.0, 1.0, 90.0]])
    corners = F.convert_bounding_box_format(xywhr, "XYWHR", "XYXYXYXY").numpy()
    np.testing.assert_allclose(corners, [[0, 0, 0, -2, 1, -2, 1, 0]], atol=1e-6)
    rng = np.random.default_rng(0)
    boxes = ember.from_numpy(np.concatenate([rng.uniform(0, 9, (6, 4)),
                                             rng.uniform(-80, 80, (6, 1))], 1))
    for fmt in ("CXCYWHR", "XYXYXYXY"):
        there = F.convert_bounding_box_format(boxes, "XYWHR", fmt)
        back = F.convert_bounding_box_format(there, fmt, "XYWHR")
        np.testing.assert_allclose(back.numpy(), boxes.numpy(), atol=1e-9)
    tv = tv_tensors.BoundingBoxes(xyxy, format="XYXY", canvas_size=(8, 8))
    out = F.convert_bounding_box_format(tv, new_format="CXCYWH")
    assert out.format is tv_tensors.BoundingBoxFormat.CXCYWH and out.canvas_size == (8, 8)
    with pytest.raises(ValueError, match="old_format"):
        F.convert_bounding_box_format(xyxy, new_format="XYWH")


def test_clamp_boxes_and_points():
    boxes = tv_tensors.BoundingBoxes([[-2.0, 3.0, 40.0, 25.0]], format="XYXY",
                                     canvas_size=(H, W))
    np.testing.assert_array_equal(v2.ClampBoundingBoxes()(boxes).numpy(), [[0, 3, W, H]])
    unclamped = tv_tensors.BoundingBoxes(boxes, format="XYXY", canvas_size=(H, W),
                                         clamping_mode=None)
    np.testing.assert_array_equal(F.clamp_bounding_boxes(unclamped).numpy(), boxes.numpy())
    # Geometric kernels clamp by the boxes' own mode.
    moved = F.crop(unclamped, 0, 0, 10, 10)
    assert float(moved.numpy().max()) == 40.0
    points = tv_tensors.KeyPoints([[-1.0, 5.0], [50.0, 50.0]], canvas_size=(H, W))
    np.testing.assert_array_equal(v2.ClampKeyPoints()(points).numpy(), [[0, 5], [W - 1, H - 1]])
    assert v2.SetClampingMode(None)(boxes).clamping_mode is None


def test_sanitize_bounding_boxes_removes_boxes_labels_and_masks():
    boxes = tv_tensors.BoundingBoxes([[0, 0, 5, 5], [3, 3, 3.5, 9], [2, 2, 8, 30], [1, 1, 4, 4]],
                                     format="XYXY", canvas_size=(H, W))
    masks = tv_tensors.Mask(ember.arange(4).reshape(4, 1, 1).expand(4, H, W).contiguous())
    sample = {"boxes": boxes, "masks": masks, "labels": ember.tensor([10, 11, 12, 13]),
              "image": tv_tensors.Image(ember.zeros(3, H, W))}
    out = v2.SanitizeBoundingBoxes()(sample)
    np.testing.assert_array_equal(out["labels"].numpy(), [10, 13])
    np.testing.assert_array_equal(out["masks"].numpy()[:, 0, 0], [0, 3])
    assert type(out["boxes"]) is tv_tensors.BoundingBoxes and tuple(out["boxes"].shape) == (2, 4)
    out = v2.SanitizeBoundingBoxes(min_size=4, labels_getter=None)(boxes)
    assert tuple(out.shape) == (1, 4)
    with pytest.raises(ValueError, match="must match the number of labels"):
        v2.SanitizeBoundingBoxes()({"boxes": boxes, "labels": ember.tensor([1])})
    points = tv_tensors.KeyPoints([[1.0, 1.0], [-1.0, 2.0], [3.0, 25.0]], canvas_size=(H, W))
    np.testing.assert_array_equal(v2.SanitizeKeyPoints()(points).numpy(), [[1.0, 1.0]])


def test_to_dtype_with_a_dict():
    sample = {"image": tv_tensors.Image(ember.full((3, 2, 2), 255, dtype=ember.uint8)),
              "mask": tv_tensors.Mask(ember.ones(2, 2, dtype=ember.uint8)),
              "other": ember.ones(2, dtype=ember.uint8)}
    out = v2.ToDtype({tv_tensors.Image: ember.float32, tv_tensors.Mask: ember.int64,
                      "others": None}, scale=True)(sample)
    assert out["image"].dtype == ember.float32 and float(out["image"].max()) == 1.0
    assert out["mask"].dtype == ember.int64 and int(out["mask"].max()) == 1
    assert out["other"] is sample["other"]
    with pytest.raises(ValueError, match="No dtype was specified"):
        v2.ToDtype({tv_tensors.Image: ember.float32})(sample)
    # A plain dtype converts only images and videos.
    out = v2.ToDtype(ember.float64)(sample)
    assert out["image"].dtype == ember.float64 and out["mask"] is sample["mask"]


def test_mixup_and_cutmix_mix_images_and_labels_alike():
    ember.manual_seed(3)
    x = ember.rand(4, 3, 8, 8, dtype=ember.float64)
    y = ember.tensor([0, 1, 2, 3])
    images, labels = v2.MixUp(num_classes=5)(x, y)
    lam = float(labels[0, 0])
    np.testing.assert_allclose(labels.numpy().sum(1), 1.0)
    np.testing.assert_allclose(images.numpy(), lam * x.numpy()
                               + (1 - lam) * np.roll(x.numpy(), 1, 0), rtol=1e-6)
    images, labels = v2.CutMix(num_classes=5)(x, y)
    kept = float(labels[0, 0])
    same = np.isclose(images.numpy()[0], x.numpy()[0]).all(axis=0).mean()
    assert math.isclose(same, kept, abs_tol=1e-6)
    with pytest.raises(ValueError, match="batched input"):
        v2.MixUp()(ember.rand(3, 8, 8), ember.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="does not support"):
        v2.CutMix()(tv_tensors.Mask(ember.zeros(4, 8, 8)), y)


def test_detection_crops_and_resizes():
    ember.manual_seed(0)
    sample = _box_sample()
    out = v2.Compose([v2.RandomIoUCrop(), v2.SanitizeBoundingBoxes(labels_getter=None)])(sample)
    if out["boxes"].shape[0]:
        h, w = out["boxes"].canvas_size
        b = out["boxes"].numpy()
        assert (b >= 0).all() and (b[:, 2] <= w).all() and (b[:, 3] <= h).all()
    with pytest.raises(TypeError, match="bounding boxes"):
        v2.RandomIoUCrop()(tv_tensors.Image(ember.zeros(3, 8, 8)))
    img = tv_tensors.Image(ember.zeros(3, 20, 40))
    assert tuple(v2.RandomShortestSize([10], max_size=15)(img).shape) == (3, 7, 15)
    assert min(v2.RandomResize(12, 13)(img).shape[-2:]) == 12
    ember.manual_seed(0)
    out = v2.ScaleJitter((10, 10), scale_range=(1.0, 1.0))(img)
    assert tuple(out.shape) == (3, 5, 10)


def test_color_augment_and_conversion_transforms():
    img = tv_tensors.Image(ember.randint(0, 256, (3, 8, 8), dtype=ember.uint8))
    gray = v2.Grayscale()(img)
    assert type(gray) is tv_tensors.Image and tuple(gray.shape) == (1, 8, 8)
    assert tuple(v2.RGB()(gray).shape) == (3, 8, 8)
    perm = F.permute_channels(img, [2, 0, 1])
    np.testing.assert_array_equal(perm.numpy(), img.numpy()[[2, 0, 1]])
    smooth = tv_tensors.Image(ember.from_numpy(
        np.broadcast_to(np.arange(0, 256, 8, dtype=np.uint8), (3, 32, 32)).copy()))
    close = v2.JPEG(95)(smooth)
    assert close.dtype == ember.uint8 and type(close) is tv_tensors.Image
    assert np.abs(close.numpy().astype(int) - smooth.numpy()).mean() < 3
    with pytest.raises(TypeError, match="uint8"):
        F.jpeg(ember.rand(3, 8, 8), 50)
    ember.manual_seed(0)
    noisy = F.gaussian_noise(ember.full((1, 64, 64), 0.5), sigma=0.1)
    assert abs(float(noisy.std()) - 0.1) < 0.01 and float(noisy.max()) <= 1.0
    with pytest.raises(ValueError, match="float"):
        F.gaussian_noise(img)
    with pytest.raises(TypeError, match="BoundingBoxes"):
        v2.AutoAugment()(img, tv_tensors.BoundingBoxes([[0, 0, 1, 1]], format="XYXY",
                                                       canvas_size=(8, 8)))
    assert type(v2.TrivialAugmentWide()(img)) is tv_tensors.Image
    video = tv_tensors.Video(ember.arange(10).reshape(10, 1, 1, 1).expand(10, 3, 2, 2))
    np.testing.assert_array_equal(v2.UniformTemporalSubsample(4)(video).numpy()[:, 0, 0, 0],
                                  [0, 3, 6, 9])
    arr = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)
    as_image = v2.ToImage()(arr)
    assert type(as_image) is tv_tensors.Image
    np.testing.assert_array_equal(as_image.numpy(), arr.transpose(2, 0, 1))
    assert type(v2.ToPureTensor()(as_image)) is ember.Tensor
    assert v2.ToPILImage()(as_image).size == (4, 2)
    erased = v2.RandomErasing(p=1.0, value=7)(ember.zeros(3, 16, 16))
    assert set(np.unique(erased.numpy())) == {0.0, 7.0}


def test_elastic_with_zero_displacement_is_the_identity():
    sample = _box_sample()
    zero = ember.zeros(1, H, W, 2)
    for key in ("image", "mask", "boxes", "points"):
        out = F.elastic(sample[key], zero, interpolation=v2.InterpolationMode.NEAREST)
        np.testing.assert_allclose(out.numpy(), sample[key].numpy(), atol=1e-5)


def test_containers():
    ember.manual_seed(0)
    img = ember.rand(3, 4, 4)
    assert v2.RandomApply([v2.RandomHorizontalFlip(p=1.0)], p=0.0)(img) is img
    flipped = v2.RandomApply([v2.RandomHorizontalFlip(p=1.0)], p=1.0)(img)
    np.testing.assert_array_equal(flipped.numpy(), img.numpy()[..., ::-1])
    only = v2.RandomChoice([v2.RandomVerticalFlip(p=1.0), v2.Identity()], p=[1, 0])(img)
    np.testing.assert_array_equal(only.numpy(), img.numpy()[..., ::-1, :])
    both = v2.RandomOrder([v2.RandomVerticalFlip(p=1.0), v2.RandomHorizontalFlip(p=1.0)])(img)
    np.testing.assert_array_equal(both.numpy(), img.numpy()[..., ::-1, ::-1])
    with pytest.raises(ValueError, match="at least one"):
        v2.Compose([])


# A square turned 45 degrees whose left corner is 1 past the canvas's left side.
DIAMOND = [-1.0, 5.0, 1.0, 3.0, 3.0, 5.0, 1.0, 7.0]
# soft: the smallest box at 45 degrees around the part inside the canvas is the diamond itself
# (cutting a corner off does not bring in its sides); hard: the edges through the left corner
# meet the side at the mean of their intercepts (y = 5), the opposite edges stay, so the
# corners are where y = -x + 5, y = x + 2, y = -x + 8 and y = x + 5 meet
DIAMOND_HARD = [0.0, 5.0, 1.5, 3.5, 3.0, 5.0, 1.5, 6.5]


@pytest.mark.parametrize("mode, expected", [("soft", DIAMOND), ("hard", DIAMOND_HARD)])
def test_rotated_boxes_leaving_the_canvas_are_clamped(mode, expected):
    out = F.clamp_bounding_boxes(ember.tensor([DIAMOND]), format="XYXYXYXY",
                                 canvas_size=(10, 10), clamping_mode=mode)
    np.testing.assert_allclose(out.numpy(), [expected], atol=1e-6)
    # the same box as CXCYWHR: the side of the hard box is 1.5 * sqrt(2)
    side = 2 * math.sqrt(2)
    out = F.clamp_bounding_boxes(ember.tensor([1.0, 5.0, side, side, 45.0]), format="CXCYWHR",
                                 canvas_size=(10, 10), clamping_mode=mode)
    want = [1.0, 5.0, side, side, 45.0] if mode == "soft" else [1.5, 5.0, 1.5 * math.sqrt(2),
                                                                 1.5 * math.sqrt(2), 45.0]
    np.testing.assert_allclose(out.numpy(), want, atol=1e-5)


@pytest.mark.parametrize("mode", ["soft", "hard"])
def test_rotated_boxes_at_angle_zero_clamp_like_axis_aligned_ones(mode):
    boxes = ember.tensor([[-2.0, 1.0, 6.0, 3.0, 0.0], [6.0, 2.0, 8.0, 3.0, 0.0],
                          [2.0, 8.0, 3.0, 4.0, 0.0]])
    out = F.clamp_bounding_boxes(boxes, format="XYWHR", canvas_size=(10, 10), clamping_mode=mode)
    np.testing.assert_allclose(out.numpy(), [[0, 1, 4, 3, 0], [6, 2, 4, 3, 0], [2, 8, 3, 2, 0]],
                               atol=1e-5)


def test_rotated_boxes_wholly_outside_collapse_and_inside_stay():
    outside = [-6.0, 5.0, -5.0, 4.0, -4.0, 5.0, -5.0, 6.0]  # a diamond left of the canvas
    inside = [1.0, 5.0, 3.0, 3.0, 5.0, 5.0, 3.0, 7.0]
    out = F.clamp_bounding_boxes(ember.tensor([outside, inside]), format="XYXYXYXY",
                                 canvas_size=(10, 12), clamping_mode="hard")
    # collapsed to one point (torchvision's: the zeros of the last side, turned back)
    np.testing.assert_allclose(out.numpy(), [[0, 10] * 4, inside], atol=1e-6)


def test_rotated_clamping_keeps_dtype_shape_and_mode_none():
    diamond = ember.tensor(DIAMOND)
    out = F.clamp_bounding_boxes(diamond, format="XYXYXYXY", canvas_size=(10, 10),
                                 clamping_mode="hard")
    assert tuple(out.shape) == (8,) and out.dtype == ember.float32
    np.testing.assert_allclose(out.numpy(), DIAMOND_HARD, atol=1e-6)
    as_int = F.clamp_bounding_boxes(ember.tensor([DIAMOND], dtype=ember.int64),
                                    format="XYXYXYXY", canvas_size=(10, 10), clamping_mode="hard")
    assert as_int.dtype == ember.int64
    np.testing.assert_array_equal(as_int.numpy(), [[0, 5, 1, 3, 3, 5, 1, 6]])  # truncated
    empty = F.clamp_bounding_boxes(ember.zeros(0, 5), format="CXCYWHR", canvas_size=(10, 10),
                                   clamping_mode="soft")
    assert tuple(empty.shape) == (0, 5)
    same = F.clamp_bounding_boxes(ember.tensor([DIAMOND]), format="XYXYXYXY",
                                  canvas_size=(10, 10), clamping_mode=None)
    np.testing.assert_array_equal(same.numpy(), [DIAMOND])


def test_transforms_clamp_rotated_boxes_by_their_mode():
    # the diamond 2 to the right, then cropped 2 from the left: it sticks out again
    shifted = [v + 2 if i % 2 == 0 else v for i, v in enumerate(DIAMOND)]
    for mode, expected in (("soft", DIAMOND), ("hard", DIAMOND_HARD)):
        boxes = tv_tensors.BoundingBoxes([shifted], format="XYXYXYXY", canvas_size=(10, 12),
                                         clamping_mode=mode)
        out = F.crop(boxes, 0, 2, 10, 10)
        assert out.canvas_size == (10, 10) and out.clamping_mode == mode
        np.testing.assert_allclose(out.numpy(), [expected], atol=1e-5)
    boxes = tv_tensors.BoundingBoxes([DIAMOND], format="XYXYXYXY", canvas_size=(10, 10),
                                     clamping_mode=None)
    np.testing.assert_allclose(v2.ClampBoundingBoxes("hard")(boxes).numpy(), [DIAMOND_HARD],
                               atol=1e-6)
    np.testing.assert_allclose(v2.ClampBoundingBoxes()(boxes).numpy(), [DIAMOND])  # None
    turned = F.rotate(tv_tensors.BoundingBoxes([[10.0, 10.0, 4.0, 2.0, 30.0]],
                                               format="CXCYWHR", canvas_size=(H, W)), 45.0)
    np.testing.assert_allclose(turned.numpy()[0, 2:4], [4.0, 2.0], atol=1e-4)



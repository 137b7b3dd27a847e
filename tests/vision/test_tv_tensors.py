"""embervision.tv_tensors: construction, metadata, what ops return, pickling."""

import copy
import pickle

import numpy as np
import pytest
from PIL import Image as PILImage

import ember
from embervision import tv_tensors


def test_image_video_mask_construction():
    img = tv_tensors.Image(ember.zeros(4, 5))
    assert type(img) is tv_tensors.Image and tuple(img.shape) == (1, 4, 5)
    pil = PILImage.fromarray(np.arange(12, dtype=np.uint8).reshape(3, 4))
    from_pil = tv_tensors.Image(pil)
    assert from_pil.dtype == ember.uint8 and tuple(from_pil.shape) == (1, 3, 4)
    np.testing.assert_array_equal(from_pil.numpy()[0], np.asarray(pil))
    with pytest.raises(ValueError, match="at least 2"):
        tv_tensors.Image(ember.zeros(3))
    with pytest.raises(ValueError, match="at least 4"):
        tv_tensors.Video(ember.zeros(3, 4, 5))
    mask = tv_tensors.Mask([[0, 1], [1, 0]], dtype=ember.bool)
    assert mask.dtype == ember.bool and type(mask) is tv_tensors.Mask
    assert tv_tensors.Image(ember.zeros(2, 2, requires_grad=True)).requires_grad


def test_bounding_boxes_metadata_and_validation():
    boxes = tv_tensors.BoundingBoxes([1, 2, 3, 4], format="xywh", canvas_size=[10, 20])
    assert tuple(boxes.shape) == (1, 4)
    assert boxes.format is tv_tensors.BoundingBoxFormat.XYWH
    assert boxes.canvas_size == (10, 20) and boxes.clamping_mode == "soft"
    with pytest.raises(ValueError, match="Unknown bounding box format"):
        tv_tensors.BoundingBoxes([[0, 0, 1, 1]], format="XY", canvas_size=(2, 2))
    with pytest.raises(ValueError, match="floating point"):
        tv_tensors.BoundingBoxes([[0, 0, 1, 1, 0]], format="XYWHR", canvas_size=(2, 2))
    with pytest.raises(ValueError, match="4 coordinates"):
        tv_tensors.BoundingBoxes([[0, 0, 1]], format="XYXY", canvas_size=(2, 2))
    with pytest.raises(ValueError, match="clamping_mode"):
        tv_tensors.BoundingBoxes([[0, 0, 1, 1]], format="XYXY", canvas_size=(2, 2),
                                 clamping_mode="always")
    empty = tv_tensors.BoundingBoxes(ember.zeros(0, 4), format="XYXY", canvas_size=(2, 2))
    assert tuple(empty.shape) == (0, 4)
    assert tv_tensors.is_rotated_bounding_format("CXCYWHR")
    assert not tv_tensors.is_rotated_bounding_format(tv_tensors.BoundingBoxFormat.XYXY)


def test_keypoints():
    points = tv_tensors.KeyPoints([1.0, 2.0], canvas_size=(4, 4))
    assert tuple(points.shape) == (1, 2) and points.canvas_size == (4, 4)
    assert tuple(tv_tensors.KeyPoints(ember.zeros(3, 5, 2), canvas_size=(4, 4)).shape) == (3, 5, 2)
    with pytest.raises(ValueError, match=r"\(\.\.\., 2\)"):
        tv_tensors.KeyPoints(ember.zeros(3, 3), canvas_size=(4, 4))


def test_ops_return_plain_tensors_except_the_forced_methods():
    img = tv_tensors.Image(ember.ones(3, 2, 2))
    boxes = tv_tensors.BoundingBoxes([[0, 0, 1, 1]], format="XYXY", canvas_size=(2, 2))
    assert type(img + 1) is ember.Tensor
    assert type(img.flip(-1)) is ember.Tensor
    assert type(img[0]) is ember.Tensor
    assert type(ember.add(img, img)) is ember.Tensor
    for out in (img.clone(), img.to(ember.float64), img.detach(), img.requires_grad_(False)):
        assert type(out) is tv_tensors.Image
    moved = boxes.to(ember.float64)
    assert type(moved) is tv_tensors.BoundingBoxes and moved.dtype == ember.float64
    assert moved.canvas_size == (2, 2) and moved.format == boxes.format
    # In-place ops change the TVTensor but hand back a plain tensor, as torchvision's.
    out = img.add_(1)
    assert type(out) is ember.Tensor and type(img) is tv_tensors.Image
    assert float(img.sum()) == 24.0


def test_set_return_type():
    boxes = tv_tensors.BoundingBoxes([[0, 0, 1, 1]], format="XYXY", canvas_size=(2, 2))
    with tv_tensors.set_return_type("TVTensor"):
        out = boxes * 2
        assert type(out) is tv_tensors.BoundingBoxes and out.canvas_size == (2, 2)
        assert type(tv_tensors.Image(ember.zeros(1, 2, 2)) + 1) is tv_tensors.Image
    assert type(boxes * 2) is ember.Tensor
    tv_tensors.set_return_type("tvtensor")
    try:
        assert type(boxes + 0) is tv_tensors.BoundingBoxes
    finally:
        tv_tensors.set_return_type("Tensor")
    assert type(boxes + 0) is ember.Tensor
    with pytest.raises(ValueError, match="return_type"):
        tv_tensors.set_return_type("numpy")


def test_wrap():
    boxes = tv_tensors.BoundingBoxes([[0, 0, 1, 1]], format="XYXY", canvas_size=(2, 2))
    out = tv_tensors.wrap(ember.tensor([[1, 1, 2, 2]]), like=boxes, canvas_size=(5, 5))
    assert type(out) is tv_tensors.BoundingBoxes and out.canvas_size == (5, 5)
    assert out.format == boxes.format and boxes.canvas_size == (2, 2)
    with pytest.raises(TypeError, match="__wrap__"):
        tv_tensors.wrap(ember.zeros(1), like=ember.zeros(1))
    with pytest.raises(TypeError, match="no metadata"):
        tv_tensors.wrap(ember.zeros(1, 2), like=tv_tensors.Image(ember.zeros(1, 2)),
                        canvas_size=(1, 2))


def test_pickle_deepcopy_and_repr():
    boxes = tv_tensors.BoundingBoxes([[0.0, 1.0, 2.0, 3.0]], format="CXCYWH", canvas_size=(4, 6),
                                     clamping_mode="hard")
    for out in (pickle.loads(pickle.dumps(boxes)), copy.deepcopy(boxes)):
        assert type(out) is tv_tensors.BoundingBoxes
        assert (out.format, out.canvas_size, out.clamping_mode) == (
            boxes.format, boxes.canvas_size, boxes.clamping_mode)
        np.testing.assert_array_equal(out.numpy(), boxes.numpy())
    text = repr(boxes)
    assert "canvas_size=(4, 6)" in text and "CXCYWH" in text
    image = pickle.loads(pickle.dumps(tv_tensors.Image(ember.ones(1, 2, 2))))
    assert type(image) is tv_tensors.Image

"""embervision.utils: grids, saving and drawing, checked against NumPy and Pillow."""

import numpy as np
import pytest
from PIL import Image

import ember
import embervision.utils as utils


def test_make_grid_layout():
    x = ember.stack([ember.full((3, 2, 3), float(i)) for i in range(5)])
    g = utils.make_grid(x, nrow=2, padding=1, pad_value=-1.0)
    assert tuple(g.shape) == (3, 3 * 3 + 1, 2 * 4 + 1)
    arr = g.numpy()
    assert (arr[:, 1:3, 1:4] == 0).all() and (arr[:, 1:3, 5:8] == 1).all()
    assert (arr[:, 7:9, 1:4] == 4).all() and (arr[:, 7:9, 5:8] == -1).all()
    assert (arr[:, 0] == -1).all()
    one = utils.make_grid(ember.zeros(1, 2, 2))
    assert tuple(one.shape) == (3, 2, 2)
    n = utils.make_grid([ember.tensor([[[0.0, 2.0]]])] * 2, normalize=True)
    assert float(n.max()) == 1.0 and float(n.min()) == 0.0
    with pytest.raises(TypeError):
        utils.make_grid([1, 2])


def test_save_image(tmp_path):
    x = ember.rand(4, 3, 5, 6)
    utils.save_image(x, tmp_path / "g.png", nrow=4, padding=0)
    saved = np.asarray(Image.open(tmp_path / "g.png"))
    expected = np.floor(x.numpy()[2].transpose(1, 2, 0) * 255 + 0.5).astype(np.uint8)
    np.testing.assert_array_equal(saved[:, 12:18], expected)


def test_draw_bounding_boxes_outline():
    img = ember.zeros(3, 10, 12, dtype=ember.uint8)
    out = utils.draw_bounding_boxes(img, ember.tensor([[1.0, 2.0, 8.0, 7.0]]), colors="red")
    arr = out.numpy()
    assert (arr[0, 2, 1:9] == 255).all() and (arr[0, 7, 1:9] == 255).all()
    assert arr[0, 4, 4] == 0 and (arr[1:] == 0).all()
    gray = utils.draw_bounding_boxes(ember.zeros(1, 5, 5), ember.tensor([[0.0, 0, 4, 4]]))
    assert gray.dtype == ember.float32 and tuple(gray.shape) == (3, 5, 5)
    with pytest.raises(ValueError, match="xmin, ymin"):
        utils.draw_bounding_boxes(img, ember.tensor([[5.0, 0, 1, 1]]))
    with pytest.raises(ValueError, match="labels"):
        utils.draw_bounding_boxes(img, ember.tensor([[0.0, 0, 1, 1]]), labels=["a", "b"])


def test_draw_segmentation_masks_blend():
    img = ember.full((3, 4, 4), 100, dtype=ember.uint8)
    masks = ember.zeros(2, 4, 4, dtype=ember.bool)
    masks[0, 0, 0] = True
    masks[1, 0, 0] = True
    masks[1, 3, 3] = True
    out = utils.draw_segmentation_masks(img, masks, alpha=0.5, colors=["red", (0, 0, 200)])
    arr = out.numpy()
    np.testing.assert_array_equal(arr[:, 3, 3], [50, 50, 150])
    np.testing.assert_array_equal(arr[:, 0, 0], [50, 50, 50])  # overlap drawn black
    np.testing.assert_array_equal(arr[:, 1, 1], [100, 100, 100])
    with pytest.raises(ValueError, match="bool"):
        utils.draw_segmentation_masks(img, masks.to(ember.uint8))


def test_draw_keypoints_and_flow():
    img = ember.zeros(3, 9, 9, dtype=ember.uint8)
    out = utils.draw_keypoints(img, ember.tensor([[[4.0, 4.0]]]), colors=(0, 255, 0), radius=1)
    assert out.numpy()[1, 4, 4] == 255 and out.numpy()[0, 4, 4] == 0
    flow = ember.zeros(2, 3, 3)
    flow[0, 1, 1] = 1.0
    rgb = utils.flow_to_image(flow)
    assert rgb.dtype == ember.uint8 and tuple(rgb.shape) == (3, 3, 3)
    assert (rgb.numpy()[:, 0, 0] == 255).all()  # no motion is white
    with pytest.raises(ValueError, match="dtype"):
        utils.flow_to_image(flow.double())

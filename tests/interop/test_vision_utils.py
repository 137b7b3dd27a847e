"""embervision.utils against torchvision.utils. Skips without torchvision."""

import io

import numpy as np
import pytest

torch = pytest.importorskip("torch")
tv_utils = pytest.importorskip("torchvision.utils")

from PIL import Image  # noqa: E402

import ember  # noqa: E402
import embervision.utils as utils  # noqa: E402

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("kwargs", [{}, {"nrow": 3, "padding": 1, "pad_value": 0.5},
                                    {"normalize": True}, {"normalize": True, "scale_each": True},
                                    {"normalize": True, "value_range": (-1.0, 1.0)}])
def test_make_grid(kwargs):
    x = RNG.standard_normal((7, 1, 5, 6)).astype(np.float32)
    np.testing.assert_allclose(utils.make_grid(ember.from_numpy(x), **kwargs).numpy(),
                               tv_utils.make_grid(torch.from_numpy(x), **kwargs).numpy(),
                               atol=1e-6)


def test_save_image_bytes():
    x = RNG.uniform(size=(4, 3, 5, 6)).astype(np.float32)
    a, b = io.BytesIO(), io.BytesIO()
    utils.save_image(ember.from_numpy(x), a, format="png", nrow=2)
    tv_utils.save_image(torch.from_numpy(x), b, format="png", nrow=2)
    np.testing.assert_array_equal(np.asarray(Image.open(a)), np.asarray(Image.open(b)))


def test_draw_functions():
    img = RNG.integers(0, 256, (3, 30, 40), dtype=np.uint8)
    boxes = np.array([[1, 2, 20, 25], [10, 5, 39, 29]], dtype=np.float32)
    for kwargs in [{}, {"fill": True, "width": 2, "colors": ["red", (0, 255, 0)]},
                   {"labels": ["a", "bb"], "fill_labels": True}]:
        ours = utils.draw_bounding_boxes(ember.from_numpy(img), ember.from_numpy(boxes), **kwargs)
        theirs = tv_utils.draw_bounding_boxes(torch.from_numpy(img), torch.from_numpy(boxes),
                                              **kwargs)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    masks = RNG.uniform(size=(3, 30, 40)) > 0.6
    for dtype in (np.uint8, np.float32):
        im = img if dtype == np.uint8 else (img / 255).astype(np.float32)
        np.testing.assert_allclose(
            utils.draw_segmentation_masks(ember.from_numpy(im), ember.from_numpy(masks), 0.6)
            .numpy(),
            tv_utils.draw_segmentation_masks(torch.from_numpy(im), torch.from_numpy(masks), 0.6)
            .numpy(), atol=1e-6)
    kp = RNG.uniform(0, 30, (2, 4, 2)).astype(np.float32)
    vis = np.array([[True, True, False, True], [True, False, True, True]])
    np.testing.assert_array_equal(
        utils.draw_keypoints(ember.from_numpy(img), ember.from_numpy(kp), [(0, 1), (1, 2)],
                             "blue", visibility=ember.from_numpy(vis)).numpy(),
        tv_utils.draw_keypoints(torch.from_numpy(img), torch.from_numpy(kp), [(0, 1), (1, 2)],
                                "blue", visibility=torch.from_numpy(vis)).numpy())


def test_flow_to_image():
    flow = RNG.standard_normal((2, 2, 9, 11)).astype(np.float32)
    np.testing.assert_array_equal(utils.flow_to_image(ember.from_numpy(flow)).numpy(),
                                  tv_utils.flow_to_image(torch.from_numpy(flow)).numpy())

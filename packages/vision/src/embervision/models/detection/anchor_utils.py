"""Anchor generators: AnchorGenerator (Faster R-CNN, RetinaNet, FCOS) and DefaultBoxGenerator
(SSD)."""

from __future__ import annotations

import math

import ember
from ember import nn
from embervision.models.detection.image_list import ImageList

__all__ = ["AnchorGenerator", "DefaultBoxGenerator"]


class AnchorGenerator(nn.Module):
    """Anchors of several sizes and aspect ratios at every position of every feature map.

    ``sizes[i]`` and ``aspect_ratios[i]`` are the anchors of the i-th feature map; each
    position gets ``len(sizes[i]) * len(aspect_ratios[i])`` anchors, centred on the position
    times the map's stride.

    Args:
        sizes (tuple of tuples of int): Default: ``((128, 256, 512),)``.
        aspect_ratios (tuple of tuples of float): height / width. Default:
            ``((0.5, 1.0, 2.0),)``.
    """

    def __init__(self, sizes=((128, 256, 512),), aspect_ratios=((0.5, 1.0, 2.0),)) -> None:
        super().__init__()
        if not isinstance(sizes[0], (list, tuple)):
            sizes = tuple((s,) for s in sizes)
        if not isinstance(aspect_ratios[0], (list, tuple)):
            aspect_ratios = (aspect_ratios,) * len(sizes)
        self.sizes = sizes
        self.aspect_ratios = aspect_ratios
        self.cell_anchors = [self.generate_anchors(size, ratios)
                             for size, ratios in zip(sizes, aspect_ratios)]

    def generate_anchors(self, scales, aspect_ratios, dtype=ember.float32, device="cpu"):
        """The ``(len(scales) * len(aspect_ratios), 4)`` anchors centred on 0, rounded."""
        scales = ember.as_tensor(scales, dtype=dtype, device=device)
        aspect_ratios = ember.as_tensor(aspect_ratios, dtype=dtype, device=device)
        h_ratios = ember.sqrt(aspect_ratios)
        w_ratios = 1 / h_ratios
        ws = (w_ratios[:, None] * scales[None, :]).reshape(-1)
        hs = (h_ratios[:, None] * scales[None, :]).reshape(-1)
        base = ember.stack([-ws, -hs, ws, hs], dim=1) / 2
        return base.round()

    def set_cell_anchors(self, dtype, device) -> None:
        self.cell_anchors = [a.to(dtype=dtype, device=device) for a in self.cell_anchors]

    def num_anchors_per_location(self) -> list[int]:
        return [len(s) * len(a) for s, a in zip(self.sizes, self.aspect_ratios)]

    def grid_anchors(self, grid_sizes, strides):
        """The anchors of every position of each map: one ``(H * W * A, 4)`` tensor per map."""
        anchors = []
        if not (len(grid_sizes) == len(strides) == len(self.cell_anchors)):
            raise ValueError("Anchors should be Tuple[Tuple[int]] because each feature map "
                             "could potentially have different sizes and aspect ratios. There "
                             "needs to be a match between the number of feature maps passed "
                             "and the number of sizes / aspect ratios specified.")
        for (h, w), (sh, sw), base in zip(grid_sizes, strides, self.cell_anchors):
            device = base.device
            shifts_x = ember.arange(0, w, dtype=ember.int32, device=device) * sw
            shifts_y = ember.arange(0, h, dtype=ember.int32, device=device) * sh
            shift_y, shift_x = ember.meshgrid(shifts_y, shifts_x, indexing="ij")
            shift_x, shift_y = shift_x.reshape(-1), shift_y.reshape(-1)
            shifts = ember.stack((shift_x, shift_y, shift_x, shift_y), dim=1)
            anchors.append((shifts.reshape(-1, 1, 4) + base.reshape(1, -1, 4)).reshape(-1, 4))
        return anchors

    def forward(self, image_list: ImageList, feature_maps):
        grid_sizes = [tuple(fm.shape[-2:]) for fm in feature_maps]
        image_size = tuple(image_list.tensors.shape[-2:])
        dtype, device = feature_maps[0].dtype, feature_maps[0].device
        strides = [(ember.tensor(image_size[0] // g[0], dtype=ember.int64, device=device),
                    ember.tensor(image_size[1] // g[1], dtype=ember.int64, device=device))
                   for g in grid_sizes]
        self.set_cell_anchors(dtype, device)
        per_level = self.grid_anchors(grid_sizes, strides)
        return [ember.cat(per_level) for _ in range(len(image_list.image_sizes))]


class DefaultBoxGenerator(nn.Module):
    """SSD's default boxes: at each position of the k-th map, two squares (``s_k`` and
    ``sqrt(s_k * s_{k+1})``) and a pair of boxes per aspect ratio.

    Args:
        aspect_ratios (list of lists of int): the extra aspect ratios of each map.
        min_ratio (float): the smallest scale, relative to the image. Default: 0.15.
        max_ratio (float): the largest. Default: 0.9.
        scales (list of float, optional): the scales themselves (one more than maps).
        steps (list of int, optional): the strides of the maps; from their sizes when None.
        clip (bool): clip the widths and heights to [0, 1]. Default: True.
    """

    def __init__(self, aspect_ratios, min_ratio: float = 0.15, max_ratio: float = 0.9,
                 scales=None, steps=None, clip: bool = True) -> None:
        super().__init__()
        if steps is not None and len(aspect_ratios) != len(steps):
            raise ValueError("aspect_ratios and steps should have the same length")
        self.aspect_ratios = aspect_ratios
        self.steps = steps
        self.clip = clip
        num_outputs = len(aspect_ratios)
        if scales is None:
            if num_outputs > 1:
                span = max_ratio - min_ratio
                self.scales = [min_ratio + span * k / (num_outputs - 1.0)
                               for k in range(num_outputs)]
                self.scales.append(1.0)
            else:
                self.scales = [min_ratio, max_ratio]
        else:
            self.scales = scales
        self._wh_pairs = self._generate_wh_pairs(num_outputs)

    def _generate_wh_pairs(self, num_outputs: int, dtype=ember.float32, device="cpu"):
        pairs = []
        for k in range(num_outputs):
            s_k = self.scales[k]
            s_prime = math.sqrt(self.scales[k] * self.scales[k + 1])
            wh = [[s_k, s_k], [s_prime, s_prime]]
            for ar in self.aspect_ratios[k]:
                root = math.sqrt(ar)
                w, h = s_k * root, s_k / root
                wh.extend([[w, h], [h, w]])
            pairs.append(ember.as_tensor(wh, dtype=dtype, device=device))
        return pairs

    def num_anchors_per_location(self) -> list[int]:
        return [2 + 2 * len(r) for r in self.aspect_ratios]

    def _grid_default_boxes(self, grid_sizes, image_size, dtype=ember.float32):
        boxes = []
        for k, f_k in enumerate(grid_sizes):
            if self.steps is not None:
                x_f_k, y_f_k = image_size[1] / self.steps[k], image_size[0] / self.steps[k]
            else:
                y_f_k, x_f_k = f_k
            shifts_x = ((ember.arange(0, f_k[1]) + 0.5) / x_f_k).to(dtype=dtype)
            shifts_y = ((ember.arange(0, f_k[0]) + 0.5) / y_f_k).to(dtype=dtype)
            shift_y, shift_x = ember.meshgrid(shifts_y, shifts_x, indexing="ij")
            shift_x, shift_y = shift_x.reshape(-1), shift_y.reshape(-1)
            shifts = ember.stack((shift_x, shift_y) * len(self._wh_pairs[k]), dim=-1).reshape(-1, 2)
            wh = self._wh_pairs[k].clamp(min=0, max=1) if self.clip else self._wh_pairs[k]
            boxes.append(ember.cat((shifts, wh.repeat(f_k[0] * f_k[1], 1)), dim=1))
        return ember.cat(boxes, dim=0)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}(aspect_ratios={self.aspect_ratios}, "
                f"clip={self.clip}, scales={self.scales}, steps={self.steps})")

    def forward(self, image_list: ImageList, feature_maps):
        grid_sizes = [tuple(fm.shape[-2:]) for fm in feature_maps]
        image_size = tuple(image_list.tensors.shape[-2:])
        dtype, device = feature_maps[0].dtype, feature_maps[0].device
        default = self._grid_default_boxes(grid_sizes, image_size, dtype=dtype).to(device)
        x_y_size = ember.tensor([image_size[1], image_size[0]], device=device)
        xyxy = ember.cat([(default[:, :2] - 0.5 * default[:, 2:]) * x_y_size,
                          (default[:, :2] + 0.5 * default[:, 2:]) * x_y_size], -1)
        return [xyxy for _ in image_list.image_sizes]

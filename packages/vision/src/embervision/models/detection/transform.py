"""GeneralizedRCNNTransform: normalizes, resizes and batches the input images (and their
targets) of the R-CNN family, RetinaNet, FCOS and SSD, and maps the detections back to the
original image sizes."""

from __future__ import annotations

import math

import ember
from ember import nn
from ember.nn import functional as F
from embervision.models.detection.image_list import ImageList

__all__ = ["GeneralizedRCNNTransform", "resize_boxes", "resize_keypoints"]


def _resize_scale(image_shape, min_size: float, max_size: float) -> float:
    # The scale that brings the short side to min_size without the long side passing max_size
    # (in Python floats, as torchvision's eager mode computes it).
    return min(min_size / min(image_shape), max_size / max(image_shape))


def _resize_image_and_masks(image, self_min_size, self_max_size, target=None, fixed_size=None):
    size = scale_factor = recompute = None
    if fixed_size is not None:
        size = [fixed_size[1], fixed_size[0]]
    else:
        scale_factor = _resize_scale(tuple(image.shape[-2:]), self_min_size, self_max_size)
        recompute = True
    image = F.interpolate(image[None], size=size, scale_factor=scale_factor, mode="bilinear",
                          recompute_scale_factor=recompute, align_corners=False)[0]
    if target is not None and "masks" in target:
        mask = F.interpolate(target["masks"][:, None].float(), size=size,
                             scale_factor=scale_factor, recompute_scale_factor=recompute)
        target["masks"] = mask[:, 0].byte()
    return image, target


def _ratios(original_size, new_size, device):
    return [ember.tensor(float(s), dtype=ember.float32, device=device)
            / ember.tensor(float(o), dtype=ember.float32, device=device)
            for s, o in zip(new_size, original_size)]


def resize_boxes(boxes: ember.Tensor, original_size, new_size) -> ember.Tensor:
    """``(x1, y1, x2, y2)`` boxes of an image of ``original_size`` moved to ``new_size``."""
    ratio_h, ratio_w = _ratios(original_size, new_size, boxes.device)
    xmin, ymin, xmax, ymax = boxes.unbind(1)
    return ember.stack((xmin * ratio_w, ymin * ratio_h, xmax * ratio_w, ymax * ratio_h), dim=1)


def resize_keypoints(keypoints: ember.Tensor, original_size, new_size) -> ember.Tensor:
    """``(..., K, 3)`` keypoints ``(x, y, visibility)`` moved to ``new_size``."""
    ratio_h, ratio_w = _ratios(original_size, new_size, keypoints.device)
    scale = ember.stack([ratio_w, ratio_h, ember.ones_like(ratio_w)]).to(keypoints.dtype)
    return keypoints * scale if keypoints.shape[-1] == 3 else ember.cat(
        [keypoints[..., :2] * scale[:2], keypoints[..., 2:]], dim=-1)


def detection_transform(min_size, max_size, image_mean=None, image_std=None, **kwargs):
    """GeneralizedRCNNTransform with ImageNet's mean and std where none is given."""
    if image_mean is None:
        image_mean = [0.485, 0.456, 0.406]
    if image_std is None:
        image_std = [0.229, 0.224, 0.225]
    return GeneralizedRCNNTransform(min_size, max_size, image_mean, image_std, **kwargs)


class GeneralizedRCNNTransform(nn.Module):
    """Input and target transformation of the detection models.

    Each image is normalized with ``image_mean``/``image_std``, resized so that its short side
    is ``min_size`` (one of them at random in training) and its long side at most
    ``max_size`` (or to ``fixed_size``), and the images are zero-padded into one batch whose
    sides are multiples of ``size_divisible``. Target boxes, masks and keypoints follow.

    Args:
        min_size (int or tuple of int), max_size (int), image_mean (3 floats),
        image_std (3 floats), size_divisible (int): Default: 32.
        fixed_size (tuple of (int, int), optional): ``(width, height)`` of every image.
    """

    def __init__(self, min_size, max_size: int, image_mean, image_std,
                 size_divisible: int = 32, fixed_size=None, **kwargs) -> None:
        super().__init__()
        if not isinstance(min_size, (list, tuple)):
            min_size = (min_size,)
        self.min_size = min_size
        self.max_size = max_size
        self.image_mean = image_mean
        self.image_std = image_std
        self.size_divisible = size_divisible
        self.fixed_size = fixed_size
        # Other keywords are ignored, as torchvision ignores them (SSDlite's builder hands its
        # keywords to both the backbone and the model).
        self._skip_resize = kwargs.pop("_skip_resize", False)

    def forward(self, images, targets=None):
        images = list(images)
        if targets is not None:
            targets = [dict(t) for t in targets]
        for i, image in enumerate(images):
            target = targets[i] if targets is not None else None
            if image.dim() != 3:
                raise ValueError("images is expected to be a list of 3d tensors of shape "
                                 f"[C, H, W], got {tuple(image.shape)}")
            image = self.normalize(image)
            image, target = self.resize(image, target)
            images[i] = image
            if targets is not None and target is not None:
                targets[i] = target
        image_sizes = [(int(img.shape[-2]), int(img.shape[-1])) for img in images]
        batched = self.batch_images(images, size_divisible=self.size_divisible)
        return ImageList(batched, image_sizes), targets

    def normalize(self, image: ember.Tensor) -> ember.Tensor:
        if not image.is_floating_point():
            raise TypeError("Expected input images to be of floating type (in range [0, 1]), "
                            f"but found type {image.dtype} instead")
        mean = ember.as_tensor(self.image_mean, dtype=image.dtype, device=image.device)
        std = ember.as_tensor(self.image_std, dtype=image.dtype, device=image.device)
        return (image - mean[:, None, None]) / std[:, None, None]

    def torch_choice(self, k):
        """One element of ``k`` drawn with ember's generator."""
        index = int(ember.empty(1).uniform_(0.0, float(len(k))).item())
        return k[index]

    def resize(self, image, target=None):
        h, w = image.shape[-2:]
        if self.training:
            if self._skip_resize:
                return image, target
            size = self.torch_choice(self.min_size)
        else:
            size = self.min_size[-1]
        image, target = _resize_image_and_masks(image, size, self.max_size, target,
                                                self.fixed_size)
        if target is None:
            return image, target
        new_size = tuple(image.shape[-2:])
        target["boxes"] = resize_boxes(target["boxes"], (h, w), new_size)
        if "keypoints" in target:
            target["keypoints"] = resize_keypoints(target["keypoints"], (h, w), new_size)
        return image, target

    def max_by_axis(self, the_list):
        maxes = list(the_list[0])
        for sublist in the_list[1:]:
            for index, item in enumerate(sublist):
                maxes[index] = max(maxes[index], item)
        return maxes

    def batch_images(self, images, size_divisible: int = 32) -> ember.Tensor:
        """The images zero-padded at the bottom and right into one ``(N, C, H, W)`` tensor."""
        max_size = self.max_by_axis([list(img.shape) for img in images])
        stride = float(size_divisible)
        max_size[1] = int(math.ceil(float(max_size[1]) / stride) * stride)
        max_size[2] = int(math.ceil(float(max_size[2]) / stride) * stride)
        padded = [F.pad(img, (0, max_size[2] - img.shape[2], 0, max_size[1] - img.shape[1],
                              0, max_size[0] - img.shape[0])) for img in images]
        return ember.stack(padded, dim=0)

    def postprocess(self, result, image_shapes, original_image_sizes):
        """Moves the detections from the resized images back to the original ones (and
        pastes the masks into them)."""
        if self.training:
            return result
        from embervision.models.detection.roi_heads import paste_masks_in_image

        for pred, im_s, o_im_s in zip(result, image_shapes, original_image_sizes):
            boxes = resize_boxes(pred["boxes"], im_s, o_im_s)
            pred["boxes"] = boxes
            if "masks" in pred:
                pred["masks"] = paste_masks_in_image(pred["masks"], boxes, o_im_s)
            if "keypoints" in pred:
                pred["keypoints"] = resize_keypoints(pred["keypoints"], im_s, o_im_s)
        return result

    def __repr__(self) -> str:
        indent = "\n    "
        return (f"{self.__class__.__name__}({indent}Normalize(mean={self.image_mean}, "
                f"std={self.image_std}){indent}Resize(min_size={self.min_size}, "
                f"max_size={self.max_size}, mode='bilinear')\n)")

"""MS COCO detection and captions, from the annotation JSON (no pycocotools needed)."""

from __future__ import annotations

import json
import os

from PIL import Image

from embervision.datasets.vision import VisionDataset

__all__ = ["CocoCaptions", "CocoDetection"]


class CocoDetection(VisionDataset):
    """MS COCO detection (Lin et al., 2014): each image with the list of its annotation dicts
    (``bbox``, ``category_id``, ``segmentation``, ``area``, ``iscrowd`` ...), as
    ``pycocotools``' ``loadAnns`` gives them.

    Args:
        root (str or ``pathlib.Path``): the folder of the images.
        annFile (str): the annotation JSON (e.g. ``instances_train2017.json``).
        transform (callable, optional): transforms the PIL image.
        target_transform (callable, optional): transforms the target.
        transforms (callable, optional): takes and returns the image and target.

    Images are loaded lazily, in the order of their ids.
    """

    def __init__(self, root, annFile, transform=None, target_transform=None, transforms=None):
        super().__init__(root, transforms, transform, target_transform)
        try:
            with open(annFile) as f:
                dataset = json.load(f)
        except json.JSONDecodeError as error:
            raise RuntimeError(f"could not parse the COCO annotation file {annFile}: "
                               f"{error}") from error
        if not isinstance(dataset, dict) or "images" not in dataset:
            raise RuntimeError(f"{annFile} is not a COCO annotation file (no 'images' list)")
        self.imgs = {img["id"]: img for img in dataset["images"]}
        self.img_to_anns = {img_id: [] for img_id in self.imgs}
        for ann in dataset.get("annotations", []):
            self.img_to_anns.setdefault(ann["image_id"], []).append(ann)
        self.cats = {cat["id"]: cat for cat in dataset.get("categories", [])}
        self.ids = sorted(self.imgs.keys())

    def _load_image(self, id: int) -> Image.Image:
        path = self.imgs[id]["file_name"]
        return Image.open(os.path.join(self.root, path)).convert("RGB")

    def _load_target(self, id: int):
        return list(self.img_to_anns.get(id, []))

    def __getitem__(self, index: int):
        if not isinstance(index, int):
            raise ValueError(f"Index must be of type integer, got {type(index)} instead.")
        id = self.ids[index]
        image = self._load_image(id)
        target = self._load_target(id)
        if self.transforms is not None:
            image, target = self.transforms(image, target)
        return image, target

    def __len__(self) -> int:
        return len(self.ids)


class CocoCaptions(CocoDetection):
    """MS COCO captions: each image with the list of its caption strings.

    Args:
        root (str or ``pathlib.Path``): the folder of the images.
        annFile (str): the caption annotation JSON (e.g. ``captions_train2017.json``).
        transform (callable, optional): transforms the PIL image.
        target_transform (callable, optional): transforms the captions.
        transforms (callable, optional): takes and returns the image and target.
    """

    def _load_target(self, id: int):
        return [ann["caption"] for ann in super()._load_target(id)]

"""The Oxford-IIIT Pet dataset: 37 breeds of cats and dogs, with trimap segmentations."""

from __future__ import annotations

import os

from PIL import Image

from embervision.datasets.utils import download_and_extract_archive, verify_str_arg
from embervision.datasets.vision import VisionDataset

__all__ = ["OxfordIIITPet"]


class OxfordIIITPet(VisionDataset):
    """Oxford-IIIT Pet (Parkhi et al., 2012).

    Args:
        root (str or ``pathlib.Path``): holds ``oxford-iiit-pet`` (``images/`` and
            ``annotations/``).
        split (str): ``"trainval"`` or ``"test"``.
        target_types (str or sequence of str): ``"category"`` (the breed, 0-36),
            ``"binary-category"`` (0 cat, 1 dog) and/or ``"segmentation"`` (the trimap, a PIL
            image); several give a tuple, none gives ``None``.
        transforms (callable, optional): takes and returns the image and target.
        transform (callable, optional): transforms the PIL image.
        target_transform (callable, optional): transforms the target.
        download (bool): download and extract the archives (md5-checked). Default: False.
    """

    _RESOURCES = (
        ("https://www.robots.ox.ac.uk/~vgg/data/pets/data/images.tar.gz",
         "5c4f3ee8e5d25df40f4fd59a7f44e54c"),
        ("https://www.robots.ox.ac.uk/~vgg/data/pets/data/annotations.tar.gz",
         "95a8c909bbe2e81eed6a22bccdf3f68f"),
    )
    _VALID_TARGET_TYPES = ("category", "binary-category", "segmentation")

    def __init__(self, root, split: str = "trainval", target_types="category", transforms=None,
                 transform=None, target_transform=None, download: bool = False):
        self._split = verify_str_arg(split, "split", ("trainval", "test"))
        if isinstance(target_types, str):
            target_types = [target_types]
        self._target_types = [verify_str_arg(t, "target_types", self._VALID_TARGET_TYPES)
                              for t in target_types]
        super().__init__(root, transforms=transforms, transform=transform,
                         target_transform=target_transform)
        self._base_folder = os.path.join(self.root, "oxford-iiit-pet")
        self._images_folder = os.path.join(self._base_folder, "images")
        self._anns_folder = os.path.join(self._base_folder, "annotations")
        self._segs_folder = os.path.join(self._anns_folder, "trimaps")
        if download:
            self._download()
        if not self._check_exists():
            raise RuntimeError("Dataset not found. You can use download=True to download it")
        image_ids, self._labels, self._bin_labels = [], [], []
        with open(os.path.join(self._anns_folder, f"{self._split}.txt")) as file:
            for line in file:
                if not line.strip():
                    continue
                image_id, label, bin_label, _ = line.strip().split()
                image_ids.append(image_id)
                self._labels.append(int(label) - 1)
                self._bin_labels.append(int(bin_label) - 1)
        self.bin_classes = ["Cat", "Dog"]
        breeds = sorted({(image_id.rsplit("_", 1)[0], label)
                         for image_id, label in zip(image_ids, self._labels)},
                        key=lambda pair: pair[1])
        self.classes = [" ".join(part.title() for part in raw.split("_")) for raw, _ in breeds]
        self.bin_class_to_idx = dict(zip(self.bin_classes, range(len(self.bin_classes))))
        self.class_to_idx = dict(zip(self.classes, range(len(self.classes))))
        self._images = [os.path.join(self._images_folder, f"{i}.jpg") for i in image_ids]
        self._segs = [os.path.join(self._segs_folder, f"{i}.png") for i in image_ids]

    def __len__(self) -> int:
        return len(self._images)

    def __getitem__(self, idx: int):
        image = Image.open(self._images[idx]).convert("RGB")
        target = []
        for target_type in self._target_types:
            if target_type == "category":
                target.append(self._labels[idx])
            elif target_type == "binary-category":
                target.append(self._bin_labels[idx])
            else:
                target.append(Image.open(self._segs[idx]))
        target = None if not target else target[0] if len(target) == 1 else tuple(target)
        if self.transforms:
            image, target = self.transforms(image, target)
        return image, target

    def _check_exists(self) -> bool:
        return all(os.path.isdir(folder) for folder in (self._images_folder, self._anns_folder))

    def _download(self) -> None:
        if self._check_exists():
            return
        for url, md5 in self._RESOURCES:
            download_and_extract_archive(url, download_root=self._base_folder, md5=md5)

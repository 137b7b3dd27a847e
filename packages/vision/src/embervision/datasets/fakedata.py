"""``FakeData``: random images, the same for the same index."""

from __future__ import annotations

import ember
from embervision.datasets.vision import VisionDataset
from embervision.transforms._functional_conversion import to_pil_image

__all__ = ["FakeData"]


class FakeData(VisionDataset):
    """Random images and labels; item ``i`` is drawn from a generator seeded with
    ``i + random_offset``, so it is the same every time, and the global RNG is untouched.

    Args:
        size (int): the number of items. Default: 1000.
        image_size (tuple): ``(C, H, W)``. Default: ``(3, 224, 224)``.
        num_classes (int): Default: 10.
        transform (callable, optional): transforms the PIL image.
        target_transform (callable, optional): transforms the label.
        random_offset (int): shifts the seeds. Default: 0.
    """

    def __init__(self, size: int = 1000, image_size=(3, 224, 224), num_classes: int = 10,
                 transform=None, target_transform=None, random_offset: int = 0):
        super().__init__(transform=transform, target_transform=target_transform)
        self.size = size
        self.num_classes = num_classes
        self.image_size = tuple(image_size)
        self.random_offset = random_offset

    def __getitem__(self, index: int):
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"{self.__class__.__name__} index out of range")
        gen = ember.Generator().manual_seed(index + self.random_offset)
        img = ember.randn(*self.image_size, generator=gen)
        target = int(ember.randint(0, self.num_classes, (1,), generator=gen).item())
        img = to_pil_image(img)
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self) -> int:
        return self.size

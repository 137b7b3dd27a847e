"""Datasets of files in one folder per class: ``DatasetFolder`` and ``ImageFolder``."""

from __future__ import annotations

import os

from PIL import Image

from embervision.datasets.vision import VisionDataset

__all__ = [
    "IMG_EXTENSIONS",
    "DatasetFolder",
    "ImageFolder",
    "default_loader",
    "find_classes",
    "has_file_allowed_extension",
    "is_image_file",
    "make_dataset",
    "pil_loader",
]

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


def has_file_allowed_extension(filename: str, extensions) -> bool:
    """Whether ``filename`` ends with one of ``extensions`` (case-insensitive)."""
    exts = extensions if isinstance(extensions, str) else tuple(extensions)
    return filename.lower().endswith(exts)


def is_image_file(filename: str) -> bool:
    """Whether ``filename`` has an image extension."""
    return has_file_allowed_extension(filename, IMG_EXTENSIONS)


def find_classes(directory):
    """The sorted class folder names of ``directory`` and their indices."""
    directory = os.fspath(directory)
    classes = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())
    if not classes:
        raise FileNotFoundError(f"Couldn't find any class folder in {directory}.")
    return classes, {name: i for i, name in enumerate(classes)}


def make_dataset(directory, class_to_idx=None, extensions=None, is_valid_file=None,
                 allow_empty: bool = False):
    """``(path, class_index)`` pairs of the files under each class folder, in sorted order.

    Exactly one of ``extensions`` and ``is_valid_file`` must be given. A class without any
    valid file raises ``FileNotFoundError`` unless ``allow_empty``.
    """
    directory = os.path.expanduser(os.fspath(directory))
    if class_to_idx is None:
        _, class_to_idx = find_classes(directory)
    elif not class_to_idx:
        raise ValueError("'class_to_index' must have at least one entry to collect any samples.")
    if (extensions is None) == (is_valid_file is None):
        raise ValueError("Both extensions and is_valid_file cannot be None or not None at the "
                         "same time")
    if extensions is not None:
        def is_valid_file(path):
            return has_file_allowed_extension(path, extensions)

    instances = []
    found = set()
    for target_class in sorted(class_to_idx):
        index = class_to_idx[target_class]
        target_dir = os.path.join(directory, target_class)
        if not os.path.isdir(target_dir):
            continue
        for root, _, fnames in sorted(os.walk(target_dir, followlinks=True)):
            for fname in sorted(fnames):
                path = os.path.join(root, fname)
                if is_valid_file(path):
                    instances.append((path, index))
                    found.add(target_class)
    empty = set(class_to_idx) - found
    if empty and not allow_empty:
        msg = f"Found no valid file for the classes {', '.join(sorted(empty))}. "
        if extensions is not None:
            exts = extensions if isinstance(extensions, str) else ", ".join(extensions)
            msg += f"Supported extensions are: {exts}"
        raise FileNotFoundError(msg)
    return instances


def pil_loader(path) -> Image.Image:
    """Opens an image file with Pillow and converts it to RGB."""
    with open(path, "rb") as f:
        img = Image.open(f)
        return img.convert("RGB")


def default_loader(path):
    """The default image loader: :func:`pil_loader`."""
    return pil_loader(path)


class DatasetFolder(VisionDataset):
    """Samples laid out as ``root/<class>/**/<file>``.

    Args:
        root (str or ``pathlib.Path``): the folder of class folders.
        loader (callable): loads a sample from its path.
        extensions (tuple of str, optional): the accepted file extensions.
        transform (callable, optional): transforms a sample.
        target_transform (callable, optional): transforms a class index.
        is_valid_file (callable, optional): decides from a path whether it is a sample;
            excludes ``extensions``.
        allow_empty (bool): accept class folders without samples. Default: False.

    Attributes:
        classes (list): the class names, sorted.
        class_to_idx (dict): name -> index.
        samples (list): ``(path, class_index)`` pairs.
        targets (list): the class index of each sample.
    """

    def __init__(self, root, loader, extensions=None, transform=None, target_transform=None,
                 is_valid_file=None, allow_empty: bool = False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        classes, class_to_idx = self.find_classes(self.root)
        samples = self.make_dataset(self.root, class_to_idx, extensions, is_valid_file,
                                    allow_empty)
        self.loader = loader
        self.extensions = extensions
        self.classes = classes
        self.class_to_idx = class_to_idx
        self.samples = samples
        self.targets = [s[1] for s in samples]

    @staticmethod
    def make_dataset(directory, class_to_idx, extensions=None, is_valid_file=None,
                     allow_empty: bool = False):
        """See :func:`make_dataset`; override to change how samples are found."""
        if class_to_idx is None:
            raise ValueError("The class_to_idx parameter cannot be None.")
        return make_dataset(directory, class_to_idx, extensions, is_valid_file, allow_empty)

    def find_classes(self, directory):
        """See :func:`find_classes`; override to change how classes are found."""
        return find_classes(directory)

    def __getitem__(self, index: int):
        path, target = self.samples[index]
        sample = self.loader(path)
        if self.transform is not None:
            sample = self.transform(sample)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return sample, target

    def __len__(self) -> int:
        return len(self.samples)


class ImageFolder(DatasetFolder):
    """Images laid out as ``root/<class>/**/<image>``; :class:`DatasetFolder` with image
    extensions and the PIL loader.

    Args:
        root (str or ``pathlib.Path``): the folder of class folders.
        transform (callable, optional): transforms a PIL image.
        target_transform (callable, optional): transforms a class index.
        loader (callable): Default: :func:`default_loader` (PIL, RGB).
        is_valid_file (callable, optional): replaces the extension check.
        allow_empty (bool): Default: False.

    Examples::

        >>> ds = ImageFolder("data/train", transform=transforms.ToTensor())
        >>> image, label = ds[0]
    """

    def __init__(self, root, transform=None, target_transform=None, loader=default_loader,
                 is_valid_file=None, allow_empty: bool = False):
        super().__init__(root, loader, IMG_EXTENSIONS if is_valid_file is None else None,
                         transform=transform, target_transform=target_transform,
                         is_valid_file=is_valid_file, allow_empty=allow_empty)
        self.imgs = self.samples

"""PASCAL VOC segmentation and detection (2007-2012)."""

from __future__ import annotations

import collections
import os
from xml.etree.ElementTree import Element, ParseError
from xml.etree.ElementTree import parse as et_parse

from PIL import Image

from embervision.datasets.utils import download_and_extract_archive, verify_str_arg
from embervision.datasets.vision import VisionDataset

__all__ = ["VOCDetection", "VOCSegmentation"]

DATASET_YEAR_DICT = {
    "2012": {"url": "https://thor.robots.ox.ac.uk/pascal/VOC/voc2012/VOCtrainval_11-May-2012.tar",
             "filename": "VOCtrainval_11-May-2012.tar",
             "md5": "6cd6e144f989b92b3379bac3b3de84fd", "base_dir": "VOCdevkit/VOC2012"},
    "2011": {"url": "https://thor.robots.ox.ac.uk/pascal/VOC/voc2011/VOCtrainval_25-May-2011.tar",
             "filename": "VOCtrainval_25-May-2011.tar",
             "md5": "6c3384ef61512963050cb5d687e5bf1e",
             "base_dir": "TrainVal/VOCdevkit/VOC2011"},
    "2010": {"url": "https://thor.robots.ox.ac.uk/pascal/VOC/voc2010/VOCtrainval_03-May-2010.tar",
             "filename": "VOCtrainval_03-May-2010.tar",
             "md5": "da459979d0c395079b5c75ee67908abb", "base_dir": "VOCdevkit/VOC2010"},
    "2009": {"url": "https://thor.robots.ox.ac.uk/pascal/VOC/voc2009/VOCtrainval_11-May-2009.tar",
             "filename": "VOCtrainval_11-May-2009.tar",
             "md5": "a3e00b113cfcfebf17e343f59da3caa1", "base_dir": "VOCdevkit/VOC2009"},
    "2008": {"url": "https://thor.robots.ox.ac.uk/pascal/VOC/voc2008/VOCtrainval_14-Jul-2008.tar",
             "filename": "VOCtrainval_11-May-2012.tar",
             "md5": "2629fa636546599198acfcfbfcf1904a", "base_dir": "VOCdevkit/VOC2008"},
    "2007": {"url": "https://thor.robots.ox.ac.uk/pascal/VOC/voc2007/VOCtrainval_06-Nov-2007.tar",
             "filename": "VOCtrainval_06-Nov-2007.tar",
             "md5": "c52e279531787c972589f7e41ab4ae64", "base_dir": "VOCdevkit/VOC2007"},
    "2007-test": {"url": "https://thor.robots.ox.ac.uk/pascal/VOC/voc2007/VOCtest_06-Nov-2007.tar",
                  "filename": "VOCtest_06-Nov-2007.tar",
                  "md5": "b6e924de25625d8de591ea690078ad9f", "base_dir": "VOCdevkit/VOC2007"},
}


class _VOCBase(VisionDataset):
    _SPLITS_DIR: str
    _TARGET_DIR: str
    _TARGET_FILE_EXT: str

    def __init__(self, root, year: str = "2012", image_set: str = "train",
                 download: bool = False, transform=None, target_transform=None,
                 transforms=None):
        super().__init__(root, transforms, transform, target_transform)
        self.year = verify_str_arg(year, "year", [str(y) for y in range(2007, 2013)])
        valid_image_sets = ["train", "trainval", "val"] + (["test"] if year == "2007" else [])
        self.image_set = verify_str_arg(image_set, "image_set", valid_image_sets)
        key = "2007-test" if year == "2007" and image_set == "test" else year
        dataset_year_dict = DATASET_YEAR_DICT[key]
        self.url = dataset_year_dict["url"]
        self.filename = dataset_year_dict["filename"]
        self.md5 = dataset_year_dict["md5"]
        voc_root = os.path.join(self.root, *dataset_year_dict["base_dir"].split("/"))
        if download:
            download_and_extract_archive(self.url, self.root, filename=self.filename,
                                         md5=self.md5)
        if not os.path.isdir(voc_root):
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to "
                               "download it")
        split_f = os.path.join(voc_root, "ImageSets", self._SPLITS_DIR,
                               image_set.rstrip("\n") + ".txt")
        with open(split_f) as f:
            file_names = [x.strip() for x in f.readlines() if x.strip()]
        self.images = [os.path.join(voc_root, "JPEGImages", x + ".jpg") for x in file_names]
        target_dir = os.path.join(voc_root, self._TARGET_DIR)
        self.targets = [os.path.join(target_dir, x + self._TARGET_FILE_EXT) for x in file_names]

    def __len__(self) -> int:
        return len(self.images)


class VOCSegmentation(_VOCBase):
    """PASCAL VOC segmentation: each image with its class map (a PIL ``P`` image; 255 marks
    the borders).

    Args:
        root (str or ``pathlib.Path``): holds ``VOCdevkit``.
        year (str): ``"2007"`` to ``"2012"``. Default: ``"2012"``.
        image_set (str): ``"train"``, ``"trainval"`` or ``"val"`` (and ``"test"`` for 2007).
        download (bool): download and extract the archive (md5-checked). Default: False.
        transform (callable, optional): transforms the PIL image.
        target_transform (callable, optional): transforms the target.
        transforms (callable, optional): takes and returns the image and target.
    """

    _SPLITS_DIR = "Segmentation"
    _TARGET_DIR = "SegmentationClass"
    _TARGET_FILE_EXT = ".png"

    @property
    def masks(self) -> list:
        return self.targets

    def __getitem__(self, index: int):
        img = Image.open(self.images[index]).convert("RGB")
        target = Image.open(self.masks[index])
        if self.transforms is not None:
            img, target = self.transforms(img, target)
        return img, target


class VOCDetection(_VOCBase):
    """PASCAL VOC detection: each image with its annotation XML as a nested dict
    (``{"annotation": {"filename": ..., "size": ..., "object": [{"name": ..., "bndbox":
    {"xmin": ...}}, ...]}}``, strings as in the file).

    Args:
        root (str or ``pathlib.Path``): holds ``VOCdevkit``.
        year (str): ``"2007"`` to ``"2012"``. Default: ``"2012"``.
        image_set (str): ``"train"``, ``"trainval"`` or ``"val"`` (and ``"test"`` for 2007).
        download (bool): download and extract the archive (md5-checked). Default: False.
        transform (callable, optional): transforms the PIL image.
        target_transform (callable, optional): transforms the target.
        transforms (callable, optional): takes and returns the image and target.
    """

    _SPLITS_DIR = "Main"
    _TARGET_DIR = "Annotations"
    _TARGET_FILE_EXT = ".xml"

    @property
    def annotations(self) -> list:
        return self.targets

    def __getitem__(self, index: int):
        img = Image.open(self.images[index]).convert("RGB")
        try:
            target = self.parse_voc_xml(et_parse(self.annotations[index]).getroot())
        except ParseError as error:
            raise RuntimeError(f"could not parse the VOC annotation {self.annotations[index]}: "
                               f"{error}") from error
        if self.transforms is not None:
            img, target = self.transforms(img, target)
        return img, target

    @staticmethod
    def parse_voc_xml(node: Element) -> dict:
        """The XML tree as nested dicts; repeated tags become lists, ``object`` always is."""
        voc_dict = {}
        children = list(node)
        if children:
            def_dic = collections.defaultdict(list)
            for dc in map(VOCDetection.parse_voc_xml, children):
                for ind, v in dc.items():
                    def_dic[ind].append(v)
            if node.tag == "annotation":
                def_dic["object"] = [def_dic["object"]]
            voc_dict = {node.tag: {ind: v[0] if len(v) == 1 else v
                                   for ind, v in def_dic.items()}}
        if node.text:
            text = node.text.strip()
            if not children:
                voc_dict[node.tag] = text
        return voc_dict

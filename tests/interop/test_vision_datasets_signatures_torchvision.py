"""The datasets added with transforms v2 take torchvision 0.29's arguments, defaults and
download addresses (``nox -s vision_torch``)."""

import inspect

import pytest

torchvision = pytest.importorskip("torchvision")

from embervision import datasets as D  # noqa: E402

NAMES = ["STL10", "SVHN", "Flowers102", "Food101", "OxfordIIITPet", "VOCDetection",
         "VOCSegmentation", "CocoDetection", "CocoCaptions", "CelebA", "ImageNet"]


def _params(obj):
    # a class's constructor arguments, or a function's
    target = obj.__init__ if isinstance(obj, type) else obj
    return [(p.name, p.default if p.default is inspect.Parameter.empty
             or isinstance(p.default, (str, int, bool, type(None))) else "<callable>")
            for p in inspect.signature(target).parameters.values()]


@pytest.mark.parametrize("name", NAMES)
def test_signature(name):
    assert _params(getattr(D, name)) == _params(getattr(torchvision.datasets, name))


def test_download_addresses():
    from torchvision.datasets import voc as tv_voc

    from embervision.datasets import voc

    assert voc.DATASET_YEAR_DICT == tv_voc.DATASET_YEAR_DICT
    ref, ours = torchvision.datasets.STL10, D.STL10
    assert (ours.url, ours.tgz_md5, ours.train_list, ours.test_list) == (
        ref.url, ref.tgz_md5, ref.train_list, ref.test_list)
    assert (D.Food101._URL, D.Food101._MD5) == (torchvision.datasets.Food101._URL,
                                                torchvision.datasets.Food101._MD5)
    assert D.OxfordIIITPet._RESOURCES == torchvision.datasets.OxfordIIITPet._RESOURCES
    assert D.SVHN.split_list == torchvision.datasets.SVHN.split_list
    assert (D.Flowers102._download_url_prefix, D.Flowers102._file_dict) == (
        torchvision.datasets.Flowers102._download_url_prefix,
        torchvision.datasets.Flowers102._file_dict)
    assert (D.CelebA.base_folder, D.CelebA.file_list) == (torchvision.datasets.CelebA.base_folder,
                                                          torchvision.datasets.CelebA.file_list)
    from torchvision.datasets import imagenet as tv_imagenet

    from embervision.datasets import imagenet

    assert (imagenet.ARCHIVE_META, imagenet.META_FILE) == (tv_imagenet.ARCHIVE_META,
                                                           tv_imagenet.META_FILE)


@pytest.mark.parametrize("name", ["download_file_from_google_drive", "download_url",
                                  "extract_archive", "check_integrity"])
def test_utils_signatures(name):
    from torchvision.datasets import utils as tv_utils

    from embervision.datasets import utils

    assert _params(getattr(utils, name)) == _params(getattr(tv_utils, name))


@pytest.mark.parametrize("name", ["parse_devkit_archive", "parse_train_archive",
                                  "parse_val_archive", "load_meta_file"])
def test_imagenet_parser_signatures(name):
    from torchvision.datasets import imagenet as tv_imagenet

    from embervision.datasets import imagenet

    assert _params(getattr(imagenet, name)) == _params(getattr(tv_imagenet, name))

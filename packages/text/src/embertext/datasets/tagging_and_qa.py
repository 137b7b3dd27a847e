"""Sequence tagging (CoNLL2000Chunking, UDPOS), question answering (SQuAD1, SQuAD2) and
translation (Multi30k) datasets."""

import json
import os

from embertext.datasets import _base

__all__ = ["CoNLL2000Chunking", "UDPOS", "SQuAD1", "SQuAD2", "Multi30k"]

# the number of examples of each split
NUM_LINES = {
    "CoNLL2000Chunking": {"train": 8936, "test": 2012},
    "UDPOS": {"train": 12543, "valid": 2002, "test": 2077},
    "Multi30k": {"train": 29000, "valid": 1014, "test": 1000},
    "SQuAD1": {"train": 87599, "dev": 10570},
    "SQuAD2": {"train": 130319, "dev": 11873},
}

CONLL_URL = {"train": "https://www.clips.uantwerpen.be/conll2000/chunking/train.txt.gz",
             "test": "https://www.clips.uantwerpen.be/conll2000/chunking/test.txt.gz"}
CONLL_MD5 = {"train": "6969c2903a1f19a83569db643e43dcc8",
             "test": "a916e1c2d83eb3004b38fc6fcd628939"}


@_base.dataset("CoNLL2000Chunking", ("train", "test"))
def CoNLL2000Chunking(root, split):
    """CoNLL-2000 chunking: each sentence as ``[words, part-of-speech tags, chunk tags]``.

    Number of lines per split: train 8936, test 2012.

    Args:
        root (str): the cache folder; the data goes to ``root/datasets/CoNLL2000Chunking``.
        split: ``"train"``, ``"test"`` or a tuple of them.
    """
    import gzip
    import shutil

    url = CONLL_URL[split]
    archive = _base.download(url, os.path.join(root, os.path.basename(url)), CONLL_MD5[split])
    path = os.path.join(root, f"{split}.txt")
    if not os.path.exists(path):
        with gzip.open(archive, "rb") as source, open(path + ".part", "wb") as out:
            shutil.copyfileobj(source, out)
        os.replace(path + ".part", path)
    yield from _base.read_iob(path, sep=" ")


UDPOS_URL = "https://bitbucket.org/sivareddyg/public/downloads/en-ud-v2.zip"
UDPOS_MD5 = "bdcac7c52d934656bae1699541424545"
UDPOS_FILES = {"train": "train.txt", "valid": "dev.txt", "test": "test.txt"}


@_base.dataset("UDPOS", ("train", "valid", "test"))
def UDPOS(root, split):
    """Universal Dependencies English part-of-speech tagging: each sentence as
    ``[words, universal tags, Penn tags]``.

    Number of lines per split: train 12543, valid 2002, test 2077.

    Args:
        root (str): the cache folder; the data goes to ``root/datasets/UDPOS``.
        split: ``"train"``, ``"valid"``, ``"test"`` or a tuple of them.
    """
    archive = _base.download(UDPOS_URL, os.path.join(root, "en-ud-v2.zip"), UDPOS_MD5)
    name = UDPOS_FILES[split]
    yield from _base.read_iob(_base.extract_matching(archive, name, os.path.join(root, name)))


SQUAD = {
    "SQuAD1": {"train": ("https://rajpurkar.github.io/SQuAD-explorer/dataset/train-v1.1.json",
                         "981b29407e0affa3b1b156f72073b945"),
               "dev": ("https://rajpurkar.github.io/SQuAD-explorer/dataset/dev-v1.1.json",
                       "3e85deb501d4e538b6bc56f786231552")},
    "SQuAD2": {"train": ("https://rajpurkar.github.io/SQuAD-explorer/dataset/train-v2.0.json",
                         "62108c273c268d70893182d5cf8df740"),
               "dev": ("https://rajpurkar.github.io/SQuAD-explorer/dataset/dev-v2.0.json",
                       "246adae8b7002f8679c027697b0b7cf8")},
}


def _squad(name, root, split):
    url, md5 = SQUAD[name][split]
    path = _base.download(url, os.path.join(root, os.path.basename(url)), md5)
    with open(path, encoding="utf-8") as f:
        articles = json.load(f)["data"]
    for article in articles:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                answers = [a["text"] for a in qa["answers"]] or [""]
                starts = [a["answer_start"] for a in qa["answers"]] or [-1]
                yield paragraph["context"], qa["question"], answers, starts


@_base.dataset("SQuAD1", ("train", "dev"))
def SQuAD1(root, split):
    """SQuAD 1.1: ``(context, question, answers, answer_starts)``.

    Number of lines per split: train 87599, dev 10570.

    Args:
        root (str): the cache folder; the data goes to ``root/datasets/SQuAD1``.
        split: ``"train"``, ``"dev"`` or a tuple of them.
    """
    yield from _squad("SQuAD1", root, split)


@_base.dataset("SQuAD2", ("train", "dev"))
def SQuAD2(root, split):
    """SQuAD 2.0: ``(context, question, answers, answer_starts)``; unanswerable questions
    have ``[""]`` and ``[-1]``.

    Number of lines per split: train 130319, dev 11873.

    Args:
        root (str): the cache folder; the data goes to ``root/datasets/SQuAD2``.
        split: ``"train"``, ``"dev"`` or a tuple of them.
    """
    yield from _squad("SQuAD2", root, split)


MULTI30K_URL = {
    "train": "https://raw.githubusercontent.com/neychev/small_DL_repo/master/datasets/Multi30k/"
             "training.tar.gz",
    "valid": "https://raw.githubusercontent.com/neychev/small_DL_repo/master/datasets/Multi30k/"
             "validation.tar.gz",
    "test": "https://raw.githubusercontent.com/neychev/small_DL_repo/master/datasets/Multi30k/"
            "mmt16_task1_test.tar.gz",
}
MULTI30K_SHA256 = {
    "train": "20140d013d05dd9a72dfde46478663ba05737ce983f478f960c1123c6671be5e",
    "valid": "a7aa20e9ebd5ba5adce7909498b94410996040857154dab029851af3a866da8c",
    "test": "6d1ca1dba99e2c5dd54cae1226ff11c2551e6ce63527ebb072a1f70f72a5cd36",
}
_MULTI30K_PREFIX = {"train": "train", "valid": "val", "test": "test"}


def Multi30k(root=None, split=("train", "valid", "test"), language_pair=("de", "en")):
    """Multi30k (WMT16 multimodal task 1): ``(source sentence, target sentence)`` pairs.

    Number of lines per split: train 29000, valid 1014, test 1000.

    Args:
        root (str): the cache folder; the data goes to ``root/datasets/Multi30k``.
        split: ``"train"``, ``"valid"``, ``"test"`` or a tuple of them.
        language_pair: ``("de", "en")`` or ``("en", "de")``.
    """
    if len(language_pair) != 2:
        raise AssertionError(
            "language_pair must contain only 2 elements: src and tgt language respectively")
    if tuple(sorted(language_pair)) != ("de", "en"):
        raise AssertionError("language_pair must be either ('de','en') or ('en', 'de')")

    @_base.dataset("Multi30k", ("train", "valid", "test"))
    def reader(folder, part):
        url = MULTI30K_URL[part]
        archive = _base.download(url, os.path.join(folder, os.path.basename(url)),
                                 MULTI30K_SHA256[part], hash_type="sha256")
        paths = []
        for language in language_pair:
            name = f"{_MULTI30K_PREFIX[part]}.{language}"
            paths.append(_base.extract_matching(archive, name, os.path.join(folder, name)))
        yield from zip(_base.read_lines(paths[0]), _base.read_lines(paths[1]))

    return reader(split=split) if root is None else reader(root, split)

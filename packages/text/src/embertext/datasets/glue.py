"""Sentence (pair) classification datasets of GLUE and SentEval: SST2, CoLA, MRPC, QQP."""

import csv
import os

from embertext.datasets import _base

__all__ = ["SST2", "CoLA", "MRPC", "QQP"]

SST2_URL = "https://dl.fbaipublicfiles.com/glue/data/SST-2.zip"
SST2_MD5 = "9f81648d4199384278b86e315dac217c"


@_base.dataset("SST2", ("train", "dev", "test"))
def SST2(root, split):
    """The Stanford Sentiment Treebank, binary: ``(sentence, label in {0, 1})``; the test
    split has no labels and yields ``(sentence,)``.

    Number of lines per split: train 67349, dev 872, test 1821.

    Args:
        root (str): the cache folder; the data goes to ``root/datasets/SST2``.
        split: ``"train"``, ``"dev"``, ``"test"`` or a tuple of them.
    """
    archive = _base.download(SST2_URL, os.path.join(root, "SST-2.zip"), SST2_MD5)
    member = os.path.join("SST-2", f"{split}.tsv")
    path = _base.extract_member(archive, member, os.path.join(root, member))
    for row in _base.read_csv(path, delimiter="\t", skip_lines=1):
        yield (row[1].strip(),) if split == "test" else (row[0].strip(), int(row[1]))


COLA_URL = "https://nyu-mll.github.io/CoLA/cola_public_1.1.zip"
COLA_MD5 = "9f6d88c3558ec424cd9d66ea03589aba"
COLA_FILES = {"train": "in_domain_train.tsv", "dev": "in_domain_dev.tsv",
              "test": "out_of_domain_dev.tsv"}


@_base.dataset("CoLA", ("train", "dev", "test"))
def CoLA(root, split):
    """The Corpus of Linguistic Acceptability: ``(source, label in {0, 1}, sentence)``.

    Number of lines per split: train 8551, dev 527, test 516.

    Args:
        root (str): the cache folder; the data goes to ``root/datasets/CoLA``.
        split: ``"train"``, ``"dev"``, ``"test"`` or a tuple of them.
    """
    archive = _base.download(COLA_URL, os.path.join(root, "cola_public_1.1.zip"), COLA_MD5)
    member = os.path.join("cola_public", "raw", COLA_FILES[split])
    path = _base.extract_member(archive, member, os.path.join(root, member))
    # As torchtext reads it: the first line skipped, no quoting, rows of 4 fields only.
    for row in _base.read_csv(path, delimiter="\t", skip_lines=1, quoting=csv.QUOTE_NONE):
        if len(row) == 4:
            yield row[0], int(row[1]), row[3]


MRPC_URL = {"train": "https://dl.fbaipublicfiles.com/senteval/senteval_data/msr_paraphrase_train.txt",
            "test": "https://dl.fbaipublicfiles.com/senteval/senteval_data/msr_paraphrase_test.txt"}
MRPC_MD5 = {"train": "793daf7b6224281e75fe61c1f80afe35", "test": "e437fdddb92535b820fe8852e2df8a49"}


@_base.dataset("MRPC", ("train", "test"))
def MRPC(root, split):
    """The Microsoft Research Paraphrase Corpus: ``(label in {0, 1}, sentence1, sentence2)``.

    Number of lines per split: train 4076, test 1725.

    Args:
        root (str): the cache folder; the data goes to ``root/datasets/MRPC``.
        split: ``"train"``, ``"test"`` or a tuple of them.
    """
    url = MRPC_URL[split]
    path = _base.download(url, os.path.join(root, os.path.basename(url)), MRPC_MD5[split])
    for row in _base.read_csv(path, delimiter="\t", skip_lines=1, quoting=csv.QUOTE_NONE):
        yield int(row[0]), row[3], row[4]


QQP_URL = "http://qim.fs.quoracdn.net/quora_duplicate_questions.tsv"
QQP_MD5 = "b6d5672bd9dc1e66ab2bb020ebeafb8d"


@_base.dataset("QQP", ("train",))
def _qqp(root, split):
    path = _base.download(QQP_URL, os.path.join(root, "quora_duplicate_questions.tsv"), QQP_MD5)
    for row in _base.read_csv(path, delimiter="\t", skip_lines=1):
        yield int(row[-1]), row[3], row[4]


def QQP(root=None):
    """Quora Question Pairs: ``(label in {0, 1}, question1, question2)`` (404290 lines).

    Args:
        root (str): the cache folder; the data goes to ``root/datasets/QQP``.
    """
    return _qqp(split="train") if root is None else _qqp(root, "train")

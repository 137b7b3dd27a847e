"""Sentence (pair) classification datasets of GLUE and SentEval: SST2, CoLA, MRPC, QQP,
MNLI, QNLI, RTE, WNLI, STSB."""

import csv
import os

from embertext.datasets import _base

__all__ = ["SST2", "CoLA", "MRPC", "QQP", "MNLI", "QNLI", "RTE", "WNLI", "STSB"]

# the number of examples of each split
NUM_LINES = {
    "CoLA": {"train": 8551, "dev": 527, "test": 516},
    "MNLI": {"train": 392702, "dev_matched": 9815, "dev_mismatched": 9832},
    "MRPC": {"train": 4076, "test": 1725},
    "QNLI": {"train": 104743, "dev": 5463, "test": 5463},
    "QQP": {"train": 404290},
    "RTE": {"train": 2490, "dev": 277, "test": 3000},
    "SST2": {"train": 67349, "dev": 872, "test": 1821},
    "STSB": {"train": 5749, "dev": 1500, "test": 1379},
    "WNLI": {"train": 635, "dev": 71, "test": 146},
}

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


def _zip_tsv(root, url, md5, archive_name, member, skip_lines=1, quoting=csv.QUOTE_NONE):
    archive = _base.download(url, os.path.join(root, archive_name), md5)
    path = _base.extract_matching(archive, member, os.path.join(root, member))
    return _base.read_csv(path, delimiter="\t", skip_lines=skip_lines, quoting=quoting)


MNLI_URL = "https://cims.nyu.edu/~sbowman/multinli/multinli_1.0.zip"
MNLI_MD5 = "0f70aaf66293b3c088a864891db51353"
MNLI_LABELS = {"entailment": 0, "neutral": 1, "contradiction": 2}


@_base.dataset("MNLI", ("train", "dev_matched", "dev_mismatched"))
def MNLI(root, split):
    """Multi-Genre Natural Language Inference: ``(label, premise, hypothesis)``, label 0
    entailment, 1 neutral, 2 contradiction (rows without a gold label are left out).

    Number of lines per split: train 392702, dev_matched 9815, dev_mismatched 9832.

    Args:
        root (str): the cache folder; the data goes to ``root/datasets/MNLI``.
        split: ``"train"``, ``"dev_matched"``, ``"dev_mismatched"`` or a tuple of them.
    """
    for row in _zip_tsv(root, MNLI_URL, MNLI_MD5, "multinli_1.0.zip",
                        f"multinli_1.0_{split}.txt"):
        if row and row[0] in MNLI_LABELS:
            yield MNLI_LABELS[row[0]], row[5], row[6]


ENTAILMENT = {"entailment": 0, "not_entailment": 1}
QNLI_URL = "https://dl.fbaipublicfiles.com/glue/data/QNLIv2.zip"
QNLI_MD5 = "b4efd6554440de1712e9b54e14760e82"
RTE_URL = "https://dl.fbaipublicfiles.com/glue/data/RTE.zip"
RTE_MD5 = "bef554d0cafd4ab6743488101c638539"


@_base.dataset("QNLI", ("train", "dev", "test"))
def QNLI(root, split):
    """Question NLI (GLUE): ``(label, question, sentence)``, label 0 if the sentence answers
    the question, 1 if not; the test split yields ``(question, sentence)``.

    Number of lines per split: train 104743, dev 5463, test 5463.

    Args:
        root (str): the cache folder; the data goes to ``root/datasets/QNLI``.
        split: ``"train"``, ``"dev"``, ``"test"`` or a tuple of them.
    """
    for row in _zip_tsv(root, QNLI_URL, QNLI_MD5, "QNLIv2.zip", os.path.join("QNLI",
                                                                             f"{split}.tsv")):
        yield (row[1], row[2]) if split == "test" else (ENTAILMENT[row[3]], row[1], row[2])


@_base.dataset("RTE", ("train", "dev", "test"))
def RTE(root, split):
    """Recognizing Textual Entailment (GLUE): ``(label, sentence1, sentence2)``, label 0
    entailment, 1 not; the test split yields ``(sentence1, sentence2)``.

    Number of lines per split: train 2490, dev 277, test 3000.

    Args:
        root (str): the cache folder; the data goes to ``root/datasets/RTE``.
        split: ``"train"``, ``"dev"``, ``"test"`` or a tuple of them.
    """
    for row in _zip_tsv(root, RTE_URL, RTE_MD5, "RTE.zip", os.path.join("RTE", f"{split}.tsv")):
        yield (row[1], row[2]) if split == "test" else (ENTAILMENT[row[3]], row[1], row[2])


WNLI_URL = "https://dl.fbaipublicfiles.com/glue/data/WNLI.zip"
WNLI_MD5 = "a1b4bd2861017d302d29e42139657a42"


@_base.dataset("WNLI", ("train", "dev", "test"))
def WNLI(root, split):
    """Winograd NLI (GLUE): ``(label, sentence1, sentence2)``; the test split yields
    ``(sentence1, sentence2)``.

    Number of lines per split: train 635, dev 71, test 146.

    Args:
        root (str): the cache folder; the data goes to ``root/datasets/WNLI``.
        split: ``"train"``, ``"dev"``, ``"test"`` or a tuple of them.
    """
    for row in _zip_tsv(root, WNLI_URL, WNLI_MD5, "WNLI.zip", os.path.join("WNLI", f"{split}.tsv"),
                        quoting=csv.QUOTE_MINIMAL):
        yield (row[1], row[2]) if split == "test" else (int(row[3]), row[1], row[2])


STSB_URL = "http://ixa2.si.ehu.es/stswiki/images/4/48/Stsbenchmark.tar.gz"
STSB_MD5 = "4eb0065aba063ef77873d3a9c8088811"
STSB_FILES = {"train": "sts-train.csv", "dev": "sts-dev.csv", "test": "sts-test.csv"}


@_base.dataset("STSB", ("train", "dev", "test"))
def STSB(root, split):
    """The STS Benchmark: ``(index, similarity in [0, 5], sentence1, sentence2)``.

    Number of lines per split: train 5749, dev 1500, test 1379.

    Args:
        root (str): the cache folder; the data goes to ``root/datasets/STSB``.
        split: ``"train"``, ``"dev"``, ``"test"`` or a tuple of them.
    """
    archive = _base.download(STSB_URL, os.path.join(root, "Stsbenchmark.tar.gz"), STSB_MD5)
    member = os.path.join("stsbenchmark", STSB_FILES[split])
    path = _base.extract_member(archive, member, os.path.join(root, member))
    for row in _base.read_csv(path, delimiter="\t", quoting=csv.QUOTE_NONE):
        yield int(row[3]), float(row[4]), row[5], row[6]

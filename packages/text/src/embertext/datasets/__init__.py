"""Text datasets (``torchtext.datasets``): each is a function of ``root`` and ``split``
returning iterable datasets that download (with md5 checks) and read the published files."""

from embertext.datasets.cc100 import CC100
from embertext.datasets.cnndm import CNNDM
from embertext.datasets.glue import MNLI, MRPC, QNLI, QQP, RTE, SST2, STSB, WNLI, CoLA
from embertext.datasets.imdb import IMDB
from embertext.datasets.iwslt import IWSLT2016, IWSLT2017
from embertext.datasets.language_modeling import EnWik9, PennTreebank, WikiText2, WikiText103
from embertext.datasets.tagging_and_qa import UDPOS, CoNLL2000Chunking, Multi30k, SQuAD1, SQuAD2
from embertext.datasets.text_classification import (
    AG_NEWS,
    AmazonReviewFull,
    AmazonReviewPolarity,
    DBpedia,
    SogouNews,
    YahooAnswers,
    YelpReviewFull,
    YelpReviewPolarity,
)

DATASETS = {
    "AG_NEWS": AG_NEWS,
    "AmazonReviewFull": AmazonReviewFull,
    "AmazonReviewPolarity": AmazonReviewPolarity,
    "CC100": CC100,
    "CNNDM": CNNDM,
    "CoLA": CoLA,
    "CoNLL2000Chunking": CoNLL2000Chunking,
    "DBpedia": DBpedia,
    "EnWik9": EnWik9,
    "IMDB": IMDB,
    "IWSLT2016": IWSLT2016,
    "IWSLT2017": IWSLT2017,
    "MNLI": MNLI,
    "MRPC": MRPC,
    "Multi30k": Multi30k,
    "PennTreebank": PennTreebank,
    "QNLI": QNLI,
    "QQP": QQP,
    "RTE": RTE,
    "SogouNews": SogouNews,
    "SQuAD1": SQuAD1,
    "SQuAD2": SQuAD2,
    "SST2": SST2,
    "STSB": STSB,
    "UDPOS": UDPOS,
    "WikiText103": WikiText103,
    "WikiText2": WikiText2,
    "WNLI": WNLI,
    "YahooAnswers": YahooAnswers,
    "YelpReviewFull": YelpReviewFull,
    "YelpReviewPolarity": YelpReviewPolarity,
}

__all__ = sorted(DATASETS)

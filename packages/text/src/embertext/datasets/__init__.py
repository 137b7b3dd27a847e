"""Text datasets (``torchtext.datasets``): each is a function of ``root`` and ``split``
returning iterable datasets that download (with md5 checks) and read the published files."""

from embertext.datasets.glue import MRPC, QQP, SST2, CoLA
from embertext.datasets.imdb import IMDB
from embertext.datasets.language_modeling import EnWik9, PennTreebank, WikiText2, WikiText103
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
    "CoLA": CoLA,
    "DBpedia": DBpedia,
    "EnWik9": EnWik9,
    "IMDB": IMDB,
    "MRPC": MRPC,
    "PennTreebank": PennTreebank,
    "QQP": QQP,
    "SogouNews": SogouNews,
    "SST2": SST2,
    "WikiText103": WikiText103,
    "WikiText2": WikiText2,
    "YahooAnswers": YahooAnswers,
    "YelpReviewFull": YelpReviewFull,
    "YelpReviewPolarity": YelpReviewPolarity,
}

__all__ = sorted(DATASETS)

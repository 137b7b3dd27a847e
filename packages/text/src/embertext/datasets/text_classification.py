"""Text classification datasets in CSV files (label, then one or more text fields):
AG_NEWS, DBpedia, YelpReviewPolarity, YelpReviewFull, AmazonReviewPolarity,
AmazonReviewFull, YahooAnswers, SogouNews. Each yields ``(label, text)``, the label from 1,
the text fields joined by spaces."""

import os

from embertext.datasets import _base

__all__ = ["AG_NEWS", "DBpedia", "YelpReviewPolarity", "YelpReviewFull",
           "AmazonReviewPolarity", "AmazonReviewFull", "YahooAnswers", "SogouNews"]


def _rows(path):
    for row in _base.read_csv(path):
        yield int(row[0]), " ".join(row[1:])


# AG_NEWS: one CSV file per split, downloaded directly.
AG_NEWS_URL = {
    "train": "https://raw.githubusercontent.com/mhjabreel/CharCnn_Keras/master/data/ag_news_csv/"
             "train.csv",
    "test": "https://raw.githubusercontent.com/mhjabreel/CharCnn_Keras/master/data/ag_news_csv/"
            "test.csv",
}
AG_NEWS_MD5 = {"train": "b1a00f826fdfbd249f79597b59e1dc12",
               "test": "d52ea96a97a2d943681189a97654912d"}
AG_NEWS_NUM_LINES = {"train": 120000, "test": 7600}


@_base.dataset("AG_NEWS", ("train", "test"))
def AG_NEWS(root, split):
    """AG News topic classification: ``(label in 1..4, title and description)``.

    Number of lines per split: train 120000, test 7600.

    Args:
        root (str): the cache folder; the data goes to ``root/datasets/AG_NEWS``.
        split: ``"train"``, ``"test"`` or a tuple of them. Default: ``("train", "test")``.

    Examples::

        >>> train = AG_NEWS(split="train")
        >>> label, text = next(iter(train))
    """
    path = _base.download(AG_NEWS_URL[split], os.path.join(root, split + ".csv"),
                          AG_NEWS_MD5[split])
    yield from _rows(path)


# The others: one tarball (on Google Drive) holding <folder>/train.csv and <folder>/test.csv.
ARCHIVES = {
    "DBpedia": ("https://drive.google.com/uc?export=download&id=0Bz8a_Dbh9QhbQ2Vic1kxMmZZQ1k",
                "dca7b1ae12b1091090db52aa7ec5ca64", "dbpedia_csv"),
    "YelpReviewPolarity": (
        "https://drive.google.com/uc?export=download&id=0Bz8a_Dbh9QhbNUpYQ2N3SGlFaDg",
        "620c8ae4bd5a150b730f1ba9a7c6a4d3", "yelp_review_polarity_csv"),
    "YelpReviewFull": (
        "https://drive.google.com/uc?export=download&id=0Bz8a_Dbh9QhbZlU4dXhHTFhZQU0",
        "f7ddfafed1033f68ec72b9267863af6c", "yelp_review_full_csv"),
    "AmazonReviewPolarity": (
        "https://drive.google.com/uc?export=download&id=0Bz8a_Dbh9QhbaW12WVVZS2drcnM",
        "fe39f8b653cada45afd5792e0f0e8f9b", "amazon_review_polarity_csv"),
    "AmazonReviewFull": (
        "https://drive.google.com/uc?export=download&id=0Bz8a_Dbh9QhbZVhsUnRWRDhETzA",
        "57d28bd5d930e772930baddf36641c7c", "amazon_review_full_csv"),
    "YahooAnswers": ("https://drive.google.com/uc?export=download&id=0Bz8a_Dbh9Qhbd2JNdDBsQUdocVU",
                     "f3f9899b997a42beb24157e62e3eea8d", "yahoo_answers_csv"),
    "SogouNews": ("https://drive.google.com/uc?export=download&id=0Bz8a_Dbh9QhbUkVqNEszd0pHaFE",
                  "0c1700ba70b73f964dd8de569d3fd03e", "sogou_news_csv"),
}
NUM_LINES = {
    "DBpedia": {"train": 560000, "test": 70000},
    "YelpReviewPolarity": {"train": 560000, "test": 38000},
    "YelpReviewFull": {"train": 650000, "test": 50000},
    "AmazonReviewPolarity": {"train": 3600000, "test": 400000},
    "AmazonReviewFull": {"train": 3000000, "test": 650000},
    "YahooAnswers": {"train": 1400000, "test": 60000},
    "SogouNews": {"train": 450000, "test": 60000},
}


def _archive_rows(name, root, split):
    url, md5, folder = ARCHIVES[name]
    archive = _base.download(url, os.path.join(root, folder + ".tar.gz"), md5)
    member = os.path.join(folder, split + ".csv")
    yield from _rows(_base.extract_member(archive, member, os.path.join(root, member)))


def _make(name, description, labels):
    @_base.dataset(name, ("train", "test"))
    def reader(root, split):
        yield from _archive_rows(name, root, split)

    lines = NUM_LINES[name]
    reader.__name__ = reader.__qualname__ = name
    reader.__doc__ = f"""{description}: ``(label in 1..{labels}, text)``.

    Number of lines per split: train {lines['train']}, test {lines['test']}.

    Args:
        root (str): the cache folder; the data goes to ``root/datasets/{name}``.
        split: ``"train"``, ``"test"`` or a tuple of them. Default: ``("train", "test")``.
    """
    return reader


DBpedia = _make("DBpedia", "DBpedia ontology classification", 14)
YelpReviewPolarity = _make("YelpReviewPolarity", "Yelp review polarity", 2)
YelpReviewFull = _make("YelpReviewFull", "Yelp review stars", 5)
AmazonReviewPolarity = _make("AmazonReviewPolarity", "Amazon review polarity", 2)
AmazonReviewFull = _make("AmazonReviewFull", "Amazon review stars", 5)
YahooAnswers = _make("YahooAnswers", "Yahoo! Answers topic classification", 10)
SogouNews = _make("SogouNews", "Sogou News topic classification (pinyin)", 5)

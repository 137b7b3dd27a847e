"""Text datasets (``torchtext.datasets``): each is a function of ``root`` and ``split``
returning iterable datasets that download (with md5 checks) and read the published files."""

from embertext.datasets import (
    cc100,
    cnndm,
    glue,
    imdb,
    iwslt,
    language_modeling,
    tagging_and_qa,
    text_classification,
)
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


def _tables():
    """torchtext's URLS, MD5 and NUM_LINES: for each dataset its address(es), their md5 (or
    sha256, Multi30k's) and the number of examples per split, from the datasets' modules."""
    classification, lm, tq = text_classification, language_modeling, tagging_and_qa
    urls = {"AG_NEWS": classification.AG_NEWS_URL, "CC100": cc100.URL,
            "CNNDM": cnndm.STORIES_LIST, "CoLA": glue.COLA_URL,
            "CoNLL2000Chunking": tq.CONLL_URL, "EnWik9": lm.ENWIK9_URL, "IMDB": imdb.URL,
            "IWSLT2016": iwslt.IWSLT2016_URL, "IWSLT2017": iwslt.IWSLT2017_URL,
            "MNLI": glue.MNLI_URL, "MRPC": glue.MRPC_URL, "Multi30k": tq.MULTI30K_URL,
            "PennTreebank": lm.PTB_URL, "QNLI": glue.QNLI_URL, "QQP": glue.QQP_URL,
            "RTE": glue.RTE_URL, "SST2": glue.SST2_URL, "STSB": glue.STSB_URL,
            "UDPOS": tq.UDPOS_URL, "WNLI": glue.WNLI_URL}
    md5 = {"AG_NEWS": classification.AG_NEWS_MD5, "CC100": None, "CNNDM": cnndm.STORIES_MD5,
           "CoLA": glue.COLA_MD5, "CoNLL2000Chunking": tq.CONLL_MD5, "EnWik9": lm.ENWIK9_MD5,
           "IMDB": imdb.MD5, "IWSLT2016": iwslt.IWSLT2016_MD5, "IWSLT2017": iwslt.IWSLT2017_MD5,
           "MNLI": glue.MNLI_MD5, "MRPC": glue.MRPC_MD5, "Multi30k": tq.MULTI30K_SHA256,
           "PennTreebank": lm.PTB_MD5, "QNLI": glue.QNLI_MD5, "QQP": glue.QQP_MD5,
           "RTE": glue.RTE_MD5, "SST2": glue.SST2_MD5, "STSB": glue.STSB_MD5,
           "UDPOS": tq.UDPOS_MD5, "WNLI": glue.WNLI_MD5}
    for name, (url, checksum, _) in [*classification.ARCHIVES.items(), *lm.WIKITEXT.items()]:
        urls[name], md5[name] = url, checksum
    for name, splits in tq.SQUAD.items():
        urls[name] = {split: url for split, (url, _) in splits.items()}
        md5[name] = {split: checksum for split, (_, checksum) in splits.items()}
    num_lines = {"AG_NEWS": classification.AG_NEWS_NUM_LINES, "CC100": None,
                 "CNNDM": cnndm.NUM_LINES, "IMDB": imdb.NUM_LINES, **classification.NUM_LINES,
                 **lm.NUM_LINES, **glue.NUM_LINES, **tq.NUM_LINES, **iwslt.NUM_LINES}
    return ({n: urls[n] for n in DATASETS}, {n: md5[n] for n in DATASETS},
            {n: num_lines[n] for n in DATASETS})


URLS, MD5, NUM_LINES = _tables()

"""embertext.datasets on small files in the published formats, written by the tests; the
downloads come from file:// URLs, so no test touches the network."""

import csv
import os

import pytest

from embertext import datasets
from embertext.data.functional import to_map_style_dataset
from embertext.datasets import _base, glue, imdb, language_modeling, text_classification

from ._dataset_files import md5, tar_gz, zip_file


def write_csv(path, rows, delimiter=","):
    with open(path, "w", encoding="utf-8", newline="") as f:
        csv.writer(f, delimiter=delimiter).writerows(rows)


def test_ag_news_downloads_checks_md5_and_parses(tmp_path, monkeypatch):
    source = tmp_path / "source.csv"
    write_csv(source, [["3", "Wall St. Bears", "Short-sellers, \"Wall Street\" ..."],
                       ["1", "Title only", ""], ["4", "a,b", "c"]])
    for split in ("train", "test"):
        monkeypatch.setitem(text_classification.AG_NEWS_URL, split, source.as_uri())
        monkeypatch.setitem(text_classification.AG_NEWS_MD5, split, md5(source))
    root = tmp_path / "cache"
    train, test = datasets.AG_NEWS(root=str(root))
    rows = list(train)
    assert rows == [(3, 'Wall St. Bears Short-sellers, "Wall Street" ...'), (1, "Title only "),
                    (4, "a,b c")]
    assert list(test) == rows and list(train) == rows  # every pass reads again
    assert (root / "datasets" / "AG_NEWS" / "train.csv").exists()
    assert len(to_map_style_dataset(datasets.AG_NEWS(root=str(root), split="test"))) == 3


def test_a_file_with_the_wrong_hash_is_refused(tmp_path, monkeypatch):
    folder = tmp_path / "datasets" / "AG_NEWS"
    folder.mkdir(parents=True)
    (folder / "train.csv").write_text("1,a,b\n")
    with pytest.raises(RuntimeError, match="does not match"):
        list(datasets.AG_NEWS(root=str(tmp_path), split="train"))


def test_split_argument():
    assert isinstance(datasets.AG_NEWS(split="test"), _base.TextIterableDataset)
    assert len(datasets.WikiText2(split=("train", "test"))) == 2
    with pytest.raises(TypeError, match="not supported for dataset IMDB"):
        datasets.IMDB(split="valid")
    with pytest.raises(TypeError):
        datasets.IMDB(split=["train"])


@pytest.mark.parametrize("name", ["DBpedia", "YelpReviewPolarity", "YelpReviewFull",
                                  "AmazonReviewPolarity", "AmazonReviewFull", "YahooAnswers",
                                  "SogouNews"])
def test_tarball_csv_datasets(tmp_path, monkeypatch, name):
    url, _, folder = text_classification.ARCHIVES[name]
    archive = tmp_path / "archive.tar.gz"
    tar_gz(archive, {f"{folder}/train.csv": '1,"Title","Body, with comma"\n2,"x","y","z"\n',
                     f"{folder}/test.csv": '5,"t","b"\n', f"{folder}/readme.txt": "hi"})
    monkeypatch.setitem(text_classification.ARCHIVES, name,
                        (archive.as_uri(), md5(archive), folder))
    train, test = getattr(datasets, name)(root=str(tmp_path / "cache"))
    assert list(train) == [(1, "Title Body, with comma"), (2, "x y z")]
    assert list(test) == [(5, "t b")]


def test_imdb(tmp_path, monkeypatch):
    archive = tmp_path / "aclImdb_v1.tar.gz"
    tar_gz(archive, {
        "aclImdb/train/neg/0_3.txt": "Bad movie.<br /><br />Really.",
        "aclImdb/train/pos/1_9.txt": "Great\nfilm!",
        "aclImdb/train/neg/2_1.txt": "Awful.",
        "aclImdb/train/unsup/3_0.txt": "unlabelled",
        "aclImdb/test/pos/0_10.txt": "Loved it.",
        "aclImdb/train/urls_neg.txt": "http://x",
    })
    monkeypatch.setattr(imdb, "URL", archive.as_uri())
    monkeypatch.setattr(imdb, "MD5", md5(archive))
    root = str(tmp_path / "cache")
    train, test = datasets.IMDB(root=root)
    expected = [(1, "Bad movie.<br /><br />Really."), (1, "Awful."), (2, "Great film!")]
    assert list(train) == expected
    assert list(train) == expected  # from the cache files the first pass wrote
    assert list(test) == [(2, "Loved it.")]
    assert os.path.exists(os.path.join(root, "datasets", "IMDB", "aclImdb_v1", "train", "neg"))


@pytest.mark.parametrize("name", ["WikiText2", "WikiText103"])
def test_wikitext(tmp_path, monkeypatch, name):
    url, _, folder = language_modeling.WIKITEXT[name]
    archive = tmp_path / "wiki.zip"
    zip_file(archive, {f"{folder}/wiki.train.tokens": " \n = Title = \n text @-@ here \n",
                       f"{folder}/wiki.valid.tokens": " valid \n",
                       f"{folder}/wiki.test.tokens": " test \n"})
    monkeypatch.setitem(language_modeling.WIKITEXT, name, (archive.as_uri(), md5(archive),
                                                           folder))
    train, valid, test = getattr(datasets, name)(root=str(tmp_path / "cache"))
    assert list(train) == [" \n", " = Title = \n", " text @-@ here \n"]
    assert list(valid) == [" valid \n"] and list(test) == [" test \n"]


def test_penn_treebank_and_enwik9(tmp_path, monkeypatch):
    source = tmp_path / "ptb.txt"
    source.write_text(" no it was n't black monday \n the <unk> fell \n")
    for split in ("train", "valid", "test"):
        monkeypatch.setitem(language_modeling.PTB_URL, split, source.as_uri())
        monkeypatch.setitem(language_modeling.PTB_MD5, split, md5(source))
    valid = datasets.PennTreebank(root=str(tmp_path / "cache"), split="valid")
    assert list(valid) == ["no it was n't black monday", "the <unk> fell"]

    archive = tmp_path / "enwik9.zip"
    zip_file(archive, {"enwik9": "<mediawiki>\n  <page>\n"})
    monkeypatch.setattr(language_modeling, "ENWIK9_URL", archive.as_uri())
    monkeypatch.setattr(language_modeling, "ENWIK9_MD5", md5(archive))
    assert list(datasets.EnWik9(root=str(tmp_path / "cache"))) == ["<mediawiki>", "  <page>"]


def test_glue_style_datasets(tmp_path, monkeypatch):
    sst = tmp_path / "SST-2.zip"
    zip_file(sst, {"SST-2/train.tsv": "sentence\tlabel\nhide new secretions \t0\ngood \t1\n",
                   "SST-2/dev.tsv": "sentence\tlabel\nit 's a charming trip \t1\n",
                   "SST-2/test.tsv": "index\tsentence\n0\tuneasy mishmash \n"})
    monkeypatch.setattr(glue, "SST2_URL", sst.as_uri())
    monkeypatch.setattr(glue, "SST2_MD5", md5(sst))
    train, dev, test = datasets.SST2(root=str(tmp_path / "c"))
    assert list(train) == [("hide new secretions", 0), ("good", 1)]
    assert list(dev) == [("it 's a charming trip", 1)]
    assert list(test) == [("uneasy mishmash",)]

    cola = tmp_path / "cola.zip"
    raw = "cola_public/raw/"
    zip_file(cola, {raw + "in_domain_train.tsv": 'gj04\t1\t\tOur "friends" won\'t buy.\n'
                                                 "gj04\t0\t*\tThey drank the pub.\nbad\n",
                    raw + "in_domain_dev.tsv": "", raw + "out_of_domain_dev.tsv": ""})
    monkeypatch.setattr(glue, "COLA_URL", cola.as_uri())
    monkeypatch.setattr(glue, "COLA_MD5", md5(cola))
    # The first line is skipped, as in torchtext.
    assert list(datasets.CoLA(root=str(tmp_path / "c"), split="train")) == [
        ("gj04", 0, "They drank the pub.")]

    mrpc = tmp_path / "msr.txt"
    mrpc.write_text("Quality\t#1 ID\t#2 ID\t#1 String\t#2 String\n1\t1\t2\tHe said \"x\".\tHe "
                    "told x.\n")
    for split in ("train", "test"):
        monkeypatch.setitem(glue.MRPC_URL, split, mrpc.as_uri())
        monkeypatch.setitem(glue.MRPC_MD5, split, md5(mrpc))
    assert list(datasets.MRPC(root=str(tmp_path / "c"), split="test")) == [
        (1, 'He said "x".', "He told x.")]

    qqp = tmp_path / "qqp.tsv"
    write_csv(qqp, [["id", "qid1", "qid2", "question1", "question2", "is_duplicate"],
                    ["0", "1", "2", "How?", "Why?", "0"]], delimiter="\t")
    monkeypatch.setattr(glue, "QQP_URL", qqp.as_uri())
    monkeypatch.setattr(glue, "QQP_MD5", md5(qqp))
    assert list(datasets.QQP(root=str(tmp_path / "c"))) == [(0, "How?", "Why?")]


def test_gdrive_confirm_url():
    page = '<a href="/uc?export=download&amp;confirm=t0K3n&amp;id=X">Download anyway</a>'
    assert _base.gdrive_confirm_url("https://drive.google.com/uc?id=X", page).endswith(
        "&confirm=t0K3n")
    form = ('<form id="download-form" action="https://drive.usercontent.google.com/download">'
            '<input type="hidden" name="id" value="X"><input type="hidden" name="confirm" '
            'value="t"><input type="hidden" name="uuid" value="u-1"></form>')
    assert _base.gdrive_confirm_url("u", form.replace("confirm", "c0nfirm")) == (
        "https://drive.usercontent.google.com/download?id=X&c0nfirm=t&uuid=u-1")
    assert _base.gdrive_confirm_url("u", "<html>nothing</html>") is None


def test_datasets_table_lists_every_dataset():
    assert datasets.__all__ == sorted(datasets.DATASETS)
    assert all(callable(fn) for fn in datasets.DATASETS.values())

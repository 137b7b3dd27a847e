"""The GLUE, tagging, SQuAD and Multi30k datasets on small files in the published formats."""

import gzip
import json

import pytest

from embertext import datasets
from embertext.datasets import glue, tagging_and_qa

from ._dataset_files import md5, sha256, tar_gz, zip_file


def serve(monkeypatch, module, url_name, hash_name, path, key=None, hasher=md5):
    if key is None:
        monkeypatch.setattr(module, url_name, path.as_uri())
        monkeypatch.setattr(module, hash_name, hasher(path))
    else:
        monkeypatch.setitem(getattr(module, url_name), key, path.as_uri())
        monkeypatch.setitem(getattr(module, hash_name), key, hasher(path))


def test_mnli_qnli_rte_wnli_stsb(tmp_path, monkeypatch):
    root = str(tmp_path / "c")
    mnli = tmp_path / "mnli.zip"
    header = "gold_label\ts1_parse\ts2_parse\ts1_bp\ts2_bp\tsentence1\tsentence2\n"
    zip_file(mnli, {"multinli_1.0/multinli_1.0_train.txt":
                    header + "neutral\ta\tb\tc\td\tThe \"cat\" sat.\tA cat.\n"
                    "-\ta\tb\tc\td\tNo gold.\tx\ncontradiction\ta\tb\tc\td\tP\tH\n",
                    "multinli_1.0/multinli_1.0_dev_matched.txt": header,
                    "multinli_1.0/multinli_1.0_dev_mismatched.txt": header})
    serve(monkeypatch, glue, "MNLI_URL", "MNLI_MD5", mnli)
    assert list(datasets.MNLI(root=root, split="train")) == [(1, 'The "cat" sat.', "A cat."),
                                                              (2, "P", "H")]

    for name, folder in (("QNLI", "QNLI"), ("RTE", "RTE")):
        archive = tmp_path / f"{name}.zip"
        zip_file(archive, {f"{folder}/train.tsv": "index\tq\ts\tlabel\n0\tWho?\tHim.\t"
                                                  "entailment\n1\tWhy?\tNo.\tnot_entailment\n",
                           f"{folder}/dev.tsv": "h\n",
                           f"{folder}/test.tsv": "index\tq\ts\n0\tA\tB\n"})
        serve(monkeypatch, glue, f"{name}_URL", f"{name}_MD5", archive)
        train, test = getattr(datasets, name)(root=root, split=("train", "test"))
        assert list(train) == [(0, "Who?", "Him."), (1, "Why?", "No.")]
        assert list(test) == [("A", "B")]

    wnli = tmp_path / "WNLI.zip"
    zip_file(wnli, {"WNLI/train.tsv": 'index\ts1\ts2\tlabel\n0\t"Quoted, yes"\tS2\t1\n',
                    "WNLI/dev.tsv": "", "WNLI/test.tsv": "index\ts1\ts2\n0\tX\tY\n"})
    serve(monkeypatch, glue, "WNLI_URL", "WNLI_MD5", wnli)
    assert list(datasets.WNLI(root=root, split="train")) == [(1, "Quoted, yes", "S2")]
    assert list(datasets.WNLI(root=root, split="test")) == [("X", "Y")]

    stsb = tmp_path / "sts.tar.gz"
    tar_gz(stsb, {"stsbenchmark/sts-train.csv": "main-captions\tMSRvid\t2012test\t0001\t5.000"
                                                "\tA plane is taking off.\tAn air plane is taking "
                                                "off.\n",
                  "stsbenchmark/sts-dev.csv": "", "stsbenchmark/sts-test.csv": ""})
    serve(monkeypatch, glue, "STSB_URL", "STSB_MD5", stsb)
    assert list(datasets.STSB(root=root, split="train")) == [
        (1, 5.0, "A plane is taking off.", "An air plane is taking off.")]


def test_conll2000_and_udpos(tmp_path, monkeypatch):
    root = str(tmp_path / "c")
    conll = tmp_path / "train.txt.gz"
    with gzip.open(conll, "wt") as f:
        f.write("Confidence NN B-NP\nin IN B-PP\n\nHe PRP B-NP\n")
    for split in ("train", "test"):
        serve(monkeypatch, tagging_and_qa, "CONLL_URL", "CONLL_MD5", conll, key=split)
    assert list(datasets.CoNLL2000Chunking(root=root, split="train")) == [
        [["Confidence", "in"], ["NN", "IN"], ["B-NP", "B-PP"]], [["He"], ["PRP"], ["B-NP"]]]

    ud = tmp_path / "en-ud-v2.zip"
    zip_file(ud, {"en-ud-v2/en-ud-tag.v2.train.txt": "Al\tPROPN\tNNP\n-\tPUNCT\tHYPH\n\n",
                  "en-ud-v2/en-ud-tag.v2.dev.txt": "x\tX\tFW\n",
                  "en-ud-v2/en-ud-tag.v2.test.txt": ""})
    serve(monkeypatch, tagging_and_qa, "UDPOS_URL", "UDPOS_MD5", ud)
    train, valid = datasets.UDPOS(root=root, split=("train", "valid"))
    assert list(train) == [[["Al", "-"], ["PROPN", "PUNCT"], ["NNP", "HYPH"]]]
    assert list(valid) == [[["x"], ["X"], ["FW"]]]


@pytest.mark.parametrize("name", ["SQuAD1", "SQuAD2"])
def test_squad(tmp_path, monkeypatch, name):
    data = {"version": "x", "data": [{"title": "T", "paragraphs": [{
        "context": "Paris is in France.",
        "qas": [{"id": "1", "question": "Where is Paris?",
                 "answers": [{"text": "France", "answer_start": 12},
                             {"text": "in France", "answer_start": 9}]},
                {"id": "2", "question": "Unanswerable?", "answers": []}]}]}]}
    path = tmp_path / "squad.json"
    path.write_text(json.dumps(data))
    for split in ("train", "dev"):
        monkeypatch.setitem(tagging_and_qa.SQUAD[name], split, (path.as_uri(), md5(path)))
    assert list(getattr(datasets, name)(root=str(tmp_path / "c"), split="dev")) == [
        ("Paris is in France.", "Where is Paris?", ["France", "in France"], [12, 9]),
        ("Paris is in France.", "Unanswerable?", [""], [-1])]


def test_multi30k(tmp_path, monkeypatch):
    archive = tmp_path / "training.tar.gz"
    tar_gz(archive, {"train.de": "Ein Hund.\nZwei Katzen.\n", "train.en": "A dog.\nTwo cats.\n"})
    serve(monkeypatch, tagging_and_qa, "MULTI30K_URL", "MULTI30K_SHA256", archive, key="train",
          hasher=sha256)
    root = str(tmp_path / "c")
    assert list(datasets.Multi30k(root=root, split="train")) == [("Ein Hund.", "A dog."),
                                                                  ("Zwei Katzen.", "Two cats.")]
    assert list(datasets.Multi30k(root=root, split="train", language_pair=("en", "de")))[0] == (
        "A dog.", "Ein Hund.")
    with pytest.raises(AssertionError, match="language_pair"):
        datasets.Multi30k(language_pair=("de", "fr"))


def test_cc100_reads_the_xz_file(tmp_path, monkeypatch):
    import lzma

    from embertext.datasets import cc100

    source = tmp_path / "sw.txt.xz"
    with lzma.open(source, "wt", encoding="utf-8") as f:
        f.write("Habari ya dunia\n\nNdiyo ñ 😀\n")
    monkeypatch.setattr(cc100, "URL", "file://" + str(tmp_path) + "/%s.txt.xz")
    data = datasets.CC100(root=str(tmp_path / "cache"), language_code="sw")
    assert list(data) == [("sw", "Habari ya dunia"), ("sw", ""), ("sw", "Ndiyo ñ 😀")]
    assert list(data) == list(data)  # a second pass reads the cached file
    assert (tmp_path / "cache" / "datasets" / "CC100" / "sw.txt.xz").exists()
    with pytest.raises(ValueError, match="Invalid language code"):
        datasets.CC100(language_code="xx")

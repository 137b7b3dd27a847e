"""IWSLT2016, IWSLT2017 and CNNDM on small archives in the published layouts (an archive of
per-pair archives with tagged and XML files; .story files named by the SHA-1 of their URL)."""

import hashlib
import tarfile

import pytest

from embertext import datasets
from embertext.datasets import cnndm, iwslt

from ._dataset_files import md5, tar_gz
from .test_datasets_more import serve

TAGGED = """<doc docid="1" genre="lectures">
<url>http://www.ted.com/talks/x</url>
<keywords>talks, science</keywords>
<speaker>Someone</speaker>
<talkid>1</talkid>
<title>A talk</title>
<description>About things.</description>
{0}
  {1}\t
</doc>
"""  # the second sentence with spaces around it, stripped by the cleaning

XML = """<?xml version="1.0" encoding="UTF-8"?>
<mteval>
<refset setid="iwslt" srclang="any" trglang="{lang}">
<doc docid="535" genre="lectures">
<url>http://www.ted.com/talks/y</url>
<talkid>535</talkid>
<seg id="1"> {0} </seg>
<seg id="2">{1}</seg>
</doc>
</refset>
</mteval>
"""

SENTENCES = {"de": ("Hallo Welt.", "Grüße aus Köln!"), "en": ("Hello world.", "Greetings!")}


def _pair_files(prefix, year, src, tgt, sets):
    pair = f"{src}-{tgt}"
    files = {}
    for language in (src, tgt):
        files[f"{prefix}/train.tags.{pair}.{language}"] = TAGGED.format(*SENTENCES[language])
        for name in sets:
            text = XML.format(*(s + f" ({name})" for s in SENTENCES[language]), lang=language)
            files[f"{prefix}/IWSLT{year}.TED.{name}.{pair}.{language}.xml"] = text
    return files


def _archive_of_archives(tmp_path, outer_name, inner_member, files):
    inner = tmp_path / "inner.tgz"
    tar_gz(inner, files)
    outer = tmp_path / outer_name
    with tarfile.open(outer, "w:gz") as tar:
        tar.add(inner, arcname=inner_member)
    return outer


def test_iwslt2016(tmp_path, monkeypatch):
    outer = _archive_of_archives(tmp_path, "2016-01.tgz", "2016-01/texts/de/en/de-en.tgz",
                                 _pair_files("de-en", 16, "de", "en", ["tst2013", "tst2014"]))
    monkeypatch.setattr(iwslt, "IWSLT2016_URL", outer.as_uri())
    monkeypatch.setattr(iwslt, "IWSLT2016_MD5", md5(outer))
    root = str(tmp_path / "cache")
    train, valid, test = datasets.IWSLT2016(root=root)
    assert list(train) == [("Hallo Welt.\n", "Hello world.\n"),
                           ("Grüße aus Köln!\n", "Greetings!\n")]
    assert list(valid)[0] == ("Hallo Welt. (tst2013)\n", "Hello world. (tst2013)\n")
    assert list(test)[1] == ("Grüße aus Köln! (tst2014)\n", "Greetings! (tst2014)\n")
    assert list(train) == list(train)  # a second pass reads the cleaned files
    assert (tmp_path / "cache" / "datasets" / "IWSLT2016" / "2016-01" / "texts" / "de" / "en"
            / "de-en" / "train.de-en.de").exists()


def test_iwslt2016_arguments():
    with pytest.raises(ValueError, match="src_language 'xx' is not valid"):
        datasets.IWSLT2016(language_pair=("xx", "en"))
    with pytest.raises(ValueError, match="tgt_language 'de' is not valid"):
        datasets.IWSLT2016(language_pair=("fr", "de"))
    with pytest.raises(ValueError, match="test_set 'tst2014' is not valid"):
        datasets.IWSLT2016(language_pair=("cs", "en"))
    with pytest.raises(ValueError, match="valid_set 'tst1999'"):
        datasets.IWSLT2016(valid_set="tst1999")
    with pytest.raises(ValueError, match="language_pair must be list or tuple"):
        datasets.IWSLT2016(language_pair="de-en")
    with pytest.raises(TypeError, match="not supported"):
        datasets.IWSLT2016(split="dev")


def test_iwslt2017(tmp_path, monkeypatch):
    folder = "DeEnItNlRo-DeEnItNlRo"
    files = _pair_files(folder, 17, "en", "de", ["dev2010", "tst2010"])
    outer = _archive_of_archives(
        tmp_path, "2017-01-trnmted.tgz",
        f"2017-01-trnmted/texts/DeEnItNlRo/DeEnItNlRo/{folder}.tgz", files)
    monkeypatch.setattr(iwslt, "IWSLT2017_URL", outer.as_uri())
    monkeypatch.setattr(iwslt, "IWSLT2017_MD5", md5(outer))
    root = str(tmp_path / "cache")
    valid = datasets.IWSLT2017(root=root, split="valid", language_pair=("en", "de"))
    assert list(valid) == [("Hello world. (dev2010)\n", "Hallo Welt. (dev2010)\n"),
                           ("Greetings! (dev2010)\n", "Grüße aus Köln! (dev2010)\n")]
    assert list(datasets.IWSLT2017(root=root, split="train", language_pair=("en", "de")))[1] \
        == ("Greetings!\n", "Grüße aus Köln!\n")
    with pytest.raises(ValueError, match="tgt_language 'fr'"):
        datasets.IWSLT2017(language_pair=("en", "fr"))


STORY = """Paris (CNN) -- The café opened today

It served crème brûlée.
A caption without a period

@highlight

Café opens in Paris

@highlight

Crème brûlée served!
"""


def test_cnndm(tmp_path, monkeypatch):
    urls = {"val": ["http://www.cnn.com/a", "http://www.dailymail.co.uk/b"],
            "train": ["http://www.cnn.com/c"]}
    for split, lines in urls.items():
        path = tmp_path / f"all_{split}.txt"
        path.write_text("\n".join(lines) + "\n")
        serve(monkeypatch, cnndm, "URL_LIST", "URL_LIST_MD5", path, key=split)
    name = {u: hashlib.sha1(u.encode()).hexdigest() + ".story" for u in sum(urls.values(), [])}
    stories = {"cnn": {f"cnn/stories/{name['http://www.cnn.com/a']}": STORY,
                       f"cnn/stories/{name['http://www.cnn.com/c']}": "Train.\n@highlight\nT",
                       "cnn/stories/0000.story": "Not in a split.\n"},
               "dailymail": {f"dailymail/stories/{name['http://www.dailymail.co.uk/b']}":
                             "Mail story\n\n@highlight\n\nShort"}}
    for source, files in stories.items():
        path = tmp_path / cnndm.PATH_LIST[source]
        tar_gz(path, files)
        serve(monkeypatch, cnndm, "STORIES_LIST", "STORIES_MD5", path, key=source)
    root = str(tmp_path / "cache")
    assert list(datasets.CNNDM(root=root, split="val")) == [
        ("Paris (CNN) -- The café opened today . It served crème brûlée. "
         "A caption without a period .", "Café opens in Paris . Crème brûlée served!"),
        ("Mail story .", "Short ."),
    ]
    assert list(datasets.CNNDM(root=root, split="train")) == [("Train.", "T .")]
    assert cnndm.story_name("http://www.cnn.com/a") == name["http://www.cnn.com/a"]

"""The IWSLT 2016 and 2017 TED talk translation datasets (``torchtext.datasets.IWSLT2016``
and ``IWSLT2017``): an archive of per-pair archives, whose training files are tagged text
and whose dev/test files are XML; both are cleaned into one sentence a line."""

import os
import xml.etree.ElementTree as ET

from embertext.datasets import _base

__all__ = ["IWSLT2016", "IWSLT2017"]

IWSLT2016_URL = "https://drive.google.com/uc?id=1l5y6Giag9aRPwGtuZHswh3w5v3qEz8D8"
IWSLT2016_MD5 = "c393ed3fc2a1b0f004b3331043f615ae"
_IWSLT2016_PATH = "2016-01.tgz"
IWSLT2016_LANGUAGE_PAIRS = {"en": ["ar", "de", "fr", "cs"], "ar": ["en"], "fr": ["en"],
                            "de": ["en"], "cs": ["en"]}
IWSLT2016_SETS = ["dev2010", "tst2010", "tst2011", "tst2012", "tst2013", "tst2014"]
_IWSLT2016_MISSING = {("en", "cs"): ["tst2014"], ("cs", "en"): ["tst2014"]}

# torchtext 0.18's address (FBK's WIT3 library), the file of IWSLT2017_MD5
IWSLT2017_URL = ("https://fbk.sharepoint.com/sites/MTUnit/_layouts/15/download.aspx?SourceUrl="
                 "%2Fsites%2FMTUnit%2FShared%20Documents%2Fwebsites%2FWIT3%2Dlibrary%2F2017%2D01"
                 "%2Dtrnmted%2Etgz")
IWSLT2017_MD5 = "aca701032b1c4411afc4d9fa367796ba"
_IWSLT2017_PATH = "2017-01-trnmted.tgz"
IWSLT2017_LANGUAGE_PAIRS = {"en": ["nl", "de", "it", "ro"], "ro": ["de", "en", "nl", "it"],
                            "de": ["ro", "en", "nl", "it"], "it": ["en", "nl", "de", "ro"],
                            "nl": ["de", "en", "it", "ro"]}
_IWSLT2017_INNER = "texts/DeEnItNlRo/DeEnItNlRo/DeEnItNlRo-DeEnItNlRo"


def _iwslt_lines(train, sets):
    # torchtext's layout: train -> "train" -> pair; valid and test -> the same set -> pair
    return {"train": {"train": train}, "valid": sets, "test": sets}


# the number of sentence pairs of each split, set and language pair
NUM_LINES = {
    "IWSLT2016": _iwslt_lines(
        {("ar", "en"): 224126, ("de", "en"): 196884, ("en", "fr"): 220400,
         ("cs", "en"): 114390},
        {"dev2010": {("ar", "en"): 887, ("de", "en"): 887, ("en", "fr"): 887,
                     ("cs", "en"): 480},
         "tst2010": {("ar", "en"): 1569, ("de", "en"): 1565, ("en", "fr"): 1664,
                     ("cs", "en"): 1511},
         "tst2011": {("ar", "en"): 1199, ("de", "en"): 1433, ("en", "fr"): 818,
                     ("cs", "en"): 1013},
         "tst2012": {("ar", "en"): 1702, ("de", "en"): 1700, ("en", "fr"): 1124,
                     ("cs", "en"): 1385},
         "tst2013": {("ar", "en"): 1169, ("de", "en"): 993, ("en", "fr"): 1026,
                     ("cs", "en"): 1327},
         "tst2014": {("ar", "en"): 1107, ("de", "en"): 1305, ("en", "fr"): 1305}}),
    "IWSLT2017": _iwslt_lines(
        {("en", "nl"): 237240, ("de", "en"): 206112, ("en", "it"): 231619,
         ("en", "ro"): 220538, ("de", "ro"): 201455, ("nl", "ro"): 206920,
         ("it", "ro"): 217551, ("de", "nl"): 213628, ("de", "it"): 205465,
         ("it", "nl"): 233415},
        {"dev2010": {("en", "nl"): 1003, ("de", "en"): 888, ("en", "it"): 929,
                     ("en", "ro"): 914, ("de", "ro"): 912, ("nl", "ro"): 913,
                     ("it", "ro"): 914, ("de", "nl"): 1001, ("de", "it"): 923,
                     ("it", "nl"): 1001},
         "tst2010": {("en", "nl"): 1777, ("de", "en"): 1568, ("en", "it"): 1566,
                     ("en", "ro"): 1678, ("de", "ro"): 1677, ("nl", "ro"): 1680,
                     ("it", "ro"): 1643, ("de", "nl"): 1779, ("de", "it"): 1567,
                     ("it", "nl"): 1669}}),
}

# Lines of the tagged training files that are metadata, not sentences.
_TAGS = ("<url", "<keywords", "<talkid", "<description", "<reviewer", "<translator", "<title",
         "<speaker", "<doc", "</doc")


def _file_names(year, src, tgt, split, valid_set, test_set):
    """``(cleaned, published)`` file names of the ``split`` files of both languages."""
    pair = f"{src}-{tgt}"
    out = []
    for language in (src, tgt):
        if split == "train":
            out.append((f"train.{pair}.{language}", f"train.tags.{pair}.{language}"))
        else:
            name = valid_set if split == "valid" else test_set
            cleaned = f"IWSLT{year}.TED.{name}.{pair}.{language}"
            out.append((cleaned, cleaned + ".xml"))
    return out


def _clean(source, target):
    """Write the sentences of a published IWSLT file (XML ``<seg>`` elements, or tagged text
    without its metadata lines) to ``target``, one a line."""
    if os.path.exists(target):
        return target
    with open(source, encoding="utf-8") as f:
        text = f.read()
    if source.endswith(".xml"):
        root = ET.fromstring(text)[0]
        lines = [seg.text.strip() for doc in root.findall("doc") for seg in doc.findall("seg")]
    else:
        lines = [line.strip() for line in text.splitlines()
                 if not any(tag in line for tag in _TAGS)]
    partial = target + ".part"
    with open(partial, "w", encoding="utf-8") as f:
        f.writelines(line + "\n" for line in lines)
    os.replace(partial, target)
    return target


def _check_pair(language_pair, pairs):
    if not isinstance(language_pair, (list, tuple)):
        raise ValueError(
            f"language_pair must be list or tuple but got {type(language_pair)} instead")
    if len(language_pair) != 2:
        raise AssertionError(
            "language_pair must contain only 2 elements: src and tgt language respectively")
    src, tgt = language_pair
    if src not in pairs:
        raise ValueError(f"src_language '{src}' is not valid. Supported source languages are "
                         f"{list(pairs)}")
    if tgt not in pairs[src]:
        raise ValueError(f"tgt_language '{tgt}' is not valid for give src_language '{src}'. "
                         f"Supported target language are {pairs[src]}")
    return src, tgt


def _read_pair(folder, url, md5, archive_name, inner_folder, inner_archive, names):
    """``(source line, target line)`` pairs (newlines kept, as torchtext yields them)."""
    archive = _base.download(url, os.path.join(folder, archive_name), md5)
    inner = _base.extract_matching(archive, os.path.basename(inner_archive),
                                   os.path.join(folder, inner_archive))
    paths = []
    for cleaned, published in names:
        raw = _base.extract_matching(inner, published,
                                     os.path.join(folder, inner_folder, "raw", published))
        paths.append(_clean(raw, os.path.join(folder, inner_folder, cleaned)))
    yield from zip(_base.read_lines(paths[0], strip_newline=False),
                   _base.read_lines(paths[1], strip_newline=False))


def IWSLT2016(root=None, split=("train", "valid", "test"), language_pair=("de", "en"),
              valid_set="tst2013", test_set="tst2014"):
    """IWSLT 2016 TED talks: ``(source sentence, target sentence)`` pairs (each with its
    newline).

    Language pairs: en-ar, en-de, en-fr, en-cs and back. Dev/test sets: dev2010, tst2010 to
    tst2014 (no tst2014 for cs).

    Args:
        root (str): the cache folder; the data goes to ``root/datasets/IWSLT2016``.
        split: ``"train"``, ``"valid"``, ``"test"`` or a tuple of them.
        language_pair: ``(source, target)`` languages. Default: ``("de", "en")``.
        valid_set (str): the set of the ``"valid"`` split. Default: ``"tst2013"``.
        test_set (str): the set of the ``"test"`` split. Default: ``"tst2014"``.
    """
    src, tgt = _check_pair(language_pair, IWSLT2016_LANGUAGE_PAIRS)
    allowed = [s for s in IWSLT2016_SETS if s not in _IWSLT2016_MISSING.get((src, tgt), [])]
    for kind, name in (("valid_set", valid_set), ("test_set", test_set)):
        if name not in allowed:
            raise ValueError(f"{kind} '{name}' is not valid for given language pair "
                             f"{tuple(language_pair)}. Supported sets are {allowed}")
    pair = f"{src}-{tgt}"
    inner_folder = os.path.join("2016-01", "texts", src, tgt, pair)

    @_base.dataset("IWSLT2016", ("train", "valid", "test"))
    def reader(folder, part):
        yield from _read_pair(folder, IWSLT2016_URL, IWSLT2016_MD5, _IWSLT2016_PATH,
                              inner_folder, inner_folder + ".tgz",
                              _file_names(16, src, tgt, part, valid_set, test_set))

    return reader(split=split) if root is None else reader(root, split)


def IWSLT2017(root=None, split=("train", "valid", "test"), language_pair=("de", "en")):
    """IWSLT 2017 TED talks (the multilingual task: de, en, it, nl, ro, every pair):
    ``(source sentence, target sentence)`` pairs (each with its newline); dev2010 is the
    ``"valid"`` split and tst2010 the ``"test"`` split.

    Args:
        root (str): the cache folder; the data goes to ``root/datasets/IWSLT2017``.
        split: ``"train"``, ``"valid"``, ``"test"`` or a tuple of them.
        language_pair: ``(source, target)`` languages. Default: ``("de", "en")``.
    """
    src, tgt = _check_pair(language_pair, IWSLT2017_LANGUAGE_PAIRS)
    inner_folder = os.path.join("2017-01-trnmted", _IWSLT2017_INNER)

    @_base.dataset("IWSLT2017", ("train", "valid", "test"))
    def reader(folder, part):
        yield from _read_pair(folder, IWSLT2017_URL, IWSLT2017_MD5, _IWSLT2017_PATH,
                              inner_folder, inner_folder + ".tgz",
                              _file_names(17, src, tgt, part, "dev2010", "tst2010"))

    return reader(split=split) if root is None else reader(root, split)

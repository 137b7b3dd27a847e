"""Behaviour cases of torchtext 0.18, written once and run twice: by tools/record_torchtext.py
with ``(torchtext, torch)`` in torchtext's environment, which stores what they return, and by
tests/text/test_torchtext_behaviour.py with ``(embertext, ember)``, which compares.

This file imports neither library: each case gets them as arguments, ``tt`` (the text
library), ``torch`` (the tensor library) and ``tmp`` (an empty folder of its own), and returns
plain JSON values (:func:`encode` turns tensors, tuples and iterators into them). A case that
raises records the exception's type name instead. Cases that need a file only torchtext can
make (a trained SentencePiece model) get it from ``FIXTURES``, made by the recorder and stored
in the recording beside the cases' results.
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import os
import random
import tarfile
import zipfile
from collections import Counter, OrderedDict
from pathlib import Path

RECORDING = Path(__file__).resolve().parent / "data" / "torchtext_0_18.json.gz"

CASES = {}
FIXTURES = {}


def case(fn):
    CASES[fn.__name__.removeprefix("case_")] = fn
    return fn


def fixture(fn):
    FIXTURES[fn.__name__.removeprefix("fixture_")] = fn
    return fn


def encode(value):
    """A JSON value for what a case returns: a tensor as its dtype's short name, its shape and
    its values; tuples, generators and other iterables as lists; dict keys as strings."""
    if hasattr(value, "dtype") and hasattr(value, "tolist") and hasattr(value, "shape"):
        return {"tensor": str(value.dtype).split(".")[-1], "shape": list(value.shape),
                "values": value.tolist()}
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return {"bytes": base64.b64encode(value).decode()}
    return [encode(v) for v in value]


def run_case(fn, tt, torch, tmp, fixtures):
    try:
        return {"value": encode(fn(tt, torch, tmp, fixtures))}
    except Exception as error:  # the reference's error is part of its behaviour
        return {"raises": type(error).__name__}


CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "A stitch in time saves nine!",
    "Don't count your chickens before they hatch; it's <br />risky.",
    "Well, well, \"well\": what (now) is THAT?",
    "the fox and the dog are friends",
]


def write(tmp, name, text):
    path = os.path.join(tmp, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


# -- fixtures (made by torchtext only, stored in the recording) -----------------------------

@fixture
def fixture_spm_unigram(tt, tmp):
    write(tmp, "corpus.txt", "\n".join(CORPUS * 20) + "\n")
    # relative paths: the model stores its trainer's arguments, and the recording stays the
    # same from one run to the next
    cwd = os.getcwd()
    os.chdir(tmp)
    try:
        tt.data.functional.generate_sp_model("corpus.txt", vocab_size=60, model_type="unigram",
                                             model_prefix="uni")
    finally:
        os.chdir(cwd)
    return Path(tmp, "uni.model").read_bytes()


@fixture
def fixture_vocab_pt(tt, tmp):
    """torch.save of a torchtext Vocab with a default index, as the bundles' *.vocab.pt."""
    import torch

    vocab = tt.vocab.build_vocab_from_iterator(TOKENS, specials=["<unk>"])
    vocab.set_default_index(0)
    path = os.path.join(tmp, "vocab.pt")
    torch.save(vocab, path)
    return Path(path).read_bytes()


@fixture
def fixture_vocab_pt_no_default(tt, tmp):
    import torch

    path = os.path.join(tmp, "vocab.pt")
    torch.save(tt.vocab.build_vocab_from_iterator(TOKENS), path)
    return Path(path).read_bytes()


def fixture_path(fixtures, name, tmp):
    path = os.path.join(tmp, name + ".model")
    Path(path).write_bytes(fixtures[name])
    return path


# -- torchtext.data.utils -------------------------------------------------------------------

@case
def case_basic_english(tt, torch, tmp, fixtures):
    tokenizer = tt.data.utils.get_tokenizer("basic_english")
    return [tokenizer(line) for line in CORPUS + ["  ", "", "1.5 x 2,3 = y/z 'q'"]]


@case
def case_tokenizer_none_is_split(tt, torch, tmp, fixtures):
    tokenizer = tt.data.utils.get_tokenizer(None)
    return [tokenizer(line) for line in CORPUS + ["a  b\tc\n d"]]


@case
def case_tokenizer_callable_returned(tt, torch, tmp, fixtures):
    return tt.data.utils.get_tokenizer(str.upper)("abc")


@case
def case_basic_english_other_language(tt, torch, tmp, fixtures):
    return tt.data.utils.get_tokenizer("basic_english", language="fr")("a b")


@case
def case_tokenizer_unknown_name(tt, torch, tmp, fixtures):
    return tt.data.utils.get_tokenizer("no-such-tokenizer")


@case
def case_tokenizer_library_missing(tt, torch, tmp, fixtures):
    # neither environment has spacy, nltk (toktok), sacremoses or revtok
    out = []
    for name in ("spacy", "toktok", "moses", "subword", "revtok"):
        try:
            tt.data.utils.get_tokenizer(name)
            out.append(None)
        except Exception as error:
            out.append(type(error).__name__)
    return out


@case
def case_ngrams_iterator(tt, torch, tmp, fixtures):
    tokens = ["here", "we", "are", "we"]
    return [list(tt.data.utils.ngrams_iterator(tokens, n)) for n in (1, 2, 3, 5)]


@case
def case_interleave_keys(tt, torch, tmp, fixtures):
    return [tt.data.utils.interleave_keys(a, b) for a, b in
            [(0, 0), (1, 0), (0, 1), (3, 5), (255, 1), (1023, 77)]]


@case
def case_random_shuffler(tt, torch, tmp, fixtures):
    random.seed(7)
    shuffler = tt.data.utils.RandomShuffler()
    first = shuffler(list(range(10)))
    second = shuffler(list(range(10)))
    replay = tt.data.utils.RandomShuffler(shuffler.random_state)
    return [first, second, replay(list("abcdef"))]


@case
def case_dtype_to_attr(tt, torch, tmp, fixtures):
    return [tt.data.utils.dtype_to_attr(d) for d in (torch.float32, torch.int64, torch.bool)]


@case
def case_is_tokenizer_serializable(tt, torch, tmp, fixtures):
    f = tt.data.utils.is_tokenizer_serializable
    return [f("spacy", "en"), f("basic_english", "en"), f(None, "en"), f("moses", "en")]


# -- torchtext.data.functional --------------------------------------------------------------

@case
def case_simple_space_split(tt, torch, tmp, fixtures):
    return list(tt.data.functional.simple_space_split(CORPUS + ["a  b"]))


@case
def case_custom_replace(tt, torch, tmp, fixtures):
    replace = tt.data.functional.custom_replace([(r"<br />", ""), (r"\s+", " "), ("[.!;]", "#")])
    return list(replace(CORPUS))


@case
def case_numericalize_tokens(tt, torch, tmp, fixtures):
    vocab = {"the": 0, "fox": 1, "dog": 2, "a": 3}
    iterator = tt.data.functional.numericalize_tokens_from_iterator(
        vocab, [["the", "fox"], ["a", "dog", "the"]])
    return [list(ids) for ids in iterator]


@case
def case_numericalize_tokens_unknown(tt, torch, tmp, fixtures):
    return list(next(tt.data.functional.numericalize_tokens_from_iterator({"a": 0}, [["b"]])))


@case
def case_numericalize_tokens_removed(tt, torch, tmp, fixtures):
    vocab = {"the": 0, "fox": 1}
    iterator = tt.data.functional.numericalize_tokens_from_iterator(
        vocab, [["the", "fox", "the"], ["fox"]], removed_tokens=["fox"])
    return [list(ids) for ids in iterator]


@case
def case_to_map_style_dataset(tt, torch, tmp, fixtures):
    dataset = tt.data.functional.to_map_style_dataset(iter([(1, "a"), (2, "b"), (3, "c")]))
    return [len(dataset), dataset[0], dataset[2]]


@case
def case_filter_wikipedia_xml(tt, torch, tmp, fixtures):
    lines = ["<text xml:space=\"preserve\">The [[Fox]] (''vulpes'') is 3 &amp; more.</text>",
             "#REDIRECT [[Elsewhere]]", "<page>", "Bob's {{cite|x}} 1999 http://a.b/c ok",
             "[[Image:x.png|thumb|A fox]] end", "</text>", "after"]
    return list(tt.data.functional.filter_wikipedia_xml(iter(lines)))


@case
def case_generate_sp_model_pieces(tt, torch, tmp, fixtures):
    corpus = write(tmp, "corpus.txt", "\n".join(CORPUS * 20) + "\n")
    prefix = os.path.join(tmp, "bpe")
    tt.data.functional.generate_sp_model(corpus, vocab_size=70, model_type="bpe",
                                         model_prefix=prefix)
    sp = tt.data.functional.load_sp_model(prefix + ".model")
    return [os.path.exists(prefix + ".vocab"), sp.GetPieceSize(),
            [sp.IdToPiece(i) for i in range(sp.GetPieceSize())]]


@case
def case_sentencepiece_tokenizer(tt, torch, tmp, fixtures):
    sp = tt.data.functional.load_sp_model(fixture_path(fixtures, "spm_unigram", tmp))
    return [list(pieces) for pieces in
            tt.data.functional.sentencepiece_tokenizer(sp)(CORPUS + ["unseen zebra"])]


@case
def case_sentencepiece_numericalizer(tt, torch, tmp, fixtures):
    sp = tt.data.functional.load_sp_model(fixture_path(fixtures, "spm_unigram", tmp))
    return [list(ids) for ids in
            tt.data.functional.sentencepiece_numericalizer(sp)(CORPUS + ["unseen zebra"])]


@case
def case_load_sp_model_file_object(tt, torch, tmp, fixtures):
    with open(fixture_path(fixtures, "spm_unigram", tmp), "rb") as f:
        sp = tt.data.functional.load_sp_model(f)
    return [sp.GetPieceSize(), sp.EncodeAsIds("the fox"), sp.EncodeAsPieces("the fox"),
            sp.unk_id(), sp.PieceToId("<unk>")]


@case
def case_sentencepiece_processor_methods(tt, torch, tmp, fixtures):
    sp = tt.data.functional.load_sp_model(fixture_path(fixtures, "spm_unigram", tmp))
    text = "The lazy dog, in time!"
    ids, pieces = sp.EncodeAsIds(text), sp.EncodeAsPieces(text)
    # the methods of torchtext's processor (torchtext._torchtext.SentencePiece)
    return [ids, pieces, sp.DecodeIds(ids), sp.DecodePieces(pieces), sp.GetPieceSize(),
            [sp.IdToPiece(i) for i in (0, 1, 2, 3, 10)], sp.PieceToId("▁the"),
            sp.PieceToId("not-a-piece"), sp.unk_id(),
            sp.EncodeAsPieces("ÀÉ ｆｕｌｌ　width ①"), sp.EncodeAsIds("")]


@case
def case_sentencepiece_transform_batch(tt, torch, tmp, fixtures):
    transform = tt.transforms.SentencePieceTokenizer(fixture_path(fixtures, "spm_unigram", tmp))
    return [transform(["", "  spaced   out  ", "UPPER lower"]), transform("")]


@case
def case_load_sp_model_bad_argument(tt, torch, tmp, fixtures):
    return tt.data.functional.load_sp_model(3)


# -- torchtext.data.metrics -----------------------------------------------------------------

@case
def case_bleu_score(tt, torch, tmp, fixtures):
    candidates = [["My", "full", "pytorch", "test"], ["Another", "Sentence"]]
    references = [[["My", "full", "pytorch", "test"], ["Completely", "Different"]],
                  [["No", "Match"]]]
    bleu = tt.data.metrics.bleu_score
    return [bleu(candidates, references),
            bleu(candidates, references, max_n=2, weights=[0.5, 0.5]),
            bleu([["the", "cat", "sat", "on", "the", "mat"]],
                 [[["the", "cat", "is", "on", "the", "mat"], ["there", "is", "a", "cat"]]]),
            bleu([["a", "b", "c", "d", "e"]], [[["a", "b", "c", "d", "e", "f", "g"]]],
                 max_n=3, weights=[1 / 3] * 3),
            bleu([["x"]], [[["y"]]])]


@case
def case_bleu_score_bad_lengths(tt, torch, tmp, fixtures):
    return tt.data.metrics.bleu_score([["a"]], [[["a"]], [["b"]]])


@case
def case_bleu_score_bad_weights(tt, torch, tmp, fixtures):
    return tt.data.metrics.bleu_score([["a"]], [[["a"]]], max_n=2, weights=[1.0])


# -- torchtext.functional -------------------------------------------------------------------

@case
def case_to_tensor(tt, torch, tmp, fixtures):
    F = tt.functional
    return [F.to_tensor([[1, 2], [1, 2, 3]], padding_value=0),
            F.to_tensor([[1, 2], [3]], padding_value=-1, dtype=torch.float32),
            F.to_tensor([4, 5, 6]), F.to_tensor([1, 2], dtype=torch.int32), F.to_tensor([[]])]


@case
def case_to_tensor_floats(tt, torch, tmp, fixtures):
    return tt.functional.to_tensor([[1.5, 2.0], [3.0]], padding_value=-1)


@case
def case_to_tensor_ragged_without_padding(tt, torch, tmp, fixtures):
    return tt.functional.to_tensor([[1, 2], [1, 2, 3]])


@case
def case_truncate(tt, torch, tmp, fixtures):
    F = tt.functional
    return [F.truncate([1, 2, 3, 4], 2), F.truncate([["a", "b", "c"], ["d"]], 2),
            F.truncate([1, 2], 5), F.truncate([], 3)]


@case
def case_truncate_bad_input(tt, torch, tmp, fixtures):
    return tt.functional.truncate(5, 2)


@case
def case_add_token(tt, torch, tmp, fixtures):
    F = tt.functional
    return [F.add_token([1, 2], 0), F.add_token([1, 2], 9, begin=False),
            F.add_token([["a"], ["b", "c"]], "<s>"), F.add_token([["a"]], "</s>", begin=False)]


@case
def case_str_to_int(tt, torch, tmp, fixtures):
    return [tt.functional.str_to_int(["1", "22", "-3"]),
            tt.functional.str_to_int([["4", "5"], ["6"]])]


# -- torchtext.transforms -------------------------------------------------------------------

@case
def case_transforms_truncate_addtoken(tt, torch, tmp, fixtures):
    T = tt.transforms
    return [T.Truncate(2)([1, 2, 3]), T.Truncate(1)([["a", "b"], ["c"]]),
            T.AddToken(0)([5, 6]), T.AddToken("</s>", begin=False)([["a"], ["b"]])]


@case
def case_pad_transform(tt, torch, tmp, fixtures):
    pad = tt.transforms.PadTransform(max_length=5, pad_value=-1)
    return [pad(torch.tensor([1, 2, 3])), pad(torch.tensor([[1, 2], [3, 4]])),
            pad(torch.tensor([1, 2, 3, 4, 5, 6])),
            tt.transforms.PadTransform(3, 0)(torch.tensor([[1.5], [2.5]]))]


@case
def case_to_tensor_transform(tt, torch, tmp, fixtures):
    T = tt.transforms
    return [T.ToTensor(padding_value=0)([[1, 2], [3]]), T.ToTensor()([7, 8]),
            T.ToTensor(padding_value=1, dtype=torch.float64)([[1], [2, 3]])]


@case
def case_label_to_index(tt, torch, tmp, fixtures):
    T = tt.transforms
    names = ["neg", "pos", "neutral"]
    unsorted = T.LabelToIndex(label_names=names)
    by_name = T.LabelToIndex(label_names=names, sort_names=True)
    path = write(tmp, "labels.txt", "b\na\nc\n")
    from_file = T.LabelToIndex(label_path=path)
    return [unsorted("pos"), unsorted(["neutral", "neg"]), unsorted.label_names,
            by_name(["neg", "neutral", "pos"]), by_name.label_names,
            from_file(["a", "b", "c"]), from_file.label_names]


@case
def case_label_to_index_both_arguments(tt, torch, tmp, fixtures):
    return tt.transforms.LabelToIndex(label_names=["a"], label_path="x.txt")


@case
def case_label_to_index_no_arguments(tt, torch, tmp, fixtures):
    return tt.transforms.LabelToIndex()


@case
def case_str_to_int_transform(tt, torch, tmp, fixtures):
    transform = tt.transforms.StrToIntTransform()
    return [transform(["1", "2"]), transform([["3"], ["4", "5"]])]


@case
def case_vocab_transform(tt, torch, tmp, fixtures):
    vocab = tt.vocab.vocab(OrderedDict([("a", 3), ("b", 2), ("c", 1)]), specials=["<unk>"])
    vocab.set_default_index(vocab["<unk>"])
    transform = tt.transforms.VocabTransform(vocab)
    return [transform(["a", "c", "zz"]), transform([["b"], ["a", "q"]])]


@case
def case_regex_tokenizer(tt, torch, tmp, fixtures):
    patterns = [(r"\'", " '  "), (r"\"", ""), (r"[,.]", " "), (r"\s+", " ")]
    tokenizer = tt.transforms.RegexTokenizer(patterns)
    return [tokenizer(line) for line in CORPUS + ["", "  a  "]]


@case
def case_regex_tokenizer_groups(tt, torch, tmp, fixtures):
    # torchtext runs RE2: groups and \\1 in the replacement, classes, \\b, anchors, Unicode
    patterns = [(r"(\d+)-(\d+)", r"\2 to \1"), (r"\bthe\b", "THE"), (r"^\s+", ""),
                (r"[[:punct:]]", " "), (r"é", "e"), (r"\s+", " ")]
    tokenizer = tt.transforms.RegexTokenizer(patterns)
    return [tokenizer(t) for t in ["  the 10-20 theme, café!", "other—the end.", "x\ty\nz"]]


@case
def case_regex_tokenizer_rewrites(tt, torch, tmp, fixtures):
    # RE2's rewrite strings: \\0 the match, \\N a group, \\\\ a backslash; and (?i), {m,}
    T = tt.transforms
    text = "a fox abab xx aaa 12 FoX"
    return [T.RegexTokenizer(patterns)(text) for patterns in [
        [(r"fox", r"<\0>")], [(r"(a)(b)", r"\2\1\\")], [(r"(?i)FOX", "dog")],
        [(r"a{2,}", "A")], [(r"\w+", r"[\0]")], [(r"(x)|(y)", r"<\2>")]]]


@case
def case_basic_english_unicode(tt, torch, tmp, fixtures):
    tokenizer = tt.data.utils.get_tokenizer("basic_english")
    return [tokenizer(t) for t in ["Ünïcode CAFÉ «quoted» naïve—dash", "日本語 テキスト。",
                                   "tab\tnew\nline", "it's   'quoted' \"x\"", "a.b.c!?;:"]]


@case
def case_bleu_clipping(tt, torch, tmp, fixtures):
    bleu = tt.data.metrics.bleu_score
    return [bleu([["the"] * 7], [[["the", "cat", "is", "on", "the", "mat"]]], max_n=1,
                 weights=[1.0]),
            bleu([["a", "b", "a", "b"]], [[["a", "b", "a", "b"], ["b", "a"]]], max_n=2,
                 weights=[0.5, 0.5]),
            bleu([["a", "b", "c"], ["d", "e", "f", "g"]],
                 [[["a", "b", "c", "x"]], [["d", "e", "f", "g"]]], max_n=3,
                 weights=[0.2, 0.3, 0.5])]


@case
def case_sequential(tt, torch, tmp, fixtures):
    T = tt.transforms
    pipeline = T.Sequential(T.Truncate(3), T.AddToken(0), T.AddToken(9, begin=False),
                            T.ToTensor(padding_value=-1))
    return [pipeline([[1, 2, 3, 4], [5]]), len(pipeline)]


@case
def case_sentencepiece_tokenizer_transform(tt, torch, tmp, fixtures):
    transform = tt.transforms.SentencePieceTokenizer(fixture_path(fixtures, "spm_unigram", tmp))
    return [transform(CORPUS[0]), transform(CORPUS[1:3])]


@case
def case_t5_transform(tt, torch, tmp, fixtures):
    transform = tt.models.T5Transform(fixture_path(fixtures, "spm_unigram", tmp), max_seq_len=6,
                                      eos_idx=2, padding_idx=0)
    ids = transform(["the quick fox", "a stitch in time saves nine"])
    single = transform("the dog")
    return [ids, single, transform.decode(ids.tolist()), transform.decode(single.tolist())]


@case
def case_gpt2_add_special_tokens(tt, torch, tmp, fixtures):
    encoder_path, bpe_path = _gpt2_files(tmp)
    tokenizer = tt.transforms.GPT2BPETokenizer(encoder_path, bpe_path, return_tokens=True)
    added = tokenizer.add_special_tokens({"unk_token": "<|endoftext|>",
                                         "additional_special_tokens": ["<sep>", "<cls>"]})
    # the same tokens for both: torchtext's added tokens leak into its other GPT-2 tokenizers
    ids = tt.transforms.GPT2BPETokenizer(encoder_path, bpe_path)
    ids_added = ids.add_special_tokens({"unk_token": "<|endoftext|>",
                                        "additional_special_tokens": ["<sep>", "<cls>"]})
    texts = ["hello<sep>world <cls>", "<|endoftext|>hello", "hello  <sep>  world",
             "hello\n<sep>\nworld", "a <sep><cls> b", "<sep>"]
    again = tokenizer.add_special_tokens({"additional_special_tokens": ["<sep>", "<new>"]})
    return [added, [tokenizer(t) for t in texts], ids_added, [ids(t) for t in texts], again,
            tokenizer("x <new> <sep>y"),
            [ids.decode(ids(t)) for t in ["hello <sep> world", "<sep>hello", "hello<sep>",
                                          "<sep><cls>", "a  <sep>  b", "x<sep>\ny", ""]]]


@case
def case_gpt2_add_special_tokens_bad_key(tt, torch, tmp, fixtures):
    encoder_path, bpe_path = _gpt2_files(tmp)
    tokenizer = tt.transforms.GPT2BPETokenizer(encoder_path, bpe_path)
    return tokenizer.add_special_tokens({"weird_token": "<w>"})


# A tiny GPT-2 BPE: byte-level symbols (space is "Ġ") and a few merges.
GPT2_MERGES = ["h e", "l l", "he ll", "hell o", "Ġ w", "o r", "Ġw or", "Ġwor l", "Ġworl d"]


def _gpt2_files(tmp):
    symbols = [chr(c) for c in range(ord("!"), ord("~") + 1)] + ["Ġ"]
    merged = [m.replace(" ", "") for m in GPT2_MERGES]
    encoder = {s: i for i, s in enumerate(symbols + merged + ["<|endoftext|>"])}
    encoder_path = write(tmp, "encoder.json", json.dumps(encoder))
    bpe_path = write(tmp, "vocab.bpe", "#version: 0.2\n" + "\n".join(GPT2_MERGES) + "\n")
    return encoder_path, bpe_path


@case
def case_gpt2_bpe_tokenizer(tt, torch, tmp, fixtures):
    encoder_path, bpe_path = _gpt2_files(tmp)
    ids = tt.transforms.GPT2BPETokenizer(encoder_path, bpe_path)
    tokens = tt.transforms.GPT2BPETokenizer(encoder_path, bpe_path, return_tokens=True)
    text = "hello world! Hello, worlds"
    return [ids(text), tokens(text), ids([text, "hell"]), ids.decode(ids("hello world"))]


@case
def case_clip_tokenizer(tt, torch, tmp, fixtures):
    merges = ["h e", "l l", "he ll", "hell o</w>", "w o", "r l", "wo rl", "worl d</w>"]
    merges_path = write(tmp, "merges.txt", "#version: 0.2\n" + "\n".join(merges) + "\n")
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)] + list("!,.")
    symbols = letters + [s + "</w>" for s in letters]
    symbols += [m.replace(" ", "") for m in merges] + ["<|startoftext|>", "<|endoftext|>"]
    encoder_path = write(tmp, "clip.json", json.dumps({s: i for i, s in enumerate(symbols)}))
    ids = tt.transforms.CLIPTokenizer(merges_path, encoder_path)
    tokens = tt.transforms.CLIPTokenizer(merges_path, encoder_path, return_tokens=True)
    text = "Hello World! hello, worlds"
    return [ids(text), tokens(text), tokens([text, "he"])]


@case
def case_bert_tokenizer(tt, torch, tmp, fixtures):
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "fox", "jump", "##s", "##ed", "over",
             "caf", "##e", "!", ",", "héllo", "hello"]
    path = write(tmp, "vocab.txt", "\n".join(vocab) + "\n")
    T = tt.transforms
    lower = T.BERTTokenizer(path, do_lower_case=True)
    lower_tokens = T.BERTTokenizer(path, do_lower_case=True, return_tokens=True)
    cased_tokens = T.BERTTokenizer(path, do_lower_case=False, return_tokens=True)
    keep_accents = T.BERTTokenizer(path, do_lower_case=True, strip_accents=False,
                                   return_tokens=True)
    text = "The fox jumps, jumped over Café! Héllo [CLS] zebra"
    out = [lower(text), lower_tokens(text), cased_tokens(text), keep_accents(text),
           lower([text, "the fox"])]
    for do_lower_case in (True, False):
        for strip_accents in (None, True, False):
            out.append(T.BERTTokenizer(path, do_lower_case=do_lower_case,
                                       strip_accents=strip_accents, return_tokens=True)(
                "Héllo héllo HÉLLO caf café"))
    return out


@case
def case_char_bpe_tokenizer(tt, torch, tmp, fixtures):
    merges = ["h e", "l l", "he ll", "hell o</w>", "w o"]
    letters = list("dehlorw!")
    symbols = ["<unk>", *letters, *(c + "</w>" for c in letters),
               *(m.replace(" ", "") for m in merges)]
    vocab = {s: i for i, s in enumerate(symbols)}
    encoder_path = write(tmp, "char_vocab.json", json.dumps(vocab))
    merges_path = write(tmp, "char_merges.txt", "#version: 0.2\n" + "\n".join(merges) + "\n")
    ids = tt.transforms.CharBPETokenizer(encoder_path, merges_path)
    tokens = tt.transforms.CharBPETokenizer(encoder_path, merges_path, return_tokens=True)
    text = "hello world!"
    return [ids(text), tokens(text), ids([text, "hello"]), ids.decode(ids(text)),
            ids.vocab_size]


@case
def case_clip_tokenizer_merges_only(tt, torch, tmp, fixtures):
    merges = ["h e", "l l", "he ll", "hell o</w>", "w o", "r l", "wo rl", "worl d</w>"]
    merges_path = write(tmp, "merges.txt", "#version: 0.2\n" + "\n".join(merges) + "\n")
    out = []
    for num_merges in (None, 2, 5):
        tokens = tt.transforms.CLIPTokenizer(merges_path, num_merges=num_merges,
                                             return_tokens=True)
        ids = tt.transforms.CLIPTokenizer(merges_path, num_merges=num_merges)
        out += [tokens("Hello world, it's 2024! <|endoftext|>"), ids("hello world")]
    return out


@case
def case_char_bpe_options(tt, torch, tmp, fixtures):
    merges = ["h e", "l l", "he ll", "hell o", "w o"]
    letters = list("dehlorw!")
    symbols = ["<unk>", "<s>", *letters, *(c + "@@" for c in letters),
               *(m.replace(" ", "") for m in merges), "hello@@"]
    encoder_path = write(tmp, "v.json", json.dumps({s: i for i, s in enumerate(symbols)}))
    merges_path = write(tmp, "m.txt", "#version: 0.2\n" + "\n".join(merges) + "\n")
    T = tt.transforms
    unk = T.CharBPETokenizer(encoder_path, merges_path, unk_token="<unk>")
    unk_tokens = T.CharBPETokenizer(encoder_path, merges_path, unk_token="<unk>",
                                    return_tokens=True)
    suffix = T.CharBPETokenizer(encoder_path, merges_path, return_tokens=True, suffix="@@",
                                unk_token="<unk>")
    special = T.CharBPETokenizer(encoder_path, merges_path, return_tokens=True,
                                 special_tokens=["<s>"], unk_token="<unk>")
    text = "hello world zz!"
    return [unk(text), unk_tokens(text), suffix(text), special("<s> hello <s>"),
            unk.decode(unk(text)), suffix.decode(suffix(text)), unk.encode("hello"),
            unk_tokens.encode("hello")]


@case
def case_bert_tokenizer_more(tt, torch, tmp, fixtures):
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "##aff", "##able", "中", "国",
             "a", "!", "?", "'", "s", "don", "t", "##s", "x"]
    path = write(tmp, "vocab.txt", "\n".join(vocab) + "\n")
    T = tt.transforms
    plain = T.BERTTokenizer(path, return_tokens=True)
    keep = T.BERTTokenizer(path, return_tokens=True, never_split=["[CLS]", "[MASK]"])
    texts = ["unaffable 中国! don't", "[CLS] a [MASK] x?", "x" * 120, "a\u00adb\tx\u3000a",
             "UNAFFABLE", ""]
    return [[plain(t) for t in texts], [keep(t) for t in texts]]


@case
def case_label_to_index_unknown(tt, torch, tmp, fixtures):
    return tt.transforms.LabelToIndex(label_names=["a", "b"])("c")


@case
def case_pad_and_to_tensor_edges(tt, torch, tmp, fixtures):
    T, F = tt.transforms, tt.functional
    return [T.PadTransform(4, 9)(torch.zeros(0, dtype=torch.long)),
            T.PadTransform(2, 0)(torch.tensor([[1, 2, 3]])),
            F.to_tensor([[], [1]], padding_value=0), F.to_tensor([[7]], padding_value=0),
            T.ToTensor(padding_value=5)([[1, 2, 3], [], [4]])]


def _error_name(fn):
    try:
        fn()
        return None
    except Exception as error:
        return type(error).__name__


@case
def case_transform_input_errors(tt, torch, tmp, fixtures):
    T, F = tt.transforms, tt.functional
    calls = [lambda: T.Truncate(2)((1, 2, 3)), lambda: T.AddToken(0)((1, 2)),
             lambda: T.ToTensor()([["a"]]), lambda: T.ToTensor()("abc"),
             lambda: F.add_token("abc", 0), lambda: F.str_to_int([1, 2]),
             lambda: T.StrToIntTransform()("12"), lambda: T.VocabTransform(
                 tt.vocab.vocab(OrderedDict([("a", 1)])))("a"),
             lambda: T.PadTransform(3, 0)([1, 2]), lambda: F.to_tensor([[1], [2.5]], 0),
             lambda: T.LabelToIndex(label_names=["a", "a"])("a")]
    return [_error_name(call) for call in calls]


@case
def case_label_to_index_file_details(tt, torch, tmp, fixtures):
    path = write(tmp, "labels.txt", "pos \n neg\n\nmixed\n")
    transform = tt.transforms.LabelToIndex(label_path=path)
    return [transform.label_names, _error_name(lambda: transform(["pos"])),
            _error_name(lambda: transform([" neg"]))]


# -- torchtext.vocab ------------------------------------------------------------------------

TOKENS = [["b", "a", "c", "a"], ["d", "b", "a"], ["e", "c", "c", "b"], ["f"]]


@case
def case_build_vocab_orderings(tt, torch, tmp, fixtures):
    build = tt.vocab.build_vocab_from_iterator
    return [build(TOKENS).get_itos(),
            build(iter(TOKENS), min_freq=2).get_itos(),
            build(TOKENS, specials=["<unk>", "<pad>"]).get_itos(),
            build(TOKENS, specials=["<unk>", "<pad>"], special_first=False).get_itos(),
            build(TOKENS, specials=["<unk>"], max_tokens=3).get_itos(),
            build(TOKENS, specials=["a"]).get_itos(),
            build([["x", "y"], ["y", "x"], ["z"]]).get_itos()]


@case
def case_build_vocab_max_tokens_too_small(tt, torch, tmp, fixtures):
    return tt.vocab.build_vocab_from_iterator(TOKENS, specials=["<a>", "<b>"], max_tokens=1)


@case
def case_vocab_factory(tt, torch, tmp, fixtures):
    counter = Counter(["x", "y", "y", "z", "z", "z"])
    ordered = OrderedDict(sorted(counter.items(), key=lambda kv: kv[1], reverse=True))
    v = tt.vocab.vocab
    return [v(ordered).get_itos(), v(ordered, min_freq=2).get_itos(),
            v(ordered, specials=["<unk>"]).get_itos(),
            v(ordered, specials=["<unk>", "y"], special_first=False).get_itos(),
            v(OrderedDict([("a", 1), ("b", 1)])).get_stoi()]


@case
def case_vocab_ops(tt, torch, tmp, fixtures):
    vocab = tt.vocab.build_vocab_from_iterator(TOKENS, specials=["<unk>"])
    out = [len(vocab), "a" in vocab, "zz" in vocab, vocab["a"], vocab(["c", "b"]),
           vocab.lookup_token(1), vocab.lookup_tokens([0, 2]), vocab.lookup_indices(["b", "a"]),
           vocab.get_default_index(), sorted(vocab.get_stoi().items()), vocab.get_itos()]
    vocab.set_default_index(0)
    out += [vocab["zz"], vocab.get_default_index(), vocab(["zz", "a"])]
    vocab.insert_token("new", 2)
    vocab.append_token("last")
    out += [vocab.get_itos(), vocab["c"], vocab["last"]]
    vocab.set_default_index(None)
    out += [vocab.get_default_index()]
    return out


@case
def case_vocab_unknown_without_default(tt, torch, tmp, fixtures):
    return tt.vocab.build_vocab_from_iterator(TOKENS)["zz"]


@case
def case_vocab_lookup_token_out_of_range(tt, torch, tmp, fixtures):
    return tt.vocab.build_vocab_from_iterator(TOKENS).lookup_token(100)


@case
def case_vocab_insert_existing(tt, torch, tmp, fixtures):
    return tt.vocab.build_vocab_from_iterator(TOKENS).insert_token("a", 0)


@case
def case_vocab_insert_out_of_range(tt, torch, tmp, fixtures):
    return tt.vocab.build_vocab_from_iterator(TOKENS).insert_token("q", 100)


@case
def case_vocab_append_existing(tt, torch, tmp, fixtures):
    return tt.vocab.build_vocab_from_iterator(TOKENS).append_token("a")


@case
def case_vectors_from_file(tt, torch, tmp, fixtures):
    write(tmp, "vec.txt", "the 0.1 0.2 0.3\nfox -1 0.5 2\ndog 3 3 3\n")
    vectors = tt.vocab.Vectors(name="vec.txt", cache=tmp)
    return [vectors.dim, len(vectors), vectors.itos, sorted(vectors.stoi.items()),
            vectors["fox"], vectors["zebra"], vectors.get_vecs_by_tokens(["dog", "the"]),
            vectors.get_vecs_by_tokens("dog"), vectors.vectors]


@case
def case_vectors_unk_init_and_lower(tt, torch, tmp, fixtures):
    write(tmp, "vec2.txt", "Fox 1 2 3\ndog 3 4 5\n")
    vectors = tt.vocab.Vectors(name="vec2.txt", cache=tmp,
                               unk_init=lambda t: t.fill_(7.0))
    return [vectors["zebra"],
            vectors.get_vecs_by_tokens(["FOX", "Fox", "fox"], lower_case_backup=True)]


@case
def case_vectors_two_dimensional(tt, torch, tmp, fixtures):
    # a row of two values reads as a word2vec header: a file of them has no vectors
    write(tmp, "vec3.txt", "Fox 1 2\ndog 3 4\n")
    return tt.vocab.Vectors(name="vec3.txt", cache=tmp).dim


@case
def case_vocab_edges(tt, torch, tmp, fixtures):
    build, v = tt.vocab.build_vocab_from_iterator, tt.vocab.vocab
    empty = build([], specials=["<unk>"])
    return [empty.get_itos(), build([[]]).get_itos(),
            build(TOKENS, min_freq=3, specials=["<pad>"]).get_itos(),
            v(OrderedDict([("b", 5), ("<unk>", 1), ("a", 3)]), specials=["<unk>"]).get_itos(),
            v(OrderedDict([("b", 5), ("a", 1)]), min_freq=2, specials=["<unk>"],
              special_first=False).get_itos(),
            build([["ü", "é", "ü"], ["日本"]]).get_itos()]


@case
def case_vectors_formats(tt, torch, tmp, fixtures):
    # a word2vec header line, max_vectors, non-ASCII tokens, a repeated token
    write(tmp, "w2v.txt", "3 2\nfoo 1 2 3\nbär 4 5 6\nfoo 7 8 9\nbaz 0 0 1\n")
    full = tt.vocab.Vectors(name="w2v.txt", cache=tmp)
    write(tmp, "w2v_b.txt", "3 2\nfoo 1 2 3\nbär 4 5 6\nfoo 7 8 9\nbaz 0 0 1\n")
    short = tt.vocab.Vectors(name="w2v_b.txt", cache=tmp, max_vectors=2)
    return [full.itos, full.vectors, len(full), short.itos, short.vectors, full["bär"]]


def _vector_rows(tokens, dim):
    return "".join(f"{t} " + " ".join(f"{((i * 5 + j * 3) % 7) / 7 - 0.4:.3f}"
                                      for j in range(dim)) + "\n"
                   for i, t in enumerate(tokens))


@case
def case_pretrained_vectors_from_the_cache(tt, torch, tmp, fixtures):
    # GloVe, FastText and CharNGram find their files in the cache and download nothing
    write(tmp, "glove.6B.50d.txt", _vector_rows(["the", "fox", "Dog"], 50))
    write(tmp, "wiki.simple.vec", "2 4\n" + _vector_rows(["cat", "mouse"], 4))
    grams = ["2gram-#BEGIN#f", "2gram-fo", "3gram-fox", "4gram-ox#END#", "2gram-x#END#"]
    write(tmp, "charNgram.txt", _vector_rows(grams, 3))
    V = tt.vocab
    glove = V.GloVe(name="6B", dim=50, cache=tmp)
    fasttext = V.FastText(language="simple", cache=tmp)
    chars = V.CharNGram(cache=tmp)
    alias = V.pretrained_aliases["glove.6B.50d"](cache=tmp)
    return [glove.itos, glove["fox"], glove.get_vecs_by_tokens(["DOG", "the"],
                                                               lower_case_backup=True),
            fasttext.itos, fasttext["mouse"], chars["fox"], chars["<unk>"], chars["zzz"],
            chars.dim, alias.itos]


@case
def case_pretrained_aliases(tt, torch, tmp, fixtures):
    return sorted(tt.vocab.pretrained_aliases)


# -- torchtext.nn ---------------------------------------------------------------------------

def _filled(torch, *shape, offset=0.0):
    """A tensor whose values depend only on the shape: the same in every library."""
    n = 1
    for s in shape:
        n *= s
    values = [((i * 7 + 3) % 11) / 11.0 - 0.5 + offset for i in range(n)]
    return torch.tensor(values, dtype=torch.float32).reshape(*shape)


def _fill_parameters(torch, module):
    with torch.no_grad():
        for k, (_, p) in enumerate(sorted(module.named_parameters())):
            p.copy_(_filled(torch, *p.shape, offset=0.01 * k) * 0.5)


def _mha(tt, torch, batch_first=False, bias_kv=False):
    embed_dim, nhead = 8, 2
    in_proj = tt.nn.InProjContainer(torch.nn.Linear(embed_dim, embed_dim),
                                    torch.nn.Linear(embed_dim, embed_dim),
                                    torch.nn.Linear(embed_dim, embed_dim))
    container = tt.nn.MultiheadAttentionContainer(
        nhead, in_proj, tt.nn.ScaledDotProduct(),  # the container transposes for it
        torch.nn.Linear(embed_dim, embed_dim), batch_first=batch_first)
    _fill_parameters(torch, container)
    return container


@case
def case_multihead_attention_container(tt, torch, tmp, fixtures):
    container = _mha(tt, torch)
    q, k, v = _filled(torch, 3, 2, 8), _filled(torch, 4, 2, 8, offset=0.1), \
        _filled(torch, 4, 2, 8, offset=-0.2)
    out, weights = container(q, k, v)
    mask = torch.tensor([[False, True, False, False]] * 3).unsqueeze(0)
    masked, masked_weights = container(q, k, v, attn_mask=mask)
    bias_k, bias_v = _filled(torch, 1, 4, 4, offset=0.3), _filled(torch, 1, 4, 4, offset=-0.3)
    biased, biased_weights = container(q, k, v, bias_k=bias_k, bias_v=bias_v)
    return [out, weights, masked, masked_weights, biased, biased_weights,
            sorted((n, list(p.shape)) for n, p in container.state_dict().items())]


@case
def case_multihead_attention_batch_first(tt, torch, tmp, fixtures):
    container = _mha(tt, torch, batch_first=True)
    q, k = _filled(torch, 2, 3, 8), _filled(torch, 2, 4, 8, offset=0.1)
    return list(container(q, k, k))


@case
def case_scaled_dot_product(tt, torch, tmp, fixtures):
    sdp = tt.nn.ScaledDotProduct(dropout=0.0)
    q, k, v = _filled(torch, 3, 4, 5), _filled(torch, 6, 4, 5, offset=0.2), \
        _filled(torch, 6, 4, 5, offset=-0.1)
    out, weights = sdp(q, k, v)
    mask = torch.zeros(4, 3, 6, dtype=torch.bool)
    mask[:, :, 0] = True
    masked = sdp(q, k, v, attn_mask=mask)
    bias = sdp(q, k, v, bias_k=_filled(torch, 1, 4, 5), bias_v=_filled(torch, 1, 4, 5))
    return [out, weights, *masked, *bias]


@case
def case_scaled_dot_product_broadcast(tt, torch, tmp, fixtures):
    # extra leading dimensions broadcast; a (1, L, S) mask broadcasts over the batch*heads
    sdp = tt.nn.ScaledDotProduct()
    q, k = _filled(torch, 2, 3, 4, 5), _filled(torch, 2, 6, 4, 5, offset=0.2)
    mask = torch.zeros(1, 3, 6, dtype=torch.bool)
    mask[0, 0, 1] = True
    return [*sdp(q, k, k), *sdp(q, k, k, attn_mask=mask)]


@case
def case_scaled_dot_product_float_mask(tt, torch, tmp, fixtures):
    q = _filled(torch, 3, 4, 5)
    return tt.nn.ScaledDotProduct()(q, q, q, attn_mask=torch.zeros(4, 3, 3))


@case
def case_scaled_dot_product_bias_without_value(tt, torch, tmp, fixtures):
    q = _filled(torch, 3, 4, 5)
    return tt.nn.ScaledDotProduct()(q, q, q, bias_k=_filled(torch, 1, 4, 5))


@case
def case_scaled_dot_product_bad_mask(tt, torch, tmp, fixtures):
    sdp = tt.nn.ScaledDotProduct()
    q = _filled(torch, 3, 4, 5)
    return sdp(q, q, q, attn_mask=torch.zeros(4, 3, 3))


@case
def case_multihead_attention_broadcast(tt, torch, tmp, fixtures):
    container = _mha(tt, torch)
    q = _filled(torch, 3, 3, 2, 8)  # a leading dimension the container passes through
    k = _filled(torch, 3, 4, 2, 8, offset=0.1)
    mask = torch.zeros(1, 3, 4, dtype=torch.bool)
    mask[0, :, -1] = True
    return list(container(q[0], k[0], k[0], attn_mask=mask))


@case
def case_in_proj_container(tt, torch, tmp, fixtures):
    container = tt.nn.InProjContainer(torch.nn.Linear(4, 6), torch.nn.Linear(4, 6),
                                      torch.nn.Linear(4, 6))
    _fill_parameters(torch, container)
    x = _filled(torch, 2, 3, 4)
    return list(container(x, x * 2, x - 1))


# -- torchtext.models -----------------------------------------------------------------------

def _keys_and_shapes(model):
    return [f"{k} {'x'.join(map(str, v.shape))}" for k, v in model.state_dict().items()]


def _fill_state(torch, model):
    with torch.no_grad():
        for k, (_, p) in enumerate(model.state_dict().items()):
            if p.dtype == torch.float32:
                p.copy_(_filled(torch, *p.shape, offset=0.003 * k) * 0.2)


def _small_roberta(tt, head):
    conf = tt.models.RobertaEncoderConf(vocab_size=30, embedding_dim=16, ffn_dimension=32,
                                        padding_idx=1, max_seq_len=20, num_attention_heads=2,
                                        num_encoder_layers=2, dropout=0.0)
    head_module = tt.models.RobertaClassificationHead(num_classes=3, input_dim=16) if head \
        else None
    return tt.models.RobertaModel(conf, head_module)


@case
def case_roberta_state_dict(tt, torch, tmp, fixtures):
    return [_keys_and_shapes(_small_roberta(tt, head=False)),
            _keys_and_shapes(_small_roberta(tt, head=True))]


ROBERTA_TOKENS = [[0, 5, 7, 9, 2], [0, 4, 2, 1, 1]]


def _filled_roberta(tt, torch):
    model = _small_roberta(tt, head=True)
    _fill_state(torch, model)
    return model.eval()


@case
def case_roberta_forward(tt, torch, tmp, fixtures):
    model, tokens = _filled_roberta(tt, torch), torch.tensor(ROBERTA_TOKENS)
    encoder = model.encoder
    return [model(tokens), encoder(tokens), encoder(tokens, masked_tokens=tokens.eq(1))]


@case
def case_roberta_forward_no_grad(tt, torch, tmp, fixtures):
    # without grad, torch takes its nested-tensor path: padded positions come out as zeros
    model, tokens = _filled_roberta(tt, torch), torch.tensor(ROBERTA_TOKENS)
    with torch.no_grad():
        return [model(tokens), model.encoder(tokens)]


@case
def case_roberta_all_layers(tt, torch, tmp, fixtures):
    encoder = tt.models.roberta.modules.TransformerEncoder(
        vocab_size=30, embedding_dim=16, padding_idx=1, max_seq_len=20, num_encoder_layers=2,
        num_attention_heads=2, ffn_dimension=32, dropout=0.0, normalize_before=True,
        return_all_layers=True)
    _fill_state(torch, encoder)
    encoder.eval()
    tokens = torch.tensor([[0, 5, 7, 2], [0, 4, 1, 1]])
    # (not max_positions(): torchtext's reads a missing attribute and raises)
    return [encoder(tokens), encoder.positional_embedding._make_positions(tokens, 1)]


@case
def case_roberta_old_checkpoint_names(tt, torch, tmp, fixtures):
    old_names = {"self_attn.in_proj_weight": "attention.input_projection.weight",
                 "self_attn.out_proj.bias": "attention.output_projection.bias",
                 "linear1.weight": "residual_mlp.mlp.0.weight",
                 "norm2.bias": "final_layer_norm.bias"}
    source = _small_roberta(tt, head=False)
    _fill_state(torch, source)
    state = {}
    for key, value in source.state_dict().items():
        for new, old in old_names.items():
            key = key.replace(f"layers.layers.0.{new}", f"layers.0.{old}")
        state[key] = value
    target = _small_roberta(tt, head=False)
    result = target.load_state_dict(state, strict=True)
    target.eval()
    tokens = torch.tensor([[0, 5, 7, 2]])
    return [sorted(k for k in state if "layers.0." in k and "layers.layers" not in k),
            list(result.missing_keys), list(result.unexpected_keys), target(tokens)]


@case
def case_roberta_bundle_build_model(tt, torch, tmp, fixtures):
    source = _small_roberta(tt, head=True)
    _fill_state(torch, source)
    checkpoint = dict(source.state_dict())
    conf = source.encoder.transformer.token_embedding.weight.shape
    encoder_conf = tt.models.RobertaEncoderConf(
        vocab_size=conf[0], embedding_dim=16, ffn_dimension=32, padding_idx=1, max_seq_len=20,
        num_attention_heads=2, num_encoder_layers=2, dropout=0.0)
    tokens = torch.tensor([[0, 5, 7, 2]])
    out = []
    for override in (False, True):
        head = tt.models.RobertaClassificationHead(num_classes=3, input_dim=16)
        with torch.no_grad():
            for p in head.parameters():
                p.fill_(0.25)
        model = tt.models.RobertaBundle.build_model(
            encoder_conf, head=head, checkpoint=dict(checkpoint),
            override_checkpoint_head=override)
        model.eval()
        out.append(model(tokens))
    encoder_only = {k: v for k, v in checkpoint.items() if not k.startswith("head.")}
    head = tt.models.RobertaClassificationHead(num_classes=3, input_dim=16)
    with torch.no_grad():
        for p in head.parameters():
            p.fill_(-0.5)
    model = tt.models.RobertaBundle.build_model(encoder_conf, head=head,
                                                checkpoint=encoder_only, strict=True)
    model.eval()
    out.append(model(tokens))
    bundle = tt.models.RobertaBundle(_encoder_conf=encoder_conf)
    out.append(vars(bundle.encoderConf))
    return out


@case
def case_roberta_bundle_without_weights(tt, torch, tmp, fixtures):
    return tt.models.RobertaBundle(_encoder_conf=tt.models.RobertaEncoderConf()).get_model()


@case
def case_roberta_bad_checkpoint(tt, torch, tmp, fixtures):
    return tt.models.RobertaBundle.build_model(tt.models.RobertaEncoderConf(
        vocab_size=10, embedding_dim=8, ffn_dimension=8, num_attention_heads=2,
        num_encoder_layers=1), checkpoint=3)


def _small_t5(tt, torch, **overrides):
    options = dict(encoder_only=False, linear_head=True, embedding_dim=16, qkv_dim=8,
                   num_attention_heads=2, num_encoder_layers=2, num_decoder_layers=2,
                   ffn_dimension=32, dropout=0.0, vocab_size=40,
                   relative_attention_num_buckets=8, relative_attention_max_distance=16)
    options.update(overrides)
    return tt.models.T5Model(tt.models.T5Conf(**options))


@case
def case_t5_state_dict(tt, torch, tmp, fixtures):
    return [_keys_and_shapes(_small_t5(tt, torch)),
            _keys_and_shapes(_small_t5(tt, torch, encoder_only=True, linear_head=False)),
            _keys_and_shapes(_small_t5(tt, torch, is_gated_act=True, activation="gelu"))]


def _filled_t5(tt, torch, **overrides):
    model = _small_t5(tt, torch, **overrides)
    _fill_state(torch, model)
    return model.eval()


@case
def case_t5_forward(tt, torch, tmp, fixtures):
    model = _filled_t5(tt, torch)
    encoder_tokens = torch.tensor([[5, 6, 7, 1], [8, 9, 1, 0]])
    decoder_tokens = torch.tensor([[0, 3, 4], [0, 2, 0]])
    out = model(encoder_tokens, decoder_tokens)
    return {k: out[k] for k in ("encoder_output", "decoder_output")}


@case
def case_t5_cached_decoding(tt, torch, tmp, fixtures):
    model = _filled_t5(tt, torch)
    encoder_tokens = torch.tensor([[5, 6, 7, 1], [8, 9, 1, 0]])
    decoder_tokens = torch.tensor([[0, 3, 4], [0, 2, 5]])
    full = model(encoder_tokens, decoder_tokens)
    first = model(encoder_tokens, decoder_tokens[:, :2], return_past_key_values=True)
    step = model(encoder_tokens=encoder_tokens, decoder_tokens=decoder_tokens[:, 2:],
                 encoder_outputs=first, past_key_values=first["past_key_values"],
                 return_past_key_values=True)
    shapes = {k: (list(v.shape) if hasattr(v, "shape") else len(v) if isinstance(v, list)
                  else None) for k, v in full.items()}
    return [full["decoder_output"], step["decoder_output"],
            [[list(t.shape) for t in layer] for layer in step["past_key_values"]], shapes,
            model.get_decoder() is model.decoder, model.get_encoder() is model.encoder,
            full["decoder_hidden_states"][0], full["encoder_sa_scores"][0]]


@case
def case_t5_encoder_only_forward(tt, torch, tmp, fixtures):
    model = _filled_t5(tt, torch, encoder_only=True, linear_head=False)
    out = model(torch.tensor([[5, 6, 7, 1], [8, 9, 1, 0]]))
    return [out["encoder_output"], sorted(k for k, v in out.items() if v is not None)]


@case
def case_t5_bundle_build_model(tt, torch, tmp, fixtures):
    source = _small_t5(tt, torch)
    _fill_state(torch, source)
    conf = source.config if hasattr(source, "config") else None
    model = tt.models.T5Bundle.build_model(config=conf, checkpoint=dict(source.state_dict()))
    model.eval()
    out = model(torch.tensor([[5, 6, 7, 1]]), torch.tensor([[0, 3]]))
    return [out["decoder_output"], tt.models.T5Bundle(_config=conf).config.embedding_dim]


def _bundle_record(bundle):
    conf = getattr(bundle, "_encoder_conf", None) or getattr(bundle, "_config", None)
    fields = {k: v for k, v in vars(conf).items()} if conf is not None else None
    head = getattr(bundle, "_head", None)
    return {"path": bundle._path, "conf": fields,
            "head": type(head).__name__ if head is not None else None}


@case
def case_model_bundles(tt, torch, tmp, fixtures):
    names = sorted(n for n in dir(tt.models) if n.isupper() and not n.startswith("_"))
    return {n: _bundle_record(getattr(tt.models, n)) for n in names}


# -- torchtext.utils ------------------------------------------------------------------------

@case
def case_validate_file(tt, torch, tmp, fixtures):
    data = b"hello torchtext"
    sha256 = "dbd1ed9e4f2e2e5a0ff92a1c0d0d1a9dbd4ab0c97c1b3d3f0e3b1e1e1e1e1e1e"
    md5 = "4d6e8ba0cc4b6e0d8c6d3b3a4b3d3b3a"
    import hashlib
    return [tt.utils.validate_file(io.BytesIO(data), hashlib.sha256(data).hexdigest()),
            tt.utils.validate_file(io.BytesIO(data), hashlib.md5(data).hexdigest(), "md5"),
            tt.utils.validate_file(io.BytesIO(data), sha256),
            tt.utils.validate_file(io.BytesIO(data), md5, hash_type="md5")]


@case
def case_validate_file_bad_hash_type(tt, torch, tmp, fixtures):
    return tt.utils.validate_file(io.BytesIO(b"x"), "00", hash_type="crc")


def _relative(paths, root):
    return sorted(os.path.relpath(p, root) for p in paths)


@case
def case_extract_archive(tt, torch, tmp, fixtures):
    src = os.path.join(tmp, "src")
    os.makedirs(os.path.join(src, "sub"))
    write(src, "a.txt", "A")
    write(src, os.path.join("sub", "b.txt"), "B")
    tar_path = os.path.join(tmp, "data.tar.gz")
    with tarfile.open(tar_path, "w:gz") as tar:
        tar.add(os.path.join(src, "a.txt"), arcname="a.txt")
        tar.add(os.path.join(src, "sub", "b.txt"), arcname="sub/b.txt")
    zip_path = os.path.join(tmp, "data.zip")
    with zipfile.ZipFile(zip_path, "w") as z:
        z.writestr("z1.txt", "Z1")
        z.writestr("d/z2.txt", "Z2")
    gz_path = os.path.join(tmp, "single.txt.gz")  # extracted beside itself, not in to_path
    with gzip.open(gz_path, "wb") as f:
        f.write(b"G")
    out = [_relative(tt.utils.extract_archive(tar_path, os.path.join(tmp, "t")),
                     os.path.join(tmp, "t")),
           _relative(tt.utils.extract_archive(zip_path, os.path.join(tmp, "z")),
                     os.path.join(tmp, "z")),
           _relative(tt.utils.extract_archive(gz_path, os.path.join(tmp, "g")),
                     os.path.join(tmp, "g"))]
    out.append(Path(tmp, "single.txt").read_text())
    # the second call finds the files there and does not extract again
    out.append(_relative(tt.utils.extract_archive(tar_path, os.path.join(tmp, "t")),
                         os.path.join(tmp, "t")))
    return out


@case
def case_extract_archive_unknown_format(tt, torch, tmp, fixtures):
    return tt.utils.extract_archive(write(tmp, "plain.txt", "x"), tmp)


@case
def case_get_asset_local_path(tt, torch, tmp, fixtures):
    path = write(tmp, "asset.txt", "x")
    return os.path.relpath(tt.utils.get_asset_local_path(path), tmp)


# -- torchtext.datasets ---------------------------------------------------------------------

@case
def case_dataset_tables(tt, torch, tmp, fixtures):
    D = tt.datasets
    return {"names": sorted(D.DATASETS), "urls": D.URLS, "md5": D.MD5, "num_lines": D.NUM_LINES}

"""A multilingual corpus (accents, CJK, emoji, odd whitespace, added tokens) and small
tokenizers trained on it: one of each kind, compiled or not (tests/text/test_tokenizers_*)."""

import random

from embertext import tokenizers as et
from embertext.tokenizers import models, normalizers, pre_tokenizers, processors

from .test_tokenizers_compiled import python_pipeline

__all__ = ["FIELDS", "TEXTS", "KINDS", "COMPILED", "built", "fields", "assert_same",
           "python_pipeline", "with_threads", "byte_level", "wordpiece", "unigram"]

FIELDS = ["ids", "tokens", "offsets", "type_ids", "attention_mask", "special_tokens_mask",
          "word_ids", "sequence_ids"]

FRAGMENTS = [
    "Hello world!", "It's the world's best; we're sure they'll say I'd've known.",
    "café crème brûlée", "naïve coöperation", "Ångström", "e\u0301 combining", "Straße Größe",
    "中文字符和日本語のテキスト", "한국어 문장도 있습니다", "Русский текст", "Ελληνικά κείμενα",
    "نص عربي", "😀😃 emoji", "🇫🇷 flag", "👩‍💻 ZWJ", "2²½ Ⅻ 3.14159", "$%^&*()_+-=[]{}|",
    "tabs\tand\nnewlines\r\n", "  leading", "trailing  ", "runs   of    spaces",
    "\u3000ideographic\u00a0nbsp", "zero\u200bwidth", "'s 'x ''", "<mask>", "the<mask>end",
    "[MASK] and [UNK]", "ＦＵＬＬＷＩＤＴＨ", "\u2028line\u2029para", "\x1cinfo\x1fsep",
]
EDGES = ["", " ", "\t", "\n\n", "   ", "<mask>", " <mask> ", "😀", "中", "a", "'"]


# Characters found only at the end of the corpus (not in what the Unigram model learns).
RARE = ["ꙮ rare", "ǅ title ß", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 text", "mixed ꙮ and 😀 中"]


def corpus(count=240, seed=0):
    rng = random.Random(seed)
    texts = list(EDGES)
    while len(texts) < count - len(RARE):
        parts = [rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 6))]
        texts.append(rng.choice(["", " ", "  ", "\t", "\n"]).join(parts))
    return texts + RARE


TEXTS = corpus()


def byte_level(add_prefix_space=False, roberta=False):
    tokenizer = et.Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space)
    tokenizer.post_processor = (processors.RobertaProcessing(("</s>", 2), ("<s>", 0)) if roberta
                                else processors.ByteLevel(trim_offsets=True))
    trainer = et.trainers.BpeTrainer(vocab_size=500, show_progress=False,
                                     special_tokens=["<s>", "<pad>", "</s>"],
                                     initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tokenizer.train_from_iterator(TEXTS, trainer)
    tokenizer.add_special_tokens([et.AddedToken("<mask>", lstrip=True, special=True)])
    return tokenizer


def char_bpe():
    tokenizer = et.Tokenizer(models.BPE(unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = et.trainers.BpeTrainer(vocab_size=300, show_progress=False,
                                     special_tokens=["[UNK]"])
    tokenizer.train_from_iterator(TEXTS[::2], trainer)
    tokenizer.add_special_tokens(["<mask>"])
    return tokenizer


def wordpiece():
    tokenizer = et.Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=12))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = et.trainers.WordPieceTrainer(
        vocab_size=300, show_progress=False, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]"])
    tokenizer.train_from_iterator(TEXTS[::2], trainer)
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.BertProcessing(("[SEP]", sep), ("[CLS]", cls))
    tokenizer.add_special_tokens(["<mask>", "[MASK]"])
    return tokenizer


def unigram():
    tokenizer = et.Tokenizer(models.Unigram())
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    trainer = et.trainers.UnigramTrainer(vocab_size=150, show_progress=False,
                                         special_tokens=["<unk>"], unk_token="<unk>")
    # Trained on half the texts: some characters of the others are unknown (those texts go
    # through the Python pipeline).
    tokenizer.train_from_iterator(TEXTS[:len(TEXTS) // 2], trainer)
    tokenizer.add_special_tokens(["<mask>"])
    return tokenizer


KINDS = {"bpe": char_bpe, "byte_level_bpe": byte_level,
         "roberta": lambda: byte_level(True, True), "wordpiece": wordpiece, "unigram": unigram}
COMPILED = ["byte_level_bpe", "roberta", "wordpiece", "unigram"]
_BUILT = {}


def built(name):
    """The tokenizer of ``name``, trained once (the tests do not change it)."""
    if name not in _BUILT:
        _BUILT[name] = KINDS[name]()
    return _BUILT[name]


def fields(encoding):
    return {name: getattr(encoding, name) for name in FIELDS}


def assert_same(a, b):
    assert len(a) == len(b)
    assert fields(a) == fields(b)
    assert len(a.overflowing) == len(b.overflowing)
    for x, y in zip(a.overflowing, b.overflowing):
        assert_same(x, y)


def with_threads(threads, function, *args):
    try:
        et.set_num_threads(threads)
        return function(*args)
    finally:
        et._tokenizer._threads["count"] = None

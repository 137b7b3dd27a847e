"""Text-pipeline helpers of ``torchtext.data.functional``: SentencePiece, regex
replacement, numericalization, Wikipedia XML filtering and map-style datasets."""

import io
import re

from ember.utils.data import Dataset

__all__ = [
    "generate_sp_model",
    "load_sp_model",
    "sentencepiece_numericalizer",
    "sentencepiece_tokenizer",
    "custom_replace",
    "simple_space_split",
    "numericalize_tokens_from_iterator",
    "filter_wikipedia_xml",
    "to_map_style_dataset",
]


def _sentencepiece():
    try:
        import sentencepiece
    except ImportError as error:
        raise ImportError(
            "SentencePiece models need the sentencepiece package: pip install sentencepiece"
        ) from error
    return sentencepiece


def generate_sp_model(filename, vocab_size=20000, model_type="unigram", model_prefix="m_user"):
    r"""Train a SentencePiece model on a text file (one sentence a line).

    Writes ``model_prefix + ".model"`` and ``model_prefix + ".vocab"``. Needs the
    ``sentencepiece`` package.

    Args:
        filename (str): the training text.
        vocab_size (int): the size of the vocabulary. Default: 20000.
        model_type (str): ``"unigram"``, ``"bpe"``, ``"char"`` or ``"word"``.
        model_prefix (str): the path prefix of the files written.

    Examples::

        >>> generate_sp_model("train.txt", vocab_size=23456, model_prefix="spm_user")
    """
    _sentencepiece().SentencePieceTrainer.train(
        input=filename, vocab_size=vocab_size, model_type=model_type, model_prefix=model_prefix
    )


def _processor_class():
    try:
        import sentencepiece
    except ImportError:
        # Without the package, embertext's own reader (Unigram models).
        from embertext.tokenizers.sentencepiece import SentencePieceProcessor

        return SentencePieceProcessor
    return sentencepiece.SentencePieceProcessor


def load_sp_model(spm):
    r"""Load a SentencePiece model from a path or from a file opened in binary mode.

    Returns a ``sentencepiece.SentencePieceProcessor``; without the sentencepiece package,
    an :class:`embertext.tokenizers.sentencepiece.SentencePieceProcessor` (Unigram models,
    the same ids and pieces).

    Examples::

        >>> sp_model = load_sp_model("m_user.model")
        >>> sp_model = load_sp_model(open("m_user.model", "rb"))
    """
    processor = _processor_class()
    if isinstance(spm, str):
        return processor(model_file=spm)
    if isinstance(spm, io.BufferedReader):
        return processor(model_proto=spm.read())
    raise TypeError(
        f"Unsupported type for spm argument: {type(spm).__name__}. "
        "Supported types are: str, io.BufferedReader"
    )


def sentencepiece_numericalizer(sp_model):
    r"""A function from an iterable of sentences to a generator of their id lists.

    Examples::

        >>> sp_id_generator = sentencepiece_numericalizer(sp_model)
        >>> list(sp_id_generator(["sentencepiece encode as pieces", "examples to   try!"]))
    """

    def _numericalize(lines):
        for line in lines:
            yield sp_model.EncodeAsIds(line)

    return _numericalize


def sentencepiece_tokenizer(sp_model):
    r"""A function from an iterable of sentences to a generator of their piece lists.

    Examples::

        >>> sp_tokens_generator = sentencepiece_tokenizer(sp_model)
        >>> list(sp_tokens_generator(["sentencepiece encode as pieces"]))
    """

    def _tokenize(lines):
        for line in lines:
            yield sp_model.EncodeAsPieces(line)

    return _tokenize


def custom_replace(replace_pattern):
    r"""A function that applies regex replacements, in order, to each line of an iterable.

    Args:
        replace_pattern: ``(pattern, replacement)`` pairs for ``re.sub``.

    Examples::

        >>> custom_replace_transform = custom_replace([(r"S", "s"), (r"\s+", " ")])
        >>> list(custom_replace_transform(["Sentencepiece encode  aS  pieces"]))
        ['sentencepiece encode as pieces']
    """
    rules = [(re.compile(pattern), replacement) for pattern, replacement in replace_pattern]

    def _replace(lines):
        for line in lines:
            for pattern, replacement in rules:
                line = pattern.sub(replacement, line)
            yield line

    return _replace


def simple_space_split(iterator):
    r"""Yield each line split on whitespace.

    Examples::

        >>> list(simple_space_split(["Sentencepiece encode as pieces", "example to try!"]))
        [['Sentencepiece', 'encode', 'as', 'pieces'], ['example', 'to', 'try!']]
    """
    for line in iterator:
        yield line.split()


def numericalize_tokens_from_iterator(vocab, iterator, removed_tokens=None):
    r"""Yield, for each token list, an iterator over its ids in ``vocab``.

    Args:
        vocab: a mapping from token to id (a :class:`~embertext.vocab.Vocab` or a dict).
        iterator: yields lists of tokens.
        removed_tokens: tokens left out of the output. Default: ``None``.

    Examples::

        >>> vocab = {"Sentencepiece": 0, "encode": 1, "as": 2, "pieces": 3}
        >>> ids = numericalize_tokens_from_iterator(
        ...     vocab, simple_space_split(["Sentencepiece as pieces", "as pieces"]))
        >>> [list(x) for x in ids]
        [[0, 2, 3], [2, 3]]
    """
    for tokens in iterator:
        if removed_tokens is None:
            yield iter(vocab[token] for token in tokens)
        else:
            yield iter(vocab[token] for token in tokens if token not in removed_tokens)


# NOTE [ wikifil ]
# The rules of fastText's wikifil.pl as torchtext applies them, in order: markup out, links
# reduced to their text, letters lowercased, digits spelled out, anything else to spaces.
# "[[$1]]" is kept literally, as torchtext (whose rules are applied by re.sub) has it.
_WIKIPEDIA_RULES = [
    (r"<.*>", ""),
    (r"&amp;", "&"),
    (r"&lt;", "<"),
    (r"&gt;", ">"),
    (r"<ref[^<]*<\/ref>", ""),
    (r"<[^>]*>", ""),
    (r"\[http:[^] ]*", "["),
    (r"\|thumb", ""),
    (r"\|left", ""),
    (r"\|right", ""),
    (r"\|\d+px", ""),
    (r"\[\[image:[^\[\]]*\|", ""),
    (r"\[\[category:([^|\]]*)[^]]*\]\]", "[[$1]]"),
    (r"\[\[[a-z\-]*:[^\]]*\]\]", ""),
    (r"\[\[[^\|\]]*\|", "[["),
    (r"\{\{[^\}]*\}\}", ""),
    (r"\{[^\}]*\}", ""),
    (r"\[", ""),
    (r"\]", ""),
    (r"&[^;]*;", " "),
    *[(letter, letter.lower()) for letter in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"],
    *[
        (str(digit), f" {name} ")
        for digit, name in enumerate(
            ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
        )
    ],
    (r"[^a-z\n]+", " "),
    (r"\n ", ""),
    (r"\s+", " "),
    (r"\n\s*\n", r"\n"),
]


def filter_wikipedia_xml(text_iterator):
    r"""Yield the lines of a Wikipedia XML dump cleaned as fastText's ``wikifil.pl`` does.

    Redirect lines and lines left empty are dropped.

    Args:
        text_iterator: an iterable of strings (a list, an open file, a generator...).

    Examples::

        >>> list(filter_wikipedia_xml(["The [[Cat|cats]] sat 2 days"]))
        ['the cats sat two days']
    """
    try:
        iter(text_iterator)
    except TypeError:
        raise TypeError(f"Input {text_iterator} must support iterator semantics") from None
    normalize = custom_replace(_WIKIPEDIA_RULES)
    for line in text_iterator:
        if "#redirect" in line or "#REDIRECT" in line:
            continue
        line = next(normalize([line])).strip()
        if line:
            yield line


class _MapStyleDataset(Dataset):
    def __init__(self, iter_data):
        self._data = list(iter_data)

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        return self._data[idx]


def to_map_style_dataset(iter_data):
    r"""A map-style dataset holding the items of an iterable (read once, kept in memory).

    Examples::

        >>> dataset = to_map_style_dataset(iter(["a", "b"]))
        >>> len(dataset), dataset[1]
        (2, 'b')
    """
    return _MapStyleDataset(iter_data)

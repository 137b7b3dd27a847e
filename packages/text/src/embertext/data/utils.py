"""Tokenizer factory and small helpers of ``torchtext.data.utils``."""

import random
import re
from contextlib import contextmanager
from copy import deepcopy
from functools import partial

__all__ = [
    "get_tokenizer",
    "ngrams_iterator",
    "interleave_keys",
    "is_tokenizer_serializable",
    "dtype_to_attr",
    "get_torch_version",
    "RandomShuffler",
]


def _split_tokenizer(x):
    return x.split()


# NOTE [ basic_english ]
# torchtext's normalization, rule for rule and in this order: the replacements add spaces
# around punctuation, drop double quotes, turn HTML line breaks, semicolons and colons into
# spaces; the text is then lowercased (first) and split on whitespace (last).
_BASIC_ENGLISH_RULES = [
    (re.compile(pattern), replacement)
    for pattern, replacement in [
        (r"\'", " '  "),
        (r"\"", ""),
        (r"\.", " . "),
        (r"<br \/>", " "),
        (r",", " , "),
        (r"\(", " ( "),
        (r"\)", " ) "),
        (r"\!", " ! "),
        (r"\?", " ? "),
        (r"\;", " "),
        (r"\:", " "),
        (r"\s+", " "),
    ]
]


def _basic_english_normalize(line):
    line = line.lower()
    for pattern, replacement in _BASIC_ENGLISH_RULES:
        line = pattern.sub(replacement, line)
    return line.split()


def _spacy_tokenize(x, spacy):
    return [token.text for token in spacy.tokenizer(x)]


def _library_tokenizer(name, language):
    """The tokenizers of other libraries that torchtext hands out by name."""
    if name == "spacy":
        import spacy

        return partial(_spacy_tokenize, spacy=spacy.load(language))
    if name == "moses":
        from sacremoses import MosesTokenizer

        return MosesTokenizer().tokenize
    if name == "toktok":
        from nltk.tokenize.toktok import ToktokTokenizer

        return ToktokTokenizer().tokenize
    if name in ("revtok", "subword"):
        import revtok

        return revtok.tokenize if name == "revtok" else partial(revtok.tokenize, decap=True)
    raise ValueError(
        f"Requested tokenizer {name}, valid choices are a callable that takes a single string "
        'as input, None for str.split, "basic_english", "revtok" for the revtok reversible '
        'tokenizer, "subword" for the revtok caps-aware tokenizer, "spacy" for the SpaCy '
        'English tokenizer, "toktok" for NLTK\'s toktok or "moses" for the SacreMoses port of '
        "the Moses tokenization script."
    )


def get_tokenizer(tokenizer, language="en"):
    r"""Return a function that splits a string into a list of tokens.

    Args:
        tokenizer: ``None`` for ``str.split``; ``"basic_english"`` for lowercasing,
            spacing out punctuation and splitting on whitespace; a callable, which is
            returned as it is; or the name of a library's tokenizer (``"spacy"``,
            ``"moses"``, ``"toktok"``, ``"revtok"``, ``"subword"``), which must be installed.
        language (str): the language, for ``"spacy"``; ``"basic_english"`` is for
            ``"en"`` only. Default: ``"en"``.

    Examples::

        >>> tokenizer = get_tokenizer("basic_english")
        >>> tokenizer("You can now install TorchText using pip!")
        ['you', 'can', 'now', 'install', 'torchtext', 'using', 'pip', '!']
    """
    if tokenizer is None:
        return _split_tokenizer
    if tokenizer == "basic_english":
        if language != "en":
            raise ValueError("Basic normalization is only available for Enlish(en)")
        return _basic_english_normalize
    if callable(tokenizer):
        return tokenizer
    return _library_tokenizer(tokenizer, language)


def is_tokenizer_serializable(tokenizer, language):
    """Whether the tokenizer of this name pickles (SpaCy's does not)."""
    return tokenizer != "spacy"


def interleave_keys(a, b):
    """Interleave the bits of two 16-bit sort keys into one joint sort key.

    Examples that are close in both keys get close joint keys: useful to sort pairs of
    texts (translation, inference) by both lengths at once.

    Examples::

        >>> interleave_keys(3, 5)
        27
    """
    bits_a, bits_b = format(a, "016b"), format(b, "016b")
    return int("".join(x + y for x, y in zip(bits_a, bits_b)), base=2)


def get_torch_version():
    """``(major, minor)`` of the tensor library's version, as ints: ember's here, where
    torchtext reports torch's."""
    import ember

    major, minor = ember.__version__.split(".")[:2]
    return int(major), int(minor)


def dtype_to_attr(dtype):
    """The name of a dtype as in its ``repr`` without the module: ``ember.int32 -> "int32"``."""
    return str(dtype).split(".")[1]


def ngrams_iterator(token_list, ngrams):
    """Yield the tokens, then their 2-grams, ... up to ``ngrams``-grams, joined by spaces.

    Args:
        token_list (list of str): the tokens.
        ngrams (int): the largest n-gram order.

    Examples::

        >>> list(ngrams_iterator(["here", "we", "are"], 2))
        ['here', 'we', 'are', 'here we', 'we are']
    """
    yield from token_list
    for n in range(2, ngrams + 1):
        for gram in zip(*[token_list[i:] for i in range(n)]):
            yield " ".join(gram)


class RandomShuffler:
    """Shuffle with a random state of its own, so that shuffles are reproducible.

    Args:
        random_state: a state of Python's ``random`` module; the current one if ``None``.
    """

    def __init__(self, random_state=None):
        self._random_state = random.getstate() if random_state is None else random_state

    @contextmanager
    def use_internal_state(self):
        """Run the block with this shuffler's state, then restore the global one."""
        old_state = random.getstate()
        random.setstate(self._random_state)
        try:
            yield
        finally:
            self._random_state = random.getstate()
            random.setstate(old_state)

    @property
    def random_state(self):
        return deepcopy(self._random_state)

    @random_state.setter
    def random_state(self, state):
        self._random_state = state

    def __call__(self, data):
        """A shuffled new list of ``data``."""
        with self.use_internal_state():
            return random.sample(data, len(data))

"""Building a Vocab from token frequencies or from an iterator of token lists."""

from collections import Counter, OrderedDict

from embertext.vocab.vocab import Vocab, _VocabTable

__all__ = ["vocab", "build_vocab_from_iterator"]


def vocab(ordered_dict, min_freq=1, specials=None, special_first=True):
    r"""A :class:`Vocab` of the tokens of ``ordered_dict`` (token -> frequency), in its order.

    Args:
        ordered_dict: token frequencies; the insertion order becomes the index order (sort
            it by frequency first if that order matters).
        min_freq (int): tokens less frequent than this are left out. Default: 1.
        specials (list of str, optional): special tokens, kept in their order and added
            whatever their frequency.
        special_first (bool): put the specials first (``True``) or last. Default: ``True``.

    .. note:: the special tokens are removed from ``ordered_dict`` itself, as in torchtext.

    Examples::

        >>> counter = Counter(["a", "a", "b", "b", "b"])
        >>> v = vocab(OrderedDict(sorted(counter.items(), key=lambda x: x[1], reverse=True)))
        >>> v["a"]
        1
    """
    specials = specials or []
    for token in specials:
        ordered_dict.pop(token, None)
    tokens = [token for token, freq in ordered_dict.items() if freq >= min_freq]
    tokens = specials + tokens if special_first else tokens + specials
    return Vocab(_VocabTable(tokens, None))


def build_vocab_from_iterator(iterator, min_freq=1, specials=None, special_first=True,
                              max_tokens=None):
    r"""A :class:`Vocab` of the tokens that ``iterator`` yields, the most frequent first.

    Ties in frequency are broken by the tokens' lexicographic order.

    Args:
        iterator: yields lists (or iterables) of tokens.
        min_freq (int): tokens less frequent than this are left out. Default: 1.
        specials (list of str, optional): special tokens, kept in their order.
        special_first (bool): put the specials first (``True``) or last. Default: ``True``.
        max_tokens (int, optional): keep only the ``max_tokens - len(specials)`` most
            frequent tokens.

    Examples::

        >>> v = build_vocab_from_iterator([["b", "a", "b"], ["c"]], specials=["<unk>"])
        >>> v.get_itos()
        ['<unk>', 'b', 'a', 'c']
    """
    counter = Counter()
    for tokens in iterator:
        counter.update(tokens)
    specials = specials or []
    by_frequency = sorted(counter.items(), key=lambda item: (-item[1], item[0]))
    if max_tokens is not None:
        if len(specials) >= max_tokens:
            raise AssertionError(
                "len(specials) >= max_tokens, so the vocab will be entirely special tokens."
            )
        by_frequency = by_frequency[: max_tokens - len(specials)]
    return vocab(OrderedDict(by_frequency), min_freq=min_freq, specials=specials,
                 special_first=special_first)

"""The Vocab module: a two-way mapping between tokens and indices."""

from ember import nn
from embertext._jit import NotJitable

__all__ = ["Vocab"]


class _VocabTable:
    """The token table behind a :class:`Vocab`: ``itos_`` (a list), ``stoi_`` (a dict) and
    ``default_index_`` (returned for unknown tokens; ``None`` makes them an error)."""

    def __init__(self, tokens, default_index=None):
        self.itos_ = []
        self.stoi_ = {}
        self.default_index_ = default_index
        for token in tokens:
            if token in self.stoi_:
                raise RuntimeError(f"Duplicate token found in tokens list: {token}")
            self.stoi_[token] = len(self.itos_)
            self.itos_.append(token)


class Vocab(NotJitable, nn.Module):
    r"""Maps tokens to indices and back.

    Made by :func:`~embertext.vocab.vocab` or :func:`~embertext.vocab.build_vocab_from_iterator`
    rather than directly. Calling the module looks up a list of tokens. It pickles, so
    ``ember.save(vocab, f)`` and ``ember.load(f, weights_only=False)`` store and restore it.

    Args:
        vocab: the token table (``_VocabTable``), or a list of distinct tokens.

    Examples::

        >>> v = vocab(OrderedDict([("a", 1), ("b", 1)]), specials=["<unk>"])
        >>> v.set_default_index(v["<unk>"])
        >>> v(["a", "zzz"])
        [1, 0]
    """

    def __init__(self, vocab):
        super().__init__()
        self.vocab = vocab if isinstance(vocab, _VocabTable) else _VocabTable(list(vocab))

    def forward(self, tokens):
        """The indices of ``tokens`` (:meth:`lookup_indices`)."""
        return self.lookup_indices(tokens)

    def __len__(self):
        return len(self.vocab.itos_)

    def __contains__(self, token):
        return token in self.vocab.stoi_

    def __getitem__(self, token):
        """The index of ``token``; the default index if it is unknown.

        Raises:
            RuntimeError: if the token is unknown and no default index is set.
        """
        index = self.vocab.stoi_.get(token)
        if index is not None:
            return index
        if self.vocab.default_index_ is None:
            raise RuntimeError(f"Token {token} not found and default index is not set")
        return self.vocab.default_index_

    def set_default_index(self, index):
        """Set the index returned for unknown tokens (``None``: unknown tokens are an error)."""
        if index is not None and not isinstance(index, int):
            raise TypeError(f"default index must be an int or None, got {type(index).__name__}")
        self.vocab.default_index_ = index

    def get_default_index(self):
        """The default index, or ``None`` if it is not set."""
        return self.vocab.default_index_

    def insert_token(self, token, index):
        """Insert ``token`` at ``index``, shifting the tokens from ``index`` on by one.

        Raises:
            RuntimeError: if ``index`` is not in ``[0, len(vocab)]`` or ``token`` is there.
        """
        itos, stoi = self.vocab.itos_, self.vocab.stoi_
        if not 0 <= index <= len(itos):
            raise RuntimeError(
                f"Specified index {index} is out of bounds for vocab of size {len(itos)}"
            )
        if token in stoi:
            raise RuntimeError(
                f"Token {token} already exists in the Vocab with index: {stoi[token]}"
            )
        for i in range(index, len(itos)):
            stoi[itos[i]] = i + 1
        itos.insert(index, token)
        stoi[token] = index

    def append_token(self, token):
        """Add ``token`` at the end.

        Raises:
            RuntimeError: if ``token`` is already there.
        """
        stoi = self.vocab.stoi_
        if token in stoi:
            raise RuntimeError(
                f"Token {token} already exists in the Vocab with index: {stoi[token]}"
            )
        stoi[token] = len(self.vocab.itos_)
        self.vocab.itos_.append(token)

    def lookup_token(self, index):
        """The token at ``index``.

        Raises:
            RuntimeError: if ``index`` is not in ``[0, len(vocab))``.
        """
        itos = self.vocab.itos_
        if not 0 <= index < len(itos):
            raise RuntimeError(
                f"Specified index {index} is out of bounds of the size of itos dictionary."
            )
        return itos[index]

    def lookup_tokens(self, indices):
        """The tokens at ``indices``."""
        return [self.lookup_token(index) for index in indices]

    def lookup_indices(self, tokens):
        """The indices of ``tokens``."""
        stoi, default = self.vocab.stoi_, self.vocab.default_index_
        if default is not None:
            return [stoi.get(token, default) for token in tokens]
        return [self[token] for token in tokens]

    def get_stoi(self):
        """A dict from token to index (a copy)."""
        return dict(self.vocab.stoi_)

    def get_itos(self):
        """The list of tokens by index (a copy)."""
        return list(self.vocab.itos_)

    def extra_repr(self):
        return f"num_tokens={len(self)}, default_index={self.vocab.default_index_}"

"""torchtext's tokenizer transforms (GPT-2 BPE, CLIP BPE, character BPE, BERT WordPiece),
built on :mod:`embertext.tokenizers`; re-exported by :mod:`embertext.transforms`."""

import json
import re

from ember import nn
from embertext import functional as F
from embertext._jit import NotJitable
from embertext.tokenizers import _kernels, _unicode, decoders, models, normalizers, pre_tokenizers
from embertext.tokenizers._piece import Piece
from embertext.tokenizers._tokenizer import Tokenizer
from embertext.utils import get_asset_local_path

__all__ = ["GPT2BPETokenizer", "CLIPTokenizer", "CharBPETokenizer", "BERTTokenizer",
           "bytes_to_unicode"]

bytes_to_unicode = _unicode.bytes_to_unicode


def _read_merge_lines(path):
    # torchtext drops the first line (the "#version" header) and the empty last one.
    with open(get_asset_local_path(path), encoding="utf-8") as f:
        return f.read().split("\n")[1:]


def _apply(transform, input, return_tokens):
    """A sequence or a batch of texts through ``transform`` (tokens, or ids as strings)."""
    def one(text):
        return transform.tokenize(text) if return_tokens else [
            str(i) for i in transform.encode_ids(text)]

    if F._is_list_of(input, str):
        return [one(text) for text in input]
    if isinstance(input, str):
        return one(input)
    raise TypeError("Input type not supported")


class GPT2BPETokenizer(NotJitable, nn.Module):
    r"""GPT-2's byte-level BPE tokenizer, from its ``encoder.json`` and ``vocab.bpe``.

    Args:
        encoder_json_path (str): the token -> id file.
        vocab_bpe_path (str): the merges file.
        return_tokens (bool): return tokens instead of ids (as strings). Default: ``False``.

    Examples::

        >>> tokenizer = GPT2BPETokenizer("encoder.json", "vocab.bpe")
        >>> tokenizer("Hello World!")
        ['15496', '2159', '0']
    """

    SPECIAL_TOKENS_ATTRIBUTES = ["bos_token", "eos_token", "unk_token", "sep_token",
                                 "pad_token", "cls_token", "mask_token",
                                 "additional_special_tokens"]

    def __init__(self, encoder_json_path, vocab_bpe_path, return_tokens=False):
        super().__init__()
        with open(get_asset_local_path(encoder_json_path), encoding="utf-8") as f:
            encoder = json.load(f)
        merges = [tuple(line.split()) for line in _read_merge_lines(vocab_bpe_path)[:-1]]
        self._tokenizer = Tokenizer(models.BPE(encoder, merges))
        self._tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        self._tokenizer.decoder = decoders.ByteLevel()
        self._return_tokens = return_tokens
        self._special_split = None  # splits text at the added special tokens

    def _pieces(self, text):
        """``(is_special, text)`` runs of ``text``. As torchtext's, a special token takes one
        whitespace character on each side with it (``"a <sep> b"`` is ``a``, ``<sep>``,
        ``b``)."""
        if self._special_split is None:
            return [(False, text)]
        parts = self._special_split.split(text)
        return [(i % 2 == 1, part) for i, part in enumerate(parts) if part]

    def encode_ids(self, text):
        return [i for special, part in self._pieces(text) for i in (
            [self._tokenizer.token_to_id(part)] if special
            else self._tokenizer.encode(part).ids)]

    def tokenize(self, text):
        return [token for special, part in self._pieces(text) for token in (
            [part] if special else self._tokenizer.encode(part).tokens)]

    def _encode(self, text):
        return [str(i) for i in self.encode_ids(text)]

    def _tokenize(self, text):
        return self.tokenize(text)

    def add_special_tokens(self, special_tokens_dict):
        """Add special tokens (never split) by role; returns how many were new.

        Args:
            special_tokens_dict (dict): keys among :attr:`SPECIAL_TOKENS_ATTRIBUTES`, values
                a token (a list of tokens for ``additional_special_tokens``).
        """
        tokens = []
        for key, value in special_tokens_dict.items():
            if key not in self.SPECIAL_TOKENS_ATTRIBUTES:
                raise AssertionError(
                    f"Key '{key}' is not in the special token list: "
                    f"{self.SPECIAL_TOKENS_ATTRIBUTES}")
            tokens.extend(value if key == "additional_special_tokens" else [value])
        added = self._tokenizer.add_special_tokens(tokens)
        self._specials = list(dict.fromkeys([*getattr(self, "_specials", []), *tokens]))
        alternatives = "|".join(re.escape(t) for t in sorted(self._specials, key=len,
                                                             reverse=True))
        self._special_split = re.compile(rf"\s?({alternatives})\s?")
        return added

    def decode(self, tokens):
        """The text of a list of ids given as strings. As torchtext's, each added special
        token is its own run of text, and the runs are joined by spaces."""
        special = {self._tokenizer.token_to_id(t) for t in getattr(self, "_specials", [])}
        runs, run = [], []
        for token in map(int, tokens):
            if token in special:
                runs += [run, [token]] if run else [[token]]
                run = []
            else:
                run.append(token)
        if run or not runs:
            runs.append(run)
        return " ".join(self._tokenizer.decode(ids, skip_special_tokens=False) for ids in runs)

    def forward(self, input):
        return _apply(self, input, self._return_tokens)


# CLIP's pre-tokenization: its two special tokens, English contractions, letter runs,
# single digits, and runs of other non-space characters (\p{L}, \p{N} spelled out for `re`).
def _clip_pattern():
    other = _unicode._OTHER_NUMBERS
    letters, numbers = rf"[^\W\d_{other}]", rf"[\d{other}]"
    space = _unicode._WHITESPACE_CLASS
    return re.compile(
        rf"<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|{letters}+|{numbers}"
        rf"|(?:[^{space}\w]|_)+", re.IGNORECASE)


class CLIPTokenizer(NotJitable, nn.Module):
    r"""CLIP's byte-level BPE tokenizer (lowercased text, ``</w>`` ends a word).

    Args:
        merges_path (str): the merges file.
        encoder_json_path (str, optional): the token -> id file; it fixes the number of
            merges used. Without it the vocabulary is made from the merges.
        num_merges (int, optional): use only the first merges (without an encoder).
        return_tokens (bool): return tokens instead of ids (as strings). Default: ``False``.

    Examples::

        >>> tokenizer = CLIPTokenizer("clip_merges.bpe", "clip_encoder.json")
        >>> tokenizer("the quick brown fox")
    """

    _SPECIALS = ("<|startoftext|>", "<|endoftext|>")

    def __init__(self, merges_path, encoder_json_path=None, num_merges=None,
                 return_tokens=False):
        super().__init__()
        lines = _read_merge_lines(merges_path)
        if encoder_json_path:
            with open(get_asset_local_path(encoder_json_path), encoding="utf-8") as f:
                encoder = json.load(f)
            # 256 bytes with and without </w>, and the two special tokens.
            num_merges = len(encoder) - (256 * 2 + 2)
            merges = [tuple(line.split()) for line in lines[:num_merges]]
        else:
            merges = [tuple(line.split()) for line in lines[:num_merges or len(lines)]]
            byte_chars = list(bytes_to_unicode().values())
            tokens = byte_chars + [c + "</w>" for c in byte_chars]
            tokens += ["".join(pair) for pair in merges] + list(self._SPECIALS)
            encoder = {token: i for i, token in enumerate(tokens)}
        merges = [m for m in merges if len(m) == 2]
        self._model = models.BPE(encoder, merges, end_of_word_suffix="</w>")
        self._pattern = _clip_pattern()
        self._return_tokens = return_tokens

    def tokenize(self, text):
        text = text.lower().strip()
        byte_char = bytes_to_unicode()
        tokens = []
        for word in self._pattern.findall(text):
            if word in self._SPECIALS:
                tokens.append(word)
                continue
            chars = "".join(byte_char[b] for b in word.encode("utf-8"))
            tokens.extend(token for _, token, _, _ in self._model.tokenize(chars))
        return tokens

    def encode_ids(self, text):
        vocab = self._model.vocab
        return [vocab[token] for token in self.tokenize(text)]

    def _encode(self, text):
        return [str(i) for i in self.encode_ids(text)]

    def _tokenize(self, text):
        return self.tokenize(text)

    def forward(self, input):
        return _apply(self, input, self._return_tokens)


class CharBPETokenizer(nn.Module):
    r"""Character-level BPE: words are runs of non-space characters (with a following
    newline), merged by rank; ``suffix`` marks a word's last token.

    Args:
        bpe_encoder_path (str): the token -> id JSON file.
        bpe_merges_path (str): the merges file (a header line first).
        return_tokens (bool): return tokens instead of ids. Default: ``False``.
        unk_token (str, optional): the id of tokens not in the encoder; without it they are
            a ``KeyError``.
        suffix (str, optional): the end-of-word suffix (``"</w>"``).
        special_tokens (list of str, optional): tokens never split (must be in the encoder).
    """

    def __init__(self, bpe_encoder_path, bpe_merges_path, return_tokens=False, unk_token=None,
                 suffix=None, special_tokens=None):
        super().__init__()
        with open(get_asset_local_path(bpe_encoder_path), encoding="utf-8") as f:
            self._encoder = dict(json.load(f))
        merges = [tuple(line.split()) for line in _read_merge_lines(bpe_merges_path)[:-1]]
        self._decoder = {index: token for token, index in self._encoder.items()}
        # The merges on symbol ids for the compiled merge loop (a repeated merge takes its last
        # rank, as in torchtext).
        ranks = {merge: rank for rank, merge in enumerate(merges) if len(merge) == 2}
        self._symbols = {}
        symbol = self._symbol
        self._kernel = _kernels.BPEKernel(
            [(symbol(a), symbol(b), symbol(a + b))
             for (a, b), _ in sorted(ranks.items(), key=lambda item: item[1])])
        self._return_tokens = return_tokens
        self._cache = {}
        if unk_token and unk_token not in self._encoder:
            raise RuntimeError(f"Unknown token {unk_token} not found in encoder. Special tokens "
                               "must be in encoder.")
        self._unk_token = unk_token
        self._suffix = suffix
        for token in special_tokens or []:
            if token not in self._encoder:
                raise RuntimeError(f"Special token {token} not found in encoder. Special tokens "
                                   "must be in encoder.")
            self._cache[token] = token

    @property
    def vocab_size(self):
        return len(self._encoder)

    def _symbol(self, text):
        return self._symbols.setdefault(text, len(self._symbols))

    def _bpe(self, token):
        """The BPE tokens of one word, joined by spaces (merged by the compiled loop)."""
        if token in self._cache:
            return self._cache[token]
        word = list(token[:-1]) + [token[-1] + self._suffix] if self._suffix else list(token)
        if len(word) < 2:
            return word[0]
        n = len(word)
        merged = self._kernel.merge_ids([self._symbol(w) for w in word], range(n),
                                        range(1, n + 1))
        # A merged symbol is the text of the characters it covers.
        out = " ".join("".join(word[start:end]) for _, start, end in merged)
        self._cache[token] = out
        return out

    def _tokenize(self, text):
        return [piece for word in re.findall(r"\S+\n?", text) for piece in
                self._bpe(word).split(" ")]

    def encode(self, text):
        """The ids of the tokens of ``text``."""
        if self._unk_token:
            unknown = self._encoder.get(self._unk_token)
            return [self._encoder.get(token, unknown) for token in self._tokenize(text)]
        return [self._encoder[token] for token in self._tokenize(text)]

    def decode(self, tokens):
        """The text of a list of ids."""
        if self._unk_token:
            pieces = [self._decoder.get(token, self._unk_token) for token in tokens]
        else:
            pieces = [self._decoder[token] for token in tokens]
        if self._suffix:
            return "".join(pieces).replace(self._suffix, " ")
        return " ".join(pieces)

    def forward(self, input):
        def one(text):
            return self._tokenize(text) if self._return_tokens else self.encode(text)

        if isinstance(input, list):
            return [one(text) for text in input]
        if isinstance(input, str):
            return one(input)
        raise TypeError("Input type not supported")


class BERTTokenizer(NotJitable, nn.Module):
    r"""BERT's tokenizer from a ``vocab.txt``: BERT's basic tokenization (control characters
    out, CJK ideographs apart, lowercasing and accent stripping, punctuation apart), then
    WordPiece with ``[UNK]`` and 100 characters a word at most.

    Args:
        vocab_path (str): the vocabulary, one token a line.
        do_lower_case (bool): lowercase. Default: ``True``.
        strip_accents (bool, optional): strip accents when not lowercasing (lowercasing always
            strips them); as in torchtext, any value but ``None`` strips them, ``False`` too.
        return_tokens (bool): return tokens instead of ids (as strings). Default: ``False``.
        never_split (list of str, optional): whitespace-separated tokens kept whole (not
            lowercased, not split at punctuation).

    Examples::

        >>> tokenizer = BERTTokenizer("vocab.txt", do_lower_case=True, return_tokens=True)
        >>> tokenizer("Hello World, How are you!")
        ['hello', 'world', ',', 'how', 'are', 'you', '!']
    """

    def __init__(self, vocab_path, do_lower_case=True, strip_accents=None, return_tokens=False,
                 never_split=None):
        super().__init__()
        self._model = models.WordPiece.from_file(get_asset_local_path(vocab_path))
        self._clean = normalizers.BertNormalizer(lowercase=False, strip_accents=False)
        # As torchtext's: lowercasing strips the accents, and so does any strip_accents given
        # (False too) without it.
        self._fold = normalizers.BertNormalizer(
            clean_text=False, handle_chinese_chars=False, lowercase=do_lower_case,
            strip_accents=do_lower_case or strip_accents is not None)
        self._never_split = set(never_split or [])
        self._return_tokens = return_tokens
        self._vocab_path = vocab_path
        self._do_lower_case = do_lower_case
        self._strip_accents = strip_accents

    def tokenize(self, text):
        piece = self._clean.normalize(Piece.from_text(text.strip()))
        tokens = []
        for word in pre_tokenizers.WhitespaceSplit().pre_tokenize(piece):
            if word.text in self._never_split:
                tokens.append(word.text)
                continue
            folded = self._fold.normalize(word)
            for part in pre_tokenizers.BertPreTokenizer().pre_tokenize(folded):
                tokens.extend(token for _, token, _, _ in self._model.tokenize(part.text))
        return tokens

    def encode_ids(self, text):
        vocab = self._model.vocab
        unknown = vocab.get(self._model.unk_token)
        return [vocab.get(token, unknown) for token in self.tokenize(text)]

    def _encode(self, text):
        return [str(i) for i in self.encode_ids(text)]

    def _tokenize(self, text):
        return self.tokenize(text)

    def _batch_encode(self, texts):
        return [self._encode(text) for text in texts]

    def _batch_tokenize(self, texts):
        return [self.tokenize(text) for text in texts]

    def forward(self, input):
        return _apply(self, input, self._return_tokens)

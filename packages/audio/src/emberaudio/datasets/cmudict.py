"""The CMU Pronouncing Dictionary: words and their ARPAbet phonemes."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from ember.utils.data import Dataset
from emberaudio.datasets.utils import download_url

__all__ = ["CMUDict"]

_URL = "http://svn.code.sf.net/p/cmusphinx/code/trunk/cmudict/cmudict-0.7b"
_URL_SYMBOLS = "http://svn.code.sf.net/p/cmusphinx/code/trunk/cmudict/cmudict-0.7b.symbols"
_CHECKSUMS = {
    _URL: "209a8b4cd265013e96f4658632a9878103b0c5abf62b50d4ef3ae1be226b29e4",
    _URL_SYMBOLS: "408ccaae803641c6d7b626b6299949320c2dbca96b2220fd3fb17887b023b027",
}
# cmudict-0.7b spells punctuation marks as words: the mark, then its name.
_PUNCTUATION_NAMES = {
    "!": ["EXCLAMATION-POINT"],
    '"': ["CLOSE-QUOTE", "DOUBLE-QUOTE", "END-OF-QUOTE", "END-QUOTE", "IN-QUOTES", "QUOTE",
          "UNQUOTE"],
    "#": ["HASH-MARK", "POUND-SIGN", "SHARP-SIGN"],
    "%": ["PERCENT"],
    "&": ["AMPERSAND"],
    "'": ["END-INNER-QUOTE", "END-QUOTE", "INNER-QUOTE", "QUOTE", "SINGLE-QUOTE"],
    "(": ["BEGIN-PARENS", "IN-PARENTHESES", "LEFT-PAREN", "OPEN-PARENTHESES", "PAREN",
          "PARENS", "PARENTHESES"],
    ")": ["CLOSE-PAREN", "CLOSE-PARENTHESES", "END-PAREN", "END-PARENS", "END-PARENTHESES",
          "END-THE-PAREN", "PAREN", "PARENS", "RIGHT-PAREN", "UN-PARENTHESES"],
    "+": ["PLUS"],
    ",": ["COMMA"],
    "--": ["DASH"],
    "-": ["DASH", "HYPHEN"],
    "...": ["ELLIPSIS"],
    ".": ["DECIMAL", "DOT", "FULL-STOP", "PERIOD", "POINT"],
    "/": ["SLASH"],
    ":": ["COLON"],
    ";": ["SEMI-COLON", "SEMI-COLON(1)"],
    "?": ["QUESTION-MARK"],
    "{": ["BRACE", "LEFT-BRACE", "OPEN-BRACE"],
    "}": ["CLOSE-BRACE", "RIGHT-BRACE"],
}
_PUNCTUATIONS = {mark + name for mark, names in _PUNCTUATION_NAMES.items() for name in names}
_ALTERNATIVE = re.compile(r"\([0-9]+\)")


def _parse_dictionary(lines: Iterable[str], exclude_punctuations: bool
                      ) -> list[tuple[str, list[str]]]:
    entries = []
    for line in lines:
        if not line.strip() or line.startswith(";;;"):
            continue
        word, phones = line.strip().split("  ", 1)
        if word in _PUNCTUATIONS:
            if exclude_punctuations:
                continue
            word = "..." if word.startswith("...") else "--" if word.startswith("--") else word[0]
        entries.append((_ALTERNATIVE.sub("", word), phones.split(" ")))
    return entries


class CMUDict(Dataset):
    """*CMU Pronouncing Dictionary* (CMUDict) dataset.

    Args:
        root (str or Path): path to the directory where the dictionary is found or
            downloaded.
        exclude_punctuations (bool, optional): leave out the entries of punctuation marks,
            such as ``"(COMMA"`` and ``".PERIOD"``. (default: ``True``)
        download (bool, optional): whether to download the dictionary if it is not found at
            root path. (default: ``False``).
        url (str, optional): the URL of the dictionary.
        url_symbols (str, optional): the URL of the symbol (phoneme) list.
    """

    def __init__(self, root: str | Path, exclude_punctuations: bool = True, *,
                 download: bool = False, url: str = _URL, url_symbols: str = _URL_SYMBOLS
                 ) -> None:
        self.exclude_punctuations = exclude_punctuations
        self._root_path = Path(root)
        if not self._root_path.is_dir():
            raise RuntimeError(f"The root directory does not exist; {root}")
        dict_file = self._root_path / os.path.basename(url)
        symbol_file = self._root_path / os.path.basename(url_symbols)
        for address, path, what in ((url, dict_file, "dictionary"),
                                    (url_symbols, symbol_file, "symbol")):
            if not path.exists():
                if not download:
                    raise RuntimeError(f"The {what} file is not found in the following "
                                       f"location. Set `download=True` to download it. {path}")
                download_url(address, self._root_path, path.name, _CHECKSUMS.get(address))
        with open(symbol_file) as text:
            self._symbols = [line.strip() for line in text if line.strip()]
        with open(dict_file, encoding="latin-1") as text:
            self._dictionary = _parse_dictionary(text, exclude_punctuations)

    def __getitem__(self, n: int) -> tuple[str, list[str]]:
        """Load the n-th sample from the dataset.

        Returns:
            (str, list[str]): a word and its phonemes.
        """
        return self._dictionary[n]

    def __len__(self) -> int:
        return len(self._dictionary)

    @property
    def symbols(self) -> list[str]:
        """list[str]: the phoneme symbols, such as ``"AA"``, ``"AE"``, ``"AH"``."""
        return self._symbols.copy()

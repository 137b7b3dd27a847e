"""CC-100 (Conneau et al., 2020; Wenzek et al., 2020): the monolingual Common Crawl text of
100+ languages XLM-R was trained on, one ``.txt.xz`` file a language."""

import lzma
import os

from embertext import utils
from embertext.datasets._base import TextIterableDataset

__all__ = ["CC100"]

URL = "http://data.statmt.org/cc-100/%s.txt.xz"

VALID_CODES = {
    "am", "ar", "as", "az", "be", "bg", "bn", "bn_rom", "br", "bs", "ca", "cs", "cy", "da", "de",
    "el", "en", "eo", "es", "et", "eu", "fa", "ff", "fi", "fr", "fy", "ga", "gd", "gl", "gn", "gu",
    "ha", "he", "hi", "hi_rom", "hr", "ht", "hu", "hy", "id", "ig", "is", "it", "ja", "jv", "ka",
    "kk", "km", "kn", "ko", "ku", "ky", "la", "lg", "li", "ln", "lo", "lt", "lv", "mg", "mk", "ml",
    "mn", "mr", "ms", "my", "my_zaw", "ne", "nl", "no", "ns", "om", "or", "pa", "pl", "ps", "pt",
    "qu", "rm", "ro", "ru", "sa", "si", "sc", "sd", "sk", "sl", "so", "sq", "sr", "ss", "su", "sv",
    "sw", "ta", "ta_rom", "te", "te_rom", "th", "tl", "tn", "tr", "ug", "uk", "ur", "ur_rom", "uz",
    "vi", "wo", "xh", "yi", "yo", "zh-Hans", "zh-Hant", "zu",
}


def _read(folder, language_code):
    url = URL % language_code
    # The files are large and republished as they are: the source (and torchtext) gives no
    # hash to check them against.
    path = utils.download_from_url(url, path=os.path.join(folder, os.path.basename(url)))
    with lzma.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            yield language_code, line.rstrip("\n")


def CC100(root=utils._CACHE_DIR, language_code="en"):
    """CC-100: ``(language_code, line)`` pairs of one language's file (documents are
    separated by empty lines), read from the ``.xz`` file as it streams.

    Args:
        root (str): the cache folder; the data goes to ``root/datasets/CC100``.
        language_code (str): one of :data:`VALID_CODES` (``"en"``, ``"zh-Hans"``,
            ``"hi_rom"``...).

    Examples::

        >>> lines = CC100(language_code="sw")
        >>> next(iter(lines))
    """
    if language_code not in VALID_CODES:
        raise ValueError(f"Invalid language code {language_code}")
    folder = os.path.join(os.path.expanduser(root), "datasets", "CC100")
    return TextIterableDataset("CC100", "train", lambda: _read(folder, language_code))

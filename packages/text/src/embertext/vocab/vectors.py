"""Pre-trained word vectors in the text format (``word v1 v2 ...`` a line): GloVe, fastText
and CharNGram, read once and cached as ``.pt`` files (``torchtext.vocab.vectors``)."""

import gzip
import logging
import os
from functools import partial

import numpy

import ember
from embertext import utils

__all__ = ["Vectors", "GloVe", "FastText", "CharNGram", "pretrained_aliases"]

logger = logging.getLogger(__name__)


def _zero_(tensor):
    return tensor.zero_()


def _infer_shape(f):
    """The number of vector lines and their dimension (a two-number header is not one)."""
    num_lines, dim = 0, None
    for line in f:
        if dim is None:
            vector = line.rstrip().split(b" ")[1:]
            if len(vector) > 2:
                dim = len(vector)
                num_lines += 1
        else:
            num_lines += 1
    f.seek(0)
    return num_lines, dim


class Vectors:
    r"""Word vectors read from a text file, cached as a ``.pt`` file next to it.

    Args:
        name (str): the file (a path, or a name inside ``cache``); ``.gz`` files are read
            compressed.
        cache (str, optional): the folder of the files and caches. Default:
            ``".vector_cache"``.
        url (str, optional): where to download the file (a ``.zip``, ``.tar.gz`` or the
            file itself) if it is not in ``cache``.
        unk_init (callable, optional): fills the vector of an unknown token (given a tensor
            of size ``dim``, returns one). Default: zeros.
        max_vectors (int, optional): read only the first vectors of the file.

    Attributes:
        itos (list of str), stoi (dict), vectors (Tensor of shape ``(n, dim)``), dim (int).

    Examples::

        >>> vectors = Vectors("vectors.txt", cache="cache")
        >>> vectors["hello"].shape
        (300,)
    """

    def __init__(self, name, cache=None, url=None, unk_init=None, max_vectors=None):
        cache = ".vector_cache" if cache is None else cache
        self.itos = None
        self.stoi = None
        self.vectors = None
        self.dim = None
        self.unk_init = _zero_ if unk_init is None else unk_init
        self.cache(name, cache, url=url, max_vectors=max_vectors)

    def __getitem__(self, token):
        if token in self.stoi:
            return self.vectors[self.stoi[token]]
        return self.unk_init(ember.empty(self.dim))

    def __contains__(self, token):
        return token in self.stoi

    def __len__(self):
        return len(self.vectors)

    def cache(self, name, cache, url=None, max_vectors=None):
        """Read the vectors from the ``.pt`` cache, or from the text file (downloading it if
        needed), writing the cache."""
        suffix = f"_{max_vectors}.pt" if max_vectors else ".pt"
        if os.path.isfile(name):
            path = name
            path_pt = os.path.join(cache, os.path.basename(name)) + suffix
        else:
            path = os.path.join(cache, name)
            path_pt = path + suffix
        if os.path.isfile(path_pt):
            logger.info("Loading vectors from %s", path_pt)
            self.itos, self.stoi, self.vectors, self.dim = ember.load(path_pt)
            return
        if not os.path.isfile(path) and url:
            os.makedirs(cache, exist_ok=True)
            dest = utils.download_from_url(url, root=cache)
            if dest.endswith((".zip", ".tar.gz", ".tgz")):
                utils.extract_archive(dest, cache)
        if not os.path.isfile(path):
            raise RuntimeError(f"no vectors found at {path}")
        self.itos, self.vectors, self.dim = _read_vectors(path, max_vectors)
        self.stoi = {word: i for i, word in enumerate(self.itos)}
        os.makedirs(cache, exist_ok=True)
        ember.save((self.itos, self.stoi, self.vectors, self.dim), path_pt)

    def get_vecs_by_tokens(self, tokens, lower_case_backup=False):
        r"""The vectors of a token (shape ``(dim,)``) or a list of tokens (``(n, dim)``).

        Args:
            tokens: a str or a list of str.
            lower_case_backup (bool): look a token up lowercased if it is not there as it is.
        """
        single = not isinstance(tokens, list)
        if single:
            tokens = [tokens]
        if lower_case_backup:
            vecs = [self[t] if t in self.stoi else self[t.lower()] for t in tokens]
        else:
            vecs = [self[t] for t in tokens]
        out = ember.stack(vecs)
        return out[0] if single else out


def _read_vectors(path, max_vectors):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        num_lines, dim = _infer_shape(f)
        if dim is None:
            # TypeError, as torchtext's (a row of one or two values reads as a header)
            raise TypeError(f"{path} holds no vectors of more than two values")
        if not max_vectors or max_vectors > num_lines:
            max_vectors = num_lines
        array = numpy.zeros((max_vectors, dim), dtype=numpy.float32)
        itos = []
        width = None
        for line in f:
            # Split on " " only: a token may hold other whitespace (non-breaking spaces).
            entries = line.rstrip().split(b" ")
            word, entries = entries[0], entries[1:]
            if width is None and len(entries) > 1:
                width = len(entries)
            elif len(entries) == 1:
                logger.warning("Skipping token %r with 1-dimensional vector %r; likely a header",
                               word, entries)
                continue
            elif width != len(entries):
                raise RuntimeError(
                    f"Vector for token {word!r} has {len(entries)} dimensions, but previously "
                    f"read vectors have {width} dimensions. All vectors must have the same "
                    "number of dimensions.")
            try:
                word = word.decode("utf-8")
            except UnicodeDecodeError:
                logger.info("Skipping non-UTF8 token %r", word)
                continue
            array[len(itos)] = [float(x) for x in entries]
            itos.append(word)
            if len(itos) == max_vectors:
                break
    vectors = ember.from_numpy(array[: len(itos)].copy()).view(-1, dim)
    return itos, vectors, dim


class GloVe(Vectors):
    """GloVe vectors (Pennington et al., 2014) of the Stanford NLP group.

    Args:
        name (str): ``"840B"``, ``"42B"``, ``"6B"`` or ``"twitter.27B"``.
        dim (int): 300 (and 50, 100, 200 for 6B; 25, 50, 100, 200 for twitter.27B).
        **kwargs: those of :class:`Vectors`.
    """

    url = {
        "42B": "http://nlp.stanford.edu/data/glove.42B.300d.zip",
        "840B": "http://nlp.stanford.edu/data/glove.840B.300d.zip",
        "twitter.27B": "http://nlp.stanford.edu/data/glove.twitter.27B.zip",
        "6B": "http://nlp.stanford.edu/data/glove.6B.zip",
    }

    def __init__(self, name="840B", dim=300, **kwargs):
        url = self.url[name]
        super().__init__(f"glove.{name}.{dim}d.txt", url=url, **kwargs)


class FastText(Vectors):
    """fastText vectors trained on Wikipedia (Bojanowski et al., 2017) for ``language``."""

    url_base = "https://dl.fbaipublicfiles.com/fasttext/vectors-wiki/wiki.{}.vec"

    def __init__(self, language="en", **kwargs):
        url = self.url_base.format(language)
        super().__init__(os.path.basename(url), url=url, **kwargs)


class CharNGram(Vectors):
    """Character n-gram vectors (Hashimoto et al., 2017): a word's vector is the mean of the
    vectors of its 2-, 3- and 4-grams (with ``#BEGIN#`` and ``#END#``); shape ``(1, dim)``."""

    name = "charNgram.txt"
    url = ("http://www.logos.t.u-tokyo.ac.jp/~hassy/publications/arxiv2016jmt/"
           "jmt_pre-trained_embeddings.tar.gz")

    def __init__(self, **kwargs):
        super().__init__(self.name, url=self.url, **kwargs)

    def __getitem__(self, token):
        vector = ember.zeros(1, self.dim)
        if token == "<unk>":
            return self.unk_init(vector)
        chars = ["#BEGIN#", *token, "#END#"]
        found = 0
        for n in (2, 3, 4):
            for i in range(len(chars) - n + 1):
                key = f"{n}gram-{''.join(chars[i:i + n])}"
                if key in self.stoi:
                    vector += self.vectors[self.stoi[key]]
                    found += 1
        if found:
            return vector / found
        return self.unk_init(vector)


pretrained_aliases = {
    "charngram.100d": partial(CharNGram),
    "fasttext.en.300d": partial(FastText, language="en"),
    "fasttext.simple.300d": partial(FastText, language="simple"),
    "glove.42B.300d": partial(GloVe, name="42B", dim="300"),
    "glove.840B.300d": partial(GloVe, name="840B", dim="300"),
    "glove.twitter.27B.25d": partial(GloVe, name="twitter.27B", dim="25"),
    "glove.twitter.27B.50d": partial(GloVe, name="twitter.27B", dim="50"),
    "glove.twitter.27B.100d": partial(GloVe, name="twitter.27B", dim="100"),
    "glove.twitter.27B.200d": partial(GloVe, name="twitter.27B", dim="200"),
    "glove.6B.50d": partial(GloVe, name="6B", dim="50"),
    "glove.6B.100d": partial(GloVe, name="6B", dim="100"),
    "glove.6B.200d": partial(GloVe, name="6B", dim="200"),
    "glove.6B.300d": partial(GloVe, name="6B", dim="300"),
}

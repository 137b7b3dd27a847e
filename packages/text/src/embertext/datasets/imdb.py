"""The IMDB movie review dataset (Maas et al., 2011): the aclImdb_v1 tarball."""

import os
import posixpath
import tarfile

from embertext.datasets import _base

__all__ = ["IMDB"]

URL = "http://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz"
MD5 = "7c2ac02c03563afcf9b574c7e56c153a"
NUM_LINES = {"train": 25000, "test": 25000}
MAP_LABELS = {"neg": 1, "pos": 2}
_PATH = "aclImdb_v1.tar.gz"
_FOLDER = "aclImdb_v1"


def _cache_split(archive, folder, split):
    """Write each label's reviews of ``split``, one a line, to ``folder/<label>`` (the cache
    layout of torchtext); returns the labels in the order the archive has them."""
    os.makedirs(folder, exist_ok=True)
    outputs, order = {}, []
    try:
        with tarfile.open(archive) as tar:
            for member in tar:
                parts = posixpath.normpath(member.name).split("/")
                if not member.isfile() or len(parts) < 3:
                    continue
                *_, member_split, label, _ = parts
                if member_split != split or label not in MAP_LABELS:
                    continue
                if label not in outputs:
                    outputs[label] = open(os.path.join(folder, label + ".part"), "w",
                                          encoding="utf-8")
                    order.append(label)
                with tar.extractfile(member) as f:
                    text = f.read().decode("utf-8")
                outputs[label].write(" ".join(text.splitlines()) + "\n")
    finally:
        for out in outputs.values():
            out.close()
    for label in order:
        os.replace(os.path.join(folder, label + ".part"), os.path.join(folder, label))
    with open(os.path.join(folder, ".labels"), "w", encoding="utf-8") as f:
        f.write("\n".join(order))
    return order


@_base.dataset("IMDB", ("train", "test"))
def IMDB(root, split):
    """IMDB movie reviews: ``(label, review)``, label 1 for negative and 2 for positive.

    Reviews come one label after the other, in the order of the archive. Number of lines
    per split: train 25000, test 25000.

    Args:
        root (str): the cache folder; the data goes to ``root/datasets/IMDB``.
        split: ``"train"``, ``"test"`` or a tuple of them. Default: ``("train", "test")``.

    Examples::

        >>> label, review = next(iter(IMDB(split="test")))
    """
    archive = _base.download(URL, os.path.join(root, _PATH), MD5)
    folder = os.path.join(root, _FOLDER, split)
    index = os.path.join(folder, ".labels")
    if os.path.exists(index):
        with open(index, encoding="utf-8") as f:
            order = f.read().split()
    else:
        order = _cache_split(archive, folder, split)
    for label in order:
        for line in _base.read_lines(os.path.join(folder, label)):
            yield MAP_LABELS[label], line

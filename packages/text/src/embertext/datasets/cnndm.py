"""The CNN / Daily Mail summarization dataset (``torchtext.datasets.CNNDM``): two archives
of ``.story`` files, and per split a list of article URLs whose SHA-1 names the stories."""

import hashlib
import os
import tarfile

from embertext.datasets import _base

__all__ = ["CNNDM"]

NUM_LINES = {"train": 287227, "val": 13368, "test": 11490}  # articles of each split

URL_LIST = {
    "train": "https://raw.githubusercontent.com/abisee/cnn-dailymail/master/url_lists/"
             "all_train.txt",
    "val": "https://raw.githubusercontent.com/abisee/cnn-dailymail/master/url_lists/all_val.txt",
    "test": "https://raw.githubusercontent.com/abisee/cnn-dailymail/master/url_lists/"
            "all_test.txt",
}
URL_LIST_MD5 = {"train": "c8ca98cfcb6cf3f99a404552568490bc",
                "val": "83a3c483b3ed38b1392285bed668bfee",
                "test": "4f3ac04669934dbc746b7061e68a0258"}
STORIES_LIST = {
    "cnn": "https://drive.google.com/uc?export=download&id=0BwmD_VLjROrfTHk4NFg2SndKcjQ",
    "dailymail": "https://drive.google.com/uc?export=download&id=0BwmD_VLjROrfM1BxdkxVaTY2bWs",
}
PATH_LIST = {"cnn": "cnn_stories.tgz", "dailymail": "dailymail_stories.tgz"}
STORIES_MD5 = {"cnn": "85ac23a1926a831e8f46a6b8eaf57263",
               "dailymail": "f9c5f565e8abe86c38bfa4ae8f96fd72"}

# Ways to end a sentence: other lines get " ." (image captions run into the article).
_END_TOKENS = (".", "!", "?", "...", "'", "`", '"', "\u2019", "\u201d", ")", "\n")


def story_name(url):
    """The file name of the story of an article URL: the SHA-1 of the URL, ``.story``."""
    return hashlib.sha1(url.encode("utf-8")).hexdigest() + ".story"


def parse_story(text):
    """``(article, abstract)`` of a ``.story`` file: its lines (a period added where one is
    missing), the ones after ``@highlight`` joined as the abstract, the others as the
    article."""
    article, highlights = [], []
    next_is_highlight = False
    for line in text.split("\n"):
        line = line.strip()
        if not line:
            continue
        if line.startswith("@highlight"):
            next_is_highlight = True
            continue
        if "@highlight" not in line and line[-1] not in _END_TOKENS:
            line += " ."
        (highlights if next_is_highlight else article).append(line)
    return " ".join(article), " ".join(highlights)


@_base.dataset("CNNDM", ("train", "val", "test"))
def CNNDM(root, split):
    """CNN / Daily Mail: ``(article, abstract)`` pairs, CNN's stories then Daily Mail's
    (each archive in its order), those of the split's URL list.

    Number of lines per split: train 287227, val 13368, test 11490.

    Args:
        root (str): the cache folder; the data goes to ``root/datasets/CNNDM``.
        split: ``"train"``, ``"val"``, ``"test"`` or a tuple of them.
    """
    url_list = _base.download(URL_LIST[split], os.path.join(root, os.path.basename(
        URL_LIST[split])), URL_LIST_MD5[split])
    wanted = {story_name(line.strip()) for line in _base.read_lines(url_list) if line.strip()}
    for source in ("cnn", "dailymail"):
        archive = _base.download(STORIES_LIST[source], os.path.join(root, PATH_LIST[source]),
                                 STORIES_MD5[source])
        # Read in place, one member at a time: nothing is written out of the archive.
        with tarfile.open(archive) as tar:
            for member in tar:
                if member.isfile() and os.path.basename(member.name) in wanted:
                    with tar.extractfile(member) as f:
                        yield parse_story(f.read().decode("utf-8"))

"""What the text datasets share: the split argument, the dataset folder, downloads with
hashes (Google Drive too), and members read out of archives."""

import csv
import functools
import inspect
import os
import re
import tarfile
import urllib.parse
import urllib.request
import zipfile

from ember.utils.data import IterableDataset
from embertext import utils

__all__ = []


class TextIterableDataset(IterableDataset):
    """An iterable dataset whose items come from ``reader()``, called anew on every pass
    (files are read lazily: nothing is downloaded until the first pass)."""

    def __init__(self, name, split, reader):
        self.name = name
        self.split = split
        self._reader = reader

    def __iter__(self):
        return iter(self._reader())

    def __repr__(self):
        return f"{self.name}(split={self.split!r})"


def check_split(split, allowed, name):
    """``split`` as a tuple of allowed names."""
    chosen = (split,) if isinstance(split, str) else split
    if not isinstance(chosen, tuple):
        raise TypeError(f"split must be a str or a tuple of str, got {type(split).__name__}")
    if not set(chosen) <= set(allowed):
        raise TypeError(f"Given selection {split} of splits is not supported for dataset "
                        f"{name}. Please choose from {allowed}.")
    return chosen


def dataset(name, splits):
    """Make ``fn(root, split)`` a torchtext dataset function: ``root`` defaults to the cache
    folder (the data goes to ``root/datasets/NAME``), ``split`` is a name (one dataset) or a
    tuple of names (a tuple of datasets)."""

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(root=utils._CACHE_DIR, split=splits):
            folder = os.path.join(os.path.expanduser(root), "datasets", name)
            chosen = check_split(split, splits, name)
            results = tuple(TextIterableDataset(name, item, functools.partial(fn, folder, item))
                            for item in chosen)
            return results[0] if isinstance(split, str) else results

        parameters = [inspect.Parameter("root", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                        default=utils._CACHE_DIR),
                      inspect.Parameter("split", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                        default=splits)]
        wrapper.__signature__ = inspect.Signature(parameters)
        return wrapper

    return decorate


_GDRIVE_CONFIRM = re.compile(r"confirm=([0-9A-Za-z_-]+)")


def gdrive_confirm_url(url, page):
    """The URL that confirms a Google Drive download past its "can't scan for viruses" page,
    or ``None`` if ``page`` is not such a page."""
    match = _GDRIVE_CONFIRM.search(page)
    if match:
        return f"{url}&confirm={match.group(1)}"
    form = re.search(r'<form[^>]+action="([^"]+)"', page)
    if form is None:
        return None
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page))
    return f"{form.group(1)}?{urllib.parse.urlencode(fields)}"


def download(url, path, md5, hash_type="md5"):
    """``path``, downloaded from ``url`` unless it is there; its hash must be ``md5`` (or of
    ``hash_type``)."""
    if os.path.exists(path):
        utils._check_hash(path, md5, hash_type)
        return path
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if "drive.google.com" in url:
        with urllib.request.urlopen(url) as response:
            kind = response.headers.get("Content-Type", "")
            if kind.startswith("text/html"):
                confirmed = gdrive_confirm_url(url, response.read().decode("utf-8", "replace"))
                if confirmed is None:
                    raise RuntimeError(f"Google Drive did not return the file for {url}")
                url = confirmed
    return utils.download_from_url(url, path=path, hash_value=md5, hash_type=hash_type)


def extract_member(archive, member, target):
    """``target``: the file ``member`` of a tar or zip ``archive``, extracted once."""
    if os.path.exists(target):
        return target
    os.makedirs(os.path.dirname(target), exist_ok=True)
    partial = target + ".part"
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as z, z.open(member.replace(os.sep, "/")) as source, \
                open(partial, "wb") as out:
            _copy(source, out)
    else:
        with tarfile.open(archive) as tar:
            names = {os.path.normpath(m.name): m for m in tar.getmembers() if m.isfile()}
            found = names.get(os.path.normpath(member))
            if found is None:
                raise RuntimeError(f"{archive} has no file {member}")
            with tar.extractfile(found) as source, open(partial, "wb") as out:
                _copy(source, out)
    os.replace(partial, target)
    return target


def extract_matching(archive, part, target):
    """``target``: the first file of a tar or zip ``archive`` whose name holds ``part`` (as
    torchtext picks it), extracted once."""
    if os.path.exists(target):
        return target
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as z:
            names = [n for n in z.namelist() if not n.endswith("/")]
    else:
        with tarfile.open(archive) as tar:
            names = [m.name for m in tar.getmembers() if m.isfile()]
    for name in names:
        if part in name:
            return extract_member(archive, name, target)
    raise RuntimeError(f"{archive} has no file named like {part}")


def read_iob(path, sep="\t"):
    """Sentences of a column file (one token a line, a blank line between sentences), each
    as a list of columns (words, tags...)."""
    columns = []
    for line in read_lines(path):
        line = line.strip()
        if not line:
            if columns:
                yield columns
            columns = []
            continue
        for i, value in enumerate(line.split(sep)):
            if len(columns) < i + 1:
                columns.append([])
            columns[i].append(value)
    if columns:
        yield columns


def _copy(source, out):
    while chunk := source.read(1 << 20):
        out.write(chunk)


def read_csv(path, delimiter=",", skip_lines=0, quoting=csv.QUOTE_MINIMAL):
    """The rows of a CSV (or TSV) file, as lists of str."""
    with open(path, encoding="utf-8", newline="") as f:
        for _ in range(skip_lines):
            next(f, None)
        yield from csv.reader(f, delimiter=delimiter, quoting=quoting)


def read_lines(path, strip_newline=True):
    with open(path, encoding="utf-8") as f:
        for line in f:
            yield line.rstrip("\n") if strip_newline else line

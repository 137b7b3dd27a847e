"""Downloading files with a progress bar and a hash check, shared by datasets and weights.

A file is fetched to ``<name>.partial`` next to its destination and renamed only after its
hash has been checked, so that an interrupted or corrupt download is never taken for the
file: the next call fetches it again.
"""

from __future__ import annotations

import hashlib
import os
import urllib.request

__all__ = ["calculate_hash", "download_file"]

USER_AGENT = "embervision"
_CHUNK = 1024 * 1024


def calculate_hash(path, algorithm: str = "md5", chunk_size: int = _CHUNK) -> str:
    """The hex digest of a file's contents with ``hashlib``'s ``algorithm``."""
    h = hashlib.new(algorithm) if algorithm != "md5" else hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as f:
        while chunk := f.read(chunk_size):
            h.update(chunk)
    return h.hexdigest()


def _progress(total, desc, enabled):
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=desc)


def download_file(url: str, path, *, hash_value: str | None = None, algorithm: str = "md5",
                  hash_prefix: bool = False, progress: bool = True) -> str:
    """Downloads ``url`` to ``path`` and checks its hash.

    Args:
        url (str): the address (``http(s)://``, ``ftp://`` or ``file://``).
        path (str): where the file goes.
        hash_value (str, optional): the expected hex digest (or its start, with
            ``hash_prefix``).
        algorithm (str): ``"md5"`` or ``"sha256"``. Default: ``"md5"``.
        hash_prefix (bool): ``hash_value`` is only the digest's first characters.
        progress (bool): show a tqdm progress bar. Default: True.

    Raises:
        RuntimeError: the downloaded file does not have the expected hash (it is deleted).
    """
    path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    partial = path + ".partial"
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    try:
        with urllib.request.urlopen(request) as response, open(partial, "wb") as out:
            length = response.headers.get("Content-Length")
            bar = _progress(int(length) if length else None, os.path.basename(path), progress)
            try:
                while chunk := response.read(_CHUNK):
                    out.write(chunk)
                    if bar is not None:
                        bar.update(len(chunk))
            finally:
                if bar is not None:
                    bar.close()
        if hash_value is not None:
            digest = calculate_hash(partial, algorithm)
            ok = digest.startswith(hash_value) if hash_prefix else digest == hash_value
            if not ok:
                raise RuntimeError(
                    f"The file downloaded from {url} has {algorithm} {digest}, expected "
                    f"{hash_value}{'...' if hash_prefix else ''}: it is corrupt or incomplete "
                    "and was deleted. Try again."
                )
        os.replace(partial, path)
    finally:
        if os.path.exists(partial):
            os.remove(partial)
    return path

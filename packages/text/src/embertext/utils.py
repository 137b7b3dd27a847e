"""Downloads with a progress bar and hash checks, and safe archive extraction
(``torchtext.utils``)."""

import gzip
import hashlib
import logging
import os
import shutil
import tarfile
import urllib.request
import zipfile

__all__ = ["download_from_url", "extract_archive", "validate_file", "get_asset_local_path",
           "reporthook"]

logger = logging.getLogger(__name__)

_CACHE_DIR = os.path.join(os.path.expanduser(os.environ.get("EMBER_HOME", "~/.cache/ember")),
                          "text")


def reporthook(t):
    """A ``urlretrieve`` report hook that moves the tqdm bar ``t``."""
    last_b = [0]

    def inner(b=1, bsize=1, tsize=None):
        if tsize is not None:
            t.total = tsize
        t.update((b - last_b[0]) * bsize)
        last_b[0] = b

    return inner


def validate_file(file_obj, hash_value, hash_type="sha256"):
    """Whether the bytes of ``file_obj`` have the hash ``hash_value`` (``"sha256"`` or
    ``"md5"``)."""
    if hash_type not in ("sha256", "md5"):
        raise ValueError(f"hash_type must be 'sha256' or 'md5', got {hash_type!r}")
    digest = hashlib.new(hash_type, usedforsecurity=False)
    while chunk := file_obj.read(1024 ** 2):
        digest.update(chunk)
    return digest.hexdigest() == hash_value


def _check_hash(path, hash_value, hash_type):
    with open(path, "rb") as f:
        if not validate_file(f, hash_value, hash_type):
            raise RuntimeError(f"The hash of {os.path.abspath(path)} does not match. Delete the "
                               "file manually and retry.")


def _fetch(url, path):
    """Download ``url`` to ``path`` (through a temporary file) with a progress bar."""
    partial = path + ".part"
    try:
        from tqdm.auto import tqdm
    except ImportError:
        tqdm = None
    request = urllib.request.Request(url, headers={"User-Agent": "embertext"})
    with urllib.request.urlopen(request) as response, open(partial, "wb") as out:
        total = response.headers.get("Content-Length")
        bar = (tqdm(total=int(total) if total else None, unit="B", unit_scale=True,
                    desc=os.path.basename(path)) if tqdm is not None else None)
        while chunk := response.read(1 << 16):
            out.write(chunk)
            if bar is not None:
                bar.update(len(chunk))
        if bar is not None:
            bar.close()
    os.replace(partial, path)


def download_from_url(url, path=None, root=".data", overwrite=False, hash_value=None,
                      hash_type="sha256"):
    r"""Download a file (unless it is there), check its hash, and return its path.

    Args:
        url (str): the address.
        path (str, optional): where to save it; ``root/<name in the url>`` by default.
        root (str): the folder when ``path`` is not given. Default: ``".data"``.
        overwrite (bool): download even if the file is there.
        hash_value (str, optional): the expected hash of the file.
        hash_type (str): ``"sha256"`` or ``"md5"``.

    Raises:
        RuntimeError: if the file's hash is not ``hash_value``.
    """
    if path is None:
        root = os.path.abspath(root)
        path = os.path.join(root, os.path.basename(url.split("?")[0]))
    else:
        path = os.path.abspath(path)
        root = os.path.dirname(path)
    if os.path.exists(path) and not overwrite:
        if hash_value:
            _check_hash(path, hash_value, hash_type)
        return path
    os.makedirs(root, exist_ok=True)
    _fetch(url, path)
    logger.info("File %s downloaded.", path)
    if hash_value:
        _check_hash(path, hash_value, hash_type)
    return path


def _inside(root, name):
    target = os.path.realpath(os.path.join(root, name))
    root = os.path.realpath(root)
    return target == root or target.startswith(root + os.sep)


def extract_archive(from_path, to_path=None, overwrite=False):
    r"""Extract a ``.tar.gz`` / ``.tgz`` / ``.tar`` / ``.zip`` / ``.gz`` archive and return
    the paths of the files in it (also those already extracted).

    Members that would land outside ``to_path`` (absolute paths, ``..``, links) are refused.

    Args:
        from_path (str): the archive.
        to_path (str, optional): the folder to extract into; the archive's by default (a
            ``.gz`` file is always extracted beside itself, as torchtext does).
        overwrite (bool): extract files that are already there again.

    Raises:
        RuntimeError: for a member outside ``to_path``.
        NotImplementedError: for another kind of file.
    """
    if to_path is None:
        to_path = os.path.dirname(from_path)
    if from_path.endswith((".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz")):
        files = []
        with tarfile.open(from_path, "r") as tar:
            for member in tar:
                if not _inside(to_path, member.name) or member.issym() or member.islnk():
                    raise RuntimeError(f"unsafe member in {from_path}: {member.name}")
                file_path = os.path.join(to_path, member.name)
                if member.isfile():
                    files.append(file_path)
                    if os.path.exists(file_path) and not overwrite:
                        continue
                tar.extract(member, to_path, filter="data")
        return files
    if from_path.endswith(".zip"):
        files = []
        with zipfile.ZipFile(from_path) as archive:
            for name in archive.namelist():
                if not _inside(to_path, name):
                    raise RuntimeError(f"unsafe member in {from_path}: {name}")
                file_path = os.path.join(to_path, name)
                if name.endswith("/"):
                    continue
                files.append(file_path)
                if os.path.exists(file_path) and not overwrite:
                    continue
                archive.extract(name, to_path)
        return files
    if from_path.endswith(".gz"):
        # As torchtext's: a lone .gz file is extracted beside itself, whatever ``to_path``.
        target = from_path[:-3]
        if overwrite or not os.path.exists(target):
            with gzip.open(from_path, "rb") as source, open(target, "wb") as out:
                shutil.copyfileobj(source, out)
        return [target]
    # NotImplementedError: torchtext's error for an archive format it does not read
    raise NotImplementedError(f"{from_path}: only .tar.gz, .tgz, .tar, .zip and .gz archives "
                              "are supported")


def get_asset_local_path(asset_path, overwrite=False):
    """A local path for an asset: the path itself if the file exists, else the URL is
    downloaded into embertext's cache folder (``<EMBER_HOME>/text``; offline, a RuntimeError
    says where to put the file)."""
    if os.path.exists(asset_path):
        return asset_path
    if "://" not in asset_path:
        raise FileNotFoundError(f"no such file: {asset_path}")
    try:
        return download_from_url(asset_path, root=_CACHE_DIR, overwrite=overwrite)
    except OSError as error:
        raise _offline_error(asset_path, error, _CACHE_DIR) from error


def _offline_error(url, error, folder, file_name=None):
    """The RuntimeError of a download that failed (``error``): it says where to put the
    file by hand, ``folder/<file_name or the URL's file name>``."""
    name = file_name or os.path.basename(url.split("?")[0])
    path = os.path.join(os.path.abspath(folder), name)
    return RuntimeError(f"Could not download {url} ({error}). Offline, put the file at {path}.")

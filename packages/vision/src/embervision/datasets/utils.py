"""Download, integrity checks and safe extraction for the datasets."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import shutil
import tarfile
import zipfile

from embervision._download import calculate_hash, download_file, download_google_drive_file

__all__ = [
    "calculate_md5",
    "check_integrity",
    "download_and_extract_archive",
    "download_file_from_google_drive",
    "download_url",
    "extract_archive",
    "verify_str_arg",
]


def calculate_md5(fpath, chunk_size: int = 1024 * 1024) -> str:
    """The md5 hex digest of a file."""
    return calculate_hash(fpath, "md5", chunk_size)


def check_integrity(fpath, md5: str | None = None) -> bool:
    """Whether ``fpath`` is a file and, when ``md5`` is given, has that md5."""
    if not os.path.isfile(fpath):
        return False
    if md5 is None:
        return True
    return calculate_md5(fpath) == md5


def _destination(root, filename) -> str:
    # root/filename, with root made.
    root = os.path.expanduser(os.fspath(root))
    os.makedirs(root, exist_ok=True)
    return os.path.join(root, os.fspath(filename))


def download_url(url: str, root, filename: str | None = None, md5: str | None = None,
                 max_redirect_hops: int = 3) -> None:
    """Downloads ``url`` into ``root/filename`` unless a file with the right md5 is there.

    A file with the wrong md5 is fetched again; a download with the wrong md5 raises
    ``RuntimeError`` and is deleted.
    """
    fpath = _destination(root, filename or os.path.basename(url))
    if check_integrity(fpath, md5):
        return
    download_file(url, fpath, hash_value=md5, algorithm="md5")


def download_file_from_google_drive(file_id: str, root, filename=None,
                                    md5: str | None = None) -> None:
    """Downloads the Google Drive file ``file_id`` into ``root/filename`` (``filename``
    defaults to ``file_id``) unless a file with the right md5 is there.

    Drive's confirmation page before large files is answered (NOTE [ Google Drive's
    confirmation page ] in ``embervision._download``). A file with the wrong md5 is fetched
    again; a download with the wrong md5 raises ``RuntimeError`` and is deleted. A page from
    Drive in place of the file (its daily quota exceeded, for one) raises ``RuntimeError``
    and nothing is saved.
    """
    fpath = _destination(root, filename or file_id)
    if check_integrity(fpath, md5):
        return
    download_google_drive_file(file_id, fpath, hash_value=md5)


def _check_member_path(root: str, name: str, archive: str) -> str:
    target = os.path.realpath(os.path.join(root, name))
    if os.path.isabs(name) or not (target == root or target.startswith(root + os.sep)):
        raise RuntimeError(f"{archive} holds {name!r}, which would be extracted outside {root}")
    return target


def _extract_tar(from_path: str, to_path: str, compression: str | None) -> None:
    root = os.path.realpath(to_path)
    mode = f"r:{compression[1:]}" if compression else "r"
    with tarfile.open(from_path, mode) as tar:
        members = tar.getmembers()
        for m in members:
            _check_member_path(root, m.name, from_path)
            if m.issym() or m.islnk():
                link_base = os.path.dirname(m.name) if m.issym() else ""
                _check_member_path(root, os.path.join(link_base, m.linkname), from_path)
            elif not (m.isfile() or m.isdir()):
                raise RuntimeError(f"{from_path} holds {m.name!r}, which is not a regular file")
        tar.extractall(to_path, members=members, filter="data")


def _extract_zip(from_path: str, to_path: str, compression: str | None) -> None:
    root = os.path.realpath(to_path)
    with zipfile.ZipFile(from_path) as zf:
        for name in zf.namelist():
            _check_member_path(root, name, from_path)
        zf.extractall(to_path)


_ARCHIVES = {".tar": _extract_tar, ".zip": _extract_zip}
_COMPRESSORS = {".gz": gzip.open, ".xz": lzma.open, ".bz2": bz2.open}
_ALIASES = {".tgz": (".tar", ".gz"), ".tbz": (".tar", ".bz2"), ".tbz2": (".tar", ".bz2"),
            ".txz": (".tar", ".xz")}


def _detect(path: str):
    suffixes = [s.lower() for s in os.path.basename(path).split(".")[1:]]
    suffixes = ["." + s for s in suffixes]
    if not suffixes:
        raise RuntimeError(f"File '{path}' has no suffixes that could be used to detect the "
                           "archive type and compression.")
    last = suffixes[-1]
    if last in _ALIASES:
        return last, *_ALIASES[last]
    if last in _ARCHIVES:
        return last, last, None
    if last in _COMPRESSORS:
        if len(suffixes) > 1 and suffixes[-2] in _ARCHIVES:
            return suffixes[-2] + last, suffixes[-2], last
        return last, None, last
    raise RuntimeError(f"Unknown compression or archive type: '{last}'.")


def extract_archive(from_path, to_path=None, remove_finished: bool = False) -> str:
    """Extracts a ``.tar``/``.zip`` archive (optionally ``.gz``/``.xz``/``.bz2``-compressed)
    or decompresses a single compressed file.

    Members that would land outside ``to_path`` (absolute paths, ``..``, links out of it)
    and special files make it raise ``RuntimeError`` before anything is written.

    Returns:
        str: the extraction folder, or the decompressed file's path.
    """
    from_path = os.fspath(from_path)
    to_path = os.fspath(to_path) if to_path is not None else os.path.dirname(from_path)
    suffix, archive_type, compression = _detect(from_path)
    if archive_type is None:
        out = os.path.join(to_path, os.path.basename(from_path)[: -len(compression)])
        with _COMPRESSORS[compression](from_path, "rb") as src, open(out, "wb") as dst:
            shutil.copyfileobj(src, dst)
    else:
        os.makedirs(to_path, exist_ok=True)
        _ARCHIVES[archive_type](from_path, to_path, compression)
        out = to_path
    if remove_finished:
        os.remove(from_path)
    return out


def download_and_extract_archive(url: str, download_root, extract_root=None,
                                 filename: str | None = None, md5: str | None = None,
                                 remove_finished: bool = False) -> None:
    """:func:`download_url` then :func:`extract_archive`."""
    download_root = os.path.expanduser(os.fspath(download_root))
    extract_root = extract_root or download_root
    filename = filename or os.path.basename(url)
    download_url(url, download_root, filename, md5)
    extract_archive(os.path.join(download_root, filename), extract_root, remove_finished)


def verify_str_arg(value, arg: str | None = None, valid_values=None, custom_msg=None) -> str:
    """Checks that ``value`` is a str and one of ``valid_values``."""
    if not isinstance(value, str):
        msg = "Expected type str" + (f" for argument {arg}" if arg else "")
        raise ValueError(f"{msg}, but got type {type(value)}.")
    if valid_values is None or value in valid_values:
        return value
    if custom_msg is not None:
        raise ValueError(custom_msg)
    choices = ", ".join(repr(v) for v in valid_values)
    raise ValueError(f"Unknown value '{value}' for argument {arg}. Valid values are {{{choices}}}.")

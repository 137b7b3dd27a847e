"""Downloads with published hashes (pooch, with tqdm's progress bar) and safe extraction."""

from __future__ import annotations

import os
import tarfile
import zipfile
from pathlib import Path

__all__ = ["download_url", "extract_archive"]

# Tests (and mirrors) may set a pooch downloader here: a callable (url, output_file, pooch).
_downloader = None


def download_url(url: str, root: str | os.PathLike, filename: str | None = None,
                 sha256: str | None = None, progress: bool = True) -> Path:
    """Download ``url`` into ``root`` (kept there as a cache) and check its SHA-256.

    Args:
        url (str): the published address of the file.
        root (path-like): the folder to save it in.
        filename (str or None, optional): the name to save it as. Default: the last part of
            the address.
        sha256 (str or None, optional): the published SHA-256 of the file; a file that
            does not match is refused (and removed). Default: ``None`` (not checked).
        progress (bool, optional): show a progress bar. Default: ``True``.

    Returns:
        Path: the downloaded file.
    """
    try:
        import pooch
    except ImportError as error:
        raise ImportError("Downloading a dataset needs pooch (and tqdm for the progress "
                          "bar): pip install 'emberaudio[datasets]'") from error
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    filename = filename or url.rstrip("/").rsplit("/", 1)[-1]
    downloader = _downloader
    if downloader is None and progress:
        try:
            import tqdm  # noqa: F401
        except ImportError:
            progress = False
        downloader = pooch.HTTPDownloader(progressbar=progress)
    known_hash = f"sha256:{sha256}" if sha256 else None
    return Path(pooch.retrieve(url, known_hash, fname=filename, path=root,
                               downloader=downloader, progressbar=False))


def _check_member(root: Path, name: str, archive: Path) -> None:
    target = (root / name).resolve()
    if os.path.isabs(name) or not target.is_relative_to(root.resolve()):
        raise RuntimeError(f"Refusing to extract {name!r} from {archive}: it would be written "
                           f"outside {root}")


def extract_archive(from_path: str | os.PathLike, to_path: str | os.PathLike | None = None
                    ) -> list[str]:
    """Extract a ``.tar``, ``.tar.gz``/``.tgz``, ``.tar.bz2``, ``.tar.xz`` or ``.zip``
    archive, refusing members that would land outside ``to_path`` (absolute paths, ``..``,
    links out of the folder, device files).

    Args:
        from_path (path-like): the archive.
        to_path (path-like or None, optional): the folder to extract into. Default: the
            archive's folder.

    Returns:
        list[str]: the names of the extracted members.
    """
    archive = Path(from_path)
    root = Path(to_path) if to_path is not None else archive.parent
    root.mkdir(parents=True, exist_ok=True)
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as handle:
            names = handle.namelist()
            for name in names:
                _check_member(root, name, archive)
            handle.extractall(root)
        return names
    try:
        handle = tarfile.open(archive)
    except tarfile.TarError as error:
        raise RuntimeError(f"{archive} is not a tar or zip archive ({error})") from error
    with handle:
        members = handle.getmembers()
        for member in members:
            _check_member(root, member.name, archive)
            if member.islnk() or member.issym():
                link = member.linkname if member.islnk() else os.path.join(
                    os.path.dirname(member.name), member.linkname)
                _check_member(root, link, archive)
            elif not (member.isfile() or member.isdir()):
                raise RuntimeError(f"Refusing to extract {member.name!r} from {archive}: it is "
                                   "not a regular file or folder")
        handle.extractall(root, filter="data")
    return [member.name for member in members]

"""What the dataset files share: finding (or downloading and extracting) their folder."""

from __future__ import annotations

import os
from pathlib import Path

from emberaudio.datasets.utils import download_url, extract_archive


def fetch(url: str, root: Path, folder: Path, sha256: str | None, download: bool,
          archive_name: str | None = None, extract_to: Path | None = None) -> None:
    """Makes sure ``folder`` exists: downloads and extracts ``url`` into ``extract_to``
    (default ``root``) when it does not and ``download`` is set."""
    if folder.is_dir():
        return
    if not download:
        raise RuntimeError(f"Dataset not found at {folder}. Please set `download=True` to "
                           "download it, or check the `root` path.")
    archive = root / (archive_name or os.path.basename(url))
    if not archive.is_file():
        archive = download_url(url, root, archive.name, sha256)
    extract_archive(archive, extract_to or root)
    if not folder.is_dir():
        raise RuntimeError(f"{archive} was extracted, but {folder} is still missing: the "
                           "archive does not hold this dataset's layout")

"""YesNo: 60 recordings of one speaker saying eight yes/no words in Hebrew."""

from __future__ import annotations

import os
from pathlib import Path

import ember
from ember.utils.data import Dataset
from emberaudio._io import load
from emberaudio.datasets._common import fetch

__all__ = ["YESNO"]

_RELEASE = {
    "url": "http://www.openslr.org/resources/1/waves_yesno.tar.gz",
    "sha256": "c3f49e0cca421f96b75b41640749167b52118f232498667ca7a5f9416aef8e73",
}


class YESNO(Dataset):
    """*YesNo* dataset: 60 files of eight Hebrew words, each "yes" (1) or "no" (0).

    Args:
        root (str or Path): path to the directory where the dataset is found or downloaded.
        url (str, optional): the URL to download the dataset from.
            (default: ``"http://www.openslr.org/resources/1/waves_yesno.tar.gz"``)
        folder_in_archive (str, optional): the top-level directory of the dataset.
            (default: ``"waves_yesno"``)
        download (bool, optional): whether to download the dataset if it is not found at
            root path. (default: ``False``).
    """

    def __init__(self, root: str | Path, url: str = _RELEASE["url"],
                 folder_in_archive: str = "waves_yesno", download: bool = False) -> None:
        root = Path(root)
        self._path = root / folder_in_archive
        sha256 = _RELEASE["sha256"] if url == _RELEASE["url"] else None
        fetch(url, root, self._path, sha256, download)
        self._walker = sorted(p.stem for p in self._path.glob("*.wav"))

    def _load_item(self, fileid: str) -> tuple[ember.Tensor, int, list[int]]:
        labels = [int(c) for c in fileid.split("_")]
        waveform, sample_rate = load(os.path.join(self._path, fileid + ".wav"))
        return waveform, sample_rate, labels

    def __getitem__(self, n: int) -> tuple[ember.Tensor, int, list[int]]:
        """Load the n-th sample from the dataset.

        Returns:
            (Tensor, int, list[int]): waveform, sample rate, labels (1 for yes, 0 for no).
        """
        return self._load_item(self._walker[n])

    def __len__(self) -> int:
        return len(self._walker)

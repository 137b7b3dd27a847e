"""LJSpeech: 13,100 clips of one speaker reading passages from 7 books."""

from __future__ import annotations

import csv
from pathlib import Path

import ember
from ember.utils.data import Dataset
from emberaudio._io import load
from emberaudio.datasets._common import fetch

__all__ = ["LJSPEECH"]

_RELEASE = {
    "url": "https://data.keithito.com/data/speech/LJSpeech-1.1.tar.bz2",
    "sha256": "be1a30453f28eb8dd26af4101ae40cbf2c50413b1bb21936cbcdc6fae3de8aa5",
    "folder_in_archive": "wavs",
}


class LJSPEECH(Dataset):
    """*LJSpeech-1.1* dataset.

    Args:
        root (str or Path): path to the directory where the dataset is found or downloaded.
        url (str, optional): the URL to download the dataset from.
            (default: ``"https://data.keithito.com/data/speech/LJSpeech-1.1.tar.bz2"``)
        folder_in_archive (str, optional): the directory of the audio files.
            (default: ``"wavs"``)
        download (bool, optional): whether to download the dataset if it is not found at
            root path. (default: ``False``).
    """

    def __init__(self, root: str | Path, url: str = _RELEASE["url"],
                 folder_in_archive: str = _RELEASE["folder_in_archive"],
                 download: bool = False) -> None:
        root = Path(root)
        basename = Path(url).name.split(".tar.bz2")[0]
        self._path = root / basename / folder_in_archive
        self._metadata_path = root / basename / "metadata.csv"
        sha256 = _RELEASE["sha256"] if url == _RELEASE["url"] else None
        fetch(url, root, self._path, sha256, download)
        if not self._metadata_path.is_file():
            raise RuntimeError(f"{self._metadata_path} is missing")
        with open(self._metadata_path, newline="", encoding="utf-8") as metadata:
            self._flist = [row for row in csv.reader(metadata, delimiter="|",
                                                     quoting=csv.QUOTE_NONE) if row]

    def __getitem__(self, n: int) -> tuple[ember.Tensor, int, str, str]:
        """Load the n-th sample from the dataset.

        Returns:
            (Tensor, int, str, str): waveform, sample rate, transcript, normalized
            transcript.
        """
        fileid, transcript, normalized_transcript = self._flist[n]
        waveform, sample_rate = load(self._path / f"{fileid}.wav")
        return waveform, sample_rate, transcript, normalized_transcript

    def __len__(self) -> int:
        return len(self._flist)

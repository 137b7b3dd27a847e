"""Libri-light limited: the 10 min / 1 h / 10 h LibriSpeech subsets for supervised
fine-tuning (as in HuBERT)."""

from __future__ import annotations

import os
from pathlib import Path

import ember
from ember.utils.data import Dataset
from emberaudio._io import load
from emberaudio.datasets._common import fetch

__all__ = ["LibriLightLimited"]

_ARCHIVE_NAME = "librispeech_finetuning"
_URL = "https://dl.fbaipublicfiles.com/librilight/data/librispeech_finetuning.tgz"
_CHECKSUM = "5d1efdc777b548194d7e09ba89126e2188026df9fd57aa57eb14408d2b2342af"
_SUBSET_MAP = {"10min": ["1h/0"], "1h": ["1h/*"], "10h": ["1h/*", "9h"]}
_SAMPLE_RATE = 16000


class LibriLightLimited(Dataset):
    """A subset of *Libri-light* (Kahn et al., 2020) used for supervised fine-tuning:
    ``{root}/librispeech_finetuning/1h/[0-5]/{clean,other}/<speaker>/<chapter>/`` and
    ``.../9h/{clean,other}/<speaker>/<chapter>/``, in LibriSpeech's file layout.

    Args:
        root (str or Path): path to the directory where the dataset is found or downloaded.
        subset (str, optional): ``"10min"`` (``1h/0``), ``"1h"`` (``1h/*``) or ``"10h"``
            (``1h/*`` and ``9h``). (Default: ``"10min"``)
        download (bool, optional): whether to download the dataset if it is not found at
            root path. (default: ``False``).
    """

    _ext_txt = ".trans.txt"
    _ext_audio = ".flac"

    def __init__(self, root: str | Path, subset: str = "10min", download: bool = False
                 ) -> None:
        if subset not in _SUBSET_MAP:
            raise ValueError(f"`subset` must be one of {list(_SUBSET_MAP)}. Found: {subset}")
        root = Path(root)
        self._path = root / _ARCHIVE_NAME
        fetch(_URL, root, self._path, _CHECKSUM, download, archive_name=f"{_ARCHIVE_NAME}.tgz")
        files = []
        for folder in _SUBSET_MAP[subset]:
            for p in self._path.glob(f"{folder}/*/*/*/*{self._ext_audio}"):
                relative = p.relative_to(self._path)
                files.append((str(relative.parent.parent.parent), p.stem))
        self._fileids_paths = sorted(files, key=lambda x: x[0] + x[1])

    def _metadata(self, n: int) -> tuple[str, int, str, int, int, int]:
        folder, fileid = self._fileids_paths[n]
        speaker_id, chapter_id, utterance_id = fileid.split("-")
        chapter_folder = os.path.join(folder, speaker_id, chapter_id)
        text_file = self._path / chapter_folder / f"{speaker_id}-{chapter_id}{self._ext_txt}"
        with open(text_file) as handle:
            for line in handle:
                text_id, _, transcript = line.strip().partition(" ")
                if text_id == fileid:
                    break
            else:
                raise FileNotFoundError(f"Translation not found for {fileid} in {text_file}")
        return (os.path.join(chapter_folder, fileid + self._ext_audio), _SAMPLE_RATE,
                transcript, int(speaker_id), int(chapter_id), int(utterance_id))

    def __getitem__(self, n: int) -> tuple[ember.Tensor, int, str, int, int, int]:
        """Load the n-th sample from the dataset.

        Returns:
            (Tensor, int, str, int, int, int): waveform, sample rate, transcript, speaker
            ID, chapter ID, utterance ID.
        """
        metadata = self._metadata(n)
        waveform, _ = load(self._path / metadata[0])
        return (waveform,) + metadata[1:]

    def __len__(self) -> int:
        return len(self._fileids_paths)

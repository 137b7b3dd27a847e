"""Common Voice: crowd-sourced read speech in many languages (a local copy; Mozilla's terms
require downloading it by hand)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import ember
from ember.utils.data import Dataset
from emberaudio._io import load

__all__ = ["COMMONVOICE"]


class COMMONVOICE(Dataset):
    """*CommonVoice* dataset, read from a local folder with ``clips/`` and the TSV files.

    Args:
        root (str or Path): path to the directory where the dataset is located (where the
            ``tsv`` file is).
        tsv (str, optional): the name of the tsv file used to construct the metadata, such
            as ``"train.tsv"``, ``"test.tsv"``, ``"dev.tsv"``, ``"invalidated.tsv"``,
            ``"validated.tsv"`` and ``"other.tsv"``. (default: ``"train.tsv"``)
    """

    _ext_txt = ".txt"
    _ext_audio = ".mp3"
    _folder_audio = "clips"

    def __init__(self, root: str | Path, tsv: str = "train.tsv") -> None:
        self._path = Path(root)
        self._tsv = self._path / tsv
        with open(self._tsv, newline="", encoding="utf-8") as handle:
            rows = csv.reader(handle, delimiter="\t")
            self._header = next(rows)
            self._walker = list(rows)
        if len(self._header) < 2 or self._header[1] != "path":
            raise ValueError(f"expect `header[1]` to be 'path', but got {self._header[1:2]}")

    def __getitem__(self, n: int) -> tuple[ember.Tensor, int, dict[str, str]]:
        """Load the n-th sample from the dataset.

        Returns:
            (Tensor, int, dict[str, str]): waveform, sample rate, and the row of the TSV
            file as a dictionary (``client_id``, ``path``, ``sentence``, ``up_votes``,
            ``down_votes``, ``age``, ``gender``, ``accent``, ...).
        """
        line = self._walker[n]
        filename = os.path.join(self._path, self._folder_audio, line[1])
        if not filename.endswith(self._ext_audio):
            filename += self._ext_audio
        waveform, sample_rate = load(filename)
        return waveform, sample_rate, dict(zip(self._header, line))

    def __len__(self) -> int:
        return len(self._walker)

"""Fluent Speech Commands: spoken commands labelled with action, object and location (a
local copy; its licence requires downloading it by hand)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import ember
from ember.utils.data import Dataset
from emberaudio._io import load

__all__ = ["FluentSpeechCommands"]

SAMPLE_RATE = 16000


class FluentSpeechCommands(Dataset):
    """*Fluent Speech Commands* dataset.

    Args:
        root (str or Path): path to the directory where the dataset is found
            (``root/fluent_speech_commands_dataset``).
        subset (str, optional): subset of the dataset to use: ``"train"``, ``"valid"`` or
            ``"test"``. (Default: ``"train"``)
    """

    def __init__(self, root: str | Path, subset: str = "train") -> None:
        if subset not in ("train", "valid", "test"):
            raise ValueError("`subset` must be one of ['train', 'valid', 'test']")
        self._path = Path(root) / "fluent_speech_commands_dataset"
        if not self._path.is_dir():
            raise RuntimeError(f"Dataset not found at {self._path}.")
        with open(self._path / "data" / f"{subset}_data.csv", newline="") as handle:
            rows = list(csv.reader(handle))
        self.header = rows[0]
        self.data = rows[1:]

    def get_metadata(self, n: int) -> tuple[str, int, str, str, str, str, str, str]:
        """The n-th sample's metadata, with the audio file's path (relative to the
        dataset's folder) instead of its waveform.

        Returns:
            (str, int, str, str, str, str, str, str): path, sample rate, file name, speaker
            ID, transcription, action, object, location.
        """
        sample = self.data[n]
        file_name = sample[self.header.index("path")].split("/")[-1].split(".")[0]
        speaker_id, transcription, action, obj, location = sample[2:]
        path = os.path.join("wavs", "speakers", speaker_id, f"{file_name}.wav")
        return path, SAMPLE_RATE, file_name, speaker_id, transcription, action, obj, location

    def __getitem__(self, n: int) -> tuple[ember.Tensor, int, str, str, str, str, str, str]:
        """Load the n-th sample from the dataset.

        Returns:
            (Tensor, int, str, str, str, str, str, str): waveform, sample rate, file name,
            speaker ID, transcription, action, object, location.
        """
        metadata = self.get_metadata(n)
        waveform, sample_rate = load(self._path / metadata[0])
        if sample_rate != metadata[1]:
            raise ValueError(f"sample rate should be {metadata[1]}, but got {sample_rate}")
        return (waveform,) + metadata[1:]

    def __len__(self) -> int:
        return len(self.data)

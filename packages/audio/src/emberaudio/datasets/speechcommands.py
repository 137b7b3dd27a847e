"""Speech Commands: one-second utterances of 35 words (v0.02), by the official splits."""

from __future__ import annotations

import os
from pathlib import Path

import ember
from ember.utils.data import Dataset
from emberaudio._io import load
from emberaudio.datasets._common import fetch

__all__ = ["SPEECHCOMMANDS"]

FOLDER_IN_ARCHIVE = "SpeechCommands"
URL = "speech_commands_v0.02"
HASH_DIVIDER = "_nohash_"
EXCEPT_FOLDER = "_background_noise_"
SAMPLE_RATE = 16000
_CHECKSUMS = {
    "http://download.tensorflow.org/data/speech_commands_v0.01.tar.gz":
        "743935421bb51cccdb6bdd152e04c5c70274e935c82119ad7faeec31780d811d",
    "http://download.tensorflow.org/data/speech_commands_v0.02.tar.gz":
        "af14739ee7dc311471de98f5f9d2c9191b18aedfe957f4a6ff791c709868ff58",
}


def _load_list(root: Path, *filenames: str) -> list[str]:
    output = []
    for filename in filenames:
        with open(root / filename) as handle:
            output += [os.path.normpath(os.path.join(root, line.strip())) for line in handle
                       if line.strip()]
    return output


class SPEECHCOMMANDS(Dataset):
    """*Speech Commands* dataset.

    Args:
        root (str or Path): path to the directory where the dataset is found or downloaded.
        url (str, optional): ``"speech_commands_v0.01"`` or ``"speech_commands_v0.02"``, or
            the URL of an archive in their layout. (default: ``"speech_commands_v0.02"``)
        folder_in_archive (str, optional): the top-level directory of the dataset.
            (default: ``"SpeechCommands"``)
        download (bool, optional): whether to download the dataset if it is not found at
            root path. (default: ``False``).
        subset (str or None, optional): ``"training"``, ``"validation"``, ``"testing"`` (the
            official split: ``validation_list.txt`` and ``testing_list.txt``, and the rest),
            or ``None`` for the whole dataset. (default: ``None``)
    """

    def __init__(self, root: str | Path, url: str = URL,
                 folder_in_archive: str = FOLDER_IN_ARCHIVE, download: bool = False,
                 subset: str | None = None) -> None:
        if subset is not None and subset not in ("training", "validation", "testing"):
            raise ValueError("When `subset` is not None, it must be one of ['training', "
                             "'validation', 'testing'].")
        if url in ("speech_commands_v0.01", "speech_commands_v0.02"):
            url = f"http://download.tensorflow.org/data/{url}.tar.gz"
        basename = os.path.basename(url).rsplit(".tar.gz", 1)[0].rsplit(".tgz", 1)[0]
        root = Path(root)
        self._archive = root / folder_in_archive
        self._path = self._archive / basename
        # The archives hold the files themselves, not a folder: extract into their own.
        fetch(url, self._archive, self._path, _CHECKSUMS.get(url), download,
              extract_to=self._path)
        walker = sorted(str(p) for p in self._path.glob("*/*.wav"))
        walker = [w for w in walker if HASH_DIVIDER in w and EXCEPT_FOLDER not in w]
        if subset == "validation":
            self._walker = _load_list(self._path, "validation_list.txt")
        elif subset == "testing":
            self._walker = _load_list(self._path, "testing_list.txt")
        elif subset == "training":
            excludes = set(_load_list(self._path, "validation_list.txt", "testing_list.txt"))
            self._walker = [w for w in walker if os.path.normpath(w) not in excludes]
        else:
            self._walker = walker

    def get_metadata(self, n: int) -> tuple[str, int, str, str, int]:
        """The n-th sample's metadata, with the audio file's path (relative to the
        dataset's folder) instead of its waveform.

        Returns:
            (str, int, str, str, int): path, sample rate, label, speaker ID, utterance
            number.
        """
        relpath = os.path.relpath(self._walker[n], self._archive)
        label, filename = os.path.split(os.path.relpath(self._walker[n], self._path))
        speaker, _, utterance = os.path.splitext(filename)[0].partition(HASH_DIVIDER)
        return relpath, SAMPLE_RATE, label, speaker, int(utterance)

    def __getitem__(self, n: int) -> tuple[ember.Tensor, int, str, str, int]:
        """Load the n-th sample from the dataset.

        Returns:
            (Tensor, int, str, str, int): waveform, sample rate, label, speaker ID,
            utterance number.
        """
        metadata = self.get_metadata(n)
        waveform, sample_rate = load(self._archive / metadata[0])
        if sample_rate != metadata[1]:
            raise ValueError(f"sample rate should be {metadata[1]}, but got {sample_rate}")
        return (waveform,) + metadata[1:]

    def __len__(self) -> int:
        return len(self._walker)

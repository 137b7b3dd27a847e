"""LibriSpeech: about 1,000 hours of read English speech at 16 kHz."""

from __future__ import annotations

import os
from pathlib import Path

import ember
from ember.utils.data import Dataset
from emberaudio._io import load
from emberaudio.datasets._common import fetch

__all__ = ["LIBRISPEECH"]

URL = "train-clean-100"
FOLDER_IN_ARCHIVE = "LibriSpeech"
SAMPLE_RATE = 16000
_BASE_URL = "http://www.openslr.org/resources/12/"
_CHECKSUMS = {
    "dev-clean": "76f87d090650617fca0cac8f88b9416e0ebf80350acb97b343a85fa903728ab3",
    "dev-other": "12661c48e8c3fe1de2c1caa4c3e135193bfb1811584f11f569dd12645aa84365",
    "test-clean": "39fde525e59672dc6d1551919b1478f724438a95aa55f874b576be21967e6c23",
    "test-other": "d09c181bba5cf717b3dee7d4d592af11a3ee3a09e08ae025c5506f6ebe961c29",
    "train-clean-100": "d4ddd1d5a6ab303066f14971d768ee43278a5f2a0aa43dc716b0e64ecbbbf6e2",
    "train-clean-360": "146a56496217e96c14334a160df97fffedd6e0a04e66b9c5af0d40be3c792ecf",
    "train-other-500": "ddb22f27f96ec163645d53215559df6aa36515f26e01dd70798188350adcb6d2",
}


class LIBRISPEECH(Dataset):
    """*LibriSpeech* dataset.

    Args:
        root (str or Path): path to the directory where the dataset is found or downloaded.
        url (str, optional): the subset: ``"dev-clean"``, ``"dev-other"``, ``"test-clean"``,
            ``"test-other"``, ``"train-clean-100"``, ``"train-clean-360"`` or
            ``"train-other-500"``. (default: ``"train-clean-100"``)
        folder_in_archive (str, optional): the top-level directory of the dataset.
            (default: ``"LibriSpeech"``)
        download (bool, optional): whether to download the dataset if it is not found at
            root path. (default: ``False``).
    """

    _ext_txt = ".trans.txt"
    _ext_audio = ".flac"

    def __init__(self, root: str | Path, url: str = URL,
                 folder_in_archive: str = FOLDER_IN_ARCHIVE, download: bool = False) -> None:
        if url not in _CHECKSUMS:
            raise ValueError(f"Invalid url '{url}' given; please provide one of "
                             f"{sorted(_CHECKSUMS)}.")
        root = Path(root)
        self._archive = root / folder_in_archive
        self._path = self._archive / url
        fetch(_BASE_URL + url + ".tar.gz", root, self._path, _CHECKSUMS[url], download)
        self._walker = sorted(p.stem for p in self._path.glob("*/*/*" + self._ext_audio))

    def get_metadata(self, n: int) -> tuple[str, int, str, int, int, int]:
        """The n-th sample's metadata, with the audio file's path (relative to the
        dataset's folder) instead of its waveform.

        Returns:
            (str, int, str, int, int, int): path, sample rate, transcript, speaker ID,
            chapter ID, utterance ID.
        """
        fileid = self._walker[n]
        speaker_id, chapter_id, utterance_id = fileid.split("-")
        folder = os.path.join(self._path.name, speaker_id, chapter_id)
        text_file = self._archive / folder / f"{speaker_id}-{chapter_id}{self._ext_txt}"
        with open(text_file) as handle:
            for line in handle:
                text_id, _, transcript = line.strip().partition(" ")
                if text_id == fileid:
                    break
            else:
                raise FileNotFoundError(f"Translation not found for {fileid} in {text_file}")
        return (os.path.join(folder, fileid + self._ext_audio), SAMPLE_RATE, transcript,
                int(speaker_id), int(chapter_id), int(utterance_id))

    def __getitem__(self, n: int) -> tuple[ember.Tensor, int, str, int, int, int]:
        """Load the n-th sample from the dataset.

        Returns:
            (Tensor, int, str, int, int, int): waveform, sample rate, transcript, speaker
            ID, chapter ID, utterance ID.
        """
        metadata = self.get_metadata(n)
        waveform, sample_rate = load(self._archive / metadata[0])
        if sample_rate != metadata[1]:
            raise ValueError(f"sample rate should be {metadata[1]}, but got {sample_rate}")
        return (waveform,) + metadata[1:]

    def __len__(self) -> int:
        return len(self._walker)

"""LibriTTS: LibriSpeech's recordings re-cut for text-to-speech, at 24 kHz."""

from __future__ import annotations

import os
from pathlib import Path

import ember
from ember.utils.data import Dataset
from emberaudio._io import load
from emberaudio.datasets._common import fetch

__all__ = ["LIBRITTS"]

URL = "train-clean-100"
FOLDER_IN_ARCHIVE = "LibriTTS"
_BASE_URL = "http://www.openslr.org/resources/60/"
_CHECKSUMS = {
    "dev-clean": "da0864e1bd26debed35da8a869dd5c04dfc27682921936de7cff9c8a254dbe1a",
    "dev-other": "d413eda26f3a152ac7c9cf3658ef85504dfb1b625296e5fa83727f5186cca79c",
    "test-clean": "234ea5b25859102a87024a4b9b86641f5b5aaaf1197335c95090cde04fe9a4f5",
    "test-other": "33a5342094f3bba7ccc2e0500b9e72d558f72eb99328ac8debe1d9080402f10d",
    "train-clean-100": "c5608bf1ef74bb621935382b8399c5cdd51cd3ee47cec51f00f885a64c6c7f6b",
    "train-clean-360": "ce7cff44dcac46009d18379f37ef36551123a1dc4e5c8e4eb73ae57260de4886",
    "train-other-500": "e35f7e34deeb2e2bdfe4403d88c8fdd5fbf64865cae41f027a185a6965f0a5df",
}


class LIBRITTS(Dataset):
    """*LibriTTS* dataset.

    Args:
        root (str or Path): path to the directory where the dataset is found or downloaded.
        url (str, optional): the subset (``"dev-clean"``, ``"dev-other"``, ``"test-clean"``,
            ``"test-other"``, ``"train-clean-100"``, ``"train-clean-360"``,
            ``"train-other-500"``) or the URL of an archive in their layout.
            (default: ``"train-clean-100"``)
        folder_in_archive (str, optional): the top-level directory of the dataset.
            (default: ``"LibriTTS"``)
        download (bool, optional): whether to download the dataset if it is not found at
            root path. (default: ``False``).
    """

    _ext_original_txt = ".original.txt"
    _ext_normalized_txt = ".normalized.txt"
    _ext_audio = ".wav"

    def __init__(self, root: str | Path, url: str = URL,
                 folder_in_archive: str = FOLDER_IN_ARCHIVE, download: bool = False) -> None:
        sha256 = _CHECKSUMS.get(url)
        if url in _CHECKSUMS:
            url = _BASE_URL + url + ".tar.gz"
        root = Path(root)
        basename = os.path.basename(url).split(".")[0]
        self._path = root / folder_in_archive / basename
        fetch(url, root, self._path, sha256, download)
        self._walker = sorted(p.stem for p in self._path.glob("*/*/*" + self._ext_audio))

    def __getitem__(self, n: int) -> tuple[ember.Tensor, int, str, str, int, int, str]:
        """Load the n-th sample from the dataset.

        Returns:
            (Tensor, int, str, str, int, int, str): waveform, sample rate, original text,
            normalized text, speaker ID, chapter ID, utterance ID.
        """
        utterance_id = self._walker[n]
        speaker_id, chapter_id = utterance_id.split("_")[:2]
        folder = self._path / speaker_id / chapter_id
        waveform, sample_rate = load(folder / (utterance_id + self._ext_audio))
        with open(folder / (utterance_id + self._ext_original_txt)) as handle:
            original_text = handle.readline()
        with open(folder / (utterance_id + self._ext_normalized_txt)) as handle:
            normalized_text = handle.readline()
        return (waveform, sample_rate, original_text, normalized_text, int(speaker_id),
                int(chapter_id), utterance_id)

    def __len__(self) -> int:
        return len(self._walker)

"""VCTK 0.92: 110 English speakers reading about 400 sentences each, two microphones."""

from __future__ import annotations

import os
from pathlib import Path

import ember
from ember.utils.data import Dataset
from emberaudio._io import load
from emberaudio.datasets._common import fetch

__all__ = ["VCTK_092"]

URL = "https://datashare.is.ed.ac.uk/bitstream/handle/10283/3443/VCTK-Corpus-0.92.zip"
_CHECKSUMS = {URL: "f96258be9fdc2cbff6559541aae7ea4f59df3fcaf5cf963aae5ca647357e359c"}


class VCTK_092(Dataset):
    """*VCTK 0.92* dataset.

    Args:
        root (str or Path): root directory where the dataset's top level directory is
            found.
        mic_id (str, optional): microphone ID, ``"mic1"`` or ``"mic2"``.
            (default: ``"mic2"``)
        download (bool, optional): whether to download the dataset if it is not found at
            root path. (default: ``False``).
        url (str, optional): the URL to download the dataset from.
        audio_ext (str, optional): custom audio extension if dataset is converted to
            non-default audio format. (default: ``".flac"``)

    Note:
        * All the speeches from speaker ``p315`` will be skipped due to the lack of the
          corresponding text files.
        * All the speeches from ``p280`` will be skipped for ``mic_id="mic2"`` due to the
          lack of the audio files.
        * Some of the speeches from speaker ``p362`` will be skipped due to the lack of the
          audio files.
    """

    def __init__(self, root: str | Path, mic_id: str = "mic2", download: bool = False,
                 url: str = URL, audio_ext: str = ".flac") -> None:
        if mic_id not in ("mic1", "mic2"):
            raise RuntimeError(f'`mic_id` has to be either "mic1" or "mic2". Found: {mic_id}')
        root = Path(root)
        self._path = root / "VCTK-Corpus-0.92"
        self._txt_dir = self._path / "txt"
        self._audio_dir = self._path / "wav48_silence_trimmed"
        self._mic_id = mic_id
        self._audio_ext = audio_ext
        fetch(url, root, self._path, _CHECKSUMS.get(url), download,
              archive_name="VCTK-Corpus-0.92.zip", extract_to=self._path)
        if not self._txt_dir.is_dir():
            raise RuntimeError(f"Dataset not found at {self._txt_dir}.")
        self._speaker_ids = sorted(os.listdir(self._txt_dir))
        self._sample_ids = []
        for speaker_id in self._speaker_ids:
            if speaker_id == "p280" and mic_id == "mic2":
                continue
            utterances = sorted(f for f in os.listdir(self._txt_dir / speaker_id)
                                if f.endswith(".txt"))
            for utterance_file in utterances:
                utterance_id = os.path.splitext(utterance_file)[0]
                audio = self._audio_dir / speaker_id / f"{utterance_id}_{mic_id}{audio_ext}"
                if speaker_id == "p362" and not audio.is_file():
                    continue
                self._sample_ids.append(utterance_id.split("_"))

    def __getitem__(self, n: int) -> tuple[ember.Tensor, int, str, str, str]:
        """Load the n-th sample from the dataset.

        Returns:
            (Tensor, int, str, str, str): waveform, sample rate, transcript, speaker ID,
            utterance ID.
        """
        speaker_id, utterance_id = self._sample_ids[n]
        text = self._txt_dir / speaker_id / f"{speaker_id}_{utterance_id}.txt"
        with open(text) as handle:
            transcript = handle.readlines()[0]
        audio = (self._audio_dir / speaker_id
                 / f"{speaker_id}_{utterance_id}_{self._mic_id}{self._audio_ext}")
        waveform, sample_rate = load(audio)
        return waveform, sample_rate, transcript, speaker_id, utterance_id

    def __len__(self) -> int:
        return len(self._sample_ids)

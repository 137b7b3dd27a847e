"""DR-VCTK: VCTK utterances (small subset) replayed and re-recorded on consumer devices,
paired with the clean originals, at 16 kHz."""

from __future__ import annotations

from pathlib import Path

import ember
from ember.utils.data import Dataset
from emberaudio._io import load
from emberaudio.datasets._common import fetch

__all__ = ["DR_VCTK"]

_URL = "https://datashare.ed.ac.uk/bitstream/handle/10283/3038/DR-VCTK.zip"
_CHECKSUM = "781f12f4406ed36ed27ae3bce55da47ba176e2d8bae67319e389e07b2c9bd769"
_SUPPORTED_SUBSETS = {"train", "test"}


class DR_VCTK(Dataset):
    """*Device Recorded VCTK (small subset)* dataset (Sarfjoo and Yamagishi, 2018): clean
    and device-recorded copies of each utterance, with the recording's source and channel.

    Args:
        root (str or Path): the directory where the dataset's top-level folder is found.
        subset (str, optional): ``"train"`` or ``"test"``. (default: ``"train"``)
        download (bool, optional): whether to download the dataset if it is not found at
            root path. (default: ``False``)
        url (str, optional): the URL to download the dataset from. (default:
            ``"https://datashare.ed.ac.uk/bitstream/handle/10283/3038/DR-VCTK.zip"``)
    """

    def __init__(self, root: str | Path, subset: str = "train", *, download: bool = False,
                 url: str = _URL) -> None:
        if subset not in _SUPPORTED_SUBSETS:
            raise RuntimeError(f"The subset '{subset}' does not match any of the supported "
                               f"subsets: {sorted(_SUPPORTED_SUBSETS)}")
        root = Path(root).expanduser()
        self._subset = subset
        self._path = root / "DR-VCTK" / "DR-VCTK"
        self._clean_audio_dir = self._path / f"clean_{subset}set_wav_16k"
        self._noisy_audio_dir = self._path / f"device-recorded_{subset}set_wav_16k"
        self._config_filepath = self._path / "configurations" / f"{subset}_ch_log.txt"
        fetch(url, root, self._path, _CHECKSUM if url == _URL else None, download,
              archive_name="DR-VCTK.zip")
        self._config = self._load_config(self._config_filepath)
        self._filename_list = sorted(self._config)

    def _load_config(self, filepath: Path) -> dict[str, tuple[str, int]]:
        skip_rows = 2 if self._subset == "train" else 1   # the header lines
        config = {}
        with open(filepath) as handle:
            for i, line in enumerate(handle):
                if i < skip_rows or not line.strip():
                    continue
                fields = line.strip().split("\t")
                if len(fields) != 3:
                    raise ValueError(f"{filepath}:{i + 1}: expected 'file<TAB>source<TAB>"
                                     f"channel', got {line.strip()!r}")
                filename, source, channel_id = fields
                config[filename] = (source, int(channel_id))
        return config

    def __getitem__(self, n: int
                    ) -> tuple[ember.Tensor, int, ember.Tensor, int, str, str, str, int]:
        """Load the n-th sample from the dataset.

        Returns:
            (Tensor, int, Tensor, int, str, str, str, int): clean waveform, its sample rate,
            noisy (device-recorded) waveform, its sample rate, speaker ID, utterance ID,
            source, channel ID.
        """
        filename = self._filename_list[n]
        speaker_id, utterance_id = filename.split(".")[0].split("_")
        source, channel_id = self._config[filename]
        clean, clean_rate = load(self._clean_audio_dir / filename)
        noisy, noisy_rate = load(self._noisy_audio_dir / filename)
        return clean, clean_rate, noisy, noisy_rate, speaker_id, utterance_id, source, channel_id

    def __len__(self) -> int:
        return len(self._filename_list)

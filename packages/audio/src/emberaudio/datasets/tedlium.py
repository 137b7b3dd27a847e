"""TED-LIUM: English TED talks with aligned transcripts (releases 1, 2 and 3)."""

from __future__ import annotations

from pathlib import Path

import ember
from ember.utils.data import Dataset
from emberaudio._io import load
from emberaudio.datasets._common import fetch

__all__ = ["TEDLIUM"]

_RELEASE_CONFIGS = {
    "release1": {
        "folder_in_archive": "TEDLIUM_release1",
        "url": "http://www.openslr.org/resources/7/TEDLIUM_release1.tar.gz",
        "sha256": "30301975fd8c5cac4040c261c0852f57cfa8adbbad2ce78e77e4986957445f27",
        "data_path": "", "dict": "TEDLIUM.150K.dic",
    },
    "release2": {
        "folder_in_archive": "TEDLIUM_release2",
        "url": "http://www.openslr.org/resources/19/TEDLIUM_release2.tar.gz",
        "sha256": "93281b5fcaaae5c88671c9d000b443cb3c7ea3499ad12010b3934ca41a7b9c58",
        "data_path": "", "dict": "TEDLIUM.152k.dic",
    },
    "release3": {
        "folder_in_archive": "TEDLIUM_release-3",
        "url": "http://www.openslr.org/resources/51/TEDLIUM_release-3.tgz",
        "sha256": "ad1e454d14d1ad550bc2564c462d87c7a7ec83d4dc2b9210f22ab4973b9eccdb",
        "data_path": "data", "dict": "TEDLIUM.152k.dic",
    },
}
_SUBSETS = ("train", "test", "dev")


class TEDLIUM(Dataset):
    """*Tedlium* dataset (releases 1, 2 and 3).

    Args:
        root (str or Path): path to the directory where the dataset is found or downloaded.
        release (str, optional): ``"release1"``, ``"release2"`` or ``"release3"``.
            (default: ``"release1"``)
        subset (str, optional): ``"train"``, ``"dev"`` or ``"test"``; release 3's dev and
            test sets are its ``legacy`` ones. (default: ``"train"``)
        download (bool, optional): whether to download the dataset if it is not found at
            root path. (default: ``False``).
        audio_ext (str, optional): extension for audio file. (default: ``".sph"``)
    """

    def __init__(self, root: str | Path, release: str = "release1", subset: str = "train",
                 download: bool = False, audio_ext: str = ".sph") -> None:
        if release not in _RELEASE_CONFIGS:
            raise RuntimeError(f"The release {release} does not match any of the supported "
                               f"tedlium releases {list(_RELEASE_CONFIGS)}")
        subset = subset or "train"
        if subset not in _SUBSETS:
            raise RuntimeError(f"The subset {subset} does not match any of the supported "
                               f"tedlium subsets {list(_SUBSETS)}")
        config = _RELEASE_CONFIGS[release]
        self._ext_audio = audio_ext
        root = Path(root)
        top = root / config["folder_in_archive"]
        if release == "release3":
            self._path = top / config["data_path"] if subset == "train" else (
                top / "legacy" / subset)
        else:
            self._path = top / subset
        fetch(config["url"], root, self._path, config["sha256"], download)
        self._filelist = []
        for stm in sorted((self._path / "stm").glob("*.stm")):
            with open(stm) as handle:
                count = len(handle.readlines())
            self._filelist.extend((stm.stem, line) for line in range(count))
        self._dict_path = top / config["dict"]
        self._phoneme_dict = None

    def __getitem__(self, n: int) -> tuple[ember.Tensor, int, str, str, str, str]:
        """Load the n-th sample (one segment of a talk) from the dataset.

        Returns:
            (Tensor, int, str, str, str, str): waveform, sample rate, transcript, talk ID,
            speaker ID, identifier.
        """
        fileid, line = self._filelist[n]
        with open(self._path / "stm" / f"{fileid}.stm") as handle:
            row = handle.readlines()[line]
        talk_id, _, speaker_id, start_time, end_time, identifier, transcript = row.split(" ", 6)
        start, end = int(float(start_time) * 16000), int(float(end_time) * 16000)
        waveform, sample_rate = load(self._path / "sph" / f"{fileid}{self._ext_audio}",
                                     frame_offset=start, num_frames=end - start)
        return waveform, sample_rate, transcript, talk_id, speaker_id, identifier

    def __len__(self) -> int:
        return len(self._filelist)

    @property
    def phoneme_dict(self) -> dict[str, tuple[str, ...]]:
        """dict[str, tuple[str, ...]]: the phonemes of each word of the release's
        dictionary."""
        if self._phoneme_dict is None:
            self._phoneme_dict = {}
            with open(self._dict_path, encoding="utf-8") as handle:
                for line in handle:
                    content = line.strip().split()
                    if content:
                        self._phoneme_dict[content[0]] = tuple(content[1:])
        return self._phoneme_dict.copy()

"""MUSDB18-HQ: 150 full-length music tracks with their bass, drums, vocals and other stems."""

from __future__ import annotations

import os
from pathlib import Path

import ember
from ember.utils.data import Dataset
from emberaudio._io import load
from emberaudio.datasets._common import fetch

__all__ = ["MUSDB_HQ"]

_URL = "https://zenodo.org/record/3338373/files/musdb18hq.zip"
_CHECKSUM = "baac80d0483c61d74b2e5f3be75fa557eec52898339e6aa45c1fa48833c5d21d"
_EXT = ".wav"
_SAMPLE_RATE = 44100
_SOURCES = ["bass", "drums", "other", "vocals"]
# The 14 training tracks that the MUSDB18 tools hold out for validation.
_VALIDATION_SET = [
    "Actions - One Minute Smile",
    "Clara Berry And Wooldog - Waltz For My Victims",
    "Johnny Lokke - Promises & Lies",
    "Patrick Talbot - A Reason To Leave",
    "Triviul - Angelsaint",
    "Alexander Ross - Goodbye Bolero",
    "Fergessen - Nos Palpitants",
    "Leaf - Summerghost",
    "Skelpolu - Human Mistakes",
    "Young Griffo - Pennies",
    "ANiMAL - Rockshow",
    "James May - On The Line",
    "Meaxic - Take A Step",
    "Traffic Experiment - Sirens",
]


class MUSDB_HQ(Dataset):
    """*MUSDB18-HQ* dataset (Rafii et al., 2019): uncompressed music source separation.

    Args:
        root (str or Path): the directory where the dataset's top-level folder
            (``musdb18hq``) is found or downloaded.
        subset (str): ``"train"`` or ``"test"``.
        sources (list[str] or None, optional): the stems to load, from ``"bass"``,
            ``"drums"``, ``"other"``, ``"mixture"`` and ``"vocals"``. If ``None``, every
            stem except the mixture. (default: ``None``)
        split (str or None, optional): ``"train"`` or ``"validation"`` to split the
            training tracks into the usual 86/14; ``None`` keeps every track of ``subset``.
            (default: ``None``)
        download (bool, optional): whether to download the dataset if it is not found at
            root path. (default: ``False``)

    Examples::

        >>> data = emberaudio.datasets.MUSDB_HQ("data", "train", sources=["mixture", "vocals"])
        >>> stems, sample_rate, num_frames, name = data[0]  # stems: (2, channels, frames)
    """

    def __init__(self, root: str | Path, subset: str, sources: list[str] | None = None,
                 split: str | None = None, download: bool = False) -> None:
        self.sources = list(_SOURCES) if not sources else list(sources)
        self.split = split
        if subset not in ["test", "train"]:
            raise ValueError("`subset` must be one of ['test', 'train']")
        if split is not None and split not in ["train", "validation"]:
            raise ValueError("`split` must be one of ['train', 'validation']")
        unknown = [s for s in self.sources if s not in _SOURCES + ["mixture"]]
        if unknown:
            raise ValueError(f"unknown sources {unknown}; choose from "
                             f"{_SOURCES + ['mixture']}")
        root = Path(root)
        base_path = root / os.path.basename(_URL).rsplit(".", 1)[0]
        self._path = base_path / subset
        fetch(_URL, root, self._path, _CHECKSUM, download, extract_to=base_path)
        self.names = self._collect_songs()

    def _collect_songs(self) -> list[str]:
        if self.split == "validation":
            return list(_VALIDATION_SET)
        names = []
        for folder, subfolders, _ in os.walk(self._path, followlinks=True):
            folder = Path(folder)
            if folder == self._path or subfolders or folder.name.startswith("."):
                continue
            name = str(folder.relative_to(self._path))
            if self.split and name in _VALIDATION_SET:
                continue
            names.append(name)
        return sorted(names)

    def __getitem__(self, n: int) -> tuple[ember.Tensor, int, int, str]:
        """Load the n-th sample from the dataset.

        Returns:
            (Tensor, int, int, str): the stems stacked as (sources, channels, frames), the
            sample rate, the number of frames, the track name.
        """
        name = self.names[n]
        stems = []
        num_frames = None
        for source in self.sources:
            waveform, sample_rate = load(self._path / name / f"{source}{_EXT}")
            if sample_rate != _SAMPLE_RATE:
                raise ValueError(f"expected sample rate {_SAMPLE_RATE}, but got {sample_rate}")
            if num_frames is None:
                num_frames = waveform.shape[-1]
            elif waveform.shape[-1] != num_frames:
                raise ValueError("num_frames do not match across sources")
            stems.append(waveform)
        return ember.stack(stems), _SAMPLE_RATE, num_frames, name

    def __len__(self) -> int:
        return len(self.names)

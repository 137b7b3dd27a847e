"""GTZAN: 1,000 thirty-second music clips in ten genres (22,050 Hz, mono)."""

from __future__ import annotations

import os
from pathlib import Path

import ember
from ember.utils.data import Dataset
from emberaudio._io import load
from emberaudio.datasets._common import fetch

__all__ = ["GTZAN"]

URL = "http://opihi.cs.uvic.ca/sound/genres.tar.gz"
FOLDER_IN_ARCHIVE = "genres"
_CHECKSUMS = {
    "http://opihi.cs.uvic.ca/sound/genres.tar.gz":
        "24347e0223d2ba798e0a558c4c172d9d4a19c00bb7963fe055d183dadb4ef2c6",
}

gtzan_genres = ["blues", "classical", "country", "disco", "hiphop", "jazz", "metal", "pop",
                "reggae", "rock"]

# The "filtered" split of Kereliuk, Sturm and Larsen (duplicates and mislabelled clips
# removed), as used by jordipons/sklearn-audio-transfer-learning and torchaudio: per genre,
# the clip numbers as inclusive ranges.
_SPLITS = {
    "testing": {
        "blues": [(12, 28), (61, 72), (98, 99)],
        "classical": [(11, 29), (34, 41), (49, 49), (77, 79)],
        "country": [(30, 40), (43, 44), (46, 48), (50, 51), (53, 64)],
        "disco": [(1, 1), (21, 21), (58, 58), (62, 66), (69, 69), (76, 88), (91, 94),
                  (96, 97), (99, 99)],
        "hiphop": [(0, 0), (26, 27), (30, 30), (40, 40), (43, 45), (51, 54), (62, 75),
                   (99, 99)],
        "jazz": [(73, 99)],
        "metal": [(12, 15), (22, 23), (25, 33), (38, 39), (67, 67), (70, 70), (73, 75),
                  (78, 78), (83, 83), (85, 85), (87, 88)],
        "pop": [(0, 1), (13, 14), (43, 43), (63, 66), (69, 79), (82, 82), (88, 96)],
        "reggae": [(34, 40), (46, 48), (52, 53), (64, 68), (71, 71), (79, 79), (82, 84),
                   (87, 90)],
        "rock": [(10, 15), (27, 37), (39, 48), (86, 90)],
    },
    "training": {
        "blues": [(29, 49), (73, 97)],
        "classical": [(30, 33), (43, 48), (50, 67), (80, 99)],
        "country": [(19, 26), (28, 29), (65, 99)],
        "disco": [(5, 5), (15, 20), (22, 37), (39, 45), (47, 47), (49, 49), (53, 54),
                  (56, 57), (59, 59), (61, 61), (70, 70), (73, 74), (89, 89)],
        "hiphop": [(2, 25), (28, 29), (31, 38), (41, 42), (55, 61), (77, 80)],
        "jazz": [(0, 1), (11, 24), (41, 41), (47, 72)],
        "metal": [(2, 3), (5, 5), (21, 21), (24, 24), (35, 35), (46, 57), (59, 66), (69, 69),
                  (71, 72), (79, 80), (84, 84), (86, 86), (89, 99)],
        "pop": [(2, 9), (11, 12), (16, 20), (23, 29), (31, 36), (38, 42), (44, 44), (46, 46),
                (49, 50), (80, 80), (97, 99)],
        "reggae": [(0, 2), (4, 4), (6, 6), (9, 9), (11, 12), (14, 32), (42, 45), (49, 51),
                   (54, 60), (63, 63), (69, 69)],
        "rock": [(0, 9), (16, 26), (57, 70), (91, 99)],
    },
    "validation": {
        "blues": [(0, 11), (50, 60)],
        "classical": [(0, 10), (68, 76)],
        "country": [(0, 7), (9, 18), (27, 27), (41, 42), (45, 45), (49, 49)],
        "disco": [(0, 0), (2, 4), (6, 14), (46, 46), (48, 48), (52, 52), (67, 68), (72, 72),
                  (75, 75), (90, 90), (95, 95)],
        "hiphop": [(81, 98)],
        "jazz": [(2, 10), (25, 32)],
        "metal": [(0, 1), (6, 11), (16, 20), (36, 37), (68, 68), (76, 77), (81, 82)],
        "pop": [(10, 10), (53, 53), (55, 55), (58, 62), (81, 81), (83, 86)],
        "reggae": [(61, 62), (70, 70), (72, 72), (74, 74), (76, 78), (85, 85), (92, 99)],
        "rock": [(38, 38), (49, 56), (71, 85)],
    },
}


def _split(subset: str) -> list[str]:
    return [f"{genre}.{number:05d}" for genre, ranges in _SPLITS[subset].items()
            for first, last in ranges for number in range(first, last + 1)]


filtered_test = _split("testing")
filtered_train = _split("training")
filtered_valid = _split("validation")


def _is_clip(name: str) -> bool:
    genre, dot, number = name.partition(".")
    return (dot == "." and genre in gtzan_genres and len(number) == 5 and number.isdigit())


class GTZAN(Dataset):
    """*GTZAN* dataset (Tzanetakis and Cook, 2002): music genre classification.

    Note:
        The published address has not answered since 2022; ``download=True`` then fails
        with the downloader's connection error. Put a copy's ``genres`` folder under
        ``root`` instead.

    Args:
        root (str or Path): path to the directory where the dataset is found or downloaded.
        url (str, optional): the URL to download the dataset from.
            (default: ``"http://opihi.cs.uvic.ca/sound/genres.tar.gz"``)
        folder_in_archive (str, optional): the top-level directory of the dataset.
            (default: ``"genres"``)
        download (bool, optional): whether to download the dataset if it is not found at
            root path. (default: ``False``).
        subset (str or None, optional): ``"training"``, ``"validation"`` or ``"testing"``
            for the filtered split (443, 197 and 290 clips), or ``None`` for every
            ``<genre>.<5 digits>.wav`` file found under the genre folders.
            (default: ``None``)

    Examples::

        >>> data = emberaudio.datasets.GTZAN("data", subset="training")
        >>> waveform, sample_rate, label = data[0]
    """

    _ext_audio = ".wav"

    def __init__(self, root: str | Path, url: str = URL,
                 folder_in_archive: str = FOLDER_IN_ARCHIVE, download: bool = False,
                 subset: str | None = None) -> None:
        if subset is not None and subset not in _SPLITS:
            raise ValueError("When `subset` is not None, it must be one of "
                             "['training', 'validation', 'testing'].")
        root = Path(root)
        self.root = os.fspath(root)
        self.url = url
        self.folder_in_archive = folder_in_archive
        self.download = download
        self.subset = subset
        self._path = root / folder_in_archive
        fetch(url, root, self._path, _CHECKSUMS.get(url), download)
        if subset is None:
            self._walker = []
            for genre in gtzan_genres:
                folder = self._path / genre
                if not folder.is_dir():
                    continue
                for filename in sorted(os.listdir(folder)):
                    name, ext = os.path.splitext(filename)
                    if ext.lower() == self._ext_audio and _is_clip(name):
                        self._walker.append(name)
        else:
            self._walker = {"training": filtered_train, "validation": filtered_valid,
                            "testing": filtered_test}[subset]

    def __getitem__(self, n: int) -> tuple[ember.Tensor, int, str]:
        """Load the n-th sample from the dataset.

        Returns:
            (Tensor, int, str): waveform, sample rate, genre label.
        """
        fileid = self._walker[n]
        label = fileid.split(".")[0]
        waveform, sample_rate = load(self._path / label / (fileid + self._ext_audio))
        return waveform, sample_rate, label

    def __len__(self) -> int:
        return len(self._walker)

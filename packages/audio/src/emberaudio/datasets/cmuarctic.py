"""CMU ARCTIC: about 1,150 phonetically balanced English sentences per speaker."""

from __future__ import annotations

import re
from pathlib import Path

import ember
from ember.utils.data import Dataset
from emberaudio._io import load
from emberaudio.datasets._common import fetch

__all__ = ["CMUARCTIC"]

URL = "aew"
FOLDER_IN_ARCHIVE = "ARCTIC"
_BASE_URL = "http://www.festvox.org/cmu_arctic/packed/"
_CHECKSUMS = {
    "aew": "645cb33c0f0b2ce41384fdd8d3db2c3f5fc15c1e688baeb74d2e08cab18ab406",
    "ahw": "024664adeb892809d646a3efd043625b46b5bfa3e6189b3500b2d0d59dfab06c",
    "aup": "2c55bc3050caa996758869126ad10cf42e1441212111db034b3a45189c18b6fc",
    "awb": "d74a950c9739a65f7bfc4dfa6187f2730fa03de5b8eb3f2da97a51b74df64d3c",
    "axb": "dd65c3d2907d1ee52f86e44f578319159e60f4bf722a9142be01161d84e330ff",
    "bdl": "26b91aaf48b2799b2956792b4632c2f926cd0542f402b5452d5adecb60942904",
    "clb": "3f16dc3f3b97955ea22623efb33b444341013fc660677b2e170efdcc959fa7c6",
    "eey": "8a0ee4e5acbd4b2f61a4fb947c1730ab3adcc9dc50b195981d99391d29928e8a",
    "fem": "3fcff629412b57233589cdb058f730594a62c4f3a75c20de14afe06621ef45e2",
    "gka": "dc82e7967cbd5eddbed33074b0699128dbd4482b41711916d58103707e38c67f",
    "jmk": "3a37c0e1dfc91e734fdbc88b562d9e2ebca621772402cdc693bbc9b09b211d73",
    "ksp": "8029cafce8296f9bed3022c44ef1e7953332b6bf6943c14b929f468122532717",
    "ljm": "b23993765cbf2b9e7bbc3c85b6c56eaf292ac81ee4bb887b638a24d104f921a0",
    "lnh": "4faf34d71aa7112813252fb20c5433e2fdd9a9de55a00701ffcbf05f24a5991a",
    "rms": "c6dc11235629c58441c071a7ba8a2d067903dfefbaabc4056d87da35b72ecda4",
    "rxr": "1fa4271c393e5998d200e56c102ff46fcfea169aaa2148ad9e9469616fbfdd9b",
    "slp": "54345ed55e45c23d419e9a823eef427f1cc93c83a710735ec667d068c916abf1",
    "slt": "7c173297916acf3cc7fcab2713be4c60b27312316765a90934651d367226b4ea",
}
# etc/txt.done.data: ( arctic_a0001 "Author of the danger trail, Philip Steels, etc." )
_LINE = re.compile(r'^\(\s*(\S+)\s+"(.*)"\s*\)\s*$')


class CMUARCTIC(Dataset):
    """*CMU ARCTIC* dataset.

    Args:
        root (str or Path): path to the directory where the dataset is found or downloaded.
        url (str, optional): the speaker (``"aew"``, ``"ahw"``, ``"aup"``, ``"awb"``,
            ``"axb"``, ``"bdl"``, ``"clb"``, ``"eey"``, ``"fem"``, ``"gka"``, ``"jmk"``,
            ``"ksp"``, ``"ljm"``, ``"lnh"``, ``"rms"``, ``"rxr"``, ``"slp"``, ``"slt"``) or the
            URL of an archive in their layout. (default: ``"aew"``)
        folder_in_archive (str, optional): the top-level directory of the dataset.
            (default: ``"ARCTIC"``)
        download (bool, optional): whether to download the dataset if it is not found at
            root path. (default: ``False``).

    Note:
        The transcript is the whole quoted sentence of ``etc/txt.done.data``; torchaudio's
        reader cuts it at the first comma.
    """

    _file_text = "txt.done.data"
    _folder_text = "etc"
    _ext_audio = ".wav"
    _folder_audio = "wav"

    def __init__(self, root: str | Path, url: str = URL,
                 folder_in_archive: str = FOLDER_IN_ARCHIVE, download: bool = False) -> None:
        sha256 = _CHECKSUMS.get(url)
        if url in _CHECKSUMS:
            url = f"{_BASE_URL}cmu_us_{url}_arctic.tar.bz2"
        root = Path(root) / folder_in_archive
        basename = url.rsplit("/", 1)[-1].split(".")[0]
        self._path = root / basename
        fetch(url, root, self._path, sha256, download)
        self._walker = []
        with open(self._path / self._folder_text / self._file_text) as text:
            for line in text:
                if not line.strip():
                    continue
                match = _LINE.match(line)
                if match is None:
                    raise RuntimeError(f"Unexpected line in {self._file_text}: {line!r}")
                self._walker.append(match.groups())

    def __getitem__(self, n: int) -> tuple[ember.Tensor, int, str, str]:
        """Load the n-th sample from the dataset.

        Returns:
            (Tensor, int, str, str): waveform, sample rate, transcript, utterance ID (the
            part after ``arctic_``, such as ``"a0001"``).
        """
        fileid, transcript = self._walker[n]
        waveform, sample_rate = load(self._path / self._folder_audio / (fileid + self._ext_audio))
        return waveform, sample_rate, transcript, fileid.split("_")[1]

    def __len__(self) -> int:
        return len(self._walker)

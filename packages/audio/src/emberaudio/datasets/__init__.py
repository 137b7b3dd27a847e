"""emberaudio.datasets: speech and music datasets in torchaudio's names and tuple layouts.

Downloads need the ``datasets`` extra (pooch and tqdm): ``pip install 'emberaudio[datasets]'``.
"""

from emberaudio.datasets.cmuarctic import CMUARCTIC
from emberaudio.datasets.cmudict import CMUDict
from emberaudio.datasets.commonvoice import COMMONVOICE
from emberaudio.datasets.dr_vctk import DR_VCTK
from emberaudio.datasets.fluentcommands import FluentSpeechCommands
from emberaudio.datasets.gtzan import GTZAN
from emberaudio.datasets.librilight_limited import LibriLightLimited
from emberaudio.datasets.librispeech import LIBRISPEECH
from emberaudio.datasets.libritts import LIBRITTS
from emberaudio.datasets.ljspeech import LJSPEECH
from emberaudio.datasets.musdb_hq import MUSDB_HQ
from emberaudio.datasets.speechcommands import SPEECHCOMMANDS
from emberaudio.datasets.tedlium import TEDLIUM
from emberaudio.datasets.vctk import VCTK_092
from emberaudio.datasets.yesno import YESNO

__all__ = ["CMUARCTIC", "CMUDict", "COMMONVOICE", "DR_VCTK", "FluentSpeechCommands", "GTZAN",
           "LIBRISPEECH", "LIBRITTS", "LJSPEECH", "LibriLightLimited", "MUSDB_HQ",
           "SPEECHCOMMANDS", "TEDLIUM", "VCTK_092", "YESNO"]

"""emberaudio.datasets: speech and music datasets in torchaudio's names and tuple layouts.

Downloads need the ``datasets`` extra (pooch and tqdm): ``pip install 'emberaudio[datasets]'``.
"""

from emberaudio.datasets.cmudict import CMUDict
from emberaudio.datasets.librispeech import LIBRISPEECH
from emberaudio.datasets.ljspeech import LJSPEECH
from emberaudio.datasets.speechcommands import SPEECHCOMMANDS
from emberaudio.datasets.vctk import VCTK_092
from emberaudio.datasets.yesno import YESNO

__all__ = ["CMUDict", "LIBRISPEECH", "LJSPEECH", "SPEECHCOMMANDS", "VCTK_092", "YESNO"]

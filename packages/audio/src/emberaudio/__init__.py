"""emberaudio: sound for ember.

Audio loading and saving, transforms and datasets, with torchaudio's API, on ember tensors.
soundfile (libsndfile) reads and writes the files.
"""

from importlib.metadata import version as _distribution_version

import ember as _ember

__version__ = _distribution_version("emberaudio")

# emberaudio is released together with ember, from the same VERSION file: a different
# major.minor means two releases were mixed up, which would otherwise fail later and obscurely.
if _ember.__version__.split(".")[:2] != __version__.split(".")[:2]:
    raise ImportError(
        f"emberaudio {__version__} needs ember of the same major.minor version, "
        f"but ember {_ember.__version__} is installed"
    )

from emberaudio import datasets, functional, io, models, pipelines, transforms  # noqa: E402
from emberaudio._io import AudioMetaData, info, load, save  # noqa: E402

__all__ = ["AudioMetaData", "datasets", "functional", "info", "io", "load", "models", "pipelines",
           "save", "transforms"]

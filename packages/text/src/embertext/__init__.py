"""embertext: text for ember.

Tokenizers, vocabularies and text datasets, with the API PyTorch users know, on ember tensors.
"""

from importlib.metadata import version as _distribution_version

import ember as _ember

__version__ = _distribution_version("embertext")

# embertext is released together with ember, from the same VERSION file: a different
# major.minor means two releases were mixed up, which would otherwise fail later and obscurely.
if _ember.__version__.split(".")[:2] != __version__.split(".")[:2]:
    raise ImportError(
        f"embertext {__version__} needs ember of the same major.minor version, "
        f"but ember {_ember.__version__} is installed"
    )

__all__: list[str] = []

"""embertext: text for ember.

Tokenizers, vocabularies and text datasets, with the API PyTorch users know, on ember tensors.
The module paths are torchtext 0.18's: ``import embertext as torchtext`` runs torchtext code.
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

from embertext import (  # noqa: E402
    data,
    datasets,
    functional,
    models,
    nn,
    tokenizers,
    transforms,
    utils,
    vocab,
)

__all__ = ["data", "datasets", "functional", "models", "nn", "tokenizers", "transforms", "utils",
           "vocab", "disable_torchtext_deprecation_warning"]


def disable_torchtext_deprecation_warning():
    """Silence torchtext's deprecation warning, which torchtext 0.18 gives on import of its
    modules. embertext gives none: this does nothing, so that torchtext code calling it runs."""


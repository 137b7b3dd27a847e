"""embervision: images for ember.

Datasets, models and transforms for computer vision, with torchvision's API, on ember
tensors. Pillow reads and writes the images.
"""

from importlib.metadata import version as _distribution_version

import ember as _ember

__version__ = _distribution_version("embervision")

# embervision is released together with ember, from the same VERSION file: a different
# major.minor means two releases were mixed up, which would otherwise fail later and obscurely.
if _ember.__version__.split(".")[:2] != __version__.split(".")[:2]:
    raise ImportError(
        f"embervision {__version__} needs ember of the same major.minor version, "
        f"but ember {_ember.__version__} is installed"
    )

from embervision import datasets, io, models, ops, transforms, tv_tensors, utils  # noqa: E402

__all__ = ["datasets", "io", "models", "ops", "transforms", "tv_tensors", "utils"]

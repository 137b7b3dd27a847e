"""T5 in torchtext's layout (``torchtext.models.t5``): :class:`T5Conf`, :class:`T5Model`,
:class:`T5Bundle` and the pretrained bundles, and :class:`T5Transform`. The Hugging Face
layout is in :mod:`embertext.models.t5.modeling_t5`."""

from embertext.models.t5.bundler import (
    FLAN_T5_BASE,
    FLAN_T5_BASE_ENCODER,
    FLAN_T5_BASE_GENERATION,
    FLAN_T5_LARGE,
    FLAN_T5_LARGE_ENCODER,
    FLAN_T5_LARGE_GENERATION,
    FLAN_T5_XL,
    FLAN_T5_XL_ENCODER,
    FLAN_T5_XL_GENERATION,
    FLAN_T5_XXL,
    FLAN_T5_XXL_ENCODER,
    FLAN_T5_XXL_GENERATION,
    T5_3B,
    T5_3B_ENCODER,
    T5_3B_GENERATION,
    T5_11B,
    T5_11B_ENCODER,
    T5_11B_GENERATION,
    T5_BASE,
    T5_BASE_ENCODER,
    T5_BASE_GENERATION,
    T5_LARGE,
    T5_LARGE_ENCODER,
    T5_LARGE_GENERATION,
    T5_SMALL,
    T5_SMALL_ENCODER,
    T5_SMALL_GENERATION,
    T5Bundle,
)
from embertext.models.t5.model import T5Conf, T5Model
from embertext.models.t5_transform import T5Transform

__all__ = ["T5Conf", "T5Model", "T5Bundle", "T5_SMALL_ENCODER", "T5_SMALL", "T5_SMALL_GENERATION",
           "T5_BASE_ENCODER", "T5_BASE", "T5_BASE_GENERATION", "T5_LARGE_ENCODER",
           "T5_LARGE", "T5_LARGE_GENERATION", "T5_3B_ENCODER", "T5_3B",
           "T5_3B_GENERATION", "T5_11B_ENCODER", "T5_11B", "T5_11B_GENERATION",
           "FLAN_T5_BASE_ENCODER", "FLAN_T5_BASE", "FLAN_T5_BASE_GENERATION",
           "FLAN_T5_LARGE_ENCODER", "FLAN_T5_LARGE", "FLAN_T5_LARGE_GENERATION",
           "FLAN_T5_XL_ENCODER", "FLAN_T5_XL", "FLAN_T5_XL_GENERATION",
           "FLAN_T5_XXL_ENCODER", "FLAN_T5_XXL", "FLAN_T5_XXL_GENERATION", "T5Transform"]

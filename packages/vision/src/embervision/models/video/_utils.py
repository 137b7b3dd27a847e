"""The weights description shared by the video models' files."""

from __future__ import annotations

from functools import partial

from embervision.models._api import Weights
from embervision.models._meta import KINETICS400_CATEGORIES
from embervision.transforms._presets import VideoClassification


def kinetics_weights(stem: str, *, num_params: int, acc1: float, acc5: float, ops: float,
                     file_size: float, recipe: str, docs: str, min_size=(1, 1),
                     min_temporal_size: int | None = None, **preset) -> Weights:
    """Kinetics-400 weights at download.pytorch.org/models/<stem>.pth, with the
    VideoClassification preset (``preset``: its crop_size, resize_size, mean, std)."""
    meta = {"min_size": min_size, "categories": KINETICS400_CATEGORIES, "recipe": recipe,
            "_docs": docs, "num_params": num_params,
            "_metrics": {"Kinetics-400": {"acc@1": acc1, "acc@5": acc5}}, "_ops": ops,
            "_file_size": file_size}
    if min_temporal_size is not None:
        meta["min_temporal_size"] = min_temporal_size
    return Weights(url=f"https://download.pytorch.org/models/{stem}.pth",
                   transforms=partial(VideoClassification, **preset), meta=meta)


def with_weights(model, weights, progress: bool):
    """``model`` with ``weights`` loaded (strictly) when they are given."""
    if weights is not None:
        model.load_state_dict(weights.get_state_dict(progress=progress, check_hash=True))
    return model

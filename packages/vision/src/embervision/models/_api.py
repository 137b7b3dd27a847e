"""Pretrained-weights descriptions and the model registry: ``Weights``, ``WeightsEnum``,
``get_model``, ``list_models``, ``get_model_weights``, ``get_weight``."""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

import ember
from embervision._download import download_file

__all__ = [
    "Weights",
    "WeightsEnum",
    "get_model",
    "get_model_builder",
    "get_model_weights",
    "get_weight",
    "list_models",
    "load_state_dict_from_url",
    "register_model",
]


@dataclass(eq=True, frozen=True)
class Weights:
    """A set of pretrained weights: where they are, how inputs are preprocessed, and facts
    about them (``meta``: categories, number of parameters, metrics...).

    Args:
        url (str): the checkpoint's address; its name ends with the start of its sha256.
        transforms (callable): builds the preprocessing transform.
        meta (dict): the facts.
    """

    url: str
    transforms: Callable
    meta: dict[str, Any]

    def __eq__(self, other):
        return isinstance(other, Weights) and self.url == other.url and self.meta == other.meta

    def __hash__(self):
        return hash(self.url)


class WeightsEnum(Enum):
    """The base of each model's weights enum (``ResNet50_Weights``...)."""

    @classmethod
    def verify(cls, obj):
        """``obj`` as a member of this enum; accepts the member, its name or None."""
        if obj is None:
            return None
        if isinstance(obj, str):
            name = obj.replace(cls.__name__ + ".", "")
            try:
                return cls[name]
            except KeyError:
                raise ValueError(f"{obj!r} is not a member of {cls.__name__}: choose from "
                                 f"{[m.name for m in cls]}") from None
        if not isinstance(obj, cls):
            raise TypeError(
                f"Invalid Weight class provided; expected {cls.__name__} but received "
                f"{obj.__class__.__name__}."
            )
        return obj

    def get_state_dict(self, *args, **kwargs):
        """Downloads (once, then from the cache) and loads the checkpoint."""
        return load_state_dict_from_url(self.url, *args, **kwargs)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}.{self._name_}"

    @property
    def url(self):
        return self.value.url

    @property
    def transforms(self):
        return self.value.transforms

    @property
    def meta(self):
        return self.value.meta


def _hub_dir() -> str:
    home = os.environ.get("EMBER_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "ember")
    return os.path.join(home, "hub")


def load_state_dict_from_url(url: str, model_dir: str | None = None, map_location=None,
                             progress: bool = True, check_hash: bool = True,
                             file_name: str | None = None, weights_only: bool = True):
    """Loads a checkpoint from ``model_dir`` (``$EMBER_HOME/hub/checkpoints``), downloading it
    there first if it is missing.

    With ``check_hash``, the start of the file's sha256 must equal the part of its name after
    the last ``-`` (``resnet18-f37072fd.pth``); a file that fails is deleted, never loaded.
    """
    model_dir = model_dir or os.path.join(_hub_dir(), "checkpoints")
    file_name = file_name or os.path.basename(url.split("?")[0])
    path = os.path.join(model_dir, file_name)
    prefix = None
    stem = os.path.splitext(file_name)[0]
    if check_hash and "-" in stem:
        prefix = stem.rsplit("-", 1)[1]
    if not os.path.exists(path):
        try:
            download_file(url, path, hash_value=prefix, algorithm="sha256", hash_prefix=True,
                          progress=progress)
        except OSError as error:
            raise RuntimeError(
                f"Could not download {url} ({error}). Offline, put the file at {path}."
            ) from error
    return ember.load(path, map_location=map_location, weights_only=weights_only)


BUILTIN_MODELS: dict[str, Callable] = {}


def register_model(name: str | None = None):
    """Decorator that registers a model builder under ``name`` (its function name by default)."""

    def wrapper(fn):
        key = name if name is not None else fn.__name__
        if key in BUILTIN_MODELS:
            raise ValueError(f"An entry is already registered under the name '{key}'.")
        BUILTIN_MODELS[key] = fn
        return fn

    return wrapper


def list_models(module=None, include=None, exclude=None) -> list[str]:
    """The registered model names, sorted; ``module`` restricts them to one module
    (``embervision.models``), ``include``/``exclude`` are Unix wildcard patterns."""
    names = [k for k, v in BUILTIN_MODELS.items()
             if module is None or v.__module__.rsplit(".", 1)[0] == module.__name__
             or v.__module__ == module.__name__]
    if include:
        include = [include] if isinstance(include, str) else include
        names = [n for n in names if any(fnmatch.fnmatch(n, p) for p in include)]
    if exclude:
        exclude = [exclude] if isinstance(exclude, str) else exclude
        names = [n for n in names if not any(fnmatch.fnmatch(n, p) for p in exclude)]
    return sorted(names)


def get_model_builder(name: str) -> Callable:
    """The builder function registered under ``name``."""
    name = name.lower()
    try:
        return BUILTIN_MODELS[name]
    except KeyError:
        raise ValueError(f"Unknown model {name}") from None


def get_model(name: str, **config: Any):
    """Builds the model registered under ``name`` with ``config`` (``weights=...`` etc.)."""
    return get_model_builder(name)(**config)


def get_model_weights(name) -> type[WeightsEnum]:
    """The weights enum of a model, from its name or its builder."""
    fn = get_model_builder(name) if isinstance(name, str) else name
    ann = getattr(fn, "_weights_enum", None)
    if ann is None:
        raise ValueError(f"The model {name} has no weights enum")
    return ann


def get_weight(name: str) -> WeightsEnum:
    """A weights member from its full name, e.g. ``"ResNet50_Weights.IMAGENET1K_V2"``."""
    try:
        enum_name, value_name = name.split(".")
    except ValueError:
        raise ValueError(f"Invalid weight name provided: '{name}'.") from None
    for fn in BUILTIN_MODELS.values():
        enum = getattr(fn, "_weights_enum", None)
        if enum is not None and enum.__name__ == enum_name:
            return enum[value_name]
    raise ValueError(
        f"The weight enum '{enum_name}' for the specific method couldn't be retrieved."
    )


def weights_of(enum: type[WeightsEnum]):
    """Decorator recording the weights enum of a builder (for get_model_weights)."""

    def wrapper(fn):
        fn._weights_enum = enum
        return fn

    return wrapper


def classification_weights(stem: str, num_params: int, recipe: str, acc1: float, acc5: float,
                           ops: float, file_size: float, min_size=(1, 1), categories="imagenet",
                           license: str | None = None, **preset) -> Weights:
    """ImageNet-1K classification weights at download.pytorch.org/models/<stem>.pth, with the
    ImageClassification preset (``crop_size=224`` unless given); ``license`` where the weights
    have their own (SWAG)."""
    from functools import partial

    from embervision.models._meta import IMAGENET_CATEGORIES
    from embervision.transforms._presets import ImageClassification

    preset.setdefault("crop_size", 224)
    meta = {"min_size": min_size,
            "categories": IMAGENET_CATEGORIES if categories == "imagenet" else categories,
            "num_params": num_params,
            "recipe": recipe, "_metrics": {"ImageNet-1K": {"acc@1": acc1, "acc@5": acc5}},
            "_ops": ops, "_file_size": file_size}
    if license is not None:
        meta["license"] = license
    return Weights(url=f"https://download.pytorch.org/models/{stem}.pth",
                   transforms=partial(ImageClassification, **preset), meta=meta)


def make_builder(name: str, enum, build, doc: str):
    """A keyword-only builder ``name(*, weights=None, progress=True, **kwargs)`` that checks
    ``weights`` against ``enum``, calls ``build(weights, progress, **kwargs)`` and is
    registered under ``name``."""

    def builder(*, weights=None, progress: bool = True, **kwargs):
        weights = enum.verify(weights)
        if weights is not None and weights.meta["categories"] is not None:
            ovewrite_named_param(kwargs, "num_classes", len(weights.meta["categories"]))
        return build(weights, progress, **kwargs)

    builder.__name__ = builder.__qualname__ = name
    builder.__module__ = build.__module__  # list_models(module=...) goes by it
    builder.__doc__ = (
        f"{doc}\n\n    Args:\n"
        f"        weights (:class:`{enum.__name__}`, optional): pretrained weights; None for\n"
        "            random initialization.\n"
        "        progress (bool): show a download progress bar. Default: True.\n"
        "        **kwargs: passed to the model class.\n"
    )
    return register_model(name)(weights_of(enum)(builder))


def ovewrite_named_param(kwargs: dict, param: str, new_value) -> None:
    if param in kwargs:
        if kwargs[param] != new_value:
            raise ValueError(
                f"The parameter '{param}' expected value {new_value} but got {kwargs[param]} "
                "instead."
            )
    else:
        kwargs[param] = new_value

"""Where the pipelines' files come from and how they are loaded: downloads through pooch
(with tqdm's progress bar and an optional SHA-256 check) into ember's hub cache, and
checkpoints read with ember's safe loader (``weights_only=True``: tensors and plain
containers only, never arbitrary objects)."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import ember
from emberaudio.datasets.utils import download_url

__all__: list[str] = []

# torchaudio's files live under this address; ``_download_asset(key)`` fetches
# f"{_ASSET_ROOT}/{key}" (torchaudio.utils.download_asset's layout).
_ASSET_ROOT = "https://download.pytorch.org/torchaudio"


def _cache_dir(*parts: str) -> Path:
    import ember.hub

    return Path(ember.hub.get_dir(), *parts)


def _download_asset(key: str, sha256: str | None = None, progress: bool = True) -> Path:
    """The local copy of ``{_ASSET_ROOT}/{key}``, kept at ``<hub dir>/torchaudio/{key}``;
    downloaded the first time (and checked against ``sha256`` when given)."""
    path = _cache_dir("torchaudio", *key.split("/"))
    if path.is_file():
        return path
    return download_url(f"{_ASSET_ROOT}/{key}", path.parent, path.name, sha256, progress)


def _download_checkpoint(url: str, dl_kwargs: dict | None = None) -> Path:
    """The local copy of ``url`` in ``<hub dir>/checkpoints`` (torch.hub's layout), as
    ``load_state_dict_from_url`` keeps it.

    ``dl_kwargs`` may hold ``model_dir``, ``file_name``, ``progress``, ``sha256`` (the
    file's full SHA-256, checked by pooch) and ``check_hash`` (torch.hub's convention: the
    hex digits after the last ``-`` of the file name start its SHA-256)."""
    dl_kwargs = dict(dl_kwargs or {})
    unknown = set(dl_kwargs) - {"model_dir", "file_name", "progress", "sha256", "check_hash"}
    if unknown:
        raise TypeError(f"unexpected download arguments {sorted(unknown)}")
    folder = Path(dl_kwargs.get("model_dir") or _cache_dir("checkpoints"))
    name = dl_kwargs.get("file_name") or os.path.basename(url.split("?")[0])
    path = folder / name
    if path.is_file():
        return path
    path = download_url(url, folder, name, dl_kwargs.get("sha256"),
                        dl_kwargs.get("progress", True))
    prefix = re.search(r"-([a-f0-9]+)\.", name) if dl_kwargs.get("check_hash") else None
    if prefix is not None:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if not digest.startswith(prefix.group(1)):
            path.unlink()
            raise RuntimeError(f'invalid hash value of {name} (expected "{prefix.group(1)}", '
                               f'got "{digest}")')
    return path


def _load_state_dict(path: str | os.PathLike) -> dict:
    """A checkpoint (a torch pickle, as torchaudio publishes them) read safely."""
    state_dict = ember.load(path, map_location="cpu", weights_only=True)
    if not isinstance(state_dict, dict):
        raise RuntimeError(f"{path} does not hold a state dict (found "
                           f"{type(state_dict).__name__})")
    return state_dict


def _pretrained_model(model, key: str):
    """``model`` with the weights of the asset ``key`` (downloaded once into
    ``<hub dir>/torchaudio/{key}``), in eval mode."""
    model.load_state_dict(_load_state_dict(_download_asset(key)))
    return model.eval()

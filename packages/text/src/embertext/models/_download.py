"""The checkpoint download of torchtext's model bundles (T5Bundle, RobertaBundle)."""

import logging
import os

import ember
from ember import hub

logger = logging.getLogger("embertext.models")

_TEXT_BUCKET = "https://download.pytorch.org/models/text/"


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=True):
    """torchtext's checkpoint download: ``url`` into ``model_dir``
    (``<hub dir>/checkpoints``) unless it is there, then loaded; a local path is loaded as
    it is. Offline, the error says where to put the file."""
    if os.path.exists(url):
        return ember.load(url, map_location=map_location, weights_only=weights_only)
    if model_dir is None:
        model_dir = os.path.join(hub.get_dir(), "checkpoints")
    try:
        return hub.load_state_dict_from_url(url, model_dir=model_dir, map_location=map_location,
                                            progress=progress, check_hash=check_hash,
                                            file_name=file_name, weights_only=weights_only)
    except OSError as error:
        name = file_name or os.path.basename(url.split("?")[0])
        raise RuntimeError(f"Could not download {url} ({error}). Offline, put the file at "
                           f"{os.path.join(model_dir, name)}.") from error


def cached_file(url, model_dir=None, progress=True, file_name=None):
    """The local path of the file at ``url`` (a local path is returned as it is), downloaded
    into ``model_dir`` (``<hub dir>/checkpoints``) the first time."""
    if os.path.exists(url):
        return url
    if model_dir is None:
        model_dir = os.path.join(hub.get_dir(), "checkpoints")
    path = os.path.join(model_dir, file_name or os.path.basename(url.split("?")[0]))
    if not os.path.exists(path):
        os.makedirs(model_dir, exist_ok=True)
        try:
            hub.download_url_to_file(url, path, progress=progress)
        except OSError as error:
            raise RuntimeError(f"Could not download {url} ({error}). Offline, put the file at "
                               f"{path}.") from error
    return path


def check_weights_request(path, load_weights, freeze, what):
    """torchtext's checks of ``get_model``: weights asked for where the bundle has none, and
    ``what`` (the model or the encoder) frozen without pretrained weights."""
    if load_weights and path is None:
        raise AssertionError("load_weights cannot be True. The pre-trained model weights are "
                             "not available for the current object")
    if freeze and (not load_weights or not path):
        logger.warning(f"The {what} is not loaded with pre-trained weights. Setting "
                       f"freeze_{what} to True will hinder {what} from learning appropriate "
                       "weights.")

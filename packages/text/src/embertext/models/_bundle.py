"""What torchtext's model bundles (``T5Bundle``, ``RobertaBundle``) share: the checks of
``get_model`` and reading a ``checkpoint`` given as a state dict, a URL or a path."""

import os

from embertext._download_hooks import load_state_dict_from_url


def check_pretrained(path, load_weights, freeze, part, logger):
    """torchtext's checks before building a bundle's model: weights asked for but the bundle
    has none (AssertionError), or frozen ``part`` (``"model"``, ``"encoder"``) without them
    (a warning)."""
    if load_weights and path is None:
        raise AssertionError("load_weights cannot be True. The pre-trained model weights are "
                             "not available for the current object")
    if freeze and (not load_weights or not path):
        logger.warning(f"The {part} is not loaded with pre-trained weights. Setting "
                       f"freeze_{part} to True will hinder {part} from learning appropriate "
                       "weights.")


def read_checkpoint(checkpoint, dl_kwargs=None):
    """A new dict of the checkpoint's tensors: ``checkpoint`` itself (a dict) or what its URL
    or path holds (downloaded the first time, with ``dl_kwargs``)."""
    if isinstance(checkpoint, dict):
        return dict(checkpoint)
    if isinstance(checkpoint, (str, os.PathLike)):
        return load_state_dict_from_url(os.fspath(checkpoint), **(dl_kwargs or {}))
    raise TypeError("checkpoint must be of type `str` or `Dict[str, torch.Tensor]` but got "
                    f"{type(checkpoint)}")

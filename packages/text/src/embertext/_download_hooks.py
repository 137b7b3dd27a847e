"""torchtext's download of checkpoints and vocabularies (``torchtext._download_hooks``),
through :func:`ember.hub.load_state_dict_from_url` and the safe loader.

Files are downloaded once into ember's hub cache (``<ember.hub.get_dir()>/checkpoints``, where
``torch.hub`` keeps torchtext's). Besides tensors, the files may hold torchtext vocabularies
(``xlmr.vocab.pt``, ``roberta.vocab.pt``: a pickled ``torchtext.vocab.Vocab``): they load as
:class:`embertext.vocab.Vocab` with ``weights_only=True``, their tokens read as plain data and
nothing of torchtext imported or run (NOTE [ torchtext vocabularies in the safe loader ])."""

import os

import ember
from ember import hub
from embertext.utils import _offline_error
from embertext.vocab import Vocab
from embertext.vocab.vocab import _VocabTable

__all__ = ["load_state_dict_from_url"]

# where torchtext's pretrained files are (``torchtext._TEXT_BUCKET``)
_TEXT_BUCKET = "https://download.pytorch.org/models/text/"

# NOTE [ torchtext vocabularies in the safe loader ]
# torch.save(vocab) pickles a torchtext.vocab.vocab.Vocab (an nn.Module: its __dict__ is the
# module's, with the C++ vocabulary as its attribute "vocab"), a torchtext._torchtext.Vocab
# whose state is (version, [default index] or [], tokens, tensors). The two classes below stand
# in for those names in the allow-list of ember.load: BUILD hands them their state, from which
# they keep the tokens and the default index only. torchtext 0.18 reads any version but
# "0.0.1" (whose integers were the unknown token's index) this way, and refuses "0.0.1".


class _PickledVocabTable:
    """torchtext._torchtext.Vocab as the safe loader builds it."""

    def __setstate__(self, state):
        if not (isinstance(state, tuple) and len(state) == 4):
            raise RuntimeError("Expected a torchtext vocabulary state (version, integers, "
                               f"tokens, tensors), got {type(state).__name__}")
        version, integers, tokens, _ = state
        if version == "0.0.1":
            raise RuntimeError(f"Found unexpected version for serialized Vocab: {version}")
        self.table = _VocabTable(tokens, integers[0] if integers else None)


class _PickledVocab:
    """torchtext.vocab.vocab.Vocab as the safe loader builds it."""

    def __setstate__(self, state):
        table = state.get("vocab") if isinstance(state, dict) else None
        if not isinstance(table, _PickledVocabTable):
            raise RuntimeError("The file's torchtext Vocab holds no torchtext vocabulary")
        self.table = table.table


_TORCHTEXT_VOCAB = [(_PickledVocab, "torchtext.vocab.vocab.Vocab"),
                    (_PickledVocabTable, "torchtext._torchtext.Vocab")]


def _as_vocab(obj):
    return Vocab(obj.table) if isinstance(obj, _PickledVocab) else obj


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=True):
    r"""torchtext's download of a checkpoint or a vocabulary: ``url`` into ``model_dir``
    (``<hub dir>/checkpoints``) unless it is there, then loaded; a local path is loaded as
    it is. A pickled torchtext vocabulary is returned as an :class:`embertext.vocab.Vocab`.

    Args:
        url (str): the file's URL or path.
        model_dir (str, optional): the download folder.
        map_location: as in :func:`ember.load`.
        progress (bool): show a progress bar while downloading.
        check_hash (bool): check the SHA-256 prefix in the file's name.
        file_name (str, optional): the name to keep it under.
        weights_only (bool): the safe loader (the default here; torchtext's is False).

    Raises:
        RuntimeError: offline, saying where to put the file.
    """
    with ember.serialization.safe_globals(_TORCHTEXT_VOCAB):
        if os.path.exists(url):
            return _as_vocab(ember.load(url, map_location=map_location,
                                        weights_only=weights_only))
        if model_dir is None:
            model_dir = os.path.join(hub.get_dir(), "checkpoints")
        try:
            obj = hub.load_state_dict_from_url(url, model_dir=model_dir,
                                               map_location=map_location, progress=progress,
                                               check_hash=check_hash, file_name=file_name,
                                               weights_only=weights_only)
        except OSError as error:
            raise _offline_error(url, error, model_dir, file_name) from error
    return _as_vocab(obj)

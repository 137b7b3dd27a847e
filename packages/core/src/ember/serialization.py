"""Saving and loading: ``ember.save`` and ``ember.load``, in PyTorch's checkpoint format.

Files written by ``ember.save`` load with ``torch.load`` (``weights_only=True``) and files
written by ``torch.save`` load with ``ember.load``, without PyTorch installed. Loading is safe
by default: ``weights_only=True`` builds tensors, storages and plain containers only, and
refuses any other object a file names (see :func:`add_safe_globals`). Saving to a path is
atomic: the file appears whole or not at all.

safetensors files: :mod:`ember.utils.safetensors`.
"""

import os
import pickle

from ember._serialization._format import LoadedStorage
from ember._serialization._format import restorer as _restorer
from ember._serialization._load import LoadOptions as _LoadOptions
from ember._serialization._load import load_legacy as _load_legacy
from ember._serialization._load import load_zip as _load_zip
from ember._serialization._options import (
    LoadEndianness,
    get_default_load_endianness,
    set_default_load_endianness,
)
from ember._serialization._options import (
    resolve_weights_only as _resolve_weights_only,
)
from ember._serialization._save import atomic_write as _atomic_write
from ember._serialization._save import write_checkpoint as _write_checkpoint
from ember._serialization._unpickler import (
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    safe_globals,
)
from ember._serialization._unpickler import (
    unsafe_globals_in_pickle as _unsafe_globals_in_pickle,
)
from ember._serialization._zip import CorruptFileError as _CorruptFileError
from ember._serialization._zip import ZipReader as _ZipReader
from ember._serialization._zip import buffered as _buffered

__all__ = [
    "save", "load", "add_safe_globals", "clear_safe_globals", "get_safe_globals",
    "safe_globals", "get_unsafe_globals_in_checkpoint", "LoadedStorage", "LoadEndianness",
    "get_default_load_endianness", "set_default_load_endianness",
]

DEFAULT_PROTOCOL = 2


def _is_path(f) -> bool:
    return isinstance(f, (str, bytes, os.PathLike))


def save(obj, f, pickle_module=pickle, pickle_protocol: int = DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Save an object to a file, in PyTorch's checkpoint format.

    Args:
        obj: what to save: a tensor, a state dict, an optimizer state dict, or any nesting of
            dicts (incl. ``OrderedDict``), lists, tuples, sets, numbers, strings, bytes, None,
            dtypes, devices and tensors. Other picklable objects can be saved too, but then
            only ``load(..., weights_only=False)`` reads them back.
        f: a path (``str`` or ``os.PathLike``) or a writable binary file object. A path is
            written atomically: a temporary file in the same directory is written, flushed,
            fsync'ed and renamed over ``f``, so ``f`` is never left half-written.
        pickle_module: only the standard :mod:`pickle` (the default) or ``None`` (accepted
            for PyTorch compatibility).
        pickle_protocol: the pickle protocol (2 by default, as PyTorch; ``torch.load``'s
            weights-only loader reads only protocol 2).
        _disable_byteorder_record: leave out the ``byteorder`` record (as PyTorch; a file
            without it loads as little-endian).

    Tensors that view one another (slices, transposes of one tensor) are saved against one
    storage and share memory again after loading. As in PyTorch, saving a view saves its
    whole storage: ``clone()`` it first to save only the view's elements.

    Example::

        >>> ember.save(model.state_dict(), "model.pt")
        >>> torch.load("model.pt")          # in PyTorch, weights_only=True
    """
    if pickle_module is not None and pickle_module is not pickle:
        raise ValueError("ember.save writes with its own pickler; pickle_module must be None "
                         "or the standard pickle module")
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("ember.save writes only PyTorch's zip-based format "
                                  "(_use_new_zipfile_serialization=True)")
    if not isinstance(pickle_protocol, int) or not 2 <= pickle_protocol <= \
            pickle.HIGHEST_PROTOCOL:
        raise ValueError(f"pickle_protocol must be an int from 2 to {pickle.HIGHEST_PROTOCOL}, "
                         f"got {pickle_protocol!r}")
    if _is_path(f):
        _atomic_write(f, lambda stream: _write_checkpoint(obj, stream, pickle_protocol,
                                                        not _disable_byteorder_record))
    elif hasattr(f, "write"):
        _write_checkpoint(obj, f, pickle_protocol, not _disable_byteorder_record)
        if hasattr(f, "flush"):
            f.flush()
    else:
        raise TypeError(f"save(): f must be a path or a writable binary file object, got "
                        f"{type(f).__name__}")


def load(f, map_location=None, pickle_module=None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args):
    """Load an object saved with :func:`ember.save` or ``torch.save``.

    Args:
        f: a path (``str`` or ``os.PathLike``) or a readable binary file object.
        map_location: where tensors go, as in ``torch.load``: ``None`` (where they were
            saved: ``"cpu"`` or ``"cuda:N"``), a device string or :class:`ember.device` (all
            tensors there), a dict mapping saved locations to new ones (``{"cuda:1":
            "cpu"}``), or a callable ``(storage, location) -> storage`` (return
            ``storage``, ``storage.cpu()``, ``storage.cuda(i)``, or None for the default).
        pickle_module: with ``weights_only=False`` only, a module whose ``Unpickler`` to use.
        weights_only: if True (the default, None), only tensors, storages, plain containers
            (dict, OrderedDict, list, tuple, set), numbers, strings, bytes, dtypes, devices
            and sizes are built; any other object named in the file raises
            ``pickle.UnpicklingError`` saying how to allow it. Set it to False only for files
            you trust: unpickling can run arbitrary code. None means True, or False when a
            ``pickle_module`` is given. The environment variables
            ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` / ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` (and their
            ``EMBER_`` forms) override it as in PyTorch (NOTE [ Forcing weights_only from the
            environment ] in ``ember._serialization._options``). NumPy arrays, scalars and
            dtypes load once allowed, as in PyTorch: ``add_safe_globals([np.ndarray, np.dtype,
            np._core.multiarray._reconstruct, np._core.multiarray.scalar,
            type(np.dtype(np.float32))])``.
        mmap: map the tensors' bytes from the file instead of reading them (``f`` must be a
            path of a zip-format checkpoint); pages are read when first touched, and writes
            to the tensors stay private to this process (copy-on-write).
        pickle_load_args: ``encoding`` (``"utf-8"`` by default; ``"latin1"`` or ``"bytes"``
            for Python 2 pickles) and, with ``weights_only=False``, the unpickler's other
            keyword arguments.

    Files in PyTorch's legacy format (before 1.6, or ``_use_new_zipfile_serialization=False``)
    load too, except the tar-based format of PyTorch < 0.4. A path ending in
    ``.safetensors`` is read with :func:`ember.utils.safetensors.load_file`.

    Example::

        >>> state = ember.load("resnet18.pth", map_location="cpu")
        >>> model.load_state_dict(state)
    """
    weights_only = _resolve_weights_only(weights_only, pickle_module)
    mmap = bool(mmap)
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    pickle_load_args.setdefault("encoding", "utf-8")
    if weights_only and set(pickle_load_args) - {"encoding", "errors"}:
        raise TypeError(f"load() got unexpected arguments {sorted(pickle_load_args)} (only "
                        "'encoding' and 'errors' work with weights_only=True)")
    options = _LoadOptions(_restorer(map_location), bool(weights_only), pickle_module,
                          pickle_load_args)
    if _is_path(f):
        path = os.fsdecode(os.fspath(f))
        if path.endswith(".safetensors"):
            return _load_safetensors(path, map_location)
        with open(path, "rb") as stream:
            return _load_stream(stream, repr(path), options, path if mmap else None)
    if not hasattr(f, "read"):
        raise TypeError(f"load(): f must be a path or a readable binary file object, got "
                        f"{type(f).__name__}")
    if mmap:
        raise ValueError("f must be a file path in order to use the mmap argument")
    return _load_stream(_buffered(f), _describe(f), options, None)


def _describe(f) -> str:
    name = getattr(f, "name", None)
    return repr(name) if isinstance(name, str) else f"the {type(f).__name__} given to load()"


def _load_stream(stream, name: str, options: _LoadOptions, mmap_path):
    start = stream.tell()
    head = stream.read(512)
    stream.seek(start)
    if not head:
        raise _CorruptFileError(f"{name} is empty: not a checkpoint")
    if head[:4] == b"PK\x03\x04":
        return _load_zip(stream, name, options, mmap_path)
    if mmap_path is not None:
        raise RuntimeError(
            f"mmap can only be used with checkpoints in the zip format; {name} is in PyTorch's "
            "legacy format: load it without mmap, and ember.save it again to map it")
    if len(head) > 262 and head[257:262] == b"ustar":
        raise RuntimeError(f"{name} is in the tar-based format of PyTorch < 0.4, which ember "
                           "does not read: load and re-save it with PyTorch")
    return _load_legacy(stream, name, options)


def _load_safetensors(path: str, map_location):
    from ember.utils.safetensors import load_file

    if map_location is None:
        return load_file(path)
    if isinstance(map_location, (dict,)) or callable(map_location):
        raise RuntimeError("Loading safetensors file with dict or callable map_location is not "
                           "supported. Use a device string or ember.device instead.")
    return load_file(path, device=str(map_location))


def get_unsafe_globals_in_checkpoint(f) -> list[str]:
    """The globals (``"module.name"``) in checkpoint ``f`` that ``weights_only=True`` would
    refuse, found by reading the pickle's opcodes without building anything.

    Example::

        >>> ember.serialization.get_unsafe_globals_in_checkpoint("ckpt.pt")
        ['mymodule.MyConfig']
    """
    if _is_path(f):
        with open(f, "rb") as stream:
            return _unsafe_globals(stream, repr(os.fsdecode(os.fspath(f))))
    return _unsafe_globals(_buffered(f), _describe(f))


def _unsafe_globals(stream, name: str) -> list[str]:
    start = stream.tell()
    head = stream.read(4)
    stream.seek(start)
    try:
        if head == b"PK\x03\x04":
            return _unsafe_globals_in_pickle(_ZipReader(stream, name).read_record("data.pkl"))
        # legacy format: magic number, version, system info, the object, the storage keys
        found: list[str] = []
        for _ in range(5):
            found += [g for g in _unsafe_globals_in_pickle(stream) if g not in found]
        return found
    except ValueError as e:
        raise _CorruptFileError(f"{name}: corrupt pickle data ({e})") from None

"""Unpicklers: the weights-only one (safe by default) and the unrestricted one.

# NOTE [ Weights-only unpickling ]
# Restricting ``find_class`` of the standard unpickler is not enough to make loading safe: a
# pickle can also call methods of allowed objects through BUILD (``__setstate__``) and the
# extension registry. Like PyTorch, we therefore interpret the pickle opcodes ourselves:
# globals are looked up only in an allow-list (never imported), REDUCE and NEWOBJ may only call
# allow-listed callables, BUILD only updates plain objects of allow-listed user types, and
# persistent ids may only name storages. Everything a file can make is a tensor, a storage,
# a container or a number/string, unless the user allowed more (``add_safe_globals``).
"""

from __future__ import annotations

import _compat_pickle
import codecs
import functools
import pickle
import pickletools
import struct
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ember._serialization._format import make_parameter, torch_globals

# ---------------------------------------------------------------------------
# the user's allow-list

_user_safe_globals: list = []

# never loaded by the weights-only unpickler, even when allow-listed
_BLOCKED_MODULES = {"os", "posix", "nt", "sys", "subprocess", "pty", "shutil", "socket"}
_BLOCKED_BUILTINS = {"eval", "exec", "compile", "__import__", "getattr", "setattr", "delattr",
                     "open", "input", "breakpoint", "globals", "locals", "vars", "exit", "quit",
                     "help"}


def add_safe_globals(safe_globals: list) -> None:
    """Allow ``ember.load(weights_only=True)`` to build these classes and call these functions.

    Each entry is the object itself (found in a file as ``obj.__module__ + "." +
    obj.__qualname__``) or a tuple ``(obj, "module.name")`` giving the name it has in the file.

    Example::

        >>> ember.serialization.add_safe_globals([MyConfig])
        >>> ckpt = ember.load("ckpt.pt")   # may now contain MyConfig instances
    """
    for entry in safe_globals:
        _name_of(entry)  # validate
        if entry not in _user_safe_globals:
            _user_safe_globals.append(entry)


def get_safe_globals() -> list:
    """The user's allow-list (what :func:`add_safe_globals` added)."""
    return list(_user_safe_globals)


def clear_safe_globals() -> None:
    """Empty the user's allow-list."""
    _user_safe_globals.clear()


class safe_globals:
    """A context manager that allow-lists globals for weights-only loading inside its block.

    Example::

        >>> with ember.serialization.safe_globals([MyConfig]):
        ...     ckpt = ember.load("ckpt.pt")
    """

    def __init__(self, safe_globals: list) -> None:
        self.safe_globals = list(safe_globals)
        self._added: list = []

    def __enter__(self):
        self._added = [g for g in self.safe_globals if g not in _user_safe_globals]
        add_safe_globals(self._added)
        return self

    def __exit__(self, *exc) -> None:
        for g in self._added:
            if g in _user_safe_globals:
                _user_safe_globals.remove(g)


def _name_of(entry) -> tuple[str, Any]:
    if isinstance(entry, tuple):
        if len(entry) != 2 or not isinstance(entry[1], str):
            raise TypeError("a safe global is an object or a tuple (object, 'module.name'), "
                            f"got {entry!r}")
        return entry[1], entry[0]
    module = getattr(entry, "__module__", None)
    name = getattr(entry, "__qualname__", None) or getattr(entry, "__name__", None)
    if module is None or name is None:
        raise TypeError(f"{entry!r} has no __module__/__qualname__: pass (obj, 'module.name')")
    return f"{module}.{name}", entry


def _user_globals() -> dict[str, Any]:
    return dict(_name_of(entry) for entry in _user_safe_globals)


@functools.cache
def _builtin_globals() -> dict[str, Any]:
    return torch_globals()


def _compat_name(module: str, name: str) -> tuple[str, str]:
    """Python 2 names in protocol-2 pickles (``__builtin__.set``) as Python 3 ones."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    return _compat_pickle.IMPORT_MAPPING.get(module, module), name


def _refusal(full: str, module: str) -> pickle.UnpicklingError:
    short = full.rsplit(".", 1)[-1]
    if module in _BLOCKED_MODULES or (module == "builtins" and short in _BLOCKED_BUILTINS):
        return pickle.UnpicklingError(
            f"Weights only load failed: the file refers to {full}, whose module {module} is "
            "blocked in weights-only loading (it can run commands). Load it with "
            "ember.load(..., weights_only=False) only if you trust its source.")
    return pickle.UnpicklingError(
        f"Weights only load failed: GLOBAL {full} was not an allowed global by default. "
        "ember.load(weights_only=True) only builds tensors, storages and plain containers. If "
        "you trust the source of this file, either load it with "
        "ember.load(..., weights_only=False) (this can run arbitrary code), or allow this "
        f"global with ember.serialization.add_safe_globals([{short}]) or inside "
        f"`with ember.serialization.safe_globals([{short}]):`.")


# ---------------------------------------------------------------------------
# the weights-only unpickler

class WeightsUnpickler:
    """Unpickle ``file`` (read/readline) building only allow-listed objects.

    ``persistent_load(pid)`` turns ``('storage', ...)`` persistent ids into storages.
    """

    def __init__(self, file, persistent_load: Callable, *, encoding: str = "utf-8",
                 errors: str = "strict") -> None:
        self._read = file.read
        self._readline = file.readline
        self._persistent_load = persistent_load
        self._encoding = encoding
        self._errors = errors
        self._globals = dict(_builtin_globals())
        user = _user_globals()
        for full, obj in user.items():
            module = full.rsplit(".", 1)[0]
            if module in _BLOCKED_MODULES or (module == "builtins" and
                                               full.rsplit(".", 1)[1] in _BLOCKED_BUILTINS):
                continue
            self._globals.setdefault(full, obj)
        # torch.Tensor (ember.Tensor) names a type in _rebuild_from_type_v2; it is not called
        self._callables = {id(v): v for v in self._globals.values()
                           if callable(v) and v is not _builtin_globals()["torch.Tensor"]}
        self._user_types = {id(v): v for v in user.values() if isinstance(v, type)}
        self._proto = 0

    # -- reading ----------------------------------------------------------
    def _take(self, n: int) -> bytes:
        data = self._read(n)
        if len(data) != n:
            raise pickle.UnpicklingError("pickle data was truncated")
        return data

    def _line(self) -> bytes:
        line = self._readline()
        if not line.endswith(b"\n"):
            raise pickle.UnpicklingError("pickle data was truncated")
        return line[:-1]

    def _pop_mark(self) -> list:
        items = self._stack
        self._stack = self._metastack.pop()
        return items

    def _global(self, module: str, name: str):
        if self._proto < 3:
            module, name = _compat_name(module, name)
        full = f"{module}.{name}"
        top = module.split(".", 1)[0]
        if top in _BLOCKED_MODULES or (module == "builtins" and name in _BLOCKED_BUILTINS):
            raise _refusal(full, top)
        try:
            return self._globals[full]
        except KeyError:
            raise _refusal(full, top) from None

    def _call(self, func, args):
        if id(func) not in self._callables or self._callables[id(func)] is not func:
            raise pickle.UnpicklingError(
                f"Weights only load failed: the file calls {_describe(func)}, which is not an "
                "allowed callable")
        if not isinstance(args, tuple):
            raise pickle.UnpicklingError("corrupt pickle: REDUCE arguments are not a tuple")
        return func(*args)

    def _new(self, cls, args, kwargs=None):
        if cls is make_parameter:
            return make_parameter(*args, **(kwargs or {}))
        if isinstance(cls, type) and (id(cls) in self._user_types or cls in (OrderedDict, set)):
            return cls.__new__(cls, *args, **(kwargs or {}))
        raise pickle.UnpicklingError(
            f"Weights only load failed: the file creates an object of {_describe(cls)}, which "
            "is not an allowed class; allow it with ember.serialization.add_safe_globals")

    def _build(self, inst, state) -> None:
        if type(inst) is OrderedDict:
            if isinstance(state, dict):
                inst.__dict__.update(state)
                return
        elif id(type(inst)) in self._user_types:
            setstate = getattr(inst, "__setstate__", None)
            if setstate is not None and not _is_default_setstate(inst):
                setstate(state)
                return
            slots = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slots = state
            if state:
                inst.__dict__.update(state)
            if slots:
                for k, v in slots.items():
                    setattr(inst, k, v)
            return
        raise pickle.UnpicklingError(
            f"Weights only load failed: the file sets the state of a {type(inst).__name__}; "
            "only OrderedDict and allow-listed classes can have state")

    def _decode(self, data: bytes):
        if self._encoding == "bytes":
            return data
        return data.decode(self._encoding, self._errors)

    # -- the interpreter --------------------------------------------------
    def load(self):
        try:
            return self._load()
        except _External as e:  # raised by persistent_load (map_location...): not corruption
            raise e.error from None
        except (pickle.UnpicklingError, RuntimeError, MemoryError):
            raise
        except (IndexError, KeyError, EOFError, struct.error, ValueError, TypeError,
                UnicodeDecodeError, OverflowError, AttributeError) as e:
            raise pickle.UnpicklingError(f"corrupt pickle data ({type(e).__name__}: {e})") \
                from None

    def _load(self):
        self._stack: list = []
        self._metastack: list = []
        self._memo: dict[int, Any] = {}
        read, dispatch = self._read, _DISPATCH
        while True:
            key = read(1)
            if not key:
                raise pickle.UnpicklingError("pickle data was truncated")
            try:
                handler = dispatch[key[0]]
            except KeyError:
                name = _OP_NAMES.get(key[0])
                if name in _REFUSED_OPS:
                    raise pickle.UnpicklingError(
                        f"Weights only load failed: the {name} opcode is not allowed in "
                        "weights-only loading; use weights_only=False if you trust the "
                        "file") from None
                raise pickle.UnpicklingError(
                    f"corrupt pickle data: unknown opcode {key!r}") from None
            if handler is None:  # STOP
                return self._stack.pop()
            handler(self)

    # containers and the stack
    def _op_mark(self):
        self._metastack.append(self._stack)
        self._stack = []

    def _op_proto(self):
        self._proto = self._take(1)[0]

    def _op_frame(self):
        self._take(8)

    def _op_dict(self):
        items = self._pop_mark()
        self._stack.append({items[i]: items[i + 1] for i in range(0, len(items), 2)})

    # (the items are popped first: the stack in use changes at the mark)
    def _op_list(self):
        items = self._pop_mark()
        self._stack.append(items)

    def _op_tuple(self):
        items = tuple(self._pop_mark())
        self._stack.append(items)

    def _op_tuple1(self):
        self._stack[-1] = (self._stack[-1],)

    def _op_tuple2(self):
        self._stack[-2:] = [(self._stack[-2], self._stack[-1])]

    def _op_tuple3(self):
        self._stack[-3:] = [(self._stack[-3], self._stack[-2], self._stack[-1])]

    def _op_frozenset(self):
        items = frozenset(self._pop_mark())
        self._stack.append(items)

    def _op_append(self):
        value = self._stack.pop()
        _check_type(self._stack[-1], list, "APPEND").append(value)

    def _op_appends(self):
        items = self._pop_mark()
        _check_type(self._stack[-1], list, "APPENDS").extend(items)

    def _op_setitem(self):
        value, k = self._stack.pop(), self._stack.pop()
        _check_dict(self._stack[-1])[k] = value

    def _op_setitems(self):
        items = self._pop_mark()
        target = _check_dict(self._stack[-1])
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    def _op_additems(self):
        items = self._pop_mark()
        _check_type(self._stack[-1], set, "ADDITEMS").update(items)

    def _op_pop(self):
        if self._stack:
            self._stack.pop()
        else:
            self._pop_mark()

    def _op_pop_mark(self):
        self._pop_mark()

    def _op_dup(self):
        self._stack.append(self._stack[-1])

    # the memo
    def _op_binput(self):
        self._memo[self._take(1)[0]] = self._stack[-1]

    def _op_long_binput(self):
        self._memo[struct.unpack("<I", self._take(4))[0]] = self._stack[-1]

    def _op_put(self):
        self._memo[int(self._line())] = self._stack[-1]

    def _op_memoize(self):
        self._memo[len(self._memo)] = self._stack[-1]

    def _op_binget(self):
        self._stack.append(self._memo[self._take(1)[0]])

    def _op_long_binget(self):
        self._stack.append(self._memo[struct.unpack("<I", self._take(4))[0]])

    def _op_get(self):
        self._stack.append(self._memo[int(self._line())])

    # numbers
    def _op_binint(self):
        self._stack.append(struct.unpack("<i", self._take(4))[0])

    def _op_binint1(self):
        self._stack.append(self._take(1)[0])

    def _op_binint2(self):
        self._stack.append(struct.unpack("<H", self._take(2))[0])

    def _op_long1(self):
        self._stack.append(pickle.decode_long(self._take(self._take(1)[0])))

    def _op_long4(self):
        n = struct.unpack("<i", self._take(4))[0]
        if n < 0:
            raise pickle.UnpicklingError("LONG pickle has negative byte count")
        self._stack.append(pickle.decode_long(self._take(n)))

    def _op_int(self):
        data = self._line()
        self._stack.append(data == b"01" if data in (b"00", b"01") else int(data))

    def _op_long(self):
        self._stack.append(int(self._line().rstrip(b"L")))

    def _op_binfloat(self):
        self._stack.append(struct.unpack(">d", self._take(8))[0])

    def _op_float(self):
        self._stack.append(float(self._line()))

    # strings and bytes
    def _op_binunicode(self):
        n = struct.unpack("<I", self._take(4))[0]
        self._stack.append(str(self._take(n), "utf-8", "surrogatepass"))

    def _op_short_binunicode(self):
        self._stack.append(str(self._take(self._take(1)[0]), "utf-8", "surrogatepass"))

    def _op_binunicode8(self):
        n = struct.unpack("<Q", self._take(8))[0]
        self._stack.append(str(self._take(n), "utf-8", "surrogatepass"))

    def _op_unicode(self):
        self._stack.append(str(self._line(), "raw-unicode-escape"))

    def _op_binstring(self):
        n = struct.unpack("<i", self._take(4))[0]
        if n < 0:
            raise pickle.UnpicklingError("BINSTRING pickle has negative byte count")
        self._stack.append(self._decode(self._take(n)))

    def _op_short_binstring(self):
        self._stack.append(self._decode(self._take(self._take(1)[0])))

    def _op_string(self):
        data = self._line()
        if len(data) < 2 or data[0] != data[-1] or data[0] not in b"\"'":
            raise pickle.UnpicklingError("the STRING opcode argument must be quoted")
        self._stack.append(self._decode(codecs.escape_decode(data[1:-1])[0]))

    def _op_binbytes(self):
        self._stack.append(self._take(struct.unpack("<I", self._take(4))[0]))

    def _op_short_binbytes(self):
        self._stack.append(self._take(self._take(1)[0]))

    def _op_binbytes8(self):
        self._stack.append(self._take(struct.unpack("<Q", self._take(8))[0]))

    def _op_bytearray8(self):
        self._stack.append(bytearray(self._take(struct.unpack("<Q", self._take(8))[0])))

    # objects: the risky ones
    def _op_global(self):
        module = self._line().decode("utf-8")
        name = self._line().decode("utf-8")
        self._stack.append(self._global(module, name))

    def _op_stack_global(self):
        name, module = self._stack.pop(), self._stack.pop()
        if type(name) is not str or type(module) is not str:
            raise pickle.UnpicklingError("STACK_GLOBAL requires str")
        self._stack.append(self._global(module, name))

    def _op_reduce(self):
        args = self._stack.pop()
        self._stack[-1] = self._call(self._stack[-1], args)

    def _op_newobj(self):
        args = self._stack.pop()
        self._stack[-1] = self._new(self._stack[-1], args)

    def _op_newobj_ex(self):
        kwargs, args = self._stack.pop(), self._stack.pop()
        self._stack[-1] = self._new(self._stack[-1], args, kwargs)

    def _op_build(self):
        state = self._stack.pop()
        self._build(self._stack[-1], state)

    def _op_binpersid(self):
        self._stack[-1] = self._persistent(self._stack[-1])

    def _op_persid(self):
        self._stack.append(self._persistent(self._line().decode("ascii")))

    def _persistent(self, pid):
        if not isinstance(pid, tuple) or not pid or _ascii(pid[0]) != "storage":
            raise pickle.UnpicklingError(
                "Weights only load failed: only storages may be persistent ids, got "
                f"{type(pid).__name__}")
        try:
            return self._persistent_load(pid)
        except Exception as e:
            raise _External(e) from e


_OP_NAMES = {code[0]: name for name, code in vars(pickle).items()
             if name.isupper() and isinstance(code, bytes) and len(code) == 1}
_REFUSED_OPS = {"INST", "OBJ", "EXT1", "EXT2", "EXT4", "NEXT_BUFFER", "READONLY_BUFFER"}
_DISPATCH: dict[int, Any] = {pickle.STOP[0]: None}
_DISPATCH.update({
    code: getattr(WeightsUnpickler, f"_op_{name.lower()}")
    for code, name in _OP_NAMES.items()
    if hasattr(WeightsUnpickler, f"_op_{name.lower()}")
})
_DISPATCH.update({
    pickle.NONE[0]: lambda self: self._stack.append(None),
    pickle.NEWTRUE[0]: lambda self: self._stack.append(True),
    pickle.NEWFALSE[0]: lambda self: self._stack.append(False),
    pickle.EMPTY_DICT[0]: lambda self: self._stack.append({}),
    pickle.EMPTY_LIST[0]: lambda self: self._stack.append([]),
    pickle.EMPTY_TUPLE[0]: lambda self: self._stack.append(()),
    pickle.EMPTY_SET[0]: lambda self: self._stack.append(set()),
})


class _External(Exception):
    """Carries an exception of a callback out of the interpreter unchanged."""

    def __init__(self, error: Exception) -> None:
        super().__init__(error)
        self.error = error


def _ascii(value):
    return value.decode("ascii") if isinstance(value, bytes) else value


def _describe(obj) -> str:
    module = getattr(obj, "__module__", None)
    name = getattr(obj, "__qualname__", None) or type(obj).__name__
    return f"{module}.{name}" if module else name


def _is_default_setstate(inst) -> bool:
    fn = getattr(type(inst), "__setstate__", None)
    return fn is None or fn is getattr(object, "__setstate__", None)


def _check_type(obj, cls, opcode: str):
    if type(obj) is not cls:
        raise pickle.UnpicklingError(f"corrupt pickle: {opcode} on a {type(obj).__name__}")
    return obj


def _check_dict(obj):
    if type(obj) not in (dict, OrderedDict) and type(obj).__name__ != "Counter":
        raise pickle.UnpicklingError(f"corrupt pickle: SETITEM on a {type(obj).__name__}")
    return obj


# ---------------------------------------------------------------------------
# the unrestricted unpickler (weights_only=False)

def full_unpickler(file, persistent_load: Callable, pickle_module=None, **kwargs):
    """An unpickler that imports what the file names (only for files you trust); PyTorch's
    names still map to ember's objects."""
    base = (pickle_module or pickle).Unpickler
    table = _builtin_globals()

    class FullUnpickler(base):
        def find_class(self, module, name):
            module, name = _compat_name(module, name)
            full = f"{module}.{name}"
            if full in table:
                return table[full]
            if module == "torch" or module.startswith("torch."):
                raise pickle.UnpicklingError(
                    f"the file holds a PyTorch object ({full}) that ember cannot recreate; "
                    "save a state_dict() with torch.save instead of the object")
            return super().find_class(module, name)

        def persistent_load(self, pid):
            return persistent_load(pid)

    return FullUnpickler(file, **kwargs)


def unsafe_globals_in_pickle(data) -> list[str]:
    """The globals named in one pickle (bytes, or a stream that is left after it) that
    weights-only loading would refuse (the opcodes are only parsed, nothing is built)."""
    allowed = set(_builtin_globals()) | set(_user_globals())
    found: list[str] = []
    strings: list[str] = []   # the strings pushed so far, for STACK_GLOBAL
    memo: dict = {}
    memo_count = 0
    last_string = None        # the string on top of the stack, if the last push was one
    proto = 0
    for opcode, arg, _pos in pickletools.genops(data):
        name = opcode.name
        top = None
        full = None
        if name == "PROTO":
            proto = arg
        elif name in ("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE"):
            top = arg
        elif name in ("BINGET", "LONG_BINGET", "GET"):
            top = memo.get(arg)
        elif name in ("BINPUT", "LONG_BINPUT", "PUT", "MEMOIZE"):
            key = memo_count if name == "MEMOIZE" else arg
            memo_count += name == "MEMOIZE"
            if last_string is not None:
                memo[key] = last_string
            top = last_string
        elif name == "GLOBAL":
            module, _, attr = arg.partition(" ")
            if proto < 3:
                module, attr = _compat_name(module, attr)
            full = f"{module}.{attr}"
        elif name == "STACK_GLOBAL" and len(strings) >= 2:
            full = f"{strings[-2]}.{strings[-1]}"
        if top is not None and name not in ("BINPUT", "LONG_BINPUT", "PUT", "MEMOIZE"):
            strings.append(top)
        last_string = top
        if full is not None and full not in allowed and full not in found:
            found.append(full)
    return found

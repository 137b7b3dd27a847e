"""Containers: modules that hold other modules or parameters (Sequential, ModuleList,
ModuleDict, ParameterList, ParameterDict)."""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections import abc as container_abcs
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain, islice
from typing import Any

from ember._C import _core
from ember.nn.modules.module import Module, _addindent
from ember.nn.parameter import Parameter

__all__ = ["Container", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
           "ParameterDict"]


def _renumber(modules: dict) -> None:
    """Rename the entries of ``modules`` to "0", "1", ... in order (in place, so the dict
    object that the module owns stays the same)."""
    values = list(modules.values())
    modules.clear()
    for i, m in enumerate(values):
        modules[str(i)] = m


def _abs_index(idx, size: int) -> int:
    idx = operator.index(idx)
    if not -size <= idx < size:
        raise IndexError(f"index {idx} is out of range")
    return idx + size if idx < 0 else idx



class Container(Module):
    """The ancestor of the containers, deprecated since PyTorch 0.4: a Module holding the
    keyword arguments as submodules. Subclass :class:`Module` instead.

    Args:
        **kwargs: ``name=module`` pairs, added with ``add_module``.
    """

    def __init__(self, **kwargs) -> None:
        import warnings

        warnings.warn("`nn.Container` is deprecated. All of it's functionality is now "
                      "implemented in `nn.Module`. Subclass that instead.", FutureWarning,
                      stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)

class Sequential(Module):
    r"""A sequential container: modules are called in the order they were given.

    Modules are passed to the constructor as arguments (named ``"0"``, ``"1"``, ...) or
    as one ``OrderedDict`` of named modules. ``forward`` feeds its input to the first
    module and each module's output to the next.

    Example::

        >>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        >>> model = nn.Sequential(OrderedDict([("fc1", nn.Linear(4, 8)), ("act", nn.ReLU())]))
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _get_item_by_idx(self, iterator, idx):
        """The idx-th item of ``iterator`` (negative indices count from the end)."""
        idx = _abs_index(idx, len(self))
        return next(islice(iterator, idx, None))

    def __getitem__(self, idx: slice | int) -> Sequential | Module:
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._get_item_by_idx(self._modules.values(), idx)

    def __setitem__(self, idx: int, module: Module) -> None:
        key = self._get_item_by_idx(self._modules.keys(), idx)
        setattr(self, key, module)

    def __delitem__(self, idx: slice | int) -> None:
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, self._get_item_by_idx(self._modules.keys(), idx))
        _renumber(self._modules)  # keep the numbering contiguous, as PyTorch does

    def __len__(self) -> int:
        return len(self._modules)

    def __add__(self, other) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, "
                             f"but {type(other)} is given.")
        ret = Sequential()
        for layer in chain(self, other):
            ret.append(layer)
        return ret

    def __iadd__(self, other) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError("add operator supports only objects of Sequential class, "
                             f"but {type(other)} is given.")
        offset = len(self)
        for i, module in enumerate(other):
            self.add_module(str(i + offset), module)
        return self

    def __mul__(self, other: int) -> Sequential:
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        combined = Sequential()
        offset = 0
        for _ in range(other):
            for module in self:
                combined.add_module(str(offset), module)
                offset += 1
        return combined

    def __rmul__(self, other: int) -> Sequential:
        return self.__mul__(other)

    def __imul__(self, other: int) -> Sequential:
        if not isinstance(other, int):
            raise TypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ValueError(f"Non-positive multiplication factor {other} for {type(self)}")
        n = len(self)
        originals = list(self._modules.values())
        for k in range(1, other):
            for i, module in enumerate(originals):
                self.add_module(str(k * n + i), module)
        return self

    def pop(self, key: int | slice) -> Module:
        """Remove the module at ``key`` and return it."""
        v = self[key]
        del self[key]
        return v

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def forward(self, input):
        for module in self._modules.values():
            input = module(input)
        return input

    def append(self, module: Module) -> Sequential:
        """Append ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Insert ``module`` before position ``index``; returns self."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not (-n <= index <= n):
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        """Append every module of ``sequential``; returns self."""
        for layer in sequential:
            self.append(layer)
        return self


class ModuleList(Module):
    r"""Holds submodules in a list; they are registered like attributes.

    Args:
        modules (iterable, optional): an iterable of modules to add

    Example::

        >>> self.linears = nn.ModuleList([nn.Linear(10, 10) for i in range(10)])
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self += modules

    def _get_abs_string_index(self, idx) -> str:
        return str(_abs_index(idx, len(self)))

    def __getitem__(self, idx: int | slice) -> Module | ModuleList:
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[self._get_abs_string_index(idx)]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, self._get_abs_string_index(idx), module)

    def __delitem__(self, idx: int | slice) -> None:
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, self._get_abs_string_index(idx))
        _renumber(self._modules)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        combined = ModuleList()
        for i, module in enumerate(chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def __repr__(self) -> str:
        """PyTorch's repr: runs of identical modules are shown once, as ``(0-2): 3 x ...``."""
        reprs = [repr(item) for item in self]
        if not reprs:
            return self._get_name() + "()"
        blocks = []  # [start, end, repr]
        for i, r in enumerate(reprs):
            if blocks and blocks[-1][2] == r:
                blocks[-1][1] = i
            else:
                blocks.append([i, i, r])
        lines = []
        for start, end, r in blocks:
            if start == end:
                line = f"({start}): {r}"
            else:
                line = f"({start}-{end}): {end - start + 1} x {r}"
            lines.append(_addindent(line, 2))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def insert(self, index: int, module: Module) -> None:
        """Insert ``module`` before position ``index``."""
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module: Module) -> ModuleList:
        """Append ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key: int | slice) -> Module:
        """Remove the module at ``key`` and return it."""
        v = self[key]
        del self[key]
        return v

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Append the modules of an iterable; returns self."""
        if not isinstance(modules, container_abcs.Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


class ModuleDict(Module):
    r"""Holds submodules in an ordered dictionary; they are registered like attributes.

    Args:
        modules (iterable, optional): a mapping of (string: module) or an iterable of
            (string, module) pairs

    Example::

        >>> self.choices = nn.ModuleDict({"conv": nn.Conv2d(10, 10, 3), "pool": nn.MaxPool2d(3)})
    """

    def __init__(self, modules: Mapping[str, Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Remove all items."""
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Remove ``key`` and return its module."""
        v = self[key]
        del self[key]
        return v

    def keys(self):
        """The keys, in order."""
        return self._modules.keys()

    def items(self):
        """The (key, module) pairs, in order."""
        return self._modules.items()

    def values(self):
        """The modules, in order."""
        return self._modules.values()

    def update(self, modules: Mapping[str, Module]) -> None:
        """Add or overwrite entries from a mapping or an iterable of (key, module) pairs."""
        if not isinstance(modules, container_abcs.Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value "
                            "pairs, but got " + type(modules).__name__)
        if isinstance(modules, (OrderedDict, ModuleDict, container_abcs.Mapping)):
            for key, module in modules.items():
                self[key] = module
            return
        for j, m in enumerate(modules):
            if not isinstance(m, container_abcs.Iterable):
                raise TypeError(f"ModuleDict update sequence element #{j} should be Iterable; "
                                f"is{type(m).__name__}")
            if len(m) != 2:
                raise ValueError(f"ModuleDict update sequence element #{j} has length "
                                 f"{len(m)}; 2 is required")
            self[m[0]] = m[1]


def _tensor_line(key, p, type_text) -> str:
    size_str = "x".join(str(s) for s in p.shape)
    device_str = f" ({p.device})" if p.device.type == "cuda" else ""
    kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
    return f"  ({key}): {kind} containing: [{type_text} of size {size_str}{device_str}]"


def _typename(t) -> str:
    """PyTorch's legacy type name of a tensor, e.g. ``torch.FloatTensor``."""
    try:
        return t.type()
    except Exception:  # noqa: BLE001 - a dtype without a legacy name
        return type(t).__module__.split(".")[0] + "." + type(t).__name__


class ParameterList(Module):
    r"""Holds parameters in a list. Tensors added to it become ``nn.Parameter``\ s;
    other objects are stored as they are.

    Args:
        values (iterable, optional): an iterable of elements to add to the list.

    Example::

        >>> self.params = nn.ParameterList([nn.Parameter(ember.randn(10, 10)) for i in range(10)])
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _get_abs_string_index(self, idx) -> str:
        return str(_abs_index(idx, len(self)))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = self.__class__()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, self._get_abs_string_index(idx))

    def __setitem__(self, idx: int, param: Any) -> None:
        # every way of adding an entry ends here: the one place that wraps tensors
        idx = self._get_abs_string_index(idx)
        if isinstance(param, _core.TensorBase) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, idx, param)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters: Iterable[Any]) -> ParameterList:
        return self.extend(parameters)

    def __dir__(self):
        return [key for key in super().__dir__() if not key.isdigit()]

    def append(self, value: Any) -> ParameterList:
        """Append ``value`` at the end; returns self."""
        new_idx = len(self)
        self._size += 1
        self[new_idx] = value
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Append the values of an iterable; returns self."""
        # a Tensor is iterable but is never unpacked here
        if (not isinstance(values, container_abcs.Iterable)
                or isinstance(values, _core.TensorBase)):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        lines = []
        for k, p in enumerate(self):
            if isinstance(p, _core.TensorBase):
                lines.append(_tensor_line(k, p, repr(p.dtype)))
            else:
                lines.append(f"  ({k}): Object of type: {type(p).__name__}")
        return "\n".join(lines)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    r"""Holds parameters in an ordered dictionary. Tensors added to it become
    ``nn.Parameter``\ s; other objects are stored as they are.

    ``update`` with a plain (unordered) mapping inserts its keys in sorted order, as
    PyTorch does; an ``OrderedDict``, another ParameterDict or a sequence of pairs keeps
    its order.

    Args:
        parameters (iterable, optional): a mapping of (string: value) or an iterable of
            (string, value) pairs
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def _key_to_attr(self, key: str) -> str:
        if not isinstance(key, str):
            raise TypeError(
                "Index given to ParameterDict cannot be used as a key as it is not a string "
                f"(type is '{type(key).__name__}'). Open an issue on github if you need "
                "non-string keys.")
        return key

    def __getitem__(self, key: str) -> Any:
        return getattr(self, self._key_to_attr(key))

    def __setitem__(self, key: str, value: Any) -> None:
        # every way of adding an entry ends here: the one place that wraps tensors
        self._keys[key] = None
        attr = self._key_to_attr(key)
        if isinstance(value, _core.TensorBase) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, self._key_to_attr(key))

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._keys)

    def copy(self) -> ParameterDict:
        """A new ParameterDict holding the same parameters."""
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def __contains__(self, key: str) -> bool:
        return key in self._keys

    def setdefault(self, key: str, default: Any | None = None) -> Any:
        """The value at ``key``, first inserting ``default`` if the key is absent."""
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        """Remove all items."""
        for k in self._keys.copy():
            del self[k]

    def pop(self, key: str) -> Any:
        """Remove ``key`` and return its value."""
        v = self[key]
        del self[key]
        return v

    def popitem(self) -> tuple[str, Any]:
        """Remove and return the last inserted ``(key, value)`` pair."""
        k, _ = self._keys.popitem()
        self._keys[k] = None  # __delitem__ needs it
        val = self[k]
        del self[k]
        return k, val

    def get(self, key: str, default: Any | None = None) -> Any:
        """The value at ``key`` if present, else ``default``."""
        return self[key] if key in self else default

    def fromkeys(self, keys: Iterable[str], default: Any | None = None) -> ParameterDict:
        """A new ParameterDict with ``keys``, each set to ``default``."""
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        """The keys, in order."""
        return self._keys.keys()

    def items(self):
        """The (key, value) pairs, in order."""
        return ((k, self[k]) for k in self._keys)

    def values(self):
        """The values, in order."""
        return (self[k] for k in self._keys)

    def update(self, parameters) -> None:
        """Add or overwrite entries from a mapping or an iterable of (key, value) pairs."""
        if not isinstance(parameters, container_abcs.Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of "
                            "key/value pairs, but got " + type(parameters).__name__)
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            for key, parameter in parameters.items():
                self[key] = parameter
        elif isinstance(parameters, container_abcs.Mapping):
            for key, parameter in sorted(parameters.items()):
                self[key] = parameter
        else:
            for j, p in enumerate(parameters):
                if not isinstance(p, container_abcs.Iterable):
                    raise TypeError(f"ParameterDict update sequence element #{j} should be "
                                    f"Iterable; is{type(p).__name__}")
                if len(p) != 2:
                    raise ValueError(f"ParameterDict update sequence element #{j} has length "
                                     f"{len(p)}; 2 is required")
                self[p[0]] = p[1]

    def extra_repr(self) -> str:
        lines = []
        for k, p in self.items():
            if isinstance(p, _core.TensorBase):
                lines.append(_tensor_line(k, p, _typename(p)))
            else:
                lines.append(f"  ({k}): Object of type: {type(p).__name__}")
        return "\n".join(lines)

    def __call__(self, input):
        raise RuntimeError("ParameterDict should not be called.")

    def __or__(self, other: ParameterDict) -> ParameterDict:
        copy = self.copy()
        copy.update(other)
        return copy

    def __ror__(self, other: ParameterDict) -> ParameterDict:
        copy = other.copy()
        copy.update(self)
        return copy

    def __ior__(self, other: ParameterDict) -> ParameterDict:
        self.update(other)
        return self

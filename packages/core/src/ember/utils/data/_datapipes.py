"""DataPipes, as ``torch.utils.data``'s (deprecated in PyTorch, importable there): the
``IterDataPipe`` / ``MapDataPipe`` bases, ``DataChunk``, the ``functional_datapipe``
registration that makes ``dp.map(fn)`` work, and the validation and determinism decorators.
The functional forms registered here are PyTorch's most used ones: ``map``, ``filter``,
``batch``, ``header`` (iterable) and ``map``, ``batch`` (map-style). A DataPipe is a
Dataset, so ``DataLoader`` takes one as it takes any dataset.

Examples::

    >>> dp = ember.utils.data.IterDataPipe  # subclass it, or use a functional form:
    >>> class Numbers(IterDataPipe):
    ...     def __iter__(self):
    ...         yield from range(10)
    >>> list(Numbers().filter(lambda x: x % 2 == 1).map(lambda x: x * 10).batch(2))
    [[10, 30], [50, 70], [90]]
"""

from __future__ import annotations

import functools
import inspect
import typing

from ember.utils.data.dataset import Dataset, IterableDataset

__all__ = ["IterDataPipe", "MapDataPipe", "DFIterDataPipe", "DataChunk", "functional_datapipe",
           "argument_validation", "runtime_validation", "runtime_validation_disabled",
           "guaranteed_datapipes_determinism", "non_deterministic"]

_state = {"runtime_validation": True, "determinism": False}


class _FunctionalMixin:
    functions: dict = {}

    def __getattr__(self, name):
        fn = type(self).functions.get(name)
        if fn is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        return functools.partial(fn, self)

    @classmethod
    def register_function(cls, function_name, function):
        cls.functions[function_name] = function

    @classmethod
    def register_datapipe_as_function(cls, function_name, cls_to_register):
        if function_name in cls.functions:
            raise Exception(f"Unable to add DataPipe function name {function_name} as it is "  # noqa: TRY002
                            "already taken")

        def class_function(source_dp, *args, **kwargs):
            return cls_to_register(source_dp, *args, **kwargs)

        functools.update_wrapper(class_function, cls_to_register, assigned=("__doc__",))
        cls.functions[function_name] = class_function

    def __dir__(self):
        return list(super().__dir__()) + list(type(self).functions)


class IterDataPipe(_FunctionalMixin, IterableDataset):
    """An iterable DataPipe: a Dataset defined by ``__iter__``, with the functional forms
    registered by :class:`functional_datapipe` as methods (``dp.map(fn)``)."""

    functions: dict = {}

    @classmethod
    def register_datapipe_as_function(cls, function_name, cls_to_register,
                                      enable_df_api_tracing=False):
        """Make ``cls_to_register(self, ...)`` the method ``function_name`` of every
        IterDataPipe (``enable_df_api_tracing`` is PyTorch's DataFrame tracing: accepted)."""
        super().register_datapipe_as_function(function_name, cls_to_register)

    def __repr__(self):
        return type(self).__qualname__


class DFIterDataPipe(IterDataPipe):
    """An :class:`IterDataPipe` of DataFrames (PyTorch's DataFrame tracing)."""

    def _is_dfpipe(self):
        return True


class MapDataPipe(_FunctionalMixin, Dataset):
    """A map-style DataPipe: ``__getitem__`` and ``__len__``, with the functional forms
    registered for map-style pipes as methods."""

    functions: dict = {}

    def __repr__(self):
        return type(self).__qualname__


class DataChunk(list):
    """A batch of a DataPipe: a list that prints itself and iterates its items."""

    def __init__(self, items):
        items = list(items)
        super().__init__(items)
        self.items = items

    def as_str(self, indent: str = "") -> str:
        return indent + "[" + ", ".join(str(i) for i in iter(self)) + "]"

    def __iter__(self):
        yield from super().__iter__()

    def raw_iterator(self):
        yield from self.items


class functional_datapipe:  # noqa: N801 - PyTorch's name
    """Class decorator: register a DataPipe class as the method ``name`` of every
    :class:`IterDataPipe` (or :class:`MapDataPipe`, for a map-style class).

    Args:
        name (str): the method name.
        enable_df_api_tracing (bool): accepted for PyTorch's DataFrame tracing.
    """

    name: str

    def __init__(self, name: str, enable_df_api_tracing=False) -> None:
        self.name = name
        self.enable_df_api_tracing = enable_df_api_tracing

    def __call__(self, cls):
        if isinstance(cls, type) and issubclass(cls, IterDataPipe):
            IterDataPipe.register_datapipe_as_function(self.name, cls)
        elif isinstance(cls, type) and issubclass(cls, MapDataPipe):
            MapDataPipe.register_datapipe_as_function(self.name, cls)
        else:
            raise TypeError("`functional_datapipe` can only decorate IterDataPipe or "
                            "MapDataPipe")
        return cls


def argument_validation(f):
    """Decorator of a DataPipe's ``__init__``: arguments annotated as ``IterDataPipe`` /
    ``MapDataPipe`` (or a subclass) must be instances of it, else ``TypeError``."""
    signature = inspect.signature(f)
    hints = typing.get_type_hints(f)

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        for name, value in bound.arguments.items():
            hint = hints.get(name)
            base = typing.get_origin(hint) or hint
            if isinstance(base, type) and issubclass(base, (IterDataPipe, MapDataPipe)):
                if not isinstance(value, base):
                    raise TypeError(f"Expected argument '{name}' as a {base.__name__}, but "
                                    f"found {type(value)}")
        return f(*args, **kwargs)

    return wrapper


class runtime_validation_disabled:  # noqa: N801 - PyTorch's name
    """Context manager turning :func:`runtime_validation` off inside it."""

    def __init__(self) -> None:
        self.prev = _state["runtime_validation"]
        _state["runtime_validation"] = False

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _state["runtime_validation"] = self.prev


def _matches(value, hint) -> bool:
    if hint is typing.Any:
        return True
    origin = typing.get_origin(hint)
    if origin is typing.Union:
        return any(_matches(value, h) for h in typing.get_args(hint))
    base = origin or hint
    return not isinstance(base, type) or isinstance(value, base)


def runtime_validation(f):
    """Decorator of a DataPipe's ``__iter__``: every item must be of the type its return
    annotation (``Iterator[T]``) names, else ``RuntimeError`` (off inside
    :class:`runtime_validation_disabled`)."""
    if f.__name__ != "__iter__":
        raise TypeError(f"Can not decorate function {f.__name__} with 'runtime_validation'")
    ret = typing.get_type_hints(f).get("return")
    args = typing.get_args(ret)
    item_type = args[0] if args else typing.Any

    @functools.wraps(f)
    def wrapper(self):
        if not _state["runtime_validation"]:
            yield from f(self)
            return
        for d in f(self):
            if not _matches(d, item_type):
                raise RuntimeError(f"Expected an instance as subtype of {item_type}, but found "
                                   f"{d}({type(d)})")
            yield d

    return wrapper


class guaranteed_datapipes_determinism:  # noqa: N801 - PyTorch's name
    """Context manager inside which a DataPipe marked :class:`non_deterministic` cannot be
    made (``TypeError``)."""

    def __init__(self) -> None:
        self.prev = _state["determinism"]
        _state["determinism"] = True

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc) -> None:
        _state["determinism"] = self.prev


class non_deterministic:  # noqa: N801 - PyTorch's name
    """Mark a DataPipe class as non-deterministic: ``@non_deterministic`` on the class, or
    ``@non_deterministic(fn)`` with ``fn(*args, **kwargs) -> bool`` deciding from the
    constructor's arguments. Such a DataPipe raises ``TypeError`` when made inside
    :class:`guaranteed_datapipes_determinism`."""

    cls = None
    deterministic_fn = None

    def __init__(self, arg) -> None:
        if isinstance(arg, type):
            if not issubclass(arg, IterDataPipe):
                raise TypeError(f"Only `IterDataPipe` can be decorated with "
                                f"`non_deterministic`, but {arg.__name__} is found")
            self.cls = arg
        elif callable(arg):
            self.deterministic_fn = arg
        else:
            raise TypeError(f"{arg} can not be decorated by non_deterministic")

    def _error(self, cls):
        return TypeError(f"{cls.__name__} is non-deterministic, but you set "
                         "'guaranteed_datapipes_determinism'. You can turn off determinism for "
                         "this DataPipe if that is acceptable for your application")

    def __call__(self, *args, **kwargs):
        if self.cls is not None:
            if _state["determinism"]:
                raise self._error(self.cls)
            return self.cls(*args, **kwargs)
        cls = args[0]
        if not (isinstance(cls, type) and issubclass(cls, IterDataPipe)):
            raise TypeError(f"Only `IterDataPipe` can be decorated, but {cls.__name__} is "
                            "found")
        decide = self.deterministic_fn

        @functools.wraps(cls, updated=())
        def make(*a, **k):
            if _state["determinism"] and decide(*a, **k):
                raise self._error(cls)
            return cls(*a, **k)

        return make


# ---------------------------------------------------------------------------
# the functional forms

@functional_datapipe("map")
class _Mapper(IterDataPipe):
    """``dp.map(fn)``: ``fn`` of every item."""

    def __init__(self, datapipe, fn):
        self.datapipe, self.fn = datapipe, fn

    def __iter__(self):
        for d in self.datapipe:
            yield self.fn(d)

    def __len__(self):
        return len(self.datapipe)


@functional_datapipe("filter")
class _Filter(IterDataPipe):
    """``dp.filter(filter_fn)``: the items for which ``filter_fn`` returns True (it must
    return a bool)."""

    def __init__(self, datapipe, filter_fn):
        self.datapipe, self.filter_fn = datapipe, filter_fn

    def __iter__(self):
        for d in self.datapipe:
            keep = self.filter_fn(d)
            if not isinstance(keep, bool):
                raise ValueError("Boolean output is required for `filter_fn` of "
                                 "FilterIterDataPipe, got", type(keep))
            if keep:
                yield d


@functional_datapipe("batch")
class _Batcher(IterDataPipe):
    """``dp.batch(batch_size, drop_last=False, wrapper_class=DataChunk)``: lists of
    ``batch_size`` items (the last one shorter unless ``drop_last``)."""

    def __init__(self, datapipe, batch_size: int, drop_last: bool = False,
                 wrapper_class=DataChunk):
        if batch_size <= 0:
            raise AssertionError("Batch size is required to be larger than 0!")
        self.datapipe, self.batch_size = datapipe, batch_size
        self.drop_last, self.wrapper_class = drop_last, wrapper_class

    def __iter__(self):
        batch = []
        for d in self.datapipe:
            batch.append(d)
            if len(batch) == self.batch_size:
                yield self.wrapper_class(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.wrapper_class(batch)

    def __len__(self):
        n = len(self.datapipe)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


@functional_datapipe("header")
class _Header(IterDataPipe):
    """``dp.header(limit=10)``: the first ``limit`` items."""

    def __init__(self, source_datapipe, limit: int | None = 10):
        self.source_datapipe, self.limit = source_datapipe, limit

    def __iter__(self):
        for i, d in enumerate(self.source_datapipe):
            if self.limit is not None and i >= self.limit:
                return
            yield d


@functional_datapipe("map")
class _MapMapper(MapDataPipe):
    """``map_dp.map(fn)``: ``fn`` of each item."""

    def __init__(self, datapipe, fn):
        self.datapipe, self.fn = datapipe, fn

    def __getitem__(self, index):
        return self.fn(self.datapipe[index])

    def __len__(self):
        return len(self.datapipe)


@functional_datapipe("batch")
class _MapBatcher(MapDataPipe):
    """``map_dp.batch(batch_size, drop_last=False, wrapper_class=DataChunk)``."""

    def __init__(self, datapipe, batch_size: int, drop_last: bool = False,
                 wrapper_class=DataChunk):
        if batch_size <= 0:
            raise AssertionError("Batch size is required to be larger than 0!")
        self.datapipe, self.batch_size = datapipe, batch_size
        self.drop_last, self.wrapper_class = drop_last, wrapper_class

    def __getitem__(self, index):
        if index < 0 or index >= len(self):
            raise IndexError(f"Index {index} is out of bound.")
        start = index * self.batch_size
        stop = min(start + self.batch_size, len(self.datapipe))
        return self.wrapper_class([self.datapipe[i] for i in range(start, stop)])

    def __len__(self):
        n = len(self.datapipe)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

"""ember.utils.data against torch.utils.data: default_collate/default_convert give the
same structures, types, dtypes and values on nested data; batch counts and lengths
(drop_last, batch_size=None, IterableDataset) and random_split lengths follow the same
rules; argument errors carry the same messages."""

from __future__ import annotations

import collections
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torch.utils.data as tdata  # noqa: E402

import ember  # noqa: E402
import ember.utils.data as edata  # noqa: E402

Point = collections.namedtuple("Point", ["x", "y"])


class FrozenMap(collections.abc.Mapping):
    """An immutable mapping (collated by rebuilding its type)."""

    def __init__(self, d):
        self._d = dict(d)

    def __getitem__(self, k):
        return self._d[k]

    def __iter__(self):
        return iter(self._d)

    def __len__(self):
        return len(self._d)


def _norm(x):
    """A library-neutral form of a (collated) structure."""
    if isinstance(x, (torch.Tensor, ember.Tensor)):
        return ("tensor", str(x.dtype).split(".")[-1], tuple(x.shape), x.tolist())
    if isinstance(x, np.ndarray):
        return ("ndarray", x.dtype.str, x.tolist())
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__, *[_norm(v) for v in x])
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [_norm(v) for v in x])
    if isinstance(x, collections.abc.Mapping):
        return (type(x).__name__, {k: _norm(v) for k, v in x.items()})
    return (type(x).__name__, x)


def _sample(lib, i):
    """One sample of every kind default_collate handles, built with ``lib``."""
    return {
        "int": i, "float": i + 0.5, "bool": i % 2 == 0, "str": f"s{i}", "bytes": b"b",
        "np_f32": np.float32(i), "np_i16": np.int16(i), "np_bool": np.bool_(i % 2),
        "arr": np.arange(3, dtype=np.float64) * i, "arr_u8": np.full((2, 2), i, np.uint8),
        "arr0d": np.array(i), "t_f": lib.full((2,), float(i)),
        "t_i": lib.tensor([i, i + 1]), "t0": lib.tensor(i * 1.5),
        "point": Point(i, lib.tensor([float(i)])),
        "nested": [(i, "a"), {"deep": [i, i * 2.0]}],
        "od": collections.OrderedDict(b=i, a=[i]),
        "frozen": FrozenMap({"k": i}),
    }


def test_default_collate_nested_matches_torch():
    ours = edata.default_collate([_sample(ember, i) for i in range(3)])
    theirs = tdata.default_collate([_sample(torch, i) for i in range(3)])
    assert _norm(ours) == _norm(theirs)


@pytest.mark.parametrize("batch", [
    [0, 1, 2], [0.5, 1.5], [True, False], ["a", "b"], [b"x", b"y"],
    [np.float64(1), np.float64(2)], [np.int8(1), np.int8(-1)],
    [np.zeros((2, 3), np.float32), np.ones((2, 3), np.float32)],
    [[1, 2], [3, 4]], [(1, "a"), (2, "b")], [Point(1, 2.0), Point(3, 4.0)],
    [{"a": [1.0, 2.0]}, {"a": [3.0, 4.0]}],
])
def test_default_collate_leaves_match_torch(batch):
    assert _norm(edata.default_collate(batch)) == _norm(tdata.default_collate(batch))


def test_default_collate_tensor_promotion_matches_torch():
    ours = edata.default_collate([ember.ones(2, dtype=ember.int64), ember.ones(2)])
    theirs = tdata.default_collate([torch.ones(2, dtype=torch.int64), torch.ones(2)])
    assert _norm(ours) == _norm(theirs)


@pytest.mark.parametrize("batch", [
    [object(), object()], [[1, 2], [1]], [np.array(["a"]), np.array(["b"])],
])
def test_default_collate_errors_match_torch(batch):
    with pytest.raises(Exception) as theirs:
        tdata.default_collate(batch)
    with pytest.raises(type(theirs.value)) as ours:
        edata.default_collate(batch)
    assert str(ours.value) == str(theirs.value)


def test_default_collate_shape_mismatch_matches_torch():
    with pytest.raises(RuntimeError) as theirs:
        tdata.default_collate([torch.ones(2), torch.ones(3)])
    with pytest.raises(RuntimeError) as ours:
        edata.default_collate([ember.ones(2), ember.ones(3)])
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("data", [
    0, 1.5, "s", np.arange(3), np.float32(2.5), np.array(["a", "b"]),
    (np.zeros(2), "x"), [np.ones(2), 3], Point(np.int64(1), np.zeros(1)),
    {"a": np.ones((2, 2), np.int32), "b": [np.bool_(True)]},
    collections.OrderedDict(z=np.zeros(1)), FrozenMap({"k": np.ones(1)}),
])
def test_default_convert_matches_torch(data):
    assert _norm(edata.default_convert(data)) == _norm(tdata.default_convert(data))


class MapData:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i


def _iterable(base, n, length=None):
    class It(base):
        def __iter__(self):
            return iter(range(n))

        def __len__(self):
            return n if length is None else length
    return It()


def _summary(loader):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return len(loader), [len(b) if hasattr(b, "__len__") and not isinstance(b, int)
                             else "item" for b in loader]


@pytest.mark.parametrize("n", [1, 7, 10, 64])
@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (3, False), (3, True),
                                                  (64, False), (64, True), (None, False)])
def test_batch_counts_match_torch(n, batch_size, drop_last):
    kw = dict(batch_size=batch_size, drop_last=drop_last)
    assert _summary(edata.DataLoader(MapData(n), **kw)) == \
        _summary(tdata.DataLoader(MapData(n), **kw))
    assert _summary(edata.DataLoader(_iterable(edata.IterableDataset, n), **kw)) == \
        _summary(tdata.DataLoader(_iterable(tdata.IterableDataset, n), **kw))
    assert len(edata.BatchSampler(range(n), batch_size or 1, drop_last)) == \
        len(tdata.BatchSampler(range(n), batch_size or 1, drop_last))


def test_batch_counts_with_workers_match_torch():
    kw = dict(batch_size=3, drop_last=False, num_workers=2)
    ours = [b.tolist() for b in edata.DataLoader(MapData(10), **kw)]
    theirs = [b.tolist() for b in tdata.DataLoader(MapData(10), **kw)]
    assert ours == theirs


@pytest.mark.parametrize("n", [7, 10, 101])
@pytest.mark.parametrize("lengths", [[0.1, 0.2, 0.7], [0.33, 0.33, 0.34], [0.5, 0.5],
                                     [1 / 3, 1 / 3, 1 / 3], [0.25] * 4, [1.0]])
def test_random_split_fraction_lengths_match_torch(n, lengths):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = [len(s) for s in edata.random_split(range(n), lengths)]
        theirs = [len(s) for s in tdata.random_split(range(n), lengths)]
    assert ours == theirs


def test_random_split_counts_and_errors_match_torch():
    assert [len(s) for s in edata.random_split(range(10), [3, 7])] == \
        [len(s) for s in tdata.random_split(range(10), [3, 7])]
    for lengths in ([3, 3], [0.5, 1.5, -1.0]):
        with pytest.raises(ValueError) as theirs:
            tdata.random_split(range(10), lengths)
        with pytest.raises(ValueError) as ours:
            edata.random_split(range(10), lengths)
        assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("kwargs", [
    dict(num_workers=-1), dict(timeout=-1), dict(prefetch_factor=2),
    dict(persistent_workers=True), dict(sampler=[0], shuffle=True),
    dict(batch_sampler=[[0]], batch_size=2), dict(batch_size=None, drop_last=True),
    dict(num_workers=1, multiprocessing_context="nope"), dict(multiprocessing_context="fork"),
])
def test_loader_argument_errors_match_torch(kwargs):
    with pytest.raises(Exception) as theirs:
        tdata.DataLoader(MapData(4), **kwargs)
    with pytest.raises(type(theirs.value)) as ours:
        edata.DataLoader(MapData(4), **kwargs)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("make", [
    lambda m: m.BatchSampler(range(3), 0, False),
    lambda m: m.BatchSampler(range(3), 2, 1),
    lambda m: m.RandomSampler(range(3), num_samples=0),
    lambda m: m.WeightedRandomSampler([1.0], 0),
    lambda m: m.WeightedRandomSampler([[1.0]], 1),
])
def test_sampler_errors_match_torch(make):
    with pytest.raises(Exception) as theirs:
        make(tdata)
    with pytest.raises(type(theirs.value)) as ours:
        make(edata)
    assert str(ours.value) == str(theirs.value)

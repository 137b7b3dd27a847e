"""ember.load's conventions from PyTorch: the environment variables that force weights_only,
NumPy objects as allow-listed safe globals, the fallback byte order."""

import io
import pickle
import zipfile

import numpy as np
import pytest

import ember
from ember import serialization


class Config:
    def __init__(self, depth):
        self.depth = depth


def _saved(obj) -> bytes:
    buf = io.BytesIO()
    ember.save(obj, buf)
    return buf.getvalue()


@pytest.fixture
def clean_env(monkeypatch):
    for prefix in ("TORCH_", "EMBER_"):
        monkeypatch.delenv(prefix + "FORCE_WEIGHTS_ONLY_LOAD", raising=False)
        monkeypatch.delenv(prefix + "FORCE_NO_WEIGHTS_ONLY_LOAD", raising=False)
    return monkeypatch


def test_default_is_weights_only(clean_env):
    data = _saved({"cfg": Config(3)})
    with pytest.raises(pickle.UnpicklingError, match="add_safe_globals"):
        ember.load(io.BytesIO(data))
    assert ember.load(io.BytesIO(data), weights_only=False)["cfg"].depth == 3


@pytest.mark.parametrize("prefix", ["TORCH_", "EMBER_"])
def test_force_no_weights_only_when_not_passed(clean_env, prefix):
    data = _saved({"cfg": Config(4)})
    clean_env.setenv(prefix + "FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    with pytest.warns(UserWarning, match="forcing weights_only=False"):
        assert ember.load(io.BytesIO(data))["cfg"].depth == 4
    with pytest.raises(pickle.UnpicklingError):   # an explicit weights_only=True wins
        ember.load(io.BytesIO(data), weights_only=True)


@pytest.mark.parametrize("prefix", ["TORCH_", "EMBER_"])
def test_force_weights_only_overrides_false(clean_env, prefix):
    data = _saved({"cfg": Config(5)})
    clean_env.setenv(prefix + "FORCE_WEIGHTS_ONLY_LOAD", "true")
    with pytest.raises(pickle.UnpicklingError):
        ember.load(io.BytesIO(data), weights_only=False)
    assert ember.load(io.BytesIO(_saved({"x": ember.ones(2)})))["x"].tolist() == [1.0, 1.0]


def test_both_set_is_an_error(clean_env):
    clean_env.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "1")
    clean_env.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "yes")
    with pytest.raises(RuntimeError, match="Only one of"):
        ember.load(io.BytesIO(_saved({})))


def test_pickle_module_means_not_weights_only(clean_env):
    data = _saved({"cfg": Config(6)})
    assert ember.load(io.BytesIO(data), pickle_module=pickle)["cfg"].depth == 6


NUMPY_GLOBALS = [np._core.multiarray._reconstruct, np.ndarray, np.dtype,
                 np._core.multiarray.scalar, type(np.dtype(np.float32)),
                 type(np.dtype(np.int64)), type(np.dtype(np.float64))]


def test_numpy_objects_need_to_be_allowed(clean_env):
    obj = {"a": np.arange(4, dtype=np.float32), "d": np.dtype("int64"), "s": np.float64(2.5)}
    buf = io.BytesIO()
    ember.save(obj, buf)
    with pytest.raises(pickle.UnpicklingError, match="numpy"):
        ember.load(io.BytesIO(buf.getvalue()))
    assert "numpy._core.multiarray._reconstruct" in \
        serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(buf.getvalue()))
    with serialization.safe_globals(NUMPY_GLOBALS):
        got = ember.load(io.BytesIO(buf.getvalue()))
        assert set(serialization.get_safe_globals()) >= set(NUMPY_GLOBALS)
    np.testing.assert_array_equal(got["a"], obj["a"])
    assert got["d"] == np.dtype("int64") and got["s"] == 2.5
    assert not set(serialization.get_safe_globals()) & set(NUMPY_GLOBALS)
    serialization.add_safe_globals(NUMPY_GLOBALS)
    try:
        assert ember.load(io.BytesIO(buf.getvalue()))["s"] == 2.5
    finally:
        serialization.clear_safe_globals()
    assert serialization.get_safe_globals() == []


def _without_byteorder(data: bytes) -> bytes:
    src, out = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for info in src.infolist():
            if not info.filename.endswith("/byteorder"):
                z.writestr(info, src.read(info.filename))
    return out.getvalue()


def test_fallback_byte_order(clean_env):
    assert serialization.get_default_load_endianness() is None
    data = _without_byteorder(_saved({"x": ember.tensor([1.0, 2.0])}))
    assert ember.load(io.BytesIO(data))["x"].tolist() == [1.0, 2.0]
    try:
        serialization.set_default_load_endianness(serialization.LoadEndianness.BIG)
        swapped = ember.load(io.BytesIO(data))["x"].numpy()
        np.testing.assert_array_equal(swapped, np.array([1.0, 2.0], np.float32).byteswap())
        serialization.set_default_load_endianness(serialization.LoadEndianness.NATIVE)
        assert ember.load(io.BytesIO(data))["x"].tolist() == [1.0, 2.0]
    finally:
        serialization.set_default_load_endianness(None)
    with pytest.raises(TypeError, match="Invalid argument type"):
        serialization.set_default_load_endianness("big")

"""ember.save / ember.load without PyTorch: round trips, the file format, safety (weights-only
loading refuses code), corrupt files, atomic writes, mmap, map_location, and safetensors.

Files written by PyTorch 2.13 are embedded below (zlib + base64), so that reading PyTorch's
zip and legacy formats is tested where torch is not installed; tests/interop/ does the rest
against torch itself.
"""

from __future__ import annotations

import base64
import collections
import io
import os
import pickle
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time
import zipfile
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember
from ember import _dtype
from ember._serialization import _save, _zip
from ember.serialization import (
    LoadedStorage,
    add_safe_globals,
    clear_safe_globals,
    get_safe_globals,
    get_unsafe_globals_in_checkpoint,
    load,
    safe_globals,
    save,
)

HAS_BF16 = hasattr(_dtype, "bfloat16")
needs_bf16 = pytest.mark.skipif(not HAS_BF16, reason="bfloat16 needs ml_dtypes")

DTYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool",
          "complex64", "complex128"] + (["bfloat16"] if HAS_BF16 else [])


def _sample(name: str, shape=(2, 3)) -> ember.Tensor:
    rng = np.random.default_rng(0)
    values = rng.standard_normal(shape) * 10
    if name == "bool":
        arr = values > 0
    elif name.startswith("complex"):
        arr = values + 1j * rng.standard_normal(shape)
    else:
        arr = values
    return ember.tensor(arr.astype(getattr(_dtype, name).numpy))


def _equal(a: ember.Tensor, b: ember.Tensor) -> bool:
    return (a.dtype == b.dtype and a.shape == b.shape
            and np.array_equal(a._data.astype(np.complex128) if a.dtype.name == "bfloat16"
                               else a._data,
                               b._data.astype(np.complex128) if b.dtype.name == "bfloat16"
                               else b._data))


def _roundtrip(obj, **load_kwargs):
    buf = io.BytesIO()
    save(obj, buf)
    buf.seek(0)
    return load(buf, **load_kwargs)


def _records(data: bytes) -> dict:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {i.filename.split("/", 1)[1]: i for i in z.infolist()}


def _zip_with_pickle(pickled: bytes) -> bytes:
    buf = io.BytesIO()
    writer = _zip.ZipWriter(buf)
    writer.write_record("data.pkl", pickled)
    writer.write_record("version", "3\n")
    writer.finish()
    return buf.getvalue()


TORCH_ZIP = (
    "eNqlV8tvG0UYH9uJ4xjqPFqSNJRQKA+HpM76teukaZxuw6awoU22FKxerI2zia1uvPnscVqQKiKhBOUGPRWEEIci"
    "If4BxAUVuAISRwS3CiEkRBESghvMzNruzqRJmvqTd1d2vt9jHt83m3k90IZQKIR2RDfqRWalUCytW2NLJjZja1ds"
    "TY2gy1xs+K8DiuZ8BHAVfAXsEEQsX8MluxrOV6zFWsleymOrXHUq+fVEGPzRaK6DJFdJprliQcCFhDXbMfFF98cw"
    "tDFCCdpzAfIsrNUgqAcxdCzoSPfrgS0I6QHdtwWd24WCY9tWAZeccjV8obJkVaylmVIBhyE8bMAjGB414FDOT+1h"
    "iBSJfDFQbCu2FxlhFyUM6P4t6NZ9lLdnu0hxvRgOG3CEuSjBYy6s7nTOKa80jfaxlDj0Ez4/hgFmcBOO6r5NGHS5"
    "HsdwzIAnWGIRhjiuc6a93OR6kqUk4Djh8mF4inIRmqfp7YTL9QyGZw14jo1ncRme58hUNodxuUnoLksShl1zL9TN"
    "jVDCUZfwJIaYAWMscREkns9x7CZXnKWkIOFyJetcKcqVdrlkDIoBGZZYgHGO66yzumZb1/hVnmCpaTjlDniyPuDT"
    "9DblcmYxTBtwhiVWQeU4Z5zaom012c6yJBlmXLYXCdvwsMuiYZg14BxLsOClxi5g3xV4mQAQBp3KI7oX5sgeI5vr"
    "FRd8HsMFA+ZzpEzQqoVNWLgORpQtgV2Bi7PZL96n8UGunc4hSajCq7PZ37+l8d1s9u4/3//Y987IFlxiexmbK/Aa"
    "E74GrzPOslO2IHe+VovN6x2hP7om3pojifSa37U2+9FYszZjy05l1cT5datSJVWgqSNCie4ZcSr6+d2f36aW6LW7"
    "6CBS7onW6zdv2qWV8qpVxpqaPIhuI+QUNZC9Cr/RCfXvaaAHZZsGFt/AlkPLXVNPPYxuI+wSxrZFPWyevnM0SFSC"
    "e3qIoCmuK45JmjrRggGXdSNLbtPkQ64Ncn08TR31v/vrewPkDwP7OBrlHcU1NfrAjv6rh7/ORnV7v/pzvJudAHvr"
    "pnjdhKZKB54JlKGK5mc/lfZf/whSecWkpk61svgkbmfRbeqgY+HyHVqNbfs4mOYdpDR1siUHPjbjX574OvcQ40+3"
    "Pv7G3qMu1j/JxqhsaB8Xk7wLWVMzqLX9f4zp3/pm+29eHz2IvtKK/u7j7EKHmzrN3tolCiXD1PkPH61c2n/9hlDi"
    "XgNl1qtWpUQ66JsmfX/Jl5Y0NXbAkUiZhJyRU4qSTMtSKq0oiiTF5XFZkhMJKSVnlLSUGE/J49TlLzf9f0WJjyhz"
    "6WMl3/DpPXe6dzgX3wNFtPcA6eeQHwbQbieVSOI9BAb5xt+G9jh5RB5vI+/heG54eJoHiAj3dt0IB+9rR0LvF7He"
    "zsljPxWxcRHr7YE89nhQwCZErLd78dgbIjYpYr29h8ce6RCwKRHr7RiCrohNi1hvtfPYgZCAlRvY+/cDb9wUsYqo"
    "663VLp6qE4kVL4K9JTTEYQ0P+P7FPa8Hg6ONVhA4uWMAjWc14D7/7WwcyUH6HxO6csj97r6ltQddTITlu7n/AyLR"
    "GaM="
)
TORCH_LEGACY = (
    "eNptk0lv00AUgL1kKYZC2QqFAmVPKITsTdgS2tIU3NVlMQcUJc60MXLjPHtSClKlXBoo/wDEgSN/gVt/AHDnJyAh"
    "cURISDAzdlISPLLHnjdvvrfMe03htWT8fjf1a+Tph4WhSFOY/SaSeQO4kDrAcVzdMrGpmUZxDVm2btaAJwpqP9kx"
    "dIwNVES1il6qgfBKlYgQP6+joq2/QDaIG+ALqX4itKumhcEvC6pIVnoNQ0D2qT7KMGsrEJR9jUbbJk+kz4DXsGlp"
    "1UixgXXDlooWKjd0o1LEqGabVnEtLoEQCqlBCieapRUEonNEmjLMEl5yhBL41L1EJ5uMJ5LRaJp8U/EM+JkfWr1B"
    "/AjMYQguypwsyGIL+mRR5luwa0sjIRtIwyRiW5q3KshClUldwxJIYQV2Y9ijQL8qUGcx7K0SZ6pi1dPYvqpjZIAa"
    "EWWhBftlnto6sFWlrIMYDilwmAWuw6CDcmOZIenphHKkQ09k47HsWCKeTsJRQhcIfYiFsAnHZH4TjjvkYQwnFDjJ"
    "yFU41UWeLhnLHfJILzkZzcBpQuYJ+QwlE+hZOp1zyOcxXFDgIou/vAyhLvQ4u4FYuoMP/4uPx5KpKMFfch0fdR2/"
    "TPFXHHwEw1UFoszxMsS66aZpdMjxXnIqmoSES0665BQlpx3yGIaMAllG1uBaF3nCXK0baL27fq73WEjHxtJww03N"
    "TTc1t+iUcyzkMdxWYJxZsGGiy8Kk2SgbqMOe7GVnkhm447KnCDscdpgFDNMK3GVMBPf+qzbneDadiYJMjnPk+Ax1"
    "jaPVNksqm5T0nIOax7CgwCJrvlWES6BswFKIXaRhwf1C7uMbOt6yvi0TBRseFHLfP9HxuZD78fPL18GXoy14yFoI"
    "l1bgEXNrHVTGrJk1BI/nWD8/of3sUbO8V7kJXkUiet2vz+tK/F65DHhlKOjVpH0oQlNAxx93tNe8++Uybcl2jtve"
    "2e3sc80cmfI7azqG8+2/QJfc0SUPeZvkfZ//C3/iYo0="
)


def _fixture(text: str) -> bytes:
    return zlib.decompress(base64.b64decode("".join(text)))


# ---------------------------------------------------------------------------
# round trips

@pytest.mark.parametrize("name", DTYPES)
def test_every_dtype_round_trips(name):
    t = _sample(name)
    out = _roundtrip({"t": t, "scalar": _sample(name, ()), "empty": _sample(name, (0, 3))})
    for key, ref in [("t", t), ("scalar", _sample(name, ())), ("empty", _sample(name, (0, 3)))]:
        assert _equal(out[key], ref), key
    assert out["scalar"].shape == ()
    assert out["empty"].shape == (0, 3)


def test_path_pathlib_and_file_objects(tmp_path):
    t = ember.arange(5.0)
    save(t, str(tmp_path / "a.pt"))
    save(t, tmp_path / "b.pt")
    with open(tmp_path / "c.pt", "wb") as f:
        save(t, f)
    for name in ("a.pt", "b.pt", "c.pt"):
        assert _equal(load(tmp_path / name), t)
        assert _equal(load(str(tmp_path / name)), t)
        with open(tmp_path / name, "rb") as f:
            assert _equal(load(f), t)


def test_nested_containers_round_trip():
    w = ember.ones(2, 2)
    obj = {
        "list": [1, 2.5, "three", None, True, b"bytes", 3 + 4j, w],
        "tuple": (w, (1, (2, [3]))),
        "ordered": collections.OrderedDict([("b", 1), ("a", w)]),
        "set": {1, 2}, "frozenset": frozenset({"x"}), "bytearray": bytearray(b"ab"),
        "dtype": ember.float16, "device": ember.device("cpu"), "size": w.shape,
        "int": 2**70, "neg": -5, "float": float("inf"), "none": None,
        7: "int key", ("tuple", "key"): 1,
    }
    out = _roundtrip(obj)
    assert set(out) == set(obj)
    assert out["list"][:7] == obj["list"][:7]
    assert _equal(out["list"][7], w)
    assert out["tuple"][1] == (1, (2, [3]))
    assert type(out["ordered"]) is collections.OrderedDict and list(out["ordered"]) == ["b", "a"]
    assert out["set"] == {1, 2} and out["frozenset"] == frozenset({"x"})
    assert out["bytearray"] == bytearray(b"ab")
    assert out["dtype"] is ember.float16
    assert out["device"] == ember.device("cpu")
    assert type(out["size"]) is ember.Size and out["size"] == (2, 2)
    assert out["int"] == 2**70 and out["neg"] == -5 and out["float"] == float("inf")
    assert out[7] == "int key" and out[("tuple", "key")] == 1
    # one tensor object saved in four places comes back as one object
    assert out["list"][7] is out["tuple"][0] is out["ordered"]["a"]


def _torch_like_model_state():
    """A state dict shaped like torch's ``nn.Sequential(Linear, BatchNorm1d).state_dict()``."""
    sd = collections.OrderedDict([
        ("0.weight", ember.randn(4, 3)), ("0.bias", ember.randn(4)),
        ("1.weight", ember.ones(4)), ("1.bias", ember.zeros(4)),
        ("1.running_mean", ember.zeros(4)), ("1.running_var", ember.ones(4)),
        ("1.num_batches_tracked", ember.tensor(0)),
    ])
    sd._metadata = collections.OrderedDict([("", {"version": 1}), ("0", {"version": 1}),
                                            ("1", {"version": 2})])
    return sd


def _torch_like_adam_state():
    """Shaped like ``torch.optim.Adam(...).state_dict()`` after one step."""
    return {
        "state": {i: {"step": ember.tensor(1.0), "exp_avg": ember.randn(*shape),
                      "exp_avg_sq": ember.rand(*shape)}
                  for i, shape in enumerate([(4, 3), (4,)])},
        "param_groups": [{"lr": 0.001, "betas": (0.9, 0.999), "eps": 1e-08, "weight_decay": 0,
                          "amsgrad": False, "maximize": False, "foreach": None,
                          "capturable": False, "differentiable": False, "fused": None,
                          "decoupled_weight_decay": False, "params": [0, 1]}],
    }


def test_model_state_dict_keeps_order_and_metadata(tmp_path):
    sd = _torch_like_model_state()
    save(sd, tmp_path / "m.pt")
    out = load(tmp_path / "m.pt")
    assert type(out) is collections.OrderedDict
    assert list(out) == list(sd)
    assert out._metadata == sd._metadata
    for k in sd:
        assert _equal(out[k], sd[k]), k
    assert out["1.num_batches_tracked"].dtype == ember.int64


def test_optimizer_state_dict_round_trips(tmp_path):
    sd = _torch_like_adam_state()
    save(sd, tmp_path / "o.pt")
    out = load(tmp_path / "o.pt")
    assert out["param_groups"] == sd["param_groups"]
    assert set(out["state"]) == {0, 1}
    for i in (0, 1):
        for k, v in sd["state"][i].items():
            assert _equal(out["state"][i][k], v)


def test_requires_grad_is_kept_on_leaves():
    x = ember.ones(3, requires_grad=True)
    out = _roundtrip({"x": x, "y": x * 2, "z": ember.ones(2)})
    assert out["x"].requires_grad and out["x"].is_leaf
    assert out["y"].requires_grad and out["y"].is_leaf  # as torch: a leaf that requires grad
    assert not out["z"].requires_grad


def _nn():
    nn = pytest.importorskip("ember.nn")
    if not hasattr(nn, "Parameter"):
        pytest.skip("ember.nn.Parameter is not there yet")
    return nn


def test_parameters_round_trip_as_parameters():
    nn = _nn()
    p = nn.Parameter(ember.randn(2, 3))
    frozen = nn.Parameter(ember.ones(2), requires_grad=False)
    out = _roundtrip({"p": p, "frozen": frozen, "again": p})
    assert type(out["p"]) is nn.Parameter and out["p"].requires_grad
    assert type(out["frozen"]) is nn.Parameter and not out["frozen"].requires_grad
    assert _equal(out["p"].detach(), p.detach())
    assert out["again"] is out["p"]


def test_module_state_dict_round_trips_strictly():
    nn = _nn()
    if not hasattr(nn, "Linear"):
        pytest.skip("ember.nn.Linear is not there yet")
    model, other = nn.Linear(3, 2), nn.Linear(3, 2)
    other.load_state_dict(_roundtrip(model.state_dict()), strict=True)
    x = ember.randn(4, 3)
    assert np.array_equal(other(x).detach()._data, model(x).detach()._data)


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_pickle_protocols(protocol):
    obj = {"t": ember.arange(4).reshape(2, 2).t(), "s": "text", "b": b"x" * 300}
    buf = io.BytesIO()
    save(obj, buf, pickle_protocol=protocol)
    out = load(io.BytesIO(buf.getvalue()))
    assert _equal(out["t"], obj["t"]) and out["s"] == "text" and out["b"] == b"x" * 300


def test_bad_save_arguments(tmp_path):
    with pytest.raises(ValueError, match="pickle_protocol"):
        save(1, io.BytesIO(), pickle_protocol=1)
    with pytest.raises(NotImplementedError, match="zip"):
        save(1, io.BytesIO(), _use_new_zipfile_serialization=False)
    with pytest.raises(TypeError, match="path or a writable"):
        save(1, 42)
    with pytest.raises(TypeError, match="path or a readable"):
        load(42)


# ---------------------------------------------------------------------------
# views and storages

def test_views_are_saved_once_and_share_after_load():
    base = ember.arange(24.0).reshape(4, 6)
    views = {"base": base, "t": base.t(), "row": base[1], "cols": base[:, 1:5:2],
             "flat": base.view(-1)[3:9], "expand": base[0:1].expand(3, 6)}
    buf = io.BytesIO()
    save(views, buf)
    data_records = [n for n in _records(buf.getvalue()) if n.startswith("data/")]
    assert data_records == ["data/0"]
    assert _records(buf.getvalue())["data/0"].file_size == 24 * 4
    out = load(io.BytesIO(buf.getvalue()))
    for k, v in views.items():
        assert _equal(out[k], v), k
        assert out[k].stride() == v.stride(), k
    # they are views of one buffer again: a write through one shows in the others
    out["base"][1, 2] = -1.0
    assert out["t"][2, 1].item() == -1.0
    assert out["row"][2].item() == -1.0
    assert out["flat"][5].item() == -1.0


def test_a_slice_saves_its_whole_storage_unless_cloned():
    base = ember.arange(1000.0)
    one = io.BytesIO()
    save(base[:2], one)
    cloned = io.BytesIO()
    save(base[:2].clone(), cloned)
    assert _records(one.getvalue())["data/0"].file_size == 4000
    assert _records(cloned.getvalue())["data/0"].file_size == 8
    assert _equal(load(io.BytesIO(one.getvalue())), base[:2])


def test_distinct_tensors_get_distinct_storages():
    a, b = ember.ones(3), ember.ones(3)
    out = _roundtrip([a, b])
    out[0][0] = 5.0
    assert out[1][0].item() == 1.0


def test_dtype_views_of_one_buffer():
    raw = np.arange(8, dtype=np.float32)
    a = ember.from_numpy(raw)
    b = ember.from_numpy(raw.view(np.int32))
    out = _roundtrip({"a": a, "b": b})
    assert _equal(out["a"], a) and _equal(out["b"], b)


def test_negative_strides_are_saved_as_copies():
    arr = np.arange(6.0)[::-1]
    t = ember._C._core.make_tensor_from_array(arr)  # from_numpy refuses negative strides
    out = _roundtrip(t)
    assert np.array_equal(out._data, arr)


@settings(max_examples=40, deadline=None)
@given(arr=hnp.arrays(st.sampled_from([np.float32, np.int64, np.bool_, np.complex64]),
                      hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5)),
       step=st.integers(1, 3), transpose=st.booleans())
def test_hypothesis_views_round_trip(arr, step, transpose):
    base = ember.from_numpy(arr)
    view = base
    if arr.ndim:
        view = view[tuple(slice(None, None, step) for _ in range(arr.ndim))]
        if transpose:
            view = view.permute(*reversed(range(arr.ndim)))
    out = _roundtrip({"base": base, "view": view})
    assert np.array_equal(out["view"]._data, view._data, equal_nan=arr.dtype.kind in "fc")
    assert out["view"].shape == view.shape
    if view.numel() > 1:
        assert np.shares_memory(out["view"]._data, out["base"]._data)


# ---------------------------------------------------------------------------
# the file format

def test_archive_layout_is_pytorchs():
    buf = io.BytesIO()
    save({"a": ember.ones(3), "b": ember.zeros(5, dtype=ember.int8)}, buf)
    data = buf.getvalue()
    records = _records(data)
    assert list(records)[0] == "data.pkl"
    assert {"data.pkl", "byteorder", "version", ".format_version", ".storage_alignment",
            "data/0", "data/1", ".data/serialization_id"} == set(records)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert z.testzip() is None  # CRCs are right
        assert z.read("archive/byteorder") == sys.byteorder.encode()
        assert z.read("archive/version") == b"3\n"
        for info in z.infolist():
            assert info.compress_type == zipfile.ZIP_STORED
            header = data[info.header_offset:info.header_offset + 30]
            start = info.header_offset + 30 + int.from_bytes(header[26:28], "little") \
                + int.from_bytes(header[28:30], "little")
            assert start % 64 == 0, info.filename  # aligned: storages can be mapped
    # the pickle uses only what torch.load(weights_only=True) reads (protocol 2)
    pkl = zipfile.ZipFile(io.BytesIO(data)).read("archive/data.pkl")
    assert pkl[:2] == b"\x80\x02"
    assert b"ctorch._utils\n_rebuild_tensor_v2\n" in pkl
    assert b"ctorch\nFloatStorage\n" in pkl and b"ctorch\nCharStorage\n" in pkl


def test_zip64_records(monkeypatch):
    monkeypatch.setattr(_zip, "ZIP64_LIMIT", 100)
    monkeypatch.setattr(_zip, "ZIP64_COUNT_LIMIT", 3)
    obj = {"a": ember.arange(100.0), "b": ember.arange(7)}
    buf = io.BytesIO()
    save(obj, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        assert z.testzip() is None
    out = load(io.BytesIO(buf.getvalue()))
    assert _equal(out["a"], obj["a"]) and _equal(out["b"], obj["b"])


def test_loads_pytorch_zip_file_without_torch():
    out = load(io.BytesIO(_fixture(TORCH_ZIP)))
    _check_torch_fixture(out)


def test_loads_pytorch_legacy_file_without_torch():
    out = load(io.BytesIO(_fixture(TORCH_LEGACY)))
    _check_torch_fixture(out)


def _check_torch_fixture(out):
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert np.array_equal(out["w"]._data, w)
    assert np.array_equal(out["wt"]._data, w.T) and out["wt"].stride() == (1, 3)
    assert np.shares_memory(out["w"]._data, out["wt"]._data)
    assert out["i"].tolist() == [-1, 2] and out["i"].dtype == ember.int64
    assert out["h"].dtype == ember.float16 and out["h"].tolist() == [0.5]
    assert out["b"].tolist() == [True, False]
    assert out["c"].dtype == ember.complex64 and out["c"].tolist() == [1 + 2j]
    assert out["s"].dtype == ember.float64 and out["s"].shape == () and out["s"].item() == 7.0
    assert out["e"].shape == (0, 2)
    assert out["meta"] == {"lr": 0.1, "betas": (0.9, 0.999), "tag": "x", "none": None}
    if HAS_BF16:
        assert out["bf"].dtype == ember._dtype.bfloat16
        assert out["bf"]._data.astype(np.float32).tolist() == [1.5, -2.0]


def test_bfloat16_without_ml_dtypes_says_how_to_fix(monkeypatch):
    monkeypatch.delattr(_dtype, "bfloat16", raising=False)
    with pytest.raises(RuntimeError, match="pip install ml_dtypes"):
        load(io.BytesIO(_fixture(TORCH_ZIP)))


def test_untrusted_globals_listed_without_loading():
    class_name = f"{__name__}.Config"
    buf = io.BytesIO()
    save({"cfg": Config(3), "t": ember.ones(1)}, buf)
    assert get_unsafe_globals_in_checkpoint(io.BytesIO(buf.getvalue())) == [class_name]
    assert get_unsafe_globals_in_checkpoint(io.BytesIO(_fixture(TORCH_ZIP))) == []
    assert get_unsafe_globals_in_checkpoint(io.BytesIO(_fixture(TORCH_LEGACY))) == []


# ---------------------------------------------------------------------------
# safety: weights-only loading

class Config:
    """A user class: weights-only loading refuses it unless allow-listed."""

    def __init__(self, n):
        self.n = n

    def __eq__(self, other):
        return isinstance(other, Config) and other.n == self.n


class _RunsACommand:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


def test_a_pickle_that_runs_a_command_is_refused(tmp_path):
    marker = tmp_path / "pwned"
    evil = pickle.dumps({"weights": _RunsACommand(marker)}, protocol=2)
    system = f"{os.system.__module__}.system"  # posix.system
    for data in (_zip_with_pickle(evil), evil):  # zip checkpoint, and a bare pickle
        with pytest.raises(pickle.UnpicklingError, match=system.replace(".", r"\.")) as info:
            load(io.BytesIO(data))
        assert "weights_only=False" in str(info.value)
        # even an explicit allow-list cannot enable os.system
        with safe_globals([os.system]), pytest.raises(pickle.UnpicklingError, match="blocked"):
            load(io.BytesIO(data))
    assert not marker.exists()


@pytest.mark.parametrize("protocol", [2, 4])
def test_unknown_class_refused_until_allow_listed(protocol):
    buf = io.BytesIO()
    save({"cfg": Config(3)}, buf, pickle_protocol=protocol)
    data = buf.getvalue()
    with pytest.raises(pickle.UnpicklingError, match=rf"{__name__}\.Config.*add_safe_globals"):
        load(io.BytesIO(data))
    assert load(io.BytesIO(data), weights_only=False) == {"cfg": Config(3)}
    with safe_globals([Config]):
        assert Config in get_safe_globals()
        assert load(io.BytesIO(data)) == {"cfg": Config(3)}
    assert Config not in get_safe_globals()
    add_safe_globals([(Config, f"{__name__}.Config")])
    try:
        assert load(io.BytesIO(data)) == {"cfg": Config(3)}
    finally:
        clear_safe_globals()
    assert get_safe_globals() == []


def _pickle_ops(*ops: bytes) -> bytes:
    return b"\x80\x02" + b"".join(ops) + b"."


@pytest.mark.parametrize("payload,match", [
    # calling an allowed class's method through BUILD
    (_pickle_ops(b"ccollections\nCounter\n)R", b"}(X\x01\x00\x00\x00aK\x01ub"), "state"),
    # the copyreg extension registry
    (_pickle_ops(b"\x82\x01"), "EXT1"),
    # INST / OBJ build arbitrary classes in protocol 0/1
    (b"(ios\nsystem\nS'ls'\np0\n.", "INST"),
    # a persistent id that is not a storage
    (_pickle_ops(b"X\x04\x00\x00\x00evilQ"), "persistent"),
    # REDUCE on something that is not an allowed callable
    (_pickle_ops(b"ctorch\nFloatStorage\n)R"), "allowed callable"),
    # builtins.eval / getattr
    (_pickle_ops(b"cbuiltins\neval\nX\x01\x00\x00\x001\x85R"), "blocked"),
    (_pickle_ops(b"c__builtin__\ngetattr\n"), "blocked"),
    # a global imported through STACK_GLOBAL (protocol 4)
    (b"\x80\x04\x8c\x02os\x8c\x06system\x93.", "os.system"),
])
def test_weights_only_refuses(payload, match):
    with pytest.raises(pickle.UnpicklingError, match=match):
        load(io.BytesIO(_zip_with_pickle(payload)))


def test_weights_only_false_is_needed_for_custom_objects_but_torch_objects_stay_refused():
    data = _zip_with_pickle(_pickle_ops(b"ctorch.nn.modules.linear\nLinear\n"))
    with pytest.raises(pickle.UnpicklingError, match="cannot recreate"):
        load(io.BytesIO(data), weights_only=False)


def test_pickle_module_needs_weights_only_false():
    with pytest.raises(RuntimeError, match="pickle_module"):
        load(io.BytesIO(b""), pickle_module=pickle, weights_only=True)
    buf = io.BytesIO()
    save({"x": Config(1)}, buf)
    assert load(io.BytesIO(buf.getvalue()), pickle_module=pickle,
                weights_only=False) == {"x": Config(1)}
    # as in PyTorch 2.13: a pickle_module without weights_only means weights_only=False
    assert load(io.BytesIO(buf.getvalue()), pickle_module=pickle) == {"x": Config(1)}


# ---------------------------------------------------------------------------
# truncated and corrupt files

def _checkpoint_bytes() -> bytes:
    buf = io.BytesIO()
    save({"w": ember.arange(300.0).reshape(30, 10), "b": ember.ones(10),
          "meta": {"step": 3, "name": "run"}}, buf)
    return buf.getvalue()


def test_empty_and_garbage_files(tmp_path):
    (tmp_path / "empty.pt").write_bytes(b"")
    with pytest.raises(RuntimeError, match="empty"):
        load(tmp_path / "empty.pt")
    with pytest.raises((RuntimeError, pickle.UnpicklingError), match="not .*checkpoint"):
        load(io.BytesIO(b"hello, this is not a checkpoint at all"))
    with pytest.raises((RuntimeError, pickle.UnpicklingError)):
        load(io.BytesIO(pickle.dumps(12345)))


@pytest.mark.parametrize("fraction", [0.02, 0.3, 0.6, 0.95, 0.999])
def test_truncated_files_raise_clear_errors(fraction):
    data = _checkpoint_bytes()
    with pytest.raises(RuntimeError, match="truncated|not a valid checkpoint"):
        load(io.BytesIO(data[:int(len(data) * fraction)]))


def test_corrupt_tensor_bytes_are_detected():
    data = bytearray(_checkpoint_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        info = z.getinfo("archive/data/0")
    header = data[info.header_offset:info.header_offset + 30]
    start = info.header_offset + 30 + int.from_bytes(header[26:28], "little") \
        + int.from_bytes(header[28:30], "little")
    data[start + 100] ^= 0xFF
    with pytest.raises(RuntimeError, match="corrupt"):
        load(io.BytesIO(bytes(data)))


def test_out_of_bounds_tensor_metadata_is_refused():
    # a tensor claiming 1000 elements of a 4-element storage must not read past it
    pkl = (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(("
           b"X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x000"
           b"X\x03\x00\x00\x00cpuK\x04tQK\x00M\xe8\x03\x85K\x01\x85\x89"
           b"ccollections\nOrderedDict\n)RtR.")
    buf = io.BytesIO()
    writer = _zip.ZipWriter(buf)
    writer.write_record("data.pkl", pkl)
    writer.write_record("data/0", np.zeros(4, np.float32).view(np.uint8))
    writer.finish()
    with pytest.raises(RuntimeError, match="reaches element 999 of a storage of 4"):
        load(io.BytesIO(buf.getvalue()))


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_random_damage_never_crashes(data):
    blob = bytearray(_checkpoint_bytes())
    n = data.draw(st.integers(1, 8))
    for _ in range(n):
        i = data.draw(st.integers(0, len(blob) - 1))
        blob[i] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        blob = blob[:data.draw(st.integers(0, len(blob)))]
    try:
        load(io.BytesIO(bytes(blob)))
    except (RuntimeError, pickle.UnpicklingError):
        pass  # a clear error; anything else (or a crash) fails the test


# ---------------------------------------------------------------------------
# atomic writes

def test_a_failed_save_leaves_the_previous_file(tmp_path):
    path = tmp_path / "ckpt.pt"
    save({"v": ember.ones(3)}, path)
    with pytest.raises((pickle.PicklingError, AttributeError, TypeError)):
        save({"v": ember.zeros(3), "bad": lambda: 0}, path)
    assert _equal(load(path)["v"], ember.ones(3))
    assert os.listdir(tmp_path) == ["ckpt.pt"]  # no temporary file left behind


def test_save_keeps_file_mode_and_writes_through_symlinks(tmp_path):
    path = tmp_path / "ckpt.pt"
    save(ember.ones(1), path)
    os.chmod(path, 0o640)
    link = tmp_path / "latest.pt"
    link.symlink_to(path)
    save(ember.zeros(2), link)
    assert link.is_symlink()
    assert (os.stat(path).st_mode & 0o777) == 0o640
    assert _equal(load(path), ember.zeros(2))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_special_files_are_written_in_place(tmp_path):
    # replacing a device or FIFO by a regular file would be wrong: write into it instead
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    save({"t": ember.arange(4)}, fifo)
    reader.join(30)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert load(io.BytesIO(received[0]))["t"].tolist() == [0, 1, 2, 3]


_CHILD = textwrap.dedent("""
    import sys, time, zlib
    import numpy as np
    import ember
    from ember._serialization import _zip
    from ember.serialization import save

    def slow_crc32(data, value=0):  # slows the write down so that the kill lands in it
        time.sleep(0.02)
        return zlib.crc32(data, value)

    _zip._CHUNK = 1 << 20
    _zip.zlib = type("Z", (), {"crc32": staticmethod(slow_crc32)})
    big = ember.from_numpy(np.full(8 << 20, 2.0, dtype=np.float32))  # 32 MB
    print("saving", flush=True)
    save({"v": big}, sys.argv[1])
    print("done", flush=True)
""")


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")
def test_killed_mid_save_leaves_the_previous_checkpoint(tmp_path):
    path = tmp_path / "ckpt.pt"
    save({"v": ember.ones(4)}, path)
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(path)], stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline().strip() == "saving"
        deadline = time.monotonic() + 60
        tmp = []
        while time.monotonic() < deadline:
            tmp = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
            if tmp and tmp[0].stat().st_size > 4 << 20:  # a few MB of the new file written
                break
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert tmp, "the child never started writing"
    assert proc.returncode == -signal.SIGKILL
    assert tmp[0].exists()  # killed in the middle: the partial new file is only the temp file
    assert _equal(load(path)["v"], ember.ones(4))


# ---------------------------------------------------------------------------
# mmap

_MMAP_PROBE = """
import os, sys
import numpy as np
import ember

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

path = sys.argv[1]
n = 32 << 20  # 128 MB of float32
arr = np.ones(n, dtype=np.float32)
arr[-1] = 7.0
ember.save({"x": ember.from_numpy(arr), "y": ember.arange(3)}, path)
del arr
before = rss()
mapped = ember.load(path, mmap=True)
grown_mmap = rss() - before
assert mapped["x"][-1].item() == 7.0  # touches one page only
assert mapped["y"].tolist() == [0, 1, 2]
before = rss()
read = ember.load(path)
grown_read = rss() - before
assert read["x"][-1].item() == 7.0
print(grown_mmap, grown_read, n * 4)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux /proc")
def test_mmap_does_not_read_the_data(tmp_path):
    # in a fresh interpreter: in this one, memory that earlier tests freed (and malloc kept,
    # NOTE [ malloc and page faults ]) can take the read without the resident size growing
    out = subprocess.run([sys.executable, "-c", _MMAP_PROBE, str(tmp_path / "big.pt")],
                         capture_output=True, text=True, timeout=300, check=True)
    grown_mmap, grown_read, size = map(int, out.stdout.split())
    assert grown_read > 0.8 * size        # the measurement sees a real read
    assert grown_mmap < 0.05 * size       # while mapping reads (almost) nothing


def test_mmap_tensors_are_copy_on_write(tmp_path):
    path = tmp_path / "m.pt"
    base = ember.arange(10.0)
    save({"base": base, "view": base[2:5]}, path)
    out = load(path, mmap=True)
    out["base"][3] = -1.0
    assert out["view"][1].item() == -1.0  # views of one storage still share
    assert load(path)["base"][3].item() == 3.0  # the file is untouched


def test_mmap_needs_a_zip_file_path(tmp_path):
    with pytest.raises(ValueError, match="file path"):
        load(io.BytesIO(_checkpoint_bytes()), mmap=True)
    (tmp_path / "legacy.pt").write_bytes(_fixture(TORCH_LEGACY))
    with pytest.raises(RuntimeError, match="legacy"):
        load(tmp_path / "legacy.pt", mmap=True)


# ---------------------------------------------------------------------------
# map_location

def _saved_on(location: str) -> bytes:
    """A checkpoint whose storages say they were on ``location``."""
    table_add = _save.StorageTable.add

    def add(self, arr):
        pid, *rest = table_add(self, arr)
        return (pid[:3] + (location,) + pid[4:], *rest)

    _save.StorageTable.add = add
    try:
        buf = io.BytesIO()
        save({"a": ember.arange(3.0), "b": ember.ones(2, dtype=ember.int32)}, buf)
    finally:
        _save.StorageTable.add = table_add
    return buf.getvalue()


def _cuda_usable() -> bool:
    try:
        ember._backend.backend_for_device("cuda")
    except RuntimeError:
        return False
    return True


@pytest.mark.skipif(_cuda_usable(), reason="checks the error of a machine without CUDA")
def test_cuda_checkpoint_without_cuda_says_to_map_location():
    with pytest.raises(RuntimeError, match="map_location='cpu'"):
        load(io.BytesIO(_saved_on("cuda:0")))


@pytest.mark.parametrize("map_location", [
    "cpu", b"cpu", ember.device("cpu"), {"cuda:0": "cpu"}, {"cuda:0": ember.device("cpu")},
    lambda storage, loc: storage, lambda storage, loc: storage.cpu(),
    lambda storage, loc: None if loc != "cuda:0" else storage.to("cpu"),
])
def test_map_location_forms(map_location):
    out = load(io.BytesIO(_saved_on("cuda:0")), map_location=map_location)
    assert out["a"].tolist() == [0.0, 1.0, 2.0] and out["a"].device == ember.device("cpu")
    assert out["b"].dtype == ember.int32


def test_map_location_callable_sees_each_storage():
    seen = []

    def where(storage, location):
        seen.append((location, storage.nbytes(), storage.dtype, type(storage)))
        return storage

    load(io.BytesIO(_saved_on("cuda:1")), map_location=where)
    assert seen == [("cuda:1", 12, ember.float32, LoadedStorage),
                    ("cuda:1", 8, ember.int32, LoadedStorage)]


def test_map_location_errors():
    with pytest.raises(RuntimeError, match="'mps'"):
        load(io.BytesIO(_saved_on("mps")))
    with pytest.raises(TypeError, match="must return the storage"):
        load(io.BytesIO(_checkpoint_bytes()), map_location=lambda s, loc: "cpu")
    with pytest.raises(TypeError, match="map_location must be"):
        load(io.BytesIO(_checkpoint_bytes()), map_location=3.5)


# ---------------------------------------------------------------------------
# safetensors

def _safetensors():
    pytest.importorskip("safetensors")
    from ember.utils import safetensors as est

    return est


@pytest.mark.parametrize("name", [d for d in DTYPES if d != "complex128"])
def test_safetensors_round_trip(tmp_path, name):
    est = _safetensors()
    tensors = {"x": _sample(name), "scalar": _sample(name, ()), "empty": _sample(name, (0, 2))}
    est.save_file(tensors, tmp_path / "t.safetensors", metadata={"format": "pt"})
    for out in (est.load_file(tmp_path / "t.safetensors"),
                est.load(est.save(tensors)),
                load(tmp_path / "t.safetensors")):  # ember.load dispatches on the suffix
        assert set(out) == set(tensors)
        for k in tensors:
            assert _equal(out[k], tensors[k]), k


def test_safetensors_interchange_with_numpy_loader(tmp_path):
    est = _safetensors()
    import safetensors.numpy as snp

    t = ember.arange(12.0).reshape(3, 4)
    est.save_file({"t": t.t(), "i": ember.arange(3)}, tmp_path / "a.safetensors")
    arrays = snp.load_file(str(tmp_path / "a.safetensors"))
    assert np.array_equal(arrays["t"], t._data.T) and arrays["i"].tolist() == [0, 1, 2]
    snp.save_file({"n": np.arange(6, dtype=np.int16).reshape(2, 3)},
                  str(tmp_path / "b.safetensors"))
    out = est.load_file(tmp_path / "b.safetensors")
    assert out["n"].dtype == ember.int16 and out["n"].tolist() == [[0, 1, 2], [3, 4, 5]]
    out["n"][0, 0] = 9  # writable


def test_safetensors_errors(monkeypatch):
    est = _safetensors()
    with pytest.raises(TypeError, match="dict"):
        est.save([ember.ones(1)])
    with pytest.raises(TypeError, match="names must be str"):
        est.save({1: ember.ones(1)})
    with pytest.raises(TypeError, match="expected ember.Tensor"):
        est.save({"a": np.ones(1)})
    with pytest.raises(ValueError, match="complex128"):
        est.save({"a": ember.ones(1, dtype=ember.complex128)})
    with pytest.raises(TypeError, match="metadata"):
        est.save({"a": ember.ones(1)}, metadata={"a": 1})
    monkeypatch.setitem(sys.modules, "safetensors", None)
    with pytest.raises(ImportError, match="pip install safetensors"):
        est.save({"a": ember.ones(1)})

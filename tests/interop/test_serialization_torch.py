"""ember.save / ember.load against PyTorch 2.13: each reads what the other writes.

Skipped as a whole when torch is not installed (``nox -s interop`` installs it).
"""

from __future__ import annotations

import collections
import io
import pickle

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402
from ember import _dtype  # noqa: E402
from ember._serialization import _zip  # noqa: E402
from ember.serialization import load, save  # noqa: E402

HAS_BF16 = hasattr(_dtype, "bfloat16")
DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "bool", "complex64", "complex128"]


def _dtype_or_skip(name):
    if name == "bfloat16" and not HAS_BF16:
        pytest.skip("bfloat16 needs ml_dtypes")
    return getattr(torch, name), getattr(_dtype, name)


def _torch_sample(tdt, shape=(3, 4)):
    g = torch.Generator().manual_seed(0)
    if tdt == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if tdt.is_complex:
        return torch.randn(shape, dtype=tdt, generator=g)
    if tdt.is_floating_point:
        return (torch.randn(shape, generator=g) * 10).to(tdt)
    return torch.randint(-100 if tdt != torch.uint8 else 0, 100, shape, generator=g).to(tdt)


def _as_numpy(t) -> np.ndarray:
    """The values of an ember or torch tensor (bfloat16 widened to float32)."""
    if isinstance(t, torch.Tensor):
        t = t.detach()
        return (t.float() if t.dtype == torch.bfloat16 else t).numpy()
    arr = t._data
    return arr.astype(np.float32) if arr.dtype.name == "bfloat16" else arr


def _same(e, t) -> bool:
    return (tuple(e.shape) == tuple(t.shape) and str(t.dtype) == f"torch.{e.dtype.name}"
            and np.array_equal(_as_numpy(e), _as_numpy(t)))


def _torch_bytes(obj, **kwargs) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf, **kwargs)
    return buf.getvalue()


def _ember_bytes(obj, **kwargs) -> bytes:
    buf = io.BytesIO()
    save(obj, buf, **kwargs)
    return buf.getvalue()


def _torch_load(data: bytes, **kwargs):
    return torch.load(io.BytesIO(data), weights_only=True, **kwargs)


# ---------------------------------------------------------------------------
# torch.save -> ember.load

@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("legacy", [False, True], ids=["zip", "legacy"])
def test_ember_reads_torch_every_dtype(name, legacy):
    tdt, _ = _dtype_or_skip(name)
    x = _torch_sample(tdt)
    obj = {"x": x, "t": x.t(), "slice": x[1:, ::2], "zero_d": x[1, 2].clone(),
           "empty": x[:0], "cols": x[:, 1]}
    out = load(io.BytesIO(_torch_bytes(obj, _use_new_zipfile_serialization=not legacy)))
    for k, v in obj.items():
        assert _same(out[k], v), k
        if v.numel() > 1:
            assert out[k].stride() == v.stride(), k
    # views of one torch storage are views of one buffer again
    assert np.shares_memory(out["x"]._data, out["t"]._data)
    assert np.shares_memory(out["x"]._data, out["slice"]._data)


def test_ember_reads_torch_model_and_optimizer_state():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 3), torch.nn.BatchNorm2d(3),
                                torch.nn.Flatten(), torch.nn.Linear(12, 2))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    model(torch.randn(4, 2, 4, 4)).sum().backward()
    opt.step()
    sd, osd = model.state_dict(), opt.state_dict()
    out = load(io.BytesIO(_torch_bytes({"model": sd, "optimizer": osd, "epoch": 3})))
    assert out["epoch"] == 3
    assert type(out["model"]) is collections.OrderedDict and list(out["model"]) == list(sd)
    assert out["model"]._metadata == sd._metadata
    for k, v in sd.items():
        assert _same(out["model"][k], v), k
    assert out["optimizer"]["param_groups"] == osd["param_groups"]
    for i, state in osd["state"].items():
        for k, v in state.items():
            assert _same(out["optimizer"]["state"][i][k], v), (i, k)


def test_torch_parameters_and_requires_grad():
    p = torch.nn.Parameter(torch.randn(2, 3))
    obj = {"p": p, "g": torch.ones(2, requires_grad=True), "n": torch.ones(2)}
    out = load(io.BytesIO(_torch_bytes(obj)))
    assert out["p"].requires_grad and np.array_equal(out["p"]._data, p.detach().numpy())
    assert out["g"].requires_grad and not out["n"].requires_grad


def test_torch_conj_and_neg_views_are_materialized():
    c = torch.tensor([1 + 2j, 3 - 1j])
    obj = {"conj": c.conj(), "neg": torch._neg_view(torch.tensor([1.0, -2.0]))}
    assert obj["conj"].is_conj() and obj["neg"].is_neg()
    out = load(io.BytesIO(_torch_bytes(obj)))
    assert out["conj"].tolist() == [1 - 2j, 3 + 1j]
    assert out["neg"].tolist() == [-1.0, 2.0]


def test_torch_types_map_to_embers():
    obj = {"dtype": torch.float64, "device": torch.device("cpu"), "size": torch.Size([2, 3]),
           "bytes": b"\x00\xff", "set": {1, 2}, "complex": 1 - 2j}
    out = load(io.BytesIO(_torch_bytes(obj)))
    assert out["dtype"] is ember.float64
    assert out["device"] == ember.device("cpu")
    assert type(out["size"]) is ember.Size and out["size"] == (2, 3)
    assert out["bytes"] == b"\x00\xff" and out["set"] == {1, 2} and out["complex"] == 1 - 2j


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_torch_pickle_protocols(protocol):
    x = torch.arange(6.0).reshape(2, 3)
    out = load(io.BytesIO(_torch_bytes({"x": x, "s": "s"}, pickle_protocol=protocol)))
    assert _same(out["x"], x) and out["s"] == "s"


def test_torch_dtypes_ember_lacks_raise_clearly():
    with pytest.raises(RuntimeError, match="complex32"):
        load(io.BytesIO(_torch_bytes({"u": torch.ones(2, dtype=torch.complex32)})))
    # a dtype that is only a value (not a tensor's) loads as a placeholder
    out = load(io.BytesIO(_torch_bytes({"d": torch.complex32})))
    assert "complex32" in repr(out["d"])


Opt = collections.namedtuple("Opt", "a")


def test_torch_file_with_custom_class_is_refused_by_default():
    data = _torch_bytes({"opt": Opt(1)})
    with pytest.raises(pickle.UnpicklingError, match="weights_only=False"):
        load(io.BytesIO(data))


def test_mmap_torch_file(tmp_path):
    x = torch.randn(64, 64)
    torch.save({"x": x, "v": x[3:, 5]}, tmp_path / "t.pt")
    out = load(tmp_path / "t.pt", mmap=True)
    assert _same(out["x"], x) and _same(out["v"], x[3:, 5])


def test_map_location_on_torch_file():
    data = _torch_bytes({"x": torch.ones(2)})
    for where in ("cpu", ember.device("cpu"), torch.device("cpu"), {"cpu": "cpu"},
                  lambda s, loc: s):
        assert load(io.BytesIO(data), map_location=where)["x"].tolist() == [1.0, 1.0]


# ---------------------------------------------------------------------------
# ember.save -> torch.load(weights_only=True)

def _ember_sample(edt, shape=(3, 4)):
    return ember.tensor(_as_numpy(_torch_sample(getattr(torch, edt.name), shape))
                        .astype(edt.numpy))


@pytest.mark.parametrize("name", DTYPES)
def test_torch_reads_ember_every_dtype(name):
    _, edt = _dtype_or_skip(name)
    x = _ember_sample(edt)
    if name == "bfloat16":  # Tensor.expand needs Tensor.type(), which lacks bfloat16 so far
        expand = ember._C._core.make_tensor_from_array(np.broadcast_to(x._data[:1], (2, 4)))
    else:
        expand = x[:1].expand(2, 4)
    obj = {"x": x, "t": x.t(), "slice": x[1:, ::2], "zero_d": x[1, 2].clone(), "empty": x[:0],
           "cols": x[:, 1], "expand": expand}
    out = _torch_load(_ember_bytes(obj))
    for k, v in obj.items():
        assert _same(v, out[k]), k
        if v.numel() > 1:
            assert out[k].stride() == v.stride(), k
    ptr = out["x"].untyped_storage().data_ptr()
    for k in ("t", "slice", "cols", "expand"):
        assert out[k].untyped_storage().data_ptr() == ptr, k  # one storage in torch too


def test_torch_reads_ember_state_dicts():
    sd = collections.OrderedDict([("0.weight", ember.randn(4, 3)), ("0.bias", ember.zeros(4)),
                                  ("1.num_batches_tracked", ember.tensor(5))])
    sd._metadata = collections.OrderedDict([("", {"version": 1}), ("0", {"version": 1})])
    osd = {"state": {0: {"step": ember.tensor(2.0), "exp_avg": ember.ones(4, 3)}},
           "param_groups": [{"lr": 0.1, "betas": (0.9, 0.999), "params": [0, 1]}]}
    out = _torch_load(_ember_bytes({"model": sd, "optim": osd, "dtype": ember.float16,
                                    "device": ember.device("cpu"), "size": ember.Size([1, 2]),
                                    "misc": [None, True, 2.5, "s", b"b", {3}]}))
    assert type(out["model"]) is collections.OrderedDict and list(out["model"]) == list(sd)
    assert out["model"]._metadata == sd._metadata
    for k, v in sd.items():
        assert _same(v, out["model"][k]), k
    assert out["optim"]["param_groups"] == osd["param_groups"]
    assert _same(osd["state"][0]["exp_avg"], out["optim"]["state"][0]["exp_avg"])
    assert out["dtype"] is torch.float16 and out["device"] == torch.device("cpu")
    assert out["size"] == torch.Size([1, 2]) and type(out["size"]) is torch.Size
    assert out["misc"] == [None, True, 2.5, "s", b"b", {3}]


def test_torch_loads_ember_state_dict_into_a_torch_model():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    ember_sd = load(io.BytesIO(_torch_bytes(model.state_dict())))
    for v in ember_sd.values():
        v.add_(1) if v.is_floating_point() else None
    result = model.load_state_dict(_torch_load(_ember_bytes(ember_sd)), strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    assert torch.equal(model[0].bias, torch.from_numpy(ember_sd["0.bias"]._data))


def test_requires_grad_reaches_torch():
    x = ember.ones(2, requires_grad=True)
    out = _torch_load(_ember_bytes({"x": x, "n": ember.ones(2)}))
    assert out["x"].requires_grad and out["x"].is_leaf and not out["n"].requires_grad


def test_torch_mmap_and_offset_calculation_read_ember_files(tmp_path, monkeypatch):
    from torch.utils.serialization import config

    x = ember.randn(100, 7)
    save({"x": x, "i": ember.arange(5), "t": x.t()}, tmp_path / "e.pt")
    out = torch.load(tmp_path / "e.pt", mmap=True, weights_only=True)
    assert _same(x, out["x"]) and _same(x.t(), out["t"])
    # torch's reader can compute record offsets from the layout alone: ours is miniz's
    monkeypatch.setenv("TORCH_SERIALIZATION_DEBUG", "1")  # asserts the computed offsets
    with config.patch({"load.calculate_storage_offsets": True}):
        out = torch.load(tmp_path / "e.pt", mmap=True, weights_only=True)
    assert _same(ember.arange(5), out["i"])


def test_torch_reads_ember_zip64_records(monkeypatch):
    monkeypatch.setattr(_zip, "ZIP64_LIMIT", 100)
    monkeypatch.setattr(_zip, "ZIP64_COUNT_LIMIT", 3)
    obj = {"a": ember.arange(100.0), "b": ember.arange(7)}
    out = _torch_load(_ember_bytes(obj))
    assert _same(obj["a"], out["a"]) and _same(obj["b"], out["b"])


def test_round_trip_torch_ember_torch():
    x = torch.randn(5, 6)
    obj = {"x": x, "v": x[:, 2:], "h": torch.ones(3, dtype=torch.float16)}
    back = _torch_load(_ember_bytes(load(io.BytesIO(_torch_bytes(obj)))))
    for k, v in obj.items():
        assert torch.equal(back[k], v) and back[k].stride() == v.stride(), k
    assert back["x"].untyped_storage().data_ptr() == back["v"].untyped_storage().data_ptr()


# ---------------------------------------------------------------------------
# safetensors

@pytest.mark.parametrize("name", [d for d in DTYPES if d != "complex128"])
def test_safetensors_interchange_with_torch(tmp_path, name):
    pytest.importorskip("safetensors")
    import safetensors.torch as sft

    from ember.utils import safetensors as est

    tdt, edt = _dtype_or_skip(name)
    x = _torch_sample(tdt)
    sft.save_file({"x": x, "col": x[:, 1].contiguous()}, str(tmp_path / "t.safetensors"))
    out = est.load_file(tmp_path / "t.safetensors")
    assert _same(out["x"], x) and _same(out["col"], x[:, 1])
    e = _ember_sample(edt)
    est.save_file({"e": e, "et": e.t()}, tmp_path / "e.safetensors")
    back = sft.load_file(str(tmp_path / "e.safetensors"))
    assert _same(e, back["e"]) and _same(e.t(), back["et"])
    assert _same(e, sft.load(est.save({"e": e}))["e"])


# ---------------------------------------------------------------------------
# ember.nn modules and optimizers (when they exist)

def test_torch_state_dict_loads_into_ember_model_strictly():
    nn = pytest.importorskip("ember.nn")
    if not hasattr(nn, "Linear"):
        pytest.skip("ember.nn.Linear is not there yet")
    torch.manual_seed(0)
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    emodel = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    emodel.load_state_dict(load(io.BytesIO(_torch_bytes(tmodel.state_dict()))), strict=True)
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    expected = tmodel(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(emodel(ember.tensor(x)).detach().numpy(), expected, rtol=1e-5,
                               atol=1e-6)
    back = _torch_load(_ember_bytes(emodel.state_dict()))
    tmodel.load_state_dict(back, strict=True)


def test_optimizer_state_dict_round_trips_through_torch(tmp_path):
    """A torch Adam checkpoint resumes in ember and gives torch's next step, and back."""
    nn = pytest.importorskip("ember.nn")
    torch.manual_seed(0)
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    topt = torch.optim.Adam(tmodel.parameters(), lr=0.05, betas=(0.8, 0.99), weight_decay=0.01)
    x = torch.randn(6, 3)
    for _ in range(2):
        topt.zero_grad()
        tmodel(x).pow(2).mean().backward()
        topt.step()
    torch.save({"model": tmodel.state_dict(), "optim": topt.state_dict()}, tmp_path / "t.pt")

    emodel = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    eopt = ember.optim.Adam(emodel.parameters(), lr=1.0)
    ckpt = load(tmp_path / "t.pt")
    emodel.load_state_dict(ckpt["model"], strict=True)
    eopt.load_state_dict(ckpt["optim"])
    assert eopt.param_groups[0]["lr"] == 0.05 and eopt.param_groups[0]["betas"] == (0.8, 0.99)
    ex = ember.tensor(x.numpy())
    for m, opt, inp in ((tmodel, topt, x), (emodel, eopt, ex)):
        opt.zero_grad()
        m(inp).pow(2).mean().backward()
        opt.step()
    for (k, tv), ev in zip(tmodel.state_dict().items(), emodel.state_dict().values()):
        np.testing.assert_allclose(ev.numpy(), tv.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)

    # and back: ember's checkpoint resumes in torch
    save({"model": emodel.state_dict(), "optim": eopt.state_dict()}, tmp_path / "e.pt")
    back = torch.load(tmp_path / "e.pt", weights_only=True)
    tmodel2 = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    topt2 = torch.optim.Adam(tmodel2.parameters())
    tmodel2.load_state_dict(back["model"], strict=True)
    topt2.load_state_dict(back["optim"])
    for m, opt, inp in ((tmodel2, topt2, x), (emodel, eopt, ex)):
        opt.zero_grad()
        m(inp).pow(2).mean().backward()
        opt.step()
    for (k, tv), ev in zip(tmodel2.state_dict().items(), emodel.state_dict().values()):
        np.testing.assert_allclose(ev.numpy(), tv.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)


def test_torch_cnn_checkpoint_loads_into_ember_and_back(tmp_path):
    """A torch checkpoint of a conv net with BatchNorm (buffers, num_batches_tracked) loads
    into the same ember net with strict=True and gives torch's outputs, in eval and train;
    ember's state dict loads back into torch."""
    nn = pytest.importorskip("ember.nn")

    def net(lib):
        m = lib.nn
        return m.Sequential(m.Conv2d(3, 8, 3, padding=1), m.BatchNorm2d(8), m.ReLU(),
                            m.MaxPool2d(2), m.Conv2d(8, 4, 3, groups=2), m.Flatten(),
                            m.Linear(16, 5), m.LayerNorm(5))

    torch.manual_seed(0)
    tmodel = net(torch)
    x = torch.randn(2, 3, 8, 8)
    tmodel(x)  # one training step's running statistics
    torch.save(tmodel.state_dict(), tmp_path / "cnn.pt")
    emodel = net(ember)
    result = emodel.load_state_dict(load(tmp_path / "cnn.pt"), strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    assert list(emodel.state_dict()) == list(tmodel.state_dict())
    ex = ember.tensor(x.numpy())
    for mode in ("eval", "train"):
        getattr(tmodel, mode)(), getattr(emodel, mode)()
        np.testing.assert_allclose(emodel(ex).detach().numpy(), tmodel(x).detach().numpy(),
                                   rtol=1e-4, atol=1e-5, err_msg=mode)
    save(emodel.state_dict(), tmp_path / "back.pt")
    tmodel2 = net(torch)
    tmodel2.load_state_dict(torch.load(tmp_path / "back.pt", weights_only=True), strict=True)
    for (k, a), b in zip(tmodel2.state_dict().items(), emodel.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)
    assert nn is ember.nn

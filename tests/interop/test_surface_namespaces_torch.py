"""The runtime namespaces against PyTorch 2.13: torch.cuda, accelerator, backends, amp, cpu,
hub, nn.parallel, onnx, fx and the top-level flag functions, name by name and signature by
signature; the answers without a GPU; autocast's numbers and GradScaler's scale sequence;
checkpoints with NumPy objects and the weights_only environment variables."""

import importlib
import inspect
import io
import types
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402

# The names left out, each with its reason (the rest must exist at the same path).
EXCLUDED = {
    "cuda": {
        "jiterator": "run-time compiled elementwise kernels from C++ strings: no CuPy equivalent "
                     "wired yet",
        "nccl": "collectives: the distributed issue", "sparse": "sparse layouts are excluded",
        "tunable": "TunableOp (GEMM autotuning of PyTorch's ATen kernels)",
    },
    "backends": {n: "backend ember does not have" for n in (
        "cusparselt", "kleidiai", "miopen", "nnpack", "python_native", "quantized", "xnnpack",
        "m")}
    | {"fp32_precision": "ATen's per-backend fp32 precision tree (set_float32_matmul_precision "
                         "is there)"},
    "backends.cudnn": {"fp32_precision": "ATen's per-backend fp32 precision tree",
                       "depthwise_kernel": "ATen cuDNN depthwise selection", "m": "internal"},
    "backends.mkldnn": {"fp32_precision": "ATen's per-backend fp32 precision tree",
                        "m": "internal"},
    "backends.opt_einsum": {"m": "internal"},
}

MODULES = ["cuda", "cuda.amp", "cuda.memory", "cuda.random", "cuda.streams", "cuda.graphs",
           "cuda.nvtx", "cuda.profiler", "accelerator", "accelerator.memory", "amp", "backends",
           "backends.cudnn", "backends.cuda", "backends.mps", "backends.cpu", "backends.mkl",
           "backends.mkldnn", "backends.openmp", "backends.opt_einsum", "cpu", "cpu.amp", "hub",
           "nn.parallel", "onnx", "fx"]

TOP = ["use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
       "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
       "get_deterministic_debug_mode", "set_float32_matmul_precision",
       "get_float32_matmul_precision", "set_flush_denormal", "set_warn_always",
       "is_warn_always_enabled", "has_lapack", "has_mkl", "has_openmp", "has_spectral",
       "is_vulkan_available", "get_device_module", "set_num_threads", "get_num_threads",
       "set_num_interop_threads", "get_num_interop_threads", "init_num_threads", "compile",
       "autocast", "Stream", "Event", "get_autocast_dtype", "set_autocast_dtype",
       "is_autocast_enabled", "set_autocast_enabled", "get_autocast_cpu_dtype",
       "set_autocast_cpu_dtype", "get_autocast_gpu_dtype", "set_autocast_gpu_dtype",
       "is_autocast_cpu_enabled", "set_autocast_cpu_enabled", "is_autocast_cache_enabled",
       "set_autocast_cache_enabled", "clear_autocast_cache", "autocast_increment_nesting",
       "autocast_decrement_nesting", "get_autocast_ipu_dtype", "is_autocast_ipu_enabled",
       "get_autocast_xla_dtype", "is_autocast_xla_enabled", "set_autocast_ipu_dtype",
       "set_autocast_ipu_enabled", "set_autocast_xla_dtype", "set_autocast_xla_enabled"]

TENSOR_ATTRS = ["is_xpu", "is_mps", "is_meta", "is_sparse", "is_quantized", "is_nested",
                "is_mkldnn", "is_vulkan", "is_ipu", "is_maia", "is_mtia", "pin_memory",
                "is_pinned", "record_stream"]


def _public(mod) -> list[str]:
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [n for n in dir(mod) if not n.startswith("_") and not (
            isinstance(getattr(mod, n, None), types.ModuleType)
            and not getattr(mod, n).__name__.startswith(mod.__name__))]
        if type(mod) is not types.ModuleType:  # PyTorch's PropModule: its properties too
            names += [n for n in vars(type(mod)) if not n.startswith("_")]
    return sorted(set(names))


def _modules():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in MODULES:
            yield path, importlib.import_module("torch." + path), \
                importlib.import_module("ember." + path)


def test_every_name_is_there_or_excluded_with_a_reason(capsys):
    rows, missing = [], []
    for path, t, e in _modules():
        names = _public(t)
        excluded = EXCLUDED.get(path, {})
        absent = [n for n in names if not hasattr(e, n) and n not in excluded]
        missing += [f"{path}.{n}" for n in absent]
        rows.append(f"{path:22s} {len(names) - len(absent) - len(excluded):4d} present "
                    f"{len(excluded):3d} excluded {len(names):4d} names")
        stale = [n for n in excluded if hasattr(e, n)]
        assert not stale, f"{path}: excluded but present: {stale}"
    with capsys.disabled():
        print("\n" + "\n".join(rows))
    assert not missing, missing
    assert [n for n in TOP if not hasattr(ember, n)] == []
    assert [a for a in TENSOR_ATTRS if not hasattr(ember.Tensor, a)] == []


def _comparable(default):
    if default is inspect.Parameter.empty or isinstance(default, (bool, int, float, str,
                                                                  type(None))):
        return default
    return repr(default).replace("torch", "ember")


def _signature(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


# Signatures that differ on purpose.
SIGNATURE_EXCEPTIONS = {
    "cpu.amp.autocast": "dtype=None means bfloat16 (optional ml_dtypes: not at import)",
    "cuda.amp.custom_fwd": "PyTorch's is a deprecated wrapper with (fwd=None, *, cast_inputs)",
    "cuda.Stream": "PyTorch's takes **kwargs on __new__", "cuda.ExternalStream": "same",
    "cuda.Event": "PyTorch's takes *args, **kwargs on __new__",
    "cuda.streams.Stream": "same", "cuda.streams.ExternalStream": "same",
    "cuda.streams.Event": "same", "accelerator.Graph": "PyTorch's pool is a handle tuple",
    "cuda.MemPool": "not available (raises)", "cuda.memory.MemPool": "same",
    "cuda.CUDAPluggableAllocator": "not available (raises)",
    "cuda.memory.CUDAPluggableAllocator": "same", "cuda.GreenContext": "not available",
    "nn.parallel.DistributedDataParallel": "not available yet (raises)",
    "cuda.device_of": "same arguments; PyTorch's is a subclass too",
}


def test_signatures_match():
    bad = []
    for path, t, e in _modules():
        for n in _public(t):
            q = f"{path}.{n}"
            if q in SIGNATURE_EXCEPTIONS or not hasattr(e, n):
                continue
            tf, ef = getattr(t, n), getattr(e, n)
            if not callable(tf) or isinstance(tf, types.ModuleType):
                continue
            if inspect.isclass(tf):
                tf, ef = tf.__init__, getattr(ef, "__init__", ef)
            ts, es = _signature(tf), _signature(ef)
            if ts is None or es is None or "args" in ts.parameters and len(ts.parameters) <= 3:
                continue
            tp = [(p.name, _comparable(p.default)) for p in ts.parameters.values()]
            ep = [(p.name, _comparable(p.default)) for p in es.parameters.values()]
            if tp != ep:
                bad.append(f"{q}: torch{ts} ember{es}")
    for n in TOP:
        ts, es = _signature(getattr(torch, n)), _signature(getattr(ember, n))
        if ts is not None and es is not None and not inspect.isclass(getattr(torch, n)):
            tp = [(p.name, _comparable(p.default)) for p in ts.parameters.values()]
            ep = [(p.name, _comparable(p.default)) for p in es.parameters.values()]
            if tp != ep:
                bad.append(f"{n}: torch{ts} ember{es}")
    assert not bad, "\n".join(bad)


def _has_cupy():
    try:
        import cupy  # noqa: F401
    except ImportError:
        return False
    return True


CALLS = ["current_device", "synchronize", "get_device_name", "get_device_properties",
         "get_device_capability", "mem_get_info", "init", "initial_seed", "get_rng_state",
         "ipc_collect", "cudart", "current_stream", "default_stream", "get_sync_debug_mode",
         "current_blas_handle", "get_per_process_memory_fraction"]
VALUES = ["is_available", "device_count", "is_initialized", "get_arch_list", "get_gencode_flags",
          "is_bf16_supported", "is_tf32_supported", "memory_allocated", "max_memory_allocated",
          "memory_reserved", "max_memory_reserved", "get_rng_state_all", "host_memory_stats",
          "memory_stats", "memory_stats_as_nested_dict", "empty_cache", "seed", "seed_all"]


@pytest.mark.skipif(_has_cupy(), reason="CuPy is installed: ember has CUDA support")
def test_cpu_only_answers_are_torchs():
    for n in VALUES:
        got, want = getattr(ember.cuda, n)(), getattr(torch.cuda, n)()
        assert got == (dict(want) if isinstance(want, dict) else want), n
    for n in CALLS:
        with pytest.raises(AssertionError):
            getattr(torch.cuda, n)()
        with pytest.raises(AssertionError):
            getattr(ember.cuda, n)()
    for mod in (torch, ember):
        mod.cuda.manual_seed(1)
        mod.cuda.manual_seed_all(1)
        with pytest.raises(RuntimeError):
            mod.cuda.Stream()
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none"):
            mod.accelerator.synchronize()
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none"):
            mod.zeros(2).pin_memory()
        assert mod.zeros(2).is_pinned() is False
        assert mod.accelerator.current_accelerator() is None
        assert mod.accelerator.is_available() is False
        with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
            mod.cuda.set_device("cpu")


def test_flag_defaults_are_torchs():
    assert ember.backends.cudnn.enabled == torch.backends.cudnn.enabled
    assert ember.backends.cudnn.benchmark == torch.backends.cudnn.benchmark
    assert ember.backends.cudnn.deterministic == torch.backends.cudnn.deterministic
    assert ember.backends.cudnn.allow_tf32 == torch.backends.cudnn.allow_tf32
    assert ember.backends.cudnn.benchmark_limit == torch.backends.cudnn.benchmark_limit
    for name in ("allow_tf32", "allow_fp16_reduced_precision_reduction",
                 "allow_bf16_reduced_precision_reduction"):
        assert getattr(ember.backends.cuda.matmul, name) == getattr(torch.backends.cuda.matmul,
                                                                    name), name
    assert ember.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
    assert ember.are_deterministic_algorithms_enabled() == \
        torch.are_deterministic_algorithms_enabled()
    assert ember.get_deterministic_debug_mode() == torch.get_deterministic_debug_mode()
    assert ember.is_warn_always_enabled() == torch.is_warn_always_enabled()
    assert ember.backends.mps.is_available() == torch.backends.mps.is_available()
    assert ember.backends.cpu.get_cpu_capability() == torch.backends.cpu.get_cpu_capability()
    assert ember.get_autocast_dtype("cpu") == ember.bfloat16 and \
        torch.get_autocast_dtype("cpu") == torch.bfloat16
    assert ember.cpu.device_count() == torch.cpu.device_count()
    assert ember.get_num_interop_threads() >= 1


def test_flag_functions_behave_as_torchs():
    for mod in (torch, ember):
        try:
            mod.use_deterministic_algorithms(True, warn_only=True)
            assert mod.get_deterministic_debug_mode() == 1
            mod.set_deterministic_debug_mode("error")
            assert mod.are_deterministic_algorithms_enabled()
            assert not mod.is_deterministic_algorithms_warn_only_enabled()
            with pytest.raises(TypeError):
                mod.use_deterministic_algorithms(1)
            with pytest.raises(RuntimeError, match="invalid value of debug_mode"):
                mod.set_deterministic_debug_mode("bad")
            mod.set_float32_matmul_precision("medium")
            assert mod.backends.cuda.matmul.allow_tf32 is True
        finally:
            mod.use_deterministic_algorithms(False)
            mod.set_float32_matmul_precision("highest")
        with pytest.raises(RuntimeError, match="set_num_threads expects a positive integer"):
            mod.set_num_threads(0)
        with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
            mod.get_device_module("xyz")
    assert ember.get_device_module("cpu").__name__ == "ember.cpu"


# -- autocast and GradScaler against torch ---------------------------------------------------

def _pair(shape, seed):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return ember.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def test_autocast_linear_and_conv_match_torch():
    ex, tx = _pair((8, 16), 0)
    ew, tw = _pair((4, 16), 1)
    eb, tb = _pair((4,), 2)
    with ember.autocast("cpu", dtype=ember.bfloat16):
        ey = ember.nn.functional.linear(ex, ew, eb)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        ty = torch.nn.functional.linear(tx, tw, tb)
    assert str(ey.dtype).split(".")[1] == str(ty.dtype).split(".")[1] == "bfloat16"
    np.testing.assert_allclose(ey.float().detach().numpy(), ty.float().detach().numpy(),
                               rtol=1.6e-2, atol=1e-2)
    ey.float().square().sum().backward()
    ty.float().square().sum().backward()
    for e, t in ((ex, tx), (ew, tw), (eb, tb)):
        assert e.grad.dtype == ember.float32 and t.grad.dtype == torch.float32
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=5e-2, atol=5e-2)
    ei, ti = _pair((2, 3, 8, 8), 3)
    ek, tk = _pair((4, 3, 3, 3), 4)
    with ember.autocast("cpu"):
        ec = ember.nn.functional.conv2d(ei, ek, padding=1)
        em = ember.matmul(ei, ei.transpose(-1, -2))
    with torch.autocast("cpu"):
        tc = torch.nn.functional.conv2d(ti, tk, padding=1)
        tm = torch.matmul(ti, ti.transpose(-1, -2))
    np.testing.assert_allclose(ec.float().detach().numpy(), tc.float().detach().numpy(),
                               rtol=1.6e-2, atol=2e-2)
    np.testing.assert_allclose(em.float().detach().numpy(), tm.float().detach().numpy(),
                               rtol=1.6e-2, atol=2e-2)
    with ember.autocast("cpu"):
        el = ember.nn.functional.cross_entropy(ey, ember.tensor([0, 1, 2, 3, 0, 1, 2, 3]))
    with torch.autocast("cpu"):
        tl = torch.nn.functional.cross_entropy(ty, torch.tensor([0, 1, 2, 3, 0, 1, 2, 3]))
    assert el.dtype == ember.float32 and tl.dtype == torch.float32
    np.testing.assert_allclose(el.item(), tl.item(), rtol=1e-3)


def test_grad_scaler_sequence_matches_torch():
    def run(mod):
        mod.manual_seed(0)
        model = mod.nn.Linear(3, 1)
        with mod.no_grad():
            model.weight.copy_(mod.tensor([[0.5, -0.25, 1.0]]))
            model.bias.zero_()
        opt = mod.optim.SGD(model.parameters(), lr=0.1)
        scaler = mod.amp.GradScaler("cpu", init_scale=2.0**4, growth_interval=2)
        scales = []
        for step in range(6):
            opt.zero_grad()
            loss = model(mod.ones(2, 3)).sum()
            scaler.scale(loss).backward()
            if step == 3:
                model.weight.grad[0, 0] = float("inf")
            scaler.step(opt)
            scaler.update()
            scales.append(scaler.get_scale())
        return scales, scaler.state_dict(), model.weight.detach().numpy().copy()

    es, esd, ew = run(ember)
    ts, tsd, tw = run(torch)
    assert es == ts and esd == tsd
    np.testing.assert_allclose(ew, tw, rtol=1e-6)


# -- loading ------------------------------------------------------------------------------------

def test_torch_checkpoint_with_numpy_objects_loads_with_the_same_safe_globals():
    obj = {"a": np.arange(4, dtype=np.float32), "step": np.int64(7), "w": torch.ones(2)}
    buf = io.BytesIO()
    torch.save(obj, buf)
    allowed = [np._core.multiarray._reconstruct, np.ndarray, np.dtype,
               np._core.multiarray.scalar, type(np.dtype(np.float32)), type(np.dtype(np.int64))]
    for mod in (torch, ember):
        with pytest.raises(Exception, match="numpy._core.multiarray._reconstruct"):
            mod.load(io.BytesIO(buf.getvalue()))
        with mod.serialization.safe_globals(allowed):
            got = mod.load(io.BytesIO(buf.getvalue()))
        np.testing.assert_array_equal(got["a"], obj["a"])
        assert got["step"] == 7 and got["w"].tolist() == [1.0, 1.0]


class Settings:
    def __init__(self, lr):
        self.lr = lr


def test_force_weights_only_environment_matches_torch(monkeypatch):
    buf = io.BytesIO()
    torch.save({"cfg": Settings(0.1)}, buf)
    data = buf.getvalue()
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    for mod in (torch, ember):
        with pytest.warns(UserWarning, match="TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"):
            assert mod.load(io.BytesIO(data))["cfg"].lr == 0.1
    monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "yes")
    for mod in (torch, ember):
        with pytest.raises(Exception, match="Settings"):
            mod.load(io.BytesIO(data), weights_only=False)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    for mod in (torch, ember):
        with pytest.raises(RuntimeError, match="Only one of"):
            mod.load(io.BytesIO(data))


def test_hub_loads_a_torch_checkpoint_by_url(tmp_path):
    torch.manual_seed(0)
    state = torch.nn.Linear(3, 2).state_dict()
    path = tmp_path / "linear.pth"
    torch.save(state, path)
    saved = ember.hub._hub_dir
    try:
        ember.hub.set_dir(tmp_path / "ember_hub")
        got = ember.hub.load_state_dict_from_url(path.as_uri(), progress=False, weights_only=True)
    finally:
        ember.hub._hub_dir = saved
    for k, v in state.items():
        np.testing.assert_array_equal(got[k].numpy(), v.numpy())


@pytest.mark.parametrize("actual, expected, kw", [
    ([1.0, 2.0], [1.00001, 2.0], {}), ([1.0, float("nan")], [1.0, float("nan")], {}),
    ([1.0], [1.01], {}), ([1.0], [1.01], {"rtol": 0.1, "atol": 0.0}), ([1.0], [1.001], {}),
])
def test_assert_allclose_agrees_with_torch(actual, expected, kw):
    def outcome(mod):
        try:
            mod.testing.assert_allclose(mod.tensor(actual), expected, **kw)
        except AssertionError:
            return False
        return True

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert outcome(ember) == outcome(torch)

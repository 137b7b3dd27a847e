"""Threads (threadpoolctl), determinism and precision flags, ember.backends, get_device_module,
compile, onnx/fx placeholders."""

import warnings

import numpy as np
import pytest

import ember
from ember._flags import FLAGS

threadpoolctl = pytest.importorskip("threadpoolctl")


@pytest.fixture
def saved_flags():
    saved = dict(FLAGS)
    yield
    FLAGS.clear()
    FLAGS.update(saved)


# -- threads ----------------------------------------------------------------------------------

def _limits(api):
    return {lib["num_threads"] for lib in threadpoolctl.threadpool_info() if lib["user_api"] == api}


def test_set_num_threads_limits_blas_and_openmp():
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        assert ember.get_num_threads() == 1
        assert _limits("blas") == {1}
        if ember.backends.openmp.is_available():
            assert _limits("openmp") == {1}
        x = ember.randn(64, 64)
        np.testing.assert_allclose((x @ x).numpy(), x.numpy() @ x.numpy(), rtol=1e-5)
        ember.set_num_threads(2)
        assert _limits("blas") == {2} and ember.get_num_threads() == 2
        ember.init_num_threads()
    finally:
        ember.set_num_threads(before)


def test_thread_count_errors():
    with pytest.raises(RuntimeError, match="expects a positive integer"):
        ember.set_num_threads(0)
    with pytest.raises(RuntimeError, match="expects an int, but got float"):
        ember.set_num_threads(1.5)
    assert ember.get_num_interop_threads() >= 1


def test_set_num_interop_threads_once(monkeypatch):
    from ember import _threads

    monkeypatch.setattr(_threads, "_state", {"num_threads": None, "interop": None,
                                              "interop_set": False})
    ember.set_num_interop_threads(3)
    assert ember.get_num_interop_threads() == 3
    with pytest.raises(RuntimeError, match="cannot set number of interop threads"):
        ember.set_num_interop_threads(2)


# -- determinism, precision, warnings, denormals ------------------------------------------------

def test_deterministic_algorithms(saved_flags):
    assert ember.are_deterministic_algorithms_enabled() is False
    ember.use_deterministic_algorithms(True)
    assert ember.are_deterministic_algorithms_enabled()
    assert not ember.is_deterministic_algorithms_warn_only_enabled()
    assert ember.get_deterministic_debug_mode() == 2
    with pytest.raises(RuntimeError, match="does not have a deterministic implementation"):
        ember._flags.alert_not_deterministic("some_op")
    ember.use_deterministic_algorithms(True, warn_only=True)
    assert ember.get_deterministic_debug_mode() == 1
    with pytest.warns(UserWarning, match="deterministic"):
        ember._flags.alert_not_deterministic("some_op")
    ember.set_deterministic_debug_mode("default")
    assert not ember.are_deterministic_algorithms_enabled()
    ember._flags.alert_not_deterministic("some_op")  # off: nothing
    ember.set_deterministic_debug_mode(2)
    assert ember.are_deterministic_algorithms_enabled()
    with pytest.raises(TypeError, match="must be bool"):
        ember.use_deterministic_algorithms(1)
    with pytest.raises(RuntimeError, match="expected one of `default`, `warn`, `error`"):
        ember.set_deterministic_debug_mode("bad")
    with pytest.raises(RuntimeError, match="expected 0, 1, or 2"):
        ember.set_deterministic_debug_mode(5)


def test_float32_matmul_precision(saved_flags):
    assert ember.get_float32_matmul_precision() == "highest"
    ember.set_float32_matmul_precision("high")
    assert ember.get_float32_matmul_precision() == "high"
    assert ember.backends.cuda.matmul.allow_tf32 is True
    ember.set_float32_matmul_precision("highest")
    assert ember.backends.cuda.matmul.allow_tf32 is False
    with pytest.warns(UserWarning, match="is not one of"):
        ember.set_float32_matmul_precision("bad")
    assert ember.get_float32_matmul_precision() == "highest"
    ember.backends.cuda.matmul.allow_tf32 = True
    assert ember.get_float32_matmul_precision() == "high"


def test_warn_always(saved_flags):
    assert ember.is_warn_always_enabled() is False
    ember.set_warn_always(True)
    assert ember.is_warn_always_enabled()


def test_flush_denormal():
    import platform

    denormal = ember.tensor([1e-39])
    ok = ember.set_flush_denormal(True)
    try:
        if platform.machine() == "x86_64":
            assert ok is True
            assert (denormal * 1.0).tolist() == [0.0]
    finally:
        ember.set_flush_denormal(False)
    assert (denormal * 1.0).tolist()[0] > 0.0


def test_build_queries():
    assert ember.has_lapack and ember.has_spectral
    assert ember.has_openmp is ember.backends.openmp.is_available()
    assert ember.has_mkl is False and ember.is_vulkan_available() is False
    with pytest.warns(UserWarning, match="deprecated"):
        assert ember.has_cudnn is False


# -- ember.backends -------------------------------------------------------------------------------

def test_cudnn_flags_are_stored_in_one_place(saved_flags):
    cudnn = ember.backends.cudnn
    assert cudnn.enabled and not cudnn.benchmark and not cudnn.deterministic and cudnn.allow_tf32
    cudnn.benchmark = True
    cudnn.deterministic = True
    assert FLAGS["cudnn_benchmark"] is True and FLAGS["cudnn_deterministic"] is True
    assert ember.backends.cudnn.benchmark is True
    with cudnn.flags(enabled=False, benchmark=False):
        assert cudnn.enabled is False and cudnn.benchmark is False
    assert cudnn.enabled is True and cudnn.benchmark is True
    assert cudnn.set_flags(_benchmark=False)[1] is True and cudnn.benchmark is False
    assert cudnn.is_available() is False and cudnn.version() is None
    import ember.backends.cudnn as imported

    assert imported is cudnn


def test_other_backends(saved_flags):
    b = ember.backends
    assert b.mps.is_available() is False and b.mps.is_built() is False
    assert b.cpu.get_cpu_capability() in ("DEFAULT", "AVX2", "AVX512")
    assert b.mkl.is_available() is False and b.mkldnn.is_available() is False
    assert isinstance(b.openmp.is_available(), bool)
    assert b.opt_einsum.enabled == b.opt_einsum.is_available()
    b.mkldnn.enabled = False
    assert FLAGS["mkldnn_enabled"] is False
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        b.cuda.matmul.foo = 1
    assert b.cuda.matmul.allow_fp16_reduced_precision_reduction is True
    assert b.cuda.preferred_linalg_library() == "default"
    with b.cuda.sdp_kernel(enable_flash=False):
        assert b.cuda.flash_sdp_enabled() is False
    assert b.cuda.flash_sdp_enabled() is True


# -- device modules, compile, onnx, fx --------------------------------------------------------

def test_get_device_module():
    assert ember.get_device_module("cpu") is ember.cpu
    assert ember.get_device_module(ember.device("cuda", 0)) is ember.cuda
    assert ember.get_device_module("cuda:1") is ember.cuda
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        ember.get_device_module("xyz")


def test_compile_wraps_the_model_and_runs_it(monkeypatch, tmp_path):
    # (tests/core/test_compile.py has the compiler's own tests)
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    model = ember.nn.Linear(3, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt = ember.compile(model, mode="max-autotune")
        assert opt._orig_mod is model
        x = ember.ones(4, 3)
        assert opt(x).tolist() == model(x).tolist()

        @ember.compile(fullgraph=True)
        def f(x):
            return x * 2

        assert f(ember.ones(2)).tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="Either mode or options"):
        ember.compile(model, mode="default", options={})


def test_onnx_export_needs_the_onnx_package(monkeypatch, tmp_path):
    import sys

    import ember.onnx

    monkeypatch.setitem(sys.modules, "onnx", None)  # as if it were not installed
    with pytest.raises(ImportError, match=r"ember\[onnx\]"):
        ember.onnx.export(ember.nn.Linear(2, 2), (ember.ones(1, 2),), tmp_path / "m.onnx")
    assert ember.onnx.is_in_onnx_export() is False
    assert not (tmp_path / "m.onnx").exists()


def test_testing_assert_allclose_deprecated_alias():
    from ember.testing import assert_allclose

    assert_allclose(ember.tensor([1.0, 2.0]), [1.00001, 2.0])          # float32 tolerance
    assert_allclose(ember.tensor([1.0, float("nan")]), [1.0, float("nan")])  # equal_nan=True
    assert_allclose(ember.tensor([1, 2]), ember.tensor([1.0, 2.0]))    # dtypes not compared
    with pytest.raises(AssertionError):
        assert_allclose(ember.tensor([1.0]), [1.01])
    with pytest.raises(AssertionError):
        assert_allclose(ember.tensor([1], dtype=ember.int64), [2])
    assert_allclose(ember.tensor([1.0]), [1.01], rtol=0.1, atol=0.0)

"""The rest of issue 15's surface against NumPy and closed forms: SyncBatchNorm's kernels
(CUDA-only in PyTorch, so checked here against batch norm's own forward and autograd), the
execution-trace observer and profiler queries."""

import json

import numpy as np
import pytest

import ember
import ember.nn.functional as F


def _x(shape=(4, 3, 5), seed=0):
    return ember.from_numpy(np.random.default_rng(seed).standard_normal(shape))


def test_batch_norm_stats_and_elemt_match_batch_norm():
    x = _x()
    w = ember.tensor([1.0, 2.0, -0.5], dtype=ember.float64)
    b = ember.tensor([0.1, 0.0, 0.3], dtype=ember.float64)
    mean, invstd = ember.batch_norm_stats(x, 1e-5)
    a = x.numpy()
    np.testing.assert_allclose(mean.numpy(), a.mean((0, 2)), rtol=1e-12)
    np.testing.assert_allclose(invstd.numpy(), 1 / np.sqrt(a.var((0, 2)) + 1e-5), rtol=1e-12)
    got = ember.batch_norm_elemt(x, w, b, mean, invstd, 1e-5)
    want = F.batch_norm(x, None, None, w, b, training=True, eps=1e-5)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


def test_gather_stats_combine_shards_and_update_running():
    x = _x((6, 3, 4), seed=1)
    shards = [x[:2], x[2:6]]
    stats = [ember.batch_norm_stats(s, 1e-5) for s in shards]
    mean = ember.stack([m for m, _ in stats])
    invstd = ember.stack([s for _, s in stats])
    counts = ember.tensor([2.0 * 4, 4.0 * 4], dtype=ember.float64)
    rm, rv = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    gm, gi = ember.batch_norm_gather_stats_with_counts(x, mean, invstd, rm, rv, 0.1, 1e-5,
                                                       counts)
    a = x.numpy()
    np.testing.assert_allclose(gm.numpy(), a.mean((0, 2)), rtol=1e-10)
    np.testing.assert_allclose(gi.numpy(), 1 / np.sqrt(a.var((0, 2)) + 1e-5), rtol=1e-10)
    np.testing.assert_allclose(rm.numpy(), 0.1 * a.mean((0, 2)), rtol=1e-10)
    np.testing.assert_allclose(rv.numpy(), 0.9 + 0.1 * a.var((0, 2), ddof=1), rtol=1e-10)
    # equal counts: batch_norm_gather_stats
    halves = [x[:3], x[3:]]
    st = [ember.batch_norm_stats(s, 1e-5) for s in halves]
    gm2, gi2 = ember.batch_norm_gather_stats(x, ember.stack([m for m, _ in st]),
                                             ember.stack([s for _, s in st]), None, None,
                                             0.1, 1e-5, 12)
    np.testing.assert_allclose(gm2.numpy(), gm.numpy(), rtol=1e-10)
    np.testing.assert_allclose(gi2.numpy(), gi.numpy(), rtol=1e-10)


def test_update_stats():
    x = _x(seed=2)
    rm, rv = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    m, v = ember.batch_norm_update_stats(x, rm, rv, 0.2)
    a = x.numpy()
    np.testing.assert_allclose(v.numpy(), a.var((0, 2)), rtol=1e-12)
    np.testing.assert_allclose(rv.numpy(), 0.8 + 0.2 * a.var((0, 2), ddof=1), rtol=1e-12)
    np.testing.assert_allclose(rm.numpy(), 0.2 * m.numpy(), rtol=1e-12)


def test_backward_reduce_and_elemt_match_autograd():
    x = _x(seed=3).requires_grad_(True)
    w = ember.tensor([1.0, 2.0, -0.5], dtype=ember.float64, requires_grad=True)
    b = ember.tensor([0.1, 0.0, 0.3], dtype=ember.float64, requires_grad=True)
    dy = _x(seed=4)
    F.batch_norm(x, None, None, w, b, training=True, eps=1e-5).backward(dy)
    xd = x.detach()
    mean, invstd = ember.batch_norm_stats(xd, 1e-5)
    sum_dy, sum_dy_xmu, gw, gb = ember.batch_norm_backward_reduce(dy, xd, mean, invstd,
                                                                  w.detach(), True, True, True)
    np.testing.assert_allclose(gw.numpy(), w.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(gb.numpy(), b.grad.numpy(), rtol=1e-10)
    count = ember.tensor([20], dtype=ember.int32)
    gx = ember.batch_norm_backward_elemt(dy, xd, mean, invstd, w.detach(), sum_dy, sum_dy_xmu,
                                         count)
    np.testing.assert_allclose(gx.numpy(), x.grad.numpy(), rtol=1e-8, atol=1e-12)
    none = ember.batch_norm_backward_reduce(dy, xd, mean, invstd, None, False, False, False)
    assert none == (None, None, None, None)


def test_execution_trace_observer(tmp_path):
    from ember.profiler import ExecutionTraceObserver

    path = tmp_path / "trace.json"
    et = ExecutionTraceObserver().register_callback(str(path))
    assert et.is_registered and not et.is_running()
    et.start()
    assert et.is_running()
    (ember.ones(2) + 1).sum()
    et.stop()
    et.unregister_callback()
    trace = json.loads(path.read_text())
    assert trace["schema"] == "1.1.1-chakra.0.0.4"
    names = [n["name"] for n in trace["nodes"]]
    assert names[-3:] == ["ember::ones", "ember::add", "ember::sum"]
    ids = {n["id"] for n in trace["nodes"]}
    assert all(n["ctrl_deps"] in ids | {0} for n in trace["nodes"])
    assert trace["nodes"][-1]["inputs"]["shapes"][0] == [2]
    assert et.get_output_file_path() == str(path)
    assert et.get_resources_dir() is None
    assert et.get_resources_dir(can_create=True).endswith("trace_resources")


def test_execution_trace_from_env(monkeypatch):
    from ember.profiler import ExecutionTraceObserver

    monkeypatch.delenv("ENABLE_PYTORCH_EXECUTION_TRACE", raising=False)
    assert ExecutionTraceObserver.build_execution_trace_obs_from_env() is None
    monkeypatch.setenv("ENABLE_PYTORCH_EXECUTION_TRACE", "1")
    et = ExecutionTraceObserver.build_execution_trace_obs_from_env()
    assert et.is_registered
    et.unregister_callback()


def test_profiler_queries():
    from ember.profiler import DeviceType, ProfilerActivity, kineto_available, supported_activities

    assert kineto_available() is False
    assert supported_activities() == {ProfilerActivity.CPU}
    assert DeviceType.CPU == 0 and DeviceType.CUDA == 1 and DeviceType.MTIA == 19


def test_fill_diagonal_grad_and_errors():
    x = ember.ones(3, 3, requires_grad=True)
    y = x * 2
    y.fill_diagonal_(0.0)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 2 * (1 - np.eye(3)))
    with pytest.raises(RuntimeError, match="equal length"):
        ember.zeros(2, 3, 4).fill_diagonal_(1.0)


# -- low-rank and LOBPCG -------------------------------------------------------------------

def test_svd_lowrank_reconstructs_low_rank():
    ember.manual_seed(0)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((30, 4)) @ rng.standard_normal((4, 20))
    for arr in (a, a.T):
        U, S, V = ember.svd_lowrank(ember.from_numpy(arr), q=6)
        assert U.shape == (arr.shape[0], 6) and V.shape == (arr.shape[1], 6)
        np.testing.assert_allclose(((U * S.unsqueeze(0)) @ V.T).numpy(), arr, atol=1e-10)
        np.testing.assert_allclose((U.T @ U).numpy(), np.eye(6), atol=1e-10)
        np.testing.assert_allclose(S.numpy()[:4], np.linalg.svd(arr, compute_uv=False)[:4],
                                   rtol=1e-10)


def test_pca_lowrank_variances():
    ember.manual_seed(1)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((50, 3)) @ rng.standard_normal((3, 8)) + 5.0
    U, S, V = ember.pca_lowrank(ember.from_numpy(a), q=3)
    c = a - a.mean(0)
    np.testing.assert_allclose(S.numpy(), np.linalg.svd(c, compute_uv=False)[:3], rtol=1e-8)
    np.testing.assert_allclose(((U * S.unsqueeze(0)) @ V.T).numpy(), c, atol=1e-8)
    _, S2, _ = ember.pca_lowrank(ember.from_numpy(a), q=4, center=False)  # rank 4 uncentered
    np.testing.assert_allclose(S2.numpy(), np.linalg.svd(a, compute_uv=False)[:4], rtol=1e-8)
    with pytest.raises(ValueError, match="q"):
        ember.pca_lowrank(ember.from_numpy(a), q=9)


def test_lobpcg_eigenpairs():
    ember.manual_seed(2)
    rng = np.random.default_rng(2)
    m = rng.standard_normal((40, 40))
    m = m @ m.T
    want = np.linalg.eigvalsh(m)
    E, X = ember.lobpcg(ember.from_numpy(m), k=3)
    np.testing.assert_allclose(E.numpy(), want[::-1][:3], rtol=1e-6)
    np.testing.assert_allclose(m @ X.numpy(), X.numpy() * E.numpy(), atol=1e-4 * want[-1])
    E, X = ember.lobpcg(ember.from_numpy(m), k=2, n=3, largest=False)
    np.testing.assert_allclose(E.numpy(), want[:2], rtol=1e-5, atol=1e-8)
    b = np.eye(40) + np.diag(rng.random(40))
    E, X = ember.lobpcg(ember.from_numpy(m), k=2, B=ember.from_numpy(b))
    lam = np.linalg.eigvals(np.linalg.solve(b, m)).real
    np.testing.assert_allclose(E.numpy(), np.sort(lam)[::-1][:2], rtol=1e-6)
    np.testing.assert_allclose(X.numpy().T @ b @ X.numpy(), np.eye(2), atol=1e-10)
    with pytest.raises(ValueError, match="3 x"):
        ember.lobpcg(ember.from_numpy(m[:5, :5]), k=2)


def test_scaled_grouped_mm_rowwise_against_numpy():
    # torch has no CPU kernel for scaled_grouped_mm: checked against the formula
    rng = np.random.default_rng(0)
    a = rng.standard_normal((32, 16)).astype(np.float32)
    b = rng.standard_normal((2, 16, 8)).astype(np.float32)
    sa = rng.random(32).astype(np.float32) + 0.5
    sb = rng.random((2, 8)).astype(np.float32) + 0.5
    ea = ember.from_numpy(a).to(ember.float8_e4m3fn)
    eb = ember.from_numpy(b).to(ember.float8_e4m3fn)
    out = F.scaled_grouped_mm(ea, eb, ember.from_numpy(sa), F.ScalingType.RowWise,
                              ember.from_numpy(sb), F.ScalingType.RowWise,
                              offs=ember.tensor([10, 32], dtype=ember.int32))
    af, bf = ea.float().numpy(), eb.float().numpy()
    want = np.concatenate([(af[:10] * sa[:10, None]) @ (bf[0] * sb[0]),
                           (af[10:] * sa[10:, None]) @ (bf[1] * sb[1])])
    assert out.dtype is ember.bfloat16
    np.testing.assert_allclose(out.float().numpy(), want, rtol=1e-2, atol=1e-2 * abs(want).max())
    one = ember.tensor(2.0)
    out = F.scaled_grouped_mm(ea, eb, one, F.ScalingType.TensorWise, one,
                              F.ScalingType.TensorWise, offs=ember.tensor([10, 32],
                                                                          dtype=ember.int32),
                              output_dtype=ember.float32)
    want = np.concatenate([4 * af[:10] @ bf[0], 4 * af[10:] @ bf[1]])
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError, match="TensorWise and RowWise"):
        F.scaled_grouped_mm(ea, eb, one, F.ScalingType.BlockWise1x32, one,
                            F.ScalingType.TensorWise, offs=ember.tensor([10, 32],
                                                                        dtype=ember.int32))

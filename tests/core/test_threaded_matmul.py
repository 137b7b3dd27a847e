"""Large matrix products in pieces on ember's threads (NOTE [ Threaded GEMM ] in
ember._backend._cpu_matmul): the threshold is lowered so that small products take the
threaded code, which must give NumPy's product (to rounding) for every layout, and must be
left out where it cannot apply."""

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember._backend import _blas, _cpu_matmul, _cpu_threads


@pytest.fixture
def pieces(monkeypatch):
    """Two threads, products threaded from 1 multiply-add on; yields the list of piece
    counts handed to the pool."""
    if _blas._set_threads_local is None:
        pytest.skip("this NumPy's BLAS has no openblas_set_num_threads_local")
    calls = []
    run = _cpu_threads._pool.run

    def spy(fns):
        calls.append(len(fns))
        return run(fns)

    monkeypatch.setattr(_cpu_threads._pool, "run", spy)
    monkeypatch.setattr(_blas, "SERIAL_MAX_WORK", 1)
    monkeypatch.setattr(_blas, "THREADED_MIN_WORK", 1)
    old = ember.get_num_threads()
    ember.set_num_threads(2)
    try:
        yield calls
    finally:
        ember.set_num_threads(old)


def _rand(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _close(got, expect):
    assert got.shape == expect.shape and got.dtype == expect.dtype
    tol = 1e-5 if expect.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, expect, rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_column_blocks_with_and_without_bias(pieces, dtype):
    a, w, b = _rand((37, 50), dtype), _rand((300, 50), dtype, 1), _rand(300, dtype, 2)
    _close(_blas.matmul(a, w.T), a @ w.T)  # w.T: a transposed view
    _close(_blas.matmul(a, w.T, b), a @ w.T + b)
    assert pieces == [4, 4]  # two per thread


def test_row_blocks_when_there_are_few_columns(pieces):
    a, b, bias = _rand((200, 30)), _rand((30, 20), seed=1), _rand(20, seed=2)
    _close(_blas.matmul(a, b, bias), a @ b + bias)
    assert pieces == [4]


def test_non_contiguous_operands(pieces):
    a = _rand((64, 90))[:, ::3]  # strided columns
    b = np.asfortranarray(_rand((30, 256), seed=1))
    _close(_blas.matmul(a, b), a @ b)
    _close(_blas.matmul(a.T[:, :30], b[:, :200]), a.T[:, :30] @ b[:, :200])


def test_too_small_to_split_is_one_call(pieces):
    a, b = _rand((20, 8)), _rand((8, 100), seed=1)  # 100 columns, 20 rows: no block
    _close(_blas.matmul(a, b), a @ b)
    assert pieces == []


@pytest.mark.parametrize("sa,sb", [
    ((8, 3, 16, 24), (8, 3, 24, 20)),  # split along the first batch dim
    ((1, 6, 16, 24), (1, 6, 24, 20)),  # ... the first one with two or more matrices
    ((5, 16, 24), (24, 20)),           # one matrix for the batch: one product of all rows
    ((16, 24), (4, 24, 20)),           # a matrix times a batch
    ((3, 1, 16, 24), (1, 4, 24, 20)),  # batch dims that broadcast
])
def test_batched_products(pieces, sa, sb):
    a, b = _rand(sa), _rand(sb, seed=1)
    _close(_blas.matmul(a, b), np.matmul(a, b))
    assert pieces and max(pieces) >= 2


def test_transposed_batched_views(pieces):
    q = _rand((2, 16, 4, 8)).transpose(0, 2, 1, 3)  # (batch, heads, seq, dim) of a view
    _close(_blas.matmul(q, q.swapaxes(-1, -2)), np.matmul(q, q.swapaxes(-1, -2)))


def test_one_matrix_in_every_batch_dim_is_one_call(pieces):
    a, b = _rand((1, 1, 16, 24)), _rand((1, 24, 20), seed=1)
    _close(_blas.matmul(a, b), np.matmul(a, b))
    assert pieces == []


def test_empty_products(pieces):
    _close(_blas.matmul(np.zeros((40, 0), np.float32), np.zeros((0, 300), np.float32)),
           np.zeros((40, 300), np.float32))
    _close(_blas.matmul(np.zeros((0, 5), np.float32), _rand((5, 300))),
           np.zeros((0, 300), np.float32))


def test_nan_and_inf_propagate(pieces):
    a, b = _rand((64, 32)), _rand((32, 256), seed=1)
    a[3, 4], b[5, 200] = np.nan, np.inf
    with np.errstate(invalid="ignore"):
        expect = a @ b
    got = _blas.matmul(a, b)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expect))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(expect))


def test_one_thread_and_other_dtypes_take_the_single_call(pieces):
    ember.set_num_threads(1)
    a, b = _rand((64, 32)), _rand((32, 256), seed=1)
    _close(_blas.matmul(a, b), a @ b)
    ember.set_num_threads(2)
    ints = np.arange(64 * 32).reshape(64, 32) % 7
    np.testing.assert_array_equal(_blas.matmul(ints, ints.T), ints @ ints.T)
    c = (a + 1j * a).astype(np.complex64)
    np.testing.assert_allclose(_blas.matmul(c, c.T), c @ c.T, rtol=1e-5, atol=1e-4)
    assert pieces == []
    assert _cpu_matmul.matmul(a, b).shape == (64, 256)


def test_linear_forward_and_backward(pieces):
    x0, w0, b0 = _rand((3, 40, 50)), _rand((300, 50), seed=1), _rand(300, seed=2)
    x = ember.tensor(x0, requires_grad=True)
    w = ember.tensor(w0, requires_grad=True)
    b = ember.tensor(b0, requires_grad=True)
    y = F.linear(x, w, b)
    g = _rand((3, 40, 300), seed=3)
    y.backward(ember.tensor(g))
    _close(y.detach().numpy(), x0 @ w0.T + b0)
    _close(x.grad.numpy(), g @ w0)
    np.testing.assert_allclose(w.grad.numpy(), g.reshape(-1, 300).T @ x0.reshape(-1, 50),
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(b.grad.numpy(), g.sum((0, 1)), rtol=1e-4, atol=1e-4)
    assert len(pieces) == 3  # forward, and both gradients of the backward


def test_linear_with_a_bias_broadcast_over_rows_and_columns(pieces):
    x0, w0, b0 = _rand((40, 50)), _rand((300, 50), seed=1), _rand((40, 1), seed=2)
    got = F.linear(ember.tensor(x0), ember.tensor(w0), ember.tensor(b0)).numpy()
    _close(got, x0 @ w0.T + b0)


def test_matmul_op(pieces):
    a, b = _rand((4, 3, 20, 30)), _rand((4, 3, 30, 20), seed=1)
    _close((ember.tensor(a) @ ember.tensor(b)).numpy(), a @ b)
    assert pieces


def _attention_reference(q, k, v, bias):
    s = q.astype(np.float64) @ k.swapaxes(-1, -2) / np.sqrt(q.shape[-1]) + bias
    s = s - s.max(-1, keepdims=True)
    e = np.exp(s)
    return ((e / e.sum(-1, keepdims=True)) @ v).astype(np.float32)


def test_attention_products_and_softmax_threaded(pieces):
    old = _cpu_threads.set_parallel_min(1024)
    try:
        q, k, v = (_rand((4, 3, 32, 16), seed=i) for i in range(3))
        bias = np.zeros((4, 1, 1, 32), np.float32)
        bias[1, ..., 20:] = np.finfo(np.float32).min  # padding, as BERT masks it
        got = F.scaled_dot_product_attention(*map(ember.tensor, (q, k, v)),
                                             attn_mask=ember.tensor(bias)).numpy()
        _close(got, _attention_reference(q, k, v, bias))
        # a row with every key masked by -inf gives zeros, as in PyTorch
        bias[2, ..., :] = -np.inf
        got = F.scaled_dot_product_attention(*map(ember.tensor, (q, k, v)),
                                             attn_mask=ember.tensor(bias)).numpy()
        assert (got[2] == 0).all()
        keep = [0, 1, 3]
        _close(got[keep], _attention_reference(q[keep], k[keep], v[keep], bias[keep]))
    finally:
        _cpu_threads.set_parallel_min(old)
    assert len(pieces) >= 4


def test_mid_sized_products_keep_the_blas_threads(pieces, monkeypatch):
    # between SERIAL_MAX_WORK and THREADED_MIN_WORK OpenBLAS's own threads win (measured):
    # one call, no pieces
    monkeypatch.setattr(_blas, "THREADED_MIN_WORK", 1 << 26)
    a, b = _rand((128, 784)), _rand((784, 512), seed=1)
    _close(_blas.matmul(a, b), a @ b)
    assert pieces == []
    big_a = _rand((256, 1024))
    _close(_blas.matmul(big_a, _rand((1024, 256), seed=2)), big_a @ _rand((1024, 256), seed=2))
    assert pieces == [4]  # 2^26 multiply-adds: pieces

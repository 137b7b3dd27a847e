"""serial_blas / serial_blas_below (NOTE [ Serial BLAS ]): small GEMMs run on one OpenBLAS
thread, the count is restored after, and the results do not change."""

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember._backend import _blas


def test_serial_blas_below_the_threshold_only():
    assert _blas.serial_blas_below(np, _blas.SERIAL_MAX_WORK - 1).on == (
        _blas._set_threads_local is not None)
    assert not _blas.serial_blas_below(np, _blas.SERIAL_MAX_WORK).on
    assert not _blas.serial_blas_below(object(), 1).on  # not NumPy: nothing to do


def test_the_thread_count_is_restored():
    if _blas._set_threads_local is None:
        pytest.skip("this NumPy's BLAS has no openblas_set_num_threads_local")
    before = _blas._set_threads_local(1)
    _blas._set_threads_local(before)
    with _blas.serial_blas_below(np, 10):
        inside = _blas._set_threads_local(1)
        _blas._set_threads_local(inside)
    after = _blas._set_threads_local(before)
    assert inside == 1 and after == before


def test_linear_gives_the_same_numbers_small_and_large():
    rng = np.random.default_rng(0)
    for rows, k, n in ((8, 16, 4), (512, 256, 128)):  # below and above the threshold
        x0 = rng.standard_normal((rows, k)).astype(np.float32)
        w0 = rng.standard_normal((n, k)).astype(np.float32)
        x = ember.tensor(x0, requires_grad=True)
        w = ember.tensor(w0, requires_grad=True)
        y = F.linear(x, w)
        y.backward(ember.ones(rows, n))
        np.testing.assert_allclose(y.detach().numpy(), x0 @ w0.T, rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(x.grad.numpy(), np.ones((rows, n), np.float32) @ w0,
                                   rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(w.grad.numpy(), np.ones((n, rows), np.float32) @ x0,
                                   rtol=1e-5, atol=1e-3)


def _count():
    old = _blas._set_threads_local(1)
    _blas._set_threads_local(old)
    return old


needs_local = pytest.mark.skipif(_blas._set_threads_local is None,
                                 reason="this NumPy's BLAS has no openblas_set_num_threads_local")


@needs_local
def test_serial_blocks_on_several_threads_restore_the_count():
    # NOTE [ Serial BLAS is process-wide ]: threads entering and leaving serial blocks in
    # every interleaving (the pool's pieces) leave the count as it was; before, the last
    # thread out could "restore" the one thread its partner had set
    import threading

    before = _count()
    barrier = threading.Barrier(3)
    rng = np.random.default_rng(0)
    waits = rng.integers(0, 3, size=(3, 300)) * 1e-5

    def worker(k):
        for i in range(300):
            if i % 25 == 0:
                barrier.wait()  # line the threads up, so that their blocks overlap
            with _blas.serial_blas(np):
                threading.Event().wait(waits[k, i])

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert _count() == before


@needs_local
def test_pool_pieces_restore_the_count():
    from ember._backend import _cpu_threads

    before = _count()
    ember.set_num_threads(2)
    try:
        for _ in range(50):
            _cpu_threads.run_tasks([lambda: None] * 3, serial_blas=True)
        assert _count() == 2
    finally:
        ember.set_num_threads(before)
    assert _count() == before


@needs_local
def test_set_num_threads_inside_a_serial_block_is_restored_at_its_end():
    before = _count()
    try:
        with _blas.serial_blas(np):
            ember.set_num_threads(1 if before != 1 else 2)
            assert _count() == 1
            wanted = 1 if before != 1 else 2
        assert _count() == wanted
    finally:
        ember.set_num_threads(before)


def test_repeated_calls_of_a_model_give_the_same_numbers():
    # the Swin-T forward whose second call differed once the count had been lost
    rng = np.random.default_rng(1)
    x = ember.tensor(rng.standard_normal((64, 1024)).astype(np.float32))
    lin = ember.nn.Linear(1024, 1024)  # above THREADED_MIN_WORK: pieces on the pool
    small = ember.nn.Linear(1024, 96)
    with ember.no_grad():
        first = small(lin(x)).numpy()
        for _ in range(5):
            np.testing.assert_array_equal(small(lin(x)).numpy(), first)

"""ember.linalg, ember.fft, stft/istft, the windows and the complex views against
PyTorch 2.13, name by name: the public names, errors, info of the _ex forms, and
values of the calls the op database does not make (its entries are compared with
PyTorch in test_ops_torch.py). Skipped without torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402
from ember.testing import assert_close  # noqa: E402

# torch.linalg names ember does not have
_LINALG_LEFT_OUT: set = set()
# torch.fft's module-level helpers that are not functions of the API
_FFT_NOT_API = {"Tensor", "common_args", "factory_common_args", "torch"}


def _public(mod):
    return {n for n in dir(mod) if not n.startswith("_")}


def test_every_torch_linalg_name():
    want = _public(torch.linalg) - {"common_notes"} - _LINALG_LEFT_OUT
    assert want - set(ember.linalg.__all__) == set()
    for name in want:
        assert callable(getattr(ember.linalg, name)) or name == "LinAlgError"


def test_every_torch_fft_name():
    want = _public(torch.fft) - _FFT_NOT_API
    assert want - set(ember.fft.__all__) == set()


_TOP_LEVEL = ["det", "logdet", "slogdet", "inverse", "cholesky", "cholesky_solve",
              "cholesky_inverse", "pinverse", "svd", "qr", "lu", "lu_solve", "lu_unpack",
              "matrix_exp", "matrix_power", "triangular_solve", "orgqr", "ormqr", "geqrf",
              "vander", "stft", "istft", "hann_window", "hamming_window", "blackman_window",
              "bartlett_window", "kaiser_window", "view_as_real", "view_as_complex", "real",
              "imag", "angle", "polar", "complex", "conj", "is_conj", "resolve_conj",
              "conj_physical", "is_neg", "resolve_neg", "abs", "nuclear_norm", "frobenius_norm"]
_METHODS = ["det", "logdet", "slogdet", "inverse", "cholesky", "cholesky_solve",
            "cholesky_inverse", "pinverse", "svd", "qr", "lu", "lu_solve", "matrix_exp",
            "matrix_power", "triangular_solve", "orgqr", "ormqr", "geqrf", "stft", "istft",
            "real", "imag", "angle", "conj", "is_conj", "resolve_conj", "conj_physical",
            "is_neg", "resolve_neg", "abs"]


@pytest.mark.parametrize("name", _TOP_LEVEL)
def test_torch_level_names(name):
    assert hasattr(torch, name)
    assert hasattr(ember, name)


@pytest.mark.parametrize("name", _METHODS)
def test_tensor_methods(name):
    assert hasattr(torch.Tensor, name)
    assert hasattr(ember.Tensor, name)


def _both(a):
    return ember.tensor(np.asarray(a)), torch.tensor(np.asarray(a))


def _error(fn_e, fn_t):
    with pytest.raises(Exception) as te:
        fn_t()
    with pytest.raises(Exception) as ee:
        fn_e()
    assert isinstance(ee.value, RuntimeError) == isinstance(te.value, RuntimeError)
    return str(ee.value), str(te.value)


@pytest.mark.parametrize("case", [
    ("inv", lambda L, a: L.inv(a), [[1.0, 2.0], [2.0, 4.0]]),
    ("inv_batch", lambda L, a: L.inv(a), [np.eye(2), [[0.0, 0.0], [0.0, 0.0]]]),
    ("solve", lambda L, a: L.solve(a, a[..., 0]), [[0.0, 0.0], [0.0, 0.0]]),
    ("cholesky", lambda L, a: L.cholesky(a), [[1.0, 2.0], [2.0, 1.0]]),
    ("cholesky_batch", lambda L, a: L.cholesky(a), [np.eye(2), -np.eye(2)]),
    ("lu_factor", lambda L, a: L.lu_factor(a), [[1.0, 2.0], [2.0, 4.0]]),
    ("square", lambda L, a: L.det(a), np.ones((2, 3))),
    ("dtype", lambda L, a: L.inv(a), np.ones((2, 2), dtype=np.int64)),
    ("ndim", lambda L, a: L.eigh(a), np.ones(3)),
    ("norm_order", lambda L, a: L.matrix_norm(a, 3), np.eye(2)),
    ("cond_p", lambda L, a: L.cond(a, 3), np.eye(2)),
    ("vander_N", lambda L, a: L.vander(a, N=1), np.ones(3)),
], ids=lambda c: c[0])
def test_errors_match(case):
    _, fn, value = case
    e, t = _both(value)
    msg_e, msg_t = _error(lambda: fn(ember.linalg, e), lambda: fn(torch.linalg, t))
    assert msg_e == msg_t


def test_linalg_error_types_match():
    e, t = _both([[0.0, 0.0], [0.0, 0.0]])
    with pytest.raises(torch.linalg.LinAlgError):
        torch.linalg.inv(t)
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.inv(e)


def test_ex_forms_info_match():
    batch = np.stack([np.eye(3), np.zeros((3, 3)), np.diag([1.0, 0.0, 2.0]),
                      [[1.0, 2, 3], [2, 1, 0], [3, 0, 1]]])
    e, t = _both(batch)
    for name in ("inv_ex", "cholesky_ex", "lu_factor_ex"):
        ie = getattr(ember.linalg, name)(e)[-1]
        it = getattr(torch.linalg, name)(t)[-1]
        assert ie.tolist() == it.tolist(), name
        assert str(ie.dtype).split(".")[-1] == str(it.dtype).split(".")[-1]
    b_e, b_t = _both(np.ones((4, 3, 1)))
    assert ember.linalg.solve_ex(e, b_e).info.tolist() == \
        torch.linalg.solve_ex(t, b_t).info.tolist()


def test_lu_pivots_match():
    rng = np.random.default_rng(0)
    for shape in [(4, 4), (3, 5, 5), (2, 4, 6), (6, 3)]:
        a = rng.standard_normal(shape)
        e, t = _both(a)
        LUe, pe = ember.linalg.lu_factor(e)
        LUt, pt = torch.linalg.lu_factor(t)
        assert pe.tolist() == pt.tolist()
        assert_close(LUe.numpy(), LUt.numpy())
        for x, y in zip(ember.lu_unpack(LUe, pe), torch.lu_unpack(LUt, pt), strict=True):
            assert_close(x.numpy(), y.numpy())


def test_ldl_matches():
    rng = np.random.default_rng(5)
    for i in range(12):
        n = 1 + i % 6
        a = rng.standard_normal((3, n, n))
        if i % 3 == 0:
            a[..., np.arange(n), np.arange(n)] = 0  # 2x2 pivots
        if i % 4 == 1:
            a = a + 1j * rng.standard_normal(a.shape)  # complex symmetric
        e, t = _both(a)
        h = bool(i % 2)
        LDe, pe, ie = ember.linalg.ldl_factor_ex(e, hermitian=h)
        LDt, pt, it = torch.linalg.ldl_factor_ex(t, hermitian=h)
        assert pe.tolist() == pt.tolist() and ie.tolist() == it.tolist()
        assert_close(LDe.numpy(), LDt.numpy())
        if it.any():
            continue
        b = rng.standard_normal((3, n, 2)).astype(a.dtype)
        be, bt = _both(b)
        assert_close(ember.linalg.ldl_solve(LDe, pe, be, hermitian=h).numpy(),
                     torch.linalg.ldl_solve(LDt, pt, bt, hermitian=h).numpy())
    e, t = _both(np.zeros((2, 2)))
    assert ember.linalg.ldl_factor_ex(e).info.tolist() == \
        torch.linalg.ldl_factor_ex(t).info.tolist()


def test_lstsq_all_drivers_match():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 6, 3)), rng.standard_normal((2, 6, 2))
    (ae, at), (be, bt) = _both(a), _both(b)
    for driver in ("gels", "gelsy", "gelsd", "gelss"):
        re_, rt = ember.linalg.lstsq(ae, be, driver=driver), torch.linalg.lstsq(at, bt,
                                                                              driver=driver)
        for x, y in zip(re_, rt, strict=True):
            assert tuple(x.shape) == tuple(y.shape), driver
            if x.numel():
                assert_close(x.numpy(), y.numpy(), check_dtype=False)


def test_decomposition_values_match():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 4, 4))
    e, t = _both(a)
    assert_close(ember.linalg.qr(e).R.numpy(), torch.linalg.qr(t).R.numpy())
    assert_close(ember.linalg.svd(e).S.numpy(), torch.linalg.svd(t).S.numpy())
    assert_close(ember.linalg.matrix_exp(e).numpy(), torch.linalg.matrix_exp(t).numpy())
    assert_close(ember.geqrf(e)[1].numpy(), torch.geqrf(t)[1].numpy())
    assert_close(ember.geqrf(e)[0].numpy(), torch.geqrf(t)[0].numpy())
    assert_close(ember.linalg.matrix_rank(e).numpy(), torch.linalg.matrix_rank(t).numpy())
    for p in (None, "fro", "nuc", 1, -1, 2, -2, float("inf")):
        assert_close(ember.linalg.cond(e, p).numpy(), torch.linalg.cond(t, p).numpy())


def test_deprecated_norms_match():
    a = np.random.default_rng(4).standard_normal((2, 3, 4))
    e, t = _both(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_close(ember.nuclear_norm(e).numpy(), torch.nuclear_norm(t).numpy())
        assert_close(ember.nuclear_norm(e, (0, 2), True).numpy(),
                     torch.nuclear_norm(t, (0, 2), True).numpy())
        assert_close(ember.frobenius_norm(e, (1, 2)).numpy(),
                     torch.frobenius_norm(t, (1, 2)).numpy())
        msg_e, msg_t = _error(lambda: ember.frobenius_norm(e, (0, 1, 2)),
                              lambda: torch.frobenius_norm(t, (0, 1, 2)))
    assert msg_e == msg_t


def test_fft_defaults_and_dtypes_match():
    x = np.arange(12, dtype=np.int64).reshape(3, 4)
    e, t = _both(x)
    for name in ("fft", "rfft", "fft2", "rfftn", "ihfft", "fftn", "ihfftn"):
        ye, yt = getattr(ember.fft, name)(e), getattr(torch.fft, name)(t)
        assert str(ye.dtype).split(".")[-1] == str(yt.dtype).split(".")[-1], name
        assert_close(ye.numpy(), yt.resolve_conj().numpy(), rtol=1e-5, atol=1e-5)
    assert_close(ember.fft.fftfreq(7, 0.1).numpy(), torch.fft.fftfreq(7, 0.1).numpy())
    assert_close(ember.fft.rfftfreq(9).numpy(), torch.fft.rfftfreq(9).numpy())


@pytest.mark.parametrize("name", ["hann_window", "hamming_window", "blackman_window",
                                  "bartlett_window", "kaiser_window"])
def test_windows_match(name):
    for n in (0, 1, 2, 7, 16):
        for periodic in (True, False):
            we, wt = getattr(ember, name)(n, periodic), getattr(torch, name)(n, periodic)
            assert str(we.dtype) .split(".")[-1] == str(wt.dtype).split(".")[-1]
            assert_close(we.numpy(), wt.numpy(), rtol=1e-5, atol=1e-6)


def test_stft_istft_defaults_match():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 300)).astype(np.float32)
    e, t = _both(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kw in [dict(), dict(hop_length=50, win_length=100), dict(center=False),
                   dict(center=False, win_length=100, align_to_window=True),
                   dict(center=False, win_length=100, align_to_window=False),
                   dict(normalized=True, onesided=False), dict(pad_mode="constant")]:
            se = ember.stft(e, 128, return_complex=True, **kw)
            st = torch.stft(t, 128, return_complex=True, **kw)
            assert_close(se.numpy(), st.numpy(), rtol=1e-4, atol=1e-4)
        we, wt = ember.hann_window(128), torch.hann_window(128)
        se = ember.stft(e, 128, window=we, return_complex=True)
        st = torch.stft(t, 128, window=wt, return_complex=True)
        assert_close(ember.istft(se, 128, window=we).numpy(),
                     torch.istft(st, 128, window=wt).numpy(), rtol=1e-4, atol=1e-5)
        assert_close(ember.istft(se, 128, window=we, length=310).numpy(),
                     torch.istft(st, 128, window=wt, length=310).numpy(), rtol=1e-4, atol=1e-5)
        assert_close(ember.stft(e, 64, return_complex=False).numpy(),
                     torch.stft(t, 64, return_complex=False).numpy(), rtol=1e-4, atol=1e-4)
    msg_e, msg_t = _error(lambda: ember.stft(e, 64), lambda: torch.stft(t, 64))
    assert msg_e == msg_t


def test_complex_views_match():
    z = np.array([[1 + 2j, -3 + 0.5j], [0j, 2 - 1j]])
    e, t = _both(z)
    assert_close(ember.view_as_real(e).numpy(), torch.view_as_real(t).numpy())
    assert_close(ember.angle(e).numpy(), torch.angle(t).numpy())
    assert_close(e.real.numpy(), t.real.numpy())
    assert_close(e.imag.numpy(), t.imag.numpy())
    assert e.is_conj() == t.resolve_conj().is_conj()
    for bad in (np.ones((3, 3)), np.ones((3, 2), dtype=np.int64)):
        be, bt = _both(bad)
        msg_e, msg_t = _error(lambda be=be: ember.view_as_complex(be),
                              lambda bt=bt: torch.view_as_complex(bt))
        assert msg_e == msg_t
    re_, rt = _both(np.ones(2))
    msg_e, msg_t = _error(lambda: re_.imag, lambda: rt.imag)
    assert msg_e == msg_t


def test_det_gradient_at_a_singular_matrix():
    # PyTorch 2.13's first-order backward gives 0 here (its LU fast path); with
    # create_graph=True it gives the cofactor matrix, as its documentation defines the
    # gradient. ember gives the cofactor matrix in both cases.
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    e = ember.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    (ge,) = ember.autograd.grad(ember.linalg.det(e), [e])
    (gt,) = torch.autograd.grad(torch.linalg.det(t), [t], create_graph=True)
    assert_close(ge.numpy(), gt.detach().numpy())

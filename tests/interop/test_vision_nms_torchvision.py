"""embervision.ops.nms and batched_nms against torchvision's C++ kernel: the same indices in
the same order, on random boxes with many tied scores, zero-area and identical boxes, NaN,
float32/float64 and float16 (which torchvision's CPU kernel takes under autocast only), every
threshold, both of batched_nms's ways (the offset trick up to 4000 coordinates, the
per-class loop above), and the same errors. Skips without torchvision."""

import contextlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")
tv_ops = pytest.importorskip("torchvision.ops")

import ember  # noqa: E402
import embervision.ops as ops  # noqa: E402
from embervision.ops import _nms  # noqa: E402

DTYPES = {np.float16: torch.float16, np.float32: torch.float32, np.float64: torch.float64}


def _boxes(n, seed, dtype, scale=100.0, levels=None):
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, scale, (n, 2))
    wh = rng.uniform(0, scale / 4, (n, 2))
    wh[::9] = 0.0  # zero-area boxes
    boxes = np.concatenate([xy, xy + wh], 1)
    boxes[1::13] = boxes[::13][: len(boxes[1::13])]  # identical boxes
    # few score levels: many ties, inside classes and across them
    scores = rng.integers(0, levels or max(n // 20, 3), n) / 7.0
    return boxes.astype(dtype), scores.astype(dtype)


def _theirs(dtype):
    # float16: torchvision's CPU nms runs under autocast only (which casts to float32)
    return torch.autocast("cpu") if dtype == np.float16 else contextlib.nullcontext()


def _both(*arrays):
    return [ember.from_numpy(a.copy()) for a in arrays], [torch.from_numpy(a.copy())
                                                           for a in arrays]


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("n", [1, 50, 700, 3000])
def test_nms(dtype, n):
    boxes, scores = _boxes(n, n, dtype)
    (eb, es), (tb, ts) = _both(boxes, scores)
    for thr in np.linspace(0, 1, 11).tolist() + [0.3, 0.7, -0.1]:
        with _theirs(dtype):
            want = tv_ops.nms(tb, ts, thr).numpy()
        np.testing.assert_array_equal(ops.nms(eb, es, thr).numpy(), want, err_msg=str(thr))


@pytest.mark.parametrize("dtype", list(DTYPES))
def test_nms_nan_inf(dtype):
    boxes, scores = _boxes(200, 1, dtype)
    scores[::11] = np.nan
    scores[5] = np.inf
    boxes[7, 0] = np.nan
    boxes[8, 3] = np.nan
    boxes[9] = np.nan
    boxes[10, 2:] = np.inf
    boxes[12, :2] = -np.inf
    (eb, es), (tb, ts) = _both(boxes, scores)
    for thr in (0.0, 0.4, 0.8):
        with _theirs(dtype):
            want = tv_ops.nms(tb, ts, thr).numpy()
        np.testing.assert_array_equal(ops.nms(eb, es, thr).numpy(), want)


@pytest.mark.parametrize("dtype", list(DTYPES))
@pytest.mark.parametrize("n", [400, 1000, 1001, 2500])  # both sides of 4000 coordinates
def test_batched_nms(dtype, n):
    boxes, scores = _boxes(n, n + 1, dtype, scale=60.0, levels=6)
    idxs = np.random.default_rng(n).integers(0, 7, n)
    (eb, es, ei), (tb, ts, ti) = _both(boxes, scores, idxs)
    for thr in (0.0, 0.3, 0.5, 0.9):
        with _theirs(dtype):
            want = tv_ops.batched_nms(tb, ts, ti, thr).numpy()
        np.testing.assert_array_equal(ops.batched_nms(eb, es, ei, thr).numpy(), want,
                                      err_msg=str(thr))


def test_argsort_descending_is_torchs_unstable_sort():
    rng = np.random.default_rng(0)
    for n in (5, 17, 40, 300, 5000):
        for dtype in DTYPES:
            values = rng.integers(0, 4, n).astype(dtype)
            values[::23] = np.nan
            np.testing.assert_array_equal(
                _nms.argsort_descending(values),
                torch.from_numpy(values).sort(descending=True)[1].numpy())


def test_errors_match():
    f32, f64, i64 = np.float32, np.float64, np.int64
    cases = [((5, 4, 1), f32, (5,), f32), ((5, 3), f32, (5,), f32), ((5, 4), f32, (5, 1), f32),
             ((5, 4), f32, (3,), f32), ((5, 4), f32, (5,), f64), ((5, 4), i64, (5,), i64)]
    for bshape, bdt, sshape, sdt in cases:
        (eb, es), (tb, ts) = _both(np.zeros(bshape, bdt), np.zeros(sshape, sdt))
        with pytest.raises(RuntimeError) as theirs:
            tv_ops.nms(tb, ts, 0.5)
        with pytest.raises(RuntimeError) as ours:
            ops.nms(eb, es, 0.5)
        assert str(theirs.value).endswith(str(ours.value))
    (eb, es), (tb, ts) = _both(np.zeros((5, 4), f32), np.zeros(5, f32))
    for thr in ("0.5", None):
        with pytest.raises(RuntimeError, match="Expected a value of type 'float'"):
            tv_ops.nms(tb, ts, thr)
        with pytest.raises(RuntimeError, match="Expected a value of type 'float'"):
            ops.nms(eb, es, thr)
    for thr in (True, 0, np.float32(0.5)):
        assert ops.nms(eb, es, thr).tolist() == tv_ops.nms(tb, ts, thr).tolist()

"""embervision.ops.nms and batched_nms: the compiled CPU kernel and the array-module kernel
against a scalar NumPy reference written from torchvision's CPU kernel (stable descending
sort with NaN first, the IoU in the boxes' dtype operation by operation, compared in double),
on ties, zero-area and identical boxes, NaN and every threshold from 0 to 1; float16 in
float32, as torchvision computes it under autocast."""

import numpy as np
import pytest

import ember
import embervision.ops as ops
from ember import library
from ember._backend import backend_of
from embervision.ops import _nms
from embervision.ops.boxes import NMS_KERNEL

DTYPES = [np.float32, np.float64, np.float16]
# 0.1 and 0.3 round up in float32 (an IoU equal to float32(t) is above t); 0.7 rounds down
THRESHOLDS = [float(t) for t in np.linspace(0.0, 1.0, 21)] + [0.7, 0.1, 0.3, 1e-8]


def _std_max(a, b):
    return b if a < b else a


def _std_min(a, b):
    return b if b < a else a


def _score_order(scores):
    # torch's stable descending sort: NaN first, equal scores in input order
    return sorted(range(len(scores)),
                  key=lambda i: (0, 0.0) if np.isnan(scores[i]) else (1, -float(scores[i])))


def reference_nms(boxes, scores, thr):
    """torchvision's CPU kernel, scalar by scalar in the dtype of ``boxes`` (NumPy scalars
    round every operation to it); float16 in float32, as torchvision under autocast."""
    if boxes.dtype == np.float16:
        boxes = boxes.astype(np.float32)
    zero = boxes.dtype.type(0)
    order = _score_order(scores)
    areas = [(b[2] - b[0]) * (b[3] - b[1]) for b in boxes]
    suppressed = [False] * len(order)
    keep = []
    for pos, i in enumerate(order):
        if suppressed[i]:
            continue
        keep.append(i)
        bi = boxes[i]
        for j in order[pos + 1:]:
            if suppressed[j]:
                continue
            bj = boxes[j]
            w = _std_max(zero, _std_min(bi[2], bj[2]) - _std_max(bi[0], bj[0]))
            h = _std_max(zero, _std_min(bi[3], bj[3]) - _std_max(bi[1], bj[1]))
            inter = w * h
            with np.errstate(all="ignore"):
                ovr = inter / (areas[i] + areas[j] - inter)
            if float(ovr) > thr:
                suppressed[j] = True
    return keep


def reference_batched(boxes, scores, idxs, thr):
    """torchvision's batched_nms: the offset trick up to 4000 coordinates, else per class
    (then ordered by a stable sort: torch's own sort may order equal scores otherwise, see
    assert_batched)."""
    if boxes.size <= 4000:
        if boxes.size == 0:
            return []
        dt = boxes.dtype.type
        offsets = idxs.astype(boxes.dtype) * (boxes.max() + dt(1))
        return reference_nms(boxes + offsets[:, None], scores, thr)
    kept = []
    for c in np.unique(idxs):
        members = np.flatnonzero(idxs == c)
        kept += [members[k] for k in reference_nms(boxes[members], scores[members], thr)]
    kept = np.sort(np.asarray(kept, dtype=np.int64))
    return [kept[k] for k in _score_order(scores[kept])]


def assert_batched(got, want, scores):
    """``got`` is ``want`` where the offset trick runs; per class, the same boxes by
    decreasing score (NaN first), equal scores in any order."""
    if len(want) and got != want:
        assert sorted(got) == sorted(want)
        key = [(0, 0.0) if np.isnan(scores[i]) else (1, -float(scores[i])) for i in got]
        assert key == sorted(key)


def random_boxes(n, seed, dtype=np.float32, scale=50.0):
    """Boxes with ties in score, zero-area boxes, identical boxes and boxes inside others."""
    rng = np.random.default_rng(seed)
    xy = rng.uniform(0, scale, (n, 2))
    wh = rng.uniform(0, scale / 2.5, (n, 2))
    wh[::7] = 0.0  # points
    wh[1::11, 0] = 0.0  # segments
    boxes = np.concatenate([xy, xy + wh], 1)
    scores = rng.uniform(0, 1, n)
    scores[::5] = 0.5  # ties
    scores[1:-1:9] = scores[2::9][: len(scores[1:-1:9])]  # more ties
    if n > 6:
        boxes[3] = boxes[2]  # identical boxes, one of them with a tied score
        boxes[6] = boxes[5]
        scores[6] = scores[5]
        boxes[4] = [xy[4, 0], xy[4, 1], xy[4, 0] + 30, xy[4, 1] + 30]
    return boxes.astype(dtype), scores.astype(dtype)


def kernels(boxes, scores, thr, idxs=None):
    """The compiled kernel's and the array-module kernel's kept indices."""
    generic = backend_of(boxes).kernel(NMS_KERNEL, boxes, generic=True)
    return _nms.nms(boxes, scores, thr, idxs), generic(boxes, scores, thr, idxs)


def test_the_kernel_is_registered_for_the_cpu_and_any_device():
    entries = library.kernel_entries(NMS_KERNEL)
    assert {e.device_type for e in entries} == {"cpu", "any"}
    assert library.kernel(NMS_KERNEL, np.zeros((1, 4), np.float32)) is _nms.nms
    assert library.kernel(NMS_KERNEL, np.zeros((1, 4), np.int64)) is not _nms.nms


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("seed", [0, 1])
def test_nms_matches_the_reference_at_every_threshold(dtype, seed):
    boxes, scores = random_boxes(90, seed, dtype)
    for thr in THRESHOLDS:
        want = reference_nms(boxes, scores, thr)
        compiled, generic = kernels(boxes, scores, thr)
        assert compiled.tolist() == want, thr
        assert generic.tolist() == want, thr
        keep = ops.nms(ember.from_numpy(boxes), ember.from_numpy(scores), thr)
        assert keep.dtype == ember.int64 and keep.tolist() == want


def test_threshold_compared_in_double():
    # Two boxes whose IoU is float32(0.3): 0.3 rounds up in float32, so the IoU is above
    # the threshold 0.3 and the second box goes; at float32(0.3) itself it stays.
    boxes = np.array([[0, 0, 10, 10], [0, 0, 10, 3]], np.float32)
    assert np.float32(30) / np.float32(100) == np.float32(0.3) and float(np.float32(0.3)) > 0.3
    scores = np.array([2, 1], np.float32)
    assert ops.nms(ember.from_numpy(boxes), ember.from_numpy(scores), 0.3).tolist() == [0]
    keep = ops.nms(ember.from_numpy(boxes), ember.from_numpy(scores), float(np.float32(0.3)))
    assert keep.tolist() == [0, 1]
    for thr in (0.3, float(np.float32(0.3))):
        assert [k.tolist() for k in kernels(boxes, scores, thr)] == [
            reference_nms(boxes, scores, thr)] * 2


def test_ties_keep_input_order_and_identical_boxes():
    boxes = np.array([[0, 0, 4, 4]] * 4 + [[10, 10, 12, 12]] * 3, np.float32)
    scores = np.array([1, 3, 3, 1, 2, 2, 2], np.float32)
    e = ember.from_numpy(boxes), ember.from_numpy(scores)
    assert ops.nms(*e, 0.5).tolist() == [1, 4]
    assert ops.nms(*e, 1.0).tolist() == [1, 2, 4, 5, 6, 0, 3]  # IoU 1 is not above 1
    # identical zero-area boxes: 0 / 0 is NaN, never above the threshold
    points = ember.zeros(3, 4)
    assert ops.nms(points, ember.tensor([0.1, 0.3, 0.2]), 0.0).tolist() == [1, 2, 0]


@pytest.mark.parametrize("dtype", DTYPES)
def test_nan_and_inf(dtype):
    boxes, scores = random_boxes(40, 3, dtype)
    scores[[4, 9, 17]] = np.nan
    scores[5] = np.inf
    scores[6] = -np.inf
    boxes[7, 0] = np.nan
    boxes[8, 2] = np.nan
    boxes[10, :] = np.nan
    boxes[11, 2:] = np.inf
    assert _score_order(scores)[:4] == [4, 9, 17, 5] and _score_order(scores)[-1] == 6
    for thr in (0.0, 0.3, 0.7):
        want = reference_nms(boxes, scores, thr)
        assert want[0] == 4
        compiled, generic = kernels(boxes, scores, thr)
        assert compiled.tolist() == want and generic.tolist() == want


def test_half_is_computed_in_float32():
    # IoU 30 / 100: float32 gives 0.30000001, half would round it to 0.30004883, which is
    # above 0.30002; in float32 (torchvision under autocast) the second box stays.
    boxes = np.array([[0, 0, 10, 10], [0, 0, 10, 3]], np.float16)
    scores = np.array([2, 1], np.float16)
    assert float(np.float16(30) / np.float16(100)) > 0.30002 > float(np.float32(0.3))
    assert [k.tolist() for k in kernels(boxes, scores, 0.30002)] == [[0, 1]] * 2
    assert ops.nms(ember.from_numpy(boxes), ember.from_numpy(scores), 0.30002).tolist() == [0, 1]


def test_empty_and_single():
    for dt in (ember.float32, ember.float16, ember.float64):
        keep = ops.nms(ember.zeros(0, 4, dtype=dt), ember.zeros(0, dtype=dt), 0.5)
        assert keep.dtype == ember.int64 and tuple(keep.shape) == (0,)
        keep = ops.batched_nms(ember.zeros(0, 4, dtype=dt), ember.zeros(0, dtype=dt),
                               ember.zeros(0, dtype=ember.int64), 0.5)
        assert keep.dtype == ember.int64 and tuple(keep.shape) == (0,)
    assert _nms.nms(np.zeros((0, 4)), np.zeros(0), 0.5).shape == (0,)
    assert ops.nms(ember.tensor([[0.0, 0, 1, 1]]), ember.tensor([0.3]), 0.5).tolist() == [0]


def test_non_contiguous_and_requires_grad_inputs():
    boxes, scores = random_boxes(60, 4)
    wide = np.zeros((60, 8), np.float32)
    wide[:, ::2] = boxes
    b = ember.from_numpy(wide)[:, ::2]
    s = ember.from_numpy(np.stack([scores, scores], 1))[:, 1]
    assert not b.is_contiguous() and not s.is_contiguous()
    want = reference_nms(boxes, scores, 0.4)
    assert ops.nms(b, s, 0.4).tolist() == want
    bg = ember.from_numpy(boxes.copy()).requires_grad_()
    keep = ops.nms(bg, ember.from_numpy(scores), 0.4)
    assert keep.tolist() == want and not keep.requires_grad


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [300, 1001])  # both sides of 4000 coordinates
def test_batched_nms_matches_the_reference(dtype, n):
    boxes, scores = random_boxes(n, n, dtype, scale=200.0)
    idxs = np.random.default_rng(n).integers(0, 12, n)
    for thr in (0.0, 0.5, 0.8):
        want = reference_batched(boxes, scores, idxs, thr)
        got = ops.batched_nms(ember.from_numpy(boxes), ember.from_numpy(scores),
                              ember.from_numpy(idxs), thr).tolist()
        if n <= 1000:
            assert got == want, thr
        assert_batched(got, want, scores)


def test_batched_nms_switches_at_4000_coordinates():
    # Coordinates near 1e6 with categories far apart: the offset trick rounds the shifted
    # float32 boxes, so the two ways give different boxes to the IoU, and results.
    for n, trick in ((1000, True), (1001, False)):
        boxes, scores = random_boxes(n, 5, scale=30.0)
        boxes += 1e6
        idxs = np.random.default_rng(5).integers(0, 40, n)
        offsets = idxs.astype(np.float32) * (boxes.max() + np.float32(1))
        by_trick = _nms.nms(boxes + offsets[:, None], scores, 0.5).tolist()
        by_class = _nms.nms(boxes, scores, 0.5, idxs)
        by_class = by_class[_nms.argsort_descending(scores[by_class])].tolist()
        assert by_trick != by_class
        got = ops.batched_nms(ember.from_numpy(boxes), ember.from_numpy(scores),
                              ember.from_numpy(idxs), 0.5).tolist()
        assert got == (by_trick if trick else by_class)


def test_batched_nms_per_class_kernel_equals_a_loop_over_classes():
    boxes, scores = random_boxes(500, 9)
    idxs = np.random.default_rng(9).integers(0, 5, 500)
    for thr in (0.2, 0.6):
        compiled, generic = kernels(boxes, scores, thr, idxs)
        kept = np.sort(np.concatenate([np.flatnonzero(idxs == c)[reference_nms(
            boxes[idxs == c], scores[idxs == c], thr)] for c in range(5)]))
        # the kernels give the kept boxes in index order; the op orders them by score
        assert compiled.tolist() == kept.tolist() and generic.tolist() == kept.tolist()


def test_argsort_descending_is_a_descending_sort():
    rng = np.random.default_rng(2)
    for dtype in DTYPES:
        values = rng.integers(0, 5, 300).astype(dtype)
        values[::17] = np.nan
        values[3] = np.inf
        order = _nms.argsort_descending(values)
        assert sorted(order.tolist()) == list(range(300))
        assert np.isnan(values[order[:18]]).all()
        rest = values[order[18:]]
        assert rest[0] == np.inf and (np.diff(rest.astype(np.float64)) <= 0).all()
    assert _nms.argsort_descending(np.zeros(0)).shape == (0,)


def test_batched_nms_float_categories_and_nan_category():
    boxes, scores = random_boxes(1200, 11)
    idxs = np.random.default_rng(11).integers(0, 4, 1200).astype(np.float32) / 2
    idxs[::13] = np.nan  # matches no category: never kept (torchvision's idxs == class_id)
    got = ops.batched_nms(ember.from_numpy(boxes), ember.from_numpy(scores),
                          ember.from_numpy(idxs), 0.5).tolist()
    ordinary = np.flatnonzero(~np.isnan(idxs))
    want = ordinary[reference_batched(boxes[ordinary], scores[ordinary],
                                      (idxs[ordinary] * 2).astype(np.int64), 0.5)]
    assert_batched(got, want.tolist(), scores)
    assert not set(got) & set(range(0, 1200, 13))


def test_errors_are_torchvisions():
    b, s = ember.zeros(5, 4), ember.zeros(5)
    cases = [
        ((ember.zeros(5, 4, 1), s, 0.5), "boxes should be a 2d tensor, got 3D"),
        ((ember.zeros(5, 3), s, 0.5), "boxes should have 4 elements in dimension 1, got 3"),
        ((b, ember.zeros(5, 1), 0.5), "scores should be a 1d tensor, got 2D"),
        ((b, ember.zeros(3), 0.5),
         "boxes and scores should have same number of elements in dimension 0, got 5 and 3"),
        ((b, ember.zeros(5, dtype=ember.float64), 0.5),
         "dets should have the same type as scores"),
        ((ember.zeros(5, 4, dtype=ember.int64), ember.zeros(5, dtype=ember.int64), 0.5),
         "\"nms_kernel\" not implemented for 'Long'"),
        ((b, s, "0.5"), "Expected a value of type 'float' for argument 'iou_threshold'"),
    ]
    for args, message in cases:
        with pytest.raises(RuntimeError, match=message.replace("(", r"\(").replace(")", r"\)")):
            ops.nms(*args)
    with pytest.raises(TypeError, match="boxes"):
        ops.nms(np.zeros((5, 4)), s, 0.5)
    # numbers of every kind are thresholds
    for thr in (0, 1, True, np.float32(0.5), np.int64(0), ember.tensor(0.5)):
        assert ops.nms(b, s, thr).tolist() == [0, 1, 2, 3, 4]


def test_the_kernel_checks_its_arrays():
    with pytest.raises(ValueError, match=r"\(N, 4\)"):
        _nms.nms(np.zeros((3, 5), np.float32), np.zeros(3, np.float32), 0.5)
    with pytest.raises(TypeError, match="float16, float32 or float64"):
        _nms.nms(np.zeros((3, 4), np.int32), np.zeros(3), 0.5)
    with pytest.raises(ValueError, match="class ids"):
        _nms.nms(np.zeros((3, 4)), np.zeros(3), 0.5, np.zeros(2, np.int64))

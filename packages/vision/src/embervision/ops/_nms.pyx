# distutils: language = c++
"""The compiled CPU kernel of non-maximum suppression (``embervision_nms``).

NOTE [ NMS as torchvision computes it ]
The boxes are visited by decreasing score: a stable sort, so that equal scores keep their
input order, with NaN scores first (torch sorts NaN above every number). Each box not yet
suppressed is kept and suppresses the later boxes whose IoU with it is ``> iou_threshold``.
The IoU is computed in the boxes' own precision, operation by operation, as torchvision's
CPU kernel does: ``w = max(0, min(x2) - max(x1))``, ``h`` likewise, ``inter = w * h``,
``inter / (area_i + area_j - inter)``, where ``max(a, b)`` is ``a < b ? b : a`` (a NaN
coordinate gives what ``std::max`` gives) and the comparison with the threshold is in
double. torchvision's CPU kernel takes no float16: half-precision boxes are computed in
float32, as torchvision computes them under autocast (which casts them to float32) and
as its CUDA kernel accumulates them. Zero-area boxes give ``0 / 0``: NaN, never above the
threshold, so identical empty boxes do not suppress each other.

NOTE [ Blocks of nearby boxes ]
torchvision compares each kept box with every later box. Here the boxes are laid out in
blocks of nearby boxes (sort-tile-recursive packing: strips by centre x, each strip sorted
by centre y, cut into blocks of ``B ~ sqrt(N / 8)``), each block with the envelope of its
boxes and its count of live ones. A kept box visits only the blocks whose envelope it
overlaps; the others hold no box that it can suppress: a box apart from it along x or y
gives ``w = 0`` or ``h = 0``, so ``inter`` is 0 (or NaN for an infinite side) and the IoU
``0`` (or NaN) is not above a threshold ``>= 0``. Every pair that can suppress is computed
exactly as above, so the result is torchvision's. A block holding a box with a NaN
coordinate is always visited, and with a negative threshold (every box suppresses every
box, overlapping or not) all blocks are. With class ids (``batched_nms``), the boxes of each
class are grouped (in score order within the class) and suppressed within their group only;
the kept boxes are returned in index order, which torchvision's per-class loop then sorts
by score with torch's (unstable) sort: :func:`argsort_descending` gives that order.
"""

from libc.math cimport ceil, isnan, sqrt
from libc.stdlib cimport free, malloc

import numpy as np

__all__ = ["argsort_descending", "nms"]

cdef extern from *:
    """
    #include <algorithm>
    #include <cmath>
    #include <utility>

    struct EmberNmsKey { double score; long long index; };

    /* Descending, NaN first (NaN sorts above every number in torch); with std::stable_sort
       equal scores keep their input order. */
    static inline bool ember_nms_before(const EmberNmsKey &a, const EmberNmsKey &b) {
        if (std::isnan(b.score)) return false;
        if (std::isnan(a.score)) return true;
        return a.score > b.score;
    }

    static void ember_nms_sort(EmberNmsKey *keys, long long n) {
        std::stable_sort(keys, keys + n, ember_nms_before);
    }

    /* torch's CPU sort(descending=True) without stable=True: std::sort with its
       comparator (NaN first, then greater), so equal values end up in its order. */
    static void ember_nms_sort_unstable(EmberNmsKey *keys, long long n) {
        std::sort(keys, keys + n, ember_nms_before);
    }

    /* (class, rank) pairs: the boxes of each class together, in score order inside it. */
    static void ember_nms_group(std::pair<long long, long long> *items, long long n) {
        std::sort(items, items + n);
    }

    static void ember_nms_sort_ranks(long long *ranks, long long n) {
        std::sort(ranks, ranks + n);
    }

    /* (key, position) pairs by key: the spatial packing's sorts. */
    static void ember_nms_sort_keys(std::pair<double, long long> *items, long long n) {
        std::sort(items, items + n);
    }

    """
    ctypedef struct EmberNmsKey:
        double score
        long long index

    cppclass Item "std::pair<long long, long long>":
        long long first
        long long second

    cppclass KeyItem "std::pair<double, long long>":
        double first
        long long second

    void ember_nms_sort(EmberNmsKey *keys, long long n) nogil
    void ember_nms_sort_unstable(EmberNmsKey *keys, long long n) nogil
    void ember_nms_group(Item *items, long long n) nogil
    void ember_nms_sort_ranks(long long *ranks, long long n) nogil
    void ember_nms_sort_keys(KeyItem *items, long long n) nogil

ctypedef fused real:
    float
    double


cdef inline bint _suppresses(real ix1, real iy1, real ix2, real iy2, real ia, real x1,
                             real y1, real x2, real y2, real a, double thr) noexcept nogil:
    # torchvision's IoU test of one pair (NOTE [ NMS as torchvision computes it ])
    cdef real zero = 0
    cdef real xx1 = x1 if ix1 < x1 else ix1
    cdef real yy1 = y1 if iy1 < y1 else iy1
    cdef real xx2 = x2 if x2 < ix2 else ix2
    cdef real yy2 = y2 if y2 < iy2 else iy2
    cdef real w = xx2 - xx1
    cdef real h = yy2 - yy1
    w = w if zero < w else zero
    h = h if zero < h else zero
    cdef real inter = w * h
    return <double>(inter / (ia + a - inter)) > thr


cdef long long _pack(real *x1, real *y1, real *x2, real *y2, long long m, long long size,
                     KeyItem *items, long long *spatial) noexcept nogil:
    """Sort-tile-recursive packing (NOTE [ Blocks of nearby boxes ]): writes to ``spatial``
    the score positions of the ``m`` boxes in block order, boxes with a NaN coordinate
    last; returns the number of the others."""
    cdef long long i, k, n = 0, odd = m, strips, per, start, stop
    for i in range(m):
        if isnan(x1[i]) or isnan(y1[i]) or isnan(x2[i]) or isnan(y2[i]):
            odd -= 1
            spatial[odd] = i
        else:
            items[n].first = <double>x1[i] + <double>x2[i]
            items[n].second = i
            n += 1
    ember_nms_sort_keys(items, n)
    strips = <long long>ceil(sqrt(<double>n / size)) if n else 1
    per = (n + strips - 1) // strips
    per = (per + size - 1) // size * size  # whole blocks in each strip
    start = 0
    while start < n:
        stop = min(start + per, n)
        for k in range(start, stop):
            i = items[k].second
            items[k].first = <double>y1[i] + <double>y2[i]
        ember_nms_sort_keys(items + start, stop - start)
        start = stop
    for k in range(n):
        spatial[k] = items[k].second
    return n


cdef long long _greedy(real *x1, real *y1, real *x2, real *y2, real *area, long long *rank,
                       long long m, double thr, long long *kept) noexcept nogil:
    """Greedy NMS of the ``m`` boxes given in score order (NOTE [ Blocks of nearby
    boxes ]); writes ``rank`` of the kept ones to ``kept``, in order, and returns their
    number; -1 when out of memory."""
    cdef long long size = <long long>sqrt(m / 8.0)
    size = 8 if size < 8 else (256 if size > 256 else size)
    cdef long long nblocks = (m + size - 1) // size, b, i, j, k, p, q, stop, plain, nk = 0
    cdef KeyItem *items = <KeyItem *>malloc(m * sizeof(KeyItem))
    cdef long long *spatial = <long long *>malloc(m * sizeof(long long))
    cdef long long *where = <long long *>malloc(m * sizeof(long long))
    cdef real *env = <real *>malloc(4 * nblocks * sizeof(real))
    cdef long long *live = <long long *>malloc(nblocks * sizeof(long long))
    cdef real *sx1 = <real *>malloc(5 * m * sizeof(real))
    cdef unsigned char *alive = <unsigned char *>malloc(m)
    cdef unsigned char *always = <unsigned char *>malloc(nblocks)
    cdef real *sy1 = sx1 + m
    cdef real *sx2 = sx1 + 2 * m
    cdef real *sy2 = sx1 + 3 * m
    cdef real *sa = sx1 + 4 * m
    cdef real ix1, iy1, ix2, iy2
    cdef bint cull = not (thr < 0)
    if (items == NULL or spatial == NULL or where == NULL or env == NULL or live == NULL
            or sx1 == NULL or alive == NULL or always == NULL):
        nk = -1
    else:
        plain = _pack(x1, y1, x2, y2, m, size, items, spatial)
        for k in range(m):
            i = spatial[k]
            where[i] = k
            sx1[k] = x1[i]
            sy1[k] = y1[i]
            sx2[k] = x2[i]
            sy2[k] = y2[i]
            sa[k] = area[i]
            alive[k] = 1
        for b in range(nblocks):
            p = b * size
            stop = min(p + size, m)
            live[b] = stop - p
            # a block that holds a box with a NaN coordinate is always visited
            always[b] = stop > plain or not cull
            env[4 * b] = sx1[p]
            env[4 * b + 1] = sy1[p]
            env[4 * b + 2] = sx2[p]
            env[4 * b + 3] = sy2[p]
            for k in range(p + 1, stop):
                env[4 * b] = sx1[k] if sx1[k] < env[4 * b] else env[4 * b]
                env[4 * b + 1] = sy1[k] if sy1[k] < env[4 * b + 1] else env[4 * b + 1]
                env[4 * b + 2] = sx2[k] if sx2[k] > env[4 * b + 2] else env[4 * b + 2]
                env[4 * b + 3] = sy2[k] if sy2[k] > env[4 * b + 3] else env[4 * b + 3]
        for i in range(m):  # score order
            p = where[i]
            if not alive[p]:
                continue
            kept[nk] = rank[i]
            nk += 1
            alive[p] = 0
            live[p // size] -= 1
            ix1 = sx1[p]
            iy1 = sy1[p]
            ix2 = sx2[p]
            iy2 = sy2[p]
            for b in range(nblocks):
                if live[b] == 0:
                    continue
                # apart along x or y: no box of the block gives a positive w * h
                if not always[b] and (ix2 <= env[4 * b] or env[4 * b + 2] <= ix1
                                      or iy2 <= env[4 * b + 1] or env[4 * b + 3] <= iy1):
                    continue
                q = b * size
                stop = min(q + size, m)
                for j in range(q, stop):
                    if alive[j] and _suppresses(ix1, iy1, ix2, iy2, sa[p], sx1[j], sy1[j],
                                                sx2[j], sy2[j], sa[j], thr):
                        alive[j] = 0
                        live[b] -= 1
    free(items)
    free(spatial)
    free(where)
    free(env)
    free(live)
    free(sx1)
    free(alive)
    free(always)
    return nk


cdef long long _run(const real[:, ::1] boxes, const long long *order, const long long *cls,
                    long long n, double thr, long long *kept) noexcept nogil:
    """NMS of ``boxes`` visited in ``order``; with ``cls``, within each class only. Writes
    the kept ranks (positions in ``order``) to ``kept`` (ascending without ``cls``);
    returns their number."""
    cdef real *buf = <real *>malloc(5 * n * sizeof(real))
    cdef long long *rank = <long long *>malloc(n * sizeof(long long))
    cdef Item *items = NULL
    cdef real *x1 = buf
    cdef real *y1 = buf + n
    cdef real *x2 = buf + 2 * n
    cdef real *y2 = buf + 3 * n
    cdef real *area = buf + 4 * n
    cdef long long i, p, start, stop, got, k = 0
    if buf == NULL or rank == NULL:
        free(buf)
        free(rank)
        return -1
    if cls != NULL:
        items = <Item *>malloc(n * sizeof(Item))
        if items == NULL:
            free(buf)
            free(rank)
            return -1
        for i in range(n):
            items[i].first = cls[order[i]]
            items[i].second = i
        ember_nms_group(items, n)
    for i in range(n):
        rank[i] = items[i].second if cls != NULL else i
        p = order[rank[i]]
        x1[i] = boxes[p, 0]
        y1[i] = boxes[p, 1]
        x2[i] = boxes[p, 2]
        y2[i] = boxes[p, 3]
        area[i] = (x2[i] - x1[i]) * (y2[i] - y1[i])
    if cls == NULL:
        k = _greedy(x1, y1, x2, y2, area, rank, n, thr, kept)
    else:
        start = 0
        while start < n:
            stop = start + 1
            while stop < n and items[stop].first == items[start].first:
                stop += 1
            got = _greedy(x1 + start, y1 + start, x2 + start, y2 + start, area + start,
                          rank + start, stop - start, thr, kept + k)
            if got < 0:
                k = -1
                break
            k += got
            start = stop
    free(items)
    free(rank)
    free(buf)
    return k


def nms(boxes, scores, double iou_threshold, idxs=None):
    """Indices (int64) of the boxes that NMS keeps (NOTE [ NMS as torchvision computes
    it ]): by decreasing score, or with ``idxs`` in increasing index order.

    Args:
        boxes: ``(N, 4)`` float16/float32/float64 NumPy array of ``(x1, y1, x2, y2)``.
        scores: ``(N,)`` array of their scores.
        iou_threshold: boxes whose IoU with a kept box is ``> iou_threshold`` are dropped.
        idxs: optional ``(N,)`` int64 class ids: boxes suppress only boxes of their class.
    """
    cdef long long n = boxes.shape[0], i, k
    if boxes.ndim != 2 or boxes.shape[1] != 4 or scores.shape != (n,):
        raise ValueError(f"nms kernel: boxes (N, 4) and scores (N,) expected, got "
                         f"{boxes.shape} and {scores.shape}")
    if boxes.dtype == np.float16:
        boxes = boxes.astype(np.float32)  # as torchvision under autocast
    boxes = np.ascontiguousarray(boxes)
    cdef const double[::1] s = np.ascontiguousarray(scores, dtype=np.float64)
    cdef const long long[::1] c
    cdef const long long *cls = NULL
    if idxs is not None:
        c = np.ascontiguousarray(idxs, dtype=np.int64)
        if c.shape[0] != n:
            raise ValueError(f"nms kernel: {n} class ids expected, got {c.shape[0]}")
        if n:
            cls = &c[0]
    keep = np.empty(n, np.int64)
    if n == 0:
        return keep
    cdef const long long[::1] order = _descending(s, True)
    cdef long long[::1] kept = keep
    cdef const float[:, ::1] bf
    cdef const double[:, ::1] bd
    if boxes.dtype == np.float64:
        bd = boxes
        with nogil:
            k = _run(bd, &order[0], cls, n, iou_threshold, &kept[0])
    elif boxes.dtype == np.float32:
        bf = boxes
        with nogil:
            k = _run(bf, &order[0], cls, n, iou_threshold, &kept[0])
    else:
        raise TypeError(f"nms kernel: float16, float32 or float64 boxes expected, got "
                        f"{boxes.dtype}")
    if k < 0:
        raise MemoryError("nms kernel: out of memory")
    with nogil:
        for i in range(k):
            kept[i] = order[kept[i]]
        if cls != NULL:
            ember_nms_sort_ranks(&kept[0], k)
    return keep[:k].copy()


def _descending(values, bint stable):
    """The indices that sort ``values`` in decreasing order, NaN first: equal values in
    input order (``stable``) or in the order of torch's CPU sort without ``stable``."""
    cdef const double[::1] v = np.ascontiguousarray(values, dtype=np.float64).reshape(-1)
    cdef long long n = v.shape[0], i
    out = np.empty(n, np.int64)
    if n == 0:
        return out
    keys_arr = np.empty(2 * n, np.int64)  # EmberNmsKey is 16 bytes: (double, int64)
    cdef long long[::1] keys_view = keys_arr
    cdef EmberNmsKey *keys = <EmberNmsKey *>&keys_view[0]
    cdef long long[::1] o = out
    with nogil:
        for i in range(n):
            keys[i].score = v[i]
            keys[i].index = i
        if stable:
            ember_nms_sort(keys, n)
        else:
            ember_nms_sort_unstable(keys, n)
        for i in range(n):
            o[i] = keys[i].index
    return out


def argsort_descending(values):
    """The indices that ``torch.sort(values, descending=True)`` gives on the CPU (not
    stable: equal values in the order of its std::sort; NaN first). torchvision's
    per-class ``batched_nms`` orders its result with it."""
    return _descending(values, False)

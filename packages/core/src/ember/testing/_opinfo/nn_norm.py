"""OpInfos for ember.nn.functional's normalization layers and distances.

Running statistics are keyword arguments of the wrapped ops, so that the generic tests
treat them as constants (PyTorch gives them no gradient); the update of the running
statistics in training mode has an entry of its own (``batch_norm_running_stats``).
"""

from __future__ import annotations

import numpy as np

import ember.nn.functional as F
from ember.testing._opinfo.core import OpInfo, SampleInput, arr, positive


def _F(name):
    return lambda torch: getattr(torch.nn.functional, name)


def _bshape(x, c_dim=1):
    shape = [1] * x.ndim
    shape[c_dim] = x.shape[c_dim]
    return shape


def _affine(y, w, b, shape):
    if w is not None:
        y = y * np.asarray(w, np.float64).reshape(shape)
    if b is not None:
        y = y + np.asarray(b, np.float64).reshape(shape)
    return y


# ---------------------------------------------------------------------------------------
# batch_norm

def _batch_norm(lib_f):
    def op(x, w=None, b=None, *, running_mean=None, running_var=None, training=False,
           momentum=0.1, eps=1e-5):
        return lib_f(x, running_mean, running_var, w, b, training, momentum, eps)
    return op


def _batch_norm_ref(x, w=None, b=None, *, running_mean=None, running_var=None,
                    training=False, momentum=0.1, eps=1e-5):
    x64 = np.asarray(x, np.float64)
    shape = _bshape(x)
    axes = tuple(i for i in range(x.ndim) if i != 1)
    if training:
        mean, var = x64.mean(axes, keepdims=True), x64.var(axes, keepdims=True)
    else:
        mean = np.asarray(running_mean, np.float64).reshape(shape)
        var = np.asarray(running_var, np.float64).reshape(shape)
    y = (x64 - mean) / np.sqrt(var + eps)
    return _affine(y, w, b, shape).astype(x.dtype)


def _batch_norm_samples(dtype, rng):
    def stats(c):
        return {"running_mean": arr(rng, (c,), dtype, -1, 1),
                "running_var": positive(rng, (c,), dtype)}
    yield SampleInput(arr(rng, (4, 3), dtype), (arr(rng, (3,), dtype), arr(rng, (3,), dtype)),
                      stats(3), name="eval")
    yield SampleInput(arr(rng, (2, 3, 4), dtype), (arr(rng, (3,), dtype), None),
                      {**stats(3), "eps": 1e-3}, name="eval 3d")
    yield SampleInput(arr(rng, (3, 2, 2, 3), dtype), (arr(rng, (2,), dtype),
                                                      arr(rng, (2,), dtype)),
                      {**stats(2), "training": True}, name="training")
    yield SampleInput(arr(rng, (2, 3, 2, 1, 2), dtype), (),
                      {"training": True, "momentum": 0.3}, name="training no stats")
    yield SampleInput(arr(rng, (5, 2), dtype), (None, arr(rng, (2,), dtype)),
                      {"training": True}, name="training 2d")


def _running_stats(lib_f):
    """(running_mean, running_var) after one training step of batch_norm."""
    def op(x, running_mean, running_var, momentum=0.1):
        rm, rv = running_mean.clone(), running_var.clone()
        lib_f(x, rm, rv, training=True, momentum=momentum)
        return rm, rv
    return op


def _running_stats_ref(x, running_mean, running_var, momentum=0.1):
    x64 = np.asarray(x, np.float64)
    axes = tuple(i for i in range(x.ndim) if i != 1)
    n = x.size // x.shape[1]
    mean, var = x64.mean(axes), x64.var(axes) * n / (n - 1)
    return ((1 - momentum) * running_mean + momentum * mean).astype(x.dtype), \
        ((1 - momentum) * running_var + momentum * var).astype(x.dtype)


def _running_stats_samples(dtype, rng):
    yield SampleInput(arr(rng, (4, 3), dtype), (arr(rng, (3,), dtype), positive(rng, (3,), dtype)))
    yield SampleInput(arr(rng, (2, 2, 3, 2), dtype),
                      (arr(rng, (2,), dtype), positive(rng, (2,), dtype)), {"momentum": 0.5})


# ---------------------------------------------------------------------------------------
# instance_norm, layer_norm, group_norm, rms_norm, local_response_norm

def _instance_norm(lib_f):
    def op(x, w=None, b=None, *, running_mean=None, running_var=None, use_input_stats=True,
           momentum=0.1, eps=1e-5):
        return lib_f(x, running_mean, running_var, w, b, use_input_stats, momentum, eps)
    return op


def _instance_norm_ref(x, w=None, b=None, *, running_mean=None, running_var=None,
                       use_input_stats=True, momentum=0.1, eps=1e-5):
    x64 = np.asarray(x, np.float64)
    shape = _bshape(x)
    if use_input_stats:
        axes = tuple(range(2, x.ndim))
        mean, var = x64.mean(axes, keepdims=True), x64.var(axes, keepdims=True)
    else:
        mean = np.asarray(running_mean, np.float64).reshape(shape)
        var = np.asarray(running_var, np.float64).reshape(shape)
    return _affine((x64 - mean) / np.sqrt(var + eps), w, b, shape).astype(x.dtype)


def _instance_norm_samples(dtype, rng):
    yield SampleInput(arr(rng, (2, 3, 4), dtype), (arr(rng, (3,), dtype), arr(rng, (3,), dtype)))
    yield SampleInput(arr(rng, (2, 2, 3, 3), dtype), (), {"eps": 1e-3})
    yield SampleInput(arr(rng, (1, 2, 2, 2, 3), dtype), (arr(rng, (2,), dtype), None))
    yield SampleInput(arr(rng, (2, 3, 4), dtype), (),
                      {"running_mean": arr(rng, (3,), dtype, -1, 1),
                       "running_var": positive(rng, (3,), dtype), "use_input_stats": False},
                      name="running stats")


def _layer_norm_ref(x, normalized_shape, w=None, b=None, eps=1e-5):
    x64 = np.asarray(x, np.float64)
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    mean, var = x64.mean(axes, keepdims=True), x64.var(axes, keepdims=True)
    y = (x64 - mean) / np.sqrt(var + eps)
    shape = (1,) * (x.ndim - len(normalized_shape)) + tuple(normalized_shape)
    return _affine(y, w, b, shape).astype(x.dtype)


def _layer_norm_samples(dtype, rng):
    yield SampleInput(arr(rng, (3, 4), dtype), ((4,), arr(rng, (4,), dtype),
                                                arr(rng, (4,), dtype)))
    yield SampleInput(arr(rng, (2, 3, 4), dtype), ((3, 4),
                                                   arr(rng, (3, 4), dtype), None))
    yield SampleInput(arr(rng, (2, 5), dtype), ([5],), {"eps": 1e-2}, name="no affine")
    yield SampleInput(arr(rng, (0, 4), dtype), ((4,), arr(rng, (4,), dtype)), name="empty")


def _group_norm_ref(x, num_groups, w=None, b=None, eps=1e-5):
    x64 = np.asarray(x, np.float64)
    n, c = x.shape[:2]
    g = x64.reshape(n, num_groups, -1)
    y = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + eps))
    return _affine(y.reshape(x.shape), w, b, _bshape(x)).astype(x.dtype)


def _group_norm_samples(dtype, rng):
    yield SampleInput(arr(rng, (2, 4, 3), dtype), (2, arr(rng, (4,), dtype),
                                                   arr(rng, (4,), dtype)))
    yield SampleInput(arr(rng, (2, 6, 2, 2), dtype), (3,), {"eps": 1e-3})
    yield SampleInput(arr(rng, (1, 4, 2, 1, 2), dtype), (4, arr(rng, (4,), dtype), None))
    # (weight None with a bias makes torch 2.13's group_norm fail: "tensor does not have a
    # device")
    yield SampleInput(arr(rng, (3, 4), dtype), (1, arr(rng, (4,), dtype), arr(rng, (4,), dtype)))


def _rms_norm_ref(x, normalized_shape, w=None, eps=None):
    x64 = np.asarray(x, np.float64)
    if eps is None:
        eps = np.finfo(x.dtype).eps
    axes = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    y = x64 / np.sqrt(np.mean(x64 ** 2, axes, keepdims=True) + eps)
    if w is not None:
        y = y * w
    return y.astype(x.dtype)


def _rms_norm_samples(dtype, rng):
    yield SampleInput(arr(rng, (3, 4), dtype), ((4,), arr(rng, (4,), dtype)))
    yield SampleInput(arr(rng, (2, 3, 4), dtype), ((3, 4),), {"eps": 1e-3})
    yield SampleInput(arr(rng, (2, 5), dtype), ([5], None, 0.5))


def _lrn_ref(x, size, alpha=1e-4, beta=0.75, k=1.0):
    x64 = np.asarray(x, np.float64)
    sq = x64 ** 2
    pads = [(0, 0)] * x.ndim
    pads[1] = (size // 2, (size - 1) // 2)
    sp = np.pad(sq, pads)
    c = x.shape[1]
    acc = sum(sp[:, i:i + c] for i in range(size))
    return (x64 / (k + alpha * acc / size) ** beta).astype(x.dtype)


def _lrn_samples(dtype, rng):
    yield SampleInput(arr(rng, (2, 5, 3), dtype), (3,))
    yield SampleInput(arr(rng, (2, 4, 2, 3), dtype), (2,), {"alpha": 0.1, "beta": 0.5,
                                                            "k": 2.0})
    yield SampleInput(arr(rng, (1, 3, 2, 2, 2), dtype), (4,), {"alpha": 0.5})


# ---------------------------------------------------------------------------------------
# distances

def _cosine_similarity_ref(x1, x2, dim=1, eps=1e-8):
    a, b = np.asarray(x1, np.float64), np.asarray(x2, np.float64)
    na = np.maximum(np.sqrt(np.sum(a * a, dim)), eps)
    nb = np.maximum(np.sqrt(np.sum(b * b, dim)), eps)
    return (np.sum(a * b, dim) / (na * nb)).astype(np.result_type(x1, x2))


def _cosine_samples(dtype, rng):
    yield SampleInput(arr(rng, (3, 4), dtype), (arr(rng, (3, 4), dtype),))
    yield SampleInput(arr(rng, (2, 3, 4), dtype), (arr(rng, (3, 4), dtype),), {"dim": -1},
                      name="broadcast")
    yield SampleInput(arr(rng, (4, 2), dtype), (arr(rng, (4, 2), dtype),), {"dim": 0,
                                                                          "eps": 0.1})


def _pairwise_ref(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    d = np.asarray(x1, np.float64) - x2 + eps
    if p == float("inf"):
        r = np.max(np.abs(d), -1, keepdims=keepdim)
    else:
        r = np.sum(np.abs(d) ** p, -1, keepdims=keepdim) ** (1 / p)
    return r.astype(np.result_type(x1, x2))


def _pairwise_samples(dtype, rng):
    yield SampleInput(arr(rng, (3, 4), dtype), (arr(rng, (3, 4), dtype),))
    yield SampleInput(arr(rng, (3, 4), dtype), (arr(rng, (4,), dtype),),
                      {"p": 1.0, "keepdim": True})
    yield SampleInput(arr(rng, (2, 3), dtype), (arr(rng, (2, 3), dtype),), {"p": 3.0})
    yield SampleInput(arr(rng, (5,), dtype), (arr(rng, (5,), dtype),), {"p": float("inf")})


def _pdist_ref(x, p=2):
    x64 = np.asarray(x, np.float64)
    i, j = np.triu_indices(x.shape[0], 1)
    d = np.abs(x64[i] - x64[j])
    if p == float("inf"):
        r = d.max(-1) if d.size else np.zeros(len(i))
    else:
        r = np.sum(d ** p, -1) ** (1 / p)
    return r.astype(x.dtype)


def _pdist_samples(dtype, rng):
    yield SampleInput(arr(rng, (4, 3), dtype))
    yield SampleInput(arr(rng, (5, 2), dtype), (1,))
    yield SampleInput(arr(rng, (3, 4), dtype), (3.0,))
    yield SampleInput(arr(rng, (3, 2), dtype), (float("inf"),))
    yield SampleInput(arr(rng, (1, 3), dtype), name="one row")


OPS = [
    OpInfo("batch_norm", _batch_norm(F.batch_norm), _batch_norm_samples, ref=_batch_norm_ref,
           torch_op=lambda torch: _batch_norm(torch.nn.functional.batch_norm)),
    OpInfo("batch_norm_running_stats", _running_stats(F.batch_norm), _running_stats_samples,
           ref=_running_stats_ref, differentiable=False,
           torch_op=lambda torch: _running_stats(torch.nn.functional.batch_norm)),
    OpInfo("instance_norm", _instance_norm(F.instance_norm), _instance_norm_samples,
           ref=_instance_norm_ref,
           torch_op=lambda torch: _instance_norm(torch.nn.functional.instance_norm)),
    OpInfo("layer_norm", F.layer_norm, _layer_norm_samples, ref=_layer_norm_ref,
           torch_op=_F("layer_norm")),
    OpInfo("group_norm", F.group_norm, _group_norm_samples, ref=_group_norm_ref,
           torch_op=_F("group_norm")),
    OpInfo("rms_norm", F.rms_norm, _rms_norm_samples, ref=_rms_norm_ref,
           torch_op=_F("rms_norm")),
    OpInfo("local_response_norm", F.local_response_norm, _lrn_samples, ref=_lrn_ref,
           torch_op=_F("local_response_norm")),
    OpInfo("cosine_similarity", F.cosine_similarity, _cosine_samples,
           ref=_cosine_similarity_ref, torch_op=_F("cosine_similarity")),
    OpInfo("pairwise_distance", F.pairwise_distance, _pairwise_samples, ref=_pairwise_ref,
           torch_op=_F("pairwise_distance")),
    OpInfo("pdist", F.pdist, _pdist_samples, ref=_pdist_ref, torch_op=_F("pdist")),
]

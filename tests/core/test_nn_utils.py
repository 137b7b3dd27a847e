"""ember.nn.utils: gradient clipping against NumPy, parameter/vector conversion, and the
parametrizations (parametrize, weight_norm, spectral_norm) with PyTorch's module layout."""

from __future__ import annotations

import copy
import math
import pickle
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ember
import ember.nn as nn
from ember.autograd import gradcheck
from ember.nn.utils import parametrizations, parametrize


class Lin(nn.Module):
    """A Linear-like module: ``x @ weight.T + bias``."""

    def __init__(self, i, o, bias=True):
        super().__init__()
        self.weight = nn.Parameter(ember.ones(o, i))
        self.bias = nn.Parameter(ember.zeros(o)) if bias else None

    def forward(self, x):
        y = x @ self.weight.T
        return y if self.bias is None else y + self.bias


def with_grads(arrays, dtype=np.float32):
    params = []
    for a in arrays:
        p = nn.Parameter(ember.zeros(a.shape, dtype=ember.float64 if dtype == np.float64
                                     else ember.float32))
        p.grad = ember.tensor(a.astype(dtype))
        params.append(p)
    return params


def np_norm(arrays, norm_type):
    flat = np.concatenate([a.ravel().astype(np.float64) for a in arrays])
    if norm_type == math.inf:
        return np.abs(flat).max()
    if norm_type == 0:  # as in PyTorch: the "0-norm" of the per-tensor norms
        return float(sum(bool((a != 0).any()) for a in arrays))
    return (np.abs(flat) ** norm_type).sum() ** (1.0 / norm_type)


# -- clip_grad ---------------------------------------------------------------------------------
grad_arrays = st.lists(
    hnp.arrays(np.float32, hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=4),
               elements=st.floats(-10, 10, width=32)), min_size=1, max_size=4)


@settings(max_examples=50, deadline=None)
@given(arrays=grad_arrays, norm_type=st.sampled_from([1.0, 2.0, 3.5, math.inf, 0]),
       max_norm=st.floats(0.01, 20.0), foreach=st.sampled_from([None, True, False]))
def test_clip_grad_norm_matches_numpy(arrays, norm_type, max_norm, foreach):
    params = with_grads(arrays)
    total = nn.utils.clip_grad_norm_(params, max_norm, norm_type=norm_type, foreach=foreach)
    expected = np_norm(arrays, norm_type)
    np.testing.assert_allclose(float(total), expected, rtol=1e-5, atol=1e-6)
    coef = min(max_norm / (np.float32(expected) + 1e-6), 1.0)
    for p, a in zip(params, arrays, strict=True):
        np.testing.assert_allclose(p.grad.numpy(), a * np.float32(coef), rtol=1e-5, atol=1e-6)


def test_clip_grad_norm_details():
    arrays = [np.full((2, 2), 3.0), np.full(3, -4.0)]
    params = with_grads(arrays)
    params.append(nn.Parameter(ember.ones(2)))  # no grad: skipped
    total = nn.utils.clip_grad_norm_(params, 1.0)
    assert total.dtype == ember.float32 and total.shape == () and not total.requires_grad
    np.testing.assert_allclose(float(total), math.sqrt(4 * 9 + 3 * 16), rtol=1e-6)
    np.testing.assert_allclose(float(nn.utils.get_total_norm([p.grad for p in params[:2]])),
                               1.0, rtol=1e-5)
    # one tensor; the string "inf"; float64 grads give a float64 norm
    p = with_grads([np.array([3.0, -4.0])], np.float64)[0]
    total = nn.utils.clip_grad_norm_(p, 100.0, norm_type="inf")
    assert total.dtype == ember.float64 and float(total) == 4.0
    assert p.grad.tolist() == [3.0, -4.0]
    # nothing to clip
    assert float(nn.utils.clip_grad_norm_([], 1.0)) == 0.0
    assert float(nn.utils.clip_grad_norm_([nn.Parameter(ember.ones(2))], 1.0)) == 0.0


def test_clip_grad_norm_empty_generator_warns():
    with pytest.warns(UserWarning, match="`parameters` is an empty generator, no gradient "
                                         "clipping will occur."):
        nn.utils.clip_grad_norm_((p for p in []), 1.0)


def test_clip_grad_norm_nonfinite():
    a = np.ones((2, 2), np.float32)
    a[0, 0] = np.nan
    with pytest.raises(RuntimeError, match="The total norm of order 2.0 for gradients from "
                                           "`parameters` is non-finite, so it cannot be "
                                           "clipped."):
        nn.utils.clip_grad_norm_(with_grads([a]), 1.0, error_if_nonfinite=True)
    a[0, 0] = np.inf
    with pytest.raises(RuntimeError, match="The total norm of order inf"):
        nn.utils.clip_grad_norm_(with_grads([a]), 1.0, norm_type="inf", error_if_nonfinite=True)
    params = with_grads([a])
    total = nn.utils.clip_grad_norm_(params, 1.0)  # scaled by the non-finite norm anyway
    assert math.isinf(float(total)) and params[0].grad.tolist()[0][1] == 0.0


def test_clip_grad_norm_under_grad_mode():
    """The clipping itself is not recorded (it runs under no_grad)."""
    params = with_grads([np.full(3, 2.0)])
    total = nn.utils.clip_grad_norm_(params, 1.0)
    assert total.grad_fn is None and params[0].grad.grad_fn is None


def test_clip_grad_norm_deprecated():
    with pytest.warns(FutureWarning, match="clip_grad_norm` is now deprecated"):
        nn.utils.clip_grad_norm(with_grads([np.ones(2)]), 1.0)


def test_clip_grads_with_norm_and_total_norm():
    arrays = [np.full((2, 2), 3.0), np.full(3, -4.0)]
    params = with_grads(arrays)
    total = nn.utils.get_total_norm([p.grad for p in params], 1.0)
    assert float(total) == 24.0
    nn.utils.clip_grads_with_norm_(params, 12.0, total)
    np.testing.assert_allclose(params[0].grad.numpy(), np.full((2, 2), 3.0 * 12 / (24 + 1e-6)),
                               rtol=1e-6)
    nn.utils.clip_grads_with_norm_(params, 100.0, total)  # factor above 1: unchanged
    np.testing.assert_allclose(params[1].grad.numpy(), np.full(3, -4.0 * 12 / (24 + 1e-6)),
                               rtol=1e-6)
    assert float(nn.utils.get_total_norm(ember.tensor([3.0, 4.0]))) == 5.0
    assert float(nn.utils.get_total_norm([])) == 0.0


@settings(max_examples=30, deadline=None)
@given(arrays=grad_arrays, clip=st.floats(0.0, 5.0))
def test_clip_grad_value_matches_numpy(arrays, clip):
    params = with_grads(arrays)
    assert nn.utils.clip_grad_value_(params, clip, foreach=False) is None
    for p, a in zip(params, arrays, strict=True):
        np.testing.assert_array_equal(p.grad.numpy(), np.clip(a, -np.float32(clip),
                                                              np.float32(clip)))


def test_clip_grad_value_single_tensor():
    p = with_grads([np.array([-3.0, 0.5, 3.0])])[0]
    nn.utils.clip_grad_value_(p, 1)
    assert p.grad.tolist() == [-1.0, 0.5, 1.0]


# -- parameters <-> vector --------------------------------------------------------------------
def test_parameters_to_vector():
    arrays = [np.arange(6.0).reshape(2, 3), np.array([7.0]), np.arange(8.0).reshape(2, 2, 2)]
    params = [nn.Parameter(ember.tensor(a)) for a in arrays]
    vec = nn.utils.parameters_to_vector(params)
    np.testing.assert_array_equal(vec.detach().numpy(),
                                  np.concatenate([a.ravel() for a in arrays]))
    assert vec.requires_grad
    (vec * ember.arange(15.0, dtype=ember.float64)).sum().backward()
    assert params[1].grad.tolist() == [6.0]
    assert params[0].grad.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_vector_to_parameters():
    params = [nn.Parameter(ember.zeros(2, 3)), nn.Parameter(ember.zeros(1)),
              nn.Parameter(ember.zeros(2, 2))]
    vec = ember.arange(11.0)
    nn.utils.vector_to_parameters(vec, params)
    assert params[0].tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert params[2].tolist() == [[7.0, 8.0], [9.0, 10.0]]
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in params)
    vec[0] = 100.0  # the parameters' data are views of the vector, as in PyTorch
    assert params[0].tolist()[0][0] == 100.0
    with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
        nn.utils.vector_to_parameters([1.0], params)


# -- parametrize ------------------------------------------------------------------------------
class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


class Double(nn.Module):
    def forward(self, X):
        return X * 2

    def right_inverse(self, X):
        return X / 2


class ToFloat64(nn.Module):
    def forward(self, X):
        return X.double()


class TestParametrize:
    def make(self):
        m = Lin(3, 3)
        with ember.no_grad():
            m.weight.copy_(ember.arange(9.0).reshape(3, 3))
        return m

    def test_register(self):
        m = self.make()
        w = m.weight
        assert parametrize.register_parametrization(m, "weight", Symmetric()) is m
        assert type(m).__name__ == "ParametrizedLin" and type(m).__bases__ == (Lin,)
        assert isinstance(m, Lin) and type(Lin(1, 1)) is Lin  # other instances unaffected
        assert m.parametrizations.weight.original is w  # the same parameter object
        assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
        assert [n for n, _ in m.named_parameters()] == ["bias",
                                                        "parametrizations.weight.original"]
        assert m.weight.tolist() == [[0.0, 1.0, 2.0], [1.0, 4.0, 5.0], [2.0, 5.0, 8.0]]
        assert parametrize.is_parametrized(m) and parametrize.is_parametrized(m, "weight")
        assert not parametrize.is_parametrized(m, "bias")
        assert not parametrize.is_parametrized(Lin(1, 1))
        assert parametrize.type_before_parametrizations(m) is Lin
        assert repr(m) == """\
ParametrizedLin(
  (parametrizations): ModuleDict(
    (weight): ParametrizationList(
      (0): Symmetric()
    )
  )
)"""

    def test_gradient_reaches_original(self):
        m = self.make()
        parametrize.register_parametrization(m, "weight", Symmetric())
        m(ember.ones(1, 3)).sum().backward()
        w = m.parametrizations.weight.original
        # d/dW of sum(sym(W) @ 1): ones on the upper triangle, doubled off the diagonal
        assert w.grad.tolist() == [[1.0, 2.0, 2.0], [0.0, 1.0, 2.0], [0.0, 0.0, 1.0]]

    def test_chain_and_right_inverse(self):
        m = self.make()
        parametrize.register_parametrization(m, "weight", Symmetric())
        parametrize.register_parametrization(m, "weight", Double())
        assert m.weight.tolist() == [[0.0, 2.0, 4.0], [2.0, 8.0, 10.0], [4.0, 10.0, 16.0]]
        assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
        with pytest.raises(RuntimeError, match="parametrization Symmetric does not implement "
                                               "right_inverse."):
            m.weight = ember.ones(3, 3)
        m2 = self.make()
        w = m2.weight
        parametrize.register_parametrization(m2, "weight", Double())
        assert m2.parametrizations.weight.original is w  # right_inverse ran in place
        assert w.tolist()[0] == [0.0, 0.5, 1.0]
        m2.weight = ember.full((3, 3), 4.0)
        assert w.tolist()[0] == [2.0, 2.0, 2.0] and m2.weight.tolist()[0] == [4.0, 4.0, 4.0]

    def test_cached(self):
        m = self.make()
        parametrize.register_parametrization(m, "weight", Symmetric())
        assert m.weight is not m.weight
        with parametrize.cached():
            a = m.weight
            assert m.weight is a
            with parametrize.cached():  # nests
                assert m.weight is a
            assert m.weight is a
        assert m.weight is not a

    def test_remove(self):
        m = self.make()
        w = m.weight
        parametrize.register_parametrization(m, "weight", Symmetric())
        parametrize.remove_parametrizations(m, "weight")
        assert type(m) is Lin and not hasattr(m, "parametrizations")
        assert m.weight is w and isinstance(w, nn.Parameter)  # optimizers stay valid
        assert w.tolist() == [[0.0, 1.0, 2.0], [1.0, 4.0, 5.0], [2.0, 5.0, 8.0]]
        assert list(m.state_dict()) == ["bias", "weight"]  # re-registered last
        m2 = self.make()
        parametrize.register_parametrization(m2, "weight", Double())
        parametrize.remove_parametrizations(m2, "weight", leave_parametrized=False)
        assert m2.weight.tolist()[0] == [0.0, 0.5, 1.0]

    def test_buffer(self):
        m = Lin(2, 2)
        m.register_buffer("buf", ember.ones(2))
        parametrize.register_parametrization(m, "buf", Double())
        assert list(m.state_dict()) == ["weight", "bias", "parametrizations.buf.original"]
        assert m.buf.tolist() == [1.0, 1.0]
        assert [n for n, _ in m.named_buffers()] == ["parametrizations.buf.original"]

    def test_training_mode_and_unsafe(self):
        m = Lin(2, 2)
        m.eval()
        p = Symmetric()
        parametrize.register_parametrization(m, "weight", p)
        assert not p.training
        m2 = Lin(2, 2)
        parametrize.register_parametrization(m2, "weight", ToFloat64(), unsafe=True)
        assert m2.weight.dtype == ember.float64

    def test_errors(self):
        with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a "
                                             "parametrized element with name 'nope'"):
            parametrize.register_parametrization(Lin(2, 2), "nope", Symmetric())
        with pytest.raises(ValueError, match="does not have a parametrization on weight"):
            parametrize.remove_parametrizations(Lin(2, 2), "weight")
        with pytest.raises(ValueError, match="Registering a parametrization may not change the "
                                             "dtype of the tensor, unless `unsafe` flag is "
                                             "enabled.\nunparametrized dtype: ember.float32\n"
                                             "parametrized dtype: ember.float64"):
            parametrize.register_parametrization(Lin(2, 2), "weight", ToFloat64())

        class Shrink(nn.Module):
            def forward(self, X):
                return X[:1]

        with pytest.raises(ValueError, match="may not change the shape of the tensor"):
            parametrize.register_parametrization(Lin(2, 2), "weight", Shrink())
        m = Lin(2, 2)
        parametrize.register_parametrization(m, "weight", Symmetric())
        with pytest.raises(ValueError, match="module.weight.shape"):
            parametrize.register_parametrization(m, "weight", Shrink())
        with pytest.raises(ValueError, match="ParametrizationList requires one or more "
                                             "modules."):
            parametrize.ParametrizationList([], ember.ones(1))

    def test_copies(self):
        m = self.make()
        parametrize.register_parametrization(m, "weight", Symmetric())
        with pytest.raises(RuntimeError, match="Serialization of parametrized modules is only "
                                               "supported through state_dict()"):
            pickle.dumps(m)
        c = copy.deepcopy(m)
        assert type(c).__name__ == "ParametrizedLin"
        assert c.weight.tolist() == m.weight.tolist()
        assert c.parametrizations.weight.original is not m.parametrizations.weight.original

    def test_state_dict_round_trip(self):
        m = self.make()
        parametrize.register_parametrization(m, "weight", Symmetric())
        m2 = Lin(3, 3)
        parametrize.register_parametrization(m2, "weight", Symmetric())
        m2.load_state_dict(m.state_dict())
        assert m2.weight.tolist() == m.weight.tolist()

    def test_transfer(self):
        m = self.make()
        parametrize.register_parametrization(m, "weight", Double())
        other = Lin(3, 3)
        parametrize.transfer_parametrizations_and_params(m, other)
        assert parametrize.is_parametrized(other, "weight")
        assert other.parametrizations.weight.original is m.parametrizations.weight.original


# -- weight_norm --------------------------------------------------------------------------------
def np_norm_except_dim(v, dim):
    if dim is None or dim == -1:
        return np.sqrt((v ** 2).sum())
    dim %= v.ndim
    axes = tuple(d for d in range(v.ndim) if d != dim)
    return np.sqrt((v ** 2).sum(axis=axes, keepdims=True))


class TestWeightNorm:
    @pytest.mark.parametrize("dim, g_shape", [(0, (4, 1)), (1, (1, 3)), (None, ()), (-1, ()),
                                              (-2, (4, 1))])
    def test_forward_and_keys(self, dim, g_shape):
        w0 = np.arange(12.0).reshape(4, 3) - 5
        m = Lin(3, 4)
        with ember.no_grad():
            m.weight.copy_(ember.tensor(w0))
        assert parametrizations.weight_norm(m, dim=dim) is m
        sd = m.state_dict()
        assert list(sd) == ["bias", "parametrizations.weight.original0",
                            "parametrizations.weight.original1"]
        assert tuple(sd["parametrizations.weight.original0"].shape) == g_shape
        np.testing.assert_allclose(sd["parametrizations.weight.original0"].numpy(),
                                   np.broadcast_to(np_norm_except_dim(w0, dim), g_shape),
                                   rtol=1e-6)
        np.testing.assert_allclose(m.weight.detach().numpy(), w0, rtol=1e-6, atol=1e-6)
        # after changing g, w = g * v / ||v||
        g = np.arange(1.0, 1.0 + np.prod(g_shape)).reshape(g_shape)
        with ember.no_grad():
            m.parametrizations.weight.original0.copy_(ember.tensor(g))
        np.testing.assert_allclose(m.weight.detach().numpy(),
                                   g * w0 / np_norm_except_dim(w0, dim), rtol=1e-5)

    def test_conv_weight(self):
        w0 = np.random.default_rng(0).standard_normal((4, 3, 2, 2))
        m = nn.Module()
        m.weight = nn.Parameter(ember.tensor(w0))
        parametrizations.weight_norm(m)
        assert m.parametrizations.weight.original0.shape == (4, 1, 1, 1)
        np.testing.assert_allclose(m.weight.detach().numpy(), w0, rtol=1e-10)

    @pytest.mark.parametrize("dim", [0, 1, None])
    def test_gradcheck(self, dim):
        m = Lin(3, 4)
        with ember.no_grad():
            m.weight.copy_(ember.tensor(np.random.default_rng(1).standard_normal((4, 3))))
        parametrizations.weight_norm(m, dim=dim)
        m.double()
        wn = m.parametrizations.weight[0]
        g = m.parametrizations.weight.original0.detach().clone().requires_grad_()
        v = m.parametrizations.weight.original1.detach().clone().requires_grad_()
        assert gradcheck(lambda g, v: wn(g, v), (g, v))
        x = ember.ones(2, 3, dtype=ember.float64)
        m(x).sum().backward()
        assert m.parametrizations.weight.original0.grad is not None
        assert m.parametrizations.weight.original1.grad.shape == (4, 3)

    def test_loads_old_keys(self):
        m = Lin(3, 4)
        parametrizations.weight_norm(m)
        old = {"weight_g": ember.full((4, 1), 2.0), "weight_v": ember.ones(4, 3),
               "bias": ember.zeros(4)}
        assert repr(m.load_state_dict(old)) == "<All keys matched successfully>"
        np.testing.assert_allclose(m.weight.detach().numpy(), np.full((4, 3), 2 / math.sqrt(3)),
                                   rtol=1e-6)

    def test_remove(self):
        m = Lin(3, 4)
        parametrizations.weight_norm(m)
        with ember.no_grad():
            m.parametrizations.weight.original0.mul_(3.0)
        parametrize.remove_parametrizations(m, "weight")
        assert type(m) is Lin and list(m.state_dict()) == ["bias", "weight"]
        np.testing.assert_allclose(m.weight.detach().numpy(), np.full((4, 3), 3.0), rtol=1e-6)
        assert isinstance(m.weight, nn.Parameter)
        with pytest.raises(ValueError, match="Cannot leave unparametrized"):
            m2 = Lin(3, 4)
            parametrizations.weight_norm(m2)
            parametrize.remove_parametrizations(m2, "weight", leave_parametrized=False)


# -- spectral_norm ------------------------------------------------------------------------------
class TestSpectralNorm:
    def make(self, shape=(5, 4), seed=0, **kwargs):
        m = nn.Module()
        m.weight = nn.Parameter(ember.tensor(
            np.random.default_rng(seed).standard_normal(shape)))
        return parametrizations.spectral_norm(m, **kwargs)

    def test_layout(self):
        m = self.make()
        assert list(m.state_dict()) == ["parametrizations.weight.original",
                                        "parametrizations.weight.0._u",
                                        "parametrizations.weight.0._v"]
        assert m.parametrizations.weight[0]._u.shape == (5,)
        assert m.parametrizations.weight[0]._v.shape == (4,)
        assert type(m).__name__ == "ParametrizedModule"

    def test_sigma_converges_to_largest_singular_value(self):
        m = self.make(n_power_iterations=50)
        w = m.weight.detach().numpy()  # one access: 50 more iterations
        np.testing.assert_allclose(np.linalg.svd(w, compute_uv=False)[0], 1.0, rtol=1e-6)
        orig = m.parametrizations.weight.original.detach().numpy()
        np.testing.assert_allclose(w, orig / np.linalg.svd(orig, compute_uv=False)[0],
                                   rtol=1e-6)

    def test_power_iteration_state(self):
        m = self.make()
        sn = m.parametrizations.weight[0]
        u0, v0 = sn._u.numpy().copy(), sn._v.numpy().copy()
        np.testing.assert_allclose(np.linalg.norm(u0), 1.0, rtol=1e-12)
        m.weight  # noqa: B018 - training mode: one power iteration per access
        w = m.parametrizations.weight.original.detach().numpy()
        u1 = w @ v0
        u1 /= np.linalg.norm(u1)
        v1 = w.T @ u1
        v1 /= np.linalg.norm(v1)
        np.testing.assert_allclose(sn._u.numpy(), u1, rtol=1e-10)
        np.testing.assert_allclose(sn._v.numpy(), v1, rtol=1e-10)
        # eval mode: the stored vectors are used as they are
        m.eval()
        out = m.weight.detach().numpy()
        np.testing.assert_array_equal(sn._u.numpy(), u1)
        np.testing.assert_allclose(out, w / (u1 @ w @ v1), rtol=1e-10)

    def test_gradcheck_eval(self):
        m = self.make()
        m.eval()
        sn = m.parametrizations.weight[0]
        w = m.parametrizations.weight.original.detach().clone().requires_grad_()
        assert gradcheck(sn, (w,))

    def test_dims(self):
        m = self.make((3, 4, 2, 2), dim=1, n_power_iterations=30)
        assert m.parametrizations.weight[0]._u.shape == (4,)
        assert m.parametrizations.weight[0]._v.shape == (12,)
        w = m.weight.detach().numpy()
        mat = np.moveaxis(w, 1, 0).reshape(4, -1)
        np.testing.assert_allclose(np.linalg.svd(mat, compute_uv=False)[0], 1.0, rtol=1e-5)
        m1 = self.make((5,))  # a vector is normalized
        np.testing.assert_allclose(np.linalg.norm(m1.weight.detach().numpy()), 1.0, rtol=1e-12)
        assert list(m1.state_dict()) == ["parametrizations.weight.original"]

    def test_errors(self):
        with pytest.raises(IndexError, match="Dimension out of range \\(expected to be in range "
                                             "of \\[-2, 1\\] but got 2\\)"):
            self.make(dim=2)
        with pytest.raises(ValueError, match="Expected n_power_iterations to be positive, but "
                                             "got n_power_iterations=0"):
            self.make(n_power_iterations=0)
        with pytest.raises(ValueError, match="has no parameter or buffer with name 'nope'"):
            parametrizations.spectral_norm(Lin(2, 2), "nope")

    def test_training_step(self):
        """A whole module trains through the parametrization."""
        m = nn.Sequential(OrderedDict([("fc", Lin(3, 2))]))
        parametrizations.spectral_norm(m.fc)
        x = ember.ones(4, 3)
        loss = m(x).pow(2).sum()
        loss.backward()
        assert m.fc.parametrizations.weight.original.grad.shape == (2, 3)
        assert "fc.parametrizations.weight.0._u" in m.state_dict()

"""The behaviour behind signature fixes that the API-surface test asked for (issue 15):
parameters PyTorch has and ember now takes too."""

import io
import zipfile

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck


def test_global_forward_hook_with_kwargs_and_always_call():
    seen = []

    def hook(module, args, kwargs, output):
        seen.append((type(module).__name__, kwargs, output is None))

    class Boom(nn.Module):
        def forward(self, x, scale=1.0):
            raise ValueError("boom")

    handle = nn.modules.module.register_module_forward_hook(hook, with_kwargs=True,
                                                            always_call=True)
    try:
        nn.Identity()(ember.ones(2))
        with pytest.raises(ValueError, match="boom"):
            Boom()(ember.ones(2), scale=2.0)
    finally:
        handle.remove()
    assert seen == [("Identity", {}, False), ("Boom", {"scale": 2.0}, True)]
    nn.Identity()(ember.ones(2))  # removed: not called again
    assert len(seen) == 2


def test_modules_remove_duplicate():
    shared = nn.Linear(2, 2)
    net = nn.Sequential(shared, shared)
    assert len(list(net.modules())) == 2
    assert len(list(net.modules(remove_duplicate=False))) == 3


def test_save_without_byteorder_record():
    for disable in (False, True):
        buf = io.BytesIO()
        ember.save({"w": ember.arange(3.0)}, buf, _disable_byteorder_record=disable)
        names = zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()
        assert any(n.endswith("/byteorder") for n in names) is not disable
        buf.seek(0)
        assert ember.load(buf)["w"].tolist() == [0.0, 1.0, 2.0]


class Custom:
    pass


def test_load_defaults_are_none_meaning_weights_only(tmp_path):
    path = tmp_path / "obj.pt"
    ember.save({"x": Custom()}, path)
    with pytest.raises(Exception, match="Custom"):
        ember.load(path)  # weights_only=None means True
    assert isinstance(ember.load(path, weights_only=False)["x"], Custom)


def test_make_tensor_needs_device_and_follows_manual_seed():
    from ember.testing import make_tensor

    with pytest.raises(TypeError):
        make_tensor(2, 3, dtype=ember.float32)
    ember.manual_seed(0)
    a = make_tensor(2, 3, dtype=ember.float32, device="cpu")
    ember.manual_seed(0)
    b = make_tensor((2, 3), dtype=ember.float32, device="cpu")
    assert np.array_equal(a.numpy(), b.numpy())
    assert a.shape == (2, 3) and float(a.abs().max()) < 9


def test_gradcheck_refuses_forward_ad_and_gradgradcheck_takes_torchs_arguments():
    x = ember.tensor([0.3, -1.2], dtype=ember.float64, requires_grad=True)
    with pytest.raises(ValueError, match="forward-mode"):
        gradcheck(ember.sin, (x,), check_forward_ad=True)
    with pytest.raises(ValueError, match="forward-mode"):
        gradgradcheck(ember.sin, (x,), check_fwd_over_rev=True)
    assert gradgradcheck(ember.sin, (x,), nondet_tol=0.0, check_undefined_grad=True,
                         check_grad_dtypes=False, check_batched_grad=False, masked=False)
    assert gradcheck(ember.sin, (x,), check_forward_ad=False, check_batched_forward_grad=False)


def test_functional_sigmoid_tanh_take_input_only():
    x = ember.tensor([-1.0, 0.0, 2.0])
    assert np.allclose(F.sigmoid(x).numpy(), 1 / (1 + np.exp(-x.numpy())))
    assert np.allclose(F.tanh(input=x).numpy(), np.tanh(x.numpy()))
    with pytest.raises(TypeError):
        F.sigmoid(x, out=ember.empty(3))


def test_tensor_split_norm_lu_methods():
    x = ember.arange(10.0)
    assert [p.tolist() for p in x.split(split_size=4)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert [len(p) for p in x.split([3, 7], dim=0)] == [3, 7]
    m = ember.tensor([[3.0, 4.0], [1.0, 2.0]])
    assert float(m.norm()) == pytest.approx(np.sqrt(30.0))
    assert m.norm(p=1, dim=1, keepdim=True, dtype=ember.float64).dtype == ember.float64
    with pytest.raises(TypeError):
        m.norm(out=ember.empty(()))
    LU, piv, info = m.lu(pivot=True, get_infos=True)
    LU2, piv2 = ember.lu(m)
    assert np.allclose(LU.numpy(), LU2.numpy()) and piv.tolist() == piv2.tolist()
    assert int(info) == 0


def test_is_tensor_positional_only_and_sampler_takes_no_arguments():
    assert ember.is_tensor(ember.ones(1)) and not ember.is_tensor([1])
    with pytest.raises(TypeError):
        ember.is_tensor(obj=ember.ones(1))
    from ember.utils.data import Sampler

    with pytest.raises(TypeError):
        Sampler([1, 2])


def test_from_dlpack_device_and_copy():
    a = np.arange(4.0)
    shared = ember.from_dlpack(a)
    copied = ember.from_dlpack(a, copy=True)
    same_device = ember.from_dlpack(a, device="cpu", copy=False)
    a[0] = 9.0
    assert shared[0].item() == 9.0 and same_device[0].item() == 9.0
    assert copied[0].item() == 0.0
    assert ember.from_dlpack(a, device=ember.device("cpu")).tolist() == a.tolist()


def test_set_default_dtype_positional_only():
    with pytest.raises(TypeError):
        ember.set_default_dtype(d=ember.float64)
    assert ember.get_default_dtype() == ember.float32

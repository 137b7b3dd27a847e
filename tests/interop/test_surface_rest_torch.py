"""The rest of issue 15's surface against torch 2.13: top-level names (meshgrid, cond,
SyncBatchNorm's update_stats, hash_tensor, exceptions), Tensor leftovers, nn.functional
leftovers (grouped_mm, scaled_mm, channel shuffle), backends switches, data pipes."""

import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def _e(a):
    return ember.from_numpy(np.ascontiguousarray(a))


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid(indexing):
    a, b, c = np.arange(3.0), np.arange(4.0) + 10, np.arange(2.0) - 5
    got = ember.meshgrid(_e(a), _e(b), _e(c), indexing=indexing)
    want = torch.meshgrid(_t(a), _t(b), _t(c), indexing=indexing)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    got = ember.meshgrid([_e(a), _e(b)], indexing=indexing)
    want = torch.meshgrid([_t(a), _t(b)], indexing=indexing)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_meshgrid_warns_and_grads():
    with pytest.warns(UserWarning, match="indexing argument"):
        gx, gy = ember.meshgrid(ember.arange(3.0), ember.arange(2.0))
    assert gx.shape == (3, 2)
    x = ember.arange(3.0, requires_grad=True)
    g, _ = ember.meshgrid(x, ember.arange(4.0), indexing="ij")
    g.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [4.0, 4.0, 4.0])
    with pytest.raises(ValueError, match="indexing"):
        ember.meshgrid(x, indexing="yx")


def test_cond_runs_the_branch():
    x = ember.tensor([1.0, -2.0], requires_grad=True)
    out = ember.cond(x.sum() > 0, lambda t: t.cos(), lambda t: t.sin(), (x,))
    np.testing.assert_allclose(out.detach().numpy(), np.sin([1.0, -2.0]), rtol=1e-6)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos([1.0, -2.0]), rtol=1e-6)
    assert ember.cond(True, lambda: 1, lambda: 2) == 1
    with pytest.raises(RuntimeError, match="single-element"):
        ember.cond(ember.ones(2), lambda: 1, lambda: 2)


def test_batch_norm_update_stats_matches_torch():
    x = np.random.default_rng(0).standard_normal((4, 3, 5))
    rm_e, rv_e = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    rm_t, rv_t = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    me, ve = ember.batch_norm_update_stats(_e(x), rm_e, rv_e, 0.1)
    mt, vt = torch.batch_norm_update_stats(_t(x), rm_t, rv_t, 0.1)
    for a, b in ((me, mt), (ve, vt), (rm_e, rm_t), (rv_e, rv_t)):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)


def test_hash_tensor_matches_torch():
    rng = np.random.default_rng(1)
    for arr in (rng.standard_normal((3, 4)).astype(np.float32), rng.integers(-9, 9, (3, 4)),
                rng.integers(0, 9, (3, 4)).astype(np.uint8)):
        np.testing.assert_array_equal(ember.hash_tensor(_e(arr)).numpy(),
                                      torch.hash_tensor(_t(arr)).numpy())
        np.testing.assert_array_equal(ember.hash_tensor(_e(arr), 1, keepdim=True).numpy(),
                                      torch.hash_tensor(_t(arr), 1, keepdim=True).numpy())
        assert _e(arr).hash_tensor().dtype == ember.uint64


def test_exceptions_and_flags():
    assert issubclass(ember.OutOfMemoryError, RuntimeError)
    assert issubclass(ember.AcceleratorError, RuntimeError)
    assert ember.OutOfMemoryError is ember.cuda.OutOfMemoryError
    assert ember.GradScaler is ember.amp.GradScaler
    x = ember.ones(2)
    assert ember.is_distributed(x) is torch.is_distributed(torch.ones(2)) is False
    assert x.is_distributed() is False
    assert ember.thread_safe_generator() is torch.thread_safe_generator() is None
    np.testing.assert_array_equal(torch.from_dlpack(ember.to_dlpack(x)).numpy(), [1.0, 1.0])


def test_float8_e8m0fnu_matches_torch(tmp_path):
    v = [0.25, 1.0, 3.0, 1024.0, 5e-39, 2.0**127]
    e = ember.tensor(v).to(ember.float8_e8m0fnu)
    t = torch.tensor(v).to(torch.float8_e8m0fnu)
    np.testing.assert_array_equal(e.float().numpy(), t.float().numpy())
    assert e.element_size() == 1 and e.type() == t.type()
    fe, ft = ember.finfo(ember.float8_e8m0fnu), torch.finfo(torch.float8_e8m0fnu)
    assert (fe.eps, fe.max, fe.tiny, fe.resolution) == (ft.eps, ft.max, ft.tiny, ft.resolution)
    torch.save({"x": t}, tmp_path / "t.pt")
    np.testing.assert_array_equal(ember.load(tmp_path / "t.pt")["x"].float().numpy(),
                                  t.float().numpy())
    ember.save({"x": e}, tmp_path / "e.pt")
    back = torch.load(tmp_path / "e.pt")["x"]
    assert back.dtype == torch.float8_e8m0fnu
    np.testing.assert_array_equal(back.float().numpy(), t.float().numpy())


# -- Tensor leftovers --------------------------------------------------------------------

def test_dim_order_matches_torch():
    for shape, perm in (((2, 3, 4), (0, 1, 2)), ((2, 3, 4), (2, 0, 1)), ((2, 3, 4, 5),
                                                                         (0, 2, 3, 1))):
        a = np.zeros(shape)
        e = _e(a).permute(*perm)
        t = _t(a).permute(*perm)
        assert e.dim_order() == t.dim_order()
    with pytest.raises(RuntimeError):
        ember.zeros(2, 1, 3).dim_order(ambiguity_check=True)


@pytest.mark.parametrize("shape,wrap", [((3, 3), False), ((7, 3), False), ((7, 3), True),
                                        ((3, 5), True), ((3, 3, 3), False)])
def test_fill_diagonal_matches_torch(shape, wrap):
    e, t = ember.zeros(*shape), torch.zeros(*shape)
    e.fill_diagonal_(5.0, wrap=wrap)
    t.fill_diagonal_(5.0, wrap=wrap)
    np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_apply_map_map2_match_torch():
    a = np.arange(6.0).reshape(2, 3)
    b = np.array([1.0, 2.0, 3.0])
    e, t = _e(a), _t(a)
    e.apply_(lambda v: v * v + 1)
    t.apply_(lambda v: v * v + 1)
    e.map_(_e(b), lambda x, y: x - y)
    t.map_(_t(b), lambda x, y: x - y)
    e.map2_(_e(b), _e(a), lambda x, y, z: x * y + z)
    t.map2_(_t(b), _t(a), lambda x, y, z: x * y + z)
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    with pytest.raises(RuntimeError, match="requires grad"):
        ember.ones(2, requires_grad=True).apply_(lambda v: v)


def test_resize_family_matches_torch():
    a = np.arange(6.0)
    e, t = _e(a.copy()), _t(a.copy())
    e.resize_(2, 2)
    t.resize_(2, 2)
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    e.resize_as_(ember.zeros(4))
    assert e.shape == (4,)
    e2 = ember.zeros(3)
    ember.resize_as_(e2, ember.zeros(2, 2))
    assert e2.shape == (2, 2)
    with pytest.warns(UserWarning, match="non-inplace resize"):
        r = _e(a).resize(3, 2)
    np.testing.assert_array_equal(r.numpy(), a.reshape(3, 2))
    with pytest.raises(RuntimeError, match="require grad"):
        ember.ones(2, requires_grad=True).resize_(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="preserving the number of elements"):
            _e(a).resize(4)


def test_set_and_is_set_to():
    src = ember.arange(6.0)
    x = ember.zeros(2)
    x.set_(src)
    assert x.is_set_to(src) and not x.is_set_to(src[1:])
    src[0] = 9.0
    assert x[0].item() == 9.0
    x.set_()
    assert x.shape == (0,)
    storage = ember.arange(6.0).untyped_storage()
    y = ember.zeros(1)
    y.set_(storage, 1, (2, 2), (2, 1))
    t = torch.zeros(1)
    t.set_(torch.arange(6.0).untyped_storage(), 1, (2, 2), (2, 1))
    np.testing.assert_array_equal(y.numpy(), t.numpy())


def test_small_methods():
    x = ember.arange(4.0)
    assert x.const_data_ptr() == x.data_ptr()
    assert x.bfloat16().dtype is ember.bfloat16
    assert x.name is None and x.is_xla is False
    assert x.grad_dtype is ember.float32
    assert x.to_dense() is x
    p = ember.zeros(4)
    out = p.module_load(x)
    np.testing.assert_array_equal(p.numpy(), x.numpy())
    assert out.requires_grad is False
    assert p.module_load(x, assign=True).data_ptr() == x.data_ptr()
    with pytest.raises(RuntimeError, match="ipu"):
        x.ipu()
    with pytest.raises(AssertionError, match="XPU"):
        x.xpu()
    with pytest.raises(AssertionError, match="MTIA"):
        x.mtia()
    for name in ("eig", "lstsq", "solve", "symeig", "reinforce"):
        with pytest.raises(RuntimeError) as got:
            getattr(x, name)(x) if name in ("lstsq", "solve", "reinforce") else \
                getattr(x, name)()
        with pytest.raises(RuntimeError) as want:
            t = torch.arange(4.0)
            getattr(t, name)(t) if name in ("lstsq", "solve", "reinforce") else \
                getattr(t, name)()
        assert str(got.value).splitlines()[0] == str(want.value).splitlines()[0]
    with pytest.warns(UserWarning, match="volatile"):
        assert x.volatile is False


class _Marked(ember.Tensor):
    pass


def test_as_subclass_aliases_and_keeps_the_graph():
    x = ember.ones(2, requires_grad=True)
    y = x.as_subclass(_Marked)
    assert type(y) is _Marked and y.requires_grad and not y.is_leaf
    assert y.data_ptr() == x.data_ptr()
    (y * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])
    with pytest.raises(TypeError, match="inherit from Tensor"):
        x.as_subclass(int)


# -- nn.functional -------------------------------------------------------------------------

def test_grouped_mm_matches_torch():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((6, 4)).astype(np.float32)
    b = rng.standard_normal((3, 4, 5)).astype(np.float32)
    offs = np.array([2, 3, 5], dtype=np.int32)
    got = ember.nn.functional.grouped_mm(_e(a), _e(b), offs=_e(offs))
    want = torch.nn.functional.grouped_mm(_t(a), _t(b).transpose(-2, -1).contiguous()
                                          .transpose(-2, -1), offs=_t(offs))
    # rows past offs[-1]: torch leaves them uninitialized, ember zero
    np.testing.assert_allclose(got.numpy()[:5], want.numpy()[:5], rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got.numpy()[5:], 0.0)
    a3 = rng.standard_normal((3, 2, 4)).astype(np.float32)
    got = ember.nn.functional.grouped_mm(_e(a3), _e(b))
    np.testing.assert_allclose(got.numpy(), a3 @ b, rtol=1e-5)
    b2 = rng.standard_normal((4, 7)).astype(np.float32)
    got = ember.nn.functional.grouped_mm(_e(a3), _e(b2), offs=_e(np.array([2, 5, 7],
                                                                          np.int32)))
    want = np.concatenate([a3[0] @ b2[:, :2], a3[1] @ b2[:, 2:5], a3[2] @ b2[:, 5:]], 1)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)
    m = rng.standard_normal((2, 6)).astype(np.float32)
    n = rng.standard_normal((6, 3)).astype(np.float32)
    got = ember.nn.functional.grouped_mm(_e(m), _e(n), offs=_e(np.array([1, 6], np.int32)))
    np.testing.assert_allclose(got.numpy(), np.stack([m[:, :1] @ n[:1], m[:, 1:] @ n[1:]]),
                               rtol=1e-5)


def test_scaled_mm_tensorwise_matches_torch():
    F, tF = ember.nn.functional, torch.nn.functional
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 8)).astype(np.float32)
    b = rng.standard_normal((8, 4)).astype(np.float32)
    ta = _t(a).to(torch.float8_e4m3fn)
    tb = _t(b).to(torch.float8_e4m3fn).t().contiguous().t()
    want = tF.scaled_mm(ta, tb, torch.tensor(0.5), tF.ScalingType.TensorWise,
                        torch.tensor(2.0), tF.ScalingType.TensorWise)
    got = F.scaled_mm(_e(a).to(ember.float8_e4m3fn), _e(b).to(ember.float8_e4m3fn),
                      ember.tensor(0.5), F.ScalingType.TensorWise, ember.tensor(2.0),
                      F.ScalingType.TensorWise)
    assert got.dtype is ember.bfloat16
    np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=1e-2)
    assert [m.name for m in F.ScalingType] == list(tF.ScalingType.__members__)
    assert [m.name for m in F.SwizzleType] == list(tF.SwizzleType.__members__)


def test_functional_small_names():
    F, tF = ember.nn.functional, torch.nn.functional
    assert F.Tensor is ember.Tensor
    assert not F.has_torch_function((ember.ones(1),))
    assert not F.has_torch_function_unary(ember.ones(1))
    assert not F.has_torch_function_variadic(ember.ones(1), ember.ones(1))
    with pytest.raises(RuntimeError, match="__torch_function__"):
        F.handle_torch_function(F.relu, (ember.ones(1),), ember.ones(1))
    F.assert_int_or_pair(3, "k", "{} bad")
    with pytest.raises(AssertionError, match="k bad"):
        F.assert_int_or_pair([1, 2, 3], "k", "{} bad")
    a = np.arange(16.0).reshape(1, 4, 2, 2)
    np.testing.assert_array_equal(F.native_channel_shuffle(_e(a), 2).numpy(),
                                  tF.native_channel_shuffle(_t(a), 2).numpy())


# -- backends ------------------------------------------------------------------------------

_DEFAULTS = """
import sys
lib = __import__(sys.argv[1])
B = lib.backends
print(B.cudnn.conv.fp32_precision, *(getattr(B.mkldnn, op).fp32_precision
                                     for op in ("conv", "matmul", "rnn")))
"""


def _fresh_defaults(lib):
    # in a fresh interpreter: other tests of this session change these process-wide flags
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-c", _DEFAULTS, lib], capture_output=True,
                          text=True, check=True).stdout.split()


def test_backend_leftovers():
    B, tB = ember.backends, torch.backends
    assert _fresh_defaults("ember") == _fresh_defaults("torch")
    B.mkldnn.matmul.fp32_precision = "bf16"
    try:
        assert B.mkldnn.matmul.fp32_precision == "bf16"
    finally:
        B.mkldnn.matmul.fp32_precision = "none"
    with pytest.raises(AttributeError):
        B.cudnn.conv.other = 1
    assert B.mha.get_fastpath_enabled() is tB.mha.get_fastpath_enabled()
    B.mha.set_fastpath_enabled(False)
    assert not B.mha.get_fastpath_enabled()
    B.mha.set_fastpath_enabled(True)
    size = B.cuda.cublas_workspace_size()
    assert size == 4096 * 1024 * 2 + 16 * 1024 * 8
    assert B.cuda.blas_workspace_size(backend="cublas") == size
    if not ember.cuda.is_available():
        with pytest.raises(RuntimeError, match="device index"):
            B.cuda.cufft_plan_cache[0]


# -- data pipes ----------------------------------------------------------------------------

class Numbers(ember.utils.data.IterDataPipe):
    def __iter__(self):
        yield from range(10)

    def __len__(self):
        return 10


class Squares(ember.utils.data.MapDataPipe):
    def __getitem__(self, i):
        return i * i

    def __len__(self):
        return 5


class TNumbers(torch.utils.data.IterDataPipe):
    def __iter__(self):
        yield from range(10)


@pytest.mark.filterwarnings("ignore:Local function is not supported by pickle")
def test_datapipes_functional_forms_and_dataloader():
    from ember.utils.data import DataChunk, DataLoader

    def pipe(dp):
        return [list(b) for b in dp.filter(lambda x: x % 2 == 1).map(lambda x: x * 10).batch(2)]

    assert pipe(Numbers()) == pipe(TNumbers())
    assert list(Numbers().header(3)) == [0, 1, 2]
    with pytest.raises(ValueError, match="Boolean output"):
        list(Numbers().filter(lambda x: x % 2))
    batches = Squares().map(lambda v: v + 1).batch(2)
    assert len(batches) == 3 and list(batches[2]) == [17]
    assert isinstance(Numbers().batch(4).__iter__().__next__(), DataChunk)
    got = [b.tolist() for b in DataLoader(Numbers(), batch_size=4)]
    want = [b.tolist() for b in torch.utils.data.DataLoader(TNumbers(), batch_size=4)]
    assert got == want


def test_datapipe_decorators():
    from collections.abc import Iterator

    from ember.utils.data import (
        IterDataPipe,
        argument_validation,
        functional_datapipe,
        guaranteed_datapipes_determinism,
        non_deterministic,
        runtime_validation,
        runtime_validation_disabled,
    )

    @functional_datapipe("twice_rest_test")
    class Twice(IterDataPipe):
        @argument_validation
        def __init__(self, source: IterDataPipe):
            self.source = source

        @runtime_validation
        def __iter__(self) -> Iterator[int]:
            for x in self.source:
                yield x
                yield x

    class Src(IterDataPipe):
        def __init__(self, items):
            self.items = items

        def __iter__(self):
            yield from self.items

    assert list(Src([1, 2]).twice_rest_test()) == [1, 1, 2, 2]
    with pytest.raises(TypeError, match="Expected argument 'source'"):
        Twice([1, 2])
    with pytest.raises(RuntimeError, match="subtype"):
        list(Twice(Src(["a"])))
    with runtime_validation_disabled():
        assert list(Twice(Src(["a"]))) == ["a", "a"]
    with pytest.raises(TypeError, match="runtime_validation"):
        runtime_validation(lambda self: None)

    Shuffled = non_deterministic(Src)
    assert list(Shuffled([3])) == [3]
    with guaranteed_datapipes_determinism():
        with pytest.raises(TypeError, match="non-deterministic"):
            Shuffled([3])
    Maybe = non_deterministic(lambda items: len(items) > 1)(Src)
    with guaranteed_datapipes_determinism():
        assert list(Maybe([1])) == [1]
        with pytest.raises(TypeError, match="non-deterministic"):
            Maybe([1, 2])


# -- nn.utils.parametrizations.orthogonal --------------------------------------------------

def _linear_pair(shape, seed=0):
    w = np.random.default_rng(seed).standard_normal(shape)
    el = ember.nn.Linear(shape[1], shape[0], dtype=ember.float64)
    tl = torch.nn.Linear(shape[1], shape[0], dtype=torch.float64)
    with ember.no_grad():
        el.weight.copy_(_e(w))
    with torch.no_grad():
        tl.weight.copy_(_t(w))
    return el, tl


@pytest.mark.parametrize("shape,orth_map", [((4, 4), None), ((5, 5), "cayley"),
                                            ((5, 5), "householder"), ((6, 3), None),
                                            ((3, 6), None), ((6, 3), "matrix_exp")])
def test_orthogonal_starts_where_torch_does(shape, orth_map):
    from ember.nn.utils.parametrizations import orthogonal

    el, tl = _linear_pair(shape)
    orthogonal(el, orthogonal_map=orth_map)
    torch.nn.utils.parametrizations.orthogonal(tl, orthogonal_map=orth_map)
    np.testing.assert_allclose(el.weight.detach().numpy(), tl.weight.detach().numpy(),
                               atol=1e-12)
    assert sorted(dict(el.named_parameters())) == sorted(dict(tl.named_parameters()))
    # after a step on the unconstrained tensor the weight stays orthogonal (off the
    # diagonal: householder reads the diagonal as +-1 truncated to integers, as torch does)
    orig = el.parametrizations.weight.original
    with ember.no_grad():
        orig.add_(_e(0.05 * (1 - np.eye(*orig.shape))))
    q = el.weight.detach().numpy()
    gram = q.T @ q if shape[0] >= shape[1] else q @ q.T
    np.testing.assert_allclose(gram, np.eye(min(shape)), atol=1e-10)


@pytest.mark.parametrize("orth_map", ["matrix_exp", "cayley", "householder"])
def test_orthogonal_square_follows_torch(orth_map):
    from ember.nn.utils.parametrizations import orthogonal

    el, tl = _linear_pair((5, 5), seed=1)
    orthogonal(el, orthogonal_map=orth_map)
    torch.nn.utils.parametrizations.orthogonal(tl, orthogonal_map=orth_map)
    d = np.random.default_rng(5).standard_normal((5, 5)) * 0.1  # diagonal stays in (-1.5, -0.5)
    with ember.no_grad():
        el.parametrizations.weight.original.add_(_e(d))
    with torch.no_grad():
        tl.parametrizations.weight.original.add_(_t(d))
    np.testing.assert_allclose(el.weight.detach().numpy(), tl.weight.detach().numpy(),
                               atol=1e-12)
    el.weight.sum().backward()
    tl.weight.sum().backward()
    np.testing.assert_allclose(el.parametrizations.weight.original.grad.numpy(),
                               tl.parametrizations.weight.original.grad.numpy(), atol=1e-12)


def test_orthogonal_without_trivialization_and_errors():
    from ember.nn.utils.parametrizations import orthogonal

    el, tl = _linear_pair((5, 3), seed=2)
    orthogonal(el, use_trivialization=False)
    torch.nn.utils.parametrizations.orthogonal(tl, use_trivialization=False)
    np.testing.assert_allclose(el.weight.detach().numpy(), tl.weight.detach().numpy(),
                               atol=1e-12)
    with pytest.raises(ValueError, match="orthogonal_map"):
        orthogonal(ember.nn.Linear(3, 3), orthogonal_map="qr")
    with pytest.raises(ValueError, match="matrix"):
        orthogonal(ember.nn.Linear(3, 3), name="bias")


# -- ember.cuda legacy types ---------------------------------------------------------------

def test_cuda_legacy_types():
    names = [n for n in dir(torch.cuda) if n.endswith(("Tensor", "Storage"))
             and n[0].isupper() and n != "Tensor"]
    for n in names:
        assert hasattr(ember.cuda, n), n
    assert not isinstance(ember.ones(2), ember.cuda.FloatTensor)
    assert repr(ember.cuda.FloatTensor) == repr(torch.cuda.FloatTensor)
    assert issubclass(ember.cuda.FloatStorage, ember.TypedStorage)
    if not ember.cuda.is_available():
        with pytest.raises(TypeError, match="not available"):
            ember.cuda.FloatTensor(2)
        with pytest.raises(AssertionError, match="CUDA"):
            ember.cuda.FloatStorage(2)
    else:
        x = ember.cuda.FloatTensor(2, 3)
        assert x.is_cuda and isinstance(x, ember.cuda.FloatTensor)
        assert not isinstance(x, ember.FloatTensor)


# -- archives, sym_*, FatalError -----------------------------------------------------------

def test_pytorch_file_writer_reader_interoperate():
    import io

    buf = io.BytesIO()
    w = ember.PyTorchFileWriter(buf)
    w.write_record("data.pkl", b"hello", 5)
    w.write_record("data/0", ember.arange(4.0).untyped_storage(), 16)
    assert w.get_all_written_records() == {"data.pkl", "data/0"}
    w.write_end_of_file()
    r = torch.PyTorchFileReader(io.BytesIO(buf.getvalue()))
    assert r.get_record("data.pkl") == b"hello"
    assert r.get_record_offset("data/0") % 64 == 0
    np.testing.assert_array_equal(np.frombuffer(r.get_record("data/0"), np.float32),
                                  [0, 1, 2, 3])
    er = ember.PyTorchFileReader(io.BytesIO(buf.getvalue()))
    assert er.get_record_offset("data/0") == r.get_record_offset("data/0")
    np.testing.assert_array_equal(er.get_storage_from_record("data/0", 4, ember.float32)
                                  .numpy(), [0, 1, 2, 3])
    tbuf = io.BytesIO()
    tw = torch.PyTorchFileWriter(tbuf)
    tw.write_record("x", b"abc", 3)
    tw.write_end_of_file()
    er = ember.PyTorchFileReader(io.BytesIO(tbuf.getvalue()))
    tr = torch.PyTorchFileReader(io.BytesIO(tbuf.getvalue()))
    assert er.get_record("x") == b"abc" and er.has_record("x") and not er.has_record("y")
    assert sorted(er.get_all_records()) == sorted(tr.get_all_records())
    assert er.get_record_offset("x") == tr.get_record_offset("x")
    with pytest.raises(RuntimeError, match="file not found"):
        er.get_record("y")


def test_storage_contexts():
    s = ember.SerializationStorageContext()
    a, b = ember.ones(2).untyped_storage(), ember.ones(3).untyped_storage()
    assert not s.has_storage(a)
    assert s.get_or_add_storage(a) == 0 and s.get_or_add_storage(b) == 1
    assert s.get_or_add_storage(a) == 0 and s.has_storage(a)
    d = ember.DeserializationStorageContext()
    d.add_storage("0", ember.ones(2))
    assert d.has_storage("0") and not d.has_storage("1")
    assert d.get_storage("0", ember.float32).shape == (2,)


@pytest.mark.parametrize("name,args", [("sym_int", (-2.7,)), ("sym_int", (3.9,)),
                                       ("sym_float", (3,)), ("sym_max", (3, 2.0)),
                                       ("sym_min", (2, 3)), ("sym_not", (True,)),
                                       ("sym_sqrt", (4,)), ("sym_ite", (False, 1, 2)),
                                       ("sym_sum", ([1, 2, 3],))])
def test_sym_functions_match_torch(name, args):
    got, want = getattr(ember, name)(*args), getattr(torch, name)(*args)
    assert got == want and type(got) is type(want)


def test_fatal_error():
    assert issubclass(ember.FatalError, Exception)
    assert not issubclass(ember.FatalError, RuntimeError)


# -- shell dtypes --------------------------------------------------------------------------

SHELL = [f"int{i}" for i in range(1, 8)] + [f"uint{i}" for i in range(1, 8)] + \
    ["bits8", "bits16", "bits1x8", "bits2x4", "bits4x2", "float4_e2m1fn_x2"]


@pytest.mark.parametrize("name", SHELL)
def test_shell_dtypes_like_torch(name):
    e, t = getattr(ember, name), getattr(torch, name)
    assert e.itemsize == t.itemsize and e.is_floating_point == t.is_floating_point
    assert e.is_complex == t.is_complex
    if not name.startswith("bits"):
        assert e.is_signed == t.is_signed
    x = ember.zeros(3, dtype=e)
    assert x.dtype is e and x.shape == (3,)
    raw = torch.zeros(3, dtype=t).view(torch.uint8 if t.itemsize == 1 else torch.uint16)
    back = x.view(ember.uint8 if e.itemsize == 1 else ember.uint16)
    np.testing.assert_array_equal(back.numpy(), raw.numpy())
    assert ember.zeros(3, dtype=back.dtype).view(e).dtype is e
    with pytest.raises(TypeError):
        x + 1
    assert ember.bit is ember.uint1 and torch.bit is torch.uint1

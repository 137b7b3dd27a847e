"""The op registry: every public op registered with its nodes and Tensor methods, the
methods installed from it, domain packages' registrations, and coverage by the op database."""

import importlib

import numpy as np
import pytest

import ember
import ember.library as library
import ember.nn.functional as F
from ember._ops import FAMILIES
from ember._ops._registry import get_op, op_of_node, registered_ops
from ember.testing._opinfo import op_db


def _public_functions(module):
    not_ops = set(getattr(module, "NOT_OPS", ()))
    return [n for n in module.__all__
            if callable(getattr(module, n)) and not isinstance(getattr(module, n), type)
            and n not in not_ops]


def test_every_public_function_is_registered():
    names = {op.qualname for op in registered_ops()}
    for family in FAMILIES:
        for n in _public_functions(family):
            assert f"ember.{n}" in names, (family.__name__, n)
    for n in F.__all__:
        if callable(getattr(F, n)):
            assert f"ember.nn.functional.{n}" in names, n
    assert "ember.manual_seed" not in names  # listed in NOT_OPS: not an op


def test_methods_are_installed_from_the_registry():
    compiled = vars(ember._C._core.TensorBase)
    count = 0
    for op in registered_ops():
        for name, fn in op.methods.items():
            assert hasattr(ember.Tensor, name), (op, name)
            if name not in compiled:
                assert getattr(ember.Tensor, name) is fn, (op, name)
            count += 1
    assert count > 300


def test_nodes_take_their_ops_name():
    add = get_op("ember.add")
    assert add.nodes and op_of_node(add.nodes[0]) is add
    assert add.nodes[0].op_name == "add"
    assert "add_" in add.methods and "__radd__" in add.methods
    softmax = get_op("ember.nn.functional.softmax")
    assert softmax.methods and all(op_of_node(n) is softmax for n in softmax.nodes)
    conv = importlib.import_module("ember.nn._functional.conv")
    assert conv.Convolution.op_name == "convolution"  # shared by conv1d/2d/3d
    with pytest.raises(KeyError, match="no op registered"):
        get_op("ember.no_such_op")


def test_fast_paths_come_from_the_registry():
    for name in ember._C._core.UNARY_FAST_PATH:
        op = get_op(f"ember.{name}")
        # ember.exp is the compiled function form; it falls back to the registered function
        assert getattr(ember, name) is getattr(ember._C._core, name)
        assert op.function.op is op.nodes[0] and hasattr(op.nodes[0], "fast_path")
        x = ember.tensor([0.5, 1.5], dtype=ember.float64)
        np.testing.assert_array_equal(getattr(ember, name)(x).numpy(),
                                      op.function(x).numpy())


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_methods(name, dim):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    want = e / e.sum(axis=dim, keepdims=True)
    if name == "log_softmax":
        want = np.log(want)
    t = ember.tensor(x)
    np.testing.assert_allclose(getattr(t, name)(dim).numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(getattr(t, name)(dim=dim).numpy(), want, rtol=1e-12)
    half = getattr(ember.tensor(x, dtype=ember.float32), name)(dim, dtype=ember.float64)
    assert half.dtype == ember.float64
    g = ember.tensor(x, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a: getattr(a, name)(dim), (g,))


def test_hardshrink_and_prelu_methods():
    x = ember.tensor([-1.0, -0.2, 0.3, 2.0])
    np.testing.assert_array_equal(x.hardshrink().numpy(), [-1.0, 0.0, 0.0, 2.0])
    np.testing.assert_allclose(x.prelu(ember.tensor([0.5])).numpy(), [-0.5, -0.1, 0.3, 2.0])


def test_a_domain_package_registers_an_op_and_kernels():
    calls = []

    @library.register_kernel("test_clip01", "any")
    def _clip01_any(x):
        calls.append("any")
        return library.array_module(x).clip(x, 0, 1)

    @library.register_kernel("test_clip01", ["cpu"], dtypes=[np.float64])
    def _clip01_cpu(x):
        calls.append("cpu")
        return np.clip(x, 0, 1)

    class Clip01(library.Node):
        saves_inputs = (0,)

        def forward(self, x):
            return library.kernel("test_clip01", x)(x)

        def backward(self, g):
            (x,) = self.saved_tensors
            return g * ((x > 0) & (x < 1))

    def clip01(t):
        return library.apply(Clip01, t)

    op = library.register_op("clip01", clip01, namespace="testlib", nodes=[Clip01],
                             methods=["clip01"])
    try:
        assert op.qualname == "testlib.clip01" and Clip01.op_name == "clip01"
        x = ember.tensor([-1.0, 0.5, 2.0], dtype=ember.float64, requires_grad=True)
        y = x.clip01()
        np.testing.assert_array_equal(y.detach().numpy(), [0.0, 0.5, 1.0])
        y.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), [0.0, 1.0, 0.0])
        ember.tensor([2.0], dtype=ember.float32).clip01()
        assert calls == ["cpu", "any"]
        from ember.profiler import profile

        with profile() as prof:
            x.clip01()
        assert "ember::clip01" in [e.name for e in prof.events()]
    finally:
        del ember.Tensor.clip01
    with pytest.raises(ValueError, match="namespace"):
        library.register_op("bad", clip01, namespace="")


# -- coverage by the op database -----------------------------------------------------------

# Registered differentiable ops without an op-database entry, each with where it is tested
# instead. The test below fails for any other op without an entry (a new op must come
# with one) and for any op listed here that has gained one (so the list only shrinks).
_CREATION = "creation from data or uninitialized memory: tests/core/test_creation.py"
_TORCH_SPELLING = ("the torch.* spelling of a linalg op (its kernels are covered as linalg.*): "
                   "against torch in tests/interop/test_linalg_fft_torch.py")
_SAMPLING = "random sampling (no fixed reference): distributions and seeding in test_random.py"
KNOWN_UNCOVERED = {
    "ember.frobenius_norm": _TORCH_SPELLING,
    "ember.geqrf": _TORCH_SPELLING,
    "ember.is_conj": "returns a bool: tests/core/test_complex.py",
    "ember.is_neg": "returns a bool: tests/core/test_complex.py",
    "ember.lu": _TORCH_SPELLING,
    "ember.lu_solve": _TORCH_SPELLING,
    "ember.lu_unpack": _TORCH_SPELLING,
    "ember.nuclear_norm": _TORCH_SPELLING,
    "ember.ormqr": _TORCH_SPELLING,
    "ember.qr": _TORCH_SPELLING,
    "ember.resolve_conj": "the input itself (no lazy conjugation): tests/core/test_complex.py",
    "ember.resolve_neg": "the input itself (no lazy negation): tests/core/test_complex.py",
    'ember.Tensor.cauchy_': _SAMPLING,
    'ember.Tensor.exponential_': _SAMPLING,
    'ember.Tensor.geometric_': _SAMPLING,
    'ember.Tensor.log_normal_': _SAMPLING,
    'ember.Tensor.random_': _SAMPLING,
    'ember.Tensor.uniform_': _SAMPLING,
    'ember.as_tensor': _CREATION,
    'ember.asarray': _CREATION,
    'ember.bernoulli': _SAMPLING,
    'ember.empty': _CREATION,
    'ember.empty_like': _CREATION,
    'ember.empty_strided': _CREATION,
    'ember.from_dlpack': _CREATION,
    'ember.from_numpy': _CREATION,
    'ember.imag_part': 'complex parts: tests/core/test_elementwise.py (complex)',
    'ember.multinomial': _SAMPLING,
    'ember.normal': _SAMPLING,
    'ember.rand': _SAMPLING,
    'ember.rand_like': _SAMPLING,
    'ember.randint': _SAMPLING,
    'ember.randint_like': _SAMPLING,
    'ember.randn': _SAMPLING,
    'ember.randn_like': _SAMPLING,
    'ember.randperm': _SAMPLING,
    'ember.range': _CREATION,
    'ember.real_part': 'complex parts: tests/core/test_elementwise.py (complex)',
    'ember.scalar_tensor': _CREATION,
}


def _covered(op, names, methods, functions):
    name = op.name.strip("_") if op.name.startswith("__") else op.name  # __getitem__
    return (name in names or any(n.startswith(name + "_") for n in names)
            or op.name in methods or any(m in methods for m in op.methods)
            or id(op.function) in functions)


def _coverage():
    names = {o.name for o in op_db}
    methods = {o.method for o in op_db if o.method}
    functions = {id(o.op) for o in op_db}
    ops = [op for op in registered_ops() if op.namespace in ("ember", "ember.nn.functional",
                                                              "ember.Tensor")]
    covered = {op.qualname for op in ops if _covered(op, names, methods, functions)}
    covered_fns = {id(op.function) for op in ops if op.qualname in covered}
    missing = {op.qualname for op in ops if op.qualname not in covered
               and id(op.function) not in covered_fns and op.differentiable}
    return missing


def test_every_registered_op_has_an_op_database_entry():
    missing = _coverage()
    new = sorted(missing - set(KNOWN_UNCOVERED))
    assert not new, f"registered ops without an op-database entry: {new}"
    stale = sorted(set(KNOWN_UNCOVERED) - missing)
    assert not stale, f"now covered by the op database, remove from KNOWN_UNCOVERED: {stale}"


@pytest.mark.parametrize("requires_grad", [False, True])
def test_fast_paths_and_forwards_agree_on_warnings(requires_grad):
    import warnings

    x = ember.tensor([-1.0, 0.0, 1000.0, float("inf")], dtype=ember.float64,
                     requires_grad=requires_grad)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # PyTorch gives nan and inf silently
        for fn in (ember.log, ember.sqrt, ember.exp, ember.sin, ember.cos, ember.tanh):
            fn(x)
            getattr(x, fn.__name__)()
        x / 0.0
        x / ember.zeros(4, dtype=ember.float64)


def test_fast_paths_are_silent_from_several_threads_at_once():
    # The fast paths silence NumPy by entering one shared context (NOTE in _C/_core.pyx); a
    # thread that finds it entered by another (inside a large ufunc, the GIL released)
    # must still be silent and still compute.
    import threading
    import warnings

    big = ember.full((2_000_000,), -1.0)
    errors = []

    def work():
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                for _ in range(5):
                    y = big.log()
                    z = big / 0.0
                    assert bool(y.isnan().all()) and bool((z == -float("inf")).all())
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    with warnings.catch_warnings():  # and the main thread's state is untouched afterwards
        warnings.simplefilter("error")
        import numpy as np
        with pytest.raises(RuntimeWarning):
            np.log(np.array([-1.0]))

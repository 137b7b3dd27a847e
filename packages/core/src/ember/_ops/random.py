"""Random numbers: generators, seeding and the sampling ops.

NOTE [ Generators ]
An :class:`ember.Generator` wraps a NumPy ``Generator`` on a PCG64 bit generator.
Seeding gives the same numbers run after run (not PyTorch's numbers: its Mersenne
Twister and Philox streams are not reproduced, only its distributions and dtypes).
``get_state`` packs the PCG64 state and the initial seed into a uint8 tensor, which
``set_state`` reads back. Each device has its own default generator, held by the
device's backend (NOTE [ Backends are devices ]); a CUDA generator wraps a CuPy generator
on cuRAND's XORWOW, so its samples are drawn on the GPU. :func:`manual_seed` seeds the
default generators of all devices. Samplers that the array library has only on the host
(poisson, multinomial, ...) draw there and move the result to the device.
"""

from __future__ import annotations

import builtins
import contextlib
import math
import secrets
import struct
import warnings

import numpy as np

from ember import _dtype
from ember._backend import backend_for_device, backend_of
from ember._backend import cpu as cpu_backend
from ember._backend._base import all_backends
from ember._C._core import Node, TensorBase, apply_inplace, dispatched, make_tensor_from_array
from ember._device import device as _device_cls
from ember._ops._util import apply, not_implemented, type_name, varargs_or_keyword, with_out
from ember._ops.creation import _like, _sizes

__all__ = [
    "Generator", "default_generator", "manual_seed", "seed", "initial_seed",
    "get_rng_state", "set_rng_state", "rand", "randn", "randint", "randperm", "rand_like",
    "randn_like", "randint_like", "normal", "bernoulli", "multinomial", "poisson",
    "binomial",
]

# Public names that are not ops (the op registry leaves them out).
NOT_OPS = ("default_generator", "manual_seed", "seed", "initial_seed", "get_rng_state",
           "set_rng_state")

_DEFAULT_SEED = 67280421310721  # a fresh Generator's seed, as in PyTorch
_STATE = struct.Struct("<4sB3xQQQQQII")  # magic, version, seed, PCG64 state, inc, buffer
_MAGIC = b"EMBR"
_MASK64 = (1 << 64) - 1


def _check_seed(seed) -> int:
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    seed = int(seed)
    if not -(1 << 63) <= seed <= _MASK64:
        raise ValueError("Overflow when unpacking long long")
    return seed & _MASK64


def _random_seed() -> int:
    return secrets.randbits(64)


class Generator:
    """A pseudo-random number generator; pass it as ``generator=`` to sampling ops.

    Args:
        device: the device whose tensors it fills (``"cpu"`` by default).

    Examples::

        >>> g = ember.Generator().manual_seed(0)
        >>> a = ember.rand(3, generator=g)
        >>> g.manual_seed(0)
        >>> bool((ember.rand(3, generator=g) == a).all())
        True
    """

    def __init__(self, device="cpu"):
        self._device = _device_cls(device)
        self._reseed(_DEFAULT_SEED)

    def _reseed(self, seed: int) -> None:
        self._seed = seed
        # A CUDA generator makes its CuPy generator on first use, so that one can be
        # created (and checked against a tensor's device) where CuPy is missing.
        self._source = cpu_backend.new_rng(seed) if self._device.type == "cpu" else None

    @property
    def _rng(self):
        if self._source is None:
            self._source = backend_for_device(self._device).new_rng(self._seed)
        return self._source

    def _check_host(self, what):
        if self._device.type != "cpu":
            raise RuntimeError(
                f"{what}: the state of a {self._device} generator cannot be saved or restored "
                "(CuPy's cuRAND states are not serializable); reseed it with manual_seed")

    @property
    def device(self) -> _device_cls:
        return self._device

    def manual_seed(self, seed) -> Generator:
        """Seed the generator with ``seed`` (an int in [-2**63, 2**64)); returns self."""
        self._reseed(_check_seed(seed))
        return self

    def seed(self) -> int:
        """Seed the generator from the operating system's entropy; returns the seed."""
        s = _random_seed()
        self._reseed(s)
        return s

    def initial_seed(self) -> int:
        """The seed the generator was last seeded with."""
        return self._seed

    def _state_bytes(self) -> bytes:
        self._check_host("get_state")
        st = self._rng.bit_generator.state
        s, inc = st["state"]["state"], st["state"]["inc"]
        return _STATE.pack(_MAGIC, 1, self._seed, s & _MASK64, s >> 64, inc & _MASK64,
                           inc >> 64, st["has_uint32"], st["uinteger"])

    def _load_state_bytes(self, raw: bytes) -> None:
        self._check_host("set_state")
        magic, version, seed, s_lo, s_hi, i_lo, i_hi, has32, uint = _STATE.unpack(raw)
        if magic != _MAGIC or version != 1:
            raise RuntimeError("Invalid RNG state: not an ember generator state")
        bitgen = np.random.PCG64()
        bitgen.state = {"bit_generator": "PCG64",
                        "state": {"state": s_lo | (s_hi << 64), "inc": i_lo | (i_hi << 64)},
                        "has_uint32": has32, "uinteger": uint}
        self._seed = seed
        self._source = np.random.Generator(bitgen)

    def get_state(self):
        """The generator's state as a uint8 tensor (for :meth:`set_state`)."""
        raw = np.frombuffer(self._state_bytes(), dtype=np.uint8).copy()
        return make_tensor_from_array(raw)

    def set_state(self, new_state) -> Generator:
        """Restore a state returned by :meth:`get_state`; returns self."""
        if not isinstance(new_state, TensorBase):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        if new_state._data.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = backend_of(new_state._data).to_numpy(new_state._data).reshape(-1)
        if raw.size != _STATE.size:
            raise RuntimeError(
                f"Expected an ember generator state of size {_STATE.size} but found the input "
                f"RNG state size to be {raw.size}")
        self._load_state_bytes(raw.tobytes())
        return self

    def __reduce__(self):
        return (_rebuild_generator, (str(self._device), self._state_bytes()))

    def __repr__(self) -> str:
        return f"<ember.Generator object at {hex(id(self))}>"


def _rebuild_generator(device, raw):
    g = Generator(device)
    g._load_state_bytes(raw)
    return g


# The default generators: one per device, held by the device's backend. PyTorch seeds its
# default CPU generator non-deterministically at start; so does ember. A device's default
# generator, made on first use, starts from the CPU generator's initial seed.
def _new_default_generator(dev) -> Generator:
    g = Generator(dev)
    g._reseed(_random_seed() if dev.type == "cpu" else default_generator.initial_seed())
    return g


default_generator = cpu_backend.default_generator


def _default_generators():
    """The default generators made so far, the CPU's first."""
    return [b._generator for b in all_backends() if b._generator is not None]


def manual_seed(seed) -> Generator:
    """Seed the default generators of all devices; returns the CPU default generator."""
    seed = _check_seed(seed)
    for g in _default_generators():
        g._reseed(seed)
    return default_generator


def seed() -> int:
    """Seed all default generators from the operating system's entropy; returns it."""
    s = _random_seed()
    manual_seed(s)
    return s


def initial_seed() -> int:
    """The initial seed of the default CPU generator."""
    return default_generator.initial_seed()


def get_rng_state():
    """The state of the default CPU generator, as a uint8 tensor."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restore the default CPU generator's state (from :func:`get_rng_state`)."""
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type="cuda"):
    """A context manager that restores the default generators' states on exit."""
    if not enabled:
        yield
        return
    gens = [g for g in _default_generators() if g.device.type == "cpu" or (
        g.device.type == device_type and (devices is None or g.device.index in devices))]
    states = [g._state_bytes() for g in gens]
    try:
        yield
    finally:
        for g, st in zip(gens, states, strict=True):
            g._load_state_bytes(st)


# ---------------------------------------------------------------------------
# helpers

def _device_of(device):
    if device is None:  # ember.set_default_device
        from ember._ops.creation import DEFAULT_DEVICE

        device = DEFAULT_DEVICE[0]
    return _device_cls(device) if device is not None else _device_cls("cpu")


def _generator(generator, dev) -> Generator:
    if generator is None:
        return backend_for_device(dev).default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be an ember.Generator, not {type(generator).__name__}")
    if generator.device.type != dev.type:
        raise RuntimeError(f"Expected a '{dev.type}' device type for generator but found "
                           f"'{generator.device.type}'")
    return generator


def _on_device(arr, dev):
    if dev.type == "cpu" and type(arr) is np.ndarray:
        return arr
    return backend_for_device(dev).to_device(arr)


def _finish(arr, dev, requires_grad, out):
    t = make_tensor_from_array(_on_device(arr, dev))
    if requires_grad:
        t.requires_grad_(True)
    return with_out(t, out)


def _fmt(x) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def _float_dtype(dtype, kernel):
    np_dtype = _dtype.to_numpy(dtype) if dtype is not None else \
        _dtype.get_default_dtype().numpy
    if np_dtype.kind not in "fc":
        raise not_implemented(kernel, np_dtype)
    return np_dtype


def _uniform(rng, shape, np_dtype):
    """Uniform samples in [0, 1) with the resolution of ``np_dtype``."""
    if np_dtype.kind == "c":
        real = np.dtype(np_dtype.char.lower())
        out = np.empty(shape, np_dtype)
        out.real = _uniform(rng, shape, real)
        out.imag = _uniform(rng, shape, real)
        return out
    if np_dtype == np.float16:
        return (rng.integers(0, 1 << 11, size=shape) * 2.0 ** -11).astype(np.float16)
    if np_dtype == np.float32:
        return rng.random(shape, dtype=np.float32)
    return rng.random(shape)


def _standard_normal(rng, shape, np_dtype):
    if np_dtype.kind == "c":  # E|z|^2 = 1: each part has variance 1/2
        real = np.dtype(np_dtype.char.lower())
        out = np.empty(shape, np_dtype)
        out.real = _standard_normal(rng, shape, real) * real.type(math.sqrt(0.5))
        out.imag = _standard_normal(rng, shape, real) * real.type(math.sqrt(0.5))
        return out
    if np_dtype == np.float64:
        return rng.standard_normal(shape)
    return rng.standard_normal(shape, dtype=np.float32).astype(np_dtype, copy=False)


def _size_args(size, fn):
    if not size:
        raise TypeError(f"{fn}() missing 1 required positional argument: 'size'")
    return _sizes(size)


# ---------------------------------------------------------------------------
# factories

@dispatched
def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    """A tensor of shape ``size`` with values drawn uniformly from [0, 1).

    Examples::

        >>> ember.manual_seed(0)
        >>> ember.rand(2, 3).shape
        ember.Size([2, 3])
    """
    shape = _size_args(size, "rand")
    np_dtype = _float_dtype(dtype, "check_uniform_bounds")
    dev = _device_of(device)
    rng = _generator(generator, dev)._rng
    return _finish(_uniform(rng, shape, np_dtype), dev, requires_grad, out)


@dispatched
def randn(*args, size=None, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    """A tensor of shape ``size`` with values drawn from the standard normal
    distribution (complex dtypes: real and imaginary parts each of variance 1/2)."""
    size = varargs_or_keyword("randn", args, size, "size")
    shape = _size_args(size, "randn")
    np_dtype = _float_dtype(dtype, "normal_kernel_cpu")
    dev = _device_of(device)
    rng = _generator(generator, dev)._rng
    return _finish(_standard_normal(rng, shape, np_dtype), dev, requires_grad, out)


def _int_arg(x, fn, name):
    if isinstance(x, TensorBase):
        x = x.item()
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"{fn}(): argument '{name}' must be int, not {type(x).__name__}")
    x = int(x)
    if not -(1 << 63) <= x < (1 << 63):
        raise ValueError("Overflow when unpacking long long")
    return x


_RANGE_NAMES = {
    "bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
    "int32": "int", "int64": "long int", "float16": "c10::Half", "float32": "float",
    "float64": "double",
}


def _check_from_to(frm, to, np_dtype):
    """PyTorch's bounds checks for ``random_(from, to)`` (``to`` exclusive)."""
    if frm >= to:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={frm} "
                           f">= to={to}")
    name = _RANGE_NAMES.get(np_dtype.name, np_dtype.name)
    if np_dtype.kind == "b":
        lo, hi = 0, 1
    elif np_dtype.kind in "iu":
        info = np.iinfo(np_dtype)
        lo, hi = int(info.min), int(info.max)
    else:
        info = np.finfo(np_dtype)
        lo, hi = float(info.min), float(info.max)
    if frm < lo or frm > hi:
        raise RuntimeError(f"from is out of bounds for {name}")
    if to - 1 < lo or to - 1 > hi:
        raise RuntimeError(f"to - 1 is out of bounds for {name}")
    if np_dtype.kind == "f":
        digits = np.finfo(np_dtype).nmant + 1
        for what, v in (("from", frm), ("to - 1", to - 1)):
            if abs(v) > 2 ** digits:
                warnings.warn(
                    f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                    f"limitations {name} can support discrete uniform distribution only within "
                    "this range. This warning will become an error in version 1.7 release, "
                    "please fix the code in advance", UserWarning, stacklevel=3)


def _integers(rng, lo, hi, shape, np_dtype):
    """Integers in [lo, hi) as ``np_dtype``."""
    if hi - lo > (1 << 63):  # wider than int64 can hold: draw offsets as uint64
        vals = rng.integers(0, hi - lo, size=shape, dtype=np.uint64) + np.uint64(lo & _MASK64)
        return vals.view(np.int64).astype(np_dtype)
    return rng.integers(lo, hi, size=shape, dtype=np.int64).astype(np_dtype)


def _randint_args(args, low, high, size, fn):
    args = list(args)
    if size is None and args and isinstance(args[-1], (tuple, list)):
        size = args.pop()
    if high is None:
        if not args:
            raise TypeError(f"{fn}() missing required argument 'high'")
        high = args.pop()
    if low is None:
        low = args.pop() if args else 0
    if args:
        raise TypeError(f"{fn}() got too many positional arguments")
    return _int_arg(low, fn, "low"), _int_arg(high, fn, "high"), size


@dispatched
def randint(*args, low=None, high=None, size=None, generator=None, out=None, dtype=None,
            layout=None, device=None, requires_grad=False, pin_memory=False):
    """Integers drawn uniformly from [low, high): ``randint(high, size)`` or
    ``randint(low, high, size)``; int64 unless ``dtype`` is given.

    Examples::

        >>> ember.randint(3, 10, (2, 2)).dtype
        ember.int64
    """
    if size is None and len(args) == 2 and not isinstance(args[1], (tuple, list)):
        raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, not "
                        f"{type(args[1]).__name__}")
    low, high, size = _randint_args(args, low, high, size, "randint")
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, not "
                        f"{type(size).__name__}")
    shape = _sizes((tuple(size),))
    np_dtype = _dtype.to_numpy(dtype) if dtype is not None else np.dtype(np.int64)
    _check_from_to(low, high, np_dtype)
    dev = _device_of(device)
    rng = _generator(generator, dev)._rng
    return _finish(_integers(rng, low, high, shape, np_dtype), dev, requires_grad, out)


@dispatched
def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype`` is given)."""
    n = _int_arg(n, "randperm", "n")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    np_dtype = _dtype.to_numpy(dtype) if dtype is not None else np.dtype(np.int64)
    if np_dtype.kind == "b":
        raise not_implemented("randperm", np_dtype)
    if np_dtype.kind in "iu" and n - 1 > np.iinfo(np_dtype).max or \
            np_dtype.kind == "f" and n - 1 > np.finfo(np_dtype).max:
        raise RuntimeError(f"value cannot be converted to type {np_dtype.name}_t without "
                           "overflow" if np_dtype.kind in "iu" else
                           f"value cannot be converted to type {np_dtype.name} without "
                           "overflow")
    dev = _device_of(device)
    rng = _generator(generator, dev)._rng
    return _finish(rng.permutation(n).astype(np_dtype), dev, requires_grad, out)


def _like_args(input, dtype, device):
    if not isinstance(input, TensorBase):
        raise TypeError(f"expected a Tensor as input, got {type(input).__name__}")
    return _like(input, dtype, device)


@dispatched
def rand_like(input, *, generator=None, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None):
    """``rand`` with the shape (and dtype and device, unless given) of ``input``."""
    dtype, device = _like_args(input, dtype, device)
    return rand(tuple(input.shape), generator=generator, dtype=dtype, device=device,
                requires_grad=requires_grad)


@dispatched
def randn_like(input, *, generator=None, dtype=None, layout=None, device=None,
               requires_grad=False, memory_format=None):
    """``randn`` with the shape (and dtype and device, unless given) of ``input``."""
    dtype, device = _like_args(input, dtype, device)
    return randn(tuple(input.shape), generator=generator, dtype=dtype, device=device,
                 requires_grad=requires_grad)


@dispatched
def randint_like(input, *args, low=None, high=None, generator=None, dtype=None, layout=None,
                 device=None, requires_grad=False, memory_format=None):
    """``randint`` shaped like ``input``: ``randint_like(input, high)`` or
    ``randint_like(input, low, high)``; ``input``'s dtype unless ``dtype`` is given."""
    low, high, _ = _randint_args(args, low, high, (), "randint_like")
    dtype, device = _like_args(input, dtype, device)
    return randint(low, high, tuple(input.shape), generator=generator, dtype=dtype,
                   device=device, requires_grad=requires_grad)


# ---------------------------------------------------------------------------
# sampling from tensors of parameters

class Sample(Node):
    """A draw that depends on tensors of parameters (``normal``, ``bernoulli``,
    ``poisson``). As in PyTorch, the gradient with respect to the parameters is zero."""

    def forward(self, draw, *params):
        self.shapes = [p.shape for p in params]
        return draw(*params)

    def backward(self, g):
        from ember._ops.creation import zeros

        return (None,) + tuple(zeros(s, dtype=g.dtype, device=g.device) for s in self.shapes)


def _params(*tensors):
    """The dtype PyTorch gives a sample drawn from these parameter tensors."""
    dts = [t._data.dtype for t in tensors if isinstance(t, TensorBase)]
    result = _dtype.from_numpy(dts[0])
    for dt in dts[1:]:
        result = _dtype.promote_types(result, _dtype.from_numpy(dt))
    return result.numpy


def _check_std(std):
    if isinstance(std, TensorBase):
        data = std._data
        if data.size and not bool((data >= 0).all()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif not std >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_fmt(std)}")


@dispatched
def normal(mean, std=1.0, size=None, *, generator=None, out=None, dtype=None, layout=None,
           device=None, requires_grad=False, pin_memory=False):
    """Samples from normal distributions with the given means and standard deviations.

    ``mean`` and ``std`` may be tensors (broadcast together; the result has their
    promoted dtype) or numbers; with two numbers, ``size`` gives the shape.

    Examples::

        >>> ember.normal(ember.zeros(3), ember.ones(3)).shape
        ember.Size([3])
        >>> ember.normal(2.0, 3.0, size=(2, 2)).shape
        ember.Size([2, 2])
    """
    mt, st = isinstance(mean, TensorBase), isinstance(std, TensorBase)
    if not mt and not st:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments - got "
                            "(float, float), but expected one of: (Tensor mean, Tensor std), "
                            "(Tensor mean, float std), (float mean, Tensor std), (float mean, "
                            "float std, tuple of ints size)")
        _check_std(std)
        shape = _sizes((tuple(size),))
        np_dtype = _float_dtype(dtype, "normal_kernel_cpu")
        dev = _device_of(device)
        rng = _generator(generator, dev)._rng
        arr = _standard_normal(rng, shape, np_dtype)
        arr = (arr * np_dtype.type(std) + np_dtype.type(mean)).astype(np_dtype, copy=False)
        return _finish(arr, dev, requires_grad, out)
    ref = mean if mt else std
    np_dtype = _params(mean, std)
    if np_dtype.kind not in "fc":
        raise not_implemented("normal_kernel_cpu", np_dtype)
    _check_std(std)
    if mt and st:
        mean, std = (t if t._data.dtype == np_dtype else t.to(_dtype.from_numpy(np_dtype))
                     for t in (mean, std))
        _broadcast_check(mean._data.shape, std._data.shape)
    dev = ref.device
    rng = _generator(generator, dev)._rng

    def draw(*params):
        host = [backend_of(p).to_numpy(p) for p in params]
        m = host[0] if mt else mean
        s = host[-1] if st else std
        z = _standard_normal(rng, np.broadcast_shapes(*(h.shape for h in host)), np_dtype)
        return _on_device((z * s + m).astype(np_dtype, copy=False), dev)

    params = [t for t in (mean, std) if isinstance(t, TensorBase)]
    return with_out(apply(Sample, draw, *params), out)


def _broadcast_check(sa, sb):
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + tuple(sa), (1,) * (n - len(sb)) + tuple(sb)
    for i, (x, y) in enumerate(zip(pa, pb, strict=True)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {i}")


_P_RANGE = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
            "message be improved?  If so, please report an enhancement request to PyTorch.)")


@dispatched
def bernoulli(input, p=None, *, generator=None, out=None):
    """0/1 samples: ``1`` with probability ``input`` elementwise (or ``p`` for every
    element when given); the result has ``input``'s dtype."""
    if not isinstance(input, TensorBase):
        raise TypeError(f"bernoulli(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    np_dtype = input._data.dtype
    dev = input.device
    rng = _generator(generator, dev)._rng
    if p is not None:
        p = float(p)
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_fmt(p)}")
        arr = (rng.random(input._data.shape) < p).astype(np_dtype)
        return _finish(arr, dev, False, out)
    if np_dtype.kind not in "fc":
        raise not_implemented("bernoulli_tensor_cpu_p_", np_dtype)
    probs = backend_of(input._data).to_numpy(input._data)
    if probs.size and not bool(((probs >= 0) & (probs <= 1)).all()):
        raise RuntimeError(_P_RANGE)

    def draw(x):
        host = backend_of(x).to_numpy(x)
        return _on_device((rng.random(host.shape) < host).astype(np_dtype), dev)

    return with_out(apply(Sample, draw, input), out)


@dispatched
def poisson(input, generator=None):
    """Samples from Poisson distributions with rates ``input`` (same dtype)."""
    np_dtype = input._data.dtype
    if np_dtype.kind != "f":
        raise not_implemented("poisson_cpu", np_dtype)
    rates = backend_of(input._data).to_numpy(input._data)
    if rates.size and not bool((rates >= 0).all()):
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    dev = input.device
    rng = _generator(generator, dev)._rng

    def draw(x):
        return _on_device(rng.poisson(backend_of(x).to_numpy(x)).astype(np_dtype), dev)

    return apply(Sample, draw, input)


@dispatched
def binomial(count, prob, generator=None):
    """binomial(count, prob, generator=None) -> Tensor

    Samples from binomial distributions: the number of successes in ``count`` trials of
    probability ``prob`` (floating tensors of one dtype that broadcast). As in PyTorch,
    ``count <= 0`` or ``prob <= 0`` gives 0, else ``prob >= 1`` gives ``count``, else a
    nan or infinite count, or a nan ``prob``, gives nan.
    """
    for arg, pos, t in (("count", 1, count), ("prob", 2, prob)):
        if not isinstance(t, TensorBase):
            raise TypeError(f"binomial(): argument '{arg}' (position {pos}) must be Tensor, "
                            f"not {type(t).__name__}")
    dt = count._data.dtype
    if dt.kind != "f":
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{type_name(dt)}")
    if prob._data.dtype != dt:
        raise RuntimeError(f"Found dtype {type_name(prob._data.dtype)} but expected "
                           f"{type_name(dt)}")
    if dt == np.float16:
        raise not_implemented("binomial_cpu", dt)
    dev = count.device
    rng = _generator(generator, dev)._rng

    def draw(n, p):
        n, p = backend_of(n).to_numpy(n), backend_of(p).to_numpy(p)
        n, p = np.broadcast_arrays(n.astype(np.float64), p.astype(np.float64))
        with np.errstate(invalid="ignore"):
            trials = np.where(np.isfinite(n) & (n > 0), np.floor(n), 0).astype(np.int64)
            k = rng.binomial(trials, np.clip(np.nan_to_num(p), 0.0, 1.0)).astype(np.float64)
            # PyTorch's order of cases: no trials or no chance, then certain success, then
            # a draw (nan for nan and for infinitely many trials)
            k = np.where(np.isnan(n) | np.isnan(p) | np.isinf(n), np.nan, k)
            k = np.where(p >= 1, n, k)
            k = np.where((n <= 0) | (p <= 0), 0.0, k)
        return _on_device(k.astype(dt), dev)

    return apply(Sample, draw, count, prob)


@dispatched
def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    """Category indices drawn from the distributions given by the (unnormalized,
    non-negative) weights in each row of ``input``: ``num_samples`` per row, without
    replacement unless ``replacement=True``. The result is int64.

    Examples::

        >>> w = ember.tensor([0., 10., 3., 0.])
        >>> ember.multinomial(w, 2).shape
        ember.Size([2])
    """
    np_dtype = input._data.dtype
    if np_dtype.kind != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{type_name(np_dtype)}")
    nd = input._data.ndim
    if nd not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    num_samples = _int_arg(num_samples, "multinomial", "num_samples")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    probs = backend_of(input._data).to_numpy(input._data).astype(np.float64).reshape(
        -1, input._data.shape[-1])
    n_cat = probs.shape[1]
    if not replacement and num_samples > n_cat:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if probs.size and not bool((np.isfinite(probs) & (probs >= 0)).all()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if probs.shape[0] and (n_cat == 0 or bool((probs.sum(axis=1) <= 0).any())):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    dev = input.device
    rng = _generator(generator, dev)._rng
    rows = probs.shape[0]
    if replacement:
        cdf = np.cumsum(probs, axis=1)
        cdf /= cdf[:, -1:]
        u = rng.random((rows, num_samples))
        if rows <= 256:
            idx = np.empty((rows, num_samples), dtype=np.int64)
            for r in builtins.range(rows):
                idx[r] = np.searchsorted(cdf[r], u[r], side="right")
        else:  # one search over all rows, each shifted by its row number
            shift = np.arange(rows, dtype=np.float64)[:, None]
            idx = np.searchsorted((cdf + shift).ravel(), (u + shift).ravel(), side="right")
            idx = idx.reshape(rows, num_samples) - np.arange(rows)[:, None] * n_cat
        np.clip(idx, 0, n_cat - 1, out=idx)
    else:
        # exponential races: sorting E_i / w_i draws categories one after the other with
        # probabilities proportional to the remaining weights; zero weights come last
        with np.errstate(divide="ignore"):
            keys = rng.standard_exponential((rows, n_cat)) / probs
        ties = rng.random((rows, n_cat))
        idx = np.lexsort((ties, keys), axis=-1)[:, :num_samples].astype(np.int64)
    if nd == 1:
        idx = idx.reshape(num_samples)
    return _finish(idx, dev, False, out)


# ---------------------------------------------------------------------------
# in-place fills

class Fill(Node):
    """``self`` overwritten with samples; its earlier value gets a zero gradient."""

    def forward(self, x, draw, *params):
        self.n_params = len(params)
        return draw(x, *params)

    def backward(self, g):
        from ember._ops.creation import zeros_like

        return (zeros_like(g),) + (None,) * (1 + self.n_params)


def _fill(self, draw, *params):
    dev = self.device
    return apply_inplace(Fill, self, lambda x, *p: _on_device(draw(x, *p), dev), *params)


def _continuous(self, kernel, message=None):
    np_dtype = self._data.dtype
    if np_dtype.kind not in "fc":
        if message is not None:
            raise RuntimeError(message.format(type_name(np_dtype), _RANGE_NAMES.get(
                np_dtype.name, np_dtype.name)))
        raise not_implemented(kernel, np_dtype)
    return np_dtype


def _rng_for(self, generator):
    return _generator(generator, self.device)._rng


def uniform_(self, from_=0, to=1, *, generator=None):
    """Fill ``self`` with samples from the uniform distribution on [from, to)."""
    np_dtype = _continuous(self, "check_uniform_bounds")
    frm, to = float(from_), float(to)
    info = np.finfo(np_dtype.char.lower() if np_dtype.kind == "c" else np_dtype)
    fmax = float(info.max)
    name = type_name(np.dtype(np_dtype.char.lower()) if np_dtype.kind == "c" else np_dtype)
    cname = _RANGE_NAMES.get(np.dtype(info.dtype).name)
    if not -fmax <= frm <= fmax:
        raise RuntimeError(f"from is out of bounds for {cname}")
    if not -fmax <= to <= fmax:
        raise RuntimeError(f"to is out of bounds for {cname}")
    if frm > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={_fmt(frm)} > to={_fmt(to)}")
    if to - frm > fmax:
        raise RuntimeError(
            f"uniform_ expects to-from <= std::numeric_limits<{name}>::max(), but found "
            f"to={_fmt(to)} and from={_fmt(frm)} which result in to-from to exceed the limit")
    rng = _rng_for(self, generator)

    def draw(x):
        u = _uniform(rng, x.shape, np_dtype)
        return (u * (to - frm) + frm).astype(np_dtype, copy=False)

    return _fill(self, draw)


def normal_(self, mean=0, std=1, *, generator=None):
    """Fill ``self`` with samples from the normal distribution N(mean, std**2)."""
    np_dtype = _continuous(self, "normal_kernel_cpu")
    _check_std(std)
    rng = _rng_for(self, generator)

    def draw(x):
        if np_dtype.kind == "c":  # each part: N(mean, std**2 / 2)
            real = np.dtype(np_dtype.char.lower())
            out = np.empty(x.shape, np_dtype)
            s = std / math.sqrt(2)
            out.real = _standard_normal(rng, x.shape, real) * real.type(s) + real.type(mean)
            out.imag = _standard_normal(rng, x.shape, real) * real.type(s) + real.type(mean)
            return out
        z = _standard_normal(rng, x.shape, np_dtype)
        return (z * np_dtype.type(std) + np_dtype.type(mean)).astype(np_dtype, copy=False)

    return _fill(self, draw)


def bernoulli_(self, p=0.5, *, generator=None):
    """Fill ``self`` with 0/1 samples, 1 with probability ``p`` (a number or a tensor
    broadcastable to ``self``)."""
    rng = _rng_for(self, generator)
    np_dtype = self._data.dtype
    if isinstance(p, TensorBase):
        probs = backend_of(p._data).to_numpy(p._data)
        if probs.size and not bool(((probs >= 0) & (probs <= 1)).all()):
            raise RuntimeError(_P_RANGE)
        np.broadcast_shapes(probs.shape, self._data.shape)

        def draw_t(x, pr):
            host = backend_of(pr).to_numpy(pr)
            return (rng.random(x.shape) < host).astype(np_dtype)

        return _fill(self, draw_t, p.detach())
    p = float(p)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_fmt(p)}")
    return _fill(self, lambda x: (rng.random(x.shape) < p).astype(np_dtype))


_UNSET = object()


def random_(self, *args, to=_UNSET, generator=None):
    """Fill ``self`` with integers drawn uniformly: ``random_()`` over the dtype's range
    (up to ``2**mantissa`` for floats), ``random_(to)`` from [0, to), ``random_(from,
    to)`` from [from, to)."""
    np_dtype = self._data.dtype
    if np_dtype.kind == "c":
        raise not_implemented("random_", np_dtype)
    if len(args) > 2:
        raise TypeError("random_() takes at most 2 positional arguments")
    args = [None if a is None else _int_arg(a, "random_", "from") for a in args]
    if len(args) == 2:
        if to is not _UNSET:
            raise TypeError("random_() got multiple values for argument 'to'")
        frm, to = args
    elif len(args) == 1 and to is _UNSET:
        frm, to = 0, args[0]
    else:
        frm = args[0] if args else 0
        to = None if to is _UNSET else to
    if to is not None:
        to = _int_arg(to, "random_", "to")
    if to is None:  # up to the largest value of the dtype (inclusive)
        if np_dtype.kind == "b":
            hi = 1
        elif np_dtype.kind in "iu":
            hi = int(np.iinfo(np_dtype).max)
        else:
            hi = 2 ** (np.finfo(np_dtype).nmant + 1)
        if frm > hi:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                               f"from={frm} >= to={hi + 1}")
        lo_bound = int(np.iinfo(np_dtype).min) if np_dtype.kind in "iu" else \
            (0 if np_dtype.kind == "b" else -hi)
        if frm < lo_bound:
            raise RuntimeError(
                f"from is out of bounds for {_RANGE_NAMES.get(np_dtype.name, np_dtype.name)}")
        to = hi + 1
    else:
        _check_from_to(frm, to, np_dtype)
    rng = _rng_for(self, generator)
    return _fill(self, lambda x: _integers(rng, frm, to, x.shape, np_dtype))


def exponential_(self, lambd=1.0, *, generator=None):
    """Fill ``self`` with samples from the exponential distribution of rate ``lambd``."""
    _continuous(self, "exponential", "Exponential distribution is a continuous probability "
                "distribution. dtype must be a floating point but you specified {0}")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_fmt(lambd)}")
    rng = _rng_for(self, generator)
    np_dtype = self._data.dtype
    return _fill(self, lambda x: (rng.standard_exponential(x.shape) / lambd).astype(np_dtype))


def geometric_(self, p, *, generator=None):
    """Fill ``self`` with samples from the geometric distribution: the number of
    Bernoulli(p) trials up to and including the first success (1, 2, ...)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_fmt(p)}")
    rng = _rng_for(self, generator)
    np_dtype = self._data.dtype
    return _fill(self, lambda x: rng.geometric(p, size=x.shape).astype(np_dtype))


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    """Fill ``self`` with samples from the Cauchy distribution."""
    _continuous(self, "cauchy", "Cauchy distribution is a continuous probability "
                "distribution. dtype must be a floating point but you specified {1}")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_fmt(sigma)}")
    rng = _rng_for(self, generator)
    np_dtype = self._data.dtype
    return _fill(self, lambda x: (median + sigma * rng.standard_cauchy(x.shape))
                 .astype(np_dtype))


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fill ``self`` with samples whose logarithm is N(mean, std**2)."""
    _continuous(self, "log_normal_cpu")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_fmt(std)}")
    rng = _rng_for(self, generator)
    np_dtype = self._data.dtype
    return _fill(self, lambda x: rng.lognormal(mean, std, x.shape).astype(np_dtype))


def _bernoulli_method(self, p=None, *, generator=None):
    return bernoulli(self, p, generator=generator)


METHODS = {
    "uniform_": uniform_, "normal_": normal_, "bernoulli_": bernoulli_, "random_": random_,
    "exponential_": exponential_, "geometric_": geometric_, "cauchy_": cauchy_,
    "log_normal_": log_normal_, "bernoulli": _bernoulli_method, "multinomial": multinomial,
}

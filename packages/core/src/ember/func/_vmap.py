"""``ember.func.vmap``: map a function over a batch dimension of its inputs."""

from __future__ import annotations

import functools

from ember._C._core import TensorBase
from ember.func._pytree import broadcast_prefix, tree_flatten, tree_unflatten

__all__ = ["vmap"]


def _name(func) -> str:
    return getattr(func, "__name__", repr(func))


def _process_inputs(func, in_dims, args):
    if not isinstance(in_dims, int) and not isinstance(in_dims, tuple):
        raise ValueError(
            f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be "
            f"int or a (potentially nested) tuple matching the structure of inputs, got: "
            f"{type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(
            f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or "
            "you are trying to vmap over a function with no inputs. The latter is unsupported.")
    flat_args, spec = tree_flatten(args)
    flat_dims = broadcast_prefix(in_dims, spec)
    if flat_dims is None:
        raise ValueError(
            f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible "
            f"with the structure of `inputs`. in_dims has structure {tree_flatten(in_dims)[1]} "
            f"but inputs has structure {spec}.")
    for i, (arg, d) in enumerate(zip(flat_args, flat_dims, strict=True)):
        if d is None:
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(
                f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an "
                "input but in_dim must be either an integer dimension or None.")
        if not isinstance(arg, TensorBase):
            raise ValueError(
                f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an "
                f"input but the input is of type {type(arg)}. We cannot vmap over non-Tensor "
                "arguments, please use None as the respective in_dim")
        n = arg.dim()
        if not -n <= d < n:
            raise ValueError(
                f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for "
                f"some input, but that input is a Tensor of dimensionality {n} so expected "
                f"in_dim to satisfy -{n} <= in_dim < {n}.")
        flat_dims[i] = d % n
    sizes = [a.shape[d] for a, d in zip(flat_args, flat_dims, strict=True) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return flat_args, flat_dims, spec, sizes[0]


def _flat_out_dims(func, out_dims, outputs):
    flat_out, spec = tree_flatten(outputs)

    def incompatible():
        raise ValueError(
            f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
            f"compatible with the structure of `outputs`. out_dims has structure "
            f"{tree_flatten(out_dims)[1]} but outputs has structure {spec}.")

    if isinstance(outputs, TensorBase):
        if isinstance(out_dims, int) or out_dims is None:
            return flat_out, spec, [out_dims]
        if isinstance(out_dims, tuple) and len(out_dims) == 1:
            return flat_out, spec, list(out_dims)
        incompatible()
    dims = broadcast_prefix(out_dims, spec)
    if dims is None:
        incompatible()
    return flat_out, spec, dims


def _check_out_dims(func, out_dims):
    leaves, _ = tree_flatten(out_dims)
    for x in leaves:
        if x is None or (isinstance(x, int) and not isinstance(x, bool)):
            continue
        raise ValueError(
            f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or "
            "a python collection of ints representing where in the outputs the vmapped "
            "dimension should appear.")


class _Rng:
    """The default CPU generator across the batch entries, for ``randomness``."""

    def __init__(self, randomness):
        from ember._ops.random import default_generator

        self.mode = randomness
        self.gen = default_generator
        self.start = default_generator._state_bytes()

    def before(self, b):
        if self.mode == "same" and b > 0:
            self.gen._load_state_bytes(self.start)

    def after(self):
        if self.mode == "error" and self.gen._state_bytes() != self.start:
            from ember.func._transforms import _RANDOM_ERROR

            raise RuntimeError(_RANDOM_ERROR)


def _entry(flat_args, flat_dims, b):
    return [a if d is None else a.select(d, b) for a, d in zip(flat_args, flat_dims, strict=True)]


def _zero_entry(flat_args, flat_dims):
    # for a batch of size 0: per-entry inputs of the right shape, to learn the output shapes
    from ember._ops.creation import zeros

    out = []
    for a, d in zip(flat_args, flat_dims, strict=True):
        if d is None:
            out.append(a)
        else:
            shape = tuple(a.shape[:d]) + tuple(a.shape[d + 1:])
            out.append(zeros(shape, dtype=a.dtype, device=a.device))
    return out


def _same_unbatched(func, values):
    first = values[0]
    if all(v is first for v in values):
        return first
    if isinstance(first, TensorBase):
        from ember._ops.comparison import equal

        if all(isinstance(v, TensorBase) and tuple(v.shape) == tuple(first.shape)
               and equal(v, first) for v in values[1:]):
            return first
        raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` can not return a "
                         "BatchedTensor when out_dim is None")
    return first


def _vmap_call(func, in_dims, out_dims, randomness, args, kwargs):
    from ember._ops.join import stack

    flat_args, flat_dims, spec, size = _process_inputs(func, in_dims, args)
    rng = _Rng(randomness)
    results = []
    n_calls = size if size > 0 else 1
    for b in range(n_calls):
        rng.before(b)
        entry = (_entry(flat_args, flat_dims, b) if size > 0
                 else _zero_entry(flat_args, flat_dims))
        results.append(func(*tree_unflatten(entry, spec), **kwargs))
    rng.after()
    flat0, out_spec, dims = _flat_out_dims(func, out_dims, results[0])
    flats = [flat0]
    for r in results[1:]:
        f, s = tree_flatten(r)
        if s != out_spec:
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` returned outputs of "
                             f"different structures for different batch entries: {out_spec} "
                             f"and {s}")
        flats.append(f)
    outs = []
    for k, d in enumerate(dims):
        column = [f[k] for f in flats]
        if d is None:
            outs.append(_same_unbatched(func, column))
            continue
        if not isinstance(column[0], TensorBase):
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return "
                             f"Tensors, got type {type(column[0])}. Did you mean to set "
                             "out_dims= to None for output?")
        if size == 0:
            t = column[0]
            nd = t.dim() + 1
            if not -nd <= d < nd:
                raise IndexError(f"Dimension out of range (expected to be in range of "
                                 f"[{-nd}, {nd - 1}], but got {d})")
            d = d % nd
            from ember._ops.creation import empty

            shape = tuple(t.shape[:d]) + (0,) + tuple(t.shape[d:])
            outs.append(empty(shape, dtype=t.dtype, device=t.device))
        else:
            outs.append(stack(column, dim=d))
    return tree_unflatten(outs, out_spec)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    r"""Vectorize ``func`` over a batch dimension of its inputs.

    ``vmap(func)(x)`` is ``stack([func(x[0]), func(x[1]), ...])``: ``func`` sees one batch
    entry at a time, with the mapped dimension removed, and the results are stacked along
    ``out_dims``. Nested vmaps and compositions with the other transforms
    (``vmap(grad(f))`` for per-sample gradients) work, and so does autograd through it.

    .. note::
        ember runs the batch entries **one after the other, in a Python loop** (it has no
        batching rules yet): the results are those of PyTorch's vmap, the speed that of a
        loop. ``chunk_size`` is accepted and checked but changes nothing, since entries are
        already processed one at a time.

    Args:
        func (Callable): a function of tensors (or pytrees of tensors) returning a tensor or
            a pytree of tensors.
        in_dims (int or nested structure): the mapped dimension of each input: an int for
            all, or a (nested) tuple matching the positional inputs, with None for inputs
            that are not mapped. Default: 0. Keyword arguments are never mapped.
        out_dims (int or nested structure): where the mapped dimension goes in each output
            (None: the output is the same for every entry and is returned as it is).
            Default: 0.
        randomness (str): ``"error"`` (default) raises if ``func`` draws random numbers
            from the default generator; ``"different"`` gives every entry its own numbers;
            ``"same"`` gives every entry the same numbers (the generator is rewound before
            each entry). ember watches and rewinds the CPU default generator; a CUDA
            generator's state cannot be saved, so random ops on a GPU are neither caught
            by ``"error"`` nor repeated by ``"same"``.
        chunk_size (int, optional): the number of entries to process at once in PyTorch;
            must be positive. Default: None.

    Examples::

        >>> x = ember.arange(6.0).reshape(2, 3)
        >>> ember.vmap(ember.dot)(x, x)
        tensor([ 5., 50.])
        >>> ember.vmap(ember.mv, in_dims=(None, 0))(ember.eye(3), x)
        tensor([[0., 1., 2.],
                [3., 4., 5.]])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    _check_out_dims(func, out_dims)

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return _vmap_call(func, in_dims, out_dims, randomness, args, kwargs)

    return wrapped

"""``ember.utils.checkpoint``: activation checkpointing (trade compute for memory).

``checkpoint(fn, *args)`` runs ``fn`` without keeping what its backward needs, and runs it
again during backward to get those values back. Two implementations, as in PyTorch:

- ``use_reentrant=True``: a custom Function whose forward runs ``fn`` under ``no_grad``
  and whose backward runs ``fn`` again with grad enabled and calls ``backward`` on it
  (a backward inside the backward). Only ``Tensor.backward()`` can go through it.
- ``use_reentrant=False``: ``fn`` runs with grad enabled under saved-tensors hooks
  (NOTE [ Saved tensors hooks ] in ``ember/autograd/graph.py``) that keep a placeholder
  instead of each saved tensor; the first time backward needs one, ``fn`` is run again
  and the recomputed values fill the placeholders (stopping early once all are there).
  Works with ``autograd.grad``, keyword arguments and nested checkpoints.

Both restore the random state of the forward before recomputing (``preserve_rng_state``),
so dropout masks match. The CPU generator's state is saved and restored exactly; a CUDA
generator's state cannot be saved in ember (cuRAND states are not serializable), so
checkpoint reseeds the CUDA default generators of the inputs' devices before the forward
and again before the recomputation (the masks match; the numbers drawn differ from an
unchecked run, and the generator continues from a fresh seed afterwards).
"""

from __future__ import annotations

import contextlib
import enum
import secrets
import threading
import uuid
import warnings
import weakref
from collections import defaultdict

from ember._C import _core
from ember._C._core import TensorBase
from ember.autograd.function import Function
from ember.autograd.grad_mode import enable_grad, no_grad
from ember.autograd.graph import saved_tensors_hooks

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "check_backward_validity", "detach_variable", "get_device_states",
           "set_device_states", "noop_context_fn", "set_checkpoint_early_stop",
           "DefaultDeviceType", "set_checkpoint_debug_enabled", "CheckpointPolicy",
           "SelectiveCheckpointContext", "GraphExecGroup",
           "create_selective_checkpoint_contexts"]

_DEFAULT_DETERMINISM_MODE = "default"
_checkpoint_debug_enabled = None
_enable_checkpoint_early_stop = None


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Context manager overriding the ``debug`` argument of every ``checkpoint`` inside it
    (None defers to each call's own).

    Args:
        enabled (bool or None): print the ops of the forward and the recomputation when
            they do not match.
    """
    global _checkpoint_debug_enabled
    prev = _checkpoint_debug_enabled
    try:
        _checkpoint_debug_enabled = enabled
        yield
    finally:
        _checkpoint_debug_enabled = prev


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Context manager overriding ``early_stop`` for the non-reentrant checkpoints whose
    forward runs inside it: with ``False`` the recomputation runs ``fn`` to its end even
    after every needed tensor was recomputed.

    Args:
        enable (bool): stop the recomputation early.
    """
    global _enable_checkpoint_early_stop
    prev = _enable_checkpoint_early_stop
    try:
        _enable_checkpoint_early_stop = enable
        yield
    finally:
        _enable_checkpoint_early_stop = prev


def detach_variable(inputs):
    """``inputs`` (a tuple) with every tensor detached, keeping its ``requires_grad``."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if not isinstance(inp, TensorBase):
            out.append(inp)
            continue
        x = inp.detach()
        x.requires_grad = inp.requires_grad
        out.append(x)
    return tuple(out)


def check_backward_validity(inputs) -> None:
    """Warn if no tensor among ``inputs`` requires grad (the gradients would be None)."""
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, TensorBase)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


class DefaultDeviceType:
    """The device type whose random state checkpoint saves when no input is on a device
    (``"cuda"`` where a GPU is present, else ``"cpu"``)."""

    _default_device_type = None

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        """Set the default device type for checkpointing."""
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        """The default device type for checkpointing."""
        if not DefaultDeviceType._default_device_type:
            from ember._backend import cupy as cupy_backend

            try:
                has_gpu = cupy_backend.device_count() > 0
            except Exception:  # noqa: BLE001 - no CuPy: no GPU
                has_gpu = False
            DefaultDeviceType._default_device_type = "cuda" if has_gpu else "cpu"
        return DefaultDeviceType._default_device_type


def _flat_tensors(args):
    from ember.func._pytree import tree_leaves

    return [a for a in tree_leaves(args) if isinstance(a, TensorBase)]


def _device_generators(args):
    """The default generators of the non-CPU devices of the tensors in ``args``."""
    from ember._backend import backend_for_device

    gens, seen = [], set()
    for t in _flat_tensors(args):
        dev = t.device
        if dev.type != "cpu" and str(dev) not in seen:
            seen.add(str(dev))
            gens.append(backend_for_device(dev).default_generator)
    return gens


def get_device_states(*args):
    """``(device indices, states)`` of the default generators of the devices (other than
    the CPU) that the tensors in ``args`` are on."""
    gens = _device_generators(args)
    return [g.device.index for g in gens], [g.get_state() for g in gens]


def set_device_states(devices, states, *, device_type=None) -> None:
    """Restore the default generators of ``devices`` (indices) to ``states``.

    Args:
        devices: device indices.
        states: one state per device, from :func:`get_device_states`.
        device_type (str): the devices' type. Default: ``DefaultDeviceType.get_device_type()``.
    """
    from ember._backend import backend_for_device

    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type == "meta":
        return
    for index, state in zip(devices, states, strict=False):
        backend_for_device(f"{device_type}:{index}").default_generator.set_state(state)


class _RngState:
    """The random state of a forward, for its recomputation (see the module docstring)."""

    def __init__(self, args, enabled):
        from ember._ops.random import default_generator

        self.enabled = enabled
        if not enabled:
            return
        self.cpu = default_generator._state_bytes()
        self.devices = []
        for g in _device_generators(args):
            seed = secrets.randbits(62)
            g._reseed(seed)
            self.devices.append((g, seed))

    @contextlib.contextmanager
    def restored(self):
        """Run the block with the forward's random state; restore the CPU state after."""
        if not self.enabled:
            yield
            return
        from ember._ops.random import default_generator

        outer = default_generator._state_bytes()
        default_generator._load_state_bytes(self.cpu)
        for g, seed in self.devices:
            g._reseed(seed)
        try:
            yield
        finally:
            default_generator._load_state_bytes(outer)
            for g, _ in self.devices:
                g._reseed(secrets.randbits(62))


class CheckpointFunction(Function):
    """The reentrant checkpoint (``use_reentrant=True``) as a custom Function."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.rng = _RngState(args, preserve_rng_state)
        ctx.inputs = []
        ctx.tensor_indices = []
        tensor_inputs = []
        for i, arg in enumerate(args):
            if isinstance(arg, TensorBase):
                tensor_inputs.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensor_inputs)
        with no_grad():
            outputs = run_function(*args)
        return outputs

    @staticmethod
    def backward(ctx, *args):
        from ember.autograd import backward as autograd_backward

        if not _core._is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() "
                "or passing an `inputs` parameter to .backward(). To resolve this error, you "
                "can either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument.")
        inputs = list(ctx.inputs)
        for i, idx in enumerate(ctx.tensor_indices):
            inputs[idx] = ctx.saved_tensors[i]
        with ctx.rng.restored():
            detached = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, TensorBase):
            outputs = (outputs,)
        outs, grads = [], []
        for i in range(len(outputs)):
            if isinstance(outputs[i], TensorBase) and outputs[i].requires_grad:
                outs.append(outputs[i])
                grads.append(args[i])
        if not outs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        autograd_backward(outs, grads)
        return (None, None) + tuple(inp.grad if isinstance(inp, TensorBase) else None
                                    for inp in detached)


def noop_context_fn():
    """The default ``context_fn`` of :func:`checkpoint`: two empty contexts."""
    return contextlib.nullcontext(), contextlib.nullcontext()


class CheckpointError(RuntimeError):
    """Raised when the recomputation of a checkpoint does not match its forward."""


_debug_tip_msg = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint-debug mode globally.
"""


class SelectiveCheckpointContext:
    """What a selective-checkpoint policy function is told about the op it decides for.

    Args:
        is_recompute (bool): whether the call is part of the recomputation.
        op_output: the op's output, where known.
    """

    def __init__(self, *, is_recompute, op_output=None) -> None:
        self.is_recompute = is_recompute
        self.op_output = op_output


class CheckpointPolicy(enum.Enum):
    """What selective checkpointing does with an op's output: save it in the forward
    (``*_SAVE``), recompute it in backward (``*_RECOMPUTE``) or save it in CPU memory
    (``*_CPU_OFFLOAD``); ``MUST_*`` may not be overridden by other systems."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


class _PolicyListener:
    """Asks the policy about each op that passes the dispatch point (NOTE [ One dispatch
    point ]) while its context is entered."""

    def __init__(self, policy_fn, is_recompute):
        self.policy_fn = policy_fn
        self.is_recompute = is_recompute
        self.decisions = []

    def enter(self, name, inputs):
        policy = self.policy_fn(SelectiveCheckpointContext(is_recompute=self.is_recompute),
                                name, *inputs)
        if isinstance(policy, bool):  # PyTorch's older policies answer True for "save"
            policy = CheckpointPolicy.MUST_SAVE if policy else CheckpointPolicy.PREFER_RECOMPUTE
        if not isinstance(policy, CheckpointPolicy):
            raise RuntimeError(f"policy_fn must return a CheckpointPolicy, got {policy!r} for "
                               f"op {name}")
        self.decisions.append((name, policy))

    def enter_backward(self, name):  # backward nodes are not ops of the checkpointed region
        return None

    def exit(self, token):
        pass


@contextlib.contextmanager
def _policy_context(listener):
    from ember import _dispatch

    _dispatch.add_listener(listener)
    try:
        yield listener
    finally:
        _dispatch.remove_listener(listener)


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """The ``context_fn`` contexts of selective activation checkpointing:
    ``checkpoint(fn, x, use_reentrant=False, context_fn=lambda:
    create_selective_checkpoint_contexts(policy))``.

    ``policy_fn_or_list`` is a function ``policy(ctx, op, *args)`` returning a
    :class:`CheckpointPolicy` (``ctx.is_recompute`` tells the forward from the
    recomputation; ``op`` is the op's registered name, ``"mm"``, ``"conv2d"``), or a list
    of ops (names or ember functions) to save, every other op being recomputed.

    What ember does with the answers: it asks the policy about every op of the forward and
    of the recomputation and checks each answer, as PyTorch does, but it **recomputes every
    op in backward whatever the policy says**: ember's dispatch point observes ops and
    cannot hand back a saved result instead of running one. The gradients are the same
    either way (those of a plain non-reentrant checkpoint); the compute that ``MUST_SAVE``
    would spare is not spared, and no output is kept beyond what checkpoint keeps.
    ``allow_cache_entry_mutation`` is accepted for PyTorch's signature (no cache entries
    exist to mutate).
    """
    if isinstance(policy_fn_or_list, list):
        names = set()
        for op in policy_fn_or_list:
            if isinstance(op, str):
                names.add(op)
            elif callable(op):
                names.add(getattr(op, "__name__", repr(op)))
            else:
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got {op} "
                                 f"of type {type(op)}. ")

        def policy_fn(ctx, op, *args, **kwargs):
            return CheckpointPolicy.MUST_SAVE if op in names \
                else CheckpointPolicy.PREFER_RECOMPUTE
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    return (_policy_context(_PolicyListener(policy_fn, False)),
            _policy_context(_PolicyListener(policy_fn, True)))


_group_state = threading.local()


class GraphExecGroup:
    """Backward calls under one instance of this context manager recompute each
    non-reentrant checkpoint at most once between them (they must need disjoint saved
    tensors)."""

    def __enter__(self):
        current = getattr(_group_state, "group", None)
        if current is not None:
            raise RuntimeError(f"GraphExecGroup contexts cannot be nested. Already inside group "
                               f"{current}")
        _group_state.group = self
        return self

    def __exit__(self, *args) -> None:
        _group_state.group = None

    @classmethod
    def _get_current_group(cls):
        return getattr(_group_state, "group", None)


# ----------------------------------------------------------------------------
# the non-reentrant checkpoint

class _Holder:
    __slots__ = ("handles", "__weakref__")

    def __init__(self):
        self.handles = {}


class _Handle:
    __slots__ = ("__weakref__",)


class _StopRecomputation(Exception):
    pass


def _default_meta(x):
    return {"shape": tuple(x.shape), "dtype": x.dtype, "device": x.device}


_METADATA_FNS = {_DEFAULT_DETERMINISM_MODE: _default_meta, "none": lambda _: None}


class _OpLog:
    """A dispatch listener recording the names of the ops that run (``debug=True``)."""

    def __init__(self):
        self.ops = []

    def enter(self, name, inputs):
        self.ops.append(name)

    def exit(self, token):
        return None

    @contextlib.contextmanager
    def recording(self):
        from ember import _dispatch

        _dispatch.add_listener(self)
        try:
            yield
        finally:
            _dispatch.remove_listener(self)


class _Frame:
    """One checkpointed call: its inputs, the placeholders of its saved tensors and what
    each backward call (graph task) recomputed."""

    def __init__(self, recompute_fn, early_stop, metadata_fn, logs):
        self.recompute_fn = recompute_fn
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.logs = logs                         # (forward log, recompute log) or None
        self.args = []
        self.versions = []
        self.weak_holders = []
        self.metadatas = []
        self.recomputed = defaultdict(weakref.WeakKeyDictionary)
        self.recomp_counter = defaultdict(int)
        self.is_recomputed = defaultdict(bool)
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    def save_inputs(self, args):
        self.args = list(args)
        self.versions = [a._version if isinstance(a, TensorBase) else None for a in args]

    def get_inputs(self):
        for a, v in zip(self.args, self.versions, strict=True):
            if v is not None and a._version != v:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by "
                    f"an inplace operation: [{a.type()} {list(a.shape)}] is at version "
                    f"{a._version}; expected version {v} instead. Hint: the input of a "
                    "checkpointed function was changed in place after the forward.")
        return self.args

    def error(self, message):
        if self.logs is not None:
            fwd, rec = self.logs
            message += ("\nOperations executed during the original forward:\n  "
                        + "\n  ".join(fwd.ops)
                        + "\nOperations executed during recomputation:\n  "
                        + "\n  ".join(rec.ops))
        else:
            message += _debug_tip_msg
        return CheckpointError(message)

    def check_recomputed(self, gid):
        if self.ignore_saved_mismatch:
            return
        if len(self.weak_holders) != self.recomp_counter[gid]:
            raise self.error(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\nNumber of tensors saved during forward: "
                f"{len(self.weak_holders)}\nNumber of tensors saved during recomputation: "
                f"{self.recomp_counter[gid]}.\n")
        different = []
        for idx, ref in enumerate(self.weak_holders):
            holder = ref()
            if holder is None:
                continue
            x = self.recomputed[gid][holder.handles[gid]]
            if self.metadatas[idx] != self.metadata_fn(x):
                different.append((idx, self.metadatas[idx], self.metadata_fn(x)))
        if different:
            lines = "".join(f"tensor at position {i}:\nsaved metadata: {a}\nrecomputed metadata: "
                            f"{b}\n" for i, a, b in different)
            raise self.error("torch.utils.checkpoint: Recomputed values for the following "
                             f"tensors have different metadata than during the forward pass."
                             f"\n{lines}.\n")


class _RecomputationHooks(saved_tensors_hooks):
    """During the recomputation: each saved tensor fills the next placeholder."""

    def __init__(self, frame_ref, gid):
        def pack_hook(x):
            x = x.detach() if x.requires_grad else x
            frame = frame_ref()
            idx = frame.recomp_counter[gid]
            frame.recomp_counter[gid] += 1
            if idx >= len(frame.weak_holders):
                if not frame.forward_completed:
                    frame.ignore_saved_mismatch = True
                    return x
                raise frame.error("torch.utils.checkpoint: trying to save more tensors during "
                                  "recomputation than during the original forward pass.\n")
            holder = frame.weak_holders[idx]()
            if holder is not None:
                holder.handles[gid] = _Handle()
                frame.recomputed[gid][holder.handles[gid]] = x
            if frame.early_stop and frame.recomp_counter[gid] == len(frame.weak_holders):
                raise _StopRecomputation
            return x

        super().__init__(pack_hook, lambda x: x)


class _CheckpointHooks(saved_tensors_hooks):
    """During the forward: each saved tensor is replaced by a placeholder; unpacking one
    recomputes the forward (once per backward call)."""

    def __init__(self, frame):
        def pack_hook(x):
            holder = _Holder()
            frame.weak_holders.append(weakref.ref(holder))
            if frame.metadata_fn is not None:
                with no_grad():
                    frame.metadatas.append(frame.metadata_fn(x))
            return holder

        def unpack_hook(holder):
            gid = GraphExecGroup._get_current_group()
            if gid is None:
                gid = _core._current_graph_task_id()
                if gid == -1:
                    gid = int(uuid.uuid4())
            if not frame.is_recomputed[gid]:
                args = frame.get_inputs()
                try:
                    with _RecomputationHooks(weakref.ref(frame), gid), enable_grad():
                        frame.recompute_fn(*args)
                except _StopRecomputation:
                    pass
                frame.is_recomputed[gid] = True
                frame.check_recomputed(gid)
            if gid not in holder.handles:
                raise frame.error("torch.utils.checkpoint: the recomputation did not save a "
                                  "tensor that the original forward saved.\n")
            if holder.handles[gid] is None:
                raise CheckpointError(
                    "torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
                    "already unpacked once. If you are calling ctx.saved_tensors in backward, "
                    "make sure to do so only once. Otherwise please open an issue with details "
                    "on your use case.")
            ret = frame.recomputed[gid][holder.handles[gid]]
            holder.handles[gid] = None
            return ret

        super().__init__(pack_hook, unpack_hook)


def _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, debug,
                                  early_stop, args, kwargs):
    if _checkpoint_debug_enabled if _checkpoint_debug_enabled is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        logs = (_OpLog(), _OpLog())
    else:
        logs = None
    if determinism_check not in _METADATA_FNS:
        raise ValueError(f"determinism_check should be one of {list(_METADATA_FNS)}, but got "
                         f"{determinism_check}")
    if not _core.is_grad_enabled():
        return function(*args, **kwargs)
    forward_context, recompute_context = context_fn()
    rng = _RngState(args, preserve)

    def recompute_fn(*inputs):
        with rng.restored(), recompute_context:
            if logs is not None:
                with logs[1].recording():
                    function(*inputs, **kwargs)
            else:
                function(*inputs, **kwargs)

    frame = _Frame(recompute_fn,
                   _enable_checkpoint_early_stop if _enable_checkpoint_early_stop is not None
                   else early_stop, _METADATA_FNS[determinism_check], logs)
    frame.save_inputs(args)
    suppressed = True
    with _CheckpointHooks(frame), forward_context:
        if logs is not None:
            with logs[0].recording():
                ret = function(*args, **kwargs)
        else:
            ret = function(*args, **kwargs)
        suppressed = False
    if suppressed:
        raise RuntimeError(
            "torch.utils.checkpoint: the forward context provided by context_fn suppressed an "
            "exception raised during the checkpointed forward. This is not supported because "
            "checkpoint cannot return a value for a failed forward.")
    frame.forward_completed = True
    return ret


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, early_stop=True, **kwargs):
    r"""Run ``function(*args, **kwargs)`` without keeping its intermediate values for
    backward; backward runs it again to get them (see the module docstring).

    Args:
        function: the part of the model to run (a module or any callable).
        *args: its arguments.
        use_reentrant (bool): which implementation to use; pass it explicitly (None warns
            and uses ``True``, as PyTorch 2.13 does). ``False`` is recommended: it also
            works with ``autograd.grad``, keyword arguments and inputs that do not require
            grad.
        context_fn (Callable): returns two context managers, for the forward and for
            the recomputation (``use_reentrant=False`` only).
        determinism_check (str): ``"default"`` compares the shapes, dtypes and devices of
            the recomputed tensors with the forward's; ``"none"`` does not.
        debug (bool): on a mismatch, list the ops of the forward and of the
            recomputation (``use_reentrant=False`` only).
        early_stop (bool): stop recomputing once every needed tensor is there
            (``use_reentrant=False``; :func:`set_checkpoint_early_stop` overrides it).
        preserve_rng_state (bool, keyword): restore the random state of the forward
            before recomputing, so random ops (dropout) draw the same numbers. Default: True.
        **kwargs: keyword arguments of ``function`` (``use_reentrant=False`` only).

    Returns:
        What ``function`` returns.

    Examples::

        >>> model = ember.nn.Sequential(ember.nn.Linear(4, 4), ember.nn.ReLU())
        >>> x = ember.randn(2, 4, requires_grad=True)
        >>> y = ember.utils.checkpoint.checkpoint(model, x, use_reentrant=False)
        >>> y.sum().backward()     # runs model's forward again
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check,
                                         debug, early_stop, args, kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    r"""Run a sequence of modules or functions in ``segments`` checkpointed chunks (the last
    chunk is not checkpointed: its values are needed at once).

    Args:
        functions: an ``nn.Sequential`` or a list of modules or functions, run in order.
        segments (int): the number of chunks.
        input (Tensor): the input of the first function.
        use_reentrant (bool): as in :func:`checkpoint`.
        preserve_rng_state (bool, keyword): as in :func:`checkpoint`. Default: True.

    Returns:
        The output of the last function.

    Examples::

        >>> model = ember.nn.Sequential(*[ember.nn.Linear(4, 4) for _ in range(4)])
        >>> x = ember.randn(2, 4, requires_grad=True)
        >>> y = ember.utils.checkpoint.checkpoint_sequential(model, 2, x, use_reentrant=False)
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be "
            "passed explicitly. In version 2.9 we will raise an exception if use_reentrant is "
            "not passed. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    from ember.nn import Sequential

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)

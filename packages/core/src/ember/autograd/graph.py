"""``ember.autograd.graph``: the autograd graph's nodes and edges, and hooks on it.

NOTE [ Saved tensors hooks ]
The core keeps, per thread, a stack of (pack, unpack) hook pairs. When an op saves a
tensor for backward (``saves_inputs`` / ``saves_output``, or ``ctx.save_for_backward`` of a
custom Function) while the stack is not empty, the top pair's ``pack_hook(tensor)`` runs
and only its result is kept; in backward, ``unpack_hook(packed)`` gives the tensor back and
the core re-attaches the saved tensor's history (its grad_fn, or its leaf's gradient
accumulator), so higher-order gradients still flow. With no hooks pushed the core pays
one test of a C flag per saved tensor. As in PyTorch, a hooked saved tensor is not checked
for in-place changes (the hooks own what is kept).
"""

from __future__ import annotations

import abc
import contextlib
import threading
from typing import NamedTuple

from ember._C import _core
from ember._C._core import TensorBase

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "register_multi_grad_hook", "allow_mutation_on_saved_tensors", "Node", "GradientEdge",
           "get_gradient_edge", "increment_version", "region_activation_memory_budget",
           "set_warn_on_accumulate_grad_stream_mismatch", "set_override_stale_capture_stream"]


class Node(abc.ABC):
    """The abstract type of autograd graph nodes (``tensor.grad_fn``).

    Every node ember records (built-in ops, custom Functions, ``AccumulateGrad``) is an
    instance: ``isinstance(y.grad_fn, ember.autograd.graph.Node)`` is True.
    """

    @abc.abstractmethod
    def name(self) -> str:
        """The node's name, e.g. ``"MulBackward0"``."""

    @property
    @abc.abstractmethod
    def next_functions(self):
        """``((node, output_nr), ...)``: where this node's input gradients go."""

    @property
    @abc.abstractmethod
    def metadata(self) -> dict:
        """A dict kept with the node, for the user's own annotations."""

    @abc.abstractmethod
    def register_hook(self, fn):
        """Register ``fn(grad_inputs, grad_outputs)``, run after the node's backward; it
        may return new ``grad_inputs``. Returns a handle with ``remove()``."""

    @abc.abstractmethod
    def register_prehook(self, fn):
        """Register ``fn(grad_outputs)``, run before the node's backward; it may return
        new ``grad_outputs``. Returns a handle with ``remove()``."""

    @classmethod
    def __subclasshook__(cls, subclass):
        if cls is Node and isinstance(subclass, type) and issubclass(subclass, _core.Node):
            return True
        return NotImplemented


class GradientEdge(NamedTuple):
    """An edge of the graph: the gradient of output ``output_nr`` of ``node``.

    ``ember.autograd.grad(loss, get_gradient_edge(x))`` is ``ember.autograd.grad(loss, x)``.
    """

    node: Node
    output_nr: int
    ownership_token: Node | None = None


def _grad_fn_or_accumulator(t):
    if isinstance(t, GradientEdge):
        return t.node
    if t.grad_fn is not None:
        return t.grad_fn
    return _core.grad_accumulator(t)


def get_gradient_edge(tensor) -> GradientEdge:
    """The :class:`GradientEdge` where the gradient of ``tensor`` is computed.

    Args:
        tensor (Tensor): a tensor that requires grad.
    """
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    return GradientEdge(_grad_fn_or_accumulator(tensor), tensor.output_nr)


def increment_version(tensor) -> None:
    """Count an in-place change of ``tensor`` (or of each tensor of an iterable) that ember
    could not see (a kernel writing its memory directly), so that backward refuses stale
    saved values as it does for ember's own in-place ops."""
    if isinstance(tensor, TensorBase):
        tensor = (tensor,)
    for t in tensor:
        t._bump_version()


# ----------------------------------------------------------------------------
# saved tensors hooks

class saved_tensors_hooks:
    r"""Context manager setting how tensors saved for backward are packed and unpacked.

    Inside it, every tensor an op saves for backward goes through ``pack_hook(tensor)``
    and only the result is kept; backward calls ``unpack_hook(packed)``, which must return
    a tensor with the original's values (see NOTE [ Saved tensors hooks ]). The hooks
    apply where the tensor is saved (the forward), whatever runs the backward.

    Args:
        pack_hook (Callable): ``tensor -> object``, called once per saved tensor.
        unpack_hook (Callable): ``object -> Tensor``, called each time backward needs it.

    Examples::

        >>> def pack(x):
        ...     return x.numpy().copy()
        >>> def unpack(a):
        ...     return ember.from_numpy(a)
        >>> x = ember.ones(3, requires_grad=True)
        >>> with ember.autograd.graph.saved_tensors_hooks(pack, unpack):
        ...     y = (x * x).sum()
        >>> y.backward()
        >>> x.grad
        tensor([2., 2., 2.])
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _core._push_saved_tensors_default_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args):
        _core._pop_saved_tensors_default_hooks()


class save_on_cpu(saved_tensors_hooks):
    r"""Context manager keeping the tensors saved for backward in CPU memory, copied
    back to their device when backward needs them (GPU memory for CPU time and copies).

    Args:
        pin_memory (bool): PyTorch copies into page-locked memory, for asynchronous
            copies; ember copies into ordinary host memory whatever the value.
            Default: False.
        device_type (str): the accelerator's device type. Default: ``"cuda"``.
    """

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            return (tensor.device, tensor.cpu())

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    r"""Context manager under which saved tensors hooks may not be used: pushing hooks,
    or saving a tensor while hooks are set, raises ``RuntimeError(error_message)``.

    Args:
        error_message (str): the message of that error.
    """
    prev = _core._saved_tensors_hooks_get_disabled_error_message()
    try:
        _core._saved_tensors_hooks_disable(error_message)
        yield
    finally:
        if prev is None:
            _core._saved_tensors_hooks_enable()
        else:
            _core._saved_tensors_hooks_disable(prev)


# ----------------------------------------------------------------------------
# multi-tensor gradient hooks

class _MultiHandle:
    """A handle removing several hooks at once."""

    def __init__(self, handles):
        self.handles = tuple(handles)

    def remove(self):
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    r"""Register a hook on the gradients of several tensors at once.

    With ``mode="all"``, ``fn(grads)`` runs once per backward pass, after the gradients
    of all the ``tensors`` that this backward computes are known; ``grads`` holds one
    gradient per tensor (None for the ones it does not compute). With ``mode="any"``,
    ``fn(grad)`` runs once per backward pass, with the first of those gradients computed.

    Args:
        tensors (sequence of Tensor): tensors that require grad.
        fn (Callable): the hook; its result is ignored.
        mode (str): ``"all"`` (default) or ``"any"``.

    Returns:
        A handle whose ``remove()`` removes the hook.
    """
    supported = ("all", "any")
    if mode not in supported:
        raise ValueError(f"Expects mode to be one of {supported} but got {mode}")
    lock = threading.Lock()
    tensors = tuple(tensors)

    if mode == "all":
        count: dict = {}
        buffers: dict = {}
        nb_calls = None
        grad_fns = [_grad_fn_or_accumulator(t) for t in tensors]
        n = len(tensors)

        def inner_hook_for(idx):
            def inner_hook(grad):
                nonlocal nb_calls
                gid = _core._current_graph_task_id()
                buf = buffers.setdefault(gid, [None] * n)
                buf[idx] = grad
                with lock:
                    curr = count.get(gid, 0)
                    count[gid] = curr + 1
                    if curr == 0:
                        nb_calls = sum(bool(_core._will_engine_execute_node(g))
                                       for g in grad_fns)
                if curr == nb_calls - 1:
                    del count[gid]
                    del buffers[gid]
                    fn(buf)
            return inner_hook

        handles = [t.register_hook(inner_hook_for(i)) for i, t in enumerate(tensors)]
    else:
        ran: dict = {}

        def wrapped_fn(grad):
            gid = _core._current_graph_task_id()
            with lock:
                if ran.get(gid):
                    return
                ran[gid] = True
            fn(grad)

        handles = [t.register_hook(wrapped_fn) for t in tensors if t.requires_grad]
    return _MultiHandle(handles)


# ----------------------------------------------------------------------------
# allow_mutation_on_saved_tensors

class _Handle:
    __slots__ = ("__weakref__",)


class _AllowMutationOnSavedContext:
    """The state of one ``allow_mutation_on_saved_tensors`` block."""

    def __init__(self):
        self.original = {}      # handle -> the saved tensor
        self.cloned = {}        # handle -> its value before an in-place change
        self.by_counter = {}    # id(version counter) -> [handles] (views share one)

    def clear(self):
        self.original.clear()
        self.cloned.clear()
        self.by_counter.clear()

    # the dispatch listener: before an in-place op, keep a copy of what it overwrites
    def enter(self, name, inputs):
        if not inputs or not (name.endswith("_") or name in ("setitem", "__setitem__")):
            return None
        target = inputs[0]
        if isinstance(target, TensorBase) and target._vc is not None:
            for h in self.by_counter.get(id(target._vc), ()):
                if h not in self.cloned:
                    t = self.original[h]
                    self.cloned[h] = _core.make_tensor_from_array(t._data.copy())
        return None

    def exit(self, token):
        return None


class _CloneBeforeMutation(saved_tensors_hooks):
    def __init__(self, ctx):
        def pack_hook(tensor):
            h = _Handle()
            if tensor._vc is None:
                tensor._vc = _core.VersionCounter()
            ctx.original[h] = tensor
            ctx.by_counter.setdefault(id(tensor._vc), []).append(h)
            return h

        def unpack_hook(h):
            if h not in ctx.original:
                raise RuntimeError(
                    "Trying to backward outside of the 'allow_mutation_on_saved_tensors' "
                    "context in which the graph was originally recorded.")
            return ctx.cloned.get(h, ctx.original[h])

        super().__init__(pack_hook, unpack_hook)


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    r"""Context manager under which tensors saved for backward may be changed in place.

    A saved tensor that an in-place op is about to change is copied first, and backward
    uses the copy, so the gradients are those of the values at save time (outside this
    block, backward would refuse: "one of the variables needed for gradient computation
    has been modified by an inplace operation"). The forward and the backward must both
    run inside the block.

    Examples::

        >>> with ember.autograd.graph.allow_mutation_on_saved_tensors():
        ...     a = ember.ones(3, requires_grad=True)
        ...     b = a.clone()
        ...     out = (b ** 2).sum()
        ...     b.sin_()
        ...     out.sum().backward()
        >>> a.grad
        tensor([2., 2., 2.])
    """
    from ember import _dispatch

    ctx = _AllowMutationOnSavedContext()
    _dispatch.add_listener(ctx)
    try:
        with _CloneBeforeMutation(ctx):
            yield ctx
    finally:
        _dispatch.remove_listener(ctx)
        ctx.clear()


# ----------------------------------------------------------------------------
# settings of compiled and CUDA-graph backends

def region_activation_memory_budget(budget):
    r"""Set the activation memory budget of a region compiled with ``torch.compile``.

    ember has no compiler, so, as PyTorch does outside a compiled region, this checks
    ``budget`` (a float in [0, 1]) and raises ``RuntimeError``.
    """
    if isinstance(budget, bool) or not isinstance(budget, (int, float)):
        raise TypeError("torch.autograd.graph.region_activation_memory_budget: expects a float, "
                        f"got {type(budget).__name__}")
    if not 0.0 <= budget <= 1.0:
        raise ValueError("torch.autograd.graph.region_activation_memory_budget: must be in "
                         f"[0, 1], got {budget}")
    raise RuntimeError("torch.autograd.graph.region_activation_memory_budget can only be used "
                       "inside a torch.compile region; it has no effect in eager mode.")


_warn_on_stream_mismatch = False
_override_stale_capture_stream = False


def set_warn_on_accumulate_grad_stream_mismatch(enabled) -> None:
    """Whether to warn when a leaf's gradient arrives on another CUDA stream than the
    leaf's. ember's engine accumulates every gradient on the stream of the backward
    call, so there is never such a mismatch to warn about; the setting is kept."""
    global _warn_on_stream_mismatch
    _warn_on_stream_mismatch = bool(enabled)


def set_override_stale_capture_stream(enabled) -> None:
    """How autograd treats stale streams during CUDA graph capture. ember does not
    capture CUDA graphs, so no stream is ever stale; the setting is kept."""
    global _override_stale_capture_stream
    _override_stale_capture_stream = bool(enabled)

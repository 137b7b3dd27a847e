"""Custom autograd operations: ``ember.autograd.Function``.

A custom op is a subclass of :class:`Function` with two static methods: ``forward``
(on Tensors, run with grad disabled; it may leave ember for NumPy or SciPy through
``.numpy()``) and ``backward`` (one gradient per forward input). ``Function.apply``
runs it and records it in the graph.

NOTE [ A Function is recorded as a core Node ]
Every Function subclass gets, from :class:`FunctionMeta`, a Node subclass named
``<Name>Backward`` (:class:`BackwardCFunction`), which is the ``grad_fn`` of the
outputs and the ``ctx`` seen by ``backward``. ``apply`` runs the user's forward
itself, then links the node with the core's ``apply`` (the same path as built-in
ops), whose ``forward`` only hands back the arrays already computed (passed through
a thread-local slot, since the core creates the node). What the user set on the
forward's ctx is then moved onto the node. Saved tensors are kept as the core keeps
them: inputs by reference with their version, outputs as data and version counter
(rebuilt with the node as grad_fn on unpacking, so no reference cycle), and are
dropped by the engine after backward unless ``retain_graph=True``.
"""

from __future__ import annotations

import functools
import inspect
import re
import threading
import warnings

from ember._C import _core
from ember._C._core import Node, TensorBase
from ember.autograd.anomaly_mode import _forward_trace
from ember.autograd.grad_mode import no_grad

__all__ = ["FunctionCtx", "BackwardCFunction", "FunctionMeta", "Function", "once_differentiable",
           "InplaceFunction"]

_pending = threading.local()

# ctx attributes that describe the call; everything else the user sets is kept on the node
_CTX_FIELDS = frozenset({"to_save", "dirty_tensors", "non_differentiable", "materialize_grads",
                         "needs_input_grad", "saved_for_forward"})


class FunctionCtx:
    """The methods of ``ctx`` available in ``forward`` / ``setup_context``."""

    def save_for_backward(self, *tensors):
        """Save tensors (inputs, outputs or intermediates, or None) for ``backward``,
        where they come back as ``ctx.saved_tensors``, checked not to have been
        modified in place since."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, TensorBase):
                raise TypeError(
                    "save_for_backward can only save variables, but argument "
                    f"{i} is of type {type(t).__name__}")
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        """Kept for API compatibility; ember has no forward-mode AD."""
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        """Mark input tensors that ``forward`` modified in place (they must be returned)."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        """Mark outputs that never require grad (``backward`` still gets a gradient,
        zeros, for each of them)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool):
        """With ``True`` (the default) ``backward`` gets zeros instead of None for the
        gradients of outputs that were not used."""
        self.materialize_grads = bool(value)


def _strip_backward(name: str) -> str:
    return re.sub(r"Backward\d*$", "", name)


def _version_error(t, now, expected, which) -> RuntimeError:
    hint = (" Hint: the backtrace further above shows the operation that failed to compute its "
            "gradient. The variable in question was changed in there or anywhere later. Good "
            "luck!" if _core.is_anomaly_enabled() else
            " Hint: enable anomaly detection to find the operation that failed to compute its "
            "gradient, with ember.autograd.set_detect_anomaly(True, check_nan=False).")
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{t.type()} {list(t.shape)}]{which} is at version {now}; "
        f"expected version {expected} instead." + hint)


class _SavedInput:
    """An input or intermediate tensor saved for backward, with its version."""

    __slots__ = ("tensor", "version")

    def __init__(self, tensor):
        self.tensor = tensor
        self.version = tensor._version

    def unpack(self, node):
        t = self.tensor
        now = t._version
        if now != self.version:
            which = (f", which is output {t._output_nr} of {_strip_backward(t._grad_fn.name())},"
                     if t._grad_fn is not None else "")
            raise _version_error(t, now, self.version, which)
        return t


class _SavedOutput:
    """An output saved for backward: its data and version counter only."""

    __slots__ = ("data", "vc", "version", "output_nr", "differentiable")

    def __init__(self, tensor, output_nr):
        if tensor._vc is None:
            tensor._vc = _core.VersionCounter()
        self.data, self.vc, self.version = tensor._data, tensor._vc, tensor._vc.value
        self.output_nr = output_nr
        self.differentiable = tensor._grad_fn is not None

    def unpack(self, node):
        t = _core.make_tensor_from_array(self.data)
        t._vc = self.vc
        if self.vc.value != self.version:
            raise _version_error(t, self.vc.value, self.version,
                                 f", which is output {self.output_nr} of "
                                 f"{_strip_backward(node.name())},")
        if self.differentiable:
            t._grad_fn = node
            t._output_nr = self.output_nr
        return t


class _SavedHooked:
    """A tensor saved through saved-tensors hooks (NOTE [ Saved tensors hooks ])."""

    __slots__ = ("saved",)

    def __init__(self, saved):
        self.saved = saved

    def unpack(self, node):
        return self.saved._unpack(node)


_FREED = ("Trying to backward through the graph a second time (or directly access saved "
          "tensors after they have already been freed). Saved intermediate values of the graph "
          "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if "
          "you need to backward through the graph a second time or if you need to access saved "
          "tensors after calling backward.")


class BackwardCFunction(Node, FunctionCtx):
    """The graph node of a custom Function (``<Name>Backward``); also its ``ctx``.

    Internal: made by :class:`FunctionMeta` for each Function subclass.
    """

    _forward_cls = None

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<ember.autograd.function.{self.name()} object at {hex(id(self))}>"

    @property
    def saved_tensors(self):
        if self._saved is None:
            if self.__dict__.get("_had_saved") or self._released:
                raise RuntimeError(_FREED)
            return ()
        return tuple(None if s is None else s.unpack(self) for s in self._saved)

    # Called by the core's apply: the user's forward already ran in Function.apply.
    def forward(self, *args):
        _pending.node = self
        arrays = _pending.arrays
        _pending.arrays = None
        return arrays

    def _user_backward(self):
        cls = self._forward_cls
        has_backward = cls.backward is not Function.backward
        has_vjp = cls.vjp is not Function.vjp
        if has_backward and has_vjp:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is "
                               "not allowed. You should only implement one of them.")
        return cls.vjp if has_vjp else cls.backward

    def backward(self, *grads):
        full = [None] * self._n_outputs
        for k, pos in enumerate(self._out_positions):
            full[pos] = grads[k]
        res = self._user_backward()(self, *full)
        return self._check_grads(res)

    def _check_grads(self, res):
        """PyTorch's checks on what a custom backward returned; one grad per input."""
        if not isinstance(res, tuple):
            res = (res,)
        n = len(self._in_meta)
        if len(res) > n and all(r is None for r in res[n:]):
            res = res[:n]
        if len(res) != n:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                               f"gradients (expected {n}, got {len(res)})")
        out = []
        needs = self.needs_input_grad
        for i, (g, meta) in enumerate(zip(res, self._in_meta, strict=False)):
            if g is None:
                out.append(None)
                continue
            if meta is None:
                raise RuntimeError(
                    f"function {self.name()} returned a gradient different than None at "
                    f"position {i + 1}, but the corresponding forward input was not a Variable")
            if not isinstance(g, TensorBase):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            if not needs[i]:
                out.append(None)
                continue
            shape, dtype = meta
            if g._data.shape != shape:
                g = _sum_to_compatible(g, shape, self.name(), i)
            if g._data.dtype != dtype:
                g = g.to(dtype)
            out.append(g)
        return tuple(out)

    def _undefined_grad(self, i):
        # materialize_grads: an unused output's gradient is zeros
        shape, dtype, xp = self._out_meta[i]
        return _core.make_tensor_from_array(xp.zeros(shape, dtype=dtype))


def _sum_to_compatible(g, shape, name, i):
    import numpy as np

    try:
        ok = np.broadcast_shapes(shape, g._data.shape) == g._data.shape
    except ValueError:
        ok = False
    if not ok:
        raise RuntimeError(
            f"Function {name} returned an invalid gradient at index {i} - got "
            f"{list(g._data.shape)} but expected shape compatible with {list(shape)}")
    from ember._ops.reduction import sum_to

    return sum_to(g, shape)


class FunctionMeta(type):
    """Metaclass of Function: gives each subclass its node class, ``<Name>Backward``."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls, "__module__": __name__})
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=FunctionMeta):
    r"""Base class of custom autograd operations.

    Subclass it, implement the static methods :meth:`forward` and :meth:`backward`,
    and call the class's :meth:`apply`. ``forward`` gets Tensors and runs with grad
    disabled, so it may use any ember op or leave ember through ``.numpy()``;
    ``backward`` returns one gradient (or None) per input of ``forward``. Check the
    pair with :func:`ember.autograd.gradcheck`.

    Examples::

        >>> import numpy as np
        >>> class Exp(ember.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, i):
        ...         result = ember.from_numpy(np.exp(i.detach().numpy()))
        ...         ctx.save_for_backward(result)
        ...         return result
        ...
        ...     @staticmethod
        ...     def backward(ctx, grad_output):
        ...         result, = ctx.saved_tensors
        ...         return grad_output * result
        >>> x = ember.tensor([0.0, 1.0], requires_grad=True)
        >>> Exp.apply(x)
        tensor([1.0000, 2.7183], grad_fn=<ExpBackward>)
    """

    def __init__(self, *args, **kwargs):
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are "
            "all static, so you should invoke them on the class itself. Instantiating an "
            "autograd function will raise an error in a future version of ember.",
            DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method.")

    @staticmethod
    def forward(*args, **kwargs):
        r"""The forward computation: ``forward(ctx, *args, **kwargs)``, or
        ``forward(*args, **kwargs)`` together with :meth:`setup_context`."""
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        r"""Fill ``ctx`` from the inputs and output, for a ``forward`` without ctx."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        r"""The gradient formula: one gradient per output of ``forward`` in, one per
        input of ``forward`` out (None for non-tensor inputs or where
        ``ctx.needs_input_grad`` is False)."""
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD.")

    # vjp and backward are aliases of each other
    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("ember has no forward-mode AD: Function.jvp is never called.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run the op on ``args`` and, when an input requires grad, record it. The call
        passes the dispatch point as op ``cls.__name__`` (the profiler shows it)."""
        return _core.dispatch(cls.__name__, cls._ember_apply, *args, **kwargs)

    @classmethod
    def _ember_apply(cls, *args, **kwargs):
        uses_setup = cls.setup_context is not Function.setup_context
        if uses_setup:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        needs = tuple(isinstance(a, TensorBase) and a.requires_grad for a in args)
        recording = _core.is_grad_enabled() and any(needs)
        ctx = FunctionCtx()
        ctx.needs_input_grad = needs
        with no_grad():
            if uses_setup:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        result, node = _wrap_outputs(cls, ctx, args, output, recording)
        if node is not None and _core.is_anomaly_enabled():
            node._trace = _forward_trace()
        return result


def _index_of(obj, seq):
    for i, o in enumerate(seq):
        if o is obj:
            return i
    return -1


def _wrap_outputs(cls, ctx, args, output, recording):
    """Link the node of ``cls`` into the graph; return (outputs as the user sees them,
    node or None)."""
    is_tuple = isinstance(output, tuple)
    outs = output if is_tuple else (output,)
    state = ctx.__dict__
    dirty = state.get("dirty_tensors", ())
    non_diff = state.get("non_differentiable", ())
    for d in dirty:
        if _index_of(d, outs) < 0:
            raise RuntimeError(
                "Some elements marked as dirty during the forward method were not returned as "
                "output. The inputs that are modified inplace must all be outputs of the "
                "Function.")
        if _core.is_grad_enabled() and d._grad_fn is None and d._requires_grad:
            raise RuntimeError(
                "a leaf Variable that requires grad has been used in an in-place operation.")
        if _core.is_grad_enabled() and d._base is not None:
            _core.check_inplace(d)
    positions = [i for i, o in enumerate(outs) if isinstance(o, TensorBase)]
    dirty_view = None
    if recording and any(d._base is not None for d in dirty):
        # supported like the core's in-place ops: the view is the first input and the
        # only tensor output
        if not (len(dirty) == 1 and args and args[0] is dirty[0] and len(positions) == 1
                and dirty[0]._view_fn is not None):
            raise NotImplementedError(
                "ember supports mark_dirty on a view only when the view is the first input "
                "and the only tensor output of the Function")
        dirty_view = dirty[0]
    for d in dirty:
        d._bump_version()
    if not recording or not positions:
        return output, None

    _pending.arrays = tuple(outs[i]._data for i in positions)
    _pending.node = None
    wrapped = _core.apply_unannounced(cls._backward_cls, *args)
    node = _pending.node
    _pending.node = None

    results = list(outs)
    for k, pos in enumerate(positions):
        user_t, new = outs[pos], wrapped[k]
        if _index_of(user_t, dirty) >= 0:
            # an in-place op: the input itself takes the new history
            user_t._grad_fn = new._grad_fn
            user_t._output_nr = new._output_nr
            results[pos] = user_t
        else:
            if _index_of(user_t, non_diff) >= 0:
                new._grad_fn = None
                new._output_nr = 0
            results[pos] = new

    if dirty_view is not None:
        _rebase_view(dirty_view, node)

    # the ctx's state moves onto the node, which is the ctx of backward
    for key, value in state.items():
        if key not in _CTX_FIELDS:
            setattr(node, key, value)
    node.materialize_grads = state.get("materialize_grads", True)
    node._n_outputs = len(outs)
    node._out_positions = tuple(positions)
    node._out_meta = tuple((o._data.shape, o._data.dtype, _xp_of(o._data))
                           for o in (outs[p] for p in positions))
    node._in_meta = tuple((a._data.shape, a._data.dtype) if isinstance(a, TensorBase) else None
                          for a in args)
    to_save = state.get("to_save")
    if to_save is not None:
        saved = []
        for t in to_save:
            if t is None:
                saved.append(None)
                continue
            pos = _index_of(t, outs)
            if pos >= 0:
                out_t = results[pos]
                hooked = _core.save_for_backward_hooked(out_t, True)
                saved.append(_SavedOutput(out_t, positions.index(pos)) if hooked is None
                             else _SavedHooked(hooked))
            else:
                hooked = _core.save_for_backward_hooked(t, False)
                saved.append(_SavedInput(t) if hooked is None else _SavedHooked(hooked))
        node._saved = tuple(saved)
        node._had_saved = True
    return (tuple(results) if is_tuple else results[0]), node


def _rebase_view(view, node):
    """After an in-place Function on ``view``: its base takes a CopySlices history
    (as the core does for built-in in-place ops on views), and the view becomes the
    view of that new history."""
    from ember.autograd.grad_mode import enable_grad

    base = view._base
    cs = _core.CopySlices.__new__(_core.CopySlices)
    cs.view_fn = view._view_fn
    cs.op_node = node
    base_edge = base._grad_fn
    cs._next = (base_edge,) + node._next[1:]
    cs._next_nr = (base._output_nr if base_edge is not None else 0,) + node._next_nr[1:]
    cs.needs_input_grad = tuple(n is not None for n in cs._next)
    cs._num_outputs = 1
    base._grad_fn = cs
    base._output_nr = 0
    with enable_grad():
        shadow = _core.make_tensor_from_array(base._data)
        shadow._grad_fn = cs
        replayed = view._view_fn(shadow)
    view._grad_fn = replayed._grad_fn
    view._output_nr = replayed._output_nr


def _xp_of(array):
    from ember._ops._util import xp_of

    return xp_of(array)


class _DelayedError(Function):
    """Passes its inputs through; differentiating it raises (once_differentiable)."""

    @staticmethod
    def forward(ctx, *tensors):
        return tensors if len(tensors) != 1 else tensors[0]

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable")


_DelayedError._backward_cls.__name__ = "Error"   # PyTorch's name for this node


def once_differentiable(fn):
    """Decorate a Function's ``backward`` that cannot itself be differentiated: it
    runs with grad disabled, and a double backward through it raises an error."""

    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        with no_grad():
            outputs = fn(ctx, *args, **kwargs)
        if not _core.is_grad_enabled():
            return outputs
        if not any(isinstance(a, TensorBase) and a.requires_grad for a in args):
            return outputs
        outs = outputs if isinstance(outputs, tuple) else (outputs,)
        idx = [i for i, o in enumerate(outs) if isinstance(o, TensorBase)]
        fakes = [outs[i].detach().requires_grad_() for i in idx]
        errs = _DelayedError.apply(*fakes)
        errs = errs if isinstance(errs, tuple) else (errs,)
        res = list(outs)
        for i, e in zip(idx, errs, strict=False):
            res[i] = e
        return tuple(res) if isinstance(outputs, tuple) else res[0]

    return wrapper


class InplaceFunction(Function):
    """Kept for compatibility with old code; use :class:`Function`."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

"""``ember.compile``: PyTorch's ``torch.compile``.

The forward is captured by ember.fx (``ember._dynamo``: guards, recompiles, fallback to
eager) and its chains of elementwise ops are fused into C kernels compiled once and cached
on disk (``ember._inductor``); docs/compile.md says what is captured, what falls back and
how to look at the graphs and kernels.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["compile"]

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


def compile(model: Callable | None = None, *, fullgraph: bool = False,  # noqa: A001
            dynamic: bool | None = None, backend: str | Callable | None = None,
            mode: str | None = None, options: dict | None = None, name: str | None = None,
            disable: bool = False, recompile_limit: int | None = None,
            isolate_recompiles: bool = False, shapes_spec: Any = None):
    """Compile ``model`` (a module or a function): the returned callable computes what
    ``model`` computes, with its elementwise ops fused into generated C kernels.

    The first call for each new kind of input (dtype, device, requires_grad, shape, grad
    mode, the Python values of non-tensor arguments) traces the forward with ember.fx and
    compiles it; later calls with the same kind of input run the compiled graph. Forward
    and backward of the fused ops are compiled; everything else runs as eager ops.
    Where the forward cannot be captured (control flow on a tensor's value ...), calls run
    eagerly and the reason is kept (``EMBER_COMPILE_DEBUG=1`` prints it).

    Args:
        model (Callable): the module or function; omitted, ``compile`` returns a
            decorator (``@ember.compile(dynamic=True)``).
        fullgraph (bool): raise ``ember._dynamo.exc.Unsupported`` instead of running
            eagerly where the forward cannot be captured.
        dynamic (bool or None): ``False`` specialises on every shape (a new shape
            recompiles); ``True`` compiles kernels for any size of the same ranks; ``None``
            (default) specialises first and compiles for any size when a shape changes.
        backend (str or Callable): ``"inductor"`` (fused C kernels; None means it, as in
            PyTorch), ``"eager"`` or
            ``"aot_eager"`` (the captured graph, op by op), or ``backend(gm,
            example_inputs) -> callable``.
        mode (str): PyTorch's modes, accepted (ember has one way of compiling).
        options (dict): ``{"openmp": False}`` compiles kernels single-threaded,
            ``{"fuse": False}`` captures without fusing; PyTorch's common inductor
            options are accepted and unused.
        name (str): the name of the compiled function.
        disable (bool): return ``model`` itself.
        recompile_limit (int): guard sets per function before new inputs run eagerly
            (default ``ember._dynamo.config.recompile_limit``, 8).
        isolate_recompiles, shapes_spec: PyTorch's, accepted and unused.

    Returns:
        for a module, an ``OptimizedModule`` (its ``_orig_mod`` is ``model``; its
        ``state_dict`` keys are prefixed ``_orig_mod.``); for a function, a callable
        wrapping it.

    Example::

        >>> model = ember.compile(model)
        >>> loss = model(x).sum(); loss.backward()
    """
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    from ember._dynamo.backends import lookup_backend
    from ember._inductor import check_options

    check_options(options)
    backend = lookup_backend(backend)
    if recompile_limit is not None and (not isinstance(recompile_limit, int)
                                        or recompile_limit < 1):
        raise ValueError(f"compile(): recompile_limit must be a positive int, got "
                         f"{recompile_limit!r}")
    if model is None:
        def decorator(fn):
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                           mode=mode, options=options, name=name, disable=disable,
                           recompile_limit=recompile_limit)

        return decorator
    if not callable(model):
        raise RuntimeError(f"compile(): expected a callable, got {type(model).__name__}")
    if disable:
        return model
    from ember._dynamo.eval_frame import CompiledFunction
    from ember.nn import Module

    settings = dict(fullgraph=fullgraph, dynamic=dynamic, backend=backend, options=options,
                    recompile_limit=recompile_limit, name=name)
    if isinstance(model, _ModuleCall):
        # Module.compile(): the module's forward, called by its __call__ with the module's
        # hooks around it (so they are not traced), and eagerly its forward itself
        module = model.module
        return CompiledFunction(module.forward, module=module, eager=module.forward,
                                hooks_outside=True, **settings)
    if isinstance(model, Module):
        from ember._dynamo import eval_frame

        return eval_frame.OptimizedModule(model, CompiledFunction(model.forward, module=model,
                                                                  **settings))
    return CompiledFunction(model, **settings)


class _ModuleCall:
    """What ``Module.compile`` passes to :func:`compile`: the module's forward, run by its
    ``__call__`` (the compiled function replaces it there)."""

    def __init__(self, module):
        self.module = module

    def __call__(self, *args, **kwargs):
        return self.module.forward(*args, **kwargs)


def compile_module_call(module, *args, **kwargs):
    """``module.compile(*args, **kwargs)``: what ``module._compiled_call_impl`` becomes
    (``compile``'s arguments after ``model``; with ``disable=True``, a call of the module's
    forward)."""
    if args:
        raise TypeError(f"Module.compile() takes ember.compile's arguments by keyword, got "
                        f"{len(args)} positional")
    return compile(_ModuleCall(module), **kwargs)

"""Module backward hooks: identity ops around a module's inputs and outputs whose
graph nodes see the gradients of the outputs and of the inputs."""

from __future__ import annotations

from ember._C import _core
from ember.autograd.function import Function


class _Identity(Function):
    @staticmethod
    def forward(ctx, *args):
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


def _tensor_positions(values):
    return [i for i, v in enumerate(values)
            if isinstance(v, _core.TensorBase) and v.requires_grad]


def _wrap(values, positions):
    """``values`` with the tensors at ``positions`` replaced by identity outputs."""
    outs = _Identity.apply(*[values[i] for i in positions])
    if not isinstance(outs, tuple):
        outs = (outs,)
    values = list(values)
    for i, o in zip(positions, outs):
        values[i] = o
    return values, outs[0].grad_fn


class BackwardHook:
    """Runs a module's full backward pre-hooks and hooks for one forward call."""

    def __init__(self, module) -> None:
        self.module = module
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_node = None

    def setup_input_hook(self, args):
        positions = _tensor_positions(args)
        self.n_inputs = len(args)
        self.input_positions = positions
        if not positions:
            return args
        new_args, node = _wrap(args, positions)
        self.input_node = node
        node.register_hook(self._on_input_grads)
        return tuple(new_args)

    def setup_output_hook(self, result):
        single = not isinstance(result, tuple)
        outs = (result,) if single else result
        positions = _tensor_positions(outs)
        if not positions:
            return result
        new_outs, node = _wrap(outs, positions)
        self.output_positions = positions
        node.register_prehook(self._on_output_grads)
        return new_outs[0] if single else tuple(new_outs)

    def _hooks(self, global_name, own_name):
        """The global hooks of that kind (ember.nn.modules.module), then the module's own."""
        from ember.nn.modules import module as _module

        return [*getattr(_module, global_name).values(),
                *getattr(self.module, own_name).values()]

    def _on_output_grads(self, grad_outputs):
        grads = tuple(grad_outputs)
        for hook in self._hooks("_global_backward_pre_hooks", "_backward_pre_hooks"):
            r = hook(self.module, grads)
            if r is not None:
                grads = tuple(r) if isinstance(r, (tuple, list)) else (r,)
        self.grad_outputs = grads
        if self.input_node is None:
            # no input needs a gradient: the hooks see grad_input of Nones now
            for hook in self._hooks("_global_backward_hooks", "_backward_hooks"):
                hook(self.module, (None,) * max(self.n_inputs, 1), grads)
        return grads

    def _on_input_grads(self, grad_inputs, grad_outputs):
        # grad_inputs: one per tensor that required grad; report one per forward argument
        full = [None] * self.n_inputs
        for i, g in zip(self.input_positions, grad_inputs):
            full[i] = g
        full = tuple(full)
        for hook in self._hooks("_global_backward_hooks", "_backward_hooks"):
            r = hook(self.module, full, self.grad_outputs)
            if r is not None:
                full = tuple(r)
        return tuple(full[i] for i in self.input_positions)

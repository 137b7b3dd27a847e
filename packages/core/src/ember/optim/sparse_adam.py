"""SparseAdam: Adam for sparse gradients (``nn.Embedding(sparse=True)``).

ember has no sparse tensors: every gradient it produces is dense (``nn.Embedding`` refuses
``sparse=True``), so this optimizer builds, validates its arguments and keeps
``state_dict``s as PyTorch's does, and its ``step`` raises PyTorch's error for a dense
gradient — which is every gradient in ember. Use :class:`ember.optim.Adam`.
"""

from __future__ import annotations

from ember._tensor import Tensor
from ember.autograd.grad_mode import no_grad
from ember.optim.optimizer import Optimizer, _evaluate_closure

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    r"""Adam for sparse gradients, as PyTorch's ``SparseAdam``: the moments of only the
    entries present in a gradient are updated.

    ember has no sparse tensors, so every gradient is dense, and ``step`` raises
    PyTorch's RuntimeError for a dense gradient ("SparseAdam does not support dense
    gradients, please consider Adam instead"). The class is here so that code naming it
    imports and fails with PyTorch's message where PyTorch would.

    Args:
        params (iterable): parameters (or ``(name, parameter)`` pairs) to optimize, or
            dicts defining parameter groups
        lr (float, Tensor, optional): learning rate (default: 1e-3)
        betas (tuple[float, float], optional): coefficients of the running averages of the
            gradient and its square (default: (0.9, 0.999))
        eps (float, optional): term added to the denominator (default: 1e-8)
        maximize (bool, optional): maximize the objective (default: False)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize}
        super().__init__(params, defaults)
        complex_params = []
        for index, group in enumerate(self.param_groups):
            if not isinstance(group, dict):
                raise AssertionError(
                    f"param_groups must be a list of dicts, but got {type(group)}")
            complex_params.extend(
                [i if len(self.param_groups) == 1 else (index, i)
                 for i, p in enumerate(group["params"]) if p.is_complex()])
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does "
                             "not support complex parameters")

    @no_grad()
    def step(self, closure=None):
        """Perform a single optimization step: raises for any (dense) gradient.

        Args:
            closure (Callable, optional): a closure that reevaluates the model and
                returns the loss.
        """
        loss = _evaluate_closure(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    raise RuntimeError("SparseAdam does not support dense gradients, please "
                                       "consider Adam instead")
        return loss

"""``ember.func``: composable function transforms, as ``torch.func``.

``grad``, ``vjp``, ``jacrev`` and the forward-mode transforms (``jvp``, ``jacfwd``,
``hessian``, ``linearize``) are built on ember's autograd tape (NOTE [ Function transforms
on a tape ] in ``ember/func/_transforms.py``); ``vmap`` runs its batch entries in a loop.
``functional_call`` and ``stack_module_state`` turn modules into functions of their
parameters, for per-sample gradients and model ensembles.
"""

from ember.func._functional_call import (
    functional_call,
    replace_all_batch_norm_modules_,
    stack_module_state,
)
from ember.func._misc import debug_unwrap, functionalize, rearrange
from ember.func._transforms import (
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    vjp,
)
from ember.func._vmap import vmap

__all__ = ["grad", "grad_and_value", "vmap", "replace_all_batch_norm_modules_", "functionalize",
           "hessian", "jacfwd", "jacrev", "jvp", "linearize", "rearrange", "vjp",
           "functional_call", "stack_module_state", "debug_unwrap"]

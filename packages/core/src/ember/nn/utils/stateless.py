"""``ember.nn.utils.stateless``: calling a module with other parameters (the older home of
:func:`ember.func.functional_call`)."""

from __future__ import annotations

import warnings

from ember.func._functional_call import _call

__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    r"""Call ``module`` with its parameters and buffers replaced by
    ``parameters_and_buffers`` (a dict from names to tensors) for the call.

    Deprecated, as in PyTorch: use :func:`ember.func.functional_call`, which takes the
    same arguments (and also a sequence of dicts).

    Args:
        module (nn.Module): the module to call.
        parameters_and_buffers (dict): the tensors to use, by ``state_dict``-style name.
        args (Any or tuple): the positional arguments (a non-tuple is one argument).
        kwargs (dict): the keyword arguments.
        tie_weights (bool): tied names take the value given for any of them. Default: True.
        strict (bool): the names must be exactly the module's parameters and buffers.
            Default: False.
    """
    warnings.warn(
        "`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be "
        "removed in a future version of PyTorch. Please use `torch.func.functional_call` "
        "instead which is a drop-in replacement.", FutureWarning, stacklevel=2)
    return _call(module, parameters_and_buffers, args, kwargs, tie_weights, strict)

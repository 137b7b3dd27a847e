"""Running one module copy per device on that device's inputs (``parallel_apply``)."""

from __future__ import annotations

__all__ = ["parallel_apply"]


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """Call ``modules[i](*inputs[i], **kwargs_tup[i])`` for each i and return the outputs in
    order.

    The calls are issued one after another from the calling thread (PyTorch starts one
    thread per device): GPU work is queued asynchronously, so the devices still compute at
    the same time, and an error names the replica it came from.
    """
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number "
                             f"of inputs {len(inputs)}")
    if kwargs_tup is None:
        kwargs_tup = ({},) * len(modules)
    if len(modules) != len(kwargs_tup):
        raise AssertionError("The number of modules and keyword-argument dicts differ")
    outputs = []
    for i, (module, inp, kwargs) in enumerate(zip(modules, inputs, kwargs_tup)):
        if not isinstance(inp, (list, tuple)):
            inp = (inp,)
        try:
            outputs.append(module(*inp, **kwargs))
        except Exception as e:
            raise type(e)(f"Caught {type(e).__name__} in replica {i}: {e}") from e
    return outputs

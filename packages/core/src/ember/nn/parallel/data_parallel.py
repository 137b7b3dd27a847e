"""``DataParallel``: one process, the batch split over the GPUs there are."""

from __future__ import annotations

import warnings

from ember.nn.modules.module import Module
from ember.nn.parallel.parallel_apply import parallel_apply
from ember.nn.parallel.replicate import replicate
from ember.nn.parallel.scatter_gather import _device, scatter_kwargs
from ember.nn.parallel.scatter_gather import gather as _gather

__all__ = ["DataParallel", "data_parallel"]


def _index(d) -> int:
    dev = _device(d)
    return dev.index or 0


class DataParallel(Module):
    """Run ``module`` on several GPUs at once: each forward splits the batch along ``dim``
    over ``device_ids``, runs a copy of the module on each GPU, and gathers the outputs on
    ``output_device``; gradients reach ``module``'s parameters. Without a GPU it runs
    ``module`` itself, as PyTorch does.

    Args:
        module (Module): the module, on ``device_ids[0]``.
        device_ids (list of int or ember.device): the GPUs (all of them by default).
        output_device (int or ember.device): where the outputs go (``device_ids[0]``).
        dim (int): the batch dimension. Default: 0.

    Example::

        >>> model = nn.DataParallel(model.to("cuda:0"))
        >>> out = model(batch.to("cuda:0"))
    """

    def __init__(self, module, device_ids=None, output_device=None, dim: int = 0) -> None:
        super().__init__()
        from ember import cuda

        self.module = module
        self.dim = dim
        if not cuda.is_available():
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = list(range(cuda.device_count()))
        if output_device is None:
            output_device = device_ids[0]
        self.device_ids = [_index(d) for d in device_ids]
        self.output_device = _index(output_device)
        self.src_device_obj = _device(self.device_ids[0])
        if len(self.device_ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in list(self.module.parameters()) + list(self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError("module must have its parameters and buffers on device "
                                   f"{self.src_device_obj} (device_ids[0]) but found one of "
                                   f"them on device: {t.device}")
        inputs, kwargs = scatter_kwargs(inputs, kwargs, self.device_ids, self.dim)
        if not inputs and not kwargs:
            inputs, kwargs = ((),), ({},)
        if len(self.device_ids) == 1:
            return self.module(*inputs[0], **kwargs[0])
        replicas = replicate(self.module, self.device_ids[:len(inputs)])
        outputs = parallel_apply(replicas, inputs, kwargs, self.device_ids[:len(replicas)])
        return self.gather(outputs, self.output_device)

    def replicate(self, module, device_ids):
        return replicate(module, device_ids)

    def scatter(self, inputs, kwargs, device_ids):
        return scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def parallel_apply(self, replicas, inputs, kwargs):
        return parallel_apply(replicas, inputs, kwargs, self.device_ids[:len(replicas)])

    def gather(self, outputs, output_device):
        return _gather(outputs, output_device, dim=self.dim)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim: int = 0,
                  module_kwargs=None):
    """The function form of :class:`DataParallel`: run ``module`` on ``inputs`` split over
    ``device_ids`` and gather the outputs on ``output_device`` (without a GPU: the module's
    own forward)."""
    from ember import cuda

    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if not cuda.is_available():
        return module(*inputs, **(module_kwargs or {}))
    if device_ids is None:
        device_ids = list(range(cuda.device_count()))
    if output_device is None:
        output_device = device_ids[0]
    device_ids = [_index(d) for d in device_ids]
    inputs, kwargs = scatter_kwargs(inputs, module_kwargs, device_ids, dim)
    if not inputs and not kwargs:
        inputs, kwargs = ((),), ({},)
    if len(device_ids) == 1:
        return module(*inputs[0], **kwargs[0])
    used = device_ids[:len(inputs)]
    replicas = replicate(module, used)
    outputs = parallel_apply(replicas, inputs, kwargs, used)
    return _gather(outputs, _index(output_device), dim)


_ = warnings

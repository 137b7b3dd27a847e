"""Copies of a module on several devices that stay in its autograd graph (``replicate``)."""

from __future__ import annotations

import copy

__all__ = ["replicate"]


def replicate(network, devices, detach: bool = False):
    """Copies of ``network`` on each device of ``devices``. Each copy's parameters are
    ``param.to(device)`` of the original's (differentiable copies, not leaves, unless
    ``detach``), so a backward through a copy accumulates gradients into the original's
    parameters, as PyTorch's replicas do. Buffers are copied to each device.

    Returns:
        a list with one module per device.
    """
    from ember.nn.parallel.scatter_gather import _device

    devices = [_device(d) for d in devices]
    modules = list(network.modules())
    replicas = []
    for dev in devices:
        mapping = {}
        for m in modules:
            r = copy.copy(m)
            r.__dict__ = dict(m.__dict__)
            r.__dict__["_parameters"] = {}
            r.__dict__["_buffers"] = {}
            r.__dict__["_modules"] = {}
            mapping[id(m)] = r
        for m in modules:
            r = mapping[id(m)]
            for name, p in m._parameters.items():
                if p is None:
                    r._parameters[name] = None
                else:
                    c = p.detach().to(dev) if detach else p.to(dev)
                    if detach:
                        c.requires_grad_(p.requires_grad)
                    r._parameters[name] = c
            for name, b in m._buffers.items():
                r._buffers[name] = None if b is None else b.detach().to(dev)
            for name, child in m._modules.items():
                r._modules[name] = None if child is None else mapping[id(child)]
            r._is_replica = True
        replicas.append(mapping[id(network)])
    return replicas

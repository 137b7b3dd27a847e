"""``DistributedDataParallel``: data parallelism across processes on ``ember.distributed``.

Each process holds a replica of the module and trains on its own part of the batch; the
gradients are averaged across the processes during backward (the reducer in
``_reducer.py``, NOTE [ Buckets and overlap ]), so after ``optimizer.step()`` every replica
holds the same parameters. See docs/distributed.md.
"""

from __future__ import annotations

import dataclasses
import warnings
from contextlib import contextmanager

from ember.autograd.grad_mode import is_grad_enabled, no_grad
from ember.distributed.algorithms.join import Join, Joinable, JoinHook
from ember.nn.modules.module import Module
from ember.nn.parallel import _reducer

__all__ = ["DistributedDataParallel"]

_DEFAULT_BUCKET_CAP_MB = 25
_MB = 1024 * 1024


def _find_tensors(obj) -> list:
    """The tensors in a (nested) forward output."""
    from ember._C._core import TensorBase

    if isinstance(obj, TensorBase):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _find_tensors(o)]
    if isinstance(obj, dict):
        return [t for o in obj.values() for t in _find_tensors(o)]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return [t for f in dataclasses.fields(obj) for t in _find_tensors(getattr(obj, f.name))]
    return []


def _default_group():
    from ember import distributed as dist

    if not dist.is_available() or not dist.is_initialized():
        raise ValueError("Default process group has not been initialized, please make sure "
                         "to call init_process_group.")
    return dist.group.WORLD


class _DDPJoinHook(JoinHook):
    """What a joined rank does for DDP (NOTE [ Shadowing the collectives ... ] in
    ember.distributed.algorithms.join)."""

    def __init__(self, ddp, divide_by_initial_world_size: bool) -> None:
        self.ddp = ddp
        self.ddp._divide_by_initial_world_size = divide_by_initial_world_size

    def main_hook(self) -> None:
        from ember import distributed as dist
        from ember._ops.creation import zeros

        ddp = self.ddp
        reducer = ddp.reducer
        reducer.rebuild_buckets()
        if ddp.will_sync_module_buffers():
            src = ddp._find_common_rank(ddp._distributed_rank, False)
            ddp._sync_module_buffers(src)
        should_sync = ddp._check_global_requires_backward_grad_sync(is_joined_rank=True)
        ddp.require_forward_param_sync = should_sync
        if not should_sync:
            return
        works = []
        for bucket in reducer.zeros_like_buckets():
            if reducer.comm_hook is None:
                works.append(dist.all_reduce(bucket.buffer(), group=ddp.process_group,
                                             async_op=True))
            else:
                works.append(reducer.comm_hook(reducer.comm_hook_state, bucket))
        for w in works:
            w.wait()
        if reducer.find_unused_parameters or reducer.static_unused:
            from ember._dtype import int32

            dist.all_reduce(zeros(len(reducer.params), dtype=int32), group=ddp.process_group)
        reducer.num_iterations += 1

    def post_hook(self, is_last_joiner: bool) -> None:
        self.ddp._sync_final_model(is_last_joiner)


class DistributedDataParallel(Module, Joinable):
    r"""Data parallelism across processes: wrap the module of each process in it, and the
    gradients of its parameters are averaged across the processes during ``backward()``.

    At construction the parameters and buffers of rank 0 are broadcast to all ranks. In
    backward the gradients are gathered into buckets of about ``bucket_cap_mb`` MiB (the
    parameters in reverse order, as their gradients are produced); each bucket is
    all-reduced asynchronously as soon as its last gradient is ready, while backward goes
    on, and all of them are waited for when backward ends, so ``.grad`` holds the average
    over the ranks when ``backward()`` returns. Buffers (BatchNorm's running statistics)
    are broadcast from rank 0 before each forward.

    Args:
        module (Module): the module to replicate.
        device_ids (list of int, optional): for a module on one GPU, that GPU
            (``[local_rank]``); None for CPU modules.
        output_device (int, optional): where the outputs go (``device_ids[0]``).
        dim (int): the batch dimension. Default: 0.
        broadcast_buffers (bool, optional): broadcast the buffers from rank 0 at
            construction and before each forward (deprecated in PyTorch 2.13 for
            ``forward_sync_buffers``). Default: True.
        init_sync (bool): broadcast rank 0's state at construction. Default: True.
        process_group (ProcessGroup, optional): the processes to average over (the world).
        bucket_cap_mb (float, optional): the bucket size in MiB. Default: 25 (the first
            bucket 1 MiB).
        find_unused_parameters (bool): find, after each forward, the parameters that the
            outputs do not depend on, and count them as ready (zero gradient) so that the
            reduction can finish. Default: False (then an unused parameter makes the next
            forward raise).
        check_reduction (bool): deprecated, ignored.
        gradient_as_bucket_view (bool): make ``.grad`` views of the buckets (no copies).
            Default: False.
        static_graph (bool): the set of used parameters and their order are the same in
            every iteration: found once in the first. Default: False.
        forward_sync_buffers (bool, optional): broadcast the buffers before each forward.

    Example::

        >>> dist.init_process_group("gloo")
        >>> model = DistributedDataParallel(nn.Linear(10, 2))
        >>> loss = model(ember.randn(8, 10)).sum()
        >>> loss.backward()                     # .grad averaged over the ranks
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=None, init_sync=True, process_group=None,
                 bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None,
                 skip_all_reduce_unused_params=False, bucket_cap_mb_list=None,
                 batched_grad_copy=False, forward_sync_buffers=None):
        Module.__init__(self)
        Joinable.__init__(self)
        for name, value in (("delay_all_reduce_named_params", delay_all_reduce_named_params),
                            ("param_to_hook_all_reduce", param_to_hook_all_reduce),
                            ("mixed_precision", mixed_precision),
                            ("device_mesh", device_mesh),
                            ("bucket_cap_mb_list", bucket_cap_mb_list)):
            if value is not None:
                raise ValueError(f"ember's DistributedDataParallel does not support {name} "
                                 "(leave it None)")
        self.process_group = process_group if process_group is not None else _default_group()
        self.parameters_to_ignore = set(getattr(module, "_ddp_params_and_buffers_to_ignore",
                                                ()))
        self._module_parameters = [p for n, p in module.named_parameters()
                                   if n not in self.parameters_to_ignore]
        if not any(p.requires_grad for p in self._module_parameters):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        device_types = {p.device.type for p in self._module_parameters}
        if len(device_types) != 1:
            raise ValueError("DistributedDataParallel's input module must be on the same "
                             "type of devices, but input module parameters locate in "
                             f"{device_types}.")
        self.device_type = next(iter(device_types))
        if not device_ids or self.device_type == "cpu":
            if device_ids or output_device:
                devices = {p.device for p in self._module_parameters}
                raise ValueError(
                    "DistributedDataParallel device_ids and output_device arguments only "
                    "work with single-device/multiple-device GPU modules or CPU modules, but "
                    f"got device_ids {device_ids}, output_device {output_device}, and module "
                    f"parameters {devices}.")
            self.device_ids = None
            self.output_device = None
        else:
            from ember.nn.parallel.data_parallel import _index

            self.device_ids = [_index(d) for d in device_ids]
            self.output_device = _index(output_device if output_device is not None
                                        else device_ids[0])
        self.dim = dim
        self.module = module
        self.device = self._module_parameters[0].device
        if broadcast_buffers is not None:
            warnings.warn(
                "Both `broadcast_buffers` and `forward_sync_buffers` were specified. "
                "`broadcast_buffers` is deprecated and its value is ignored when "
                "`forward_sync_buffers` is provided." if forward_sync_buffers is not None else
                "`broadcast_buffers` is deprecated. Use `forward_sync_buffers` instead. "
                "IMPORTANT: unlike `broadcast_buffers=False`, `forward_sync_buffers=False` "
                "still syncs buffers at init. If you rely on buffers NOT being synced at "
                "init (e.g. rank-local buffers), keep using `broadcast_buffers=False` until "
                "`init_sync_buffers` is available.", FutureWarning, stacklevel=2)
        if forward_sync_buffers is not None:
            self.forward_sync_buffers = forward_sync_buffers
            init_sync_buffers = True
        else:
            self.forward_sync_buffers = broadcast_buffers if broadcast_buffers is not None \
                else True
            init_sync_buffers = self.forward_sync_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.skip_all_reduce_unused_params = skip_all_reduce_unused_params
        self.batched_grad_copy = batched_grad_copy
        self.mixed_precision = None
        if check_reduction:
            warnings.warn("The `check_reduction` argument in `DistributedDataParallel` module "
                          "is deprecated. Please avoid using it.", FutureWarning, stacklevel=2)
        from ember.nn.parameter import UninitializedParameter

        for p in self._module_parameters:
            if isinstance(p, UninitializedParameter):
                raise RuntimeError(
                    "Modules with uninitialized parameters can't be used with "
                    "`DistributedDataParallel`. Run a dummy forward pass to correctly "
                    "initialize the modules")
        self.broadcast_bucket_size = 250 * _MB
        cap_mb = bucket_cap_mb if bucket_cap_mb is not None else _DEFAULT_BUCKET_CAP_MB
        self.bucket_bytes_cap = int(cap_mb * _MB)
        self._first_bucket_bytes_cap = (_reducer.DEFAULT_FIRST_BUCKET_BYTES
                                        if bucket_cap_mb is None else self.bucket_bytes_cap)
        self.bucket_bytes_cap_default = bucket_cap_mb is None
        self._distributed_rank = self.process_group.rank()
        self._divide_by_initial_world_size = True
        parameters, names = self._build_params_for_reducer()
        if init_sync:
            self._verify_param_shape_across_processes(parameters)
            states = [p.detach() for n, p in module.named_parameters()
                      if n not in self.parameters_to_ignore]
            if init_sync_buffers:
                states += [b.detach() for n, b in module.named_buffers()
                           if n not in self.parameters_to_ignore]
            _reducer.broadcast_coalesced(self.process_group, states,
                                         self.broadcast_bucket_size, self._global_rank(0))
        buckets = _reducer.initial_bucket_indices(parameters, self.bucket_bytes_cap,
                                                  self._first_bucket_bytes_cap,
                                                  find_unused_parameters, static_graph)
        self.reducer = _reducer.Reducer(parameters, names, self.process_group, buckets,
                                        self.bucket_bytes_cap, self._first_bucket_bytes_cap,
                                        find_unused_parameters, gradient_as_bucket_view)
        self._comm_hooks: list = []
        self.static_graph = False
        if static_graph:
            self._set_static_graph()
        self._has_rebuilt_buckets = False

    # -- construction helpers ---------------------------------------------------------
    def _global_rank(self, group_rank: int) -> int:
        from ember import distributed as dist

        return dist.get_global_rank(self.process_group, group_rank)

    def _build_params_for_reducer(self):
        seen = set()
        params, names = [], []
        for mname, m in self.module.named_modules():
            for pname, p in m.named_parameters(recurse=False):
                fqn = f"{mname}.{pname}" if mname else pname
                if not p.requires_grad or fqn in self.parameters_to_ignore or id(p) in seen:
                    continue
                seen.add(id(p))
                params.append(p)
                names.append(fqn)
        self._assign_modules_buffers()
        return params, names

    def _assign_modules_buffers(self) -> None:
        named = [(n, b) for n, b in self.module.named_buffers()
                 if n not in self.parameters_to_ignore]
        self.modules_buffers = [b for _, b in named]
        self.named_module_buffers = dict(named)

    def _verify_param_shape_across_processes(self, params) -> None:
        from ember import distributed as dist
        from ember._dtype import int64
        from ember._ops.creation import tensor

        mine = tensor([len(params), sum(p.numel() for p in params)], dtype=int64)
        everyone = [tensor([0, 0], dtype=int64) for _ in range(self.process_group.size())]
        dist.all_gather(everyone, mine, group=self.process_group)
        me = self.process_group.rank()
        for r, t in enumerate(everyone):
            n, numel = (int(v) for v in t.tolist())
            if n != len(params):
                raise RuntimeError(
                    f"DDP expects same model across all ranks, but Rank {me} has "
                    f"{len(params)} params, while rank {r} has inconsistent {n} params.")
            if numel != int(mine[1]):
                raise RuntimeError(
                    f"DDP expects same model across all ranks, but rank {me} has parameters "
                    f"of {int(mine[1])} elements in all, while rank {r} has {numel}.")

    def _set_static_graph(self) -> None:
        """Mark the graph static (as ``static_graph=True`` does)."""
        if self.static_graph:
            warnings.warn("You've set static_graph to be True, no need to set it again.",
                          stacklevel=2)
            return
        self.static_graph = True
        self.reducer.static_graph = True

    # -- forward ----------------------------------------------------------------------
    @property
    def broadcast_buffers(self) -> bool:
        """Deprecated spelling of :attr:`forward_sync_buffers`."""
        return self.forward_sync_buffers

    @broadcast_buffers.setter
    def broadcast_buffers(self, value: bool) -> None:
        self.forward_sync_buffers = value

    def will_sync_module_buffers(self) -> bool:
        """True if the next forward broadcasts the buffers from rank 0."""
        return (self.require_forward_param_sync and self.forward_sync_buffers
                and len(self.modules_buffers) > 0)

    def _find_common_rank(self, input_rank: int, rank_cond: bool) -> int:
        from ember import distributed as dist
        from ember._dtype import int64
        from ember._ops.creation import tensor

        t = tensor([input_rank if rank_cond else -1], dtype=int64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX, group=self.process_group)
        if int(t) == -1:
            raise ValueError("BUG! Expected rank_cond to be true for at least one process. "
                             "This indicates a bug in PyTorch, please report an issue.")
        return int(t)

    def _sync_module_buffers(self, authoritative_rank: int) -> None:
        _reducer.broadcast_coalesced(self.process_group, list(self.modules_buffers),
                                     self.broadcast_bucket_size, authoritative_rank)

    def _sync_buffers(self) -> None:
        with no_grad():
            if self._join_config.enable:
                src = self._find_common_rank(self._distributed_rank, True)
            else:
                src = self._global_rank(0)
            self._assign_modules_buffers()
            self._sync_module_buffers(src)

    def _check_global_requires_backward_grad_sync(self, is_joined_rank: bool):
        from ember import distributed as dist
        from ember._ops.creation import ones, zeros

        sync = not is_joined_rank and self.require_backward_grad_sync
        t = ones(1, device=self.device) if sync else zeros(1, device=self.device)
        work = dist.all_reduce(t, group=self.process_group, async_op=True)
        if is_joined_rank:
            work.wait()
            return t.item() != 0
        work.wait()
        return None

    def _sync_final_model(self, is_last_joiner: bool) -> None:
        self._authoritative_rank = self._find_common_rank(self._distributed_rank,
                                                          is_last_joiner)
        states = [p.detach() for n, p in self.module.named_parameters()
                  if n not in self.parameters_to_ignore]
        if self.forward_sync_buffers:
            states += [b.detach() for n, b in self.module.named_buffers()
                       if n not in self.parameters_to_ignore]
        _reducer.broadcast_coalesced(self.process_group, states, self.broadcast_bucket_size,
                                     self._authoritative_rank)

    def _pre_forward(self, *inputs, **kwargs):
        grad_sync = is_grad_enabled() and self.require_backward_grad_sync
        if grad_sync:
            self.reducer.prepare_for_forward()
        work = Join.notify_join_context(self)
        self.reducer.div_factor = self.reducer.world_size
        if work is not None:
            work.wait()
            if not self._divide_by_initial_world_size:
                # average over the ranks still training (the notify all_reduce counts them)
                self.reducer.div_factor = int(work.result()[0].item())
        if is_grad_enabled() and self.reducer.rebuild_buckets():
            self._has_rebuilt_buckets = True
        if self.will_sync_module_buffers():
            self._sync_buffers()
        if self._join_config.enable:
            self._check_global_requires_backward_grad_sync(is_joined_rank=False)
        if self.device_ids:
            from ember.nn.parallel.scatter_gather import _device, scatter_kwargs

            dev = _device(self.device_ids[0])
            moved, moved_kwargs = scatter_kwargs(inputs, kwargs, [dev.index or 0], self.dim)
            return (moved[0] if moved else ()), (moved_kwargs[0] if moved_kwargs else {})
        return inputs, kwargs

    def _post_forward(self, output):
        if is_grad_enabled() and self.require_backward_grad_sync:
            self.require_forward_param_sync = True
            if self.find_unused_parameters and not self.static_graph:
                self.reducer.prepare_for_backward(_find_tensors(output))
            else:
                self.reducer.prepare_for_backward([])
        else:
            self.require_forward_param_sync = False
        return output

    def forward(self, *inputs, **kwargs):
        inputs, kwargs = self._pre_forward(*inputs, **kwargs)
        output = self.module(*inputs, **kwargs)
        return self._post_forward(output)

    def scatter(self, inputs, kwargs, device_ids):
        from ember.nn.parallel.scatter_gather import scatter_kwargs

        return scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def to_kwargs(self, inputs, kwargs, device_id):
        """``inputs`` and ``kwargs`` moved to GPU ``device_id`` (kept for PyTorch's API)."""
        from ember.nn.parallel.scatter_gather import scatter_kwargs

        return scatter_kwargs(inputs, kwargs, [device_id], self.dim)

    def gather(self, outputs, output_device):
        from ember.nn.parallel.scatter_gather import gather

        return gather(outputs, output_device, dim=self.dim)

    def train(self, mode: bool = True):
        super().train(mode)
        return self

    # -- gradient accumulation and hooks ---------------------------------------------
    @contextmanager
    def no_sync(self):
        r"""Context manager that turns gradient synchronization off: the gradients of the
        backward passes inside it accumulate locally in ``.grad``, and are averaged (their
        sum) by the first synchronized backward after it.

        Example::

            >>> with ddp.no_sync():
            ...     for x in micro_batches[:-1]:
            ...         ddp(x).sum().backward()     # no communication
            >>> ddp(micro_batches[-1]).sum().backward()  # all of them averaged

        The forward passes must run inside the context too.
        """
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def register_comm_hook(self, state, hook) -> None:
        r"""Replace the gradient all-reduce by ``hook(state, bucket) -> Future[Tensor]``:
        called with each :class:`~ember.distributed.GradBucket` once it is ready (its
        gradients *not* divided by the world size); the future's tensor (the bucket's size)
        becomes the bucket's gradients. Register it once, before the first backward.

        Args:
            state (object): handed to every call (the process group for the hooks of
                ``ember.distributed.algorithms.ddp_comm_hooks.default_hooks``).
            hook (callable): the hook.

        Example::

            >>> from ember.distributed.algorithms.ddp_comm_hooks import default_hooks
            >>> ddp.register_comm_hook(None, default_hooks.fp16_compress_hook)
        """
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        if self.reducer.comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be "
                               "called once.")
        if self.reducer.num_iterations > 0 or self.reducer.first_hook_seen:
            raise RuntimeError("register_comm_hook must be called before the first backward "
                               "pass.")
        self._comm_hooks.append((hook, state))
        self.reducer.comm_hook = hook
        self.reducer.comm_hook_state = state

    # -- Join ---------------------------------------------------------------------------
    def join(self, divide_by_initial_world_size: bool = True, enable: bool = True,
             throw_on_early_termination: bool = False):
        r"""Context manager for uneven inputs: a rank that runs out of batches first waits
        in it, answering the collectives of the ranks still training, so that nobody
        hangs (``Join([self], ...)``).

        Args:
            divide_by_initial_world_size (bool): average over the initial world size even
                when some ranks have joined (True), or over the ranks still training.
            enable (bool): False turns the detection off. Default: True.
            throw_on_early_termination (bool): raise on all ranks as soon as one runs out.

        Example::

            >>> with ddp.join():
            ...     for x in my_batches:          # a different number on each rank
            ...         ddp(x).sum().backward()
        """
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs):
        return _DDPJoinHook(self, kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self):
        return self.device

    @property
    def join_process_group(self):
        return self.process_group

    def __getstate__(self):
        raise RuntimeError("ember's DistributedDataParallel cannot be pickled: pickle its "
                           "module (ddp.module) or its state_dict instead")

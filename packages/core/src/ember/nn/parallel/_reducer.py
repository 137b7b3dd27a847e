"""DDP's reducer: gradients gathered into flat buckets and averaged across the ranks with
``all_reduce``, each bucket started from the autograd hooks as soon as its last gradient is
ready, all of them waited on at the end of backward.

# NOTE [ Buckets and overlap ]
# Every parameter that requires grad has a slot (a view) in one bucket, a flat tensor of one
# dtype and device. The post-accumulate-grad hook of a parameter copies its .grad, divided by
# the world size, into its slot; when the last slot of a bucket is filled the bucket is
# all-reduced (SUM) asynchronously, while the engine goes on computing the gradients of the
# earlier layers. Buckets are started strictly in index order on every rank (a bucket that is
# ready early waits for the ones before it), because collectives must be issued in the same
# order everywhere. The engine's final callback (queue_callback) waits for all of them and
# copies the averaged gradients back into .grad (or, with gradient_as_bucket_view, .grad *is*
# the slot). As in PyTorch, the first iteration runs with one bucket per dtype (the order in
# which gradients become ready is not known yet) unless find_unused_parameters is set; after
# it the buckets are rebuilt in the order the gradients became ready (rank 0's order,
# broadcast), the first one small (1 MiB) so that communication starts early.
"""

from __future__ import annotations

import sys

from ember.autograd.grad_mode import no_grad

__all__: list[str] = []

DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024


def compute_bucket_assignment_by_size(tensors: list, size_limits: list[int],
                                      tensor_indices: list[int] | None = None) -> list:
    """Group tensor indices into buckets of one dtype and device each, a bucket closed once
    it holds ``size_limits[k]`` bytes or more (the k-th bucket of its kind; the last limit
    repeats). Without ``tensor_indices`` (the order of ``tensors``) the buckets are sorted by
    their smallest index; with them (gradient-ready order) they stay in that order.
    """
    order = list(range(len(tensors))) if tensor_indices is None else list(tensor_indices)
    open_buckets: dict = {}      # key -> [indices, bytes, limit position]
    done: list[list[int]] = []
    for i in order:
        t = tensors[i]
        key = (t.dtype, str(t.device))
        b = open_buckets.setdefault(key, [[], 0, 0])
        b[0].append(i)
        b[1] += t.numel() * t.element_size()
        limit = size_limits[min(b[2], len(size_limits) - 1)]
        if b[1] >= limit:
            done.append(b[0])
            open_buckets[key] = [[], 0, b[2] + 1]
    done.extend(b[0] for b in open_buckets.values() if b[0])
    if tensor_indices is None:
        done.sort(key=min)
    return done


def broadcast_coalesced(group, tensors: list, bucket_bytes: int, src: int) -> None:
    """Broadcast ``tensors`` from global rank ``src``, packed into flat chunks of one dtype
    of at most ``bucket_bytes`` each (one collective per chunk)."""
    from ember import distributed as dist
    from ember._ops.join import cat

    if not tensors:
        return
    chunks = compute_bucket_assignment_by_size(tensors, [bucket_bytes])
    with no_grad():
        for idx in chunks:
            parts = [tensors[i] for i in idx]
            flat = cat([p.detach().reshape(-1) for p in parts])
            dist.broadcast(flat, src=src, group=group)
            if dist.get_rank(group) == dist.get_group_rank(group, src):
                continue
            offset = 0
            for p in parts:
                n = p.numel()
                p.copy_(flat[offset:offset + n].view(p.shape))
                offset += n


class _Bucket:
    """One flat gradient buffer and the views of its parameters' slots."""

    def __init__(self, index: int, param_indices: list[int], params: list) -> None:
        from ember._ops.creation import zeros

        self.index = index
        self.param_indices = list(param_indices)
        self.params = [params[i] for i in param_indices]
        first = self.params[0]
        total = sum(p.numel() for p in self.params)
        self.buffer = zeros(total, dtype=first.dtype, device=first.device)
        self.views = []
        offset = 0
        for p in self.params:
            n = p.numel()
            self.views.append(self.buffer[offset:offset + n].view(p.shape))
            offset += n
        self.pending = len(self.params)
        self.work = None      # the Work of the default all_reduce
        self.future = None    # the Future a comm hook returned

    def nbytes(self) -> int:
        return self.buffer.numel() * self.buffer.element_size()


_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by \n"
    "making sure all `forward` function outputs participate in calculating loss. \n"
    "If you already have done the above, then the distributed data parallel module wasn't "
    "able to locate the output tensors in the return value of your module's `forward` "
    "function. Please include the loss function and the structure of the return value of "
    "`forward` of your module when reporting this issue (e.g. list, dict, iterable).\n"
    "Parameter indices which did not receive grad for rank {rank}: {indices}")

_READY_TWICE = (
    "Expected to mark a variable ready only once. This error is caused by one of the "
    "following reasons: 1) Use of a module parameter outside the `forward` function. Please "
    "make sure model parameters are not shared across multiple concurrent forward-backward "
    "passes. or try to use _set_static_graph() as a workaround if this module graph does not "
    "change during training loop.2) Reused parameters in multiple reentrant backward passes. "
    "For example, if you use multiple `checkpoint` functions to wrap the same part of your "
    "model, it would result in the same set of parameters been used by different reentrant "
    "backward passes multiple times, and hence marking a variable ready multiple times. DDP "
    "does not support such use cases in default. You can try to use _set_static_graph() as a "
    "workaround if your module graph does not change over iterations.\n"
    "Parameter at index {index} with name {name} has been marked as ready twice. This means "
    "that multiple autograd engine  hooks have fired for this particular parameter during "
    "this iteration.")


def _find_accumulators(outputs: list) -> set:
    """The AccumulateGrad nodes reachable from the grad_fn of ``outputs``."""
    from ember._C._core import AccumulateGrad

    seen = set()
    found = set()
    stack = [t.grad_fn for t in outputs if t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if type(node) is AccumulateGrad:
            found.add(id(node))
            continue
        nexts = node._next
        if nexts:
            stack.extend(n for n in nexts if n is not None)
    return found


class Reducer:
    """The bucketed gradient all-reduce of one DDP module (PyTorch's ``Reducer``)."""

    def __init__(self, params: list, names: list[str], group, bucket_indices: list,
                 bucket_bytes_cap: int, first_bucket_bytes_cap: int,
                 find_unused_parameters: bool, gradient_as_bucket_view: bool) -> None:
        self.params = params
        self.names = names
        self.group = group
        self.world_size = group.size()
        self.div_factor = self.world_size   # Join may lower it to the ranks still training
        self.rank = group.rank()
        self.bucket_bytes_cap = bucket_bytes_cap
        self.first_bucket_bytes_cap = first_bucket_bytes_cap
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = False
        self.comm_hook = None
        self.comm_hook_state = None
        self.has_rebuilt_buckets = False
        self.num_iterations = 0
        self.rebuilt_order: list[int] = []
        self.static_unused: list[int] = []   # static graph: unused in the first iteration
        self._build_buckets(bucket_indices)
        self.handles = [p.register_post_accumulate_grad_hook(self._make_hook(i))
                        for i, p in enumerate(params)]
        # each parameter's AccumulateGrad node (made by registering the hook)
        self.accumulators = [p._accumulator for p in params]
        self.expect_hooks = False
        self.require_finalize = False
        self.unfinished_indices: list[int] | None = None
        self._reset_iteration()

    # -- buckets ---------------------------------------------------------------------
    def _build_buckets(self, bucket_indices: list) -> None:
        self.buckets = [_Bucket(k, idx, self.params) for k, idx in enumerate(bucket_indices)]
        self.locate = {}
        for b in self.buckets:
            for pos, i in enumerate(b.param_indices):
                self.locate[i] = (b, pos)
        if self.gradient_as_bucket_view:
            with no_grad():
                for b in self.buckets:
                    for p, view in zip(b.params, b.views):
                        if p.grad is not None:
                            view.copy_(p.grad)
                            p.grad = view

    def should_rebuild_buckets(self) -> bool:
        return ((self.static_graph or not self.find_unused_parameters)
                and not self.has_rebuilt_buckets and self.num_iterations >= 1)

    def rebuild_buckets(self) -> bool:
        """Once, after the first iteration: buckets in the order gradients became ready
        (rank 0's order, so that all ranks agree). Returns True if rebuilt."""
        if not self.should_rebuild_buckets():
            return False
        self.has_rebuilt_buckets = True
        from ember import distributed as dist
        from ember._dtype import int64
        from ember._ops.creation import tensor

        n = len(self.params)
        order = list(dict.fromkeys(self.rebuilt_order))
        order += [i for i in range(n) if i not in set(order)]
        t = tensor(order, dtype=int64)
        dist.broadcast(t, src=dist.get_global_rank(self.group, 0), group=self.group)
        order = [int(v) for v in t.tolist()]
        limits = [self.first_bucket_bytes_cap, self.bucket_bytes_cap]
        self._build_buckets(compute_bucket_assignment_by_size(self.params, limits, order))
        self._reset_iteration()
        return True

    # -- one iteration ---------------------------------------------------------------
    def _reset_iteration(self) -> None:
        self.ready = [False] * len(self.params)
        self.local_used = [False] * len(self.params)
        self.unused: list[int] = []
        self.next_bucket = 0
        self.first_hook_seen = False
        for b in self.buckets:
            b.pending = len(b.params)
            b.work = None
            b.future = None

    def prepare_for_forward(self) -> None:
        if self.require_finalize:
            indices = (self.unfinished_indices if self.unfinished_indices is not None
                       else [i for i, r in enumerate(self.ready) if not r])
            self.require_finalize = False
            self.expect_hooks = False
            raise RuntimeError(_UNFINISHED.format(rank=self.rank,
                                                  indices=" ".join(map(str, indices))))

    def prepare_for_backward(self, outputs: list) -> None:
        """Called after a forward that will be followed by a synchronized backward; finds
        the unused parameters from ``outputs`` when ``find_unused_parameters``."""
        self._reset_iteration()
        self.expect_hooks = True
        self.unfinished_indices = None
        if self.static_graph:
            self.unused = list(self.static_unused)
        elif self.find_unused_parameters:
            reached = _find_accumulators(outputs)
            self.unused = [i for i, acc in enumerate(self.accumulators)
                           if id(acc) not in reached]

    def _make_hook(self, index: int):
        def hook(param):
            self.autograd_hook(index)
        return hook

    def autograd_hook(self, index: int) -> None:
        if not self.expect_hooks:
            return      # no_sync, or a backward without a synchronized forward
        self.local_used[index] = True
        if not self.first_hook_seen:
            self.first_hook_seen = True
            from ember.autograd.variable import Variable

            Variable._execution_engine.queue_callback(self.finalize_backward)
            if not (self.static_graph and self.num_iterations == 0):
                for i in self.unused:
                    if i != index:
                        self.mark_variable_ready(i)
        self.mark_variable_ready(index)

    def mark_variable_ready(self, index: int) -> None:
        if self.ready[index]:
            raise RuntimeError(_READY_TWICE.format(index=index, name=self.names[index]))
        self.ready[index] = True
        # as PyTorch: from the first ready gradient on, the reduction must finish before
        # the next forward (a forward that no backward follows is no error)
        self.require_finalize = True
        if not self.has_rebuilt_buckets:
            self.rebuilt_order.append(index)
        bucket, pos = self.locate[index]
        param = self.params[index]
        view = bucket.views[pos]
        grad = param.grad
        with no_grad():
            if grad is None:
                view.zero_()
            elif self.gradient_as_bucket_view and grad is view:
                if self.comm_hook is None:
                    view.mul_(1.0 / self.div_factor)
            else:
                if grad.shape != view.shape:
                    raise RuntimeError(f"DDP: the gradient of parameter {self.names[index]} "
                                       f"has shape {tuple(grad.shape)}, expected "
                                       f"{tuple(view.shape)}")
                view.copy_(grad)
                if self.comm_hook is None:
                    view.mul_(1.0 / self.div_factor)
                if self.gradient_as_bucket_view:
                    param.grad = view
        bucket.pending -= 1
        if bucket.pending == 0 and not (self.static_graph and self.num_iterations == 0):
            self._launch_ready_buckets()
        self._poll()

    def _launch_ready_buckets(self) -> None:
        while (self.next_bucket < len(self.buckets)
               and self.buckets[self.next_bucket].pending == 0):
            self._launch(self.buckets[self.next_bucket])
            self.next_bucket += 1

    def _launch(self, bucket: _Bucket) -> None:
        from ember import distributed as dist

        if self.comm_hook is None:
            bucket.work = dist.all_reduce(bucket.buffer, group=self.group, async_op=True)
        else:
            from ember.distributed._grad_bucket import GradBucket

            grads = bucket.views
            gb = GradBucket(bucket.index, bucket.buffer, list(grads), list(bucket.params),
                            bucket.index == len(self.buckets) - 1)
            fut = self.comm_hook(self.comm_hook_state, gb)
            if not hasattr(fut, "wait"):
                raise RuntimeError("Communication hook: return annotation should be "
                                   "torch.futures.Future[torch.Tensor]: got "
                                   f"{type(fut).__name__}")
            bucket.future = fut

    def _poll(self) -> None:
        # MPI moves data while it is called: test the started buckets once each
        for b in self.buckets[:self.next_bucket]:
            if b.work is not None:
                b.work.is_completed()
            elif b.future is not None:
                b.future.done()

    def finalize_backward(self) -> None:
        """The engine's final callback: wait for every bucket, write the averaged
        gradients to ``.grad``."""
        self.expect_hooks = False
        first_static = self.static_graph and self.num_iterations == 0
        if first_static:
            # static graph, first iteration: what got no gradient is unused for good
            self.static_unused = [i for i, r in enumerate(self.ready) if not r]
            for i in self.static_unused:
                self.mark_variable_ready(i)
            self._launch_ready_buckets()
        if not all(self.ready):
            # a parameter got no gradient: PyTorch leaves the reduction unfinished and
            # raises at the next forward
            self.unfinished_indices = [i for i, r in enumerate(self.ready) if not r]
            return
        global_used = None
        if self.find_unused_parameters or self.static_unused:
            global_used = self._all_reduce_used()
        with no_grad():
            for b in self.buckets:
                result = self._bucket_result(b)
                for pos, (i, p) in enumerate(zip(b.param_indices, b.params)):
                    if global_used is not None and not global_used[i]:
                        continue    # unused on every rank: .grad untouched
                    view = result[pos]
                    if self.gradient_as_bucket_view:
                        if p.grad is not b.views[pos]:
                            if view is not b.views[pos]:
                                b.views[pos].copy_(view)
                            p.grad = b.views[pos]
                    elif p.grad is None:
                        p.grad = view.clone()
                    else:
                        p.grad.copy_(view)
        self.require_finalize = False
        self.num_iterations += 1

    def _bucket_result(self, b: _Bucket) -> list:
        if b.work is not None:
            b.work.wait()
            return b.views
        value = b.future.wait()
        if isinstance(value, (list, tuple)):
            if len(value) != 1:
                raise RuntimeError("Communication hook: the future must hold a single tensor "
                                   f"(got a list of {len(value)})")
            value = value[0]
        if value.numel() != b.buffer.numel():
            raise RuntimeError(f"Communication hook: the future's tensor has {value.numel()} "
                               f"elements, expected the bucket's {b.buffer.numel()}")
        if value is b.buffer:
            return b.views
        flat = value.reshape(-1).to(b.buffer.dtype)
        out, offset = [], 0
        for v in b.views:
            n = v.numel()
            out.append(flat[offset:offset + n].view(v.shape))
            offset += n
        return out

    def _all_reduce_used(self) -> list[bool]:
        from ember import distributed as dist
        from ember._dtype import int32
        from ember._ops.creation import tensor

        t = tensor([1 if u else 0 for u in self.local_used], dtype=int32)
        dist.all_reduce(t, group=self.group)
        return [v > 0 for v in t.tolist()]

    def zeros_like_buckets(self) -> list:
        """Zero gradient buckets in reduction order (Join: a joined rank's contribution)."""
        from ember._ops.creation import zeros_like
        from ember.distributed._grad_bucket import GradBucket

        out = []
        for b in self.buckets:
            buf = zeros_like(b.buffer)
            views, offset = [], 0
            for v in b.views:
                n = v.numel()
                views.append(buf[offset:offset + n].view(v.shape))
                offset += n
            out.append(GradBucket(b.index, buf, views, list(b.params),
                                  b.index == len(self.buckets) - 1))
        return out

    def remove_hooks(self) -> None:
        for h in self.handles:
            h.remove()
        self.handles = []


def initial_bucket_indices(params: list, bucket_bytes_cap: int, first_bucket_bytes_cap: int,
                           find_unused_parameters: bool, static_graph: bool) -> list:
    """The buckets of the first iteration, in reduction order (PyTorch's choice)."""
    if static_graph or not find_unused_parameters:
        limits = [sys.maxsize]
    elif first_bucket_bytes_cap < bucket_bytes_cap:
        limits = [first_bucket_bytes_cap, bucket_bytes_cap]
    else:
        limits = [bucket_bytes_cap]
    return list(reversed(compute_bucket_assignment_by_size(params, limits)))

# Included by _core.pyx (one compiled module): the backward engine: run_backward, hooks, gradient
# accumulation.

# ----------------------------------------------------------------------------
# the backward engine

cdef object accumulate(object acc, object g):
    """Sum two gradients (either may be None) without touching either input."""
    if acc is None:
        return g
    if g is None:
        return acc
    return acc + g


cdef object checked_hook_result(object hook, object grad, object r):
    """``r``, what ``hook`` returned for gradient ``grad``, checked as PyTorch does: a tensor
    of grad's dtype, device and shape (None keeps ``grad``)."""
    if r is None:
        return grad
    if not isinstance(r, TensorBase):
        raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")
    if grad is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    name = getattr(hook, "__name__", "<unknown>")
    if ((<TensorBase>r)._data.dtype != (<TensorBase>grad)._data.dtype
            or type((<TensorBase>r)._data) is not type((<TensorBase>grad)._data)):
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {grad.type()} "
                           f"got {r.type()})")
    if (<TensorBase>r)._data.shape != (<TensorBase>grad)._data.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    return r


cdef object run_tensor_hooks(Node node, int nr, object grad):
    cdef object hooks
    if node._pre_hooks is not None:
        hooks = node._pre_hooks.get(nr)
        if hooks:
            for h in list(hooks):
                grad = checked_hook_result(h, grad, h(grad))
    if node._retain is not None:
        ref = node._retain.get(nr)
        if ref is not None:
            t = ref()
            if t is not None and grad is not None:
                if (<TensorBase>t)._grad is None:
                    (<TensorBase>t)._grad = (grad.detach().clone() if not ember_grad_enabled
                                             else grad)
                else:
                    (<TensorBase>t)._grad = (<TensorBase>t)._grad + grad
    return grad


cdef void accumulate_into_leaf(AccumulateGrad acc, object grad, bint create_graph):
    cdef TensorBase leaf = acc._variable_ref()
    if leaf is None or grad is None:
        return
    if leaf._hooks:
        for h in list(leaf._hooks):
            grad = checked_hook_result(h, grad, h(grad))
    cdef TensorBase g = <TensorBase>grad
    if leaf._grad is None:
        if create_graph:
            leaf._grad = g
        else:
            # A fresh, detached copy: the incoming gradient may be shared with
            # another branch of the graph or be the caller's own tensor.
            leaf._grad = wrap(g._data.copy())
    elif create_graph or ember_grad_enabled:
        leaf._grad = leaf._grad + g
    else:
        existing = (<TensorBase>leaf._grad)
        if existing._data.shape == g._data.shape and existing._data.flags.writeable:
            existing._data += g._data
            bump_version(existing)
        else:
            leaf._grad = leaf._grad + g
    if acc._post_hooks:
        for h in list(acc._post_hooks):
            r = h(leaf)
            if r is not None:
                raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")


cdef object run_leaf_hooks(AccumulateGrad acc, object grad):
    """A captured leaf's gradient through its tensor hooks (``autograd.grad`` runs them
    too, as PyTorch does)."""
    cdef TensorBase leaf = acc._variable_ref()
    if leaf is None or grad is None or not leaf._hooks:
        return grad
    for h in list(leaf._hooks):
        grad = checked_hook_result(h, grad, h(grad))
    return grad


# The backward calls running in this thread, innermost last: [id, reachable nodes, nodes
# that lead to a requested input (or None), accumulates into .grad, has inputs, final
# callbacks].
cdef object _tasks_state = _threading.local()
cdef long long _task_counter = 0


cdef list task_stack():
    st = getattr(_tasks_state, "stack", None)
    if st is None:
        st = []
        _tasks_state.stack = st
    return st


def _queue_callback(callback):
    """Run ``callback()`` when the backward call running in this thread has finished
    computing its gradients, before it returns (``Variable._execution_engine.queue_callback``;
    DDP waits for its all-reduces there). A callback may queue further callbacks."""
    st = task_stack()
    if not st:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    st[-1][5].append(callback)


def _current_graph_task_id():
    """The id of the backward call running in this thread, or -1 outside backward."""
    st = task_stack()
    return st[-1][0] if st else -1


def _will_engine_execute_node(node):
    """Whether the running backward call reaches ``node`` and runs its hooks."""
    st = task_stack()
    if not st:
        raise RuntimeError("_will_engine_execute_node should only be called during the "
                           "backward pass")
    _, seen, needed, _, _, _ = st[-1]
    return node in seen and (needed is None or node in needed)


def _is_checkpoint_valid():
    """False inside a backward call given ``inputs`` (``autograd.grad`` or
    ``backward(inputs=...)``): a reentrant checkpoint cannot run its backward there."""
    st = task_stack()
    return not st or not st[-1][4]


cdef void check_nan(Node node, tuple grads):
    for i, g in enumerate(grads):
        if g is not None:
            xp_any = (<TensorBase>g)._data
            if (xp_any != xp_any).any():
                msg = f"Function '{node.name()}' returned nan values in its {i}th output."
                if node._trace is not None:
                    msg += ("\nTraceback of forward call that caused the error:\n"
                            + "".join(node._trace))
                raise RuntimeError(msg)


def run_backward(tuple roots, tuple root_grads, bint keep_graph, bint create_graph,
                 tuple inputs=None, bint allow_unused=False, bint accumulate_grad=True):
    """Backpropagate ``root_grads`` from ``roots`` through the graph.

    With ``accumulate_grad`` (``Tensor.backward``) leaves get their ``.grad``; with
    ``inputs`` and not ``accumulate_grad`` (``autograd.grad``) the gradients of
    ``inputs`` are returned instead and no ``.grad`` is touched.
    """
    cdef dict deps = {}
    cdef dict buffers = {}
    cdef list stack = []
    cdef list ready = []
    cdef Node node, nx
    cdef TensorBase t
    cdef Py_ssize_t i, k
    cdef object g
    cdef dict captures = None     # (node, nr) -> slot index in results
    cdef list results = None

    if inputs is not None:
        results = [None] * len(inputs)
        captures = {}
        for i in range(len(inputs)):
            if isinstance(inputs[i], tuple):   # a GradientEdge: (node, output_nr)
                captures.setdefault((inputs[i][0], inputs[i][1]), []).append(i)
                continue
            t = <TensorBase>inputs[i]
            if t._grad_fn is not None:
                key = (t._grad_fn, t._output_nr)
            elif t._requires_grad:
                key = (accumulator_of(t), 0)
            else:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            captures.setdefault(key, []).append(i)

    # Roots' nodes and their incoming gradients.
    root_nodes = []
    for i in range(len(roots)):
        t = <TensorBase>roots[i]
        nx = edge_node(t)
        if nx is None:
            raise RuntimeError(
                "element 0 of tensors does not require grad and does not have a grad_fn")
        g = root_grads[i]
        buf = buffers.get(nx)
        if buf is None:
            buf = [None] * max(nx._num_outputs, 1)
            buffers[nx] = buf
        buf[t._output_nr] = accumulate(buf[t._output_nr], g)
        root_nodes.append(nx)

    # Count, for every node reachable from the roots, the edges that lead into it.
    seen = set()
    for nx in root_nodes:
        if nx not in seen:
            seen.add(nx)
            stack.append(nx)
    while stack:
        node = stack.pop()
        if node._next is None:
            continue
        for nxt in node._next:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)

    # With inputs given, run only the nodes that lead to one of them.
    needed = None
    if captures is not None:
        needed = _nodes_leading_to(root_nodes, {key[0] for key in captures})

    seen_ready = set()
    for nx in root_nodes:
        if deps.get(nx, 0) == 0 and nx not in seen_ready:
            seen_ready.add(nx)
            ready.append(nx)

    global _task_counter
    _task_counter += 1
    cdef list tasks = task_stack()
    tasks.append([_task_counter, seen, needed, accumulate_grad, captures is not None, []])
    prev_mode = set_grad_enabled_flag(create_graph)
    cdef list grads
    cdef bint any_grad
    cdef tuple nexts, nrs
    # Backward formulas may meet singular points (0 * inf, x / 0): like PyTorch, they
    # produce inf/nan silently (anomaly mode is the tool that reports them).
    fp_token = PyContextVar_Set(_fp_state, _fp_quiet) if _fp_state is not None else None
    try:
        while ready:
            node = ready.pop()
            grads = buffers.pop(node)
            if captures is not None and node not in needed:
                continue  # nothing below this node leads to a requested input
            # tensor hooks and retain_grad of each output, then captures
            if node._pre_hooks is not None or node._retain is not None:
                for k in range(len(grads)):
                    grads[k] = run_tensor_hooks(node, k, grads[k])
            if captures is not None:
                if not accumulate_grad and type(node) is AccumulateGrad:
                    grads[0] = run_leaf_hooks(<AccumulateGrad>node, grads[0])
                for k in range(len(grads)):
                    slots = captures.get((node, k))
                    if slots is not None:
                        for s in slots:
                            results[s] = grads[k]
            if type(node) is AccumulateGrad:
                if accumulate_grad and (captures is None or inputs_accumulate(node, captures)):
                    accumulate_into_leaf(<AccumulateGrad>node, grads[0], create_graph)
                continue
            if captures is not None and not leads_to_needed(node, needed):
                continue  # a requested input whose own backward is not needed: not run, kept
            if node._node_pre_hooks:
                for h in list(node._node_pre_hooks):
                    r = h(tuple(grads))
                    if r is not None:
                        r = list(r)
                        if len(r) != len(grads):
                            raise RuntimeError(
                                f"hook '{getattr(h, '__name__', '<unknown>')}' has returned an "
                                f"incorrect number of values (got {len(r)}, but expected "
                                f"{len(grads)})")
                        for k in range(len(r)):
                            if r[k] is not None and grads[k] is not None:
                                checked_hook_result(h, grads[k], r[k])
                        grads = r
            any_grad = False
            for g in grads:
                if g is not None:
                    any_grad = True
                    break
            nexts = node._next
            if any_grad:
                if _listening:
                    token = _listener_backward(node.name())
                    try:
                        in_grads = node.call_backward(grads)
                    finally:
                        _listener.exit(token)
                else:
                    in_grads = None
                    if node._fast != FAST_NONE and not create_graph:
                        in_grads = compiled_backward(node, grads)
                    if in_grads is None:
                        in_grads = node.call_backward(grads)
            else:
                in_grads = (None,) * len(nexts)
            if node._hooks:
                for h in list(node._hooks):
                    r = h(in_grads, tuple(grads))
                    if r is not None:
                        in_grads = tuple(r)
            if ember_anomaly_mode and ember_anomaly_check_nan:
                check_nan(node, in_grads)
            if not keep_graph:
                release(node)
            nrs = node._next_nr
            for i in range(len(nexts)):
                nxt = nexts[i]
                if nxt is None:
                    continue
                g = in_grads[i]
                buf = buffers.get(nxt)
                if buf is None:
                    buf = [None] * max((<Node>nxt)._num_outputs, 1)
                    buffers[nxt] = buf
                if g is not None:
                    k = nrs[i]
                    buf[k] = accumulate(buf[k], g)
                c = <Py_ssize_t>deps[nxt] - 1
                deps[nxt] = c
                if c == 0:
                    ready.append(nxt)
        # the final callbacks (queue_callback), in order; they may queue more
        callbacks = tasks[-1][5]
        while callbacks:
            callbacks.pop(0)()
    finally:
        tasks.pop()
        set_grad_enabled_flag(prev_mode)
        if fp_token is not None:
            PyContextVar_Reset(_fp_state, fp_token)

    if results is not None:
        for i in range(len(results)):
            if results[i] is None and not allow_unused:
                raise RuntimeError(
                    "One of the differentiated Tensors appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior.")
        return tuple(results)
    return None


def backward_one(TensorBase t, object gradient, bint keep_graph):
    """``t.backward(gradient, retain_graph=keep_graph)`` without create_graph and inputs, the
    common call, checked as ``ember.autograd.backward`` checks it; False where that function
    must take the call (a gradient of another shape or type, a device array to make)."""
    cdef object data = t._data
    if not (t._requires_grad or t._grad_fn is not None):
        raise RuntimeError(
            "element 0 of tensors does not require grad and does not have a grad_fn")
    if gradient is None:
        if type(data) is not _ndarray or data.size != 1 or data.dtype.kind != "f":
            return False
        gradient = wrap(_np.ones_like(data))
    elif (not isinstance(gradient, TensorBase)
          or (<TensorBase>gradient)._data.shape != data.shape):
        return False
    run_backward((t,), (gradient,), keep_graph, False, None, False, True)
    return True


cdef bint leads_to_needed(Node node, set needed):
    if node._next is None:
        return False
    for nxt in node._next:
        if nxt is not None and nxt in needed:
            return True
    return False


cdef bint inputs_accumulate(Node node, dict captures):
    # Tensor.backward(inputs=...) accumulates only into the given leaves.
    return (node, 0) in captures


cdef inline void release(Node node):
    if node._saved is not None:
        node._saved = None
        node._released = True


cdef set _nodes_leading_to(list roots, set targets):
    """The nodes from which one of ``targets`` can be reached (targets included)."""
    cdef dict memo = {}
    cdef list stack
    cdef Node node
    # iterative post-order DFS
    for r in roots:
        if r in memo:
            continue
        stack = [(r, False)]
        while stack:
            node, done = stack.pop()
            if done:
                hit = node in targets
                if node._next is not None:
                    for nxt in node._next:
                        if nxt is not None and memo.get(nxt, False):
                            hit = True
                memo[node] = hit
                continue
            if node in memo:
                continue
            stack.append((node, True))
            if node._next is not None:
                for nxt in node._next:
                    if nxt is not None and nxt not in memo:
                        stack.append((nxt, False))
    return {n for n, hit in memo.items() if hit}

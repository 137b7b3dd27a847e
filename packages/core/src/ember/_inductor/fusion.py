"""Grouping a traced graph's elementwise ops and rewriting the graph around the groups.

NOTE [ Which nodes fuse ]
A node joins a group when the pointwise table matches it (pointwise.py), its result and
its tensor operands are float32 (or all float64) tensors, and each operand is either of
the node's shape or a block broadcast of it (codegen.py). It joins the group of one of its
operands' producers when that group computes the same shape and dtype and none of the
node's other operands depends on the group (that would be a cycle once the group is one
call: the group would need its own output as an input); otherwise it starts a group.
The rewritten graph calls each group once, at a place in topological order where all its
inputs exist, and every other node keeps its eager op; nodes that used a group's member
use the group's output.
"""

from __future__ import annotations

import heapq
import logging
import math
import operator

from ember._inductor import codecache
from ember._inductor.codegen import KernelSpec, Operand, Step, broadcast_block, generate_source
from ember._inductor.kernel import FusedKernel
from ember._inductor.pointwise import match, match_reduction

__all__ = ["fuse_graph", "run_node"]

log = logging.getLogger("ember.compile")

_FLOATS = ("float32", "float64")


def _meta(node):
    """``(shape, dtype name)`` of a node whose value is a tensor, else None."""
    m = node.meta.get("tensor_meta") if hasattr(node, "meta") else None
    if m is None or not hasattr(m, "dtype"):
        return None
    return tuple(m.shape), str(m.dtype).replace("ember.", "")


class _Group:
    def __init__(self, index, shape, dtype):
        self.index, self.shape, self.dtype = index, shape, dtype
        self.members: list = []
        self.matched: dict = {}
        self.mask = 0  # bits of the members' positions
        self.anc = 0  # bits of the members' ancestors (and the members)
        # (node, kind, keepdim, reduced member, how many trailing dims): a trailing sum/mean
        self.tail = None


def _partition(graph, root):
    """The groups (NOTE [ Which nodes fuse ])."""
    from ember.fx.node import Node

    nodes = list(graph.nodes)
    position = {n: i for i, n in enumerate(nodes)}
    ancestors: dict = {}
    group_of: dict = {}
    groups: list = []
    for n in nodes:
        anc = 1 << position[n]
        for u in n.all_input_nodes:
            anc |= ancestors[u]
        ancestors[n] = anc
        hit = match(n, root)
        meta = _meta(n)
        if hit is None and meta is not None and n.all_input_nodes:
            _take_reduction(n, meta, group_of, position, anc)
        if hit is None or meta is None or meta[1] not in _FLOATS:
            continue
        op, operands = hit
        shape, dtype = meta
        tensors = [o for o in operands if isinstance(o, Node)]
        metas = [_meta(o) for o in tensors]
        if not tensors or any(m is None or m[1] != dtype for m in metas):
            continue
        try:
            for m in metas:
                broadcast_block(m[0], shape)
        except ValueError:
            continue
        chosen = None
        for u in tensors:
            g = group_of.get(u)
            if g is None or g.shape != shape or g.dtype != dtype or g is chosen or g.tail:
                continue
            if all(group_of.get(v) is g or not (ancestors[v] & g.mask) for v in tensors):
                chosen = g
                break
        if chosen is None:
            chosen = _Group(len(groups), shape, dtype)
            groups.append(chosen)
        else:
            # operands from other groups of this domain that are independent of the chosen
            # one (no path either way): the groups merge
            for u in tensors:
                h = group_of.get(u)
                if h is None or h is chosen or h.shape != shape or h.dtype != dtype or h.tail:
                    continue
                if (h.anc & chosen.mask) or (chosen.anc & h.mask) or any(
                        group_of.get(v) not in (chosen, h) and ancestors[v] & h.mask
                        for v in tensors):
                    continue
                for m in h.members:
                    group_of[m] = chosen
                chosen.members += h.members
                chosen.matched.update(h.matched)
                chosen.mask |= h.mask
                chosen.anc |= h.anc
                groups.remove(h)
            chosen.members.sort(key=position.__getitem__)
        chosen.members.append(n)
        chosen.matched[n] = (op, operands)
        chosen.mask |= 1 << position[n]
        chosen.anc |= anc
        group_of[n] = chosen
    for i, g in enumerate(groups):
        g.index = i
    return groups, group_of


def _take_reduction(n, meta, group_of, position, anc) -> None:
    """Make ``n`` the tail of its input's group when it is a sum or mean over trailing
    dimensions of that group's domain (the last one, several, or all; the group then takes
    no more members: a member after the tail could need the tail's value inside the loop
    that computes it)."""
    u = n.all_input_nodes[0]
    g = group_of.get(u)
    if g is None or g.tail or not g.shape or meta[1] != g.dtype \
            or _meta(u) is None or _meta(u)[0] != g.shape:
        return
    hit = match_reduction(n, len(g.shape))
    if hit is None or hit[2] is not u or math.prod(g.shape[len(g.shape) - hit[3]:]) == 0:
        return
    g.tail = (n, hit[0], hit[1], u, hit[3])
    g.mask |= 1 << position[n]
    g.anc |= anc


def run_node(node, env, root):
    """Run one fx node eagerly on the values in ``env`` (fx node -> value)."""
    from ember.fx.node import map_arg

    args = map_arg(node.args, lambda a: env[a])
    kwargs = map_arg(node.kwargs, lambda a: env[a])
    if node.op == "call_function":
        return node.target(*args, **kwargs)
    if node.op == "call_method":
        self_obj, *rest = args
        return getattr(self_obj, node.target)(*rest, **kwargs)
    if node.op == "call_module":
        return root.get_submodule(node.target)(*args, **kwargs)
    raise RuntimeError(f"cannot replay node {node.name} ({node.op})")


def _kernel_for(group, root, dynamic, openmp):
    """The FusedKernel of a group, with its inputs (fx nodes) and outputs (members used
    outside it)."""
    from ember.fx.node import Node

    members = set(group.members)
    inputs: list = []
    steps = []
    step_of = {}
    for n in group.members:
        op, operands = group.matched[n]
        ops = []
        for o in operands:
            if isinstance(o, Node) and o in members:
                ops.append(Operand("t", step_of[o]))
            elif isinstance(o, Node):
                if o not in inputs:
                    inputs.append(o)
                ops.append(Operand("in", inputs.index(o)))
            else:
                ops.append(Operand("c", o))
        step_of[n] = len(steps)
        steps.append(Step(op, tuple(ops), n.name))
    tail = group.tail
    outside = members | ({tail[0]} if tail else set())
    outputs = [n for n in group.members if any(u not in outside for u in n.users)]
    if not outputs and tail is None:
        return None  # nothing outside uses the group: its ops are dead code
    shapes = [_meta(i)[0] for i in inputs]
    blocks = [broadcast_block(s, group.shape) for s in shapes]
    domain = group.shape
    reduction = None
    if tail is not None:
        kept = len(group.shape) - tail[4]
        k = math.prod(group.shape[kept:])  # the elements of one reduced row
        reduction = (step_of[tail[3]], 1.0 if tail[1] == "sum" else 1.0 / k, k)
    if dynamic and tail is None and any(s == group.shape for s in shapes):
        blocks = ["full" if s == group.shape else b for s, b in zip(shapes, blocks)]
        domain = None
    spec = KernelSpec(group.dtype, blocks, domain, steps, [step_of[n] for n in outputs],
                      openmp=openmp, reduction=reduction)
    reduced_shape = None
    if tail is not None:
        reduced_shape = group.shape[:kept] + ((1,) * tail[4] if tail[2] else ())
        outputs = outputs + [tail[0]]
    source = generate_source(spec)
    module, path = codecache.load_kernel(source, openmp)

    def replay(*tensors):
        env = dict(zip(inputs, tensors))
        for n in group.members + ([tail[0]] if tail else []):
            env[n] = run_node(n, env, root)
        out = tuple(env[n] for n in outputs)
        return out if len(out) > 1 else out[0]

    names = "_".join(dict.fromkeys([s.op.name for s in steps] + ([tail[1]] if tail else [])))
    name = f"fused_{names[:40]}_{group.index}"
    kernel = FusedKernel(name, spec, module, path, source, shapes, replay,
                         [n.name for n in group.members] + ([tail[0].name] if tail else []),
                         reduced_shape)
    return kernel, inputs, outputs


def _emit_order(graph, groups, group_of):
    """Units (a node, or a group with its kernel) in an order where each unit's inputs
    come first, close to the original order."""
    nodes = list(graph.nodes)
    position = {n: i for i, n in enumerate(nodes)}
    unit_of = {}
    units = []
    tails = {g.tail[0]: g for g in groups if g.tail}
    for n in nodes:
        g = group_of.get(n) or tails.get(n)
        if g is None:
            unit_of[n] = len(units)
            units.append(("node", n))
        elif g.members[0] is n:
            unit_of[n] = len(units)
            units.append(("group", g))
        else:
            unit_of[n] = unit_of[g.members[0]]
    deps = [set() for _ in units]
    users = [set() for _ in units]
    for n in nodes:
        u = unit_of[n]
        for i in n.all_input_nodes:
            v = unit_of[i]
            if v != u:
                deps[u].add(v)
                users[v].add(u)
    key = [position[n] if kind == "node" else
           position[n.tail[0] if n.tail else n.members[-1]] for kind, n in units]
    ready = [(key[u], u) for u in range(len(units)) if not deps[u]]
    heapq.heapify(ready)
    order = []
    while ready:
        _, u = heapq.heappop(ready)
        order.append(units[u])
        for w in users[u]:
            deps[w].discard(u)
            if not deps[w]:
                heapq.heappush(ready, (key[w], w))
    if len(order) != len(units):
        raise RuntimeError("ember.compile: fusion made a cycle (a bug)")
    return order


def fuse_graph(gm, *, dynamic=False, openmp=True, reasons=None):
    """A new Graph for ``gm`` (whose nodes carry ShapeProp's ``tensor_meta``) with each
    fused group one call of a :class:`FusedKernel`; returns (graph, kernels)."""
    from ember.fx.graph import Graph

    graph = gm.graph
    groups, group_of = _partition(graph, gm)
    built = {}
    for g in groups:
        try:
            built[g.index] = _kernel_for(g, gm, dynamic, openmp)
        except (codecache.CompileError, OSError, ImportError) as exc:
            # no compiler, a compiler that fails, a library that does not load
            built[g.index] = None
            if reasons is not None:
                reasons.append(f"group of {[n.name for n in g.members]} left eager: {exc}")
        if built[g.index] is None:
            for n in g.members:
                group_of.pop(n, None)
            g.tail = None
    groups = [g for g in groups if built[g.index] is not None]
    new = Graph()
    env: dict = {}
    kernels = []
    for kind, item in _emit_order(graph, groups, group_of):
        if kind == "node":
            env[item] = new.node_copy(item, lambda a: env[a])
            continue
        kernel, inputs, outputs = built[item.index]
        kernels.append(kernel)
        call = new.call_function(kernel, tuple(env[i] for i in inputs))
        if len(outputs) == 1:
            env[outputs[0]] = call
        else:
            for k, o in enumerate(outputs):
                env[o] = new.call_function(operator.getitem, (call, k))
        log.debug("ember.compile: %s fuses %s", kernel.name, kernel.ops)
    return new, kernels

"""Pattern rewriting (as ``torch.fx.subgraph_rewriter``): :func:`replace_pattern`.

A pattern is a function (traced) or a graph; every place the graph of a GraphModule computes
the same thing — the same ops on the same kinds of inputs, whatever those inputs are — is
replaced by the replacement's ops on the matched inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from ember.fx.graph import Graph, _fetch, _has_path
from ember.fx.graph_module import GraphModule, _assign_attr
from ember.fx.node import Node

__all__ = ["Match", "ReplacedPatterns", "replace_pattern", "replace_pattern_with_filters"]


class Match(NamedTuple):
    """One match: ``anchor`` is the graph node matching the pattern's output,
    ``nodes_map`` maps pattern nodes to graph nodes."""

    anchor: Node
    nodes_map: dict


class ReplacedPatterns(NamedTuple):
    """A match that was replaced, with the nodes that now stand in its place."""

    anchor: Node
    nodes_map: dict
    replacements: list


def _as_graph(p) -> Graph:
    if isinstance(p, GraphModule):
        return p.graph
    if isinstance(p, Graph):
        return p
    from ember.fx._symbolic_trace import symbolic_trace

    return symbolic_trace(p).graph


def _returning_nodes(g: Graph) -> list:
    out = next(n for n in reversed(g.nodes) if n.op == "output")
    ret = out.args[0]
    nodes = list(ret) if isinstance(ret, (tuple, list)) else [ret]
    if not all(isinstance(n, Node) for n in nodes):
        raise ValueError("a pattern must return graph values (Nodes), not constants")
    return nodes


class _Matcher:
    def __init__(self, pattern: Graph, gm: GraphModule, ignore_literals: bool) -> None:
        self.pattern = pattern
        self.gm = gm
        self.ignore_literals = ignore_literals
        self.placeholders = [n for n in pattern.nodes if n.op == "placeholder"]
        self.anchors = _returning_nodes(pattern)

    def _same_target(self, pn: Node, gn: Node) -> bool:
        if pn.op != gn.op:
            return False
        if pn.op == "call_module":
            pm = self.pattern.owning_module
            if pm is not None:
                return type(pm.get_submodule(pn.target)) is \
                    type(self.gm.get_submodule(gn.target))
            return pn.target == gn.target
        if pn.op == "get_attr":
            return True
        return pn.target == gn.target

    def _match_arg(self, pa, ga, m: dict) -> bool:
        if isinstance(pa, Node):
            return isinstance(ga, Node) and self._match_node(pa, ga, m)
        if isinstance(pa, (tuple, list)):
            return (isinstance(ga, (tuple, list)) and len(pa) == len(ga)
                    and all(self._match_arg(a, b, m) for a, b in zip(pa, ga)))
        if isinstance(pa, dict):
            return (isinstance(ga, dict) and pa.keys() == ga.keys()
                    and all(self._match_arg(pa[k], ga[k], m) for k in pa))
        if self.ignore_literals and not isinstance(ga, Node):
            return True
        return not isinstance(ga, Node) and type(pa) is type(ga) and pa == ga

    def _match_node(self, pn: Node, gn: Node, m: dict) -> bool:
        if pn in m:
            return m[pn] is gn
        if gn in m.values():
            return False
        if pn.op == "placeholder":
            m[pn] = gn
            return True
        if not self._same_target(pn, gn) or len(pn.args) != len(gn.args) \
                or pn.kwargs.keys() != gn.kwargs.keys():
            return False
        m[pn] = gn
        snapshot = dict(m)
        ok = all(self._match_arg(a, b, m) for a, b in zip(pn.args, gn.args)) and \
            all(self._match_arg(pn.kwargs[k], gn.kwargs[k], m) for k in pn.kwargs)
        if not ok:
            m.clear()
            m.update({k: v for k, v in snapshot.items() if k is not pn})
        return ok

    def _contained(self, m: dict) -> bool:
        # a matched intermediate value must not be used outside the match
        matched = {id(v) for k, v in m.items() if k.op != "placeholder"}
        anchors = {id(m[a]) for a in self.anchors}
        for pn, gn in m.items():
            if pn.op == "placeholder" or id(gn) in anchors:
                continue
            if any(id(u) not in matched for u in gn.users):
                return False
        return True

    def matches(self) -> list:
        found = []
        used: set = set()
        for gn in self.gm.graph.nodes:
            if gn.op in ("placeholder", "output") or id(gn) in used:
                continue
            m: dict = {}
            if not self._match_node(self.anchors[0], gn, m):
                continue
            if len(self.anchors) > 1 and not self._match_rest(1, m):
                continue
            if not self._contained(m):
                continue
            nodes = {id(v) for k, v in m.items() if k.op != "placeholder"}
            if nodes & used:
                continue
            used |= nodes
            found.append(Match(anchor=m[self.anchors[0]], nodes_map=dict(m)))
        return found

    def _match_rest(self, i: int, m: dict) -> bool:
        if i == len(self.anchors):
            return True
        for gn in self.gm.graph.nodes:
            if gn.op in ("placeholder", "output"):
                continue
            trial = dict(m)
            if self._match_node(self.anchors[i], gn, trial) and self._match_rest(i + 1, trial):
                m.clear()
                m.update(trial)
                return True
        return False


def replace_pattern(gm: GraphModule, pattern: Callable | Graph | GraphModule,
                    replacement: Callable | Graph | GraphModule) -> list:
    """Replace every non-overlapping match of ``pattern`` in ``gm.graph`` by
    ``replacement`` (both functions of the same inputs), and recompile ``gm``.

    Args:
        gm: the GraphModule to rewrite in place.
        pattern: a function, Graph or GraphModule: the subgraph to find. Its inputs
            match any value; its ops must match op for op (same functions, methods,
            module types and constant arguments).
        replacement: what to put in its place, taking the same inputs in order.

    Returns:
        List[Match]: the matches replaced (pattern node -> original node maps).

    Examples::

        >>> def pattern(x, w):
        ...     return ember.relu(ember.matmul(x, w))
        >>> def replacement(x, w):
        ...     return ember.nn.functional.gelu(ember.matmul(x, w))
        >>> matches = replace_pattern(gm, pattern, replacement)  # doctest: +SKIP
    """
    done = _replace(gm, pattern, replacement, None, False)
    return [Match(anchor=r.anchor, nodes_map=r.nodes_map) for r in done]


def replace_pattern_with_filters(gm: GraphModule, pattern, replacement=None,
                                 match_filters: list | None = None,
                                 ignore_literals: bool = False) -> list:
    """As :func:`replace_pattern`, keeping only the matches every ``match_filters``
    callable accepts (``filter(match, original_graph, pattern_graph) -> bool``);
    ``ignore_literals`` lets constant arguments of the pattern match any constant.

    Returns:
        List[ReplacedPatterns]: each match with the nodes that replaced it.
    """
    if replacement is None:
        raise ValueError("replace_pattern_with_filters needs a replacement")
    return _replace(gm, pattern, replacement, match_filters, ignore_literals)


def _replace(gm, pattern, replacement, match_filters, ignore_literals) -> list:
    if not isinstance(gm, GraphModule):
        raise TypeError(f"replace_pattern: gm must be a GraphModule, got {type(gm).__name__}")
    pattern_graph = _as_graph(pattern)
    replacement_graph = _as_graph(replacement)
    graph = gm.graph
    matcher = _Matcher(pattern_graph, gm, ignore_literals)
    matches = matcher.matches()
    if match_filters:
        matches = [m for m in matches
                   if all(f(m, graph, pattern_graph) for f in match_filters)]
    repl_placeholders = [n for n in replacement_graph.nodes if n.op == "placeholder"]
    if len(repl_placeholders) != len(matcher.placeholders):
        raise ValueError(f"the replacement takes {len(repl_placeholders)} inputs but the "
                         f"pattern {len(matcher.placeholders)}")
    repl_module = replacement if isinstance(replacement, GraphModule) else \
        replacement_graph.owning_module
    order = {n: i for i, n in enumerate(graph.nodes)}
    done = []
    replaced: dict = {}  # an anchor replaced by an earlier match -> what replaced it

    def resolve(n):
        while n in replaced:
            n = replaced[n]
        return n

    for match in matches:
        m = match.nodes_map
        anchors = [m[a] for a in matcher.anchors]
        val_map = {rp: resolve(m[pp])
                   for rp, pp in zip(repl_placeholders, matcher.placeholders)}
        last = max(anchors, key=lambda n: order[n])
        new_nodes = []
        with graph.inserting_before(last):
            for rn in replacement_graph.nodes:
                if rn.op == "placeholder":
                    continue
                if rn.op == "output":
                    out = rn.args[0]
                    outs = list(out) if isinstance(out, (tuple, list)) else [out]
                    outs = [val_map[o] if isinstance(o, Node) else o for o in outs]
                    break
                if rn.op in ("get_attr", "call_module") and repl_module is not None:
                    _copy_target(repl_module, gm, rn.target)
                val_map[rn] = graph.node_copy(rn, val_map.__getitem__)
                new_nodes.append(val_map[rn])
        if len(outs) != len(anchors):
            raise ValueError(f"the replacement returns {len(outs)} values but the pattern "
                             f"{len(anchors)}")
        for a, new in zip(anchors, outs):
            if isinstance(new, Node):
                a.replace_all_uses_with(new)
                replaced[a] = new
        matched = [gn for pn, gn in m.items() if pn.op != "placeholder"]
        for gn in sorted(matched, key=lambda n: -order[n]):
            if not gn.users:
                graph.erase_node(gn)
        done.append(ReplacedPatterns(anchor=match.anchor, nodes_map=m,
                                     replacements=new_nodes))
    gm.recompile()
    return done


def _copy_target(src, gm: GraphModule, target: str) -> None:
    # the replacement's own parameters/submodules go into gm unless it has them
    if not _has_path(gm, target):
        _assign_attr(_fetch(src, target), gm, target)

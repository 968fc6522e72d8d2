"""Partitioners: split the joint graph into a forward graph and a backward graph.

The joint graph maps ``(primals, tangents)`` to ``(forward outputs, gradients)``. A partition
chooses the *saved values*: nodes computed in the forward that the backward reads (extra outputs
of the forward graph, inputs of the backward graph). Whatever else the backward needs it
recomputes from those.

- ``default_partition`` saves every forward value the backward reads (PyTorch's default).
- ``min_cut_rematerialization_partition`` chooses the set of saved values with the fewest bytes
  such that the backward can recompute the rest, as a minimum cut in a flow graph (networkx's
  ``minimum_cut``, as PyTorch does): each node is an edge ``in -> out`` whose capacity is its
  size in bytes; primals hang from the source, nodes that need the tangents from the sink.
  Ops that are expensive or random (matmul, convolution, anything not pointwise, a view or a
  cheap reduction) are tied to the source, so they are never recomputed, only saved.
  The cut it finds is kept in ``<cache_dir>/partition/`` (keyed by the joint graph's code and
  its values' sizes), so a warm process neither imports networkx (a quarter second) nor cuts.
"""

import hashlib
import json
import math
import operator
from pathlib import Path

from ...backends.cpu import native
from ...core.tensor_impl import TensorImpl
from ..fx import Graph, GraphModule
from ..fx.node import Node, map_arg
from .functionalize import seeded_random

# Reductions cheap enough to recompute in the backward (besides pointwise ops and views).
_RECOMPUTABLE_NAMES = {"sum.dim_IntList", "sum", "mean.dim", "amax", "amin", "_to_copy",
                       "clone", "expand", "full", "empty.memory_format", "arange.start_step",
                       "scalar_tensor", "where.self", "detach"}


def _is_tangent(node) -> bool:
    return node.op == "placeholder" and node.name.startswith("tangents")


def _split_outputs(joint_module, num_fwd_outputs):
    outputs = joint_module.graph.output_node().args[0]
    return list(outputs[:num_fwd_outputs]), list(outputs[num_fwd_outputs:])


def _ancestors(roots, stop=()) -> set:
    """Every node the ``roots`` read, transitively, not looking through ``stop`` nodes."""
    seen, stack = set(), [r for r in roots if isinstance(r, Node)]
    stop = set(stop)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if node not in stop:
            stack.extend(node.all_input_nodes)
    return seen


def _descendants(roots) -> set:
    seen, stack = set(), list(roots)
    while stack:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            stack.extend(node.users)
    return seen


def _extract_graph(joint_module, inputs, outputs, name) -> GraphModule:
    """A new graph computing ``outputs`` from the ``inputs`` nodes of the joint graph."""
    graph, env = Graph(), {}
    for node in inputs:
        env[node] = graph.placeholder(node.name)
        env[node].meta = dict(node.meta)
    needed = _ancestors(outputs, stop=inputs)
    for node in joint_module.graph.nodes:
        if node not in needed or node in env or node.op == "output":
            continue
        if node.op == "placeholder":
            raise RuntimeError(f"partition: the {name} graph needs input {node.name}, which it "
                               f"was not given")
        env[node] = graph.node_copy(node, lambda n: env[n])
    graph.output(map_arg(tuple(outputs), lambda n: env[n]))
    graph.lint()
    return GraphModule(joint_module, graph, name)


def _forward_nodes(joint_module, fwd_outputs):
    primals = [n for n in joint_module.graph.nodes if n.op == "placeholder"
               and not _is_tangent(n)]
    nodes = _ancestors(fwd_outputs) | set(primals)
    for node in list(nodes):   # a multi-output node's items live where it does
        if isinstance(node.meta.get("val"), (tuple, list)):
            nodes.update(u for u in node.users if u.target is operator.getitem)
    return primals, nodes


def _finish(joint_module, primals, fwd_outputs, bwd_outputs, saved):
    tangents = [n for n in joint_module.graph.nodes if _is_tangent(n)]
    fw = _extract_graph(joint_module, primals, fwd_outputs + saved, "GraphModule")
    bw = _extract_graph(joint_module, saved + tangents, bwd_outputs, "GraphModule")
    return fw, bw


def default_partition(joint_module, _joint_inputs, *, num_fwd_outputs):
    """Save every value of the forward that the backward reads."""
    fwd_outputs, bwd_outputs = _split_outputs(joint_module, num_fwd_outputs)
    primals, fwd_nodes = _forward_nodes(joint_module, fwd_outputs)
    bwd_nodes = _ancestors(bwd_outputs, stop=fwd_nodes)
    saved = []
    for node in joint_module.graph.nodes:
        if node not in fwd_nodes or node.op == "get_attr" \
                or isinstance(node.meta.get("val"), (tuple, list)):
            continue
        if node in bwd_outputs or any(u in bwd_nodes and u not in fwd_nodes
                                      for u in node.users):
            saved.append(node)
    return _finish(joint_module, primals, fwd_outputs, bwd_outputs, saved)


def is_recomputable(node) -> bool:
    """May the backward recompute this node instead of saving it?"""
    if node.op in ("placeholder", "get_attr"):
        return node.op == "get_attr"
    target = node.target
    if target is operator.getitem:
        return True
    if target is seeded_random or not hasattr(target, "schema"):
        return False   # random (recomputing would need the same stream: save the result)
    if any(a.name == "generator" for a in target.schema.arguments):
        return False   # random: recomputing would need the same stream; save the result
    return "pointwise" in target.tags or target.is_view or target.name in _RECOMPUTABLE_NAMES


def _node_bytes(node) -> float:
    val = node.meta.get("val")
    if isinstance(val, TensorImpl):
        return val.numel() * val.dtype.itemsize
    if node.op == "placeholder" or isinstance(val, (int, float, bool)):
        return 8
    return math.inf   # a tuple, a generator: not something to save


def min_cut_rematerialization_partition(joint_module, _joint_inputs, *, num_fwd_outputs,
                                        compiler="inductor"):
    """Save the fewest bytes for backward, recomputing cheap ops there (see module docs)."""
    fwd_outputs, bwd_outputs = _split_outputs(joint_module, num_fwd_outputs)
    primals, fwd_nodes = _forward_nodes(joint_module, fwd_outputs)
    key = _cut_key(joint_module, num_fwd_outputs)
    saved_names = _load_cut(key)
    if saved_names is None:
        saved_names = _min_cut(joint_module, bwd_outputs, fwd_nodes, _descendants(primals))
        _store_cut(key, saved_names)
    saved = [n for n in joint_module.graph.nodes if n.name in saved_names]
    return _finish(joint_module, primals, fwd_outputs, bwd_outputs, saved)


def _is_view(node) -> bool:
    return node.op == "call_function" and getattr(node.target, "is_view", False)


def _materialized_in_backward(node, required_forward) -> bool:
    """Whether a backward op that fuses nothing (a matmul) reads ``node``, directly or
    through views: the backward would write it to memory, so recomputing it there is never
    free and the forward, which computed it already, saves it (PyTorch's ban,
    ``is_materialized_backwards`` in torch/_functorch/partitioners.py). A GELU MLP's
    gelu(h) feeds the second Linear's weight gradient: saved, the backward neither recomputes
    its erf nor writes it again."""
    if _is_view(node):
        return False
    stack, seen = [node], set()
    while stack:
        current = stack.pop()
        for user in current.users:
            if user in seen or user.op == "output":
                continue
            seen.add(user)
            if user not in required_forward and not is_recomputable(user):
                return True
            if _is_view(user):
                stack.append(user)
    return False


# Note [Saving a backward value]: a value only the backward reads but the forward could compute
# (layer_norm's x_hat = (x - mean) * rstd, from the forward's x, mean and rstd) counts twice
# its bytes when saved (PyTorch weighs a value no kernel writes anyway twice:
# ``get_node_weight``). Saved, it is a pass the forward adds at its end, over inputs long out
# of cache; left to the backward, it is computed inside the kernel that reads it. x_hat has a
# few bytes fewer than x, mean and rstd together, and the tiny GPT's forward ended with a
# 295 us kernel computing its five layer norms' x_hat for the backward. A view costs nothing
# to make on either side and keeps its weight: the backward's own transpose of a Linear's
# weight (the weight itself) is saved, not the forward's ``t``, which the forward would
# return through an ``as_strided`` a call.
BACKWARD_VALUE_SAVE_COST = 2


def _min_cut(joint_module, bwd_outputs, required_forward, from_inputs) -> set:
    """Names of the nodes whose values the forward saves: a minimum cut of the flow graph.
    ``required_forward``: the nodes the forward outputs need; ``from_inputs``: the nodes
    computed from the primals (a constant, such as a scatter's zeros, is made where used)."""
    import networkx as nx
    tangents = [n for n in joint_module.graph.nodes if _is_tangent(n)]
    needs_tangents = _descendants(tangents)
    bwd_nodes = _ancestors(bwd_outputs)
    required_bw = (bwd_nodes & needs_tangents) | {o for o in bwd_outputs if isinstance(o, Node)}
    flow = nx.DiGraph()
    for node in joint_module.graph.nodes:
        if node.op == "output" or _is_tangent(node):
            continue
        name_in, name_out = node.name + "_in", node.name + "_out"
        if node in required_bw and node.op != "placeholder":
            flow.add_edge(name_in, "sink", capacity=math.inf)
            continue
        if node.op == "placeholder" or not is_recomputable(node) or \
                node in from_inputs and _materialized_in_backward(node, required_forward):
            flow.add_edge("source", name_in, capacity=math.inf)
        if node in required_bw:
            flow.add_edge(name_out, "sink", capacity=math.inf)
        cost = _node_bytes(node)
        if node not in required_forward and not _is_view(node):
            cost *= BACKWARD_VALUE_SAVE_COST    # Note [Saving a backward value]
        flow.add_edge(name_in, name_out, capacity=cost)
        for user in node.users:
            if user.op != "output":
                flow.add_edge(name_out, user.name + "_in", capacity=math.inf)
    if "sink" not in flow or "source" not in flow:
        return set()
    _, (reachable, unreachable) = nx.minimum_cut(
        flow, "source", "sink", flow_func=nx.algorithms.flow.boykov_kolmogorov)
    return {u[:-3] for u in reachable for v in flow[u] if v in unreachable}


def _cut_key(joint_module, num_fwd_outputs) -> str:
    """The joint graph's code, each value's size and recomputability, and this file's source:
    everything the cut depends on."""
    nodes = [(n.name, _node_bytes(n), n.op != "output" and is_recomputable(n))
             for n in joint_module.graph.nodes]
    parts = [joint_module.code, repr(nodes), str(num_fwd_outputs),
             Path(__file__).read_text()]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]


def _cut_entry(key) -> Path:
    return native.cache_folder("partition") / f"{key}.json"


def _load_cut(key):
    """The saved names of a stored cut (hash-checked, Note [Native cache]), or None."""
    data = native.read_verified(_cut_entry(key))
    return None if data is None else set(json.loads(data))


def _store_cut(key, saved_names) -> None:
    native.write_verified(_cut_entry(key), json.dumps(sorted(saved_names)).encode())


def saved_bytes(bw_module) -> dict:
    """``{name: bytes}`` of each value the backward graph takes from the forward."""
    return {n.name: _node_bytes(n) for n in bw_module.graph.nodes
            if n.op == "placeholder" and not _is_tangent(n)}

"""The autograd graph of a tensor as Graphviz DOT text, like torchviz's ``make_dot``.

    >>> y = (w * x).sum()
    >>> print(strata.profiler.graph.to_dot(y, params={"w": w}))
    >>> # dot -Tsvg graph.dot > graph.svg   (Graphviz is optional: this module only writes text)

Boxes are backward nodes (``grad_fn`` names); an ``AccumulateGrad`` node is drawn as the leaf
tensor it accumulates into (blue, with its name if ``params`` names it, and its shape); the output
is green. Edges follow the gradient's path backwards: from a node's ``next_functions`` to it.
"""


def _shape(t):
    return "(" + ", ".join(str(n) for n in t.shape) + ")"


def _quote(text):
    text = str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + text + '"'


def to_dot(output, params=None, show_seq=False) -> str:
    """DOT text for the graph that produced ``output`` (a tensor or a sequence of tensors).

    ``params``: ``{name: tensor}`` (e.g. ``dict(model.named_parameters())``) to label leaves.
    ``show_seq``: also print each node's sequence number (its creation order).
    """
    outputs = output if isinstance(output, (tuple, list)) else (output,)
    names = {id(t): name for name, t in (params or {}).items()}
    lines = ["digraph {", '\tgraph [size="12,12"]',
             "\tnode [align=left fontname=monospace fontsize=10 height=0.2 ranksep=0.1 "
             "shape=box style=filled]"]
    seen = set()

    def node_id(node):
        return str(id(node))

    def add_graph(root):
        stack = [root]   # iterative: a long chain (an unrolled RNN) must not hit recursion limits
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            variable = getattr(node, "variable", None)
            if variable is not None:   # AccumulateGrad: draw the leaf itself
                label = f"{names.get(id(variable), '')}\n{_shape(variable)}".lstrip("\n")
                lines.append(f"\t{node_id(node)} [label={_quote(label)} fillcolor=lightblue]")
            else:
                label = node.name()
                if show_seq:
                    label += f"\nseq {node._sequence_nr()}"
                lines.append(f"\t{node_id(node)} [label={_quote(label)}]")
            for nxt, _ in node.next_functions:
                if nxt is not None:
                    lines.append(f"\t{node_id(nxt)} -> {node_id(node)}")
                    stack.append(nxt)

    for i, t in enumerate(outputs):
        label = names.get(id(t), "output" if len(outputs) == 1 else f"output {i}")
        lines.append(f"\t{id(t)} [label={_quote(label + chr(10) + _shape(t))} "
                     f"fillcolor=darkolivegreen1]")
        if t.grad_fn is not None:
            add_graph(t.grad_fn)
            lines.append(f"\t{node_id(t.grad_fn)} -> {id(t)}")
    lines.append("}")
    return "\n".join(lines) + "\n"

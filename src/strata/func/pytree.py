"""Nested containers of tensors ("pytrees"), as ``torch.utils._pytree`` sees them: tuples,
lists, dicts and namedtuples are nodes, ``None`` is a node with no children, anything else is a
leaf. A spec records the nodes so that ``tree_unflatten(tree_flatten(t)) == t``.

    >>> leaves, spec = tree_flatten({"w": w, "b": (b1, b2)})   # [w, b1, b2]
"""

from collections import namedtuple

# kind: "leaf", "none", "tuple", "list", "dict", "namedtuple"; context: dict keys or the
# namedtuple class; children: child specs.
TreeSpec = namedtuple("TreeSpec", ["kind", "context", "children"])
LEAF = TreeSpec("leaf", None, ())


def _node(tree):
    """``(kind, context, children)`` for a node, or None for a leaf."""
    if tree is None:
        return "none", None, ()
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return "namedtuple", type(tree), tuple(tree)
    if isinstance(tree, tuple):
        return "tuple", None, tree
    if isinstance(tree, list):
        return "list", None, tree
    if isinstance(tree, dict):
        return "dict", tuple(tree), tuple(tree.values())
    return None


def tree_flatten(tree):
    """``(leaves, spec)``."""
    leaves = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves):
    node = _node(tree)
    if node is None:
        leaves.append(tree)
        return LEAF
    kind, context, children = node
    return TreeSpec(kind, context, tuple(_flatten(c, leaves) for c in children))


def tree_unflatten(leaves, spec):
    it = iter(leaves)
    return _unflatten(it, spec)


def _unflatten(it, spec):
    if spec.kind == "leaf":
        return next(it)
    children = [_unflatten(it, c) for c in spec.children]
    if spec.kind == "none":
        return None
    if spec.kind == "tuple":
        return tuple(children)
    if spec.kind == "list":
        return children
    if spec.kind == "dict":
        return dict(zip(spec.context, children))
    return spec.context(*children)


def tree_leaves(tree):
    return tree_flatten(tree)[0]


def num_leaves(spec):
    if spec.kind == "leaf":
        return 1
    return sum(num_leaves(c) for c in spec.children)


def broadcast_to_and_flatten(prefix, spec):
    """The leaves of ``prefix`` repeated over the matching subtrees of ``spec`` (how ``in_dims``
    and ``out_dims`` apply), or None when ``prefix`` is not a prefix of ``spec``'s structure."""
    node = _node(prefix)
    if node is None or prefix is None:   # a leaf of the prefix covers a whole subtree
        return [prefix] * num_leaves(spec)
    kind, context, children = node
    if kind != spec.kind or len(children) != len(spec.children):
        return None
    if kind in ("dict", "namedtuple") and context != spec.context:
        return None
    out = []
    for child, child_spec in zip(children, spec.children):
        flat = broadcast_to_and_flatten(child, child_spec)
        if flat is None:
            return None
        out.extend(flat)
    return out

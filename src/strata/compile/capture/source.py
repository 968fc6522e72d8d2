"""Where a value read by a captured frame came from, as a Python expression.

Every value the interpreter reads from outside the frame carries a ``Source``: ``L['x']`` (a
local or argument), ``G['w']`` (a global), ``L['self'].lin`` (an attribute), ``L['xs'][0]`` (an
item). A source is three things at once: the name of a guard (``guards.py`` checks the value
found at this expression on the next call), the expression that fetches a graph input at run
time, and the expression that rebuilds the value after a graph break. Dynamo's ``source.py``
has a class per kind; here the expression text is the one fact every use needs.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    expr: str

    def attr(self, name: str) -> "Source":
        return Source(f"{self.expr}.{name}")

    def item(self, key) -> "Source":
        return Source(f"{self.expr}[{key!r}]")

    def call(self, method: str, *args) -> "Source":
        return Source(f"{self.expr}.{method}({', '.join(map(repr, args))})")

    def __str__(self):
        return self.expr


def local_source(name: str) -> Source:
    return Source(f"L[{name!r}]")


def global_source(name: str) -> Source:
    return Source(f"G[{name!r}]")


def identifier(source: Source) -> str:
    """A Python identifier for a source, like Dynamo's placeholder names (``l_self_lin_weight``)."""
    out = []
    for ch in source.expr:
        out.append(ch.lower() if ch.isalnum() else "_")
    name = "".join(out)
    while "__" in name:
        name = name.replace("__", "_")
    return name.strip("_") + "_"

"""From the tracer's flat event stream to a tree: spans, what ran inside them, and on the device.

Every layer reports to ``core.trace`` in the order things happen; an event's ``depth`` is how many
spans were open on its thread when it began. That is enough to rebuild the nesting per thread.
Device executions are reported later (when the host next synchronises) with the ``queue`` and
``seq`` of the command; they become children of the host event that submitted that command.
A collective that a communication worker thread ran (layer "comm", kind "run") likewise becomes a
child of the caller's "post" event with the same ``work`` id.
"""

from ..core import trace


class Node:
    """One event in the tree: ``parent`` is the span it ran inside (None at the top)."""

    __slots__ = ("event", "parent", "children", "end_ns")

    def __init__(self, event, parent, end_ns):
        self.event = event
        self.parent = parent
        self.children = []
        self.end_ns = end_ns   # the event's end, or when collection stopped for an open span

    @property
    def duration_ns(self):
        return self.end_ns - self.event.start_ns

    def walk(self):
        """This node and everything below it, depth first, in the order they began."""
        yield self
        for child in self.children:
            yield from child.walk()


def submission_key(ev):
    """``(queue, seq)`` of the command a host event submitted, or None."""
    f = ev.fields
    if "seq" not in f:
        return None
    if ev.layer == "runtime":
        return (f.get("stream", f.get("queue")), f["seq"])
    if ev.layer == "driver" and f.get("name") == "submit":
        return (f.get("queue"), f["seq"])
    return None


def build(events, stop_ns=None):
    """The roots of the event tree, in the order they began (device events under their launch;
    device events whose launch was not collected are roots of their own)."""
    stop_ns = trace._now() if stop_ns is None else stop_ns
    stacks = {}                    # thread -> open nodes, innermost last
    roots = []
    submitted = {}                 # (queue, seq) -> host node that submitted the command
    device = []
    posted = {}                    # work id -> the caller's "post" node of a collective
    for ev in events:
        if ev.layer == "device":
            device.append(ev)
            continue
        if ev.layer == "comm" and ev.fields.get("kind") == "run" \
                and ev.fields.get("work") in posted:
            post = posted[ev.fields["work"]]
            post.children.append(Node(ev, post, stop_ns if ev.end_ns is None else ev.end_ns))
            continue
        stack = stacks.setdefault(ev.thread, [])
        while stack and stack[-1].event.depth >= ev.depth:
            stack.pop()
        parent = stack[-1] if stack else None
        node = Node(ev, parent, stop_ns if ev.end_ns is None else ev.end_ns)
        (parent.children if parent is not None else roots).append(node)
        stack.append(node)
        if ev.layer == "comm" and ev.fields.get("kind") == "post":
            posted[ev.fields.get("work")] = node
        key = submission_key(ev)
        if key is not None and (key not in submitted or ev.layer == "runtime"):
            submitted[key] = node
    for ev in device:
        launch = submitted.get((ev.fields.get("queue"), ev.fields.get("seq")))
        node = Node(ev, launch, ev.end_ns if ev.end_ns is not None else ev.start_ns)
        if launch is None:
            roots.append(node)
        else:
            launch.children.append(node)
    return roots

"""The profiler's results, shaped like ``torch.autograd.profiler_util``: ``FunctionEvent`` (one
op call, backward node or user annotation), ``FunctionEventAvg`` (a ``key_averages()`` row) and
``EventList``.

Rows come from the tracer's events: a dispatcher *call* (not its redispatches: they are the same
op one key lower), an autograd backward node, a ``record_function`` span. Everything else a row
contains (redispatches, the kernel, runtime and driver work) is its own time, so "self" time is a
row's time minus that of the rows nested in it, as in PyTorch. Device time is the execution time
of the commands a row launched; memory is what its allocations minus frees added up to.
"""

from . import table as _table
from .tree import build

HOST_MEMORY = ("cpu", "sim_host")   # allocators whose bytes are host memory (pinned included)


def is_row(ev) -> bool:
    layer = ev.layer
    if layer == "dispatch":
        return ev.fields.get("kind") == "call"
    if layer == "autograd":
        return ev.fields.get("kind") == "backward"
    if layer == "comm":
        return ev.fields.get("kind") == "run"
    return layer == "frontend"


def input_shapes(shapes):
    """The dispatcher's shape tuples as PyTorch prints them: ``[[3, 4], [3, 4], []]``."""
    return [[list(t) for t in s] if isinstance(s, list) else list(s) for s in shapes]


def split_name(qualname):
    """``"aten::add.Tensor"`` -> ``("aten::add", "Tensor")``; PyTorch's table shows the first."""
    ns, sep, rest = qualname.rpartition("::")
    name, _, overload = rest.partition(".")
    return ns + sep + name, overload


class FunctionEvent:
    """One row event. Times are microseconds, like PyTorch's."""

    count = 1

    def __init__(self, id, ev, start_ns, end_ns, input_shapes, stack):
        self.id = id
        self.layer = ev.layer
        self.fields = ev.fields
        if ev.layer == "dispatch":
            self.name, self.overload_name = split_name(ev.name)
        elif ev.name.startswith("ProfilerStep#"):
            self.name, self.overload_name = "ProfilerStep*", ""   # PyTorch's: steps pool
        else:
            self.name, self.overload_name = ev.name, ""
        self.thread = ev.thread
        self.start_ns = start_ns
        self.end_ns = end_ns
        self.input_shapes = input_shapes
        self.stack = stack
        self.is_user_annotation = ev.layer == "frontend"
        self.sequence_nr = ev.fields.get("seq", -1) if ev.layer == "autograd" else -1
        self.cpu_parent = None
        self.cpu_children = []
        self.self_device_time_total = 0.0
        self.self_cpu_memory_usage = 0
        self.self_device_memory_usage = 0
        self.device_time_total = 0.0
        self.cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.node_id = -1

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return (self.end_ns - self.start_ns) / 1000

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    cpu_time = cpu_time_total
    device_time = property(lambda self: self.device_time_total)

    @property
    def time_range(self):
        return (self.start_ns / 1000, self.end_ns / 1000)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} "
                f"cpu_time_total={_table.format_time(self.cpu_time_total)} "
                f"self_cpu_time_total={_table.format_time(self.self_cpu_time_total)} "
                f"input_shapes={self.input_shapes} thread={self.thread}>")


class FunctionEventAvg:
    """The sum of the events that share a key (``key_averages()``); ``cpu_time`` is the mean."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.node_id = -1
        self.overload_name = ""
        self.input_shapes = None
        self.stack = []
        self.is_user_annotation = False
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.device_time_total = 0.0
        self.self_device_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_device_memory_usage = 0
        self.cpu_parent = None
        self.cpu_children = []

    def add(self, other):
        if self.key is None:
            self.key = other.key
            self.overload_name = other.overload_name
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.is_user_annotation = other.is_user_annotation
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
        self.count += other.count
        for name in ("cpu_time_total", "self_cpu_time_total", "device_time_total",
                     "self_device_time_total", "cpu_memory_usage", "self_cpu_memory_usage",
                     "device_memory_usage", "self_device_memory_usage"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        return self

    def __iadd__(self, other):
        return self.add(other)

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def device_time(self):
        return self.device_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time="
                f"{_table.format_time(self.self_cpu_time_total)} cpu_time="
                f"{_table.format_time(self.cpu_time)} input_shapes={self.input_shapes}>")


def _time_str(attr):
    return property(lambda self: _table.format_time(getattr(self, attr)))


for _cls in (FunctionEvent, FunctionEventAvg):
    for _attr in ("cpu_time", "cpu_time_total", "self_cpu_time_total", "device_time",
                  "device_time_total", "self_device_time_total"):
        setattr(_cls, _attr + "_str", _time_str(_attr))


class EventList(list):
    """A list of ``FunctionEvent``/``FunctionEventAvg`` with PyTorch's summaries."""

    def __init__(self, items=(), use_device=None, profile_memory=False):
        super().__init__(items)
        self.use_device = use_device
        self.profile_memory = profile_memory

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """One ``FunctionEventAvg`` per op name (and, if asked, per input shapes / overload /
        the first ``group_by_stack_n`` frames of the user's stack), in first-seen order."""
        stats = {}
        for ev in self:
            key = (ev.key, ev.is_user_annotation)
            if group_by_overload_name:
                key += (ev.overload_name,)
            if group_by_input_shape:
                key += (str(ev.input_shapes),)
            if group_by_stack_n > 0:
                key += tuple(ev.stack[:group_by_stack_n])
            avg = stats.get(key)
            if avg is None:
                avg = stats[key] = FunctionEventAvg()
            avg.add(ev)
        out = EventList(stats.values(), self.use_device, self.profile_memory)
        for avg in out:
            avg.stack = avg.stack[:group_by_stack_n]
            if not group_by_input_shape:
                avg.input_shapes = ""
            if not group_by_overload_name:
                avg.overload_name = ""
        return out

    def total_average(self):
        total = FunctionEventAvg()
        for ev in self:
            total.add(ev)
        total.key = "Total"
        return total

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        """PyTorch's profiler table (``sort_by`` any numeric attribute, e.g.
        ``"self_cpu_time_total"``, ``"cpu_time_total"``, ``"count"``)."""
        return _table.build_table(
            self, sort_by=sort_by, row_limit=row_limit, header=header,
            max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width,
            top_level_events_only=top_level_events_only, time_unit=time_unit,
            use_device=self.use_device, profile_memory=self.profile_memory)

    def __str__(self):
        return self.table()


def function_events(raw, stop_ns, *, record_shapes, with_stack, use_device, profile_memory):
    """Turn the tracer's events into an ``EventList`` of row events, ordered by start time."""
    rows = []

    def visit(node, row):
        ev = node.event
        if ev.layer == "device":
            if row is not None:
                row.self_device_time_total += node.duration_ns / 1000
            return
        if is_row(ev):
            fe = FunctionEvent(len(rows), ev, ev.start_ns, node.end_ns,
                               input_shapes(ev.fields.get("shapes", ())) if record_shapes
                               else [],
                               ev.fields.get("stack", []) if with_stack else [])
            if row is not None and ev.layer != "comm":   # comm runs beside, on its own thread
                fe.cpu_parent = row
                row.cpu_children.append(fe)
            rows.append(fe)
            row = fe
        elif profile_memory and ev.layer == "runtime" and ev.name in ("alloc", "free") \
                and row is not None:
            nbytes = ev.fields.get("nbytes", 0) * (1 if ev.name == "alloc" else -1)
            if ev.fields.get("device") in HOST_MEMORY:
                row.self_cpu_memory_usage += nbytes
            else:
                row.self_device_memory_usage += nbytes
        for child in node.children:
            visit(child, row)

    for root in build(raw, stop_ns):
        visit(root, None)
    # Totals include the nested rows; children were appended after their parents.
    for fe in reversed(rows):
        fe.device_time_total += fe.self_device_time_total
        fe.cpu_memory_usage += fe.self_cpu_memory_usage
        fe.device_memory_usage += fe.self_device_memory_usage
        parent = fe.cpu_parent
        if parent is not None:
            parent.device_time_total += fe.device_time_total
            parent.cpu_memory_usage += fe.cpu_memory_usage
            parent.device_memory_usage += fe.device_memory_usage
    rows.sort(key=lambda fe: fe.start_ns)
    return EventList(rows, use_device, profile_memory)

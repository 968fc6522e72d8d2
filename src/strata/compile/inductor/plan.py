"""Graph programs: a compiled graph's kernels and matrix products replayed by one C call.

Note [Graph programs]: the generated Python wrapper (compile_fx.py) costs a few microseconds
of Python per step (a kernel's launch 5-6 us, a product's table 10-12 us, a buffer 0.5 us):
about 120 us for each of the MLP step's two graphs, together a seventh of its compiled step
(planned: 21-23 us each). Once a graph's row tiles are settled (autotune.py: its first calls measure
them), every launch of a call is the same but for the arrays' addresses, so the next call is
recorded: each kernel launch (its task entry, arguments, rows and chunk size) and each product
table (native_pool.py), every pointer in them mapped to (slot, offset): the wrapper array it
points into and where. The program is those launches as int64 words and the relocations;
later calls run a planned wrapper: the same input checks, allocations and outputs as the
Python wrapper, then ``strata_run_program``, which writes this call's addresses into a copy of
the words and runs the launches in order on the native pool (CUDA graphs' capture and replay,
on the CPU, with relocation instead of fixed addresses; Inductor's C++ wrapper has the same
aim). The planned call's results are compared with the Python wrapper's, bit for bit, once,
before it is used, its buffers first filled with a byte pattern (so a launch the recording
missed shows). A graph is planned only when its wrapper has nothing but input bindings,
buffers, kernels, products and index checks (no Fallback, no in-place input, no
convolution: each would be Python between launches; a check of indices the graph computed
runs after the program, whose kernels clamp every index they load, so the error is raised
before any output is returned, as from the Python wrapper; only the checks of embedding, nll,
gather, index_add_ and scatter: ``AFTER_PROGRAM_CHECKS``), when every pointer lies in exactly one
of its arrays, and when its buffers' arena (below) is at most ``PLAN_MAX_BYTES``. A change of
``strata.set_num_threads`` records the graph again. ``STRATA_GRAPH_PROGRAMS=0`` keeps the
Python wrapper.

Note [Planned buffers]: the planned wrapper allocates its buffers before the program runs, so
each would hold its own memory all through the call, where the Python wrapper frees each after
its last reader and the allocator hands the (still cached) bytes to a later buffer. They are
views of one arena instead (``arena_offsets``): in order of allocation, each at the lowest
cache-line aligned offset that no buffer still alive at that line of the wrapper overlaps
(``lifetimes``: alive from its ``np.empty`` to the ``del`` after its last reader; outputs, and
indices a check reads after the program, to the end). A kernel then writes over bytes a
kernel read a moment ago, in cache, not over fresh memory: the tiny GPT's backward's buffers
went from ~30 MB apart to a 6.5 MB arena, its step 14.6-16.9 -> 13.6-13.8 ms (medians, three
alternating fresh-process pairs). Launches run one after another, so a buffer written after
another's last reader never races it. The outputs are views of the arena, which lives as long
as any of them. An arena over ``ARENA_MAX_BYTES`` (32 MB) is not used: glibc would map it afresh
at each call. ``STRATA_PLANNED_BUFFERS=0`` gives each buffer its own ``np.empty``.
"""

import re

import numpy as np

from ... import config
from ...backends.cpu import array as cpu_array
from ...backends.cpu import native_pool
from ...backends.cpu.array import pointer
from ...backends.cpu.linalg import ROW_OUTPUT, ROW_POINTERS, row_span
from ...core.shape import storage_extent

PLAN_MAX_BYTES = 64 << 20
ARENA_ALIGN = 64    # a cache line: no two buffers share one
# glibc serves a block up to 32 MB from its heap once one that size was freed (its largest
# mmap threshold): a larger arena would be mapped afresh each call, every page faulted in
# again (40 MB: 2.5 ms a call, 31 MB: 49 us); such a graph's buffers keep their own blocks
ARENA_MAX_BYTES = 32 << 20

_ARGS = re.compile(r"^    \((.*)\) = args$")
_ASSIGNED = re.compile(r"^    a_(\w+) = ")
_ALLOCATED = re.compile(r"^    a_(\w+) = np\.empty\(")
_LAUNCH = re.compile(r"^    (_run_kernel|_matmul|_matmul_pair)\(")
_ALLOWED = [_LAUNCH] + [re.compile(p) for p in (
    r"^    a_\w+ = (_input|_checked|_laid_out)\(",      # an input or a constant, laid out
    r"^    \w+ = constants\[",
    r"^    a_\w+ = np\.empty\(",
    r"^    del ",
)]
_CHECK = re.compile(r"^    (_check_\w+)\(a_(\w+), .*# Check$")
# checks whose kernels clamp each index they use (lowering_nn.py ``_clamped_row``: embedding,
# and gather, index_add_ and scatter in lowering_scatter.py; the nll kernel's target): they may
# run after the program; any other check must read an input
AFTER_PROGRAM_CHECKS = ("_check_indices", "_check_targets", "_check_index_bounds")


def _inputs(lines):
    return {name.strip() for name in _ARGS.match(lines[1]).group(1).split(",")}


def plannable(wrapper: str):
    """The names of the wrapper's arrays (its slots), or None where the wrapper runs anything
    a program cannot (Note [Graph programs]). An input bound by ``_checked`` alone keeps its
    own strides (``CWrapper._any_layout``); the planned wrapper checks them at each call."""
    lines = wrapper.rstrip("\n").split("\n")
    if not config.graph_programs or not lines[-1].startswith("    return [") or \
            not _ARGS.match(lines[1]):
        return None
    inputs = _inputs(lines)
    for line in lines[2:-1]:
        check = _CHECK.match(line)
        if check is not None:
            if check.group(2) not in inputs and check.group(1) not in AFTER_PROGRAM_CHECKS:
                return None
        elif not any(p.match(line) for p in _ALLOWED):
            return None
    slots = [m.group(1) for m in map(_ASSIGNED.match, lines) if m]
    return slots if len(set(slots)) == len(slots) else None


def recording_source(wrapper: str) -> str:
    """The wrapper that also returns its arrays: no ``del``, ``locals()`` beside the outputs."""
    lines = [line for line in wrapper.rstrip("\n").split("\n") if not line.startswith("    del ")]
    lines[0] = lines[0].replace("def call(", "def record(")
    lines[-1] = lines[-1] + ", locals()"
    return "\n".join(lines) + "\n"


def any_layout(wrapper: str):
    """The slots bound by ``_checked`` alone: their strides may change from call to call."""
    return [m.group(1) for m in re.finditer(r"^    a_(\w+) = _checked\(", wrapper, re.MULTILINE)]


def lifetimes(wrapper: str) -> dict:
    """{buffer: (line allocated, line freed)} of the wrapper's ``np.empty`` buffers: freed at
    the ``del`` after its last reader, or never (an output, or indices a check reads after the
    program: the line count)."""
    lines = wrapper.rstrip("\n").split("\n")
    spans, checked = {}, set()
    for i, line in enumerate(lines):
        allocated = _ALLOCATED.match(line)
        check = _CHECK.match(line)
        if allocated:
            spans[allocated.group(1)] = [i, len(lines)]
        elif check:
            checked.add(check.group(2))
        elif line.startswith("    del "):
            for name in line[len("    del "):].split(","):
                name = name.strip()[2:]     # a_<name>
                if name in spans and name not in checked:
                    spans[name][1] = i
    return {name: tuple(span) for name, span in spans.items()}


def arena_offsets(spans: dict, sizes: dict) -> tuple:
    """({buffer: byte offset}, arena bytes): Note [Planned buffers]. Buffers in order of
    allocation, each at the lowest 64-byte aligned offset no buffer still alive overlaps."""
    placed, offsets = [], {}
    for name in sorted(spans, key=lambda n: spans[n][0]):
        start, size = spans[name][0], -(-max(sizes[name], 1) // ARENA_ALIGN) * ARENA_ALIGN
        alive = sorted((o, e) for o, e, freed in placed if freed > start)
        offset = 0
        for low, high in alive:
            if offset + size <= low:
                break
            offset = max(offset, high)
        offsets[name] = offset
        placed.append((offset, offset + size, spans[name][1]))
    return offsets, max((e for _, e, _ in placed), default=0)


def planned_source(wrapper: str, slots, offsets=None, arena_bytes=0) -> str:
    """The wrapper with its launches replaced by the program (``_run_plan``) and its buffers
    views of one arena at ``offsets`` (Note [Planned buffers]; None: each its own
    ``np.empty``); None (the caller runs the Python wrapper) where an input bound by
    ``_checked`` came with other strides than the recorded call's."""
    lines = wrapper.rstrip("\n").split("\n")
    inputs = _inputs(lines)
    computed = [line for line in lines if _CHECK.match(line) and
                _CHECK.match(line).group(2) not in inputs]
    lines = [line for line in lines if not line.startswith("    del ") and
             not _LAUNCH.match(line) and line not in computed]
    lines[0] = lines[0].replace("def call(", "def planned(")
    arena = ""
    if offsets:
        first = next(i for i, line in enumerate(lines) if _ALLOCATED.match(line))
        for i, line in enumerate(lines):
            allocated = _ALLOCATED.match(line)
            if allocated:
                lines[i] = line.replace("np.empty(", f"_arena_view(arena, "
                                        f"{offsets[allocated.group(1)]}, ", 1)
        lines.insert(first, f"    arena = _aligned(np.empty({arena_bytes + ARENA_ALIGN}, "
                            f"np.uint8))")
        arena = "arena, "
    free = any_layout(wrapper)
    if free:
        strides = "".join(f"a_{name}.strides, " for name in free)
        lines.insert(len(lines) - 1, f"    if ({strides}) != plan.strides:")
        lines.insert(len(lines) - 1, "        return None")
    lines.insert(len(lines) - 1,
                 f"    _run_plan(plan, ({''.join(f'a_{s}, ' for s in slots)}{arena}))")
    lines[-1:-1] = computed     # checks of computed indices: after the kernels that made them
    return "\n".join(lines) + "\n"


class Recorder:
    """The launches of one recorded call (native_pool's and autotune's hooks)."""

    def __init__(self):
        self.launches, self.failure = [], None
        self.operands = []      # every product's arrays, alive until the recording ends
        self.written = []       # [low, high) of each recorded product's output

    def task(self, fn, arrays, rows, step):
        task = getattr(fn, "strata_task", None)
        if task is None:
            self.fail(f"{getattr(fn, '__name__', fn)} has no task entry")
        elif rows:
            self.launches.append(("task", task, list(arrays), rows, step))

    def gemms(self, table, operands=()):
        table = np.array(table, np.int64)
        self.launches.append(("gemms", table))
        self.operands += operands
        self.written += [row_span(row, ROW_OUTPUT) for row in table]

    def require_written(self, out):
        """Fail unless a recorded product table wrote into ``out``."""
        low, high = _bounds(out)
        if out.size and not any(a < high and low < b for a, b in self.written):
            self.fail("a product outside the product table")

    def fail(self, why):
        self.failure = self.failure or why


class Program:
    """A recorded call's launches as ``strata_run_program`` reads them."""

    def __init__(self, commands, words, relocations, threads, strides):
        self.commands = np.array(commands, np.int64).reshape(-1, 6)
        self.words = np.array(words, np.int64)
        self.relocations = np.array(relocations, np.int64).reshape(-1, 3)
        self.threads = threads
        self.strides = strides    # of the ``any_layout`` inputs, as recorded

    def run(self, arrays):
        slots = np.array([pointer(a) if a.size else 0 for a in arrays], np.int64)
        native_pool.run_program(self.commands, self.words.copy(), self.relocations, slots)


def _bounds(arr):
    """[low, high) of the bytes ``arr`` spans (strata's layouts: no negative strides)."""
    start = pointer(arr)
    extent = storage_extent(arr.shape, arr.strides)    # in bytes here: the last one's offset + 1
    return start, start + (extent - 1 + arr.itemsize if extent else 0)


def build(recorder, slots, arrays, free=(), allocated=(), spans=None):
    """The Program of a recorded call (``arrays``: the wrapper's, by name; ``free``: its
    ``any_layout`` slots; ``allocated``: its buffers; ``spans``: their ``lifetimes``, which
    place them in one arena, the slot after ``slots``: Note [Planned buffers]), or None where a
    pointer does not map to exactly one of them or the buffers are too large."""
    if recorder.failure is not None or native_pool.library() is None:
        return None
    ordered = [arrays.get("a_" + name) for name in slots]
    if any(not isinstance(a, np.ndarray) for a in ordered):
        return None
    sizes = {name: arrays["a_" + name].nbytes for name in allocated}
    offsets, arena_bytes = arena_offsets(spans, sizes) if spans else ({}, 0)
    if arena_bytes > ARENA_MAX_BYTES:
        offsets = {}
    if not offsets:
        arena_bytes = sum(sizes.values())
    if arena_bytes > PLAN_MAX_BYTES:
        return None
    bounds = [(_bounds(a), pointer(a)) for a in ordered]
    arena = len(slots)

    def home(slot, offset):
        """(slot, offset) in the planned call: an arena buffer's bytes are the arena's."""
        name = slots[slot]
        return (arena, offsets[name] + offset) if name in offsets else (slot, offset)

    def place(address, end):
        """(slot, offset) of the bytes [address, end), or None where no single array holds
        them all."""
        hits = [i for i, ((lo, hi), _) in enumerate(bounds) if lo <= address and end <= hi]
        return home(hits[0], address - bounds[hits[0]][1]) if len(hits) == 1 else None

    commands, words, relocations = [], [], []
    for launch in recorder.launches:
        start = len(words)
        if launch[0] == "task":
            _, task, args, rows, step = launch
            for arr in args:
                same = [i for i, a in enumerate(ordered) if a is arr]
                if len(same) != 1:      # not a slot, or one array bound to two names
                    return None
                relocations.append((len(words), *home(same[0], 0)))
                words.append(0)
            commands += [1, task, start, 0, rows, step]
        else:
            table = launch[1]
            for r, row in enumerate(table):
                for field in ROW_POINTERS:
                    if row[field] == 0:     # no bias
                        continue
                    where = place(*row_span(row, field))
                    if where is None:
                        return None
                    relocations.append((start + 17 * r + field, *where))
                    row[field] = 0
            words += table.reshape(-1).tolist()
            commands += [2, 0, start, len(table), 0, 0]
    program = Program(commands, words, relocations, cpu_array.NUM_THREADS,
                      tuple(arrays["a_" + name].strides for name in free))
    program.offsets, program.arena_bytes = offsets, arena_bytes
    return program


def _aligned(arena):
    """``arena`` from its first cache line boundary (its last ARENA_ALIGN bytes are spare)."""
    start = (-pointer(arena)) % ARENA_ALIGN
    return arena[start:start + arena.size - ARENA_ALIGN]


def _arena_view(arena, offset, shape, dtype):
    """The buffer at ``offset`` of ``arena`` (Note [Planned buffers])."""
    dtype = np.dtype(dtype)
    count = 1
    for n in shape:
        count *= n
    return arena[offset:offset + count * dtype.itemsize].view(dtype).reshape(shape)


def _poisoned(shape, dtype):
    """``np.empty`` filled with the byte 0xA5 (a float32 of -2.9e-16, int -1515870811)."""
    arr = np.empty(shape, dtype)
    arr.reshape(-1).view(np.uint8).fill(0xA5)
    return arr


def same_results(a, b) -> bool:
    """Whether two output lists hold the same values, bit for bit (tensors by their bytes)."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is y:
            continue
        if not (hasattr(x, "numpy") and hasattr(y, "numpy")):
            return False
        u, v = x.detach().numpy(), y.detach().numpy()
        if u.shape != v.shape or u.dtype != v.dtype or u.tobytes() != v.tobytes():
            return False
    return True


class Planner:
    """Runs a compiled graph's calls: the Python wrapper until its row tiles are settled, then
    one recorded call, then the program (Note [Graph programs])."""

    def __init__(self, wrapper, scope, tuner):
        self.slots = plannable(wrapper) if tuner is not None else None
        self.tuner, self.program, self.planned = tuner, None, None
        if self.slots is not None:
            self.wrapper, self.spans = wrapper, lifetimes(wrapper)
            self.free, self.allocated = any_layout(wrapper), list(self.spans)
            self.scope = dict(scope, _run_plan=Program.run, _arena_view=_arena_view,
                              _aligned=_aligned)
            exec(compile(recording_source(wrapper), "<inductor recording wrapper>", "exec"),  # noqa: S102
                 self.scope)

    def __call__(self, call, args):
        if self.slots is None or not config.graph_programs:
            return call(args)
        if self.program is not None:
            if self.program.threads == cpu_array.NUM_THREADS:
                result = self.planned(args)
                return call(args) if result is None else result
            self.program = None     # set_num_threads since the recording: record again
        if self.tuner.pending or self.tuner.unmeasured:
            return call(args)
        return self._record(call, args)

    def _record(self, call, args):
        recorder = Recorder()
        native_pool.recording.recorder = recorder
        try:
            result, arrays = self.scope["record"](args)
        finally:
            native_pool.recording.recorder = None
        program = build(recorder, self.slots, arrays, self.free, self.allocated,
                        self.spans if config.planned_buffers else None)
        del arrays
        if program is not None:
            planned = planned_source(self.wrapper, self.slots, program.offsets,
                                     program.arena_bytes)
            scope = dict(self.scope, plan=program, _poisoned=_poisoned)
            # the first run, checked against the Python wrapper, fills every buffer (the
            # arena) with a pattern first: one the program failed to write cannot hold a right
            # value left there by the recorded call
            exec(compile(planned.replace("np.empty(", "_poisoned("),  # noqa: S102
                         "<inductor poisoned planned wrapper>", "exec"), scope)
            check = scope["planned"](args)
            if check is not None and same_results(check, result):
                exec(compile(planned, "<inductor planned wrapper>", "exec"), scope)  # noqa: S102
                self.planned, self.program = scope["planned"], program
                return result
        self.slots = None      # not plannable: the Python wrapper from now on
        return result

"""A graph break inside a 3.12 inlined comprehension (PEP 709; Dynamo's
``comprehension_graph_break.py``).

Up to 3.11 a comprehension is a function of its own, so a break inside it is a break at the
call. From 3.12 its loop is part of the frame, and a break in a loop would run the whole frame
eagerly. Instead the graph ends where the comprehension starts, the comprehension runs in plain
Python as a function made from its own instructions, and a resume function, compiled like any
frame, carries on after its END_FOR.

A comprehension is found by its cleanup handler in the exception table: ``SWAP 2; POP_TOP;
SWAP 2; STORE_FAST ...`` (restore the loop variables, re-raise). It starts at the
LOAD_FAST_AND_CLEARs that save those variables, with the iterator on the stack, and its
END_FOR (3.13: END_FOR and a POP_TOP) leaves ``[saved variables..., result]`` where the iterator
was.
"""

import dis
from dataclasses import dataclass

from .resume import locals_read, locals_written
from .variables import Unsupported

_HANDLER_START = ["SWAP", "POP_TOP", "SWAP", "STORE_FAST"]
_BUILDS = {"BUILD_LIST", "BUILD_MAP", "BUILD_SET"}
_CELL_OPS = {"LOAD_DEREF", "STORE_DEREF", "DELETE_DEREF", "LOAD_CLOSURE", "MAKE_CELL"}
_VARIABLE_FLAGS = 0x04 | 0x08 | 0x20 | 0x80 | 0x100 | 0x200   # varargs, generators, ...
_cache: dict = {}


@dataclass(frozen=True)
class Comprehension:
    start: int          # offset of the first LOAD_FAST_AND_CLEAR
    end: int            # offset of its END_FOR (3.13: of the POP_TOP after it)
    after: int          # offset of the instruction after ``end``
    saved_layout: tuple   # the saved variables' names, bottom to top, below the result


def regions(code) -> list:
    """The outermost inlined comprehensions of ``code`` (none before 3.12)."""
    instructions = list(dis.get_instructions(code))
    if not any(i.opname == "LOAD_FAST_AND_CLEAR" for i in instructions):
        return []
    index = {inst.offset: i for i, inst in enumerate(instructions)}
    entries = [e for e in dis._parse_exception_table(code)
               if [i.opname for i in instructions[index[e.target]:index[e.target] + 4]]
               == _HANDLER_START]
    handlers_from = min((e.target for e in entries), default=0)
    spans: dict = {}
    for entry in entries:
        if entry.start >= handlers_from:
            continue   # an outer comprehension's handler guarding an inner one's handler
        low, high = spans.get(entry.target, (entry.start, entry.end))
        spans[entry.target] = (min(low, entry.start), max(high, entry.end))
    found = []
    for low, high in spans.values():
        region = _region(instructions, index, low, high)
        if region is not None:
            found.append(region)
    return [r for r in found
            if not any(o.start < r.start and r.end < o.end for o in found)]


def _region(instructions, index, low, high):
    first = index[low]                 # the BUILD_* of the result, after one SWAP
    end = index[high] - 1 if high in index else len(instructions) - 1
    # the loop ends in END_FOR (3.12: pops two values) or END_FOR; POP_TOP (3.13: one each)
    loop_end = [i.opname for i in instructions[end - 1:end + 1]]
    if instructions[first].opname not in _BUILDS or \
            loop_end[-1] != "END_FOR" and loop_end != ["END_FOR", "POP_TOP"]:
        return None
    start = first - 1
    while start > 0 and instructions[start - 1].opname == "LOAD_FAST_AND_CLEAR":
        start -= 1
    cleared = instructions[start:first - 1]
    if not cleared or instructions[first - 1].opname != "SWAP":
        return None
    # run the prologue on names: [iterator, saved...] -> [saved..., result, iterator]
    stack = ["<iterator>"] + [i.argval for i in cleared]
    for inst in instructions[first - 1:first + 2]:
        if inst.opname == "SWAP":
            stack[-1], stack[-inst.arg] = stack[-inst.arg], stack[-1]
        else:
            stack.append("<result>")
    if stack[-2:] != ["<result>", "<iterator>"]:
        return None
    return Comprehension(instructions[start].offset, instructions[end].offset,
                         instructions[end + 1].offset, tuple(stack[:-2]))


def enclosing(found, offset):
    return next((r for r in found if r.start <= offset <= r.end), None)


def arguments(code, region) -> tuple:
    """The frame's locals the comprehension reads (its own loop variables excluded)."""
    inside = [i for i in dis.get_instructions(code) if region.start <= i.offset <= region.end]
    cleared = {i.argval for i in inside if i.opname == "LOAD_FAST_AND_CLEAR"}
    names = []
    for inst in inside:
        if inst.opname in _CELL_OPS and not (inst.opname == "LOAD_DEREF" and
                                             inst.argval in code.co_freevars):
            raise Unsupported("graph break in a comprehension that uses a cell variable")
        assigned = [name for name in locals_written(inst) if name not in cleared]
        if assigned:
            raise Unsupported(f"graph break in a comprehension that assigns {assigned[0]!r}")
        if inst.opname.startswith(("LOAD_FAST", "STORE_FAST_LOAD_FAST")):
            names += [name for name in locals_read(inst) if name not in cleared]
    if any(name in code.co_cellvars for name in names):   # 3.13: LOAD_FAST of a closure cell
        raise Unsupported("graph break in a comprehension that uses a cell variable")
    return tuple(dict.fromkeys(names))


def comprehension_function(code, f_globals, closure, region, names):
    """A plain function ``(iterator, *names) -> result`` running the comprehension; it shares
    the frame's globals and closure (free variables)."""
    import types
    key = (code, region, names)
    if key not in _cache:
        _cache[key] = _comprehension_code(code, region, names)
    new_code = _cache[key]
    return types.FunctionType(new_code, f_globals, new_code.co_name, None, closure)


def _comprehension_code(code, region, names):
    from bytecode import Bytecode, Instr, Label, TryBegin, TryEnd
    original = Bytecode.from_code(code)
    offsets = [i.offset for i in dis.get_instructions(code) if i.opname != "EXTENDED_ARG"]
    body, pending, n = [], [], 0
    for item in original:
        if isinstance(item, (TryBegin, TryEnd)):
            continue   # the handlers restore the frame's variables; this frame is its own
        if not isinstance(item, Instr):
            pending.append(item)   # a label or line number: kept with the next instruction
            continue
        if region.start <= offsets[n] <= region.end:
            body.extend(pending)
            body.append(item)
        pending, n = [], n + 1
    labels = {id(item) for item in body if isinstance(item, Label)}
    if any(isinstance(i, Instr) and isinstance(i.arg, Label) and id(i.arg) not in labels
           for i in body):
        raise Unsupported("a comprehension that jumps out of itself")
    prologue = [Instr("COPY_FREE_VARS", len(code.co_freevars))] if code.co_freevars else []
    prologue += [Instr("RESUME", 0), Instr("LOAD_FAST", "___iterator")]
    epilogue = [Instr("STORE_FAST", "___result")]
    # the saved loop variables were unbound here, so NULL: STORE_FAST takes a NULL, POP_TOP not
    epilogue += [Instr("STORE_FAST", "___saved") for _ in region.saved_layout]
    epilogue += [Instr("LOAD_FAST", "___result"), Instr("RETURN_VALUE")]
    function = Bytecode(prologue + body + epilogue)
    function.argnames = ["___iterator", *names]
    function.argcount = len(function.argnames)
    function.freevars = list(code.co_freevars)
    function.flags = original.flags & ~_VARIABLE_FLAGS
    function.name = function.qualname = f"__comprehension_at_{region.start}"
    function.filename = code.co_filename
    function.first_lineno = code.co_firstlineno
    return function.to_code()


def clear():
    _cache.clear()

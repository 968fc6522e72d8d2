"""Resume functions: the rest of a frame after a graph break, as a new code object.

``__resume_at_<offset>_<n>`` takes the live stack values and the live locals as positional
arguments, pushes the stack back (NULL slots included), and jumps to ``offset`` in a copy of the
original bytecode. It is an ordinary function, so the compile wrapper compiles it on its first
call like any frame (Dynamo's ``resume_execution.py``). The ``bytecode`` package rebuilds the
code object, including the exception table (3.11+) and stack size.
"""

import dis
import types

from .variables import Unsupported

_PROLOGUE = {"MAKE_CELL", "COPY_FREE_VARS", "RESUME"}
_VARARG_FLAGS = 0x04 | 0x08   # CO_VARARGS | CO_VARKEYWORDS
_cache: dict = {}
# 3.12: LOAD_FAST_CHECK reads a maybe-unbound local, LOAD_FAST_AND_CLEAR saves one that an
# inlined comprehension's loop variable shadows
_READS_LOCAL = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_DEREF",
                "LOAD_CLOSURE", "DELETE_FAST"}


def stack_argname(i: int) -> str:
    return f"___stack{i}"


def locals_read(inst) -> tuple:
    """The locals (and cells) ``inst`` reads; 3.13's fused LOAD_FAST_LOAD_FAST and
    STORE_FAST_LOAD_FAST name two locals in a tuple."""
    if inst.opname == "LOAD_FAST_LOAD_FAST":
        return inst.argval
    if inst.opname == "STORE_FAST_LOAD_FAST":
        return inst.argval[1:]
    return (inst.argval,) if inst.opname in _READS_LOCAL else ()


def locals_written(inst) -> tuple:
    """The locals ``inst`` assigns or deletes (3.13's fused forms included)."""
    if inst.opname == "STORE_FAST_STORE_FAST":
        return inst.argval
    if inst.opname == "STORE_FAST_LOAD_FAST":
        return inst.argval[:1]
    return (inst.argval,) if inst.opname in ("STORE_FAST", "DELETE_FAST") else ()


def live_locals(code, offsets) -> set:
    """Locals (and cell variables) the code may read at or after any of ``offsets``.

    Conservative: a name read anywhere after the first resume point, or anywhere at all when a
    backward jump (a loop) follows it.
    """
    start = min(offsets)
    instructions = list(dis.get_instructions(code))
    loops = any(i.offset >= start and "BACKWARD" in i.opname for i in instructions)
    names = set()
    for inst in instructions:
        if loops or inst.offset >= start:
            names.update(locals_read(inst))
    return {n for n in names - set(code.co_freevars) if not n.startswith("___stack")}


def inside_loop(code, offset) -> bool:
    """A backward jump from after ``offset`` to before it: the instruction is in a loop."""
    return any("BACKWARD" in i.opname and i.offset > offset and i.argval <= offset
               for i in dis.get_instructions(code))


def stores_cells_after(code, offset) -> bool:
    """A cell variable is (re)assigned at or after ``offset``, or anywhere inside a loop."""
    instructions = list(dis.get_instructions(code))
    loops = any(i.offset >= offset and "BACKWARD" in i.opname for i in instructions)
    return any(i.opname in ("STORE_DEREF", "DELETE_DEREF") and (loops or i.offset >= offset)
               for i in instructions)


def inside_try(code, offset) -> bool:
    """``offset`` is in a ``try`` block (a ``with`` block's cleanup handler does not count:
    a resume function may re-enter a grad-mode ``with`` block)."""
    instructions = list(dis.get_instructions(code))
    index = {inst.offset: i for i, inst in enumerate(instructions)}
    for entry in dis._parse_exception_table(code):
        if entry.start <= offset < entry.end:
            handler = instructions[index[entry.target]:index[entry.target] + 2]
            if [i.opname for i in handler] != ["PUSH_EXC_INFO", "WITH_EXCEPT_START"]:
                return True
    return False


def resume_code(code, offset: int, null_slots: tuple, local_names: tuple):
    """The code object resuming ``code`` at ``offset`` with this stack layout and locals."""
    key = (code, offset, null_slots, local_names)
    if key in _cache:
        return _cache[key]
    from bytecode import Bytecode, Instr, Label, TryBegin   # on the first graph break only
    original = Bytecode.from_code(code)
    dis_offsets = [i.offset for i in dis.get_instructions(code) if i.opname != "EXTENDED_ARG"]
    target = Label()
    body, n_instr, found = [], 0, False
    for item in original:
        if isinstance(item, Instr):
            if dis_offsets[n_instr] == offset:
                body.append(target)
                found = True
            n_instr += 1
            if item.name in _PROLOGUE and not found and n_instr <= len(code.co_cellvars) + 2:
                continue
        body.append(item)
    if not found:
        raise Unsupported(f"no instruction at offset {offset} to resume at")
    stack_args = tuple(stack_argname(i) for i in range(len(null_slots)) if not null_slots[i])
    prologue = [Instr("MAKE_CELL", item.arg) for item in original
                if isinstance(item, Instr) and item.name == "MAKE_CELL"]
    if code.co_freevars:
        prologue.append(Instr("COPY_FREE_VARS", len(code.co_freevars)))
    prologue.append(Instr("RESUME", 0))
    for i, is_null in enumerate(null_slots):
        prologue.append(Instr("PUSH_NULL") if is_null else Instr("LOAD_FAST", stack_argname(i)))
    prologue.append(Instr("JUMP_FORWARD", target))
    resume = Bytecode(prologue + body)
    resume.argnames = list(stack_args + local_names)
    resume.argcount = len(resume.argnames)
    resume.posonlyargcount = 0
    resume.kwonlyargcount = 0
    resume.cellvars = list(original.cellvars)
    resume.freevars = list(original.freevars)
    resume.flags = original.flags & ~_VARARG_FLAGS
    resume.name = f"__resume_at_{offset}_{len(_cache)}"
    resume.qualname = resume.name
    resume.filename = code.co_filename
    resume.first_lineno = code.co_firstlineno
    # The prologue rebuilds a stack the original reached at ``offset``, so the original's
    # stack size and exception-handler depths hold (bytecode's own analysis cannot follow a
    # jump into the middle of a `with` block): copy the depths from its exception table.
    try_begins = [item for item in original if isinstance(item, TryBegin)]
    entries = sorted(dis._parse_exception_table(code), key=lambda e: e.start)
    if len(try_begins) != len(entries):
        raise Unsupported("resume function: exception table not understood")
    for begin, entry in zip(try_begins, entries):
        begin.stack_depth = entry.depth
    result = resume.to_code(stacksize=code.co_stacksize + len(null_slots),
                            compute_exception_stack_depths=False)
    _cache[key] = result
    return result


def resume_function(code, f_globals, closure, offset, null_slots, local_names):
    new_code = resume_code(code, offset, tuple(null_slots), tuple(local_names))
    return types.FunctionType(new_code, f_globals, new_code.co_name, None, closure)


def clear():
    _cache.clear()

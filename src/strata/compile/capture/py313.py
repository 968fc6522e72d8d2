"""CPython 3.13's opcode table: 3.12's (``py312.py``) plus what 3.13 changed (Dynamo's
``symbolic_convert.py``, its ``# 3.13 opcodes`` section and version branches).

3.13 moved CALL's NULL above the callable (``[callable, self_or_null]``, in ``opcodes.py``'s
``push_callable``), replaced KW_NAMES by CALL_KW (the names as a tuple on the stack), builds
a function with MAKE_FUNCTION of the code alone and one SET_FUNCTION_ATTRIBUTE per extra,
turned LOAD_CLOSURE into a LOAD_FAST of the cell, fuses pairs of LOAD_FAST / STORE_FAST, puts a
TO_BOOL before a conditional jump on a non-bool, and splits FORMAT_VALUE into CONVERT_VALUE,
FORMAT_SIMPLE and FORMAT_WITH_SPEC. A loop's END_FOR pops one value and a POP_TOP the iterator.
``BREAKABLE``: as in ``py311.py``, with CALL_KW.
"""

from . import opcodes, py312
from .opcodes import load_fast, push_formatted, store_fast

OPCODES = py312.OPCODES.extended()
handles = OPCODES.handles
BREAKABLE = py312.BREAKABLE | {"CALL_KW"}
_FUNCTION_ATTRIBUTES = {0x01: "defaults", 0x02: "kwdefaults", 0x08: "cells"}   # 0x04: annotations

handles("CALL_KW")(opcodes.call)
# Only a conditional jump or UNARY_NOT follows TO_BOOL, and both take any value here (Dynamo
# skips it too); a resume function starting at UNARY_NOT gets ``bool(value)``, as CPython's
# 3.13 UNARY_NOT reads only a bool (convert_frame).
handles("TO_BOOL")(opcodes.nothing)


@handles("END_FOR")
def _end_for(tx, inst):
    tx.pop()


@handles("LOAD_FAST", "LOAD_FAST_CHECK")
def _load_fast(tx, inst):
    _load(tx, inst.argval)


def _load(tx, name):
    """A LOAD_FAST of a cell variable (or free variable) loads the cell: the closure tuple."""
    if name in tx.cells:
        tx.push(tx.cells[name])
    else:
        load_fast(tx, name)


@handles("LOAD_FAST_LOAD_FAST")
def _load_fast_load_fast(tx, inst):
    for name in inst.argval:
        _load(tx, name)


@handles("STORE_FAST_LOAD_FAST")
def _store_fast_load_fast(tx, inst):
    stored, loaded = inst.argval
    store_fast(tx, stored)
    _load(tx, loaded)


@handles("STORE_FAST_STORE_FAST")
def _store_fast_store_fast(tx, inst):
    for name in inst.argval:   # the first name takes the top of the stack
        store_fast(tx, name)


@handles("MAKE_FUNCTION")
def _make_function(tx, inst):
    tx.push(tx.make_function(tx.pop().as_python_constant(), None, None, None))


@handles("SET_FUNCTION_ATTRIBUTE")
def _set_function_attribute(tx, inst):
    function, value = tx.pop(), tx.pop()
    attribute = _FUNCTION_ATTRIBUTES.get(inst.arg)
    if attribute == "cells":
        value = tuple(value.items)
    if attribute is not None:
        setattr(function, attribute, value)
    tx.push(function)


@handles("CONVERT_VALUE")
def _convert_value(tx, inst):
    tx.push(tx.wrap_constant(opcodes.CONVERSIONS[inst.arg](tx.pop().as_python_constant())))


@handles("FORMAT_SIMPLE")
def _format_simple(tx, inst):
    push_formatted(tx, tx.pop())


@handles("FORMAT_WITH_SPEC")
def _format_with_spec(tx, inst):
    spec = tx.pop().as_python_constant()
    push_formatted(tx, tx.pop(), spec)

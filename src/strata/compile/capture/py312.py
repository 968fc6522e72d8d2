"""CPython 3.12's opcode table: the shared handlers (``opcodes.py``) plus what 3.12 changed
(Dynamo's ``symbolic_convert.py``, its ``# 3.12 opcodes`` section and version branches).

3.12 folded LOAD_METHOD into LOAD_ATTR's low bit, made the jumps direction-neutral, turned
UNARY_POSITIVE and LIST_TO_TUPLE into CALL_INTRINSIC_1, and inlines comprehensions into the
frame (PEP 709: LOAD_FAST_AND_CLEAR saves the loop variable, STORE_FAST puts it back, NULL
meaning "was unbound"). ``BREAKABLE``: as in ``py311.py``.
"""

import operator

from . import opcodes
from .opcodes import NULL, constant_slice, push_attr
from .variables import ConstantVariable, Unsupported

OPCODES = opcodes.SHARED.extended()
handles = OPCODES.handles
BREAKABLE = frozenset({"CALL", "POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE"})

handles("LOAD_FAST_CHECK")(OPCODES["LOAD_FAST"])   # the unbound case is Unsupported already
opcodes.pop_jumps(OPCODES, "POP_JUMP_IF_{}")
# CPython pops an exhausted iterator and skips the END_FOR after the jump target; like Dynamo,
# leave two values for that END_FOR to pop instead.
handles("FOR_ITER")(opcodes.for_iter(lambda tx: tx.push(ConstantVariable(None))))
_INTRINSIC_UNARY_POSITIVE, _INTRINSIC_LIST_TO_TUPLE = 5, 6


@handles("END_FOR")
def _end_for(tx, inst):
    tx.popn(2)


@handles("LOAD_ATTR")
def _load_attr(tx, inst):
    push_attr(tx, tx.pop(), inst.argval, method=bool(inst.arg & 1))


@handles("LOAD_SUPER_ATTR")
def _load_super_attr(tx, inst):
    """``super().name``: the stack holds [super, __class__, self] (zero-argument form too)."""
    super_fn, cls, obj = tx.popn(3)
    proxy = tx.call(super_fn, [cls, obj], {})
    push_attr(tx, proxy, inst.argval, method=bool(inst.arg & 1))


@handles("LOAD_FAST_AND_CLEAR")
def _load_fast_and_clear(tx, inst):
    tx.push(tx.locals.pop(inst.argval, NULL))


@handles("BINARY_SLICE")
def _binary_slice(tx, inst):
    container, start, stop = tx.popn(3)
    tx.push(tx.getitem(container, constant_slice(tx, [start, stop])))


@handles("STORE_SLICE")
def _store_slice(tx, inst):
    value, container, start, stop = tx.popn(4)
    tx.setitem(container, constant_slice(tx, [start, stop]), value)


@handles("CALL_INTRINSIC_1")
def _call_intrinsic_1(tx, inst):
    if inst.arg == _INTRINSIC_UNARY_POSITIVE:
        tx.push(tx.unary_op(operator.pos, tx.pop()))
    elif inst.arg == _INTRINSIC_LIST_TO_TUPLE:
        opcodes.list_to_tuple(tx, inst)
    else:
        raise Unsupported(f"CALL_INTRINSIC_1 {inst.argrepr}")


@handles("RETURN_CONST")
def _return_const(tx, inst):
    tx.result = ConstantVariable(inst.argval)
    return True

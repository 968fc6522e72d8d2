"""CPython 3.11's opcode table: the shared handlers (``opcodes.py``) plus 3.11's own.

``BREAKABLE`` names the instructions a graph break may stop at: a call (run in plain Python)
and a conditional jump on a value the graph cannot decide (``if tensor:``).
"""

from . import opcodes
from .opcodes import push_attr

OPCODES = opcodes.SHARED.extended()
handles = OPCODES.handles
BREAKABLE = frozenset({"CALL", "POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_FORWARD_IF_FALSE",
                       "POP_JUMP_BACKWARD_IF_TRUE", "POP_JUMP_BACKWARD_IF_FALSE"})

handles("PRECALL")(opcodes.nothing)
handles("UNARY_POSITIVE")(opcodes.unary)
handles("LIST_TO_TUPLE")(opcodes.list_to_tuple)
opcodes.pop_jumps(OPCODES, "POP_JUMP_FORWARD_IF_{}")
opcodes.pop_jumps(OPCODES, "POP_JUMP_BACKWARD_IF_{}")
# an exhausted iterator is popped, the jump lands after the loop
handles("FOR_ITER")(opcodes.for_iter(lambda tx: tx.pop()))


@handles("LOAD_ATTR")
def _load_attr(tx, inst):
    push_attr(tx, tx.pop(), inst.argval, method=False)


@handles("LOAD_METHOD")
def _load_method(tx, inst):
    push_attr(tx, tx.pop(), inst.argval, method=True)


@handles("JUMP_IF_TRUE_OR_POP", "JUMP_IF_FALSE_OR_POP")
def _jump_or_pop(tx, inst):
    when = inst.opname == "JUMP_IF_TRUE_OR_POP"
    if tx.truth(tx.stack[-1]) is when:
        tx.jump(inst)
    else:
        tx.pop()

"""The symbolic bytecode interpreter (Dynamo's ``InstructionTranslator``).

It steps through a frame's instructions with a stack of variables (``variables.py``) instead
of values. Each instruction's handler lives in the opcode table of the running Python version
(``py311.py``, ``py312.py``, ``py313.py``, built on ``opcodes.py``); this file holds what does
not depend on the version: the step loop, calls and inlining, Python operators on symbolic
values, and the checkpoints a graph break rolls back to.
"""

import dis
import functools
import operator
import sys
from types import MappingProxyType

from ...amp import autocast_mode
from ...core import dtype as D
from ...core.shape import Size
from .callables import AutocastVariable, GradModeVariable, NestedFunctionVariable
from .modules import NNModuleVariable
from .variables import (BaseListVariable, CellVariable, ConstantVariable, DictVariable,
                        IteratorVariable, ListVariable, NamedTupleVariable, NullVariable,
                        SizeVariable, SymIntVariable, TensorVariable, Unsupported,
                        VariableTracker)

# BREAKABLE is for convert_frame. A version without a table runs every frame eagerly, and
# strata.compile warns (eval_frame.warn_if_no_opcode_table).
if sys.version_info[:2] == (3, 11):
    from .py311 import BREAKABLE, OPCODES
elif sys.version_info[:2] == (3, 12):
    from .py312 import BREAKABLE, OPCODES
elif sys.version_info[:2] == (3, 13):
    from .py313 import BREAKABLE, OPCODES
else:
    BREAKABLE, OPCODES = frozenset(), {}
CAPTURED_VERSIONS = ("3.11", "3.12", "3.13")

NULL = NullVariable()
_MAX_INLINE_DEPTH = 32


class InstructionTranslator:
    """Interprets one frame; ``parent`` is set for an inlined call."""

    def __init__(self, code, f_globals, symbolic_locals, cells, output, parent=None):
        self.code = code
        self.f_globals = f_globals
        self.locals = symbolic_locals
        self.cells = dict(cells)
        self.output = output
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1
        self.instructions, self.index_of = _decoded(code)
        self.stack = []
        self.ip = 0
        self.kw_names = ()
        self.lineno = code.co_firstlineno
        self.result = None
        self.current = None

    # --- stack ----------------------------------------------------------------------------------
    def push(self, value):
        assert isinstance(value, VariableTracker), value
        self.stack.append(value)

    def pop(self):
        return self.stack.pop()

    def popn(self, n):
        if n == 0:
            return []
        items = self.stack[-n:]
        del self.stack[-n:]
        return items

    def jump(self, inst):
        self.ip = self.index_of[inst.argval]

    # --- the step loop --------------------------------------------------------------------------
    def step(self):
        """Run one instruction; returns True when the frame returned."""
        inst = self.instructions[self.ip]
        self.current = inst
        self.ip += 1
        line = getattr(inst, "line_number", inst.starts_line)   # 3.13: starts_line is a bool
        if line:
            self.lineno = line
        handler = OPCODES.get(inst.opname)
        if handler is None:
            raise Unsupported(f"bytecode {inst.opname} is not supported" if OPCODES else
                              f"capture reads the bytecode of CPython "
                              f"{', '.join(CAPTURED_VERSIONS)}, not {sys.version.split()[0]}")
        return handler(self, inst)

    def run_inline(self):
        while not self.step():
            pass
        return self.result

    def user_location(self) -> str:
        return f"{self.code.co_filename}:{self.lineno} in {self.code.co_name}"

    def stack_trace(self) -> str:
        frames, tx = [], self
        while tx is not None:
            frames.append(f'  File "{tx.code.co_filename}", line {tx.lineno}, in '
                          f"{tx.code.co_name}")
            tx = tx.parent
        return "\n".join(reversed(frames))

    def checkpoint(self):
        return (self.ip, list(self.stack), dict(self.locals), self.kw_names, self.lineno,
                self.output.checkpoint())

    def restore(self, state):
        self.ip, stack, locals_, self.kw_names, self.lineno, output_state = state
        self.stack, self.locals = stack, locals_
        self.output.restore(output_state)

    # --- values ---------------------------------------------------------------------------------
    def wrap(self, value, source):
        return self.output.wrap(self, value, source)

    def wrap_constant(self, value):
        return self.output.wrap(self, value, None)

    def dict_variable(self, kwargs: dict):
        return DictVariable(dict(kwargs))

    def unpack(self, value) -> list:
        if isinstance(value, ConstantVariable) and isinstance(value.value, range):
            return [ConstantVariable(v) for v in value.value]
        return value.unpack(self)

    def truth(self, value) -> bool:
        return value.truth(self)

    def as_int(self, value) -> int:
        if isinstance(value, SymIntVariable):
            return value.specialize(self)
        result = value.as_python_constant()
        if not isinstance(result, int):
            raise Unsupported(f"expected an int, got {type(result).__name__}")
        return result

    def super_args(self):
        if "__class__" not in self.cells or not self.code.co_varnames:
            raise Unsupported("zero-argument super() outside a method")
        cls = self.cells["__class__"].contents.as_python_constant()
        return cls, self.locals[self.code.co_varnames[0]]

    # --- operators ------------------------------------------------------------------------------
    def binary_op(self, op, a, b):
        if op is operator.is_ or op is operator.is_not:
            return ConstantVariable(op(_identity(a), _identity(b)))
        if isinstance(a, (TensorVariable, SymIntVariable)) or \
                isinstance(b, (TensorVariable, SymIntVariable)):
            if op is operator.contains:
                raise Unsupported("`in` on a tensor")
            return self.output.call(self, "call_function", op, [a, b], {})
        if op is operator.getitem:
            return self.getitem(a, b)
        if op is operator.contains:
            return ConstantVariable(_constant_key(b) in _container_keys(self, a))
        if isinstance(a, BaseListVariable) and isinstance(b, BaseListVariable) and \
                op is operator.add and a.kind is b.kind:
            return type(a)(a.items + b.items)
        if isinstance(a, BaseListVariable) and op is operator.mul and b.is_constant():
            return type(a)(a.items * b.as_python_constant())
        if op in (operator.eq, operator.ne) and not (a.is_constant() and b.is_constant()):
            same = _identity(a) is _identity(b)
            return ConstantVariable(same if op is operator.eq else not same)
        return self.wrap_constant(op(a.as_python_constant(), b.as_python_constant()))

    def unary_op(self, op, a):
        if op is operator.not_:
            return ConstantVariable(not self.truth(a))
        if isinstance(a, (TensorVariable, SymIntVariable)):
            return self.output.call(self, "call_function", op, [a], {})
        return self.wrap_constant(op(a.as_python_constant()))

    def getitem(self, obj, key):
        if isinstance(key, TensorVariable) and isinstance(getattr(obj, "value", None), dict):
            return self.output.tensor_keyed_item(self, obj, key)   # an optimizer's state[p]
        if isinstance(obj, (TensorVariable, SymIntVariable)) or \
                isinstance(key, (TensorVariable, SymIntVariable)):
            return self.output.call(self, "call_function", operator.getitem, [obj, key], {})
        if isinstance(obj, NNModuleVariable):
            return obj.getitem(self, key.as_python_constant())
        k = key.as_python_constant()
        if isinstance(obj, BaseListVariable):
            if isinstance(k, slice):
                return type(obj)(obj.items[k])
            return obj.items[k]
        if isinstance(obj, DictVariable):
            if k not in obj.items:
                raise Unsupported(f"KeyError {k!r}")
            return obj.items[k]
        if obj.source is not None and not obj.is_constant():
            raise Unsupported(f"subscript of {type(obj).__name__}")
        return self.wrap_constant(obj.as_python_constant()[k])

    def setitem(self, obj, key, value):
        if isinstance(obj, TensorVariable):
            self.output.call(self, "call_function", operator.setitem, [obj, key, value], {})
        elif isinstance(obj, ListVariable):
            items, k = list(obj.items), key.as_python_constant()
            items[k] = self.unpack(value) if isinstance(k, slice) else value
            obj.mutate(self, items)
        elif isinstance(obj, DictVariable):
            obj.setitem(self, key.as_python_constant(), value)
        else:
            raise Unsupported(f"item assignment on {type(obj).__name__}")

    def setattr(self, obj, name, value):
        if isinstance(obj, TensorVariable):
            raise Unsupported(f"setting tensor attribute {name!r}")
        target = getattr(obj, "module", getattr(obj, "value", None))
        if obj.source is None or target is None:
            raise Unsupported(f"attribute write on {type(obj).__name__}")
        self.output.side_effects.write_attr(self, target, obj.source, name, value)

    # --- calls ----------------------------------------------------------------------------------
    def call(self, fn, args, kwargs):
        if isinstance(fn, NullVariable):
            raise Unsupported("call of NULL")
        return fn.call(self, list(args), dict(kwargs))

    def construct(self, cls, args, kwargs):
        """``cls(...)`` for the few classes a frame may build while tracing."""
        from ...autograd import grad_mode
        if cls is grad_mode.no_grad:
            return GradModeVariable(False)
        if cls is grad_mode.enable_grad:
            return GradModeVariable(True)
        if cls is grad_mode.set_grad_enabled:
            return GradModeVariable(bool(args[0].as_python_constant()))
        if cls is autocast_mode.autocast:
            return AutocastVariable(cls(*(a.as_python_constant() for a in args),
                                        **{k: v.as_python_constant() for k, v in kwargs.items()}))
        if cls is Size:
            return SizeVariable(self.unpack(args[0]) if args else [])
        if issubclass(cls, tuple) and hasattr(cls, "_fields") and \
                set(kwargs) <= set(cls._fields):   # a namedtuple
            fields = list(args) + [kwargs[f] for f in cls._fields[len(args):] if f in kwargs]
            if len(fields) != len(cls._fields):
                raise Unsupported(f"constructing {cls.__qualname__} with defaults")
            return NamedTupleVariable(fields, cls)
        if cls is slice:
            return ConstantVariable(slice(*(a.as_python_constant() for a in args)))
        if cls in (D.finfo, D.iinfo):     # a dtype's limits: constants, as Dynamo folds them
            return self.wrap_constant(cls(*(a.as_python_constant() for a in args),
                                          **{k: v.as_python_constant() for k, v in kwargs.items()}))
        raise Unsupported(f"constructing {cls.__qualname__}")

    def inline_call(self, code, f_globals, bound_locals, cells, name):
        if code.co_flags & (0x80 | 0x100 | 0x200):   # coroutines, async generators
            raise Unsupported(f"inlining coroutine {name}")
        if self.depth >= _MAX_INLINE_DEPTH:
            raise Unsupported("inlining too deep (recursion?)")
        child = InstructionTranslator(code, f_globals, dict(bound_locals), cells, self.output,
                                      parent=self)
        for cellvar in code.co_cellvars:
            child.cells[cellvar] = CellVariable(child.locals.get(cellvar))
        if code.co_flags & 0x20:
            # A generator runs to completion here; its values come back as an iterator (the
            # consumer, e.g. ``tuple(g)`` or a for loop, takes them all).
            child.generated = []
            child.run_inline()
            return IteratorVariable(child.generated)
        return child.run_inline()

    def make_function(self, code, defaults, kwdefaults, closure):
        cells = tuple(closure.items) if closure is not None else ()
        return NestedFunctionVariable(code, self.f_globals, code.co_name, defaults, cells,
                                      kwdefaults)

    def get_iter(self, value):
        if isinstance(value, IteratorVariable):
            return value
        if isinstance(value, TensorVariable):
            return IteratorVariable(value.unpack(self))
        return IteratorVariable(self.unpack(value))


@functools.lru_cache(maxsize=1024)
def _decoded(code):
    """``code``'s instructions and their index by offset, decoded once: a capture inlines the
    same functions again and again (each ``nn.Linear``), and ``dis`` is slow (3.13 most)."""
    instructions = tuple(dis.get_instructions(code))
    return instructions, MappingProxyType({inst.offset: i for i, inst in enumerate(instructions)})


def _identity(v):
    if isinstance(v, ConstantVariable):
        return v.value
    for attr in ("module", "fn", "value", "example"):
        if hasattr(v, attr):
            return getattr(v, attr)
    return v


def _constant_key(v):
    return v.as_python_constant()


def _container_keys(tx, container):
    if isinstance(container, DictVariable):
        return container.items
    if isinstance(container, BaseListVariable):
        return [x.as_python_constant() for x in container.items]
    return container.as_python_constant()


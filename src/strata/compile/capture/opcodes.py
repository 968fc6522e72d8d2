"""The opcode handlers every supported CPython version shares, and the pieces its table builds
its own handlers from (``py311.py``, ``py312.py``, ``py313.py``: Dynamo's ``symbolic_convert.py``
keeps one class with ``sys.version_info`` branches; here each version's differences sit in its
own file, except where a call's NULL slot goes, which several shared handlers need).

A handler takes the translator and the instruction, works on the symbolic stack, and returns
True only when the frame returns.
"""

import dis
import operator
import sys

from .variables import (CellVariable, ConstantVariable, DictVariable, ListVariable,
                        NullVariable, TupleVariable, Unsupported)

NULL = NullVariable()
# CALL's stack: [NULL, callable] or [callable, self] up to 3.12; 3.13 made it
# [callable, self_or_null], so LOAD_GLOBAL and a method LOAD_ATTR push the NULL after it.
NULL_BELOW_CALLABLE = sys.version_info < (3, 13)


class OpcodeTable(dict):
    """Opcode name -> handler; ``handles`` registers one, ``extended`` starts a version's table
    from this one."""

    def handles(self, *names):
        def register(fn):
            for name in names:
                self[name] = fn
            return fn
        return register

    def extended(self):
        return OpcodeTable(self)


SHARED = OpcodeTable()
handles = SHARED.handles


@handles("NOP", "RESUME", "COPY_FREE_VARS", "EXTENDED_ARG")
def nothing(tx, inst):
    return False


@handles("PUSH_NULL")
def _push_null(tx, inst):
    tx.push(NULL)


@handles("POP_TOP")
def _pop_top(tx, inst):
    tx.pop()


@handles("COPY")
def _copy(tx, inst):
    tx.push(tx.stack[-inst.arg])


@handles("SWAP")
def _swap(tx, inst):
    s = tx.stack
    s[-1], s[-inst.arg] = s[-inst.arg], s[-1]


# --- names ----------------------------------------------------------------------------------------
@handles("LOAD_CONST")
def _load_const(tx, inst):
    tx.push(ConstantVariable(inst.argval))


def load_fast(tx, name):
    if name not in tx.locals:
        raise Unsupported(f"local variable {name!r} referenced before assignment")
    tx.push(tx.locals[name])


def store_fast(tx, name):
    value = tx.pop()
    if isinstance(value, NullVariable):   # 3.12+: an inlined comprehension restores "unbound"
        tx.locals.pop(name, None)
    else:
        tx.locals[name] = value


@handles("LOAD_FAST")
def _load_fast(tx, inst):
    load_fast(tx, inst.argval)


@handles("STORE_FAST")
def _store_fast(tx, inst):
    store_fast(tx, inst.argval)


@handles("DELETE_FAST")
def _delete_fast(tx, inst):
    tx.locals.pop(inst.argval, None)


def push_callable(tx, value, with_null):
    """Push ``value`` and, when ``with_null``, CALL's NULL slot on the version's side of it."""
    if with_null and NULL_BELOW_CALLABLE:
        tx.push(NULL)
    tx.push(value)
    if with_null and not NULL_BELOW_CALLABLE:
        tx.push(NULL)


@handles("LOAD_GLOBAL")
def _load_global(tx, inst):
    push_callable(tx, tx.output.load_global(tx, inst.argval), with_null=bool(inst.arg & 1))


@handles("STORE_GLOBAL")
def _store_global(tx, inst):
    tx.output.side_effects.write_global(tx, inst.argval, tx.pop())


@handles("MAKE_CELL")
def _make_cell(tx, inst):
    if inst.argval not in tx.cells:
        tx.cells[inst.argval] = CellVariable(tx.locals.get(inst.argval))


@handles("LOAD_CLOSURE")
def _load_closure(tx, inst):
    tx.push(tx.cells[inst.argval])


@handles("LOAD_DEREF")
def _load_deref(tx, inst):
    contents = tx.cells[inst.argval].contents
    if contents is None:
        raise Unsupported(f"free variable {inst.argval!r} referenced before assignment")
    tx.push(contents)


@handles("STORE_DEREF")
def _store_deref(tx, inst):
    cell = tx.cells[inst.argval]
    if getattr(cell, "external", False):
        raise Unsupported(f"nonlocal write to {inst.argval!r} of the compiled function")
    cell.set(tx, tx.pop())


# --- attributes and items -------------------------------------------------------------------------
def push_attr(tx, obj, name, method):
    """``obj.name``; ``method``: as a call's callable, so a bound method and a NULL (3.11's
    LOAD_METHOD, 3.12+'s LOAD_ATTR with the low bit: CPython pushes [function, self] or the
    attribute and a NULL, and a bound method is the latter's equivalent)."""
    push_callable(tx, obj.getattr(tx, name), with_null=method)


@handles("STORE_ATTR")
def _store_attr(tx, inst):
    obj = tx.pop()
    value = tx.pop()
    tx.setattr(obj, inst.argval, value)


@handles("BINARY_SUBSCR")
def _binary_subscr(tx, inst):
    key = tx.pop()
    tx.push(tx.getitem(tx.pop(), key))


@handles("STORE_SUBSCR")
def _store_subscr(tx, inst):
    key, obj, value = tx.pop(), tx.pop(), tx.pop()
    tx.setitem(obj, key, value)


def constant_slice(tx, parts):
    """``slice(*parts)``; a symbolic int bound is specialized to its value (and guarded)."""
    values = [p.as_python_constant() if p.is_constant() else tx.as_int(p) for p in parts]
    return ConstantVariable(slice(*values))


@handles("BUILD_SLICE")
def _build_slice(tx, inst):
    tx.push(constant_slice(tx, tx.popn(inst.arg)))


# --- operators ------------------------------------------------------------------------------------
_BINARY = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
           "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "@": operator.matmul,
           "&": operator.and_, "|": operator.or_, "^": operator.xor, "<<": operator.lshift,
           ">>": operator.rshift}
_INPLACE = {"+=": operator.iadd, "-=": operator.isub, "*=": operator.imul,
            "/=": operator.itruediv, "//=": operator.ifloordiv, "%=": operator.imod,
            "**=": operator.ipow, "@=": operator.imatmul, "&=": operator.iand,
            "|=": operator.ior, "^=": operator.ixor, "<<=": operator.ilshift,
            ">>=": operator.irshift}
_COMPARE = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
            "==": operator.eq, "!=": operator.ne}


@handles("BINARY_OP")
def _binary_op(tx, inst):
    b, a = tx.pop(), tx.pop()
    symbol = dis._nb_ops[inst.arg][1]
    if symbol in _INPLACE:
        op = _INPLACE[symbol]
        from .variables import TensorVariable
        if not isinstance(a, TensorVariable):   # ints, lists: x += y rebinds
            op = _BINARY[symbol[:-1]]
            if isinstance(a, ListVariable) and symbol == "+=":
                a.mutate(tx, a.items + tx.unpack(b))
                tx.push(a)
                return
    else:
        op = _BINARY[symbol]
    tx.push(tx.binary_op(op, a, b))


@handles("COMPARE_OP")
def _compare_op(tx, inst):
    b, a = tx.pop(), tx.pop()
    tx.push(tx.binary_op(_COMPARE[inst.argval], a, b))


@handles("IS_OP")
def _is_op(tx, inst):
    b, a = tx.pop(), tx.pop()
    tx.push(tx.binary_op(operator.is_not if inst.arg else operator.is_, a, b))


@handles("CONTAINS_OP")
def _contains_op(tx, inst):
    container, item = tx.pop(), tx.pop()
    result = tx.binary_op(operator.contains, container, item)
    tx.push(ConstantVariable(not result.value) if inst.arg else result)


_UNARY = {"UNARY_NEGATIVE": operator.neg, "UNARY_POSITIVE": operator.pos,
          "UNARY_INVERT": operator.invert, "UNARY_NOT": operator.not_}


@handles("UNARY_NEGATIVE", "UNARY_INVERT", "UNARY_NOT")
def unary(tx, inst):
    """Also 3.11's UNARY_POSITIVE (3.12 made it an intrinsic)."""
    tx.push(tx.unary_op(_UNARY[inst.opname], tx.pop()))


# --- building containers --------------------------------------------------------------------------
@handles("BUILD_TUPLE")
def _build_tuple(tx, inst):
    tx.push(TupleVariable(tx.popn(inst.arg)))


@handles("BUILD_LIST")
def _build_list(tx, inst):
    tx.push(ListVariable(tx.popn(inst.arg)))


@handles("BUILD_MAP")
def _build_map(tx, inst):
    flat = tx.popn(2 * inst.arg)
    tx.push(DictVariable({flat[i].as_python_constant(): flat[i + 1]
                          for i in range(0, len(flat), 2)}))


@handles("BUILD_CONST_KEY_MAP")
def _build_const_key_map(tx, inst):
    keys = tx.pop().as_python_constant()
    tx.push(DictVariable(dict(zip(keys, tx.popn(inst.arg)))))


@handles("BUILD_SET")
def _build_set(tx, inst):
    tx.push(ConstantVariable({v.as_python_constant() for v in tx.popn(inst.arg)}))


@handles("SET_ADD", "SET_UPDATE")
def _set_add(tx, inst):
    value = tx.pop().as_python_constant()
    target = tx.stack[-inst.arg]
    new = set(target.value) | ({value} if inst.opname == "SET_ADD" else set(value))
    tx.stack[-inst.arg] = ConstantVariable(new)


@handles("DELETE_SUBSCR")
def _delete_subscr(tx, inst):
    key, obj = tx.pop().as_python_constant(), tx.pop()
    if isinstance(obj, ListVariable):
        items = list(obj.items)
        del items[key]
        obj.mutate(tx, items)
    elif isinstance(obj, DictVariable):
        obj.delitem(tx, key)
    else:
        raise Unsupported(f"del on {type(obj).__name__}")


@handles("BUILD_STRING")
def _build_string(tx, inst):
    tx.push(ConstantVariable("".join(p.as_python_constant() for p in tx.popn(inst.arg))))


CONVERSIONS = {0: lambda v: v, 1: str, 2: repr, 3: ascii}   # f-strings' none, !s, !r, !a


def push_formatted(tx, value, spec="", conversion=0):
    """An f-string's ``{value!conversion:spec}`` (3.13 split FORMAT_VALUE into CONVERT_VALUE,
    FORMAT_SIMPLE and FORMAT_WITH_SPEC)."""
    text = format(CONVERSIONS[conversion](value.as_python_constant()), spec)
    tx.push(ConstantVariable(text))


@handles("FORMAT_VALUE")
def _format_value(tx, inst):
    spec = tx.pop().as_python_constant() if inst.arg & 0x04 else ""
    push_formatted(tx, tx.pop(), spec, inst.arg & 0x03)


@handles("LIST_APPEND")
def _list_append(tx, inst):
    value = tx.pop()
    lst = tx.stack[-inst.arg]
    lst.items.append(value)


@handles("LIST_EXTEND")
def _list_extend(tx, inst):
    value = tx.pop()
    tx.stack[-inst.arg].items.extend(tx.unpack(value))


def list_to_tuple(tx, inst):
    """3.11's LIST_TO_TUPLE, 3.12's CALL_INTRINSIC_1 INTRINSIC_LIST_TO_TUPLE."""
    tx.push(TupleVariable(tx.pop().items))


@handles("MAP_ADD")
def _map_add(tx, inst):
    value, key = tx.pop(), tx.pop()
    tx.stack[-inst.arg].items[key.as_python_constant()] = value


@handles("DICT_UPDATE", "DICT_MERGE")
def _dict_update(tx, inst):
    other = tx.pop()
    if not isinstance(other, DictVariable):
        raise Unsupported("** of a non-dict")
    tx.stack[-inst.arg].items.update(other.items)


@handles("UNPACK_SEQUENCE")
def _unpack_sequence(tx, inst):
    items = tx.unpack(tx.pop())
    if len(items) != inst.arg:
        raise Unsupported(f"unpacking {len(items)} values into {inst.arg}")
    for item in reversed(items):
        tx.push(item)


@handles("UNPACK_EX")
def _unpack_ex(tx, inst):
    items = tx.unpack(tx.pop())
    before, after = inst.arg & 0xFF, inst.arg >> 8
    middle = ListVariable(items[before:len(items) - after])
    for item in reversed(items[len(items) - after:]):
        tx.push(item)
    tx.push(middle)
    for item in reversed(items[:before]):
        tx.push(item)


# --- calls ----------------------------------------------------------------------------------------
@handles("KW_NAMES")
def _kw_names(tx, inst):
    tx.kw_names = tx.code.co_consts[inst.arg]


def call_parts(tx, inst):
    """A CALL's (or 3.13's CALL_KW's) operands on the stack, left in place:
    ``(slots, fn, args, kwargs)``, ``slots`` being how many it pops.

    The two slots under the arguments hold the callable and a NULL or ``self`` in either order
    (3.11/3.12: [NULL, callable] or [callable, self]; 3.13: [callable, self_or_null]): without
    the NULL, the first is the callable and the second the first argument. The keyword names
    come from 3.11/3.12's KW_NAMES or, for CALL_KW, a tuple on top of the arguments.
    """
    if inst.opname == "CALL_KW":
        slots = inst.arg + 3
        kw_names, operands = tx.stack[-1].as_python_constant(), tx.stack[-slots:-1]
    else:
        slots = inst.arg + 2
        kw_names, operands = tx.kw_names, tx.stack[-slots:]
    callable_and_self = [v for v in operands[:2] if not isinstance(v, NullVariable)]
    fn, *args = callable_and_self + operands[2:]
    split = len(args) - len(kw_names)
    return slots, fn, args[:split], dict(zip(kw_names, args[split:]))


@handles("CALL")
def call(tx, inst):
    """CALL; also 3.13's CALL_KW."""
    slots, fn, args, kwargs = call_parts(tx, inst)
    tx.popn(slots)
    tx.kw_names = ()
    tx.push(tx.call(fn, args, kwargs))


@handles("CALL_FUNCTION_EX")
def _call_function_ex(tx, inst):
    kwargs = tx.pop() if inst.arg & 1 else DictVariable({})
    args = tx.pop()
    fn = tx.pop()
    if isinstance(fn, NullVariable):   # 3.13: [callable, NULL, args, kwargs]
        fn = tx.pop()
    elif isinstance(tx.stack[-1], NullVariable):   # 3.11/3.12: [NULL, callable, ...]
        tx.pop()
    if not isinstance(kwargs, DictVariable):
        raise Unsupported("** of a non-dict")
    tx.push(tx.call(fn, tx.unpack(args), kwargs.items))


@handles("MAKE_FUNCTION")
def _make_function(tx, inst):
    """3.11/3.12: the flags say which of closure, annotations, kwdefaults, defaults are under
    the code object (3.13 sets them with SET_FUNCTION_ATTRIBUTE)."""
    code = tx.pop().as_python_constant()
    closure = tx.pop() if inst.arg & 0x08 else None
    if inst.arg & 0x04:
        tx.pop()   # annotations
    kwdefaults = tx.pop() if inst.arg & 0x02 else None
    defaults = tx.pop() if inst.arg & 0x01 else None
    tx.push(tx.make_function(code, defaults, kwdefaults, closure))


@handles("RETURN_VALUE")
def _return_value(tx, inst):
    tx.result = tx.pop()
    return True


# --- control flow ---------------------------------------------------------------------------------
@handles("JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP_NO_INTERRUPT")
def _jump(tx, inst):
    tx.jump(inst)


def _pop_jump_if(when):
    def handler(tx, inst):
        if tx.truth(tx.pop()) is when:
            tx.jump(inst)
    return handler


def _pop_jump_if_none(when_none):
    def handler(tx, inst):
        value = tx.pop()
        is_none = value.is_constant() and value.as_python_constant() is None
        if is_none is when_none:
            tx.jump(inst)
    return handler


def pop_jumps(table, name_format):
    """Register the four pop-and-jump conditions under ``name_format.format(condition)``
    (3.11: ``POP_JUMP_FORWARD_IF_{}`` and ``..._BACKWARD_...``; 3.12: ``POP_JUMP_IF_{}``)."""
    for condition, handler in (("TRUE", _pop_jump_if(True)), ("FALSE", _pop_jump_if(False)),
                               ("NONE", _pop_jump_if_none(True)),
                               ("NOT_NONE", _pop_jump_if_none(False))):
        table.handles(name_format.format(condition))(handler)


@handles("GET_ITER")
def _get_iter(tx, inst):
    tx.push(tx.get_iter(tx.pop()))


def for_iter(when_exhausted):
    """FOR_ITER; ``when_exhausted(tx)`` leaves the stack its jump target expects."""
    def handler(tx, inst):
        item = tx.stack[-1].next(tx)
        if item is None:
            when_exhausted(tx)
            tx.jump(inst)
        else:
            tx.push(item)
    return handler


@handles("BEFORE_WITH")
def _before_with(tx, inst):
    manager = tx.pop()
    if not hasattr(manager, "enter"):
        raise Unsupported(f"`with` on {type(manager).__name__}")
    exit_ = manager.enter(tx)
    tx.push(exit_)
    tx.push(ConstantVariable(None))


@handles("RETURN_GENERATOR")
def _return_generator(tx, inst):
    tx.push(ConstantVariable(None))   # popped by the POP_TOP that follows


@handles("YIELD_VALUE")
def _yield_value(tx, inst):
    if not hasattr(tx, "generated"):
        raise Unsupported("yield in the compiled frame")
    tx.generated.append(tx.pop())
    tx.push(ConstantVariable(None))   # what send() gives back


@handles("IMPORT_NAME")
def _import_name(tx, inst):
    fromlist, level = tx.pop().as_python_constant(), tx.pop().as_python_constant()
    module = __import__(inst.argval, tx.f_globals, None, fromlist, level)
    tx.push(tx.wrap_constant(module))


@handles("IMPORT_FROM")
def _import_from(tx, inst):
    tx.push(tx.stack[-1].getattr(tx, inst.argval))


@handles("LOAD_ASSERTION_ERROR")
def _load_assertion_error(tx, inst):
    tx.push(ConstantVariable(AssertionError))


@handles("RAISE_VARARGS")
def _raise(tx, inst):
    raise Unsupported("raise in the compiled frame")


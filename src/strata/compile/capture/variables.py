"""The symbolic values on the interpreter's stack (Dynamo's ``VariableTracker`` family).

Each class knows what the frame can do with one kind of Python value: read an attribute, call
it, iterate it, and how to ``reconstruct`` it as a Python expression once the graph has run.
A value read from outside the frame keeps its ``source`` (see ``source.py``), which is how the
guards learn about it. Tensors are ``TensorVariable``: an FX node plus a meta tensor
(``node.meta["val"]``) that stands for the real one while tracing.
"""

import operator

from .source import Source


class Unsupported(Exception):
    """Something the interpreter cannot trace: the caller graph-breaks or runs the frame eagerly."""


class VariableTracker:
    source: Source | None = None

    def python_type(self):
        raise Unsupported(f"type() of {type(self).__name__}")

    def as_python_constant(self):
        raise Unsupported(f"{type(self).__name__} used as a Python constant")

    def is_constant(self) -> bool:
        return False

    def getattr(self, tx, name: str) -> "VariableTracker":
        raise Unsupported(f"attribute {name!r} of {type(self).__name__}")

    def call(self, tx, args: list, kwargs: dict) -> "VariableTracker":
        raise Unsupported(f"calling {type(self).__name__}")

    def unpack(self, tx) -> list:
        raise Unsupported(f"iterating {type(self).__name__}")

    def truth(self, tx) -> bool:
        raise Unsupported(f"truth value of {type(self).__name__}")

    def reconstruct(self, codegen) -> str:
        if self.source is not None:
            return self.source.expr
        raise Unsupported(f"cannot rebuild {type(self).__name__} after a graph break")


class ConstantVariable(VariableTracker):
    """A Python value the graph specialises on: numbers, strings, None, dtypes, devices, ranges."""

    def __init__(self, value, source=None):
        self.value = value
        self.source = source

    def python_type(self):
        return type(self.value)

    def as_python_constant(self):
        return self.value

    def is_constant(self):
        return True

    def truth(self, tx):
        return bool(self.value)

    def getattr(self, tx, name):
        try:
            attr = getattr(self.value, name)
        except AttributeError as e:
            raise Unsupported(str(e)) from None
        if callable(attr):
            return ConstantMethodVariable(self.value, name)
        return ConstantVariable(attr)

    def unpack(self, tx):
        try:
            return [ConstantVariable(v) for v in self.value]
        except TypeError as e:
            raise Unsupported(str(e)) from None

    def reconstruct(self, codegen):
        if self.source is not None:
            return self.source.expr
        return codegen.constant(self.value)

    def __repr__(self):
        return f"ConstantVariable({self.value!r})"


class ConstantMethodVariable(VariableTracker):
    """A method of a constant (``"a,b".split``, ``(3).bit_length``): folded when called."""

    def __init__(self, value, name):
        self.value, self.name = value, name

    def reconstruct(self, codegen):
        return f"{codegen.constant(self.value)}.{self.name}"

    def call(self, tx, args, kwargs):
        a = [x.as_python_constant() for x in args]
        k = {n: x.as_python_constant() for n, x in kwargs.items()}
        return tx.wrap_constant(getattr(self.value, self.name)(*a, **k))


class NullVariable(VariableTracker):
    """3.11's NULL stack slot (PUSH_NULL, LOAD_GLOBAL with the low bit)."""

    def reconstruct(self, codegen):
        raise Unsupported("NULL on the stack")


class TensorVariable(VariableTracker):
    def __init__(self, node, example, source=None):
        self.node = node
        self.example = example
        self.source = source

    def python_type(self):
        return type(self.example)

    def truth(self, tx):
        raise Unsupported("data-dependent control flow: the truth value of a tensor")

    def getattr(self, tx, name):
        return tx.output.tensor_attr(tx, self, name)

    def unpack(self, tx):
        if self.example.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        rows = tx.as_int(tx.output.size_of(tx, self, 0))   # a dynamic size gets its guard
        return [tx.output.call(tx, "call_function", operator.getitem, [self, ConstantVariable(i)],
                               {}) for i in range(rows)]

    def reconstruct(self, codegen):
        return codegen.tensor(self)

    def __repr__(self):
        return f"TensorVariable({self.node})"


class SymIntVariable(VariableTracker):
    """A size that changes between calls (a dynamic dim): a graph node plus this call's value.

    ``expr`` is the size's expression over the frame's inputs (``L['x'].size(0)``) when it has
    one; using the value as a plain Python int then adds a guard on that expression.
    """

    def __init__(self, node, value: int, expr: str | None):
        self.node, self.value, self.expr = node, value, expr

    def python_type(self):
        return int

    def as_python_constant(self):
        raise Unsupported("a dynamic size used where a constant is needed")

    def specialize(self, tx):
        """The value as a plain int, guarded (the dim is static again for this entry)."""
        if self.expr is None:
            raise Unsupported("a dynamic size of an intermediate tensor used as a Python int")
        tx.output.guards.add_expr(f"{self.expr} == {self.value}", f"{self.expr} == {self.value}")
        return self.value

    def truth(self, tx):
        return bool(self.specialize(tx))

    def reconstruct(self, codegen):
        return codegen.symint(self)


class BaseListVariable(VariableTracker):
    kind = list

    def __init__(self, items, source=None):
        self.items = list(items)
        self.source = source
        self.mutated = False

    def python_type(self):
        return self.kind

    def as_python_constant(self):
        return self.kind(x.as_python_constant() for x in self.items)

    def is_constant(self):
        return all(x.is_constant() for x in self.items)

    def unpack(self, tx):
        return list(self.items)

    def truth(self, tx):
        return bool(self.items)

    def reconstruct(self, codegen):
        if self.source is not None:   # mutations are replayed onto the original object
            return self.source.expr
        inner = ", ".join(codegen.value(x) for x in self.items)
        if self.kind is tuple:
            return f"({inner},)" if len(self.items) == 1 else f"({inner})"
        return f"[{inner}]"


class TupleVariable(BaseListVariable):
    kind = tuple

    def getattr(self, tx, name):
        if name in ("index", "count"):
            return ConstantMethodVariable(tuple(self.items), name)
        raise Unsupported(f"tuple.{name}")


class NamedTupleVariable(TupleVariable):
    """A named tuple (``strata.return_types.max``): fields read by name."""

    def __init__(self, items, cls, source=None):
        super().__init__(items, source)
        self.cls = cls

    def python_type(self):
        return self.cls

    def getattr(self, tx, name):
        if name in self.cls._fields:
            return self.items[self.cls._fields.index(name)]
        return super().getattr(tx, name)

    def reconstruct(self, codegen):
        if self.source is not None:
            return self.source.expr
        return f"{codegen.constant(self.cls)}({', '.join(codegen.value(x) for x in self.items)})"


class SizeVariable(TupleVariable):
    """``x.shape`` / ``x.size()``: a tuple that rebuilds as a ``strata.Size``."""

    def python_type(self):
        from ...core.shape import Size
        return Size

    def reconstruct(self, codegen):
        return f"{codegen.constant(self.python_type())}({super().reconstruct(codegen)})"


class ListVariable(BaseListVariable):
    kind = list

    def getattr(self, tx, name):
        return ListMethodVariable(self, name)

    def mutate(self, tx, new_items):
        """Replace the items, remembering how to undo it (a graph break rolls back)."""
        old, old_flag = self.items, self.mutated
        tx.output.on_undo(lambda: (setattr(self, "items", old), setattr(self, "mutated", old_flag)))
        self.items = list(new_items)
        self.mutated = True
        if self.source is not None:
            tx.output.side_effects.note_list(self)


class ListMethodVariable(VariableTracker):
    def __init__(self, lst, name):
        self.lst, self.name = lst, name

    def reconstruct(self, codegen):
        return f"{codegen.value(self.lst)}.{self.name}"

    def call(self, tx, args, kwargs):
        items = list(self.lst.items)
        name = self.name
        if name == "append":
            self.lst.mutate(tx, items + [args[0]])
        elif name == "extend":
            self.lst.mutate(tx, items + args[0].unpack(tx))
        elif name == "insert":
            items.insert(args[0].as_python_constant(), args[1])
            self.lst.mutate(tx, items)
        elif name == "pop":
            value = items.pop(*(a.as_python_constant() for a in args))
            self.lst.mutate(tx, items)
            return value
        elif name == "clear":
            self.lst.mutate(tx, [])
        elif name == "reverse":
            self.lst.mutate(tx, items[::-1])
        elif name == "copy":
            return ListVariable(items)
        elif name in ("index", "count"):
            return tx.wrap_constant(getattr(self.lst.as_python_constant(), name)(
                *(a.as_python_constant() for a in args)))
        else:
            raise Unsupported(f"list.{name}")
        return ConstantVariable(None)


class DictVariable(VariableTracker):
    """A dict whose keys are constants; values are variables."""

    def __init__(self, items: dict, source=None):
        self.items = dict(items)
        self.source = source
        self.mutated = False

    def python_type(self):
        return dict

    def truth(self, tx):
        return bool(self.items)

    def unpack(self, tx):
        return [ConstantVariable(k) for k in self.items]

    def getattr(self, tx, name):
        return DictMethodVariable(self, name)

    def delitem(self, tx, key):
        if key not in self.items:
            raise Unsupported(f"KeyError {key!r}")
        self._replace(tx, {k: v for k, v in self.items.items() if k != key})

    def setitem(self, tx, key, value):
        self._replace(tx, {**self.items, key: value})

    def _replace(self, tx, items):
        old, old_flag = self.items, self.mutated
        tx.output.on_undo(lambda: (setattr(self, "items", old), setattr(self, "mutated", old_flag)))
        self.items = items
        self.mutated = True
        if self.source is not None:
            tx.output.side_effects.note_dict(self)

    def reconstruct(self, codegen):
        if self.source is not None:   # mutations are replayed onto the original object
            return self.source.expr
        inner = ", ".join(f"{codegen.constant(k)}: {codegen.value(v)}"
                          for k, v in self.items.items())
        return "{" + inner + "}"


class DictMethodVariable(VariableTracker):
    def __init__(self, d, name):
        self.d, self.name = d, name

    def reconstruct(self, codegen):
        return f"{codegen.value(self.d)}.{self.name}"

    def call(self, tx, args, kwargs):
        items, name = self.d.items, self.name
        if name == "items":
            return ListVariable([TupleVariable([ConstantVariable(k), v])
                                 for k, v in items.items()])
        if name == "keys":
            return ListVariable([ConstantVariable(k) for k in items])
        if name == "values":
            return ListVariable(list(items.values()))
        if name == "get":
            key = args[0].as_python_constant()
            return items.get(key, args[1] if len(args) > 1 else ConstantVariable(None))
        if name == "update":
            for k, v in (args[0].items.items() if args else {}).items():
                self.d.setitem(tx, k, v)
            for k, v in kwargs.items():
                self.d.setitem(tx, k, v)
            return ConstantVariable(None)
        if name == "setdefault":
            key = args[0].as_python_constant()
            if key not in items:
                self.d.setitem(tx, key, args[1] if len(args) > 1 else ConstantVariable(None))
            return self.d.items[key]
        raise Unsupported(f"dict.{name}")


class IteratorVariable(VariableTracker):
    """An iterator over a known list of items (``iter(list)``, ``range``, ``zip``, ...)."""

    def __init__(self, items):
        self.items = list(items)
        self.index = 0

    def next(self, tx):
        if self.index >= len(self.items):
            return None
        item = self.items[self.index]
        old = self.index
        tx.output.on_undo(lambda: setattr(self, "index", old))
        self.index += 1
        return item

    def unpack(self, tx):
        rest = self.items[self.index:]
        self.index = len(self.items)
        return rest

    def reconstruct(self, codegen):
        return "iter([" + ", ".join(codegen.value(x) for x in self.items[self.index:]) + "])"


class CellVariable(VariableTracker):
    """A closure cell created or read while tracing (MAKE_CELL, LOAD_CLOSURE)."""

    def __init__(self, contents=None):
        self.contents = contents

    def set(self, tx, value):
        old = self.contents
        tx.output.on_undo(lambda: setattr(self, "contents", old))
        self.contents = value


class ContextExitVariable(VariableTracker):
    """The ``__exit__`` BEFORE_WITH leaves on the stack for a grad-mode context manager."""

    def __init__(self, restore_grad: bool):
        self.restore_grad = restore_grad

    def call(self, tx, args, kwargs):
        tx.output.set_grad_enabled(tx, self.restore_grad)
        return ConstantVariable(None)

    def reconstruct(self, codegen):
        from .in_graph import GradModeExit
        return codegen.constant(GradModeExit(self.restore_grad))

"""Python side effects of a captured frame, replayed after its graph runs (Dynamo's
``SideEffects``): attribute writes on modules and objects, global writes, and mutations of
lists and dicts the frame read from outside. While tracing, later reads see the new values."""


class SideEffects:
    def __init__(self, root_globals: dict):
        self.attr_writes: dict = {}          # id(obj) -> (obj, source, {name: variable})
        self.globals_written: dict = {}
        self.root_globals = root_globals
        self.mutated_containers: list = []   # list/dict variables with a source

    def read_attr(self, obj, name):
        entry = self.attr_writes.get(id(obj))
        if entry is not None:
            return entry[2].get(name)
        return None

    def write_attr(self, tx, obj, source, name, value):
        key = id(obj)
        old = self.attr_writes.get(key)
        tx.output.on_undo(lambda: self._put(key, old))
        attrs = dict(old[2]) if old is not None else {}
        attrs[name] = value
        self.attr_writes[key] = (obj, source, attrs)

    def _put(self, key, entry):
        if entry is None:
            self.attr_writes.pop(key, None)
        else:
            self.attr_writes[key] = entry

    def write_global(self, tx, name, value):
        if tx.parent is not None and tx.f_globals is not self.root_globals:
            from .variables import Unsupported
            raise Unsupported(f"global write to {name!r} of another module")
        old = self.globals_written.get(name)
        had = name in self.globals_written

        def undo():
            if had:
                self.globals_written[name] = old
            else:
                self.globals_written.pop(name, None)
        tx.output.on_undo(undo)
        self.globals_written[name] = value

    def note_list(self, variable):
        if variable not in self.mutated_containers:
            self.mutated_containers.append(variable)

    note_dict = note_list

    def replay_lines(self, codegen) -> list[str]:
        """Python statements applying every side effect, in terms of the frame's L and G.

        Every new value is computed first, then all are stored, so a value read from a
        container or attribute that another side effect changes is read before that change.
        """
        values, stores = [], []

        def computed(expr):
            name = f"___new{len(values)}"
            values.append(f"{name} = {expr}")
            return name

        for variable in self.mutated_containers:
            if not variable.mutated:
                continue
            target = variable.source.expr
            if variable.python_type() is list:
                items = computed("[" + ", ".join(codegen.value(v) for v in variable.items) + "]")
                stores.append(f"{target}[:] = {items}")
            else:
                inner = ", ".join(f"{codegen.constant(k)}: {codegen.value(v)}"
                                  for k, v in variable.items.items())
                items = computed("{" + inner + "}")
                stores.append(f"{target}.clear(); {target}.update({items})")
        for obj, source, attrs in self.attr_writes.values():
            for name, value in attrs.items():
                stores.append(f"{source.expr}.{name} = {computed(codegen.value(value))}")
        for name, value in self.globals_written.items():
            stores.append(f"G[{name!r}] = {computed(codegen.value(value))}")
        return values + stores

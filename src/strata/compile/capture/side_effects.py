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
        """Python statements applying every side effect, in terms of the frame's L and G."""
        lines = []
        for variable in self.mutated_containers:
            if not variable.mutated:
                continue
            if variable.python_type() is list:
                items = ", ".join(codegen.value(v) for v in variable.items)
                lines.append(f"{variable.source.expr}[:] = [{items}]")
            else:
                inner = ", ".join(f"{codegen.constant(k)}: {codegen.value(v)}"
                                  for k, v in variable.items.items())
                lines.append(f"{variable.source.expr}.clear(); "
                             f"{variable.source.expr}.update({{{inner}}})")
        for obj, source, attrs in self.attr_writes.values():
            for name, value in attrs.items():
                lines.append(f"{source.expr}.{name} = {codegen.value(value)}")
        for name, value in self.globals_written.items():
            lines.append(f"G[{name!r}] = {codegen.value(value)}")
        return lines

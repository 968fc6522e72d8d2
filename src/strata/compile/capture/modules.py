"""``nn.Module`` values while tracing: attribute reads become graph inputs (parameters, buffers)
or guarded constants, and a call inlines ``Module.__call__``: pre-hooks, ``forward``, hooks.

Parameters and buffers are read through the module's own dicts (``L['self']._modules['lin']
._parameters['weight']``) as Dynamo's sources do, so the guard and the graph-input fetch are
dict look-ups, not ``Module.__getattr__`` calls.
"""

import inspect
import types

from ...nn.modules import module as module_mod
from .callables import UserFunctionVariable, UserMethodVariable
from .variables import ConstantVariable, TupleVariable, Unsupported, VariableTracker

_HOOK_DICTS = ("_forward_pre_hooks", "_forward_hooks", "_backward_hooks", "_backward_pre_hooks")
_GLOBAL_HOOK_DICTS = ("_global_forward_pre_hooks", "_global_forward_hooks",
                      "_global_backward_hooks", "_global_backward_pre_hooks")


class NNModuleVariable(VariableTracker):
    def __init__(self, module, source):
        self.module = module
        self.source = source

    def python_type(self):
        return type(self.module)

    def as_python_constant(self):
        return self.module

    def truth(self, tx):
        return True

    def getattr(self, tx, name):
        module, source = self.module, self.source
        overlay = tx.output.side_effects.read_attr(module, name)
        if overlay is not None:
            return overlay
        d = module.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if name in d.get(store, ()):
                value = d[store][name]
                return tx.wrap(value, source.attr(store).item(name))
        if name in d:
            return tx.wrap(d[name], source.attr(name))
        static = inspect.getattr_static(module, name, None)
        if isinstance(static, types.FunctionType):
            return UserMethodVariable(static, self)
        if isinstance(static, property):
            return UserFunctionVariable(static.fget).call(tx, [self], {})
        if isinstance(static, (staticmethod, classmethod)):
            return tx.wrap(getattr(module, name), None)
        if static is None and not hasattr(module, name):
            raise Unsupported(f"'{type(module).__name__}' object has no attribute '{name}'")
        return tx.wrap(getattr(module, name), source.attr(name))

    def unpack(self, tx):
        """Iterating a ModuleList/Sequential/ModuleDict, as their ``__iter__`` do."""
        modules = self.module.__dict__["_modules"]
        tx.output.guards.add_keys(self.source.attr("_modules"), list(modules))
        if isinstance(self.module, module_mod.Module) and type(self.module).__name__ == \
                "ModuleDict":
            return [ConstantVariable(k) for k in modules]
        return [self.getattr(tx, k) for k in modules]

    def getitem(self, tx, key):
        modules = self.module.__dict__["_modules"]
        tx.output.guards.add_keys(self.source.attr("_modules"), list(modules))
        if isinstance(key, slice):
            raise Unsupported("slicing a module container")
        if isinstance(key, str):
            return self.getattr(tx, key)
        found = self.module[key]
        for name, m in modules.items():
            if m is found:
                return self.getattr(tx, name)
        raise Unsupported("module container item")

    def length(self, tx):
        modules = self.module.__dict__["_modules"]
        tx.output.guards.add_keys(self.source.attr("_modules"), list(modules))
        return len(modules)

    def call(self, tx, args, kwargs):
        """``Module.__call__``: the hook dicts are guarded, pre-hooks and hooks are inlined."""
        module, guards = self.module, tx.output.guards
        if any(module.__dict__[name] for name in _HOOK_DICTS):
            for name in _HOOK_DICTS:
                guards.add_keys(self.source.attr(name), list(module.__dict__[name]))
        else:
            guards.add_no_hooks(self.source, _HOOK_DICTS)
        for name in _GLOBAL_HOOK_DICTS:
            hooks = getattr(module_mod, name)
            guards.add_keys_of_object(hooks, name, list(hooks))
            if hooks:
                raise Unsupported("global module hooks")
        if module._backward_hooks or module._backward_pre_hooks:
            raise Unsupported("module backward hooks")
        for hook_id, hook in module._forward_pre_hooks.items():
            hook_vt = tx.wrap(hook, self.source.attr("_forward_pre_hooks").item(hook_id))
            if hook_id in module._forward_pre_hooks_with_kwargs:
                out = hook_vt.call(tx, [self, TupleVariable(args),
                                        tx.dict_variable(kwargs)], {})
                if not out.is_constant() or out.as_python_constant() is not None:
                    items = out.unpack(tx)
                    args, kwargs = items[0].unpack(tx), dict(items[1].items)
            else:
                out = hook_vt.call(tx, [self, TupleVariable(args)], {})
                if not (out.is_constant() and out.as_python_constant() is None):
                    args = out.unpack(tx) if isinstance(out, TupleVariable) else [out]
        forward = inspect.getattr_static(module, "forward")
        if not isinstance(forward, types.FunctionType):
            raise Unsupported(f"{type(module).__name__}.forward is not a Python function")
        result = UserMethodVariable(forward, self).call(tx, list(args), kwargs)
        for hook_id, hook in module._forward_hooks.items():
            hook_vt = tx.wrap(hook, self.source.attr("_forward_hooks").item(hook_id))
            if hook_id in module._forward_hooks_with_kwargs:
                out = hook_vt.call(tx, [self, TupleVariable(args), tx.dict_variable(kwargs),
                                        result], {})
            else:
                out = hook_vt.call(tx, [self, TupleVariable(args), result], {})
            if not (out.is_constant() and out.as_python_constant() is None):
                result = out
        return result

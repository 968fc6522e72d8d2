"""``STRATA_COMPILE_DEBUG=1``: a folder per compiled frame, like ``TORCH_COMPILE_DEBUG``.

``<STRATA_COMPILE_DEBUG_DIR>/run_<time>-pid_<pid>/<n>_<function>/`` holds

- ``captured_graph.py``: the captured FX graph as a runnable script (random inputs of the
  example's sizes),
- ``guards.py``: the generated guard function, then each guard in words,
- ``frame.py``: the function that replaces the frame (graph call, side effects, resume call),
- ``timings.json``: seconds per stage (capture, backend).

AOT autograd writes its joint / forward / backward graphs, with the bytes saved for backward and
its own timings, beside these in ``<STRATA_COMPILE_DEBUG_DIR>/aot/`` (compile/aot/).
"""

import json
import os
import time
import types

from ... import config


class DebugWriter:
    def __init__(self):
        self.root = os.path.join(config.compile_debug_dir, time.strftime("run_%Y_%m_%d_%H_%M_%S")
                                 + f"-pid_{os.getpid()}")
        self.count = 0
        self.folder = None

    def _write(self, name, text):
        with open(os.path.join(self.folder, name), "w") as f:
            f.write(text)

    def on_graph(self, fn, gm, example_inputs):
        self.count += 1
        self.folder = os.path.join(self.root, f"{self.count:03d}_{fn.__code__.co_name}")
        os.makedirs(self.folder, exist_ok=True)
        self._write("captured_graph.py", runnable_source(gm, example_inputs))

    def on_compile(self, fn, entry):
        if entry.graph_module is None:
            return
        self._write("guards.py", entry.guard_src + "\n# guards:\n" +
                    "".join(f"#   {g}\n" for g in entry.guards.describe()))
        self._write("frame.py", entry.source)
        self._write("timings.json", json.dumps(entry.timings, indent=2))
        self.folder = None

    def on_skip(self, fn, reason):
        pass

    def on_recompile(self, fn, reasons):
        pass

    def on_hit(self, fn, entry):
        pass


def runnable_source(gm, example_inputs) -> str:
    """The captured graph as a script: imports for the globals it reads, ``forward``, and a
    run on random inputs of the example's sizes and dtypes (``python captured_graph.py``)."""
    code = gm.graph.python_code(root_module="self")
    imports = ["import strata"]
    for name, obj in code.globals.items():
        module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", "")
        if name in ("strata", "__builtins__") or not module or "<" in qualname or \
                module == "builtins":
            continue
        if isinstance(obj, types.ModuleType):
            imports.append(f"import {obj.__name__} as {name}")
        elif "." not in qualname:
            imports.append(f"from {module} import {qualname} as {name}")
    imports.append("from math import inf, nan  # noqa: F401")
    imports.append("NoneType = type(None)")
    args = []
    for t in example_inputs:
        if isinstance(t, int):
            args.append(repr(t))
        elif t.dtype.is_floating_point:
            args.append(f"strata.randn({tuple(t.shape)!r}, dtype=strata.{t.dtype.name})")
        else:
            args.append(f"strata.zeros({tuple(t.shape)!r}, dtype=strata.{t.dtype.name})")
    runner = ("\n\nif __name__ == \"__main__\":\n"
              f"    print(forward(None, {', '.join(args)}))\n")
    return "\n".join(imports) + "\n\n\n" + code.src.strip() + "\n" + runner

"""``STRATA_COMPILE_DEBUG=1``: AOT's graphs written to files, one folder per compiled graph.

``<compile_debug_dir>/aot/graph_<pid>_<n>/`` gets ``joint_graph.py``, ``forward_graph.py``,
``backward_graph.py`` (or ``inference_graph.py``): each readable, runnable source with the
user's lines as comments; ``saved_tensors.txt``, each value saved for backward and its bytes;
and ``timings.txt``, the seconds each stage took.
"""

import itertools
import os

_folder_numbers = itertools.count()


class DebugFolderWriter:
    """A ``graph_observers`` entry writing each stage's graph under ``root``."""

    def __init__(self, root: str):
        self.root = root
        self.folder = None

    def __call__(self, stage, gm, info):
        if stage in ("joint", "inference") or self.folder is None:
            self.folder = os.path.join(self.root, "aot",
                                       f"graph_{os.getpid()}_{next(_folder_numbers)}")
            os.makedirs(self.folder, exist_ok=True)
        self._write(f"{stage}_graph.py", gm.print_readable(print_output=False))
        if "seconds" in info:
            self._write("timings.txt", f"{stage}: {info['seconds']:.6f} s\n", mode="a")
        if stage == "backward":
            saved = info.get("saved_bytes", {})
            lines = [f"{name}: {size} bytes" for name, size in saved.items()]
            lines.append(f"total: {sum(saved.values())} bytes")
            self._write("saved_tensors.txt", "\n".join(lines) + "\n")

    def _write(self, name, text, mode="w"):
        with open(os.path.join(self.folder, name), mode) as f:
            f.write(text)

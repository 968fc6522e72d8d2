"""Recording a compiled graph's commands and replaying them with one ring record.

While a ``CommandRecording`` is the runtime's ``recording``, every command the runtime submits
is also kept as (opcode, payload, a0). ``finish`` writes the list, pickled after its u64 byte
count, into a host-visible buffer object; a replay is then one ``OP_EXEC_LIST`` record whose
``a0`` is that buffer's address, and at most one doorbell: the command processor runs the list
in order, as a GPU's command processor runs an indirect buffer (a CUDA graph's launch).
Every device tensor a recorded command names is kept alive, so no one else gets its memory.
A command that needs the host while it runs (a copy to or from host memory, a launch whose
output sizes depend on the data) cannot be replayed: ``problem`` names it.
"""

import pickle

from . import commands as C

_HOST_COMMANDS = ("copy H2D", "copy D2H", "copy staged")


class CommandRecording:
    """The commands submitted on the sim runtime between ``start`` and ``stop``."""

    def __init__(self, runtime):
        self.runtime = runtime
        self.commands, self.tensors = [], []
        self.problem, self.stream, self.list_buffer = None, None, None

    def start(self):
        if self.runtime.recording is not None:
            raise RuntimeError("sim: a graph is already being recorded")
        self.stream = self.runtime.current_stream()
        self.runtime.recording = self

    def stop(self):
        self.runtime.recording = None
        if self.problem is None and self.commands:
            data = pickle.dumps(self.commands, 5)
            driver = self.runtime.driver
            self.list_buffer = driver.alloc_bo(len(data) + 8, host=True)
            view = driver.map(self.list_buffer)
            view[:8] = len(data).to_bytes(8, "little")
            view[8:8 + len(data)] = data

    def command(self, opcode, payload, a0, name):
        if opcode == C.OP_LAUNCH_DYNAMIC or name in _HOST_COMMANDS:
            self.unsupported(f"a {name}" if name in _HOST_COMMANDS else
                             "a launch whose output sizes depend on the data")
        self.commands.append((opcode, bytes(payload), a0))

    def keep(self, tensor):
        self.tensors.append(tensor)

    def unsupported(self, what):
        self.problem = self.problem or what

    def copy_input(self, static, new):
        static.copy_(new)

    def replay(self):
        """Submit the recorded list as one ``OP_EXEC_LIST`` on the current stream."""
        if self.list_buffer is None:
            return
        rt = self.runtime
        stream = rt.current_stream()
        cross = []
        if stream is not self.stream:
            cross = [t._storage.block for t in self.tensors if t._storage.block is not None]
        seq = rt._submit(stream, C.OP_EXEC_LIST, b"", "graph replay", cross,
                         a0=self.list_buffer.addr)
        if rt.launch_blocking:
            rt.wait(stream.queue, seq, "launch blocking (graph replay)")

    def __del__(self):
        if self.list_buffer is not None and not self.runtime.driver._closed:
            self.runtime.driver.free_bo(self.list_buffer)

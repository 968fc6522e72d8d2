"""Graph replay for ``mode="reduce-overhead"``: the CUDA-graph idea, on opencl and sim.

A device runtime that can record offers ``new_recording()``: an object with ``start``/``stop``
around a run of the graph, ``problem`` (why it cannot be replayed, or None), ``copy_input``
and ``replay`` (backends/opencl/graphs.py, backends/sim/graphs.py).
"""

import warnings


class ReplayedGraph:
    """``mode="reduce-overhead"``: the first call runs the graph on static copies of its inputs
    while recording every command; each later call copies the new inputs into those static
    buffers and replays the recording (opencl: one batch of enqueues with arguments set at
    recording; sim: one ring record pointing to the recorded command list).

    As with CUDA graphs, the outputs are the recording's own tensors: a replay overwrites what
    the previous call returned. A graph that copies to or from the host while recording (an op
    that checks indices on the host, say) is not replayed: it warns once and runs normally, as
    does a call whose arguments do not match the recording's (``_same_kind``)."""

    def __init__(self, call, new_recording):
        self._call, self.new_recording = call, new_recording
        self.recording, self.static_inputs, self.outputs = None, None, None
        self.recorded_args = None
        self.replays = 0

    def __call__(self, args):
        if self.recording is None:
            return self._record(args)
        if self.recording.problem is not None or not self._same_kind(args):
            return self._call(args)
        for static, new in zip(self.static_inputs, args):
            if static is not None and static is not new:
                self.recording.copy_input(static, new)
        self.recording.replay()
        self.replays += 1
        return list(self.outputs)

    def _same_kind(self, args):
        """Whether ``args`` match the recording: tensors of the same shape, dtype and device
        (their values are copied in), every other argument equal (it was baked in)."""
        for static, recorded, new in zip(self.static_inputs, self.recorded_args, args):
            if static is None:
                if hasattr(new, "_storage") or (new is not recorded and new != recorded):
                    return False
            elif not hasattr(new, "_storage") or new.shape != static.shape or \
                    new.dtype != static.dtype or new.device != static.device:
                return False
        return len(args) == len(self.recorded_args)

    def _record(self, args):
        self.recorded_args = [None if hasattr(a, "_storage") else a for a in args]
        self.static_inputs = [a.clone() if hasattr(a, "_storage") else None for a in args]
        static_args = [s if s is not None else a for s, a in zip(self.static_inputs, args)]
        self.recording = self.new_recording()
        self.recording.start()
        try:
            self.outputs = self._call(static_args)
        finally:
            self.recording.stop()
        if self.recording.problem is not None:
            warnings.warn(f"strata.compile: mode='reduce-overhead' does not replay this graph: "
                          f"it makes {self.recording.problem} (a sync point)", stacklevel=2)
            self.recording.tensors.clear()
        return list(self.outputs)

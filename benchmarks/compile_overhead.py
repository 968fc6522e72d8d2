"""What a compiled call costs on the guard-hit path, beyond the graph's own work, and how long
capture + AOT take for the tiny GPT's forward+backward.

    python benchmarks/compile_overhead.py

1. A 10-parameter module (5 Linear layers) whose captured graph is replaced by a stub: the
   time of a compiled call is then all overhead (bind arguments, run the generated guard
   function, fetch the graph inputs, unpack outputs). Target: <= 15 us.
2. Capture + AOT autograd (``aot_eager``) of a 2-layer, d_model=128 transformer LM forward and
   backward, as timed by the compiled frame itself on its first call. Target: <= 1 s.
The same overhead is measured for torch.compile (a stub backend on the same module), each in
fresh processes, interleaved. Medians of repeated runs; the machine may be shared, so read them
as rough numbers.
"""

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))

import strata  # noqa: E402


def _median_us(fn, repeat=2000):
    samples = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(repeat):
            fn()
        samples.append((time.perf_counter() - start) / repeat * 1e6)
    return statistics.median(samples)


def guard_hit_overhead(torch):
    """The graph is replaced by a stub returning its precomputed outputs, so what is timed is
    everything but the graph's own work: binding, the guard function, fetching the graph's
    inputs, unpacking its outputs. ``torch`` is strata or PyTorch (the same code)."""
    nn = torch.nn
    model = nn.Sequential(*[nn.Linear(4, 4) for _ in range(5)])

    def stub_backend(gm, example_inputs):
        outputs = gm(*example_inputs)
        return lambda *inputs: outputs

    compiled = torch.compile(model, backend=stub_backend)
    x = torch.randn(2, 4)
    with torch.no_grad():
        compiled(x)
        whole = _median_us(lambda: compiled(x), repeat=20000)
        stub = _median_us(lambda: (lambda *inputs: None)(x, x, x, x, x, x, x, x, x, x, x),
                          repeat=20000)
    return whole - stub


def _overhead_in_fresh_process(lib):
    import subprocess
    out = subprocess.run([sys.executable, __file__, "--overhead-only", lib], check=True,
                         capture_output=True, text=True).stdout
    return float(out.split()[-1])


def capture_and_aot_seconds():
    """Seconds of capture and of the backend (AOT autograd's trace, joint graph, partition), as
    the compiled frame measured them on its first call, then one compiled training step."""
    from char_transformer import CharTransformer
    strata.manual_seed(0)
    model = CharTransformer(65, context=64, d_model=128, nhead=4, layers=2, dropout=0.0)
    idx = strata.randint(0, 65, (4, 64))
    compiled = strata.compile(model, backend="aot_eager")
    compiled(idx).sum().backward()
    (cache,) = compiled.__dict__["_strata_compile_context"].caches.values()
    timings = cache.entries[0].timings
    start = time.perf_counter()
    compiled(idx).sum().backward()
    return timings["capture_s"], timings["backend_s"], time.perf_counter() - start


if __name__ == "__main__":
    if sys.argv[1:2] == ["--overhead-only"]:
        lib = strata if sys.argv[2] == "strata" else __import__("torch")
        print(guard_hit_overhead(lib))
        sys.exit(0)
    ours, theirs = [], []
    for _ in range(3):   # interleaved fresh processes
        ours.append(_overhead_in_fresh_process("strata"))
        theirs.append(_overhead_in_fresh_process("torch"))
    print(f"guard-hit call of a 10-parameter module, graph work excluded: strata "
          f"{statistics.median(ours):.1f} us, torch.compile {statistics.median(theirs):.1f} us "
          "(target <= 15 us)")
    capture_s, aot_s, step_s = capture_and_aot_seconds()
    print(f"tiny GPT (2 layers, d128) fwd+bwd: capture {capture_s:.2f} s + AOT {aot_s:.2f} s = "
          f"{capture_s + aot_s:.2f} s (target <= 1 s); then a compiled step {step_s * 1e3:.0f} ms")

"""Where the microseconds of one small op go, layer by layer (issue 11 §1): each row times a
deeper entry point of the same call, so the differences are the layers' own costs.

    python -m benchmarks.overhead        # strata alone; no PyTorch needed

Rows for ``x + y`` on 1-element float32 tensors: the whole call; the op called through the
dispatcher's ``call`` (key set, cached kernel selection, the autograd decision), which the
operator itself goes past (Note [Operator fast path]: it looks the kernel up by key set), so
this row reads above the whole call; the CPU kernel called directly (the whole call less it is
the operator's own cost); NumPy's ``np.add`` plus wrapping its result as a tensor (the kernel's
own policy: dtypes, checks, layout, NumPy's error state); wrapping alone (the Tensor object;
its Storage is made on first need, Note [Lazy storage]). With
``requires_grad``, the autograd record is split into its parts; the record runs them inlined in
one frame (Note [One-frame record]), the rows time their out-of-line equivalents, so each part
reads a frame's cost high. Times are thread CPU time, so waiting for a core on a shared machine
is not counted.

    python -m benchmarks.overhead --gc [torch]   # the garbage collector's share of an RL episode

``--gc`` runs ``benchmarks.small_models``'s RL episode (one thread) and reports, per episode
(the mean of 10, so the collections are counted), the thread CPU time, the time inside
collections and how many ran per generation (Note [Frozen import objects] in
``strata/__init__.py``; run it with ``STRATA_GC_FREEZE=0`` to see the unfrozen cost). Given
``torch``, the same for PyTorch.

    python -m benchmarks.overhead --phases [torch]   # the RL episode, phase by phase

``--phases`` times each phase of the same episode (policy forward, ``Categorical``, sampling,
``log_prob``, backward, the Adam step) in thread CPU time, the median over 7 episodes, for
strata or, given ``torch``, for PyTorch (one thread each, as ``benchmarks.small_models``).
"""

import gc
import statistics
import sys
import time
import timeit

import numpy as np


def _best_us(fn, number=20000, repeat=7):
    """The fastest of ``repeat`` batches, in this thread's CPU time: on a shared machine the
    time spent waiting for a core is not counted, and the other batches carry the rest."""
    for _ in range(200):
        fn()
    return min(timeit.repeat(fn, number=number, repeat=repeat, timer=time.thread_time)) \
        / number * 1e6


def breakdown(strata):
    from strata._tensor import from_array
    from strata.autograd import derivatives
    from strata.autograd.graph import set_history
    from strata.autograd.kernel import _input_edges
    from strata.dispatch import dispatcher as DP
    from strata.dispatch.keys import FUNC_INDEX, NB
    from strata.ops import pointwise as P

    a, b = np.ones(1, np.float32), np.ones(1, np.float32)
    x, y = strata.tensor(a), strata.tensor(b)
    xg = strata.tensor(a, requires_grad=True)
    below_autograd = (1 << (NB + FUNC_INDEX["Autograd"])) - 1
    cpu_kernel = DP._select(P.add, x._keyset & below_autograd)[0].fn
    dt = x.dtype
    rows = [
        ("x + y (whole call)", _best_us(lambda: x + y)),
        ("P.add(x, y, 1): through call() (x + y goes past it)",
         _best_us(lambda: P.add(x, y, 1))),
        ("CPU kernel called directly", _best_us(lambda: cpu_kernel(x, y, 1))),
        ("np.add + wrap as a tensor", _best_us(lambda: from_array(np.add(a, b), dt))),
        ("wrap as a tensor (its Storage is lazy)", _best_us(lambda: from_array(a, dt))),
        ("np.add alone", _best_us(lambda: np.add(a, b))),
    ]
    deriv = derivatives.lookup(P.add)
    args = (xg, y, 1)
    out = x + y
    edges, metas, needs = _input_edges(deriv, args)

    def node():
        return deriv.node_class(args)(deriv, edges, metas, needs)
    made = node()
    rows += [
        ("xg + y, xg requires grad (whole call)", _best_us(lambda: xg + y)),
        ("  record: edges of the inputs", _best_us(lambda: _input_edges(deriv, args))),
        ("  record: Node construction", _best_us(node)),
        ("  record: saved variables", _best_us(
            lambda: deriv.save_into(list(args), args, needs, False))),
        ("  record: output history (grad_fn)", _best_us(lambda: set_history(out, made, 0))),
    ]
    return rows


def gc_breakdown(module, episodes=10):
    """Per episode of the RL loop: (thread CPU ms, ms inside collections, collections per
    generation), after two warm-up episodes."""
    from .small_models import _rl_episode
    episode = _rl_episode(module)
    episode()
    episode()
    spent, counts, started = [0.0], [0, 0, 0], [0.0]

    def on_collection(phase, info):
        if phase == "start":
            started[0] = time.thread_time()
        else:
            spent[0] += time.thread_time() - started[0]
            counts[info["generation"]] += 1
    gc.callbacks.append(on_collection)
    try:
        t0 = time.thread_time()
        for _ in range(episodes):
            episode()
        total = time.thread_time() - t0
    finally:
        gc.callbacks.remove(on_collection)
    return total / episodes * 1e3, spent[0] / episodes * 1e3, [c / episodes for c in counts]


def phase_breakdown(module, episodes=7):
    """{phase: median thread CPU ms per episode} for the RL episode, after two warm-up ones."""
    from .small_models import _rl_episode
    episode = _rl_episode(module)
    episode()
    episode()
    samples = []
    for _ in range(episodes):
        spent, current = {}, [None, time.thread_time()]

        def mark(phase, spent=spent, current=current):
            now = time.thread_time()
            if current[0] is not None:
                spent[current[0]] = spent.get(current[0], 0.0) + now - current[1]
            current[0], current[1] = phase, time.thread_time()
        episode(mark)
        samples.append(spent)
    return {phase: statistics.median(s[phase] for s in samples) * 1e3 for phase in samples[0]}


def _one_thread(name):
    import importlib

    from threadpoolctl import threadpool_limits
    module = importlib.import_module(name)
    threadpool_limits(1)
    module.set_num_threads(1)
    return module


def main():
    if sys.argv[1:2] == ["--phases"]:
        phases = phase_breakdown(_one_thread(sys.argv[2] if len(sys.argv) > 2 else "strata"))
        for phase, ms in phases.items():
            print(f"| {phase} | {ms:.2f} ms |")
        print(f"| all phases (sum of medians) | {sum(phases.values()):.2f} ms |")
        return
    if sys.argv[1:2] == ["--gc"]:
        total, in_gc, per_gen = gc_breakdown(
            _one_thread(sys.argv[2] if len(sys.argv) > 2 else "strata"))
        print(f"RL episode: {total:.1f} ms thread CPU time, {in_gc:.2f} ms in the garbage "
              f"collector ({in_gc / total:.1%}); collections per episode by generation: "
              f"{', '.join(f'{n:.1f}' for n in per_gen)}")
        return
    import strata
    for name, us in breakdown(strata):
        print(f"| {name} | {us:.2f} us |")


if __name__ == "__main__":
    main()

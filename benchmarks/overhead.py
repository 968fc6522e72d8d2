"""Where the microseconds of one small op go, layer by layer (issue 11 §1): each row times a
deeper entry point of the same call, so the differences are the layers' own costs.

    python -m benchmarks.overhead        # strata alone; no PyTorch needed

Rows for ``x + y`` on 1-element float32 tensors: the whole call; the op called directly (the
frontend's ``Tensor.__add__`` is the difference); the CPU kernel called directly (the
dispatcher: key set, cached kernel selection, the autograd decision); NumPy's ``np.add`` plus
wrapping its result as a tensor (the kernel's own policy: dtypes, checks, layout); wrapping
alone (the Tensor object; its Storage is made on first need, Note [Lazy storage]). With
``requires_grad``, the autograd record is split into its parts; the record runs them inlined in
one frame (Note [One-frame record]), the rows time their out-of-line equivalents, so each part
reads a frame's cost high. Times are thread CPU time, so waiting for a core on a shared machine
is not counted.
"""

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
        ("P.add(x, y, 1): dispatcher and below", _best_us(lambda: P.add(x, y, 1))),
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
            lambda: deriv.save_inputs(made, args, needs, False))),
        ("  record: output history (grad_fn)", _best_us(lambda: set_history(out, made, 0))),
    ]
    return rows


def main():
    import strata
    for name, us in breakdown(strata):
        print(f"| {name} | {us:.2f} us |")


if __name__ == "__main__":
    main()

"""Which aten ops still run their eager kernel (``Fallback``) in inductor's compiled graphs.

    PYTHONPATH=src python tests/compile/fallback_census.py [--grad] [--models] [--filter SUBSTR]

Compiles every op-db sample (tests/op_samples/) with ``strata.compile`` and, with ``--models``,
the compiled steps of benchmarks/compile.py (MLP, CNN, tiny GPT); each graph AOT autograd makes
is lowered as ``compile_fx`` lowers it, and the ``Fallback(...)`` lines of its post-fusion IR
(the debug output's ir_post_fusion.txt) are counted per op. Only the lowering runs (no C is
built): the graphs then run as aten graphs. ``--grad`` also compiles each float sample's
backward (inputs requiring grad, the outputs summed). Prints one line per op, most frequent
first, and the samples whose capture or lowering raised.
"""

import argparse
import collections
import os
import re
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))                      # tests/: op_samples
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))     # the root: benchmarks

import strata
from strata.compile.aot import aot_module_simplified, min_cut_rematerialization_partition
from strata.compile.inductor.graph import GraphLowering

FALLBACK = re.compile(r"^buf\d+ = Fallback\((.*)\)$", re.MULTILINE)
fallbacks = collections.Counter()
where = collections.defaultdict(set)
failures = []
current = [""]


def lowering_only(gm, example_inputs):
    """The inductor backend with a compiler that lowers each graph, records its Fallbacks and
    runs the aten graph itself."""
    def compiler(g, inputs):
        text = GraphLowering(g, inputs, "cpu").run().post_fusion_text()
        for name in FALLBACK.findall(text):
            fallbacks[name] += 1
            where[name].add(current[0])

        def run(*args):
            out = g(*args)
            return list(out) if isinstance(out, (tuple, list)) else [out]
        return run
    return aot_module_simplified(gm, example_inputs, fw_compiler=compiler, bw_compiler=compiler,
                                 partition_fn=min_cut_rematerialization_partition)


def _tensor(x, grad):
    t = strata.tensor(x)
    if grad and x.dtype.kind == "f":
        t.requires_grad_(True)
    return t


def census_samples(grad, name_filter):
    from op_samples import all_samples
    for qualname, samples in sorted(all_samples().items()):
        if name_filter and name_filter not in qualname:
            continue
        for i, sample in enumerate(samples):
            current[0] = f"{qualname}[{i}]"
            if grad and not any(isinstance(x, np.ndarray) and x.dtype.kind == "f"
                                for x in sample.inputs):
                continue
            strata._dynamo.reset()
            compiled = strata.compile(lambda *xs, f=sample.fn: f(strata, *xs),
                                      backend=lowering_only)
            try:
                inputs = [_tensor(x, grad) if isinstance(x, np.ndarray) else x
                          for x in sample.inputs]
                out = compiled(*inputs)
                if grad:
                    outs = out if isinstance(out, (tuple, list)) else (out,)
                    total = sum(o.float().sum() for o in outs
                                if isinstance(o, strata.Tensor) and o.requires_grad)
                    if isinstance(total, strata.Tensor):
                        total.backward()
            except Exception as e:  # noqa: BLE001  (a bad-input sample's error, a capture limit)
                failures.append((current[0], f"{type(e).__name__}: {str(e)[:100]}"))


def census_models():
    from benchmarks.compile import _train_step
    from benchmarks.training import _cnn, _mlp, _transformer
    for name, build in (("MLP", _mlp), ("CNN", _cnn), ("tiny GPT", _transformer)):
        current[0] = name
        strata._dynamo.reset()
        original = strata.compile
        strata.compile = (lambda fn, backend=None, compile=original, **kw:
                          compile(fn, backend=lowering_only))
        try:
            step = _train_step(strata, True, build)
        finally:
            strata.compile = original
        step()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grad", action="store_true")
    parser.add_argument("--models", action="store_true")
    parser.add_argument("--no-samples", action="store_true")
    parser.add_argument("--filter", default="")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if not args.no_samples:
        census_samples(args.grad, args.filter)
    if args.models:
        census_models()
    for name, count in fallbacks.most_common():
        places = sorted(where[name])
        print(f"{count:5d}  {name}  ({len(places)} samples: {', '.join(places[:3])}"
              f"{', ...' if len(places) > 3 else ''})")
    print(f"{sum(fallbacks.values())} Fallback steps, {len(fallbacks)} ops; "
          f"{len(failures)} samples raised")
    for place, error in failures:
        print(f"  raised: {place}: {error}")


if __name__ == "__main__":
    main()

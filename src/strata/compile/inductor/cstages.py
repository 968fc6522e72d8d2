"""Staged chains: a flat kernel's loop laid out in blocks, one vector loop per stage of a chain
of vector-math calls. cprinter.py prints an element's statements; this module only rearranges
them, so a kernel that is no such chain keeps its one loop.

Note [Staged chains]: a flat vector loop whose element is a chain of vector-math calls (the
11-op benchmark chain: sigmoid's exp, then log, then tanh) waits on each call's latency, the
out-of-order window holding little more than one element's chain: 2.0 ns an element on one
thread, where the same three calls on independent values took 1.3. So such a loop runs in
blocks of STAGE_BLOCK elements, each block one vector loop per stage: a stage ends after each
vector-math call, and a value a later stage reads goes through a block array in L1 (Inductor's
loop fission of a long chain, in small). Every element takes the same statements in the same
kind of lane (AVX-512 body, AVX2 or scalar tail: blocks are whole vectors from the chunk's
start), so the same bits; tests/compile/test_inductor.py checks them against the one-loop
kernel. 11-op chain on one thread, 4M float32: 8.6 -> 5.6 ms.
"""

import re

from .cpreamble import VECTOR_MATH

STAGE_BLOCK = 256
STAGE_PAD = 16
STAGE_MIN_CALLS = 2     # calls one after the other on one element's path (gelu's derivative:
# erf and exp side by side, ran 245-280 -> 300 us staged over 0.5M float32)
_VECTOR_CALL = re.compile(r"\b(?:strata_expf|strata_erff|(?:" + "|".join(VECTOR_MATH) + r")f?)\(")
_STATEMENT = re.compile(r"^\s*const (float|double) (t\d+) = (.*);$")
_STORE = re.compile(r"^\s*[A-Za-z_]\w*\[[^=]*\] = t\d+;$")
_TEMP = re.compile(r"\bt\d+\b")


def _depth(statements):
    """The most vector-math calls on one path to any value of ``statements``, or None where a
    line is neither a float/double value nor a store (half conversions, integers, reductions:
    such a kernel is left as it is)."""
    depth = {}
    for line in statements:
        match = _STATEMENT.match(line)
        if match:
            depth[match.group(2)] = max((depth.get(t, 0) for t in
                                         _TEMP.findall(match.group(3))), default=0) + \
                bool(_VECTOR_CALL.search(match.group(3)))
        elif not _STORE.match(line):
            return None
    return max(depth.values(), default=0)


def _stages(statements):
    """``statements`` cut after each vector-math call; what follows the last call (a few cheap
    ops and the stores) joins its stage."""
    stages, current = [], []
    for line in statements:
        current.append(line.strip())
        if _VECTOR_CALL.search(line):
            stages.append(current)
            current = []
    stages[-1] += current
    return stages


def staged_loop(statements, index_lines):
    """The lines of a flat loop over ``[x_lo, x_hi)`` computing ``statements`` (one element's,
    after its ``index_lines``) in stages, or None where they are not such a chain."""
    depth = _depth(statements)
    if depth is None or depth < STAGE_MIN_CALLS:     # independent calls overlap anyway
        return None
    stages = _stages(statements)
    types, defined_in = {}, {}
    for number, stage in enumerate(stages):
        for line in stage:
            match = _STATEMENT.match(line)
            if match:
                types[match.group(2)] = match.group(1)
                defined_in[match.group(2)] = number
    crossing = {}        # a temporary read by a later stage -> the stages that read it
    for number, stage in enumerate(stages):
        for line in stage:
            for name in _TEMP.findall(line.split(" = ", 1)[-1]):
                if name in defined_in and defined_in[name] < number:
                    crossing.setdefault(name, set()).add(number)
    end = f"x_hi - x_block < {STAGE_BLOCK} ? x_hi : x_block + {STAGE_BLOCK}"
    lines = [f"    for (int64_t x_block = x_lo; x_block < x_hi; x_block += {STAGE_BLOCK}) {{",
             f"        const int64_t x_end = {end};"]
    # each array a cache line longer than the block: arrays whose addresses differ by a
    # multiple of 4 KiB stall one another's loads (Note [4K aliasing] in backends/cpu/array.py;
    # 1024-float blocks ran the chain at 5.5 ms against 256's 2.9)
    lines += [f"        {types[name]} block_{name}[{STAGE_BLOCK + STAGE_PAD}];"
              for name in sorted(crossing)]
    index = ["            " + line.strip() for line in index_lines]
    for number, stage in enumerate(stages):
        lines += ["        #pragma omp simd",
                  "        for (int64_t x = x_block; x < x_end; x++) {", *index]
        lines += [f"            const {types[name]} {name} = block_{name}[x - x_block];"
                  for name in sorted(crossing) if number in crossing[name]]
        lines += ["            " + line for line in stage]
        lines += [f"            block_{name}[x - x_block] = {name};"
                  for name in sorted(crossing) if defined_in[name] == number]
        lines.append("        }")
    lines.append("    }")
    return lines

"""Every environment variable strata reads, read once, here.

Other modules import the values from this module instead of touching ``os.environ``, so a
reader finds every knob in one file.
"""

import os
import warnings


def _flag(name: str, default: str = "0") -> bool:
    value = os.environ.get(name, default)
    if value not in ("0", "1"):
        warnings.warn(f"{name} should be 0 or 1, got {value!r}; using {default}")
        return default == "1"
    return value == "1"


# Print every dispatcher call and redispatch (like TORCH_SHOW_DISPATCH_TRACE).
show_dispatch_trace: bool = _flag("STRATA_SHOW_DISPATCH_TRACE")
# Leave glibc's malloc settings alone (by default the CPU backend keeps freed kernel buffers
# mapped; see Note [CPU allocations] in backends/cpu/array.py).
no_malloc_tuning: bool = _flag("STRATA_NO_MALLOC_TUNING")
# Build and use the CPU backend's few C kernels (backends/cpu/native.py); 0 keeps every CPU
# kernel on NumPy.
native_kernels: bool = _flag("STRATA_NATIVE_KERNELS", "1")
# Run BLAS products and generated kernels on the C thread pool that spins a while between loops
# (Note [Native pool] in backends/cpu/native_pool.py); 0 keeps them on the Python pool.
native_pool: bool = _flag("STRATA_NATIVE_POOL", "1")
# Replay a compiled CPU graph's kernels and products from one C call once its row tiles are
# settled (Note [Graph programs] in compile/inductor/plan.py); 0 keeps the Python wrapper.
graph_programs: bool = _flag("STRATA_GRAPH_PROGRAMS", "1")
# A graph program's buffers share one arena, each placed over buffers no longer read (Note
# [Planned buffers] in compile/inductor/plan.py); 0 gives each its own allocation.
planned_buffers: bool = _flag("STRATA_PLANNED_BUFFERS", "1")
# The BLAS of the products strata drives itself (Note [BLAS provider] in backends/cpu/blas.py):
# "auto" (MKL where the mkl wheel is installed, else NumPy's OpenBLAS), "mkl" or "openblas".
blas: str = os.environ.get("STRATA_BLAS", "auto").strip().lower() or "auto"
if blas not in ("auto", "mkl", "openblas"):
    warnings.warn(f"STRATA_BLAS should be auto, mkl or openblas, got {blas!r}; using auto")
    blas = "auto"
# Move the objects alive at the end of ``import strata`` (modules, op tables, kernels) out of the
# garbage collector's sight (Note [Frozen import objects] in __init__.py); 0 leaves them in.
gc_freeze_at_import: bool = _flag("STRATA_GC_FREEZE", "1")
# Threads for CPU work (strata's kernel pool and BLAS); unset: see Note [Default thread count] in
# backends/cpu/threads.py. OMP_NUM_THREADS counts too, as it does for PyTorch.
def _threads():
    for name in ("STRATA_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(name)
        if value is not None:
            if value.isdigit() and int(value) > 0:
                return int(value)
            warnings.warn(f"{name} should be a positive integer, got {value!r}; ignored")
    return None


num_threads: int | None = _threads()
# The system C compiler for those kernels, and where their built libraries are kept.
c_compiler: str = os.environ.get("CC", "cc")
cache_dir: str = os.environ.get("STRATA_CACHE_DIR") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "strata")

# The script ``strata run`` runs, for its spawn/forkserver children (Note [Script as __main__]
# in cli.py; the runner sets it).
run_script_env = "STRATA_RUN_SCRIPT"
run_script: str = os.environ.get(run_script_env, "")

# --- the sim accelerator (backends/sim) ---------------------------------------------------------

def _parse_size(text: str):
    """Bytes of a size such as ``2G``, ``512M``, ``64K``, ``65536`` (None if malformed)."""
    text = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    try:
        return int(float(text[:-1] if scale > 1 else text) * scale)
    except ValueError:
        return None


def _bytes(name: str, default: str) -> int:
    value = _parse_size(os.environ.get(name, default))
    if value is None or value <= 0:
        warnings.warn(f"{name} should be a size like 2G or 512M, got "
                      f"{os.environ.get(name)!r}; using {default}")
        value = _parse_size(default)
    return value


def _choice(name: str, default: str, choices: tuple) -> str:
    value = os.environ.get(name, default)
    if value not in choices:
        warnings.warn(f"{name} should be one of {', '.join(choices)}, got {value!r}; "
                      f"using {default}")
        return default
    return value


# Make every device launch synchronous, so a kernel error is raised at the launching line
# (like CUDA_LAUNCH_BLOCKING).
launch_blocking: bool = _flag("STRATA_LAUNCH_BLOCKING")
# How the host waits for the sim device: spin on the completion fence then back off ("poll"),
# or sleep until the device raises its interrupt eventfd ("interrupt").
sim_sync: str = _choice("STRATA_SIM_SYNC", "poll", ("poll", "interrupt"))
# Size of the sim device's memory (a shared mapping; pages are only touched when used).
sim_memory: int = _bytes("STRATA_SIM_MEMORY", "2G")
# Size of the host memory the sim device can reach directly (pinned memory, copy staging).
sim_host_memory: int = _bytes("STRATA_SIM_HOST_MEMORY", "4G")


def _seconds(name: str, default: str) -> float:
    try:
        value = float(os.environ.get(name, default))
    except ValueError:
        value = -1.0
    if not value >= 0:
        warnings.warn(f"{name} should be a number of seconds (0: never), got "
                      f"{os.environ.get(name)!r}; using {default}")
        value = float(default)
    return value


# The sim watchdog: a wait for the device raises once the awaited queue has completed nothing
# for this many seconds (a stopped or hung device); 0 waits forever.
sim_timeout: float = _seconds("STRATA_SIM_TIMEOUT", "60")

# --- strata.distributed -------------------------------------------------------------------------

# What the launcher (``strata run --nproc-per-node``, torchrun, mpiexec's hydra) told this rank.
distributed_env: dict = {name: os.environ[name] for name in (
    "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
    "MPI_LOCALRANKID", "MPI_LOCALNRANKS", "PMI_RANK", "PMI_SIZE", "TORCHELASTIC_RUN_ID",
    "OMP_NUM_THREADS")
    if name in os.environ}
# Exchange a small header (op, dtype, shape) before every collective, so that ranks calling
# different collectives or shapes get an error instead of corrupt data (costs one tiny allgather).
distributed_check_collectives: bool = _flag("STRATA_DISTRIBUTED_CHECK_COLLECTIVES", "1")
# Where a rank of a ``strata run --nproc-per-node`` job writes why it failed (set by the
# launcher, which prints those files once mpiexec returns: a rank's last lines can be lost when
# MPI_Abort ends the job before mpiexec forwarded them).
distributed_error_dir: str | None = os.environ.get("STRATA_DISTRIBUTED_ERROR_DIR")

# --- checkpoints ---------------------------------------------------------------------------------

# fsync each checkpoint (and its directory) before and after the rename that publishes it, so a
# save survives a power cut. Off by default, as in torch.save: it costs ~1 s per 480 MiB, and the
# rename alone already keeps the previous checkpoint safe from a killed or crashing process.
checkpoint_fsync: bool = _flag("STRATA_CHECKPOINT_FSYNC")

# --- the OpenCL device (backends/opencl) --------------------------------------------------------
# Which OpenCL device `opencl` (index 0) is: the first whose "<platform> <device>" name contains
# this text, case-insensitive (empty: every device, in platform order).
opencl_device: str = os.environ.get("STRATA_OPENCL_DEVICE", "")
# Whether the runtime gives a guarded one-dimensional kernel its work-group size (Note
# [Work-group sizes] in backends/opencl/runtime.py): "1" always, "0" never, unset: on every
# driver but PoCL's.
opencl_group_sizes: str = os.environ.get("STRATA_OPENCL_GROUP_SIZES", "")

# --- the compiler (compile/) ---------------------------------------------------------------------
# What strata.compile logs (like TORCH_LOGS): a comma-separated subset of graph_breaks,
# recompiles, guards, graph_code.
compile_logs: frozenset = frozenset(
    name.strip() for name in os.environ.get("STRATA_LOGS", "").split(",") if name.strip())
# Write a folder per compiled frame (graph, guards, AOT graphs, timings) under compile_debug_dir.
compile_debug: bool = _flag("STRATA_COMPILE_DEBUG")
compile_debug_dir: str = os.environ.get("STRATA_COMPILE_DEBUG_DIR", "strata_compile_debug")

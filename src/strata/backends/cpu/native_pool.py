"""A thread pool in C for the work that needs no Python: BLAS calls and generated C kernels.

Note [Native pool]: the Python pool (``array.parallel_for``) hands a loop's chunks to threads
that sleep in a queue and take the GIL between chunks. On the 2-core VM of docs/performance.md
waking one costs ~20 us (p50; 40 us p90), and the GIL passes back and forth around each chunk,
so a product split over two threads ran 10-35% slower than OpenBLAS's own two threads (a
1024x128 @ 128x128 product: 263 us against 174 us, 330 us on one thread), and a kernel below
256K elements was not worth splitting at all. PyTorch's OpenMP threads spin for a while after
each parallel region, so the next region starts in about a microsecond.

This pool does the same in C: after its last chunk a worker spins on a counter for
``SPIN_MICROSECONDS`` (pausing, and yielding its core to any other runnable thread every few
hundred spins), then sleeps on a condition variable. A loop is published by bumping the counter;
the caller drains chunks too, then waits only for chunks already taken: a worker another
process keeps off its core delays a loop by the one chunk it holds, never by a chunk it has not
taken (Note [CPU parallel_for] keeps that rule for the Python pool; OpenMP's closing barrier
waits for every thread). ctypes drops the GIL for the call, so Python threads keep running.

Note [Chunk affinity]: each thread owns a run of a loop's consecutive chunks (the caller the
first, worker w the (w + 1)-th) and takes its own in order before any of the others' (which it
then takes from their counters, so a late thread still delays the loop by one chunk at most).
Taken in turns, from one counter, a buffer's chunks went to whichever thread came first, so
consecutive loops over the same buffers (an op, then its consumer; the same op in a loop) read
data that the other core's L2 (2 MB here) held: ``sigmoid_backward`` over 0.5M float32 ran
127 us on two threads (torch 64), ``x * x`` 110 us (torch 73); with the runs owned, 76 and
70 us, and the eager CNN step ~5% faster. (In C, two threads over halves of 4 MB: 47 us a
loop when each keeps its half, 118 when they swap.)

Its tasks are C functions ``task(context, lo, hi)``: ``strata_gemms`` runs a table of BLAS
calls (a product's blocks, Note [Parallel GEMM] in linalg.py, or two independent products side
by side) through NumPy's own OpenBLAS (its CBLAS address from blas.py), and every generated
function of pointers and int64s ending with ``lo, hi`` has a task entry (Note [Task entries]
in native.py) that ``parallel_call`` runs. With no C compiler, no OpenBLAS,
``STRATA_NATIVE_KERNELS=0`` or ``STRATA_NATIVE_POOL=0`` the callers keep the Python pool.
"""

import ctypes
import os
import threading

import numpy as np

from ... import config
from . import array, blas, native

# A training step's next product or kernel usually comes within this. At 200 us a tiny GPT's
# eager step found the workers asleep often enough that its products and kernels paid the wake
# (a batched product of attention 500 us after the previous loop: 144-175 us, 100 us with the
# worker still spinning): 1000 us read
# 27.4 against 29.5 ms a step (three fresh processes each; the MLP 2.5 against 2.9, the
# transformer 35 against 44; the CNN and 4M-element pointwise ops unchanged). libgomp, under
# PyTorch, spins ~300K iterations (GOMP_SPINCOUNT) before it sleeps.
SPIN_MICROSECONDS = 1000
MAX_WORKERS = 255

SOURCE = r"""
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#define RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define RELAX() __asm__ __volatile__("yield")
#else
#define RELAX() ((void)0)
#endif

typedef void (*strata_task)(const void *context, int64_t lo, int64_t hi);

/* One parallel loop: chunks of `step` iterations of [begin, end). Note [Chunk affinity]: each
   of the `parts` threads (the caller is part 0, worker w part w + 1) owns a run of consecutive
   chunks, [first[p], first[p + 1]), taken in order through its counter next[p]; a thread done
   with its own takes what is left of the others' (the same counters, so each chunk runs once). */
typedef struct {
    strata_task fn;
    const void *context;
    int64_t begin, end, step, chunks;
    int parts;
    int64_t first[MAX_WORKERS + 2];
    _Atomic int64_t next[MAX_WORKERS + 1];
    _Atomic int64_t left;   /* chunks not finished yet */
} strata_loop;

static pthread_t workers[MAX_WORKERS];
static int n_workers;
static int64_t spin_ns = SPIN_NS;
static _Atomic(strata_loop *) current;
static _Atomic uint64_t generation;     /* bumped once per loop (and to stop the workers) */
static _Atomic int users;               /* workers that may still read `current` */
static _Atomic int sleeping;
static _Atomic int stopping;
static pthread_mutex_t wake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t caller = PTHREAD_MUTEX_INITIALIZER;   /* one loop at a time */

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Run part `p`'s chunks, then any chunk of the others' not taken yet (Note [Chunk affinity]). */
static void drain(strata_loop *loop, int part) {
    for (int k = 0; k < loop->parts; k++) {
        int p = (part + k) % loop->parts;
        int64_t i;
        while ((i = atomic_fetch_add(&loop->next[p], 1)) < loop->first[p + 1]) {
            int64_t lo = loop->begin + i * loop->step;
            int64_t hi = loop->end - lo < loop->step ? loop->end : lo + loop->step;
            loop->fn(loop->context, lo, hi);
            atomic_fetch_sub(&loop->left, 1);    /* publishes the chunk's writes to the caller */
        }
    }
}

/* A thread this one waits for may be waiting for this core: give it the core now and then. */
static void pause_or_yield(unsigned spins) {
    RELAX();
    if (spins % 256 == 0) sched_yield();
}

/* Spin until the generation moves past `seen` or the spin time runs out, then sleep. */
/* (A worker started just before strata_pool_stop may read the generation the stop already
   moved: it waits only while ``stopping`` is unset too, or it would never be woken.) */
static void wait_for_work(uint64_t seen) {
    int64_t start = now_ns();
    for (unsigned spins = 1; atomic_load(&generation) == seen && !atomic_load(&stopping);
         spins++) {
        RELAX();
        if (spins % 256 == 0) {
            if (now_ns() - start > spin_ns) break;
            sched_yield();   /* a runnable thread on this core goes first */
        }
    }
    if (atomic_load(&generation) != seen) return;
    pthread_mutex_lock(&wake_lock);
    atomic_fetch_add(&sleeping, 1);   /* before the check below: see strata_parallel */
    while (atomic_load(&generation) == seen && !atomic_load(&stopping))
        pthread_cond_wait(&wake, &wake_lock);
    atomic_fetch_sub(&sleeping, 1);
    pthread_mutex_unlock(&wake_lock);
}

static void *work(void *index) {
    const int part = (int)(intptr_t)index + 1;
    uint64_t seen = atomic_load(&generation);
    for (;;) {
        wait_for_work(seen);
        seen = atomic_load(&generation);
        if (atomic_load(&stopping)) return NULL;
        atomic_fetch_add(&users, 1);
        strata_loop *loop = atomic_load(&current);
        if (loop && part < loop->parts) drain(loop, part);
        atomic_fetch_sub(&users, 1);
    }
}

static void publish(void) {
    atomic_fetch_add(&generation, 1);
    /* A worker counts itself sleeping before it reads the generation, so either it sees the
       new one, or this sees it counted and wakes it. */
    if (atomic_load(&sleeping)) {
        pthread_mutex_lock(&wake_lock);
        pthread_cond_broadcast(&wake);
        pthread_mutex_unlock(&wake_lock);
    }
}

/* fn(context, lo, hi) over [begin, end) in chunks of `step`, on the workers and this thread. */
void strata_parallel(strata_task fn, const void *context, int64_t begin, int64_t end,
                     int64_t step) {
    if (end <= begin) return;
    int64_t chunks = (end - begin + step - 1) / step;
    if (chunks <= 1 || n_workers == 0 || pthread_mutex_trylock(&caller) != 0) {
        fn(context, begin, end);     /* one chunk, no workers, or a loop running already */
        return;
    }
    strata_loop loop;       /* (no initializer: it would clear every worker's counter) */
    loop.fn = fn, loop.context = context, loop.begin = begin, loop.end = end;
    loop.step = step, loop.chunks = chunks;
    loop.parts = n_workers + 1 < chunks ? n_workers + 1 : (int)chunks;
    for (int p = 0; p <= loop.parts; p++) {
        loop.first[p] = chunks * p / loop.parts;
        if (p < loop.parts) atomic_init(&loop.next[p], loop.first[p]);
    }
    atomic_init(&loop.left, chunks);
    atomic_store(&current, &loop);
    publish();
    drain(&loop, 0);
    for (unsigned spins = 1; atomic_load(&loop.left) > 0; spins++)   /* chunks others run */
        pause_or_yield(spins);
    atomic_store(&current, NULL);
    for (unsigned spins = 1; atomic_load(&users) > 0; spins++)   /* nobody reads `loop` after */
        pause_or_yield(spins);
    pthread_mutex_unlock(&caller);
}

int strata_pool_workers(void) { return n_workers; }

void strata_pool_stop(void) {
    pthread_mutex_lock(&caller);
    atomic_store(&stopping, 1);
    pthread_mutex_lock(&wake_lock);
    atomic_fetch_add(&generation, 1);
    pthread_cond_broadcast(&wake);
    pthread_mutex_unlock(&wake_lock);
    for (int i = 0; i < n_workers; i++) pthread_join(workers[i], NULL);
    n_workers = 0;
    atomic_store(&stopping, 0);
    pthread_mutex_unlock(&caller);
}

/* Start `count` workers (after strata_pool_stop, or in a fresh process). */
int strata_pool_start(int count, int64_t spin_microseconds) {
    pthread_mutex_lock(&caller);
    spin_ns = spin_microseconds * 1000;
    while (n_workers < count && n_workers < MAX_WORKERS &&
           pthread_create(&workers[n_workers], NULL, work, (void *)(intptr_t)n_workers) == 0)
        n_workers++;
    pthread_mutex_unlock(&caller);
    return n_workers;
}

/* A forked child has none of the parent's threads, and its locks are as the fork left them. */
void strata_pool_after_fork(void) {
    pthread_mutex_t fresh_lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t fresh_cond = PTHREAD_COND_INITIALIZER;
    wake_lock = fresh_lock;
    caller = fresh_lock;
    wake = fresh_cond;
    n_workers = 0;
    atomic_store(&current, NULL);
    atomic_store(&users, 0);
    atomic_store(&sleeping, 0);
    atomic_store(&stopping, 0);
}

/* ---- BLAS calls as pool tasks ---- */

enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };
typedef void (*dgemm32_t)(int, int, int, int32_t, int32_t, int32_t, double, const void *,
                         int32_t, const void *, int32_t, double, void *, int32_t);
typedef void (*dgemm64_t)(int, int, int, int64_t, int64_t, int64_t, double, const void *,
                         int64_t, const void *, int64_t, double, void *, int64_t);
typedef void (*sgemm32_t)(int, int, int, int32_t, int32_t, int32_t, float, const float *,
                          int32_t, const float *, int32_t, float, float *, int32_t);
typedef void (*sgemm64_t)(int, int, int, int64_t, int64_t, int64_t, float, const float *,
                          int64_t, const float *, int64_t, float, float *, int64_t);
/* MKL's strided batch GEMMs (LP64): NULL with OpenBLAS, which has none */
typedef void (*sgemm_batch_t)(int, int, int, int32_t, int32_t, int32_t, float, const float *,
                              int32_t, int32_t, const float *, int32_t, int32_t, float, float *,
                              int32_t, int32_t, int32_t);
typedef void (*dgemm_batch_t)(int, int, int, int32_t, int32_t, int32_t, double, const void *,
                              int32_t, int32_t, const void *, int32_t, int32_t, double, void *,
                              int32_t, int32_t, int32_t);
static void *blas_sgemm, *blas_dgemm, *blas_sgemm_batch, *blas_dgemm_batch;
static int blas_int64;
/* NumPy's own BLAS: rows of dtype 2 (float32) and 3 (float64), a compiled graph's small
   products, get np.dot's bits (blas.numpy_gemm) */
static void *numpy_sgemm, *numpy_dgemm;
static int numpy_int64;

void strata_set_numpy_blas(void *sgemm, void *dgemm, int int64) {
    numpy_sgemm = sgemm;
    numpy_dgemm = dgemm;
    numpy_int64 = int64;
}

void strata_set_blas(void *sgemm, void *dgemm, int int64, void *sgemm_batch,
                     void *dgemm_batch) {
    blas_sgemm = sgemm;
    blas_dgemm = dgemm;
    blas_int64 = int64;
    blas_sgemm_batch = sgemm_batch;
    blas_dgemm_batch = dgemm_batch;
}

/* One row of a product table, all int64 so that Python fills it as one array:
   C[batch] = A[batch] @ B[batch], row-major; dtype 0 float32, 1 float64 (2, 3: the same on
   NumPy's BLAS); trans_a/trans_b say the operand is stored
   transposed; a, b, c are addresses; strides count elements between a batch's matrices;
   bias, where not 0, the address of n values added to each row of C after the product
   (Note [Bias epilogue] in linalg.py; a single matrix only). */
typedef struct {
    int64_t dtype, trans_a, trans_b, m, n, k, lda, ldb, ldc, a, b, c,
            batch, stride_a, stride_b, stride_c, bias;
} strata_gemm;

/* C's rows += bias, while the block the product just wrote is in this core's cache */
static void add_bias(const strata_gemm *g) {
    for (int64_t r = 0; r < g->m; r++) {
        if ((g->dtype & 1) == 0) {
            float *row = (float *)(intptr_t)g->c + r * g->ldc;
            const float *bias = (const float *)(intptr_t)g->bias;
            for (int64_t j = 0; j < g->n; j++) row[j] += bias[j];
        } else {
            double *row = (double *)(intptr_t)g->c + r * g->ldc;
            const double *bias = (const double *)(intptr_t)g->bias;
            for (int64_t j = 0; j < g->n; j++) row[j] += bias[j];
        }
    }
}

static void gemm_one(const strata_gemm *g, int64_t i) {
    const int dbl = (int)(g->dtype & 1), numpy = g->dtype >= 2;
    const int64_t item = dbl ? 8 : 4;
    const char *a = (const char *)(intptr_t)g->a + i * g->stride_a * item;
    const char *b = (const char *)(intptr_t)g->b + i * g->stride_b * item;
    char *c = (char *)(intptr_t)g->c + i * g->stride_c * item;
    int ta = g->trans_a ? TRANS : NO_TRANS, tb = g->trans_b ? TRANS : NO_TRANS;
    void *sgemm = numpy ? numpy_sgemm : blas_sgemm, *dgemm = numpy ? numpy_dgemm : blas_dgemm;
    const int int64 = numpy ? numpy_int64 : blas_int64;
    if (!dbl && int64)
        ((sgemm64_t)sgemm)(ROW_MAJOR, ta, tb, g->m, g->n, g->k, 1.0f, (const float *)a,
                           g->lda, (const float *)b, g->ldb, 0.0f, (float *)c, g->ldc);
    else if (!dbl)
        ((sgemm32_t)sgemm)(ROW_MAJOR, ta, tb, g->m, g->n, g->k, 1.0f, (const float *)a,
                           g->lda, (const float *)b, g->ldb, 0.0f, (float *)c, g->ldc);
    else if (int64)
        ((dgemm64_t)dgemm)(ROW_MAJOR, ta, tb, g->m, g->n, g->k, 1.0, a, g->lda, b,
                           g->ldb, 0.0, c, g->ldc);
    else
        ((dgemm32_t)dgemm)(ROW_MAJOR, ta, tb, g->m, g->n, g->k, 1.0, a, g->lda, b,
                           g->ldb, 0.0, c, g->ldc);
}

/* Note [Batched GEMM]: a batch of small products (attention's 64 heads of 64x32 @ 32x64) is
   one strided batch call where BLAS has one: MKL's amortises its per-call set-up over the
   batch (32 such products: 75 us on one thread, against ~110 us for 32 cblas_sgemm calls). */
static int gemm_batch(const strata_gemm *g) {
    void *fn = g->dtype ? blas_dgemm_batch : blas_sgemm_batch;
    /* BLAS requires each matrix at least its span past the last: a broadcast (stride 0) or
       overlapping batch keeps the loop */
    if (fn == NULL || g->dtype >= 2 || g->batch < 2 || g->bias || g->stride_c < g->ldc * g->m ||
        g->stride_a < g->lda * (g->trans_a ? g->k : g->m) ||
        g->stride_b < g->ldb * (g->trans_b ? g->n : g->k))
        return 0;
    int ta = g->trans_a ? TRANS : NO_TRANS, tb = g->trans_b ? TRANS : NO_TRANS;
    const void *a = (const void *)(intptr_t)g->a, *b = (const void *)(intptr_t)g->b;
    void *c = (void *)(intptr_t)g->c;
    if (g->dtype == 0)
        ((sgemm_batch_t)fn)(ROW_MAJOR, ta, tb, g->m, g->n, g->k, 1.0f, a, g->lda, g->stride_a,
                            b, g->ldb, g->stride_b, 0.0f, c, g->ldc, g->stride_c, g->batch);
    else
        ((dgemm_batch_t)fn)(ROW_MAJOR, ta, tb, g->m, g->n, g->k, 1.0, a, g->lda, g->stride_a,
                            b, g->ldb, g->stride_b, 0.0, c, g->ldc, g->stride_c, g->batch);
    return 1;
}

static void gemm_task(const void *context, int64_t lo, int64_t hi) {
    const strata_gemm *table = (const strata_gemm *)context;
    for (int64_t j = lo; j < hi; j++)
        if (!gemm_batch(&table[j])) {
            for (int64_t i = 0; i < table[j].batch; i++) gemm_one(&table[j], i);
            if (table[j].bias) add_bias(&table[j]);
        }
}

/* Every row of `table`, one row per chunk, on the pool. */
void strata_gemms(const strata_gemm *table, int64_t rows) {
    strata_parallel(gemm_task, table, 0, rows, 1);
}

/* ---- concatenation as a pool task (Note [Native cat] in shape.py) ---- */

/* context: out, out_row (bytes of one outer row of the output), pieces, then per input its
   address, its bytes per outer row and where in the output's row they go */
static void cat_task(const void *context, int64_t lo, int64_t hi) {
    const int64_t *c = (const int64_t *)context;
    char *out = (char *)(intptr_t)c[0];
    const int64_t out_row = c[1], pieces = c[2], *piece = c + 3;
    for (int64_t o = lo; o < hi; o++)
        for (int64_t p = 0; p < pieces; p++) {
            const int64_t bytes = piece[3 * p + 1];
            memcpy(out + o * out_row + piece[3 * p + 2],
                   (const char *)(intptr_t)piece[3 * p] + o * bytes, (size_t)bytes);
        }
}

void strata_cat(const int64_t *context, int64_t outer, int64_t step) {
    strata_parallel(cat_task, context, 0, outer, step);
}

/* ---- a compiled graph's launches in one call (Note [Graph programs] in inductor/plan.py) ----
   words: the launches' contexts (a kernel's arguments, a product table's rows), where each
   relocation (word, slot, offset) writes slots[slot] + offset: this call's array addresses.
   commands, 6 words each: (1, task, first word, begin, end, step) runs a parallel loop,
   (2, 0, first word, rows, 0, 0) a product table. */
void strata_run_program(const int64_t *commands, int64_t count, int64_t *words,
                        const int64_t *relocations, int64_t relocation_count,
                        const int64_t *slots) {
    for (int64_t r = 0; r < relocation_count; r++) {
        const int64_t *rel = relocations + 3 * r;
        words[rel[0]] = slots[rel[1]] + rel[2];
    }
    for (int64_t i = 0; i < count; i++) {
        const int64_t *c = commands + 6 * i;
        if (c[0] == 1)
            strata_parallel((strata_task)(intptr_t)c[1], words + c[2], c[3], c[4], c[5]);
        else
            strata_gemms((const strata_gemm *)(words + c[2]), c[3]);
    }
}
"""


_lock = threading.Lock()
_lib = None            # the loaded library, False where it cannot be had
_workers = 0           # workers started for the current thread count
_numpy_blas = False    # NumPy's own BLAS was handed to the library (``has_numpy_blas``)


def _load():
    if not (config.native_kernels and config.native_pool):
        return False
    source = (f"#define SPIN_NS {SPIN_MICROSECONDS * 1000}\n#define MAX_WORKERS {MAX_WORKERS}\n"
              + SOURCE)
    vp, i64 = ctypes.c_void_p, ctypes.c_int64
    signatures = {"strata_parallel": [vp, vp, i64, i64, i64], "strata_gemms": [vp, i64],
                  "strata_cat": [vp, i64, i64],
                  "strata_run_program": [vp, i64, vp, vp, i64, vp],
                  "strata_pool_start": [ctypes.c_int, i64], "strata_pool_stop": [],
                  "strata_pool_workers": [],
                  "strata_pool_after_fork": [], "strata_set_blas": [vp, vp, ctypes.c_int, vp, vp],
                  "strata_set_numpy_blas": [vp, vp, ctypes.c_int]}
    try:
        lib = native.load("strata_pool", source, signatures, tasks=False)
    except (native.BuildError, OSError):
        return False
    lib.strata_pool_start.restype = lib.strata_pool_workers.restype = ctypes.c_int
    sgemm, dgemm = blas.gemm("float32"), blas.gemm("float64")
    if sgemm is None or dgemm is None:
        return False
    lib.strata_set_blas(sgemm.address, dgemm.address, int(sgemm.ilp64),
                        blas.gemm_batch("float32"), blas.gemm_batch("float64"))
    numpy_s, numpy_d = blas.numpy_gemm("float32"), blas.numpy_gemm("float64")
    if numpy_s is not None and numpy_d is not None:
        lib.strata_set_numpy_blas(numpy_s.address, numpy_d.address, int(numpy_s.ilp64))
        global _numpy_blas
        _numpy_blas = True
    return lib


def has_numpy_blas() -> bool:
    """Whether table rows of dtype 2 and 3 (NumPy's own BLAS: ``blas.numpy_gemm``) can run."""
    return library() is not None and _numpy_blas


def library():
    """The pool's library with its workers started for ``array.NUM_THREADS``, or None (no
    compiler, no CBLAS symbol, native kernels off): the caller keeps the Python pool."""
    global _lib, _workers
    if _lib is None:
        with _lock:
            if _lib is None:
                _lib = _load()
    lib = _lib
    if not lib:
        return None
    wanted = min(array.NUM_THREADS - 1, MAX_WORKERS)
    if _workers != wanted:
        with _lock:
            if _workers != wanted:
                lib.strata_pool_stop()
                _workers = lib.strata_pool_start(wanted, SPIN_MICROSECONDS)
    return lib


def _after_fork():
    global _workers
    if _lib:
        _lib.strata_pool_after_fork()
    _workers = 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


# Note [Graph programs] (compile/inductor/plan.py): while a thread records a compiled graph's
# call, each launch it makes is also handed to its recorder (``recording.recorder``)
class _Recording(threading.local):
    recorder = None     # a class default: a thread that never set one reads it without a miss
    # (getattr with a default on a bare threading.local raises and catches: 0.46 us a launch)


recording = _Recording()


def run_gemms(table: np.ndarray, operands=()) -> None:
    """Each row of ``table`` (int64, 17 columns: a ``strata_gemm``, linalg.py's ``_gemm_row``)
    as one chunk of a loop on the pool. The caller keeps the arrays the rows point into
    alive; ``operands`` are those arrays, which a recording holds until it ends (a temporary
    copy's memory must not come back as one of the graph's buffers)."""
    recorder = recording.recorder
    if recorder is not None:
        recorder.gemms(table, operands)
    library().strata_gemms(table.ctypes.data, len(table))


def run_program(commands, words, relocations, slots) -> None:
    """``strata_run_program``: a recorded graph's launches, its relocations filled from
    ``slots`` (int64 addresses) into ``words`` (a copy the call may write)."""
    _lib.strata_run_program(commands.ctypes.data, len(commands), words.ctypes.data,
                            relocations.ctypes.data, len(relocations), slots.ctypes.data)


def run_cat(context: np.ndarray, outer: int, step: int) -> None:
    """``strata_cat``: the outer rows of a concatenation (Note [Native cat] in shape.py),
    ``step`` rows a chunk; ``context`` (int64) as ``cat_task`` reads it. The caller keeps the
    arrays it points into alive."""
    recorder = recording.recorder
    if recorder is not None:
        recorder.fail("a concatenation")
    library().strata_cat(context.ctypes.data, outer, step)


VECTOR_ROWS = 16   # chunk starts are multiples of this: a SIMD loop's lanes (AVX-512 floats)


def parallel_call(fn, args, begin: int, end: int, grain: int, align: int = 1) -> None:
    """``fn(*args, lo, hi)`` over ``[begin, end)``, as ``parallel_for`` would split it (a few
    chunks per thread, ``grain`` iterations each at least), on the native pool through ``fn``'s
    task entry (Note [Task entries] in native.py; ``args``: ints, the pointers' addresses);
    on the Python pool where ``fn`` has none or there is no native pool. ``align``
    (``VECTOR_ROWS`` for a loop whose iterations are a SIMD loop's) makes chunks multiples of
    it: a chunk boundary never moves an element from a SIMD loop's vector body to its scalar
    tail, where libmvec's functions (tanh, log, ...) round differently."""
    step = chunk_step(end - begin, grain, align)
    if step is None:                # one chunk: on this thread, as parallel_for would run it
        if end > begin:
            fn(*args, begin, end)
        return
    task = getattr(fn, "strata_task", None)
    if task is None or library() is None:
        array.parallel_for(begin, end, grain, lambda lo, hi: fn(*args, lo, hi))
        return
    context = np.array(args, np.int64)
    _lib.strata_parallel(task, context.ctypes.data, begin, end, step)


def chunk_step(n: int, grain: int, align: int = 1):
    """Iterations per chunk of ``parallel_call``'s loop over ``n``, or None for one chunk."""
    chunks = min(array.NUM_THREADS * array.CHUNKS_PER_THREAD, n // max(grain, 1))
    if chunks <= 1:
        return None
    step = -(-n // chunks)
    return -(-step // align) * align

"""The sim device's hardware interface: what the driver and the device agree on, byte for byte.

Shared memory (``memfd`` regions, mapped by both processes):

* **control** region — per queue, a row of 64-bit *registers* (``REG_*``), a *command ring* of
  ``RING_SLOTS`` fixed-size records, a *completion area* (device start/end times per slot), an
  *error area*, a *response mailbox* and an *argument arena* (variable-size payloads, referenced
  by offset and length from the records); plus a table of *event timestamps*.
* **VRAM** — device memory, where tensors live; addresses are offsets into it.
* **host-visible memory** (GTT) — pinned host memory the device reads and writes directly;
  addresses carry ``HOST_BIT``.

A record is ``RECORD`` (64 bytes): opcode, flags, sequence number, payload offset and length in
the queue's arena, and four immediate operands. The driver writes the record into slot
``(seq - 1) % RING_SLOTS``, publishes ``REG_HEAD = seq`` and rings the queue's doorbell (an
eventfd write). The device executes records in order and writes ``REG_FENCE = seq`` after each;
if ``REG_IRQ_ARMED`` is set it also raises the interrupt eventfd.

Note [Doorbell suppression]: like virtio's event suppression, the device says in ``REG_STATE``
whether it needs a doorbell: a command processor that has run out of work polls its ring head
for a moment, then sets ``STATE_SLEEPING``, checks the head once more and sleeps on the
doorbell. The driver rings only a queue that is not ``STATE_RUNNING``, so a host launching
faster than the device computes makes no syscall per launch and does not wake the device
process (a context switch) for every command. Each side stores its word, then loads the other's
(host: head, then state; device: state, then head), so a store may not be reordered after the
load: both put a full barrier in between (``barrier()``; the host's is the release of the queue
lock). The device's sleep also has a timeout (``DOORBELL_TIMEOUT_MS``), so a missed doorbell
could only ever cost that much latency, never a hang. The interrupt uses the same handshake
(host: armed, then fence; device: fence, then armed).
"""

import _thread
import struct

MAX_QUEUES = 16          # queue 0 is the admin queue
RING_SLOTS = 4096        # records per queue ring (a power of two)
RECORD = struct.Struct("<IIQQQQQQQ")   # opcode, flags, seq, arg_off, arg_len, a0, a1, a2, a3
ARENA_BYTES = 4 << 20    # argument arena per queue
ERROR_BYTES = 4096       # error message area per queue
RESPONSE_BYTES = 1 << 20  # response mailbox per queue (results of data-dependent ops)
MAX_EVENTS = 4096        # event timestamp slots
IDLE_SPIN_NS = 50_000    # a command processor out of work polls its ring this long, then sleeps
DOORBELL_TIMEOUT_MS = 10  # Note [Doorbell suppression]
HOST_BIT = 1 << 48       # an address with this bit is in host-visible memory

# Registers: one row of NREGS u64 per queue.
NREGS = 8
REG_HEAD = 0        # host: seq of the last published record
REG_FENCE = 1       # device: seq of the last completed record
REG_IRQ_ARMED = 2   # host: raise the interrupt when this queue completes work
REG_ERR_SEQ = 3     # device: seq of the first failed command (0: none)
REG_ERR_LEN = 4     # device: length of the error message
REG_RESP_LEN = 5    # device: length of the response in the mailbox
REG_STATE = 6       # device: STATE_* of the queue's command processor
REG_PID = 7         # admin row: the device process id

STATE_STOPPED = 0   # not started (or stopped): the doorbell is rung and counts up
STATE_RUNNING = 1   # executing or polling its ring: no doorbell needed
STATE_SLEEPING = 2  # asleep in poll(2) on its doorbell: ring it

# Opcodes.
OP_NOP = 0
OP_LAUNCH = 1         # payload: (qualname, site, args, outs) — run a kernel into outputs
OP_COPY = 2           # payload: (site, dst descriptor, src descriptor) — copy_ with casts
OP_WRITE_VALUE = 3    # a0 = address, a1 = value: store a u64 (cuStreamWriteValue64)
OP_WAIT_VALUE = 4     # a0 = address, a1 = value: wait until the u64 there is >= a1
OP_EVENT_RECORD = 5   # a0 = event slot: write the device time into the slot
OP_EVENT_WAIT = 6     # a0 = queue, a1 = seq: wait until that queue's fence reaches seq
OP_LAUNCH_DYNAMIC = 7  # payload like OP_LAUNCH without outputs: keep the results, describe them
OP_COPY_STAGED = 8    # a0 = seq of a dynamic launch; payload: output descriptors
OP_EXEC_LIST = 9      # a0 = host-visible address of a recorded command list (graph replay):
                      # a u64 byte count, then a pickled list of (opcode, payload, a0), run in order
OP_CREATE_QUEUE = 16  # admin: a0 = queue id
OP_SHUTDOWN = 17      # admin

OPCODE_NAMES = {OP_NOP: "nop", OP_LAUNCH: "launch", OP_COPY: "copy",
                OP_WRITE_VALUE: "write_value", OP_WAIT_VALUE: "wait_value",
                OP_EVENT_RECORD: "event_record", OP_EVENT_WAIT: "event_wait",
                OP_LAUNCH_DYNAMIC: "launch_dynamic", OP_COPY_STAGED: "copy_staged",
                OP_EXEC_LIST: "exec_list",
                OP_CREATE_QUEUE: "create_queue", OP_SHUTDOWN: "shutdown"}

FLAG_TIMED = 1        # write start/end times into the completion area

# Layout of the control region (byte offsets).
REGS_OFFSET = 0
EVENTS_OFFSET = 4096
RINGS_OFFSET = EVENTS_OFFSET + MAX_EVENTS * 8
COMPLETIONS_OFFSET = RINGS_OFFSET + MAX_QUEUES * RING_SLOTS * RECORD.size
ERRORS_OFFSET = COMPLETIONS_OFFSET + MAX_QUEUES * RING_SLOTS * 16
RESPONSES_OFFSET = ERRORS_OFFSET + MAX_QUEUES * ERROR_BYTES
ARENAS_OFFSET = RESPONSES_OFFSET + MAX_QUEUES * RESPONSE_BYTES
CONTROL_BYTES = ARENAS_OFFSET + MAX_QUEUES * ARENA_BYTES


_barrier_lock = _thread.allocate_lock()


def barrier() -> None:
    """A full memory barrier: taking and releasing a lock is an atomic read-modify-write, which
    orders every earlier store before every later load (Note [Doorbell suppression])."""
    _barrier_lock.acquire()
    _barrier_lock.release()


def ring_offset(queue: int) -> int:
    return RINGS_OFFSET + queue * RING_SLOTS * RECORD.size


def error_offset(queue: int) -> int:
    return ERRORS_OFFSET + queue * ERROR_BYTES


def response_offset(queue: int) -> int:
    return RESPONSES_OFFSET + queue * RESPONSE_BYTES


def arena_offset(queue: int) -> int:
    return ARENAS_OFFSET + queue * ARENA_BYTES


# Tensor descriptors in payloads (built by the runtime, read by the device):
#   device or pinned tensor: (storage address, storage nbytes, offset, shape, strides, dtype index,
#                             allocation id: DeviceStorage.id, 0 for pinned memory)
#   host value (a 0-dim CPU tensor): (None, value, dtype index)


class StagedTensor:
    """In a data-dependent launch's response: output number ``index`` has this shape and dtype
    and waits on the device until the host allocates room for it (``OP_COPY_STAGED``)."""

    __slots__ = ("index", "shape", "dtype")

    def __init__(self, index, shape, dtype):
        self.index = index
        self.shape = shape
        self.dtype = dtype

    def __reduce__(self):
        return StagedTensor, (self.index, self.shape, self.dtype)

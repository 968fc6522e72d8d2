"""The sim accelerator: a device emulated in its own OS process (see DESIGN.md, "Devices are
honest").

    commands.py   the hardware interface: control-region layout, command records, opcodes
    driver.py     the driver: buffer objects, queues, ring + doorbell submission, fence waits
    memory.py     the driver's range allocator for device memory
    device.py     the device process: one command processor per queue, runs the CPU kernels
    streams.py    Stream and Event
    runtime.py    the runtime: allocation, launches, copies, synchronisation, errors
    kernels.py    the Sim kernel of every op (registered with ``register()``)
"""

from .kernels import register  # noqa: F401

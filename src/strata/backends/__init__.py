"""Layer 5: one folder per device, each registering its kernel tables with one explicit call."""

from . import composite, cpu, meta, views


def register_all():
    views.register()
    composite.register()
    cpu.register()
    meta.register()

"""Layer 5: one folder per device, each registering its kernel tables with one explicit call."""

from . import composite, cpu, meta, sim, views
from .flags import cuda, cudnn, mkldnn, mps, openmp, opt_einsum  # noqa: F401  (torch.backends.*)


def register_all():
    views.register()
    composite.register()
    cpu.register()
    meta.register()
    sim.register()

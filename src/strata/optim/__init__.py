"""``strata.optim``: optimizers and learning-rate schedulers with PyTorch's formulas and state.

    opt = strata.optim.Adam(model.parameters(), lr=1e-3)
    sched = strata.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=100)
"""

from . import lr_scheduler  # noqa: F401
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Adagrad", "Adam", "AdamW", "LBFGS", "Optimizer", "RMSprop", "SGD", "lr_scheduler"]

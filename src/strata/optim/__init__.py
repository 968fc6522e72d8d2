"""``strata.optim``: optimizers and learning-rate schedulers with PyTorch's formulas and state.

    opt = strata.optim.Adam(model.parameters(), lr=1e-3)
    sched = strata.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=100)
"""

from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["ASGD", "LBFGS", "SGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax",
           "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SparseAdam", "lr_scheduler",
           "swa_utils"]

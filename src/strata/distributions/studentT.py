# ruff: noqa: N999  (PyTorch's module name: torch.distributions.studentT)
"""``StudentT(df, loc=0.0, scale=1.0)``: a Normal whose precision is Gamma-distributed. The
module name is PyTorch's (``torch.distributions.studentT``).

    >>> StudentT(3.0).variance.item()   # scale^2 df / (df - 2)
    3.0
"""

import math

from ..core.shape import Size
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import broadcast_all, standard_normal


class StudentT(Distribution):
    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(StudentT, batch_shape, ("df", "loc", "scale"), _instance)
        new._chi2 = self._chi2.expand(Size(batch_shape))
        return new

    @property
    def mean(self):
        return self.loc.masked_fill(self.df <= 1, math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        """scale^2 df / (df - 2) for df > 2, inf for 1 < df <= 2, undefined (nan) below."""
        df = self.df
        above_2 = df > 2
        safe_df = df.where(above_2, 3.0)   # no 0 * inf = nan gradient from the unused branch
        finite = self.scale.pow(2) * safe_df / (safe_df - 2)
        return finite.where(above_2, math.inf).masked_fill(df <= 1, math.nan)

    def rsample(self, sample_shape=()):
        """X / sqrt(Z / df) for X ~ N(0, 1), Z ~ Chi2(df)."""
        x = standard_normal(self._extended_shape(sample_shape), self.df)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (x * (z / self.df).rsqrt())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + (0.5 * self.df).lgamma() - (0.5 * (self.df + 1.0)).lgamma())
        return -0.5 * (self.df + 1.0) * (y ** 2.0 / self.df).log1p() - z

    def entropy(self):
        half_df, half_df1 = 0.5 * self.df, 0.5 * (self.df + 1)
        lbeta = half_df.lgamma() + math.lgamma(0.5) - half_df1.lgamma()
        return (self.scale.log() + half_df1 * (half_df1.digamma() - half_df.digamma())
                + 0.5 * self.df.log() + lbeta)

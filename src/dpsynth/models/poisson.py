"""Poisson log-linear regression (the re-weighting paper's count synthesizer)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..validation import check_support
from .base import Draws, ModelFamily, _check_n_coef, _design, _linear

if TYPE_CHECKING:  # pragma: no cover
    import pytensor.tensor as pt

__all__ = ["FAMILY", "PoissonRegression"]


@dataclass(frozen=True)
class PoissonRegression(ModelFamily):
    """Poisson log-linear regression: ``log mu_i = X_i beta``.

    Priors: ``beta_j ~ Normal(0, sigma_beta)``, ``sigma_beta ~ HalfStudentT(nu=3, sigma=1)``.
    Without covariates the design is an intercept column.
    """

    n_coef: int = 1
    name: str = "poisson"
    one_signed = True  # log p(x | mu) <= 0 for a probability mass function
    continuous = False
    takes_covariates = True
    design_field = "n_coef"
    reference_scale = ("log1p", 0.0, 25.0)
    reference_is_max = True  # the saturated Poisson, mean = x, is each record's largest term

    def _check_support(self, x: np.ndarray) -> None:
        check_support(x, "x", lower=0.0, integer=True, model="the Poisson model")

    def check_data(self, x, covariates=None):
        arr, cov = super().check_data(x, covariates)
        _check_n_coef(cov, self.n_coef, self.name)
        return arr, cov

    def data_values(self, x: np.ndarray, covariates: np.ndarray | None) -> dict[str, np.ndarray]:
        from scipy import special

        return {"x": x, "X": _design(covariates, x.shape[0]), "lgamma_x1": special.gammaln(x + 1.0)}

    def _coefficients(self) -> pt.TensorVariable:
        import pymc as pm

        sigma_beta = pm.HalfStudentT("sigma_beta", nu=3.0, sigma=1.0)
        return pm.Normal("beta", 0.0, sigma_beta, shape=self.n_coef)

    def record_logp(self, data: Mapping[str, pt.TensorVariable]) -> pt.TensorVariable:
        import pytensor.tensor as pt

        eta = pt.dot(data["X"], self._coefficients())
        return data["x"] * eta - pt.exp(eta) - data["lgamma_x1"]

    def simulate(self, draws: Draws, rng: np.random.Generator, covariates: np.ndarray | None = None) -> np.ndarray:
        """Poisson draws via :func:`dpsynth.sampling.poisson`; a mean that overflows (``X beta > 709``) gives inf."""
        from .. import sampling

        n = draws["beta"].shape[0]
        with np.errstate(over="ignore"):
            mu = np.exp(_linear(draws["beta"], covariates, n, paired=True))
        return sampling.poisson(rng, mu)

    def reference(self, loc: float, scale: float) -> dict[str, np.ndarray]:
        """Intercept ``log`` of the mean ``expm1(loc)`` (at least 0.5), other coefficients 0 (``sigma_beta`` 1)."""
        from .base import _coefficients

        mu = max(float(np.expm1(loc)), 0.5)
        return {"sigma_beta": np.array([1.0]), "beta": _coefficients(self.n_coef, np.log(mu))}

    def reference_loglik(self, x: np.ndarray, covariates: np.ndarray | None = None) -> np.ndarray:
        """The saturated Poisson: each record at its own mean, ``x log x - x - log x!`` (0 at ``x = 0``)."""
        from scipy import special

        x = np.asarray(x, dtype=float)
        return special.xlogy(x, x) - x - special.gammaln(x + 1.0)

    def public_start(self) -> dict[str, np.ndarray]:
        """Every coefficient 0 (a mean of 1), ``sigma_beta = 1``."""
        return {"sigma_beta": np.array([1.0]), "beta": np.zeros((1, self.n_coef))}


#: The family this module declares (:mod:`dpsynth.models.catalog`).
FAMILY = PoissonRegression

"""Lognormal regression of a positive variable on public covariates."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..validation import check_support
from .base import Draws, ModelFamily, _check_n_coef, _design, _linear

if TYPE_CHECKING:  # pragma: no cover
    import pytensor.tensor as pt

__all__ = ["FAMILY", "LognormalRegression"]


@dataclass(frozen=True)
class LognormalRegression(ModelFamily):
    """Lognormal regression: ``log x_i ~ Normal(X_i beta, sigma)``.

    Priors: the intercept ``beta_0 ~ Normal(0, beta_sd)`` (the location on the log scale, which
    carries the unit), each of the ``p - 1`` slopes ``beta_j ~ Normal(0, slope_sd / sqrt(p - 1))``
    (effects on the log scale of one unit of a covariate, of order one for centred and scaled
    covariates or indicators: together their prior spread is ``slope_sd`` whatever the number of
    covariates), and ``sigma ~ HalfCauchy(sigma_prior_scale)``. With ``slope_sd=None`` every
    coefficient is ``Normal(0, beta_sd)`` (the papers' prior). The first column of
    the design is the intercept; without covariates the model is :class:`LognormalFamily` with a
    Normal(0, ``beta_sd``) prior on ``mu``. Centre or scale wide numeric covariates (e.g. experience
    in decades) so that the coefficients are of order one. Weakly informative slopes matter when the
    data are few for their coefficients: a tempered likelihood of a few hundred records cannot pin
    ten coefficients that a Normal(0, 10) prior lets wander.
    """

    n_coef: int = 1
    beta_sd: float = 10.0
    sigma_prior_scale: float = 5.0
    slope_sd: float | None = 1.0
    name: str = "lognormal_regression"
    takes_covariates = True
    design_field = "n_coef"
    reference_scale = ("log", -30.0, 30.0)

    def _check_support(self, x: np.ndarray) -> None:
        check_support(x, "x", lower=0.0, lower_open=True, model="the lognormal regression")

    def check_data(self, x, covariates=None):
        arr, cov = super().check_data(x, covariates)
        _check_n_coef(cov, self.n_coef, self.name)
        return arr, cov

    def data_values(self, x: np.ndarray, covariates: np.ndarray | None) -> dict[str, np.ndarray]:
        return {"log_x": np.log(x), "X": _design(covariates, x.shape[0])}

    def record_logp(self, data: Mapping[str, pt.TensorVariable]) -> pt.TensorVariable:
        import pymc as pm
        import pytensor.tensor as pt

        beta = pm.Normal("beta", 0.0, self.prior_sd(), shape=self.n_coef)
        sigma = pm.HalfCauchy("sigma", beta=self.sigma_prior_scale)
        z = (data["log_x"] - pt.dot(data["X"], beta)) / sigma
        return -0.5 * np.log(2 * np.pi) - pt.log(sigma) - 0.5 * z**2 - data["log_x"]

    def simulate(self, draws: Draws, rng: np.random.Generator, covariates: np.ndarray | None = None) -> np.ndarray:
        """``exp(Normal(X_i beta, sigma))``, row i of the draws for record i (overflow as :class:`LognormalFamily`)."""
        n = draws["beta"].shape[0]
        mu = _linear(draws["beta"], covariates, n, paired=True)
        with np.errstate(over="ignore", under="ignore"):
            return np.exp(rng.normal(mu, draws["sigma"]))

    def _z(self, q: np.ndarray, draws: Draws, covariates: np.ndarray | None) -> np.ndarray:
        with np.errstate(divide="ignore"):
            lq = np.log(np.asarray(q, dtype=float))
        mu = _linear(draws["beta"], covariates, lq.shape[0], paired=False)
        return (lq[None, :] - mu) / draws["sigma"][:, None]

    def logcdf(self, q: np.ndarray, draws: Draws, covariates: np.ndarray | None = None) -> np.ndarray:
        from scipy import special

        return special.log_ndtr(self._z(q, draws, covariates))

    def logsf(self, q: np.ndarray, draws: Draws, covariates: np.ndarray | None = None) -> np.ndarray:
        from scipy import special

        return special.log_ndtr(-self._z(q, draws, covariates))

    def prior_sd(self) -> np.ndarray:
        """The coefficients' prior standard deviations: ``beta_sd`` for the intercept, ``slope_sd / sqrt(p - 1)`` for
        each of the ``p - 1`` slopes (so that their sum over covariates of unit spread has prior sd ``slope_sd``)."""
        if self.slope_sd is None or self.n_coef == 1:
            return np.full(self.n_coef, float(self.beta_sd))
        return np.r_[self.beta_sd, np.full(self.n_coef - 1, self.slope_sd / np.sqrt(self.n_coef - 1))]

    def _parameters(self, intercept: float, sigma: float) -> dict[str, np.ndarray]:
        """Every free parameter at an intercept, slopes 0 and a ``sigma`` (leading dimension 1)."""
        from .base import _coefficients

        return {"beta": _coefficients(self.n_coef, intercept), "sigma": np.array([float(sigma)])}

    def reference(self, loc: float, scale: float) -> dict[str, np.ndarray]:
        """Intercept ``loc``, other coefficients 0, ``sigma = scale`` on the log scale."""
        return self._parameters(loc, scale)

    def reference_loglik(self, x: np.ndarray, covariates: np.ndarray | None = None) -> np.ndarray:
        """The record's density at its own location with the public scale (:func:`~.lognormal.lognormal_saturated`)."""
        from .lognormal import lognormal_saturated

        return lognormal_saturated(x)

    def public_start(self) -> dict[str, np.ndarray]:
        """Every coefficient 0, ``sigma =`` :data:`~.lognormal.START_SD`."""
        from .lognormal import START_SD

        return self._parameters(0.0, START_SD)


#: The family this module declares (:mod:`dpsynth.models.catalog`).
FAMILY = LognormalRegression

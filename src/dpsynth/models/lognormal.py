"""The marginal lognormal synthesizer (the range-restriction slides' model)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..validation import check_support
from .base import Draws, ModelFamily

if TYPE_CHECKING:  # pragma: no cover
    import pytensor.tensor as pt

__all__ = ["FAMILY", "LognormalFamily", "REFERENCE_SD", "START_SD", "lognormal_saturated"]

#: The public scale (log units) of a positive variable's saturated reference: a window placed there holds
#: records of data whose log has a standard deviation from about 0.17 to 2.9
#: (:mod:`dpsynth.mechanisms.censored_reference`).
REFERENCE_SD = 2.0
#: The public scale (log units) the chains start from: records with ``|log x|`` up to about 20 lie inside their windows.
START_SD = 15.0


def lognormal_saturated(x: np.ndarray) -> np.ndarray:
    """``log p(x | mu = log x, sigma = REFERENCE_SD)`` of the lognormal: ``-log(REFERENCE_SD) - log(2 pi) / 2 -
    log x``."""
    return -np.log(REFERENCE_SD) - 0.5 * np.log(2 * np.pi) - np.log(np.asarray(x, dtype=float))


@dataclass(frozen=True)
class LognormalFamily(ModelFamily):
    """Lognormal synthesizer: ``log x ~ Normal(mu, sigma)``.

    Priors: ``mu ~ Normal(mu_prior_mean, mu_prior_sd)``, ``sigma ~ HalfCauchy(sigma_prior_scale)``.
    """

    mu_prior_mean: float = 0.0
    mu_prior_sd: float = 10.0
    sigma_prior_scale: float = 5.0
    name: str = "lognormal"
    reference_scale = ("log", -30.0, 30.0)

    def _check_support(self, x: np.ndarray) -> None:
        check_support(x, "x", lower=0.0, lower_open=True, model="the lognormal model")

    def data_values(self, x: np.ndarray, covariates: np.ndarray | None) -> dict[str, np.ndarray]:
        return {"log_x": np.log(x)}

    def record_logp(self, data: Mapping[str, pt.TensorVariable]) -> pt.TensorVariable:
        import pymc as pm
        import pytensor.tensor as pt

        mu = pm.Normal("mu", self.mu_prior_mean, self.mu_prior_sd)
        sigma = pm.HalfCauchy("sigma", beta=self.sigma_prior_scale)
        z = (data["log_x"] - mu) / sigma
        return -0.5 * np.log(2 * np.pi) - pt.log(sigma) - 0.5 * z**2 - data["log_x"]

    def simulate(self, draws: Draws, rng: np.random.Generator, covariates: np.ndarray | None = None) -> np.ndarray:
        """``exp(Normal(mu, sigma))``; never raises or gives NaN for finite ``mu`` and ``sigma >= 0``.

        A log value above about 709.8 overflows to inf and one below about -745 underflows to 0:
        these are the float64 roundings of values outside its range (data that large or small
        could not have been fitted), so they are returned as such rather than clipped.
        """
        with np.errstate(over="ignore", under="ignore"):
            return np.exp(rng.normal(draws["mu"], draws["sigma"]))

    def _z(self, q: np.ndarray, draws: Draws) -> np.ndarray:
        with np.errstate(divide="ignore"):
            lq = np.log(np.asarray(q, dtype=float))
        return (lq[None, :] - draws["mu"][:, None]) / draws["sigma"][:, None]

    def logcdf(self, q: np.ndarray, draws: Draws, covariates: np.ndarray | None = None) -> np.ndarray:
        from scipy import special

        return special.log_ndtr(self._z(q, draws))

    def logsf(self, q: np.ndarray, draws: Draws, covariates: np.ndarray | None = None) -> np.ndarray:
        from scipy import special

        return special.log_ndtr(-self._z(q, draws))

    def log_interval_prob(
        self, lower: np.ndarray, upper: np.ndarray, draws: Draws, covariates: np.ndarray | None = None
    ) -> np.ndarray:
        """Log probability of ``[lower_i, upper_i]``: ``log(Phi(z_hi) - Phi(z_lo))`` where that is exact.

        With ``z_lo <= z_hi`` the standardised ends, ``P = Phi(z_hi) - Phi(z_lo)``; where
        ``z_lo > 0`` the mirrored form ``Phi(-z_lo) - Phi(-z_hi)`` is used, so the subtraction
        always happens on the side of the median where the CDF is small and accurate to its last
        bits. Where ``P`` is below 1e-250 (far tails, where ``ndtr`` underflows) the log-space form
        ``log Phi(hi) + log1p(-exp(log Phi(lo) - log Phi(hi)))`` is used instead. The first form
        costs two ``ndtr`` and one ``log`` per entry, about half of the log-space form, and this
        function dominates the range-restriction study (``S x n`` entries per call).
        """
        from scipy import special

        z_lo, z_hi = self._z(lower, draws), self._z(upper, draws)
        flip = z_lo > 0
        hi = np.where(flip, -z_lo, z_hi)
        lo = np.where(flip, -z_hi, z_lo)
        del z_lo, z_hi, flip
        p = special.ndtr(hi)
        p -= special.ndtr(lo)
        tails = ~(p > 1e-250)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.log(p, out=p)
            if tails.any():
                h, lo_t = hi[tails], lo[tails]
                log_hi = special.log_ndtr(h)
                diff = special.log_ndtr(lo_t) - log_hi
                out[tails] = np.where(np.isneginf(log_hi), -np.inf, log_hi + np.log1p(-np.exp(diff)))
        return out

    def reference(self, loc: float, scale: float) -> dict[str, np.ndarray]:
        """``mu = loc``, ``sigma = scale`` on the log scale."""
        return {"mu": np.array([float(loc)]), "sigma": np.array([float(scale)])}

    def reference_loglik(self, x: np.ndarray, covariates: np.ndarray | None = None) -> np.ndarray:
        """The record's density at its own location (``mu = log x``) with the public scale :data:`REFERENCE_SD`."""
        return lognormal_saturated(x)

    def public_start(self) -> dict[str, np.ndarray]:
        """``mu = 0``, ``sigma =`` :data:`START_SD`: a wide start that reaches data in any unit."""
        return {"mu": np.array([0.0]), "sigma": np.array([START_SD])}


#: The family this module declares (:mod:`dpsynth.models.catalog`).
FAMILY = LognormalFamily

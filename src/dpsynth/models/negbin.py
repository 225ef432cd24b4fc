"""Negative binomial (NB2) log-linear regression (the re-weighting paper's salary synthesizer)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..validation import check_support
from .base import Draws, _linear
from .poisson import PoissonRegression

if TYPE_CHECKING:  # pragma: no cover
    import pytensor.tensor as pt

__all__ = ["FAMILY", "NegBinomialRegression", "REFERENCE_PHI", "START_INV_PHI"]

#: The public dispersion of the saturated reference (a geometric distribution at the record's own mean).
REFERENCE_PHI = 1.0
#: The public overdispersion ``1 / phi`` the chains start from: so flat a distribution that every count lies inside
#: its window.
START_INV_PHI = 10.0


@dataclass(frozen=True)
class NegBinomialRegression(PoissonRegression):
    """Negative binomial (NB2) regression with log mean ``X beta`` and dispersion ``phi``.

    ``Var = mu + mu^2 / phi``. Priors as :class:`PoissonRegression` for ``beta`` and
    ``1/phi ~ HalfCauchy(5)``.
    """

    name: str = "negbin"
    inv_phi_scale: float = 5.0
    reference_is_max = False  # the public dispersion is not each record's best

    def _check_support(self, x: np.ndarray) -> None:
        check_support(x, "x", lower=0.0, integer=True, model="the negative binomial model")

    def record_logp(self, data: Mapping[str, pt.TensorVariable]) -> pt.TensorVariable:
        import pymc as pm
        import pytensor.tensor as pt

        eta = pt.dot(data["X"], self._coefficients())
        inv_phi = pm.HalfCauchy("inv_phi", beta=self.inv_phi_scale)
        phi = pm.Deterministic("phi", 1.0 / inv_phi)
        x = data["x"]
        log_phi_mu = pt.logaddexp(pt.log(phi), eta)
        return (
            pt.gammaln(x + phi)
            - pt.gammaln(phi)
            - data["lgamma_x1"]
            + phi * (pt.log(phi) - log_phi_mu)
            + x * (eta - log_phi_mu)
        )

    def simulate(self, draws: Draws, rng: np.random.Generator, covariates: np.ndarray | None = None) -> np.ndarray:
        """NB2 draws via :func:`dpsynth.sampling.negative_binomial` (any ``phi`` in ``[0, inf]``).

        A mean that overflows (``X beta > 709``) gives inf.
        """
        from .. import sampling

        n = draws["beta"].shape[0]
        with np.errstate(over="ignore"):
            mu = np.exp(_linear(draws["beta"], covariates, n, paired=True))
        return sampling.negative_binomial(rng, mu, draws["phi"])

    def reference(self, loc: float, scale: float) -> dict[str, np.ndarray]:
        """Poisson's reference mean, and the dispersion with ``Var(log(1 + x))`` near ``scale^2``.

        ``Var(log(1 + X)) ~ (mu + mu^2 / phi) / (1 + mu)^2``, so ``1/phi = (scale^2 (1 + mu)^2 - mu) / mu^2``,
        kept in [1e-4, 2]: a reference more dispersed than twice a geometric distribution's puts nearly all
        its mass at 0, and every record above 0 would then sit far above its reference term and be censored
        (the scale of a few small counts on the log(1 + x) scale, widened, easily asks for that).
        """
        ref = super().reference(loc, scale)
        mu = max(float(np.expm1(loc)), 0.5)
        inv_phi = float(np.clip((float(scale) ** 2 * (1 + mu) ** 2 - mu) / mu**2, 1e-4, 2.0))
        return {**ref, "inv_phi": np.array([inv_phi])}

    def reference_loglik(self, x: np.ndarray, covariates: np.ndarray | None = None) -> np.ndarray:
        """The record at its own mean with the public dispersion :data:`REFERENCE_PHI`: ``log NB(x | x, phi_0)``."""
        from scipy import special

        x, phi = np.asarray(x, dtype=float), REFERENCE_PHI
        return (special.gammaln(x + phi) - special.gammaln(phi) - special.gammaln(x + 1.0)
                + phi * np.log(phi / (phi + x)) + special.xlogy(x, x / (phi + x)))

    def public_start(self) -> dict[str, np.ndarray]:
        """Every coefficient 0, ``sigma_beta = 1``, and the overdispersion :data:`START_INV_PHI`."""
        return {**super().public_start(), "inv_phi": np.array([START_INV_PHI])}


#: The family this module declares (:mod:`dpsynth.models.catalog`).
FAMILY = NegBinomialRegression

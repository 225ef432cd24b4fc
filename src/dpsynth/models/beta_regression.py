"""Beta regression for outcomes in (0, 1) with a logit mean (the censoring paper's SDR model)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..validation import check_support
from .base import Draws, ModelFamily, _check_n_coef, _linear

if TYPE_CHECKING:  # pragma: no cover
    import pytensor.tensor as pt

__all__ = ["FAMILY", "BetaRegression"]


@dataclass(frozen=True)
class BetaRegression(ModelFamily):
    """Beta regression for outcomes in (0, 1): ``logit mu_i = X_i beta``, precision ``kappa``.

    ``a_i = mu_i kappa``, ``b_i = (1 - mu_i) kappa``. Priors: ``beta_j ~ Normal(0, beta_sd)``,
    ``kappa ~ Gamma(kappa_alpha, kappa_beta)`` (mean ``kappa_alpha / kappa_beta``).
    """

    n_coef: int = 1
    beta_sd: float = 2.5
    kappa_alpha: float = 2.0
    kappa_beta: float = 0.1
    name: str = "beta_regression"
    needs_covariates: bool = True
    takes_covariates = True
    design_field = "n_coef"
    placeholder = 0.5
    reference_scale = ("logit", -25.0, 25.0)

    def _check_support(self, x: np.ndarray) -> None:
        check_support(x, "x", lower=0.0, upper=1.0, lower_open=True, upper_open=True, model="the beta regression")

    def check_data(self, x, covariates=None):
        arr, cov = super().check_data(x, covariates)
        _check_n_coef(cov, self.n_coef, self.name)
        return arr, cov

    def data_values(self, x: np.ndarray, covariates: np.ndarray | None) -> dict[str, np.ndarray]:
        return {"log_x": np.log(x), "log1m_x": np.log1p(-x), "X": covariates}

    def record_logp(self, data: Mapping[str, pt.TensorVariable]) -> pt.TensorVariable:
        import pymc as pm
        import pytensor.tensor as pt

        beta = pm.Normal("beta", 0.0, self.beta_sd, shape=self.n_coef)
        kappa = pm.Gamma("kappa", alpha=self.kappa_alpha, beta=self.kappa_beta)
        mu = pm.math.invlogit(pt.dot(data["X"], beta))
        a = mu * kappa
        b = (1.0 - mu) * kappa
        log_beta_fn = pt.gammaln(a) + pt.gammaln(b) - pt.gammaln(kappa)
        return (a - 1.0) * data["log_x"] + (b - 1.0) * data["log1m_x"] - log_beta_fn

    def _shape_params(self, draws: Draws, covariates: np.ndarray, paired: bool) -> tuple[np.ndarray, np.ndarray]:
        from scipy import special

        n = covariates.shape[0]
        mu = special.expit(_linear(draws["beta"], covariates, n, paired))
        kappa = draws["kappa"] if paired else draws["kappa"][:, None]
        return mu * kappa, (1.0 - mu) * kappa

    def simulate(self, draws: Draws, rng: np.random.Generator, covariates: np.ndarray | None = None) -> np.ndarray:
        """Beta draws via :func:`dpsynth.sampling.beta`, shapes ``kappa expit(+-X beta)``.

        The shapes are formed with ``expit(-eta)`` rather than ``1 - expit(eta)``, so a mean
        that rounds to 1 still leaves a positive ``b``; a shape that underflows to 0 gives the
        limit 0 or 1. Where both shapes are 0 (``kappa`` underflowed) the draw is the
        ``kappa -> 0`` limit Bernoulli(mu); where ``kappa`` is inf it is the point mass at mu.
        """
        from scipy import special

        from .. import sampling

        eta = _linear(draws["beta"], covariates, covariates.shape[0], paired=True)
        mu = special.expit(eta)
        kappa = np.asarray(draws["kappa"], dtype=float)
        with np.errstate(under="ignore", invalid="ignore"):
            a, b = kappa * mu, kappa * special.expit(-eta)
        zero = (a == 0) & (b == 0)
        inf = np.isposinf(kappa)  # the kappa -> inf limit (also avoids inf * 0 where mu is 0 or 1)
        x = sampling.beta(rng, np.where(zero | inf, 1.0, a), np.where(zero | inf, 1.0, b))
        if zero.any():
            x = np.where(zero, (rng.random(x.shape) < mu).astype(float), x)
        return np.where(inf, mu, x)

    def logcdf(self, q: np.ndarray, draws: Draws, covariates: np.ndarray | None = None) -> np.ndarray:
        from scipy import stats

        a, b = self._shape_params(draws, covariates, paired=False)
        return stats.beta.logcdf(q[None, :], a, b)

    def logsf(self, q: np.ndarray, draws: Draws, covariates: np.ndarray | None = None) -> np.ndarray:
        from scipy import stats

        a, b = self._shape_params(draws, covariates, paired=False)
        return stats.beta.logsf(q[None, :], a, b)

    def reference(self, loc: float, scale: float) -> dict[str, np.ndarray]:
        """Intercept ``loc`` (logit mean), other coefficients 0, the precision of :class:`BetaFamily`'s rule."""
        from scipy.special import expit

        from .base import _beta_precision, _coefficients

        mean = float(np.clip(expit(loc), 1e-6, 1 - 1e-6))
        return {"beta": _coefficients(self.n_coef, loc), "kappa": np.array([_beta_precision(mean, scale)])}

    def reference_loglik(self, x: np.ndarray, covariates: np.ndarray | None = None) -> np.ndarray:
        """The record at its own mean with the public precision :data:`~.base.REFERENCE_PRECISION`."""
        from .base import beta_saturated

        return beta_saturated(x)

    def public_start(self) -> dict[str, np.ndarray]:
        """A flat Beta (mean 1/2, small precision): every value in (0, 1) lies inside its window."""
        return {"beta": np.zeros((1, self.n_coef)), "kappa": np.array([1.0])}


#: The family this module declares (:mod:`dpsynth.models.catalog`).
FAMILY = BetaRegression

"""A finite mixture of lognormal regressions: a flexible density for a positive variable on public covariates.

``log x_i = X_i beta + e_i`` where the residual ``e_i`` is a mixture of ``K`` normals,
``sum_k w_k N(mu_k, sigma_k)``: skewed, heavy-tailed or bimodal residuals on the log scale, which a
single lognormal (:class:`~dpsynth.models.LognormalRegression`) fits badly. The design's first
column (the intercept) is absorbed by the components' means, so ``beta`` holds the slopes only.

The label problem: a mixture's likelihood does not change when its components are relabelled, so
unconstrained chains swap labels and R-hat and ESS lose their meaning. The means are therefore
**ordered**, ``mu_1 < mu_2 < ... < mu_K`` (PyMC's ordered transform): one labelling, and the
convergence checks mean what they say.

Every censored mechanism takes it as it takes any family: the record terms are the mixture's log
densities; the unit-free censored likelihood measures them from each record's own saturated
reference (the lognormal at the record's own location with the public scale of
:func:`~dpsynth.models.lognormal.lognormal_saturated`), which depends on the record alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..validation import DataError, check_support
from .base import Draws, ModelFamily, _check_n_coef, _design

if TYPE_CHECKING:  # pragma: no cover
    import pytensor.tensor as pt

__all__ = ["FAMILY", "LognormalMixture"]


@dataclass(frozen=True)
class LognormalMixture(ModelFamily):
    """A mixture of ``components`` lognormal regressions sharing their slopes.

    Priors: the ordered means ``mu_k ~ Normal(0, beta_sd)``, the slopes ``beta_j ~ Normal(0, slope_sd /
    sqrt(p - 1))`` (as :class:`~dpsynth.models.LognormalRegression`), the scales
    ``sigma_k ~ HalfCauchy(sigma_prior_scale)`` and the weights ``w ~ Dirichlet(weight_prior, ...)``
    (2 by default: components neither vanish nor dominate a priori).

    Parameters
    ----------
    n_coef : int
        Columns of the design (intercept included).
    components : int
        Mixture components ``K >= 2``.
    """

    n_coef: int = 1
    components: int = 2
    beta_sd: float = 10.0
    slope_sd: float = 1.0
    sigma_prior_scale: float = 5.0
    weight_prior: float = 2.0
    name: str = "lognormal_mixture"
    takes_covariates = True
    design_field = "n_coef"
    reference_scale = ("log", -30.0, 30.0)

    def __post_init__(self) -> None:
        k = self.components
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
            raise DataError(f"`components` must be an integer >= 2 (a mixture); got {k!r}.")

    def _check_support(self, x: np.ndarray) -> None:
        check_support(x, "x", lower=0.0, lower_open=True, model="the lognormal mixture")

    def check_data(self, x, covariates=None):
        arr, cov = super().check_data(x, covariates)
        _check_n_coef(cov, self.n_coef, self.name)
        return arr, cov

    def data_values(self, x: np.ndarray, covariates: np.ndarray | None) -> dict[str, np.ndarray]:
        X = _design(covariates, x.shape[0])
        return {"log_x": np.log(x), "Z": X[:, 1:] if X.shape[1] > 1 else np.zeros((x.shape[0], 1))}

    def _slope_sd(self) -> float:
        return float(self.slope_sd) / np.sqrt(max(self.n_coef - 1, 1))

    def record_logp(self, data: Mapping[str, pt.TensorVariable]) -> pt.TensorVariable:
        import pymc as pm
        import pytensor.tensor as pt

        K = int(self.components)
        mu = pm.Normal("mu", 0.0, self.beta_sd, shape=K, transform=pm.distributions.transforms.ordered,
                       initval=np.linspace(-1.0, 1.0, K))
        sigma = pm.HalfCauchy("sigma", beta=self.sigma_prior_scale, shape=K)
        w = pm.Dirichlet("w", a=np.full(K, float(self.weight_prior)))
        slopes = pm.Normal("slopes", 0.0, self._slope_sd(), shape=max(self.n_coef - 1, 1))
        eta = pt.dot(data["Z"], slopes) if self.n_coef > 1 else 0.0 * data["log_x"]
        e = (data["log_x"] - eta)[:, None]
        comp = pt.log(w)[None, :] - pt.log(sigma)[None, :] - 0.5 * ((e - mu[None, :]) / sigma[None, :]) ** 2
        return pt.logsumexp(comp, axis=1) - 0.5 * np.log(2 * np.pi) - data["log_x"]

    def _eta(self, draws: Draws, covariates: np.ndarray | None, n: int, paired: bool) -> np.ndarray:
        if self.n_coef == 1:
            return np.zeros(n) if paired else np.zeros((draws["mu"].shape[0], n))
        Z = _design(covariates, n)[:, 1:]
        b = np.asarray(draws["slopes"]).reshape(draws["slopes"].shape[0], -1)
        return np.einsum("ij,ij->i", Z, b) if paired else b @ Z.T

    def simulate(self, draws: Draws, rng: np.random.Generator, covariates: np.ndarray | None = None) -> np.ndarray:
        """A component per record (row i of the draws), then ``exp(eta_i + mu_k + sigma_k z)``."""
        mu, sigma, w = (np.asarray(draws[k], dtype=float) for k in ("mu", "sigma", "w"))
        n = mu.shape[0]
        u = rng.random(n)[:, None]
        k = np.minimum((u > np.cumsum(w, axis=1)).sum(axis=1), w.shape[1] - 1)
        rows = np.arange(n)
        with np.errstate(over="ignore", under="ignore"):
            return np.exp(self._eta(draws, covariates, n, True) + rng.normal(mu[rows, k], sigma[rows, k]))

    def reference_loglik(self, x: np.ndarray, covariates: np.ndarray | None = None) -> np.ndarray:
        """The record's lognormal density at its own location with the public scale (as the lognormal families)."""
        from .lognormal import lognormal_saturated

        return lognormal_saturated(x)

    def public_start(self) -> dict[str, np.ndarray]:
        """Ordered means about 0, the wide public scale, equal weights, slopes 0."""
        from .lognormal import START_SD

        K = int(self.components)
        return {"mu": np.linspace(-1.0, 1.0, K)[None, :], "sigma": np.full((1, K), START_SD),
                "w": np.full((1, K), 1.0 / K), "slopes": np.zeros((1, max(self.n_coef - 1, 1)))}


#: The family this module declares (:mod:`dpsynth.models.catalog`).
FAMILY = LognormalMixture

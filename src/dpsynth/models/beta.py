"""The Beta synthesizer for data in (0, 1), ``a = lambda phi``, ``b = lambda (1 - phi)``: the censoring paper's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..validation import check_support
from .base import Draws, ModelFamily

if TYPE_CHECKING:  # pragma: no cover
    import pytensor.tensor as pt

__all__ = ["FAMILY", "BetaFamily"]


@dataclass(frozen=True)
class BetaFamily(ModelFamily):
    """Beta synthesizer for data in (0, 1): ``a = lambda phi``, ``b = lambda (1 - phi)``.

    Priors: ``phi ~ Beta(1, 1)``, ``lambda ~ Pareto(m=lambda_min, alpha=lambda_alpha)``.
    """

    lambda_min: float = 0.1
    lambda_alpha: float = 1.5
    name: str = "beta"
    placeholder = 0.5
    reference_scale = ("logit", -25.0, 25.0)

    def _check_support(self, x: np.ndarray) -> None:
        check_support(x, "x", lower=0.0, upper=1.0, lower_open=True, upper_open=True, model="the Beta model")

    def data_values(self, x: np.ndarray, covariates: np.ndarray | None) -> dict[str, np.ndarray]:
        return {"log_x": np.log(x), "log1m_x": np.log1p(-x)}

    def record_logp(self, data: Mapping[str, pt.TensorVariable]) -> pt.TensorVariable:
        import pymc as pm
        import pytensor.tensor as pt

        phi = pm.Beta("phi", 1.0, 1.0)
        lam = pm.Pareto("lam", alpha=self.lambda_alpha, m=self.lambda_min)
        a = pm.Deterministic("a", lam * phi)
        b = pm.Deterministic("b", lam * (1.0 - phi))
        log_beta_fn = pt.gammaln(a) + pt.gammaln(b) - pt.gammaln(a + b)
        return (a - 1.0) * data["log_x"] + (b - 1.0) * data["log1m_x"] - log_beta_fn

    def simulate(self, draws: Draws, rng: np.random.Generator, covariates: np.ndarray | None = None) -> np.ndarray:
        """Beta draws via :func:`dpsynth.sampling.beta` (valid for any shapes, incl. under/overflowed)."""
        from .. import sampling

        return sampling.beta(rng, draws["a"], draws["b"])

    def logcdf(self, q: np.ndarray, draws: Draws, covariates: np.ndarray | None = None) -> np.ndarray:
        from scipy import stats

        return stats.beta.logcdf(q[None, :], draws["a"][:, None], draws["b"][:, None])

    def logsf(self, q: np.ndarray, draws: Draws, covariates: np.ndarray | None = None) -> np.ndarray:
        from scipy import stats

        return stats.beta.logsf(q[None, :], draws["a"][:, None], draws["b"][:, None])

    def reference(self, loc: float, scale: float) -> dict[str, np.ndarray]:
        """Mean ``expit(loc)``, precision such that the logit's standard deviation is ``scale``."""
        from scipy.special import expit

        from .base import _beta_precision

        phi = float(np.clip(expit(loc), 1e-6, 1 - 1e-6))
        return {"phi": np.array([phi]), "lam": np.array([_beta_precision(phi, scale)])}

    def reference_loglik(self, x: np.ndarray, covariates: np.ndarray | None = None) -> np.ndarray:
        """The record at its own mean with the public precision :data:`~.base.REFERENCE_PRECISION`."""
        from .base import beta_saturated

        return beta_saturated(x)

    def public_start(self) -> dict[str, np.ndarray]:
        """A flat Beta (mean 1/2, small precision): every value in (0, 1) lies inside its window."""
        return {"phi": np.array([0.5]), "lam": np.array([max(1.0, self.lambda_min * 2)])}


#: The family this module declares (:mod:`dpsynth.models.catalog`).
FAMILY = BetaFamily

"""Multinomial logit for a categorical variable with public levels, on public covariates.

The variable takes one of ``K`` levels, coded ``0, ..., K - 1`` in the order of its public levels;
level 0 is the reference. ``P(x_i = k) = softmax(X_i beta)_k`` with ``beta`` a ``(p, K - 1)``
matrix of coefficients (the reference's column is 0). The levels must be public (declared before
the data are seen, e.g. a pandas ``Categorical``'s categories): the set of levels that happen to
occur in the data is itself a figure of the data.
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

__all__ = ["FAMILY", "MultinomialLogit", "PRIOR_MEAN", "log_odds"]

#: The ``pm.Data`` container of the intercepts' prior mean (the log-odds of each level against the first).
PRIOR_MEAN = "intercept_prior_mean"


def log_odds(shares: np.ndarray) -> np.ndarray:
    """The log-odds ``log(p_k / p_0)`` of every level but the first: the intercepts of shares ``p`` at covariates 0."""
    p = np.asarray(shares, dtype=float)
    return np.log(p[1:]) - np.log(p[0])


@dataclass(frozen=True)
class MultinomialLogit(ModelFamily):
    """Multinomial logit regression of a categorical variable on public covariates.

    Priors: ``beta_jk ~ Normal(0, beta_sd)`` for every design column ``j`` and non-reference level
    ``k``, the intercepts' (``j = 0``) centred at the ``pm.Data`` :data:`PRIOR_MEAN` (0 unless a fit
    sets it from public or DP shares of the levels). A probability mass function: every record's
    log-likelihood is ``<= 0``.

    Parameters
    ----------
    n_levels : int
        Number of public levels ``K >= 2``.
    n_coef : int
        Columns of the design (intercept included).
    beta_sd : float
        Prior standard deviation of the coefficients.
    interactions : bool
        Add every product of two of the design's columns (the conditioning columns' interactions): a level's
        odds may then depend on a combination of them, e.g. on one covariate more strongly at some level of
        another. Their ``q`` coefficients per level have the prior ``Normal(0, interaction_sd / sqrt(q))``, so
        that together they add a bounded prior spread however many there are.

    Examples
    --------
    >>> import numpy as np
    >>> from dpsynth.models import MultinomialLogit
    >>> fam = MultinomialLogit(n_levels=3)
    >>> draws = {"beta": np.zeros((4, 1, 2))}
    >>> fam.simulate(draws, np.random.default_rng(0)).shape
    (4,)
    """

    n_levels: int = 2
    n_coef: int = 1
    beta_sd: float = 2.5
    interactions: bool = False
    interaction_sd: float = 1.0
    name: str = "multinomial"
    one_signed = True  # log probabilities are <= 0
    continuous = False
    categorical = True
    takes_covariates = True
    design_field = "n_coef"
    placeholder = 0.0

    def __post_init__(self) -> None:
        if isinstance(self.n_levels, bool) or not isinstance(self.n_levels, (int, np.integer)) or self.n_levels < 2:
            raise DataError(f"`n_levels` must be an integer >= 2 (the public levels); got {self.n_levels!r}.")

    def _check_support(self, x: np.ndarray) -> None:
        check_support(x, "x", lower=0.0, upper=float(self.n_levels - 1), integer=True,
                      model=f"the multinomial model with {self.n_levels} levels (codes 0 to {self.n_levels - 1})")

    def check_data(self, x, covariates=None):
        arr, cov = super().check_data(x, covariates)
        _check_n_coef(cov, self.n_coef, self.name)
        return arr, cov

    def features(self, X: np.ndarray) -> np.ndarray:
        """The design, and with ``interactions`` every product of two of its non-intercept columns."""
        if not self.interactions or X.shape[1] < 3:
            return X
        i, j = np.triu_indices(X.shape[1] - 1, 1)
        return np.column_stack([X, X[:, 1:][:, i] * X[:, 1:][:, j]])

    @property
    def n_features(self) -> int:
        """Columns of :meth:`features` (the coefficients per non-reference level)."""
        p = self.n_coef - 1
        return self.n_coef + (p * (p - 1) // 2 if self.interactions and p >= 2 else 0)

    def data_values(self, x: np.ndarray, covariates: np.ndarray | None) -> dict[str, np.ndarray]:
        # the intercepts' prior mean: 0 (equal levels) unless a public or DP share of each level is given at fit
        return {"code": x.astype("int64"), "X": self.features(_design(covariates, x.shape[0])),
                PRIOR_MEAN: np.zeros(self.n_levels - 1)}

    def record_logp(self, data: Mapping[str, pt.TensorVariable]) -> pt.TensorVariable:
        import pymc as pm
        import pytensor.tensor as pt

        F = self.n_features
        mean = pt.concatenate([data[PRIOR_MEAN][None, :], pt.zeros((F - 1, self.n_levels - 1))], axis=0)
        q = F - self.n_coef
        sd = np.r_[np.full(self.n_coef, self.beta_sd), np.full(q, self.interaction_sd / np.sqrt(max(q, 1)))]
        beta = pm.Normal("beta", mean, sd[:, None], shape=(F, self.n_levels - 1))
        eta = pt.dot(data["X"], beta)
        logits = pt.concatenate([pt.zeros((eta.shape[0], 1)), eta], axis=1)
        logp = logits - pt.logsumexp(logits, axis=1, keepdims=True)
        code = pt.cast(data["code"], "int64")
        return logp[pt.arange(code.shape[0]), code]

    def simulate(self, draws: Draws, rng: np.random.Generator, covariates: np.ndarray | None = None) -> np.ndarray:
        """One level code per row of the draws (row i for record i), by the Gumbel-max trick."""
        beta = np.asarray(draws["beta"], dtype=float)
        n = beta.shape[0]
        X = self.features(_design(covariates, n))
        eta = np.einsum("ij,ijk->ik", X, beta.reshape(n, self.n_features, self.n_levels - 1))
        logits = np.concatenate([np.zeros((n, 1)), eta], axis=1)
        return np.argmax(logits + rng.gumbel(size=logits.shape), axis=1).astype(float)

    def public_reference(self) -> dict[str, np.ndarray]:
        """Every level equally likely (all coefficients 0): a reference that needs nothing of the data."""
        return {"beta": np.zeros((1, self.n_features, self.n_levels - 1))}

    def public_start(self) -> dict[str, np.ndarray]:
        """Every level equally likely."""
        return self.public_reference()


#: The family this module declares (:mod:`dpsynth.models.catalog`).
FAMILY = MultinomialLogit

"""Synthetic data from the (pseudo) posterior predictive distribution.

Releasing ``m`` synthetic data sets drawn from an ``eps``-private posterior costs ``m * eps``
under sequential composition.
"""

from __future__ import annotations

import numpy as np

from .fitting import Fit
from .seeds import SeedLike, generator

__all__ = ["synthesize", "composed_eps"]


def synthesize(fit: Fit, seed: SeedLike = None, *, per_record: bool = True, covariates=None) -> np.ndarray:
    """Draw one synthetic data set of the fit's size from its posterior predictive.

    Parameters
    ----------
    fit : Fit
        A fitted mechanism.
    seed : int or SeedSequence
        Random stream.
    per_record : bool
        If True (the seeds' practice) each synthetic record uses its own posterior draw chosen
        at random; if False one draw is used for the whole data set.
    covariates : array_like, optional
        Public covariates of the synthetic records (default: the fit's).

    Returns
    -------
    numpy.ndarray
    """
    rng = generator(seed)
    n = fit.x.size
    S = fit.n_draws
    idx = rng.integers(S, size=n) if per_record else np.full(n, rng.integers(S))
    draws = {k: v[idx] for k, v in fit.draws.items()}
    cov = fit.covariates if covariates is None else np.asarray(covariates, dtype=float)
    return np.asarray(fit.family.simulate(draws, rng, cov), dtype=float)


def composed_eps(eps: float, m: int) -> float:
    """Total privacy loss of releasing ``m`` synthetic data sets, each ``eps``-private."""
    if m < 1:
        raise ValueError(f"`m` must be >= 1; got {m!r}.")
    return float(eps) * int(m)

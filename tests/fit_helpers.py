"""Small MCMC settings and fits made from given draws, for the tests of both folders.

They live here, not in ``conftest.py``: ``tests/`` and ``tests/book/`` each have a ``conftest.py``,
and a test module cannot tell which of the two ``import conftest`` would give it.
"""

from __future__ import annotations

import numpy as np

from dpsynth.fitting import Diagnostics, Fit, SamplerConfig
from dpsynth.privacy import record_bounds

__all__ = ["SMALL", "TINY", "betareg_design", "fit_from_draws"]

#: Small MCMC settings used by most fitting tests.
SMALL = SamplerConfig(draws=300, tune=300, chains=2)
#: Even smaller, for property tests that fit many data sets.
TINY = SamplerConfig(draws=100, tune=150, chains=2)


def betareg_design(n: int, seed: int = 0) -> np.ndarray:
    """Intercept plus one binary covariate."""
    rng = np.random.default_rng(seed)
    return np.column_stack([np.ones(n), rng.integers(0, 2, size=n).astype(float)])


def fit_from_draws(cm, x, draws, *, covariates=None, weights=None, bound=None) -> Fit:
    """A :class:`Fit` whose posterior draws are given (not sampled).

    The by-record bounds are computed from the compiled model's record log-likelihood, exactly
    as :meth:`CompiledModel.fit` does after sampling.
    """
    xv = np.asarray(x, dtype=float)
    draws = {k: np.asarray(v, dtype=float) for k, v in draws.items()}
    w = np.ones(xv.size) if weights is None else np.asarray(weights, dtype=float)
    F = cm.record_loglik(draws, xv, covariates)
    b = record_bounds(F, w, bound)
    return Fit(
        family=cm.family, x=xv, covariates=covariates, weights=w,
        bound=float("inf") if bound is None else float(bound), draws=draws, bounds=b,
        diagnostics=Diagnostics(rhat={}, ess_bulk={}), compiled=cm,
    )

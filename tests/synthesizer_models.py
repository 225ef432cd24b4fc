"""A plain PyMC model-building function used by the Synthesizer tests (importable by name for save/load)."""

from __future__ import annotations

import pymc as pm
import pytensor.tensor as pt

import dpsynth


def lognormal_regression(x, X):
    """Log-normal regression on the design ``X``, written through ``dpsynth.weighted_loglik``."""
    beta = pm.Normal("beta", 0.0, 2.0, shape=X.shape[1])
    sigma = pm.HalfNormal("sigma", 1.0)
    dist = pm.LogNormal.dist(mu=pt.dot(X, beta), sigma=sigma)
    dpsynth.weighted_loglik(pm.logp(dist, x))
    return dist


def no_weighted_loglik(x, X):
    """A model whose likelihood does not go through the helper (refused)."""
    mu = pm.Normal("mu", 0.0, 1.0)
    pm.Normal("obs", mu, 1.0, observed=x)
    return pm.Normal.dist(mu, 1.0, shape=x.shape)

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


def unclamped_potential(x, X):
    """A model that adds its own unclamped term of the data (refused)."""
    mu = pm.Normal("mu", 0.0, 2.0)
    pm.Potential("extra", pm.logp(pm.LogNormal.dist(mu, 1.0), x).sum())
    return pm.LogNormal.dist(mu, 1.0, shape=x.shape)


def data_prior(x, X):
    """A prior centred at the data's mean (refused: the data enter past the clamp)."""
    mu = pm.Normal("mu", pt.log(x).mean(), 1.0)
    return pm.LogNormal.dist(mu, 1.0, shape=x.shape)


def kept_mean(x, X):
    """A deterministic of the data, saved with the draws (refused)."""
    mu = pm.Normal("mu", 0.0, 2.0)
    pm.Deterministic("xbar", x.mean())
    return pm.LogNormal.dist(mu, 1.0, shape=x.shape)


def pooled_location(x, X):
    """A distribution centred at the data's own mean: one record's term depends on all (refused)."""
    mu = pm.Normal("mu", 0.0, 2.0)
    return pm.LogNormal.dist(mu + 0.0 * pt.log(x).mean(), 1.0, shape=x.shape)


def changed_term(x, X):
    """A term passed to the helper that is not the returned distribution's log-density (refused)."""
    mu = pm.Normal("mu", 0.0, 2.0)
    dist = pm.LogNormal.dist(mu, 1.0, shape=x.shape)
    dpsynth.weighted_loglik(pm.logp(dist, x) + 100.0)
    return dist


def lognormal_no_covariates(x, X):
    """A model that ignores the design X (and returns only its distribution: the package adds the likelihood)."""
    mu = pm.Normal("mu", 0.0, 5.0)
    sigma = pm.HalfNormal("sigma", 2.0)
    return pm.LogNormal.dist(mu, sigma, shape=x.shape)


def lognormal_observed_too(x, X):
    """The distribution returned, and an unclamped likelihood of the same data added beside it (issue 27's bypass)."""
    mu = pm.Normal("mu", 0.0, 5.0)
    sigma = pm.HalfNormal("sigma", 2.0)
    pm.LogNormal("obs", mu, sigma, observed=x)
    return pm.LogNormal.dist(mu, sigma, shape=x.shape)

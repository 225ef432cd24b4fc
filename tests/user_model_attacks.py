"""Model functions that read the confidential data past the clamp: the forms of the adversarial review.

Each was once accepted and stated "Censor_uw (strict DP)". The package now builds every model function with ``x``
holding a public placeholder (the data enter only at fit time) and refuses what its check can see; the tests
(``tests/test_user_model_games.py``) show for each form that it is refused or cannot leak, and, as a control, that
built the old way (``x`` holding the data) it does leak. Module-level functions, importable by name (save/load).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pymc as pm
import pytensor
import pytensor.tensor as pt

from dpsynth.likelihood import _ATTR, BOUND, REFERENCE, WEIGHTS, LikelihoodTerm

#: The data frame a closure reads (set by the tests): a global no inspection of the model can see.
FRAME: pd.DataFrame | None = None


def _priors():
    return pm.Normal("mu", 0.0, 2.0), pm.HalfNormal("sigma", 1.0)


def prior_from_value(x, X):
    """A prior centred at the largest log value, read off ``x.get_value()`` at build time."""
    mu = pm.Normal("mu", float(np.log(x.get_value()).max()), 0.5)
    sigma = pm.HalfNormal("sigma", 1.0)
    return pm.LogNormal.dist(mu, sigma, shape=x.shape)


def prior_from_size(x, X):
    """A prior centred at the number of records, read off ``x.get_value()`` at build time (n is private with one
    record removed: a DP count of it is what the release pays for)."""
    mu = pm.Normal("mu", float(len(x.get_value())), 0.1)
    sigma = pm.HalfNormal("sigma", 1.0)
    return pm.LogNormal.dist(pt.log(mu), sigma, shape=x.shape)


def fixed_size(x, X):
    """A distribution whose size is fixed when the model is built (it would not follow the data's)."""
    mu, sigma = _priors()
    return pm.LogNormal.dist(mu, sigma, size=len(x.get_value()))


def potential_from_value(x, X):
    """An unclamped likelihood of ``x.get_value()`` (a constant copy of the column) added as a potential."""
    mu, sigma = _priors()
    pm.Potential("extra", pm.logp(pm.LogNormal.dist(mu, sigma), x.get_value()).sum())
    return pm.LogNormal.dist(mu, sigma, shape=x.shape)


def deterministic_from_value(x, X):
    """The largest value kept as a deterministic (saved with the draws, once)."""
    mu, sigma = _priors()
    pm.Deterministic("xmax", pt.as_tensor(float(x.get_value().max())) + 0.0 * mu)
    return pm.LogNormal.dist(mu, sigma, shape=x.shape)


def censored_at_value(x, X):
    """A distribution censored above at the largest value: synthetic values pile up on it exactly."""
    mu, sigma = _priors()
    return pm.Censored.dist(pm.LogNormal.dist(mu, sigma, shape=x.shape), lower=None,
                            upper=float(x.get_value().max()))


def closure_over_frame(x, X):
    """A prior centred at the largest log value of the data frame, read through a global (a closure)."""
    mu = pm.Normal("mu", float(np.log(FRAME["x"]).max()), 0.5)
    sigma = pm.HalfNormal("sigma", 1.0)
    return pm.LogNormal.dist(mu, sigma, shape=x.shape)


def closure_copy(x, X):
    """An unclamped likelihood of the data frame's column, read through a global (a data-sized constant)."""
    mu, sigma = _priors()
    pm.Potential("extra", pm.logp(pm.LogNormal.dist(mu, sigma), FRAME["x"].to_numpy()).sum())
    return pm.LogNormal.dist(mu, sigma, shape=x.shape)


def shared_copy(x, X):
    """An unclamped likelihood of a ``pytensor.shared`` copy of the column."""
    mu, sigma = _priors()
    copy = pytensor.shared(np.asarray(x.get_value()), name="x_copy")
    pm.Potential("extra", pm.logp(pm.LogNormal.dist(mu, sigma), copy).sum())
    return pm.LogNormal.dist(mu, sigma, shape=x.shape)


def custom_logp_reads_x(x, X):
    """A ``pm.CustomDist`` whose log density reads the whole column: each record's term depends on every record."""
    mu, sigma = _priors()

    def logp(value, mu, sigma):
        return pm.logp(pm.LogNormal.dist(mu, sigma), value) + pt.log(x).max()

    def random(mu, sigma, rng=None, size=None):
        return rng.lognormal(mu, sigma, size=size)

    return pm.CustomDist.dist(mu, sigma, logp=logp, random=random, shape=x.shape)


def hand_built_likelihood(x, X):
    """A likelihood registered by hand, as the helper would, but without the clamp."""
    model = pm.modelcontext(None)
    mu, sigma = _priors()
    dist = pm.LogNormal.dist(mu, sigma, shape=x.shape)
    logp = pm.logp(dist, x)
    n = int(x.get_value().shape[0])
    w, m, r = pm.Data(WEIGHTS, np.ones(n)), pm.Data(BOUND, np.asarray(np.inf)), pm.Data(REFERENCE, np.zeros(n))
    pm.Potential("loglik", pt.sum(w * logp - r))  # no clamp
    setattr(model, _ATTR, LikelihoodTerm(name="loglik", logp=logp, weights=w, bound=m, reference=r))
    return dist


#: Every form, by name.
FORMS = {f.__name__: f for f in (prior_from_value, prior_from_size, fixed_size, potential_from_value,
                                 deterministic_from_value, censored_at_value, closure_over_frame, closure_copy,
                                 shared_copy, custom_logp_reads_x, hand_built_likelihood)}

"""Range restriction: knowledge probabilities (A), tail-safe log P (B) and the whole-term reading (B').

The knowledge probabilities and range probabilities are checked on fits built from given draws
(no MCMC): ``lambda_i`` against a Monte Carlo simulation of the posterior predictive on a tiny
case, and ``log P_theta(R_i)`` against numerical integration for ranges deep in either tail,
where the naive ``log(F(b x) - F(a x))`` underflows to ``log 0``.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, special

from dpsynth import mechanisms, models, range_readings
from dpsynth.fitting import Diagnostics, Fit
from dpsynth.privacy import record_bounds
from dpsynth.validation import DataError


def _draws_fit(x, mu, sigma) -> Fit:
    """A lognormal Fit with given draws; enough for the CDF-based functions (no compiled model)."""
    fam = models.LognormalFamily()
    xv = np.asarray(x, dtype=float)
    ones = np.ones(xv.size)
    b = record_bounds(np.zeros((len(mu), xv.size)), ones)
    return Fit(family=fam, x=xv, covariates=None, weights=ones, bound=float("inf"),
               draws={"mu": np.asarray(mu, float), "sigma": np.asarray(sigma, float)},
               bounds=b, diagnostics=Diagnostics(rhat={}, ess_bulk={}))


def _log_interval_by_quadrature(lo_z: float, hi_z: float) -> float:
    """log of int_{lo}^{hi} phi(z) dz, by integrating exp(log phi - c) with c the max of log phi."""
    zc = min(max(0.0, lo_z), hi_z)   # point of the interval closest to 0
    c = -0.5 * zc**2 - 0.5 * np.log(2 * np.pi)
    val, _ = integrate.quad(lambda z: np.exp(-0.5 * z**2 - 0.5 * np.log(2 * np.pi) - c), lo_z, hi_z,
                            epsabs=0, epsrel=1e-12, limit=200)
    return float(np.log(val) + c)


def test_lambda_matches_posterior_predictive_simulation():
    rng = np.random.default_rng(1)
    S = 40
    mu = rng.normal(1.0, 0.05, S)
    sigma = np.abs(rng.normal(1.0, 0.04, S))
    x = np.array([0.3, 1.0, 2.7, 8.0, 30.0])
    fit = _draws_fit(x, mu, sigma)
    for a, b in [(0.4, 1.8), (0.6, 1.2)]:
        lam = range_readings.knowledge_lambda(fit, a, b)
        # Monte Carlo: x* from the posterior predictive (a random draw, then the lognormal)
        K = 200_000
        s = rng.integers(S, size=K)
        xs = np.exp(rng.normal(mu[s], sigma[s]))
        lam_mc = np.array([np.mean((xs < a * xi) | (xs > b * xi)) for xi in x])
        se = np.sqrt(lam_mc * (1 - lam_mc) / K) + 1e-12
        assert np.all(np.abs(lam - lam_mc) <= 5 * se + 1e-4), (lam, lam_mc)
        # the same quantity, from the vectorised CDF formula directly
        za = (np.log(a * x)[None, :] - mu[:, None]) / sigma[:, None]
        zb = (np.log(b * x)[None, :] - mu[:, None]) / sigma[:, None]
        np.testing.assert_allclose(lam, 1 - (special.ndtr(zb) - special.ndtr(za)).mean(0), atol=1e-12)


def test_lambda_no_range_is_zero_and_narrower_range_rules_out_more():
    fit = _draws_fit([0.5, 2.0, 9.0], [1.0, 1.1], [1.0, 0.9])
    np.testing.assert_array_equal(range_readings.knowledge_lambda(fit, -np.inf, np.inf), 0.0)
    wide = range_readings.knowledge_lambda(fit, 0.4, 1.8)
    narrow = range_readings.knowledge_lambda(fit, 0.6, 1.2)
    assert np.all(narrow > wide) and np.all((wide >= 0) & (narrow <= 1))


@pytest.mark.parametrize("log_x", [40.0, 12.0, -12.0, -40.0])
def test_log_range_prob_deep_in_the_tail(log_x):
    mu, sigma, a, b = 0.0, 1.0, 0.4, 1.8
    fit = _draws_fit([np.exp(log_x)], [mu], [sigma])
    got = float(mechanisms.range_log_prob(fit, a, b)[0, 0])
    lo_z, hi_z = (log_x + np.log(a) - mu) / sigma, (log_x + np.log(b) - mu) / sigma
    ref = _log_interval_by_quadrature(lo_z, hi_z)
    assert np.isfinite(got)
    assert got == pytest.approx(ref, rel=1e-8)
    if abs(log_x) >= 40:
        with np.errstate(divide="ignore"):
            naive = np.log(special.ndtr(hi_z) - special.ndtr(lo_z))
        assert naive == -np.inf   # what the log-scale computation avoids
        # and (A) sees such a record as fully known to the public, without NaN
        assert range_readings.knowledge_lambda(fit, a, b)[0] == pytest.approx(1.0)


def test_log_range_prob_bulk_matches_direct_difference():
    rng = np.random.default_rng(3)
    mu, sigma = rng.normal(0, 1, 7), rng.uniform(0.5, 2, 7)
    x = np.exp(rng.normal(0, 2, 11))
    fit = _draws_fit(x, mu, sigma)
    got = mechanisms.range_log_prob(fit, 0.6, 1.2)
    za = (np.log(0.6 * x)[None, :] - mu[:, None]) / sigma[:, None]
    zb = (np.log(1.2 * x)[None, :] - mu[:, None]) / sigma[:, None]
    np.testing.assert_allclose(got, np.log(special.ndtr(zb) - special.ndtr(za)), rtol=1e-9)


def test_whole_term_reading_requires_a_range_result():
    fit = _draws_fit([1.0], [0.0], [1.0])
    from dpsynth.mechanisms import MechanismResult
    fake = MechanismResult(name="LW", fit=fit, weights=np.ones(1), bounds=fit.bounds, privacy=fit.privacy, extra={})
    with pytest.raises(DataError):
        range_readings.whole_term_truncated(fake)

"""Range restriction (:mod:`dpsynth.mechanisms.range_restriction`): knowledge probabilities (A), the
range-truncated sensitivity (B), the whole-term reading (B') and the tail-safe ``log P``.

The knowledge and range probabilities are checked on fits built from given draws (no MCMC):
``lambda_i`` against a Monte Carlo simulation of the posterior predictive on a tiny case, and
``log P_theta(R_i)`` against numerical integration for ranges deep in either tail, where the naive
``log(F(b x) - F(a x))`` underflows to ``log 0``. The mechanisms' weights and bounds are checked
against hand formulas on real (small) refits.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import simulated
from fit_helpers import SMALL, TINY, fit_from_draws
from scipy import integrate, special, stats

from dpsynth import fitting, mechanisms, models, synthetic_data
from dpsynth.fitting import ConvergenceWarning, Diagnostics, Fit, SamplerConfig
from dpsynth.mechanisms import range_restriction as rr
from dpsynth.privacy import record_bounds
from dpsynth.validation import DataError
from dpsynth.weights import lipschitz_weights

pytestmark = pytest.mark.filterwarnings("ignore::dpsynth.fitting.ConvergenceWarning")

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
        lam = rr.knowledge_lambda(fit, a, b)
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
    np.testing.assert_array_equal(rr.knowledge_lambda(fit, -np.inf, np.inf), 0.0)
    wide = rr.knowledge_lambda(fit, 0.4, 1.8)
    narrow = rr.knowledge_lambda(fit, 0.6, 1.2)
    assert np.all(narrow > wide) and np.all((wide >= 0) & (narrow <= 1))


@pytest.mark.parametrize("log_x", [40.0, 12.0, -12.0, -40.0])
def test_log_range_prob_deep_in_the_tail(log_x):
    mu, sigma, a, b = 0.0, 1.0, 0.4, 1.8
    fit = _draws_fit([np.exp(log_x)], [mu], [sigma])
    got = float(rr.range_log_prob(fit, a, b)[0, 0])
    lo_z, hi_z = (log_x + np.log(a) - mu) / sigma, (log_x + np.log(b) - mu) / sigma
    ref = _log_interval_by_quadrature(lo_z, hi_z)
    assert np.isfinite(got)
    assert got == pytest.approx(ref, rel=1e-8)
    if abs(log_x) >= 40:
        with np.errstate(divide="ignore"):
            naive = np.log(special.ndtr(hi_z) - special.ndtr(lo_z))
        assert naive == -np.inf   # what the log-scale computation avoids
        # and (A) sees such a record as fully known to the public, without NaN
        assert rr.knowledge_lambda(fit, a, b)[0] == pytest.approx(1.0)


def test_log_range_prob_bulk_matches_direct_difference():
    rng = np.random.default_rng(3)
    mu, sigma = rng.normal(0, 1, 7), rng.uniform(0.5, 2, 7)
    x = np.exp(rng.normal(0, 2, 11))
    fit = _draws_fit(x, mu, sigma)
    got = rr.range_log_prob(fit, 0.6, 1.2)
    za = (np.log(0.6 * x)[None, :] - mu[:, None]) / sigma[:, None]
    zb = (np.log(1.2 * x)[None, :] - mu[:, None]) / sigma[:, None]
    np.testing.assert_allclose(got, np.log(special.ndtr(zb) - special.ndtr(za)), rtol=1e-9)


def test_whole_term_reading_requires_a_range_result():
    fit = _draws_fit([1.0], [0.0], [1.0])
    from dpsynth.mechanisms import MechanismResult
    fake = MechanismResult(name="LW", fit=fit, weights=np.ones(1), bounds=fit.bounds, privacy=fit.privacy, extra={})
    with pytest.raises(DataError):
        rr.whole_term_truncated(fake)


# --------------------------------------------------------------------------------------------
# (A) and (B) on a lognormal base fit with given draws (exact checks) and real refits
# --------------------------------------------------------------------------------------------

A, B = 0.4, 1.8


@pytest.fixture(scope="module")
def ln_base(lognormal_cm):
    x = simulated.lognormal_data(150, 41, meanlog=1.0, sdlog=0.6)
    rng = np.random.default_rng(41)
    draws = {"mu": rng.normal(1.0, 0.05, size=40), "sigma": np.abs(rng.normal(0.6, 0.03, size=40))}
    return fit_from_draws(lognormal_cm, x, draws)


def _range_prob(x, draws, a, b):
    """P_theta(a x <= X <= b x) for a lognormal, by the normal CDF of the log."""
    mu, sd = draws["mu"][:, None], draws["sigma"][:, None]
    return stats.norm.cdf((np.log(b * x) - mu) / sd) - stats.norm.cdf((np.log(a * x) - mu) / sd)


def _lognormal_f(x, draws):
    return stats.lognorm.logpdf(x[None, :], s=draws["sigma"][:, None], scale=np.exp(draws["mu"])[:, None])


@pytest.mark.slow
def test_range_log_prob_by_hand(ln_base):
    got = rr.range_log_prob(ln_base, A, B)
    np.testing.assert_allclose(got, np.log(_range_prob(ln_base.x, ln_base.draws, A, B)), rtol=1e-10)


@pytest.mark.slow
def test_range_log_prob_no_range_is_zero(ln_base):
    got = rr.range_log_prob(ln_base, -np.inf, np.inf)
    assert got.shape == (40, 150) and (got == 0).all()


@pytest.mark.slow
def test_range_averaged_knowledge_weights(lognormal_cm, ln_base):
    w = np.linspace(0.1, 1.0, ln_base.x.size)
    res = rr.range_averaged(lognormal_cm, ln_base, w, A, B, sampler=SMALL, seed=11)
    lam = 1 - _range_prob(ln_base.x, ln_base.draws, A, B).mean(axis=0)
    np.testing.assert_allclose(res.weights, lam + (1 - lam) * w, rtol=1e-10)
    assert ((res.weights >= w) & (res.weights <= 1)).all()
    # Delta = max_{s,i} |(1 - lambda_i) alpha_i f_s(x_i)| at the refit's draws
    f = _lognormal_f(res.fit.x, res.fit.draws)
    np.testing.assert_allclose(res.bounds.delta_i, np.abs((1 - lam) * w * f).max(axis=0), rtol=1e-8)
    assert res.privacy.delta == pytest.approx(np.abs((1 - lam) * w * f).max(), rel=1e-8)
    assert res.privacy.extra["mean_lambda"] == pytest.approx(lam.mean())
    assert res.name == "A[0.4,1.8]" and res.guarantee == "aDP"


@pytest.mark.slow
def test_range_truncated_weights_and_delta(lognormal_cm, ln_base):
    res = rr.range_truncated(lognormal_cm, ln_base, A, B, sampler=SMALL, seed=12)
    # LW weights from the base fit's truncated sensitivities |f - log P|
    f0 = _lognormal_f(ln_base.x, ln_base.draws)
    sens = np.abs(f0 - np.log(_range_prob(ln_base.x, ln_base.draws, A, B))).max(axis=0)
    r = (sens - sens.min()) / (sens.max() - sens.min())
    np.testing.assert_allclose(res.weights, 1 - r, rtol=1e-8, atol=1e-12)
    # Delta = max_{s,i} |alpha_i f_s - log P_s(R_i)| at the refit's draws
    d = res.fit.draws
    g = res.weights * _lognormal_f(res.fit.x, d) - np.log(_range_prob(res.fit.x, d, A, B))
    np.testing.assert_allclose(res.bounds.delta_i, np.abs(g).max(axis=0), rtol=1e-8)
    assert res.name == "B[0.4,1.8]" and res.guarantee == "aDP"


@pytest.mark.slow
def test_range_truncated_without_range_is_lw(lognormal_cm, ln_base):
    res = rr.range_truncated(lognormal_cm, ln_base, -np.inf, np.inf, sampler=TINY, seed=13)
    np.testing.assert_allclose(res.weights, lipschitz_weights(ln_base.bounds.abs_loglik), rtol=1e-12)
    np.testing.assert_allclose(res.bounds.delta_i, res.fit.bounds.delta_i)




@pytest.mark.slow
def test_range_wholly_outside_the_support_gives_minus_inf_not_nan(beta_cm):
    # Beta records near 1 with multipliers (1.05, 1.8): the range [1.05 x, 1.8 x] lies above 1
    # for x > 1/1.05, so P(R_i) = 0 and log P = -inf; a NaN would poison Delta and the LW weights
    x = np.array([0.2, 0.5, 0.97, 0.99])
    phi, lam = np.array([0.2, 0.3]), np.array([4.0, 6.0])
    fit = fit_from_draws(beta_cm, x, {"phi": phi, "lam": lam, "a": lam * phi, "b": lam * (1 - phi)})
    L = rr.range_log_prob(fit, 1.05, 1.8)
    assert not np.isnan(L).any()
    assert np.isneginf(L[:, 2:]).all() and np.isfinite(L[:, :2]).all()


@pytest.mark.slow
def test_accounting_on_real_fits():
    x = simulated.lognormal_data(40, 3, meanlog=1.0, sdlog=1.0)
    cm = fitting.compiled_model(models.LognormalFamily(mu_prior_sd=10.0, sigma_prior_scale=5.0), x)
    cfg = SamplerConfig(draws=200, tune=200, chains=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        u = mechanisms.unweighted(cm, x, sampler=cfg, seed=1)
        lw = mechanisms.lipschitz_weighted(cm, u.fit, sampler=cfg, seed=2)
        a_res = rr.range_averaged(cm, u.fit, lw.weights, 0.4, 1.8, sampler=cfg, seed=3)
        b_res = rr.range_truncated(cm, u.fit, 0.4, 1.8, sampler=cfg, seed=4)
    # (A): the mechanism's lambda is the vectorised-CDF lambda of the base fit
    lam = rr.knowledge_lambda(u.fit, 0.4, 1.8)
    assert a_res.privacy.extra["mean_lambda"] == pytest.approx(lam.mean(), rel=1e-12)
    np.testing.assert_allclose(a_res.weights, lam + (1 - lam) * lw.weights)
    # (B'): same fit and weights as B, bound max_s |alpha (f - log P)|
    b2 = rr.whole_term_truncated(b_res)
    assert b2.fit is b_res.fit and b2.name == "B'[0.4,1.8]" and b2.guarantee == "aDP"
    F = b_res.fit.loglik()
    L = rr.range_log_prob(b_res.fit, 0.4, 1.8)
    np.testing.assert_allclose(b2.bounds.delta_i, np.abs(b_res.weights * (F - L)).max(0))
    np.testing.assert_allclose(b_res.bounds.delta_i, np.abs(b_res.weights * F - L).max(0))
    dec = rr.truncation_decomposition(b_res.fit, b_res.weights, 0.4, 1.8)
    assert abs(dec["weighted_loglik"] - dec["log_prob"]) == pytest.approx(b_res.privacy.delta)
    assert dec["n_zero_weight"] >= 1
    assert b2.extra["decomposition"] == dec
    # the privacy reports name both relations: 2 Delta removed, 4 Delta replaced (two-signed terms)
    for res in (a_res, b_res, b2):
        assert res.privacy.eps == pytest.approx(2 * res.privacy.delta)
        assert res.privacy.eps_replace == pytest.approx(4 * res.privacy.delta)
    assert u.guarantee == "none" and a_res.guarantee == "aDP" and b_res.guarantee == "aDP"
    # one synthetic data set from one posterior draw: it equals a release of one draw
    rel = synthetic_data.release(a_res, 11)
    assert rel.n_draws_used == 1 and rel.eps == pytest.approx(a_res.privacy.eps)
    np.testing.assert_array_equal(synthetic_data.synthesize(a_res.fit, 11), rel.values)
    # the unweighted truncated term is smaller than |f| for the riskiest record (the amplification)
    unw = rr.truncated_bounds(u.fit, 1.0, 0.4, 1.8)
    assert unw.delta < u.privacy.delta


@pytest.mark.slow
def test_whole_term_reading_by_hand_on_given_draws(lognormal_cm):
    # a (B)-shaped result on a fit with given draws: B' re-accounts it without refitting
    x = np.array([0.3, 1.0, 2.7, 8.0, 30.0])
    fit = fit_from_draws(lognormal_cm, x, {"mu": [1.0, 1.1, 0.9], "sigma": [1.0, 0.8, 1.2]})
    w = np.array([1.0, 0.8, 0.5, 0.2, 0.0])
    fake_b = mechanisms.MechanismResult(name="B[0.4,1.8]", fit=fit, weights=w, bounds=fit.bounds,
                                        privacy=fit.privacy, extra={"a": 0.4, "b": 1.8})
    b2 = rr.whole_term_truncated(fake_b)
    F = stats.lognorm.logpdf(x[None, :], s=fit.draws["sigma"][:, None], scale=np.exp(fit.draws["mu"])[:, None])
    L = rr.range_log_prob(fit, 0.4, 1.8)
    np.testing.assert_allclose(b2.bounds.delta_i, np.abs(w * (F - L)).max(0), rtol=1e-10)
    assert b2.bounds.delta_i[-1] == 0.0   # weight 0: the record contributes nothing under B'
    # f - log P takes both signs, so one record replaced costs 4 Delta
    assert b2.privacy.eps == pytest.approx(2 * b2.privacy.delta)
    assert b2.privacy.eps_replace == pytest.approx(4 * b2.privacy.delta)
    assert b2.privacy.extra["reading"] == "whole-term" and b2.guarantee == "aDP"
    # the literal (B) bound is attained by the weight-0 record's -log P when that is largest
    dec = b2.extra["decomposition"]
    lit = np.abs(np.where(w == 0, 0.0, w * F) - L)
    assert abs(dec["weighted_loglik"] - dec["log_prob"]) == pytest.approx(lit.max())
    assert dec["max_neg_log_prob"] == pytest.approx(float((-L).max()))
    assert dec["n_zero_weight"] == 1

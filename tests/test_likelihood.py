"""The weighted, censored likelihood helper, against closed forms.

A bring-your-own model, written here and not shipped by the package: Poisson counts with a
``mu ~ Gamma(a, b)`` prior. With record weights ``alpha`` the pseudo posterior is conjugate,
``Gamma(a + sum alpha_i x_i, b + sum alpha_i)``, which the sampled fit must reproduce.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import arviz as az
import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest
from scipy import special, stats

import dpsynth
from dpsynth import fitting
from dpsynth.fitting import ConvergenceWarning, SamplerConfig
from dpsynth.likelihood import BOUND, WEIGHTS, likelihood_term
from dpsynth.models import ModelFamily
from dpsynth.validation import DataError, check_support

A_PRIOR, B_PRIOR = 2.0, 0.5


@dataclass(frozen=True)
class GammaPoisson(ModelFamily):
    """User-written family: x_i ~ Poisson(mu), mu ~ Gamma(a, b) (rate b)."""

    a: float = A_PRIOR
    b: float = B_PRIOR
    name: str = "gamma_poisson"

    def _check_support(self, x):
        check_support(x, "x", lower=0.0, integer=True, model="the Gamma-Poisson model")

    def data_values(self, x, covariates):
        return {"x": x, "lgamma_x1": special.gammaln(x + 1.0)}

    def record_logp(self, data: Mapping[str, pt.TensorVariable]) -> pt.TensorVariable:
        mu = pm.Gamma("mu", alpha=self.a, beta=self.b)
        return data["x"] * pt.log(mu) - mu - data["lgamma_x1"]

    def simulate(self, draws, rng, covariates=None):
        return rng.poisson(draws["mu"]).astype(float)


@pytest.fixture(scope="module")
def gp_cm():
    return fitting.compiled_model(GammaPoisson(), np.arange(10.0))


# --------------------------------------------------------------------------------------------
# the helper on a model's log density (no sampling)
# --------------------------------------------------------------------------------------------


def _model(x, weights=None, bound=None):
    with pm.Model() as m:
        mu = pm.Gamma("mu", alpha=A_PRIOR, beta=B_PRIOR)
        total = dpsynth.weighted_loglik(pm.logp(pm.Poisson.dist(mu), x), weights, bound)
    return m, total


# PyTensor's log-gamma agrees with scipy's to about 1e-8 (relative), not to machine precision
REL = 1e-7


def _logp_at(m, mu):
    # the model's value variable is log(mu); its log density includes the log-Jacobian log(mu)
    return float(m.compile_logp()({"mu_log__": np.log(mu)}))


def test_log_density_is_prior_plus_weighted_sum():
    x = np.array([3.0, 0.0, 7.0])
    w = np.array([1.0, 0.25, 0.5])
    m, _ = _model(x, w)
    mu = 2.5
    expected = (
        stats.gamma.logpdf(mu, A_PRIOR, scale=1 / B_PRIOR) + math.log(mu)
        + np.sum(w * stats.poisson.logpmf(x, mu))
    )
    assert _logp_at(m, mu) == pytest.approx(expected, rel=REL)


def test_log_density_clamps_each_weighted_term():
    x = np.array([3.0, 0.0, 7.0, 30.0])
    w = np.array([1.0, 0.25, 0.5, 1.0])
    M = 1.7
    m, _ = _model(x, w, M)
    mu = 2.5
    terms = w * stats.poisson.logpmf(x, mu)  # (-1.66, -0.625, -3.33, -39.6)
    expected = stats.gamma.logpdf(mu, A_PRIOR, scale=1 / B_PRIOR) + math.log(mu) + np.sum(np.clip(terms, -M, M))
    assert _logp_at(m, mu) == pytest.approx(expected, rel=REL)
    # a clamped record adds exactly -M
    assert np.sum(np.clip(terms, -M, M)) == pytest.approx(terms[0] + terms[1] - 2 * M)


def test_weight_zero_record_with_minus_inf_loglik_adds_zero():
    x = np.array([3.0, -1.0])  # -1 is impossible under a Poisson: log-likelihood -inf
    m, _ = _model(x, [1.0, 0.0])
    mu = 2.0
    expected = stats.gamma.logpdf(mu, A_PRIOR, scale=1 / B_PRIOR) + math.log(mu) + stats.poisson.logpmf(3, mu)
    assert _logp_at(m, mu) == pytest.approx(expected, rel=REL)
    grad = m.compile_dlogp()({"mu_log__": np.log(mu)})
    assert np.isfinite(grad).all()


def test_weights_and_bound_are_data_containers():
    x = np.array([1.0, 2.0])
    m, _ = _model(x, [0.5, 1.0], 3.0)
    term = likelihood_term(m)
    assert term.name == "loglik"
    assert WEIGHTS in m.named_vars and BOUND in m.named_vars
    np.testing.assert_array_equal(m[WEIGHTS].get_value(), [0.5, 1.0])
    assert float(m[BOUND].get_value()) == 3.0
    # changing the containers changes the density without rebuilding the model
    mu = 1.5
    before = _logp_at(m, mu)
    pm.set_data({WEIGHTS: np.array([1.0, 1.0]), BOUND: np.inf}, model=m)
    after = _logp_at(m, mu)
    assert after - before == pytest.approx(0.5 * stats.poisson.logpmf(1, mu), rel=REL)


def test_default_is_unweighted_and_uncensored():
    m, _ = _model(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(m[WEIGHTS].get_value(), [1.0, 1.0])
    assert np.isposinf(m[BOUND].get_value())


def test_second_likelihood_is_refused():
    with pm.Model():
        mu = pm.Gamma("mu", 2.0, 1.0)
        lp = pm.logp(pm.Poisson.dist(mu), np.array([1.0, 2.0]))
        dpsynth.weighted_loglik(lp)
        with pytest.raises(ValueError, match="already has a weighted likelihood"):
            dpsynth.weighted_loglik(lp, name="again")


def test_logp_must_be_a_vector():
    with pm.Model():
        mu = pm.Normal("mu")
        with pytest.raises(ValueError, match=r"`logp` must be a vector"):
            dpsynth.weighted_loglik(pt.stack([mu, mu]).reshape((1, 2)))


def test_initial_weights_validated():
    with pm.Model():
        mu = pm.Gamma("mu", 2.0, 1.0)
        lp = pm.logp(pm.Poisson.dist(mu), np.array([1.0, 2.0]))
        with pytest.raises(DataError, match=r"`weights` must lie in \[0, 1\]"):
            dpsynth.weighted_loglik(lp, weights=[0.5, 2.0])


def test_initial_bound_validated():
    with pm.Model():
        mu = pm.Gamma("mu", 2.0, 1.0)
        lp = pm.logp(pm.Poisson.dist(mu), np.array([1.0, 2.0]))
        with pytest.raises(DataError, match=r"`bound` must be finite and > 0"):
            dpsynth.weighted_loglik(lp, bound=-1.0)


def test_model_without_helper_has_no_term():
    with pm.Model() as m:
        pm.Normal("mu")
    with pytest.raises(ValueError, match=r"write its per-record log-likelihood through"):
        likelihood_term(m)


# --------------------------------------------------------------------------------------------
# sampled pseudo posterior against the conjugate closed form
# --------------------------------------------------------------------------------------------

CFG = SamplerConfig(draws=1000, tune=500, chains=2)


def _check_gamma_posterior(fit, shape, rate, n_se=4.0):
    mu = fit.draws["mu"]
    ess = float(az.ess(fit.idata.posterior["mu"].values, method="bulk"))
    mean, sd = shape / rate, math.sqrt(shape) / rate
    se_mean = sd / math.sqrt(ess)
    se_sd = sd / math.sqrt(2 * ess)
    assert abs(mu.mean() - mean) < n_se * se_mean, (mu.mean(), mean, se_mean)
    assert abs(mu.std(ddof=1) - sd) < n_se * 1.5 * se_sd, (mu.std(ddof=1), sd, se_sd)


@pytest.mark.slow
def test_weighted_posterior_matches_conjugate_gamma(gp_cm):
    rng = np.random.default_rng(11)
    x = rng.poisson(6.0, size=200).astype(float)
    # weights that fall with x (as risk-based weights do), some exactly 0
    w = np.clip(1.0 - x / 12.0 + rng.uniform(-0.1, 0.1, size=200), 0.0, 1.0)
    w[:20] = 0.0
    fit = gp_cm.fit(x, weights=w, sampler=CFG, seed=3)
    shape, rate = A_PRIOR + np.sum(w * x), B_PRIOR + np.sum(w)
    _check_gamma_posterior(fit, shape, rate)
    # the weighted posterior is not the unweighted one (so the weights really entered)
    uw_mean = (A_PRIOR + x.sum()) / (B_PRIOR + x.size)
    assert abs(fit.draws["mu"].mean() - uw_mean) > 10 * math.sqrt(shape) / rate / math.sqrt(400)


@pytest.mark.slow
def test_small_weights_widen_the_posterior(gp_cm):
    # all weights 0.1: shape a + 0.1 sum x, rate b + 0.1 n -- about 3x wider than unweighted
    rng = np.random.default_rng(12)
    x = rng.poisson(6.0, size=300).astype(float)
    w = np.full(300, 0.1)
    fit = gp_cm.fit(x, weights=w, sampler=CFG, seed=4)
    _check_gamma_posterior(fit, A_PRIOR + 0.1 * x.sum(), B_PRIOR + 30.0)


@pytest.mark.slow
def test_unweighted_posterior_matches_conjugate_gamma(gp_cm):
    x = np.random.default_rng(13).poisson(3.0, size=250).astype(float)
    fit = gp_cm.fit(x, sampler=CFG, seed=5)
    _check_gamma_posterior(fit, A_PRIOR + x.sum(), B_PRIOR + x.size)


@pytest.mark.slow
def test_huge_bound_gives_the_uncensored_fit(gp_cm):
    rng = np.random.default_rng(14)
    x = rng.poisson(6.0, size=200).astype(float)
    w = rng.uniform(0.2, 1.0, size=200)
    cfg = SamplerConfig(draws=400, tune=300, chains=2)
    plain = gp_cm.fit(x, weights=w, sampler=cfg, seed=21)
    huge = gp_cm.fit(x, weights=w, bound=1e8, sampler=cfg, seed=21)
    # with M far above every |alpha f|, the clamp is the identity: same density and gradient,
    # hence (same seed) the same chain
    np.testing.assert_array_equal(plain.draws["mu"], huge.draws["mu"])
    np.testing.assert_array_equal(plain.bounds.delta_i, huge.bounds.delta_i)
    assert huge.privacy.n_censored == 0
    assert huge.privacy.censored and not plain.privacy.censored
    # and in distribution: another seed agrees with the closed form
    other = gp_cm.fit(x, weights=w, bound=1e8, sampler=CFG, seed=22)
    _check_gamma_posterior(other, A_PRIOR + np.sum(w * x), B_PRIOR + np.sum(w))


@pytest.mark.slow
def test_censored_fit_reports_delta_at_most_bound_and_counts_by_hand(gp_cm):
    rng = np.random.default_rng(15)
    x = rng.poisson(6.0, size=200).astype(float)
    x[:3] = [25.0, 30.0, 0.0]  # outlying records, censored at M
    w = rng.uniform(0.3, 1.0, size=200)
    M = 2.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = gp_cm.fit(x, weights=w, bound=M, sampler=SamplerConfig(draws=400, tune=400, chains=2), seed=6)
    rep = fit.privacy
    assert rep.delta <= M
    assert rep.censored and rep.bound == M and rep.eps == 2 * M and rep.eps_local <= 2 * M
    # censoring count by hand from the retained draws: records with |alpha_i f| > M at >= 1 draw
    mu = fit.draws["mu"]
    g = w[None, :] * stats.poisson.logpmf(x[None, :], mu[:, None])
    expected_count = int((np.abs(g) > M).any(axis=0).sum())
    assert rep.n_censored == expected_count
    assert 3 <= rep.n_censored < 200
    np.testing.assert_allclose(fit.bounds.delta_i, np.minimum(np.abs(g).max(axis=0), M), rtol=1e-9)


@pytest.mark.slow
def test_censoring_changes_the_posterior(gp_cm):
    # a heavily censored likelihood (M tiny) leaves mostly the prior: mean near a/b = 4 for data at 20
    x = np.full(100, 20.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        cens = gp_cm.fit(x, bound=1e-3, sampler=SamplerConfig(draws=500, tune=500, chains=2), seed=7)
    post_uncensored_mean = (A_PRIOR + x.sum()) / (B_PRIOR + x.size)
    assert abs(cens.draws["mu"].mean() - post_uncensored_mean) > 5
    assert cens.privacy.delta <= 1e-3

"""Model families: log-likelihoods, CDFs and simulators against scipy, and parameter recovery."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import simulated
from fit_helpers import betareg_design
from scipy import special, stats

from dpsynth import models
from dpsynth.fitting import ConvergenceWarning, SamplerConfig
from dpsynth.likelihood import BOUND, WEIGHTS, likelihood_term

RNG = np.random.default_rng(2024)

# --------------------------------------------------------------------------------------------
# structure
# --------------------------------------------------------------------------------------------


def test_intercept_design():
    np.testing.assert_array_equal(models.intercept_design(3), np.ones((3, 1)))


@pytest.mark.parametrize(
    "family",
    [models.BetaFamily(), models.PoissonRegression(), models.NegBinomialRegression(), models.LognormalFamily(),
     models.BetaRegression(n_coef=2)],
)
def test_families_are_hashable_and_equal_by_value(family):
    twin = type(family)(**{f: getattr(family, f) for f in family.__dataclass_fields__})
    assert twin is not family
    assert twin == family and hash(twin) == hash(family)
    assert {family: 1}[twin] == 1


def test_family_parameters_change_identity():
    assert models.LognormalFamily(mu_prior_sd=1.0) != models.LognormalFamily()
    assert hash(models.PoissonRegression(n_coef=2)) != hash(models.PoissonRegression(n_coef=1))


@pytest.mark.parametrize(
    "family, x, cov",
    [
        (models.BetaFamily(), np.array([0.1, 0.5, 0.9]), None),
        (models.PoissonRegression(), np.array([0.0, 3.0, 10.0]), None),
        (models.NegBinomialRegression(), np.array([0.0, 3.0, 10.0]), None),
        (models.LognormalFamily(), np.array([0.5, 1.0, 20.0]), None),
        (models.BetaRegression(n_coef=2), np.array([0.1, 0.5, 0.9]), betareg_design(3)),
    ],
)
def test_build_registers_weighted_likelihood(family, x, cov):
    m = family.build(x, cov)
    term = likelihood_term(m)
    assert term.logp.ndim == 1
    np.testing.assert_array_equal(m[WEIGHTS].get_value(), np.ones(x.size))
    assert np.isposinf(m[BOUND].get_value())


# --------------------------------------------------------------------------------------------
# CDFs against scipy
# --------------------------------------------------------------------------------------------


def test_beta_logcdf_logsf_match_scipy():
    fam = models.BetaFamily()
    draws = {"a": np.array([0.5, 2.0, 7.0]), "b": np.array([3.0, 2.0, 1.5])}
    q = np.array([1e-6, 0.2, 0.5, 0.97])
    cdf = fam.logcdf(q, draws)
    sf = fam.logsf(q, draws)
    assert cdf.shape == sf.shape == (3, 4)
    for s in range(3):
        np.testing.assert_allclose(cdf[s], stats.beta(draws["a"][s], draws["b"][s]).logcdf(q), rtol=1e-12)
        np.testing.assert_allclose(sf[s], stats.beta(draws["a"][s], draws["b"][s]).logsf(q), rtol=1e-12)


def test_lognormal_logcdf_logsf_match_scipy():
    fam = models.LognormalFamily()
    draws = {"mu": np.array([0.0, 1.5, -2.0]), "sigma": np.array([1.0, 0.3, 2.0])}
    q = np.array([0.01, 0.5, 1.0, 4.0, 50.0])
    cdf = fam.logcdf(q, draws)
    sf = fam.logsf(q, draws)
    assert cdf.shape == (3, 5)
    for s in range(3):
        dist = stats.lognorm(s=draws["sigma"][s], scale=np.exp(draws["mu"][s]))
        np.testing.assert_allclose(cdf[s], dist.logcdf(q), rtol=1e-10)
        np.testing.assert_allclose(sf[s], dist.logsf(q), rtol=1e-10)


def test_lognormal_logcdf_at_zero():
    fam = models.LognormalFamily()
    draws = {"mu": np.array([0.0]), "sigma": np.array([1.0])}
    assert np.isneginf(fam.logcdf(np.array([0.0]), draws)).all()
    assert fam.logsf(np.array([0.0]), draws)[0, 0] == 0.0


def test_beta_regression_logcdf_logsf_match_scipy():
    fam = models.BetaRegression(n_coef=2)
    X = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 1.0]])
    draws = {"beta": np.array([[-1.0, 0.5], [0.3, -0.2]]), "kappa": np.array([10.0, 40.0])}
    q = np.array([0.1, 0.4, 0.8])
    cdf = fam.logcdf(q, draws, X)
    sf = fam.logsf(q, draws, X)
    assert cdf.shape == (2, 3)
    for s in range(2):
        for i in range(3):
            eta = X[i] @ draws["beta"][s]
            mu = 1 / (1 + np.exp(-eta))
            a, b = mu * draws["kappa"][s], (1 - mu) * draws["kappa"][s]
            assert cdf[s, i] == pytest.approx(stats.beta.logcdf(q[i], a, b), rel=1e-10)
            assert sf[s, i] == pytest.approx(stats.beta.logsf(q[i], a, b), rel=1e-10)


@pytest.mark.parametrize("family", [models.PoissonRegression(), models.NegBinomialRegression()])
def test_count_families_have_no_cdf(family):
    with pytest.raises(NotImplementedError, match="range restriction needs one"):
        family.logcdf(np.array([1.0]), {})
    with pytest.raises(NotImplementedError):
        family.logsf(np.array([1.0]), {})


# --------------------------------------------------------------------------------------------
# simulators: shape and support; moments against the distribution
# --------------------------------------------------------------------------------------------

N = 4000


def test_beta_simulate():
    fam = models.BetaFamily()
    out = fam.simulate({"a": np.full(N, 0.5), "b": np.full(N, 3.0)}, np.random.default_rng(1))
    assert out.shape == (N,)
    assert ((out >= 0) & (out <= 1)).all()
    assert out.mean() == pytest.approx(0.5 / 3.5, abs=5 * stats.beta(0.5, 3).std() / np.sqrt(N))


def test_poisson_simulate_intercept():
    fam = models.PoissonRegression()
    out = fam.simulate({"beta": np.full((N, 1), np.log(20.0))}, np.random.default_rng(2))
    assert out.shape == (N,) and out.dtype == float
    assert (out >= 0).all() and (out == np.round(out)).all()
    assert out.mean() == pytest.approx(20.0, abs=5 * np.sqrt(20.0 / N))


def test_poisson_simulate_with_covariates_uses_row_i_draw_i():
    fam = models.PoissonRegression(n_coef=2)
    X = np.column_stack([np.ones(N), np.r_[np.zeros(N // 2), np.ones(N // 2)]])
    beta = np.tile([np.log(5.0), np.log(8.0)], (N, 1))  # group 1 mean 40
    out = fam.simulate({"beta": beta}, np.random.default_rng(3), X)
    assert out[: N // 2].mean() == pytest.approx(5.0, abs=0.5)
    assert out[N // 2:].mean() == pytest.approx(40.0, abs=1.5)


def test_negbin_simulate_mean_and_variance():
    fam = models.NegBinomialRegression()
    mu, phi = 50.0, 4.0
    out = fam.simulate({"beta": np.full((N, 1), np.log(mu)), "phi": np.full(N, phi)}, np.random.default_rng(4))
    assert out.shape == (N,)
    assert (out >= 0).all() and (out == np.round(out)).all()
    var = mu + mu**2 / phi  # NB2: 675
    assert out.mean() == pytest.approx(mu, abs=5 * np.sqrt(var / N))
    assert out.var() == pytest.approx(var, rel=0.15)


def test_lognormal_simulate():
    fam = models.LognormalFamily()
    out = fam.simulate({"mu": np.full(N, 1.0), "sigma": np.full(N, 0.5)}, np.random.default_rng(5))
    assert out.shape == (N,) and (out > 0).all()
    assert np.log(out).mean() == pytest.approx(1.0, abs=5 * 0.5 / np.sqrt(N))
    assert np.log(out).std() == pytest.approx(0.5, rel=0.05)


def test_beta_regression_simulate():
    fam = models.BetaRegression(n_coef=2)
    X = np.column_stack([np.ones(N), np.r_[np.zeros(N // 2), np.ones(N // 2)]])
    draws = {"beta": np.tile([-1.0, 2.0], (N, 1)), "kappa": np.full(N, 30.0)}
    out = fam.simulate(draws, np.random.default_rng(6), X)
    assert out.shape == (N,) and ((out > 0) & (out < 1)).all()
    assert out[: N // 2].mean() == pytest.approx(special.expit(-1.0), abs=0.01)
    assert out[N // 2:].mean() == pytest.approx(special.expit(1.0), abs=0.01)


# --------------------------------------------------------------------------------------------
# compiled record log-likelihoods against scipy (no sampling: given parameter values)
# --------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_beta_record_loglik_matches_scipy(beta_cm):
    x = np.array([0.01, 0.3, 0.77, 0.999])
    draws = {"phi": np.array([0.2, 0.5]), "lam": np.array([3.0, 12.0])}
    F = beta_cm.record_loglik(draws, x)
    a, b = draws["lam"] * draws["phi"], draws["lam"] * (1 - draws["phi"])
    np.testing.assert_allclose(F, stats.beta.logpdf(x[None, :], a[:, None], b[:, None]), rtol=1e-6)


@pytest.mark.slow
def test_poisson_record_loglik_matches_scipy(poisson_cm):
    x = np.array([0.0, 4.0, 95.0, 130.0, 60.0])
    draws = {"sigma_beta": np.array([1.0, 2.0]), "beta": np.array([[np.log(100.0)], [np.log(3.0)]])}
    F = poisson_cm.record_loglik(draws, x)
    np.testing.assert_allclose(F, stats.poisson.logpmf(x[None, :], np.array([[100.0], [3.0]])), rtol=1e-6)


@pytest.mark.slow
def test_negbin_record_loglik_matches_scipy(negbin_cm):
    x = np.array([0.0, 4.0, 95.0, 300.0])
    inv_phi = np.array([0.2, 0.05])
    mu = np.array([100.0, 7.0])
    draws = {"sigma_beta": np.array([1.0, 1.0]), "beta": np.log(mu)[:, None], "inv_phi": inv_phi}
    F = negbin_cm.record_loglik(draws, x)
    phi = 1 / inv_phi
    expected = stats.nbinom.logpmf(x[None, :], phi[:, None], (phi / (phi + mu))[:, None])
    np.testing.assert_allclose(F, expected, rtol=1e-6)


@pytest.mark.slow
def test_lognormal_record_loglik_matches_scipy(lognormal_cm):
    x = np.array([0.05, 1.0, 3.0, 250.0])
    draws = {"mu": np.array([0.0, 1.2]), "sigma": np.array([1.0, 0.4])}
    F = lognormal_cm.record_loglik(draws, x)
    expected = stats.lognorm.logpdf(x[None, :], s=draws["sigma"][:, None], scale=np.exp(draws["mu"])[:, None])
    np.testing.assert_allclose(F, expected, rtol=1e-9)


@pytest.mark.slow
def test_beta_regression_record_loglik_matches_scipy(betareg_cm):
    X = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 0.0]])
    x = np.array([0.2, 0.6, 0.95])
    draws = {"beta": np.array([[-1.0, 1.5], [0.5, 0.0]]), "kappa": np.array([8.0, 25.0])}
    F = betareg_cm.record_loglik(draws, x, X)
    mu = special.expit(draws["beta"] @ X.T)
    a, b = mu * draws["kappa"][:, None], (1 - mu) * draws["kappa"][:, None]
    np.testing.assert_allclose(F, stats.beta.logpdf(x[None, :], a, b), rtol=1e-6)


# --------------------------------------------------------------------------------------------
# parameter recovery on small simulated data sets
# --------------------------------------------------------------------------------------------

FIT_CFG = SamplerConfig(draws=400, tune=400, chains=2)


def _fit(cm, x, cov=None, seed=1):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return cm.fit(x, covariates=cov, sampler=FIT_CFG, seed=seed)


@pytest.mark.slow
def test_beta_family_recovers_parameters(beta_cm):
    x = simulated.beta_data(500, 1, a=0.5, b=3.0)
    f = _fit(beta_cm, x)
    assert f.draws["a"].mean() == pytest.approx(0.5, abs=0.1)
    assert f.draws["b"].mean() == pytest.approx(3.0, rel=0.3)
    assert f.draws["phi"].mean() == pytest.approx(0.5 / 3.5, abs=0.03)


@pytest.mark.slow
def test_poisson_family_recovers_mean(poisson_cm):
    x = simulated.poisson_data(300, 2, mu=100.0)
    f = _fit(poisson_cm, x)
    assert np.exp(f.draws["beta"][:, 0]).mean() == pytest.approx(100.0, abs=2.5)


@pytest.mark.slow
def test_poisson_regression_recovers_coefficients():
    from dpsynth.fitting import compiled_model

    rng = np.random.default_rng(3)
    X = np.column_stack([np.ones(400), rng.normal(size=400)])
    x = rng.poisson(np.exp(2.0 + 0.5 * X[:, 1])).astype(float)
    cm = compiled_model(models.PoissonRegression(n_coef=2), x, X)
    f = _fit(cm, x, X)
    np.testing.assert_allclose(f.draws["beta"].mean(axis=0), [2.0, 0.5], atol=0.08)


@pytest.mark.slow
def test_negbin_family_recovers_mean_and_dispersion(negbin_cm):
    rng = np.random.default_rng(4)
    x = simulated.nb_draw(rng, 100.0, 10.0, 400)
    f = _fit(negbin_cm, x)
    assert np.exp(f.draws["beta"][:, 0]).mean() == pytest.approx(100.0, rel=0.06)
    assert 6.0 < f.draws["phi"].mean() < 16.0


@pytest.mark.slow
def test_lognormal_family_recovers_parameters(lognormal_cm):
    x = simulated.lognormal_data(400, 5, meanlog=1.0, sdlog=0.5)
    f = _fit(lognormal_cm, x)
    assert f.draws["mu"].mean() == pytest.approx(1.0, abs=0.1)
    assert f.draws["sigma"].mean() == pytest.approx(0.5, abs=0.06)


@pytest.mark.slow
def test_beta_regression_recovers_parameters(betareg_cm):
    n = 400
    X = betareg_design(n, seed=6)
    rng = np.random.default_rng(6)
    mu = special.expit(X @ np.array([-1.0, 0.8]))
    x = rng.beta(mu * 20.0, (1 - mu) * 20.0)
    f = _fit(betareg_cm, x, X)
    np.testing.assert_allclose(f.draws["beta"].mean(axis=0), [-1.0, 0.8], atol=0.25)
    assert 12.0 < f.draws["kappa"].mean() < 30.0


def test_lognormal_log_interval_prob_matches_the_generic_form_and_stays_finite_in_the_tails():
    from dpsynth.models import LognormalFamily, ModelFamily

    fam = LognormalFamily()
    rng = np.random.default_rng(5)
    draws = {"mu": rng.normal(1.0, 0.05, 50), "sigma": rng.uniform(0.9, 1.1, 50)}
    x = np.exp(rng.normal(1.0, 1.5, 40))
    x[:2] = [np.exp(41.0), np.exp(-39.0)]  # about 40 sd above and below the mean
    for a, b in [(0.4, 1.8), (0.6, 1.2), (0.0, 2.0)]:
        fast = fam.log_interval_prob(a * x, b * x, draws)
        generic = ModelFamily.log_interval_prob(fam, a * x, b * x, draws)
        np.testing.assert_allclose(fast, generic, rtol=1e-10, atol=1e-12)
        assert np.isfinite(fast).all()
        assert (fast <= 0).all()


# --------------------------------------------------------------------------------------------
# simulators at extreme posterior draws (sampler output differs across machines, so any
# draw in the parameter space can happen): no exception, no NaN, values in the support
# --------------------------------------------------------------------------------------------


def test_simulate_survives_extreme_posterior_draws():
    rng = np.random.default_rng(11)
    n = 12
    # negative binomial: phi 1e-30 / 1e-20 / 1e12 with mu = 0 (beta -inf), 1e-300, 1e6 and 1e30
    log_mu = np.log([1e-300, 1e6, 1e30])
    beta = np.r_[-np.inf, log_mu, -np.inf, log_mu, -np.inf, log_mu][:, None]
    phi = np.repeat([1e-30, 1e-20, 1e12], 4)
    out = models.NegBinomialRegression().simulate({"beta": beta, "phi": phi}, rng)
    assert out.shape == (n,) and np.isfinite(out).all() and (out >= 0).all() and (out == np.round(out)).all()
    assert (out[:8] == 0).all()  # phi <= 1e-20: P(X > 0) <= phi log(1 + mu / phi), negligible
    assert out[11] == pytest.approx(1e30, rel=1e-4)

    # Poisson: mu = 0, 1e-300, 1e19 (above numpy's limit) and 1e300
    with np.errstate(divide="ignore"):
        beta = np.log([[0.0], [1e-300], [1e19], [1e300]])
    out = models.PoissonRegression().simulate({"beta": beta}, rng)
    assert np.isfinite(out).all() and (out >= 0).all()
    assert out[0] == 0 and out[3] == pytest.approx(1e300, rel=1e-6)

    # Beta family: shapes underflowed to 0, tiny and huge
    a = np.array([0.0, 1e-300, 1e-20, 1e300, 2.0, 1e300])
    b = np.array([1.0, 1e-300, 1e300, 1e-20, 0.0, 1e300])
    out = models.BetaFamily().simulate({"a": a, "b": b}, rng)
    assert np.isfinite(out).all() and ((out >= 0) & (out <= 1)).all()
    assert out[0] == 0 and out[2] == 0 and out[3] == 1 and out[4] == 1 and out[5] == 0.5

    # beta regression: means exactly 0 or 1 after expit (eta = -+800), kappa tiny, huge, 0 and inf
    X = np.column_stack([np.ones(8), np.r_[np.zeros(4), np.ones(4)]])
    coef = np.array([[-800.0, 0.0], [800.0, 0.0], [0.0, 0.0], [0.0, 0.0],
                     [0.0, 40.0], [0.0, -40.0], [-800.0, 1600.0], [0.0, 0.0]])
    kappa = np.array([30.0, 30.0, 1e-300, 1e300, 1e-30, 1e300, 1e300, 0.0])
    out = models.BetaRegression(n_coef=2).simulate({"beta": coef, "kappa": kappa}, rng, X)
    assert out.shape == (8,) and np.isfinite(out).all() and ((out >= 0) & (out <= 1)).all()
    assert out[0] == 0 and out[1] == 1 and out[3] == pytest.approx(0.5, abs=1e-12)
    assert out[5] == pytest.approx(special.expit(-40.0), rel=1e-6, abs=0.0)  # a = 4e282: at the mean
    assert out[6] == 1.0
    assert out[7] in (0.0, 1.0)  # kappa -> 0 limit: Bernoulli(mu)
    inf_kappa = models.BetaRegression(n_coef=2).simulate(
        {"beta": np.array([[0.3, 0.0], [-800.0, 0.0]]), "kappa": np.full(2, np.inf)}, rng, X[:2])
    np.testing.assert_allclose(inf_kappa, [special.expit(0.3), 0.0])

    # lognormal: huge and tiny mu / sigma: no exception, no NaN (over/underflow give inf / 0)
    mu = np.array([0.0, 1e300, -1e300, 0.0, 700.0])
    sigma = np.array([1e300, 1.0, 1.0, 1e-300, 1e-300])
    out = models.LognormalFamily().simulate({"mu": mu, "sigma": sigma}, rng)
    assert not np.isnan(out).any() and (out >= 0).all()
    assert np.isposinf(out[1]) and out[2] == 0 and out[3] == 1.0 and out[4] == pytest.approx(np.exp(700.0))


# --------------------------------------------------------------------------------------------
# LognormalRegression: log x_i ~ Normal(X_i beta, sigma)
# --------------------------------------------------------------------------------------------


def _lnreg_design(n: int, seed: int = 0) -> np.ndarray:
    """Intercept, a standard normal covariate and a binary one."""
    rng = np.random.default_rng(seed)
    return np.column_stack([np.ones(n), rng.normal(size=n), rng.integers(0, 2, size=n).astype(float)])


def test_lognormal_regression_is_hashable_and_equal_by_value():
    fam = models.LognormalRegression(n_coef=3, beta_sd=2.0, sigma_prior_scale=1.5)
    twin = models.LognormalRegression(**{f: getattr(fam, f) for f in fam.__dataclass_fields__})
    assert twin is not fam and twin == fam and hash(twin) == hash(fam)
    assert {fam: 1}[twin] == 1
    assert fam.name == "lognormal_regression" and not fam.one_signed and not fam.needs_covariates
    assert models.LognormalRegression(n_coef=2) != models.LognormalRegression(n_coef=3)
    assert models.LognormalRegression(beta_sd=1.0) != models.LognormalRegression()
    assert hash(models.LognormalRegression(sigma_prior_scale=1.0)) != hash(models.LognormalRegression())


def test_lognormal_regression_is_a_shipped_family():
    from dpsynth.synthesizer import FAMILIES

    assert FAMILIES["lognormal_regression"] is models.LognormalRegression


def _lnreg_model_logp(m):
    """The built model's record log-likelihood as a function of (beta, sigma)."""
    import pytensor
    import pytensor.tensor as pt
    from pytensor.graph.replace import graph_replace

    b, s = pt.dvector("b"), pt.dscalar("s")
    return pytensor.function([b, s], graph_replace(likelihood_term(m).logp, {m["beta"]: b, m["sigma"]: s}))


def test_lognormal_regression_build_registers_the_weighted_likelihood_and_priors():
    fam = models.LognormalRegression(n_coef=3, beta_sd=2.0, sigma_prior_scale=1.5)
    X = _lnreg_design(6, seed=1)
    x = np.array([0.3, 1.0, 5.0, 40.0, 0.02, 7.5])
    m = fam.build(x, X)
    term = likelihood_term(m)
    assert term.logp.ndim == 1
    assert sorted(rv.name for rv in m.free_RVs) == ["beta", "sigma"]
    np.testing.assert_array_equal(m[WEIGHTS].get_value(), np.ones(x.size))
    assert np.isposinf(m[BOUND].get_value())
    beta, sigma = np.array([0.5, 0.3, -0.8]), 0.7
    records = stats.lognorm.logpdf(x, s=sigma, scale=np.exp(X @ beta))
    prior_sd = [2.0, 1 / np.sqrt(2), 1 / np.sqrt(2)]  # the intercept's beta_sd; slopes slope_sd / sqrt(p - 1)
    priors = stats.norm.logpdf(beta, 0.0, prior_sd).sum() + stats.halfcauchy.logpdf(sigma, scale=1.5)
    point = {"beta": beta, "sigma_log__": np.log(sigma)}
    logp = m.compile_logp(jacobian=False)
    assert logp(point) == pytest.approx(priors + records.sum(), rel=1e-8)
    m[WEIGHTS].set_value(np.zeros(x.size))  # weights 0: the likelihood leaves the density
    assert logp(point) == pytest.approx(priors, rel=1e-8)


def test_lognormal_regression_record_logp_matches_scipy():
    fam = models.LognormalRegression(n_coef=3)
    X = _lnreg_design(8, seed=2)
    x = np.exp(np.random.default_rng(3).normal(1.0, 2.0, 8))
    f = _lnreg_model_logp(fam.build(x, X))
    for beta, sigma in [([0.0, 0.0, 0.0], 1.0), ([1.5, -0.4, 0.9], 0.3), ([-2.0, 1.0, 0.0], 4.0)]:
        got = f(np.asarray(beta, dtype=float), sigma)
        want = stats.lognorm.logpdf(x, s=sigma, scale=np.exp(X @ np.asarray(beta)))
        np.testing.assert_allclose(got, want, rtol=1e-10)


def test_lognormal_regression_without_covariates_is_the_lognormal_family():
    fam = models.LognormalRegression()
    x = np.array([0.05, 1.0, 3.0, 250.0])
    f = _lnreg_model_logp(fam.build(x))
    np.testing.assert_allclose(f(np.array([1.2]), 0.4), stats.lognorm.logpdf(x, s=0.4, scale=np.exp(1.2)),
                               rtol=1e-10)
    draws = {"beta": np.array([[0.0], [1.5]]), "sigma": np.array([1.0, 0.3])}
    q = np.array([0.01, 1.0, 4.0, 50.0])
    twin = models.LognormalFamily()
    twin_draws = {"mu": draws["beta"][:, 0], "sigma": draws["sigma"]}
    np.testing.assert_allclose(fam.logcdf(q, draws), twin.logcdf(q, twin_draws), rtol=1e-12)
    np.testing.assert_allclose(fam.logsf(q, draws), twin.logsf(q, twin_draws), rtol=1e-12)


def test_lognormal_regression_logcdf_logsf_match_scipy_per_record_and_draw():
    fam = models.LognormalRegression(n_coef=3)
    X = _lnreg_design(5, seed=4)
    draws = {"beta": np.array([[0.0, 0.0, 0.0], [1.5, -0.4, 0.9], [-2.0, 1.0, 0.2]]),
             "sigma": np.array([1.0, 0.3, 2.0])}
    q = np.array([0.01, 0.5, 1.0, 4.0, 50.0])
    cdf, sf = fam.logcdf(q, draws, X), fam.logsf(q, draws, X)
    assert cdf.shape == sf.shape == (3, 5)
    for s in range(3):
        for i in range(5):
            dist = stats.lognorm(s=draws["sigma"][s], scale=np.exp(X[i] @ draws["beta"][s]))
            assert cdf[s, i] == pytest.approx(dist.logcdf(q[i]), rel=1e-10)
            assert sf[s, i] == pytest.approx(dist.logsf(q[i]), rel=1e-10)
    # the interval probability from them, and the limits at 0
    lp = fam.log_interval_prob(0.5 * q, 2.0 * q, draws, X)
    for s in range(3):
        dist = stats.lognorm(s=draws["sigma"][s], scale=np.exp(X @ draws["beta"][s]))
        np.testing.assert_allclose(lp[s], np.log(dist.cdf(2.0 * q) - dist.cdf(0.5 * q)), rtol=1e-9)
    zero = np.zeros(5)
    assert np.isneginf(fam.logcdf(zero, draws, X)).all() and (fam.logsf(zero, draws, X) == 0.0).all()


def test_lognormal_regression_simulate_uses_row_i_draw_i():
    fam = models.LognormalRegression(n_coef=3)
    X = _lnreg_design(N, seed=5)
    beta, sigma = np.array([1.0, 0.5, -0.7]), 0.4
    out = fam.simulate({"beta": np.tile(beta, (N, 1)), "sigma": np.full(N, sigma)}, np.random.default_rng(6), X)
    assert out.shape == (N,) and (out > 0).all() and np.isfinite(out).all()
    resid = np.log(out) - X @ beta
    assert resid.mean() == pytest.approx(0.0, abs=5 * sigma / np.sqrt(N))
    assert resid.std() == pytest.approx(sigma, rel=0.05)
    # the log-mean in each group of the binary covariate follows X beta
    for g in (0.0, 1.0):
        rows = X[:, 2] == g
        assert np.log(out[rows]).mean() == pytest.approx((X[rows] @ beta).mean(), abs=5 * sigma / np.sqrt(rows.sum()))
    # least squares on log x recovers beta: the records carry their covariates' means
    coef = np.linalg.lstsq(X, np.log(out), rcond=None)[0]
    np.testing.assert_allclose(coef, beta, atol=5 * sigma / np.sqrt(N) * 3)
    # each record uses its own draw: record i's log-mean is X_i beta_i
    draws = {"beta": np.column_stack([np.linspace(-2, 2, N), np.zeros(N), np.zeros(N)]), "sigma": np.full(N, 1e-9)}
    np.testing.assert_allclose(np.log(fam.simulate(draws, np.random.default_rng(7), X)), draws["beta"][:, 0],
                               atol=1e-6)


def test_lognormal_regression_simulate_without_covariates():
    fam = models.LognormalRegression()
    out = fam.simulate({"beta": np.full((N, 1), 1.0), "sigma": np.full(N, 0.5)}, np.random.default_rng(8))
    assert out.shape == (N,) and (out > 0).all()
    assert np.log(out).mean() == pytest.approx(1.0, abs=5 * 0.5 / np.sqrt(N))
    assert np.log(out).std() == pytest.approx(0.5, rel=0.05)


def test_lognormal_regression_checks_n_coef_and_support():
    from dpsynth.validation import DataError

    X = _lnreg_design(4)
    x = np.array([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(DataError, match="n_coef=3"):
        models.LognormalRegression(n_coef=2).check_data(x, X)
    with pytest.raises(DataError, match="1 column"):
        models.LognormalRegression(n_coef=3).check_data(x)
    with pytest.raises(DataError, match="lognormal regression"):
        models.LognormalRegression(n_coef=3).check_data(np.array([1.0, 0.0, 3.0, 4.0]), X)
    with pytest.raises(DataError):
        models.LognormalRegression(n_coef=3).check_data(x, X[:3])
    arr, cov = models.LognormalRegression(n_coef=3).check_data(x, X)
    np.testing.assert_array_equal(arr, x)
    np.testing.assert_array_equal(cov, X)


@pytest.fixture(scope="module")
def lnreg_cm():
    from dpsynth.fitting import compiled_model

    X = _lnreg_design(50)
    return compiled_model(models.LognormalRegression(n_coef=3), np.ones(50), X)


@pytest.mark.slow
def test_lognormal_regression_compiled_record_loglik_matches_scipy(lnreg_cm):
    X = _lnreg_design(5, seed=9)
    x = np.array([0.05, 1.0, 3.0, 250.0, 12.0])
    draws = {"beta": np.array([[0.0, 0.0, 0.0], [1.5, -0.4, 0.9]]), "sigma": np.array([1.0, 0.3])}
    F = lnreg_cm.record_loglik(draws, x, X)
    expected = stats.lognorm.logpdf(x[None, :], s=draws["sigma"][:, None], scale=np.exp(draws["beta"] @ X.T))
    np.testing.assert_allclose(F, expected, rtol=1e-9)


@pytest.mark.slow
def test_lognormal_regression_recovers_coefficients(lnreg_cm):
    n = 500
    X = _lnreg_design(n, seed=10)
    beta, sigma = np.array([1.0, 0.5, -0.3]), 0.4
    x = np.exp(X @ beta + np.random.default_rng(11).normal(0.0, sigma, n))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        f = lnreg_cm.fit(x, covariates=X, sampler=SamplerConfig(draws=300, tune=300, chains=2), seed=12)
    assert f.draws["beta"].shape[1] == 3
    # posterior sd is about sigma / sqrt(n) = 0.02: the tolerance is several times that
    np.testing.assert_allclose(f.draws["beta"].mean(axis=0), beta, atol=0.12)
    assert 0.3 < f.draws["sigma"].mean() < 0.5

"""Fitting with model reuse, the post-fit reductions, and convergence warnings."""

from __future__ import annotations

import numpy as np
import pytest
import simulated
from fit_helpers import SMALL

from dpsynth import fitting, models
from dpsynth.fitting import ConvergenceWarning, SamplerConfig, compile_count, compiled_model, eps_to_bound
from dpsynth.privacy import record_bounds

pytestmark = pytest.mark.filterwarnings("ignore::dpsynth.fitting.ConvergenceWarning")

# --------------------------------------------------------------------------------------------
# sampler configuration
# --------------------------------------------------------------------------------------------


def test_sampler_config_defaults():
    cfg = SamplerConfig()
    assert (cfg.draws, cfg.tune, cfg.chains, cfg.draw_quantile) == (1000, 1000, 2, 1.0)
    assert cfg.ess_threshold == 200.0
    assert SamplerConfig(chains=4).ess_threshold == 400.0
    assert SamplerConfig(ess_min=50).ess_threshold == 50.0


def test_sampler_config_rejects_tune_zero():
    # nutpie cannot sample without a tuning step: with tune=0 it panics (pyo3 PanicException,
    # a BaseException) in the middle of `fit`; the configuration must refuse it up front
    with pytest.raises(ValueError, match=r"`tune`"):
        SamplerConfig(tune=0)


def test_sampler_config_accepts_one_tuning_step():
    assert SamplerConfig(tune=1).tune == 1


def test_sampler_config_rejects_float_draws():
    with pytest.raises(ValueError, match=r"`draws` must be a positive integer; got 10.5"):
        SamplerConfig(draws=10.5)


def test_eps_to_bound():
    assert eps_to_bound(5.0) == 2.5
    assert eps_to_bound(1) == 0.5


def test_diagnostics_ok():
    d = fitting.Diagnostics(rhat={"a": 1.0}, ess_bulk={"a": 500.0})
    assert d.ok
    assert not fitting.Diagnostics(rhat={}, ess_bulk={}, failed=("a",)).ok


# --------------------------------------------------------------------------------------------
# reuse: one compilation per family, refits with new data, weights, bound and n
# --------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_compiled_model_returns_cached_object(poisson_cm):
    before = compile_count()
    again = compiled_model(models.PoissonRegression(), simulated.poisson_data(77, 5))
    assert again is poisson_cm
    assert compiled_model(models.PoissonRegression(n_coef=1), [1.0, 2.0]) is poisson_cm  # equal family
    assert compile_count() == before


@pytest.mark.slow
def test_refits_do_not_compile(poisson_cm):
    x1 = simulated.poisson_data(200, 1)
    x2 = simulated.poisson_data(200, 2)
    x3 = simulated.poisson_data(350, 3)  # different n
    before = compile_count()
    f1 = poisson_cm.fit(x1, sampler=SMALL, seed=1)
    f2 = poisson_cm.fit(x2, sampler=SMALL, seed=1)  # new data
    f3 = poisson_cm.fit(x2, weights=np.linspace(0.1, 1.0, 200), sampler=SMALL, seed=1)  # new weights
    f4 = poisson_cm.fit(x2, bound=3.0, sampler=SMALL, seed=1)  # new bound
    f5 = poisson_cm.fit(x3, weights=0.5, bound=10.0, sampler=SMALL, seed=1)  # new n
    assert compile_count() == before
    # ... and each refit really used its own inputs
    assert not np.array_equal(f1.draws["beta"], f2.draws["beta"])
    assert not np.array_equal(f2.draws["beta"], f3.draws["beta"])
    assert f4.bound == 3.0 and f4.censored and f4.privacy.delta <= 3.0
    assert f5.x.size == 350 and f5.bounds.delta_i.shape == (350,)
    np.testing.assert_array_equal(f5.weights, np.full(350, 0.5))
    np.testing.assert_array_equal(f3.weights, np.linspace(0.1, 1.0, 200))
    # the data of each fit are the data it was given
    np.testing.assert_array_equal(f2.x, x2)
    np.testing.assert_array_equal(f5.x, x3)


@pytest.mark.slow
def test_refit_posterior_follows_new_data(poisson_cm):
    lo = poisson_cm.fit(simulated.poisson_data(200, 4, mu=20.0), sampler=SMALL, seed=2)
    hi = poisson_cm.fit(simulated.poisson_data(250, 5, mu=150.0), sampler=SMALL, seed=2)
    assert np.exp(lo.draws["beta"].mean()) == pytest.approx(20.0, rel=0.1)
    assert np.exp(hi.draws["beta"].mean()) == pytest.approx(150.0, rel=0.05)


@pytest.mark.slow
def test_regression_refit_does_not_compile(betareg_cm):
    from fit_helpers import betareg_design

    before = compile_count()
    for n, seed in [(120, 1), (180, 2)]:
        X = betareg_design(n, seed)
        x = np.random.default_rng(seed).beta(2.0, 5.0, size=n)
        f = betareg_cm.fit(x, covariates=X, sampler=SMALL, seed=seed)
        assert f.bounds.delta_i.shape == (n,)
    assert compile_count() == before
    assert compiled_model(models.BetaRegression(n_coef=2), x, X) is betareg_cm


# --------------------------------------------------------------------------------------------
# the Fit object and its reductions
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lognormal_fit(lognormal_cm):
    x = simulated.lognormal_data(200, 9, meanlog=0.5, sdlog=0.8)
    w = np.linspace(0.2, 1.0, 200)
    return lognormal_cm.fit(x, weights=w, sampler=SMALL, seed=9)


@pytest.mark.slow
def test_fit_pools_chains(lognormal_fit):
    assert lognormal_fit.n_draws == SMALL.draws * SMALL.chains
    assert lognormal_fit.draws["mu"].shape == (600,)
    assert lognormal_fit.bounds.n_draws == 600
    assert lognormal_fit.idata is not None
    np.testing.assert_array_equal(
        lognormal_fit.draws["mu"], lognormal_fit.idata.posterior["mu"].values.reshape(-1)
    )


@pytest.mark.slow
def test_fit_bounds_are_the_reduced_loglik_matrix(lognormal_fit):
    from scipy import stats

    F = lognormal_fit.loglik()
    assert F.shape == (600, 200)
    d = lognormal_fit.draws
    expected = stats.lognorm.logpdf(lognormal_fit.x[None, :], s=d["sigma"][:, None], scale=np.exp(d["mu"])[:, None])
    np.testing.assert_allclose(F, expected, rtol=1e-9)
    w = lognormal_fit.weights
    np.testing.assert_allclose(lognormal_fit.bounds.delta_i, np.abs(w * expected).max(axis=0), rtol=1e-9)
    np.testing.assert_allclose(lognormal_fit.bounds.abs_loglik, np.abs(expected).max(axis=0), rtol=1e-9)
    rep = lognormal_fit.privacy
    assert rep.guarantee is None and rep.eps == 2 * rep.delta and rep.eps_replace == 4 * rep.delta
    assert not lognormal_fit.censored


@pytest.mark.slow
def test_privacy_weights_used_for_bounds_only(lognormal_cm):
    x = simulated.lognormal_data(150, 10)
    pw = np.full(150, 0.25)
    f = lognormal_cm.fit(x, weights=None, privacy_weights=pw, sampler=SMALL, seed=10)
    np.testing.assert_array_equal(f.weights, np.ones(150))
    np.testing.assert_allclose(f.bounds.delta_i, 0.25 * f.bounds.abs_loglik, rtol=1e-12)


@pytest.mark.slow
def test_draw_quantile_from_sampler_config(lognormal_cm):
    x = simulated.lognormal_data(150, 11)
    cfg = SamplerConfig(draws=300, tune=300, chains=2, draw_quantile=0.9)
    f = lognormal_cm.fit(x, sampler=cfg, seed=11)
    assert f.bounds.draw_quantile == 0.9
    assert f.bounds.n_draws < f.n_draws
    full = record_bounds(f.loglik(), f.weights)
    again = record_bounds(f.loglik(), f.weights, draw_quantile=0.9)
    np.testing.assert_allclose(f.bounds.delta_i, again.delta_i)
    assert f.bounds.delta <= full.delta


@pytest.mark.slow
def test_keep_idata_false(lognormal_cm):
    f = lognormal_cm.fit(simulated.lognormal_data(100, 12), sampler=SMALL, seed=12, keep_idata=False)
    assert f.idata is None
    assert f.n_draws == 600


@pytest.mark.slow
def test_same_seed_same_draws_other_seed_differs(lognormal_cm):
    x = simulated.lognormal_data(120, 13)
    a = lognormal_cm.fit(x, sampler=SMALL, seed=123)
    b = lognormal_cm.fit(x, sampler=SMALL, seed=123)
    c = lognormal_cm.fit(x, sampler=SMALL, seed=124)
    for k in ("mu", "sigma"):
        np.testing.assert_array_equal(a.draws[k], b.draws[k])
    assert not np.array_equal(a.draws["mu"], c.draws["mu"])
    np.testing.assert_array_equal(a.bounds.delta_i, b.bounds.delta_i)


# --------------------------------------------------------------------------------------------
# convergence
# --------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.filterwarnings("default::dpsynth.fitting.ConvergenceWarning")
@pytest.mark.filterwarnings("ignore:More chains:UserWarning")  # ArviZ, on nutpie's 1-step warm-up
def test_bad_sampler_config_warns_and_names_parameter(beta_cm):
    x = simulated.beta_data(300, 14)
    cfg = SamplerConfig(draws=10, tune=1, chains=2)  # tune=0 crashes nutpie, see above
    with pytest.warns(ConvergenceWarning, match=r"beta fit did not converge: .*\b(phi|lam) \(R-hat") as rec:
        f = beta_cm.fit(x, sampler=cfg, seed=14)
    assert not f.diagnostics.ok
    assert set(f.diagnostics.failed) <= {"phi", "lam"} and f.diagnostics.failed
    conv = [w for w in rec if issubclass(w.category, ConvergenceWarning)]
    assert len(conv) == 1
    msg = str(conv[0].message)
    for name in f.diagnostics.failed:
        assert f"{name} (R-hat" in msg
    assert "Increase `draws`/`tune`" in msg


@pytest.mark.slow
@pytest.mark.filterwarnings("error::dpsynth.fitting.ConvergenceWarning")
def test_good_sampler_config_does_not_warn(lognormal_cm):
    x = simulated.lognormal_data(200, 15)
    f = lognormal_cm.fit(x, sampler=SamplerConfig(draws=1000, tune=500, chains=2), seed=15)
    assert f.diagnostics.ok
    assert set(f.diagnostics.rhat) == {"mu", "sigma"}
    assert all(v <= 1.01 for v in f.diagnostics.rhat.values())
    assert all(v >= 200 for v in f.diagnostics.ess_bulk.values())


def test_divergences_are_counted_and_fail_the_fit():
    from dpsynth.fitting import Diagnostics, _diagnostics

    rng = np.random.default_rng(0)
    post = {"mu": rng.normal(size=(2, 500))}
    div = np.zeros((2, 500), dtype=bool)
    div[1, [3, 70, 400]] = True
    cfg = SamplerConfig(draws=500, tune=500, chains=2)
    ok = _diagnostics(post, np.zeros((2, 500), dtype=bool), ["mu"], cfg)
    assert ok.ok and ok.divergences == 0
    d = _diagnostics(post, div, ["mu"], cfg)
    assert d.divergences == 3 and not d.failed and not d.ok
    assert "3 divergent transition(s)" in d.problems()
    assert Diagnostics(rhat={"mu": 1.0}, ess_bulk={"mu": 900.0}).ok


@pytest.mark.slow
def test_real_fit_records_divergences(beta_cm):
    x = simulated.beta_data(200, 3)
    f = beta_cm.fit(x, sampler=SamplerConfig(draws=200, tune=200, chains=2), seed=3)
    assert isinstance(f.diagnostics.divergences, int) and f.diagnostics.divergences >= 0
    assert f.idata.sample_stats["diverging"].shape == (2, 200)


def test_default_cores_follows_the_worker_setting(monkeypatch):
    import os

    from dpsynth import fitting

    monkeypatch.delenv(fitting.CORES_ENV, raising=False)
    assert fitting.default_cores() == (os.cpu_count() or 1)
    monkeypatch.setenv(fitting.CORES_ENV, "1")
    assert fitting.default_cores() == 1
    monkeypatch.setenv(fitting.CORES_ENV, "zero")  # not a positive integer: ignored
    assert fitting.default_cores() == (os.cpu_count() or 1)


# --------------------------------------------------------------------------------------------
# a public starting point, a larger target acceptance rate
# --------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_unconstrained_start_is_the_sampler_vector(negbin_cm):
    """sigma_beta and inv_phi are positive: their logs sit at their slices, beta as it is."""
    v = negbin_cm.unconstrained({"sigma_beta": 2.0, "beta": [0.5], "inv_phi": 0.25})
    names, slices, _ = negbin_cm._nutpie.shape_info
    got = {n: v[s] for n, s in zip(names, slices) if s.stop <= v.size}
    assert got["sigma_beta_log__"] == pytest.approx(np.log(2.0)) and got["inv_phi_log__"] == pytest.approx(np.log(0.25))
    assert got["beta"] == pytest.approx([0.5])
    with pytest.raises(fitting.DataError, match="lacks 'inv_phi'"):
        negbin_cm.unconstrained({"sigma_beta": 2.0, "beta": [0.5]})
    with pytest.raises(fitting.DataError, match="not finite"):
        negbin_cm.unconstrained({"sigma_beta": -1.0, "beta": [0.5], "inv_phi": 0.25})


@pytest.mark.slow
def test_chains_start_at_a_public_point(lognormal_cm):
    """A censored likelihood is flat where every record is censored; chains started at a public value inside
    the window (the reference) find the data, and a starting point must name every parameter."""
    x = simulated.lognormal_data(200, 3)
    # long enough that sigma's R-hat clears 1.01 whatever the process (at 300 draws it landed at 1.014 in one)
    cfg = SamplerConfig(draws=1000, tune=500)
    near = {"mu": np.array(float(np.log(x).mean())), "sigma": np.array(float(np.log(x).std()))}
    assert set(lognormal_cm.param_names) == set(near)
    ref = lognormal_cm.record_loglik({k: v.reshape(1) for k, v in near.items()}, x)[0]
    good = lognormal_cm.fit(x, bound=0.5, reference=ref, sampler=cfg, seed=1, init=near)
    assert abs(float(np.mean(good.draws["mu"])) - near["mu"]) < 0.2 and good.diagnostics.ok
    with pytest.raises(fitting.DataError, match="lacks"):
        lognormal_cm.fit(x, bound=0.5, reference=ref, sampler=cfg, seed=1, init={"mu": 1.0})


def test_target_accept_is_checked_and_raised_after_divergences():
    from dpsynth.mechanisms.contract import _raised_accept

    assert SamplerConfig().target_accept == 0.8
    with pytest.raises(fitting.DataError, match="target_accept"):
        SamplerConfig(target_accept=1.0)
    assert [_raised_accept(a) for a in (0.8, 0.95, 0.99)] == [0.95, 0.99, 0.99]


def test_mass_matrix_is_checked():
    assert SamplerConfig().mass_matrix == "diag"
    with pytest.raises(fitting.DataError, match="mass_matrix"):
        SamplerConfig(mass_matrix="dense")


@pytest.mark.slow
def test_low_rank_mass_matrix_takes_fewer_steps_on_correlated_coefficients():
    """The low-rank mass matrix reaches nutpie: on a regression whose intercept and slope are strongly
    correlated (a covariate far from 0), it needs far fewer leapfrog steps per draw than the diagonal
    one, and its draws pass the same checks and agree with them."""
    rng = np.random.default_rng(3)
    n = 400
    z = rng.normal(10.0, 1.0, n)
    X = np.column_stack([np.ones(n), z])
    y = np.exp(0.5 + 0.1 * z + rng.normal(0.0, 0.3, n))
    cm = compiled_model(models.LognormalRegression(n_coef=2), y, X)
    fits = {m: cm.fit(y, covariates=X, sampler=SamplerConfig(draws=400, tune=400, mass_matrix=m), seed=2)
            for m in ("diag", "low_rank")}
    steps = {m: float(f.idata.sample_stats["n_steps"].mean()) for m, f in fits.items()}
    assert steps["low_rank"] < 0.6 * steps["diag"], steps
    assert fits["low_rank"].diagnostics.ok
    b = {m: f.draws["beta"].mean(axis=0) for m, f in fits.items()}
    np.testing.assert_allclose(b["low_rank"], b["diag"], atol=0.05)


def test_diagnostics_are_arviz_s_on_the_inference_data_and_draws_its_posterior(lognormal_cm):
    """A fit reads draws and diagnostics from nutpie's raw trace; they are what ArviZ finds on the
    InferenceData the fit builds on request (the same draws, R-hat, bulk ESS and divergences)."""
    import arviz as az

    from dpsynth.fitting import _diagnostics

    rng = np.random.default_rng(5)
    vector = {"beta": rng.normal(size=(2, 300, 3)), "sigma": rng.normal(size=(2, 300))}
    vector["beta"][1, :, 2] += 0.5  # one component mixes badly: its R-hat is the parameter's
    d = _diagnostics(vector, np.zeros(600, bool), ["beta", "sigma"], SMALL)
    ds = az.convert_to_dataset(vector)
    assert d.rhat["beta"] == pytest.approx(float(az.rhat(ds)["beta"].max()))
    assert d.ess_bulk["beta"] == pytest.approx(float(az.ess(ds, method="bulk")["beta"].min()))
    assert "beta" in d.failed

    f = lognormal_cm.fit(simulated.lognormal_data(100, 21), sampler=SMALL, seed=21)
    post = f.idata.posterior
    assert set(f.draws) == set(post.data_vars)
    for k in post.data_vars:
        np.testing.assert_array_equal(f.draws[k], post[k].values.reshape(-1, *post[k].shape[2:]))
    rhat, ess = az.rhat(post), az.ess(post, method="bulk")
    for k in f.diagnostics.rhat:
        assert f.diagnostics.rhat[k] == pytest.approx(float(rhat[k].max()))
        assert f.diagnostics.ess_bulk[k] == pytest.approx(float(ess[k].min()))
    assert f.diagnostics.divergences == int(f.idata.sample_stats["diverging"].sum())

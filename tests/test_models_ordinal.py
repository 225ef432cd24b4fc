"""The ordinal (cumulative-probability) regression over public bins: its bins, its terms, its fit, its privacy.

Unit tests of :class:`~dpsynth.models.ordinal.PublicBins` and the record terms need no sampler; one
compiled model serves the property test of the terms' sign; the fits (marked slow) use small MCMC
settings; the privacy audit is exact on a grid of a three-bin model (:mod:`dpsynth.audit`).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import special

from dpsynth.bins import PublicBins, default_bins
from dpsynth.models import FAMILIES
from dpsynth.models.ordinal import BASE, OrdinalRegression, ordinal_loglik
from dpsynth.validation import DataError

# --------------------------------------------------------------------------------------------
# the record terms
# --------------------------------------------------------------------------------------------


def test_loglik_matches_direct_formula_and_stays_finite_in_the_tails():
    c = np.array([-1.0, 0.5, 2.0])
    eta = np.array([0.3, -4.0, 40.0, -40.0])
    for link, F in (("logit", special.expit), ("probit", special.ndtr)):
        ext = np.r_[-np.inf, c, np.inf]
        for k in range(4):
            direct = np.log(F(ext[k + 1] - eta[:2]) - F(ext[k] - eta[:2]))
            assert ordinal_loglik(c, eta[:2], np.full(2, k), link) == pytest.approx(direct, rel=1e-7)
        far = ordinal_loglik(c, eta[2:], np.array([1, 2]), link)  # far in a tail: tiny, but finite and exact-ish
        assert np.isfinite(far).all() and (far < -30).all()
        total = special.logsumexp(ordinal_loglik(c[None, :], eta[:, None], np.arange(4)[None, :], link), axis=1)
        assert total == pytest.approx(np.zeros(4), abs=1e-9)  # the bin probabilities sum to one


@pytest.fixture(scope="module")
def bins10():
    return default_bins("continuous", -5.0, 5.0, n_bins=8)


@pytest.fixture(scope="module")
def cm_cov(bins10):
    """The compiled model of a 10-bin ordinal regression on two covariates (compiled once)."""
    from dpsynth.fitting import compiled_model

    fam = OrdinalRegression(bins=bins10, n_coef=3)
    x = np.linspace(-6, 6, 40)
    return compiled_model(fam, x, np.column_stack([np.ones(40), np.ones(40), np.zeros(40)]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), loc=st.floats(-30.0, 30.0), log_scale=st.floats(-6.0, 5.0),
       dev_sd=st.floats(0.0, 20.0), slope=st.floats(0.0, 50.0), spread=st.floats(0.0, 1e6))
def test_every_term_is_at_most_zero(cm_cov, seed, loc, log_scale, dev_sd, slope, spread):
    """On random parameters (far from the data, near-empty bins, large slopes) and data (outside the bounds too):
    every term is a log probability <= 0, as the numpy formula computes it."""
    rng = np.random.default_rng(seed)
    fam = cm_cov.family
    S, n, m = 6, 30, fam.bins.n_interior
    draws = {"loc": np.full(S, loc), "log_scale": np.full(S, log_scale),
             "dev": rng.normal(0.0, dev_sd + 1e-12, size=(S, m)), "point": rng.normal(0.0, 1.0 + dev_sd, size=(S, 2)),
             "beta": rng.normal(0.0, slope + 1e-12, size=(S, 2))}
    x = rng.normal(0.0, 1.0 + spread, size=n)
    X = np.column_stack([np.ones(n), rng.normal(size=(n, 2))])
    L = cm_cov.record_loglik(draws, x, X)
    assert L.shape == (S, n) and not np.isnan(L).any() and (L <= 0.0).all()
    ref = ordinal_loglik(fam.cuts(draws)[:, None, :], draws["beta"] @ X[:, 1:].T, fam.bins.index(x)[None, :])
    # a bin of tiny probability between two of large probability is the difference of two nearly equal cut points,
    # known to about 1e-16 of their size: below ~1e-9 neither computation keeps every digit (a term near -37 may be
    # off by 0.5), where no record of a fitted model lies; above it they agree
    usual = np.isfinite(ref) & (ref > -20)
    assert np.allclose(L[usual], ref[usual], rtol=1e-6, atol=1e-9)
    assert (L[~usual] < -15).all()


def test_traits_and_references(bins10):
    fam = OrdinalRegression(bins=bins10, n_coef=2)
    assert FAMILIES["ordinal"] is OrdinalRegression
    assert fam.one_signed and not fam.continuous and fam.takes_covariates and fam.design_field == "n_coef"
    assert fam.reference_is_max and (fam.reference_loglik(np.arange(5.0)) == 0).all()
    assert fam.reference_tolerance() == pytest.approx(math.log(10) + 2.5)
    assert fam.with_design(4).n_coef == 4
    start = fam.public_start()  # the smooth prior at the public base: loc 0, log_scale 0, no deviation
    assert start["dev"].shape == (1, 8) and start["point"].shape == (1, 2) and start["beta"].shape == (1, 1)
    assert fam.probs(start)[0] == pytest.approx(bins10.default_base())
    assert OrdinalRegression(bins=bins10, cut_prior="dirichlet").public_start()["pi"].shape == (1, 10)
    with pytest.raises(DataError, match="cut_prior"):
        OrdinalRegression(bins=bins10, cut_prior="ordered")
    values = fam.data_values(np.array([-9.0, 0.0, 0.1, 9.0]), None)  # interior bins (e_j, e_j+1]: 0 ends a bin
    assert values["bin"].tolist() == [0, 4, 5, 9] and values[BASE].shape == (10,)


def test_censor_ref_takes_the_family_tolerance(bins10):
    from dpsynth.mechanisms import censored_reference as cr
    from dpsynth.models import LognormalFamily

    assert cr.MECHANISM.params["tolerance"].default is None
    assert cr.family_tolerance(OrdinalRegression(bins=bins10)) == pytest.approx(math.log(10) + 2.5)
    assert cr.family_tolerance(LognormalFamily()) == cr.TOLERANCE == 2.5  # other families keep the default
    assert cr.MECHANISM.resolve({"tolerance": 4.0}, 1.0)["tolerance"] == 4.0


def test_simulate_follows_the_bin_probabilities(bins10):
    fam = OrdinalRegression(bins=bins10, n_coef=2)
    rng = np.random.default_rng(5)
    n = 20_000
    pi = rng.dirichlet(np.full(10, 2.0))
    draws = {"pi": np.tile(pi, (n, 1)), "beta": np.full((n, 1), 1.5)}
    X = np.column_stack([np.ones(n), np.r_[np.zeros(n // 2), np.ones(n // 2)]])
    x = fam.simulate(draws, rng, X)
    assert ((x >= -5) & (x <= 5)).all()
    assert set(x[fam.bins.index(x) == 0]) <= {-5.0} and set(x[fam.bins.index(x) == 9]) <= {5.0}
    for half in (slice(0, n // 2), slice(n // 2, n)):
        want = fam.bin_probs({k: v[half] for k, v in draws.items()}, X[half])[0]
        got = np.bincount(fam.bins.index(x[half]), minlength=10) / (n // 2)
        assert np.abs(got - want).max() < 0.02
    assert np.mean(x[n // 2:]) > np.mean(x[: n // 2])  # a positive slope moves records up


# --------------------------------------------------------------------------------------------
# fits (MCMC)
# --------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_fit_converges_and_recovers_a_slope_sign():
    from dpsynth.fitting import SamplerConfig, compiled_model

    rng = np.random.default_rng(11)
    n = 300
    z = rng.normal(size=n)
    latent = 1.0 - 0.8 * z + rng.normal(0, 0.7, n)
    x = np.where(latent < 0.4, 0.0, np.exp(latent))  # about 20% exact zeros, skewed, a negative slope
    fam = OrdinalRegression(bins=default_bins("continuous", 0.0, 200.0, n_bins=10), n_coef=2)
    X = np.column_stack([np.ones(n), z])
    cm = compiled_model(fam, x, X)
    # untempered, an empty bin between the zeros and the rest: smaller steps than nutpie's default keep the rare
    # divergence away (the Synthesizer's retries raise the target acceptance rate the same way)
    cfg = SamplerConfig(draws=500, tune=500, chains=2, mass_matrix="low_rank", target_accept=0.9)
    fit = cm.fit(x, covariates=X, sampler=cfg, seed=3, init=fam.public_start())
    assert fit.diagnostics.ok, fit.diagnostics.problems()
    beta = fit.draws["beta"][:, 0]
    assert np.quantile(beta, 0.975) < 0  # the sign of the slope, with its posterior mass
    p0 = fit.draws["pi"][:, 0]  # the zeros' point bin at eta = 0 (z centred, a record at the mean)
    assert 0.05 < p0.mean() < 0.3
    # a DP or public base passed at fit time moves the prior without recompiling
    base = np.full(fam.n_bins, 1.0 / fam.n_bins)
    fit2 = cm.fit(x, covariates=X, sampler=SamplerConfig(draws=100, tune=150, chains=2), seed=4,
                  data={BASE: base}, keep_idata=False)
    assert fit2.draws["pi"].shape[1] == fam.n_bins


@pytest.mark.slow
def test_synthesizer_ordinal_censor_ref(tmp_path):
    """model="ordinal" through the Synthesizer: public bounds cut its bins, Censor_ref takes its tolerance and a
    one-signed window [-M, 0], M = eps, and a saved synthesizer loads back."""
    import pandas as pd

    from dpsynth import Synthesizer

    rng = np.random.default_rng(2)
    n = 300
    hours = np.where(rng.random(n) < 0.5, 40, rng.integers(0, 80, n))
    hours[:3] = 95  # above the public upper bound: clamped to 80, counted in the confidential diagnostics
    df = pd.DataFrame({"hours": hours.astype(int)})
    with pytest.raises(DataError, match="bounds"):
        Synthesizer(df, "hours", model="ordinal", mechanism="censor_ref", eps=1.0, progress=False)
    s = Synthesizer(df, "hours", model="ordinal", mechanism="censor_ref", eps=1.0, bounds=(0, 80),
                    neighbours="remove", mode="research", progress=False,
                    sampler={"draws": 300, "tune": 300, "chains": 2})
    fam = s.family()
    assert isinstance(fam, OrdinalRegression) and fam.bins == default_bins("count", 0, 80) and fam.n_bins == 81
    s.fit(seed=1)
    p = s.privacy
    M = s.plan.params["eps"]  # the draw's share of eps (the rest pays the released size's DP count)
    assert p.bound == pytest.approx(M) and p.delta <= M + 1e-9  # (convergence: a diagnostic, deciding nothing)
    assert p.extra["tolerance"] == pytest.approx(math.log(81) + 2.5)
    assert p.extra["alpha"] == pytest.approx(M / (math.log(81) + 2.5))
    assert "3 value(s) clamped to the public bounds" in p.diagnostics()  # confidential
    assert "values outside the public bounds [0, 80] are clamped to them" in p.statement()
    v = s.sample_unaccounted(seed=3)["hours"].to_numpy()
    assert ((v >= 0) & (v <= 80)).all() and (v == np.rint(v)).all()
    assert 0.25 < np.mean(v == 40) < 0.75  # the heap survives
    loaded = Synthesizer.load(s.save(tmp_path / "ordinal.json"))
    assert loaded.family() == fam


# --------------------------------------------------------------------------------------------
# exact privacy audit on a grid
# --------------------------------------------------------------------------------------------


def _simplex_grid(m: int):
    """The 3-simplex on a triangular grid of cell midpoints (every cell the same area)."""
    g = (np.arange(m) + 0.5) / m
    a, b = np.meshgrid(g, g, indexing="ij")
    keep = a + b < 1.0 - 0.25 / m
    p = np.column_stack([a[keep], b[keep], 1.0 - a[keep] - b[keep]])
    return p


def test_exact_audit_three_bins_within_the_one_signed_bound():
    """Censor_ref on a 3-bin ordinal model ({0}, (0, 1), {1}): the log density ratio of neighbouring data sets is
    at most eps (one record removed) and 2 eps (one replaced), M = eps for one-signed terms; uncensored it is not."""
    from scipy import stats

    from dpsynth.audit import grid_log_posterior, max_log_ratio
    from dpsynth.fitting import compiled_model
    from dpsynth.mechanisms.censored_reference import default_alpha

    bins = PublicBins(lower=0.0, upper=1.0, edges=(0.0, 1.0))
    # the grid is over the bin probabilities themselves (the likelihood is the same whatever their prior)
    fam = OrdinalRegression(bins=bins, cut_prior="dirichlet")
    x = np.r_[np.zeros(6), np.full(10, 0.4), np.ones(2)]
    cm = compiled_model(fam, x)
    pi = _simplex_grid(160)
    grid = {"pi": pi}
    alpha_dir = fam.total_concentration * bins.default_base()
    log_prior = stats.dirichlet.logpdf(pi.T, alpha_dir)
    values = {"zero": 0.0, "inside": 0.4, "one": 1.0, "clamped": 7.0}
    for eps in (0.5, 2.0):
        M = eps  # one-signed: the window [-M, 0]
        a = default_alpha(eps, one_signed=True, tolerance=fam.reference_tolerance())

        def lp(data, bound=M, weight=a):
            return grid_log_posterior(cm, data, grid, log_prior, np.full(data.size, weight), bound,
                                      shift=np.zeros(data.size))

        base = lp(x)
        removed = [max_log_ratio(base, lp(np.delete(x, i)))["all"] for i in (0, 6, 16)]
        replaced = []
        for i in (0, 6, 16):
            for v in values.values():
                xp = x.copy()
                xp[i] = v
                replaced.append(max_log_ratio(base, lp(xp))["all"])
        assert max(removed) <= eps + 1e-9
        assert max(replaced) <= 2 * eps + 1e-9
        assert max(removed) > 0.5 * eps  # the bound is nearly attained: the audit has teeth
    # without the clamp (weight 1) a record of a rare bin moves the posterior by more than the bound at eps = 0.5
    un = max_log_ratio(lp(x, None, 1.0), lp(np.delete(x, 16), None, 1.0))["all"]
    assert un > 2 * 0.5

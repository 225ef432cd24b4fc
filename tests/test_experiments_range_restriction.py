"""The range-restriction replicate on tiny settings, and the (A)/(B)/(B') accounting on real fits."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpsynth import datasets, fitting, mechanisms, range_readings, registry
from dpsynth.experiments import range_restriction as rr
from dpsynth.fitting import ConvergenceWarning, SamplerConfig

TINY = dict(meanlog=1.0, sdlog=1.0, n=30, ns=[30, 60], ranges=[[0.4, 1.8], [0.6, 1.2]],
            draws=200, tune=200, chains=2, record_replicates=1)
CFG = SamplerConfig(draws=200, tune=200, chains=2)


@pytest.fixture(scope="module")
def runs():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ss = np.random.SeedSequence(7)
        a = rr.replicate(0, ss, TINY)
        b = rr.replicate(0, np.random.SeedSequence(7), TINY)
        c = rr.replicate(1, np.random.SeedSequence(8), TINY)
    return a, b, c


@pytest.mark.slow
def test_replicate_structure(runs):
    ds, _, other = runs
    names = rr.mechanism_names(TINY["ranges"])
    # registry display names in the registry's order (shades of a pattern follow the ranges)
    assert names == ["Unweighted", "LW", "A[0.4,1.8]", "A[0.6,1.2]", "B[0.4,1.8]", "B[0.6,1.2]",
                     "B'[0.4,1.8]", "B'[0.6,1.2]"]
    assert names == registry.order(names)
    assert [registry.guarantee(m) for m in names] == ["none"] + ["aDP"] * 7
    assert list(ds["guarantee"].values) == ["none"] + ["aDP"] * 7
    assert list(ds["mechanism"].values) == names
    assert list(ds["n_obs"].values) == [30, 60]
    for v in ("delta", "eps", "eps_replace", "converged", "rhat_max", "ess_min", "divergences", "q90", "max_ecdf",
              "avg_ecdf", "q90_mixed", "avg_ecdf_mixed", "n_draws_mixed", "mean_lambda",
              "weight_at_max", "x_rank_at_max", "max_neg_log_prob", "neg_log_prob_at_max"):
        assert ds[v].dims == ("n_obs", "mechanism"), v
    assert ds["delta_trunc_unweighted"].dims == ("n_obs", "range")
    assert ds["q90_data"].dims == ("n_obs",)
    assert ds["record_delta"].shape == (len(names), 30)
    assert ds["converged"].dtype == bool
    assert np.issubdtype(ds["divergences"].dtype, np.integer) and (ds["divergences"] >= 0).all()
    # a fit with divergences is never reported as converged; B' repeats B's diagnostics
    assert not ds["converged"].where(ds["divergences"] > 0, False).any()
    assert (ds["rhat_max"] > 0.9).all() and (ds["ess_min"] > 0).all()
    for t in ("[0.4,1.8]", "[0.6,1.2]"):
        for v in ("divergences", "rhat_max", "converged"):
            np.testing.assert_array_equal(ds[v].sel(mechanism=f"B{t}"), ds[v].sel(mechanism=f"B'{t}"))
    # invariants
    assert np.isfinite(ds["delta"]).all() and (ds["delta"] > 0).all()
    # eps with one record removed is 2 Delta; replaced, 4 Delta (the lognormal terms are not one-signed)
    np.testing.assert_allclose(ds["eps"], 2 * ds["delta"])
    np.testing.assert_allclose(ds["eps_replace"], 4 * ds["delta"])
    # record-wise mixing (comparison only) uses many draws; the released set uses one
    assert (ds["n_draws_mixed"] > 1).all() and (ds["n_draws_mixed"] <= ds["n_obs"]).all()
    lam = ds["mean_lambda"].sel(mechanism=["A[0.4,1.8]", "A[0.6,1.2]"])
    assert ((lam > 0) & (lam < 1)).all()
    assert (lam.sel(mechanism="A[0.6,1.2]") > lam.sel(mechanism="A[0.4,1.8]")).all()  # narrower range: more known
    assert ds["mean_lambda"].sel(mechanism=["LW", "B[0.4,1.8]"]).isnull().all()
    np.testing.assert_allclose(ds["record_delta"].max("record"), ds["delta"].sel(n_obs=30))
    # B and B' share one fit, so identical utility; A's bound is (1 - lambda) alpha |f| <= |f|
    for t in ("[0.4,1.8]", "[0.6,1.2]"):
        np.testing.assert_array_equal(ds["q90"].sel(mechanism=f"B{t}"), ds["q90"].sel(mechanism=f"B'{t}"))
        np.testing.assert_array_equal(ds["q90_mixed"].sel(mechanism=f"B{t}"), ds["q90_mixed"].sel(mechanism=f"B'{t}"))
        sub = ds.sel(mechanism=f"B{t}")
        zero = (sub["weight_at_max"] == 0).values
        np.testing.assert_allclose(sub["delta"].values[zero], sub["neg_log_prob_at_max"].values[zero])
    # per-record vectors only for the first record_replicates replicates
    assert other["record_delta"].isnull().all()


@pytest.mark.slow
def test_replicate_is_reproducible(runs):
    a, b, c = runs
    import xarray as xr
    xr.testing.assert_identical(a, b)
    assert not np.allclose(a["delta"], c["delta"])


@pytest.mark.slow
def test_replicate_rejects_bad_params():
    with pytest.raises(ValueError):
        rr.replicate(0, np.random.SeedSequence(1), {**TINY, "n": 45})
    with pytest.raises(ValueError):
        rr.replicate(0, np.random.SeedSequence(1), {**TINY, "ranges": [[1.2, 0.6]]})


@pytest.mark.slow
def test_accounting_on_real_fits():
    x = datasets.lognormal_data(40, 3, meanlog=1.0, sdlog=1.0)
    cm = fitting.compiled_model(rr.family(rr.DEFAULT_PARAMS), x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        u = mechanisms.unweighted(cm, x, sampler=CFG, seed=1)
        lw = mechanisms.lipschitz_weighted(cm, u.fit, sampler=CFG, seed=2)
        A = mechanisms.range_averaged(cm, u.fit, lw.weights, 0.4, 1.8, sampler=CFG, seed=3)
        B = mechanisms.range_truncated(cm, u.fit, 0.4, 1.8, sampler=CFG, seed=4)
    # (A): the mechanism's lambda is the vectorised-CDF lambda of the base fit
    lam = range_readings.knowledge_lambda(u.fit, 0.4, 1.8)
    assert A.privacy.extra["mean_lambda"] == pytest.approx(lam.mean(), rel=1e-12)
    np.testing.assert_allclose(A.weights, lam + (1 - lam) * lw.weights)
    # (B'): same fit and weights as B, bound max_s |alpha (f - log P)|
    B2 = range_readings.whole_term_truncated(B)
    assert B2.fit is B.fit and B2.name == "B'[0.4,1.8]" and B2.guarantee == "aDP"
    F = B.fit.loglik()
    L = mechanisms.range_log_prob(B.fit, 0.4, 1.8)
    np.testing.assert_allclose(B2.bounds.delta_i, np.abs(B.weights * (F - L)).max(0))
    np.testing.assert_allclose(B.bounds.delta_i, np.abs(B.weights * F - L).max(0))
    dec = range_readings.truncation_decomposition(B.fit, B.weights, 0.4, 1.8)
    assert abs(dec["weighted_loglik"] - dec["log_prob"]) == pytest.approx(B.privacy.delta)
    assert dec["n_zero_weight"] >= 1
    # the privacy reports name both relations: 2 Delta removed, 4 Delta replaced; B' is aDP like B
    for res in (A, B, B2):
        assert res.privacy.eps == pytest.approx(2 * res.privacy.delta)
        assert res.privacy.eps_replace == pytest.approx(4 * res.privacy.delta)
    assert u.guarantee == "none" and A.guarantee == "aDP" and B.guarantee == "aDP"
    # the replicate's synthetic data set comes from one posterior draw: it equals a release of one draw
    from dpsynth import synthesis
    rel = synthesis.release(A, 11)
    assert rel.n_draws_used == 1 and rel.eps == pytest.approx(A.privacy.eps)
    np.testing.assert_array_equal(synthesis.synthesize(A.fit, 11), rel.values)
    # the unweighted truncated term is smaller than |f| for the riskiest record (the amplification)
    unw = range_readings.truncated_bounds(u.fit, 1.0, 0.4, 1.8)
    assert unw.delta < u.privacy.delta

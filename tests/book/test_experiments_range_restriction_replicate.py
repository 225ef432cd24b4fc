"""The range-restriction replicate on the smoke preset: structure, invariants, reproducibility."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

from dpsynth import registry
from dpsynth_book import presentation
from dpsynth_book.experiments.range_restriction import Params
from dpsynth_book.experiments.range_restriction.replicate import replicate, synthesizer_names

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::dpsynth.fitting.ConvergenceWarning")]

P = Params.smoke()


@pytest.fixture(scope="module")
def runs():
    d = P.study_dict()
    return (replicate(0, np.random.SeedSequence(7), d), replicate(0, np.random.SeedSequence(7), d),
            replicate(1, np.random.SeedSequence(8), d))


def test_names_follow_the_registry():
    names = synthesizer_names(P.ranges)
    assert names == ["Unweighted", "LW", "A[0.4,1.8]", "A[0.6,1.2]", "B[0.4,1.8]", "B[0.6,1.2]",
                     "B'[0.4,1.8]", "B'[0.6,1.2]"]
    assert names == presentation.order(names)
    assert [registry.guarantee(m) for m in names] == ["none"] + ["aDP"] * 7


def test_replicate_structure(runs):
    ds, _, other = runs
    names = synthesizer_names(P.ranges)
    assert list(ds["synthesizer"].values) == names and list(ds["guarantee"].values) == ["none"] + ["aDP"] * 7
    assert list(ds["n_obs"].values) == list(P.ns) and ds.attrs["n_main"] == P.n
    for v in ("delta", "eps", "eps_replace", "converged", "rhat_max", "ess_min", "divergences", "q90", "max_ecdf",
              "avg_ecdf", "q90_mixed", "avg_ecdf_mixed", "n_draws_mixed", "mean_lambda",
              "weight_at_max", "x_rank_at_max", "max_neg_log_prob", "neg_log_prob_at_max"):
        assert ds[v].dims == ("n_obs", "synthesizer"), v
    assert ds["delta_trunc_unweighted"].dims == ("n_obs", "range")
    assert ds["record_delta"].shape == (len(names), P.n)
    assert ds["converged"].dtype == bool and np.issubdtype(ds["divergences"].dtype, np.integer)
    assert not ds["converged"].where(ds["divergences"] > 0, False).any()
    # eps with one record removed is 2 Delta; replaced, 4 Delta (the lognormal terms take both signs)
    np.testing.assert_allclose(ds["eps"], 2 * ds["delta"])
    np.testing.assert_allclose(ds["eps_replace"], 4 * ds["delta"])
    assert (ds["n_draws_mixed"] > 1).all() and (ds["n_draws_mixed"] <= ds["n_obs"]).all()
    lam = ds["mean_lambda"].sel(synthesizer=["A[0.4,1.8]", "A[0.6,1.2]"])
    assert ((lam > 0) & (lam < 1)).all()
    assert (lam.sel(synthesizer="A[0.6,1.2]") > lam.sel(synthesizer="A[0.4,1.8]")).all()
    assert ds["mean_lambda"].sel(synthesizer=["LW", "B[0.4,1.8]"]).isnull().all()
    np.testing.assert_allclose(ds["record_delta"].max("record"), ds["delta"].sel(n_obs=P.n))
    for t in ("[0.4,1.8]", "[0.6,1.2]"):
        # B and B' share one fit: same diagnostics, same synthetic data
        for v in ("divergences", "rhat_max", "converged", "q90", "q90_mixed"):
            np.testing.assert_array_equal(ds[v].sel(synthesizer=f"B{t}"), ds[v].sel(synthesizer=f"B'{t}"))
        sub = ds.sel(synthesizer=f"B{t}")
        zero = (sub["weight_at_max"] == 0).values
        np.testing.assert_allclose(sub["delta"].values[zero], sub["neg_log_prob_at_max"].values[zero])
    assert other["record_delta"].isnull().all()


def test_replicate_is_reproducible(runs):
    a, b, c = runs
    xr.testing.assert_identical(a, b)
    assert not np.allclose(a["delta"], c["delta"])

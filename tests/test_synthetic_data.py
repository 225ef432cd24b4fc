"""Synthetic data from the pseudo posterior predictive, and composition of releases."""

from __future__ import annotations

import numpy as np
import pytest
import simulated
from fit_helpers import SMALL, betareg_design, fit_from_draws

from dpsynth import mechanisms
from dpsynth.synthetic_data import composed_eps, release, release_sets, synthesize
from dpsynth.validation import DataError


def test_composed_eps():
    assert composed_eps(1.5, 1) == 1.5
    assert composed_eps(1.5, 4) == 6.0


@pytest.mark.parametrize("eps, m, arg", [
    (0.0, 1, "`eps`"), (-1.0, 1, "`eps`"), (float("inf"), 1, "`eps`"), (float("nan"), 1, "`eps`"), ("1", 1, "`eps`"),
    (True, 1, "`eps`"), (1.0, 0, "`m`"), (1.0, 2.5, "`m`"), (1.0, True, "`m`"), (1.0, "2", "`m`"),
])
def test_composed_eps_refuses_bad_input(eps, m, arg):
    with pytest.raises(DataError, match=arg):
        composed_eps(eps, m)


@pytest.fixture(scope="module")
def two_draw_fit(lognormal_cm):
    # two very different posterior draws: exp(N(0, tiny)) ~ 1 and exp(N(5, tiny)) ~ 148
    x = simulated.lognormal_data(400, 1)
    return fit_from_draws(lognormal_cm, x, {"mu": [0.0, 5.0], "sigma": [1e-6, 1e-6]})


@pytest.mark.slow
def test_one_synthetic_data_set_comes_from_one_draw(two_draw_fit):
    # the two draws are far apart (records near 1 or near 148): every record of a set must
    # come from the same draw, and over seeds both draws are used
    seen = set()
    for s in range(12):
        syn = synthesize(two_draw_fit, seed=s)
        assert syn.shape == (400,) and syn.dtype == float
        low = np.isclose(syn, 1.0, rtol=1e-4)
        high = np.isclose(syn, np.exp(5.0), rtol=1e-4)
        assert (low | high).all()
        assert low.all() or high.all(), "records of one data set come from different draws"
        seen.add(bool(low.all()))
    assert seen == {True, False}
    # a chosen draw
    assert np.allclose(synthesize(two_draw_fit, seed=0, draw=1), np.exp(5.0), rtol=1e-4)
    with pytest.raises(DataError, match="`draw`"):
        synthesize(two_draw_fit, seed=0, draw=2)


@pytest.mark.slow
def test_release_states_the_one_draw_eps(two_draw_fit):
    res = mechanisms.mechanism_result("Weighted", two_draw_fit)
    rel = release(res, seed=1)
    assert rel.n_draws_used == 1 and not rel.mixed
    assert rel.eps == pytest.approx(res.privacy.eps)
    assert rel.eps_replace == pytest.approx(res.privacy.eps_replace)
    assert "one posterior draw" in rel.statement() and "removed" in rel.statement() and "replaced" in rel.statement()


@pytest.mark.slow
def test_record_wise_mixing_reports_the_composed_eps(two_draw_fit):
    res = mechanisms.mechanism_result("Weighted", two_draw_fit)
    rel = release(res, seed=1, mix_draws=True)
    near1 = np.isclose(rel.values, 1.0, rtol=1e-4)
    # each record picks a draw at random: both draws are used, about half each
    assert 150 < near1.sum() < 250
    assert rel.mixed and rel.n_draws_used == 2
    assert rel.eps == pytest.approx(2 * res.privacy.eps)
    assert rel.eps_replace == pytest.approx(2 * res.privacy.eps_replace)
    assert "sequential composition" in rel.statement()
    with pytest.raises(DataError, match="`mix_draws`"):
        release(res, seed=1, mix_draws="yes")


@pytest.mark.slow
def test_release_sets_use_distinct_draws(two_draw_fit):
    res = mechanisms.mechanism_result("Weighted", two_draw_fit)
    sets = release_sets(res, 2, seed=3)
    firsts = {int(r.draw_index[0]) for r in sets}
    assert firsts == {0, 1}
    assert sum(r.eps for r in sets) == pytest.approx(composed_eps(res.privacy.eps, 2))
    with pytest.raises(DataError, match="`m`"):
        release_sets(res, 3, seed=3)


@pytest.mark.slow
def test_synthesis_reproducible_by_seed(two_draw_fit):
    np.testing.assert_array_equal(synthesize(two_draw_fit, seed=3), synthesize(two_draw_fit, seed=3))
    assert not np.array_equal(synthesize(two_draw_fit, seed=3), synthesize(two_draw_fit, seed=4))


@pytest.mark.slow
def test_synthetic_counts_from_a_real_fit(poisson_cm):
    x = simulated.poisson_data(300, 5, mu=100.0)
    res = mechanisms.unweighted(poisson_cm, x, sampler=SMALL, seed=5)
    syn = synthesize(res.fit, seed=6)
    assert syn.shape == x.shape
    assert (syn >= 0).all() and (syn == np.round(syn)).all()
    assert syn.mean() == pytest.approx(100.0, abs=3.0)


@pytest.mark.slow
def test_regression_synthesis_uses_public_covariates(betareg_cm):
    n = 200
    X = betareg_design(n, seed=7)
    draws = {"beta": np.tile([[-2.0, 4.0]], (3, 1)), "kappa": np.full(3, 200.0)}
    x = np.random.default_rng(7).beta(2.0, 5.0, size=n)
    fit = fit_from_draws(betareg_cm, x, draws, covariates=X)
    syn = synthesize(fit, seed=8)
    g1 = X[:, 1] == 1
    assert syn[~g1].mean() == pytest.approx(1 / (1 + np.exp(2.0)), abs=0.02)
    assert syn[g1].mean() == pytest.approx(1 / (1 + np.exp(-2.0)), abs=0.02)
    # other covariates can be passed for the synthetic records
    X2 = np.column_stack([np.ones(n), np.zeros(n)])
    syn2 = synthesize(fit, seed=8, covariates=X2)
    assert syn2.mean() == pytest.approx(1 / (1 + np.exp(2.0)), abs=0.02)

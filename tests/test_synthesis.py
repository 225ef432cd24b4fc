"""Synthetic data from the pseudo posterior predictive, and composition of releases."""

from __future__ import annotations

import numpy as np
import pytest

from dpsynth import datasets, mechanisms
from dpsynth.synthesis import composed_eps, synthesize

from conftest import SMALL, betareg_design, fit_from_draws


def test_composed_eps():
    assert composed_eps(1.5, 1) == 1.5
    assert composed_eps(1.5, 4) == 6.0


@pytest.fixture(scope="module")
def two_draw_fit(lognormal_cm):
    # two very different posterior draws: exp(N(0, tiny)) ~ 1 and exp(N(5, tiny)) ~ 148
    x = datasets.lognormal_data(400, 1)
    return fit_from_draws(lognormal_cm, x, {"mu": [0.0, 5.0], "sigma": [1e-6, 1e-6]})


@pytest.mark.slow
def test_per_record_draws_mix_the_posterior(two_draw_fit):
    syn = synthesize(two_draw_fit, seed=1)
    assert syn.shape == (400,) and syn.dtype == float
    near1 = np.isclose(syn, 1.0, rtol=1e-4)
    near148 = np.isclose(syn, np.exp(5.0), rtol=1e-4)
    assert (near1 | near148).all()
    # each record picks a draw at random: about half each
    assert 150 < near1.sum() < 250


@pytest.mark.slow
def test_one_draw_per_data_set(two_draw_fit):
    seen = set()
    for s in range(12):
        syn = synthesize(two_draw_fit, seed=s, per_record=False)
        low = np.isclose(syn, 1.0, rtol=1e-4)
        assert low.all() or (~low).all()
        seen.add(bool(low.all()))
    assert seen == {True, False}


@pytest.mark.slow
def test_synthesis_reproducible_by_seed(two_draw_fit):
    np.testing.assert_array_equal(synthesize(two_draw_fit, seed=3), synthesize(two_draw_fit, seed=3))
    assert not np.array_equal(synthesize(two_draw_fit, seed=3), synthesize(two_draw_fit, seed=4))


@pytest.mark.slow
def test_synthetic_counts_from_a_real_fit(poisson_cm):
    x = datasets.poisson_data(300, 5, mu=100.0)
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

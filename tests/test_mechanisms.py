"""Mechanisms on real (small) fits: LW, CW, SW, Weighted-e, censoring, re-weighting, downscaling;
and the privacy properties as Hypothesis tests (range restriction: tests/test_range_restriction.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import simulated
from fit_helpers import SMALL, TINY, fit_from_draws
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpsynth import mechanisms
from dpsynth.fitting import ConvergenceWarning
from dpsynth.privacy import CENSOR_TOL
from dpsynth.weights import count_weights, lipschitz_weights, reweight, scale_weights

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::dpsynth.fitting.ConvergenceWarning")]


@pytest.fixture(scope="module")
def pois_x():
    return simulated.poisson_data(250, 31, mu=100.0)


@pytest.fixture(scope="module")
def base(poisson_cm, pois_x):
    return mechanisms.unweighted(poisson_cm, pois_x, sampler=SMALL, seed=1)


@pytest.fixture(scope="module")
def lw(poisson_cm, base):
    return mechanisms.lipschitz_weighted(poisson_cm, base.fit, sampler=SMALL, seed=2)


# --------------------------------------------------------------------------------------------
# weighted mechanisms
# --------------------------------------------------------------------------------------------


def test_unweighted(base, pois_x):
    assert base.name == "Unweighted" and base.label == "Unweighted (none)" and base.guarantee == "none"
    np.testing.assert_array_equal(base.weights, np.ones(pois_x.size))
    assert base.privacy.delta == pytest.approx(base.bounds.abs_loglik.max())
    assert base.privacy.n_censored == 0


def test_lipschitz_weighted_uses_lw_formula(lw, base):
    f = base.fit.bounds.abs_loglik
    r = (f - f.min()) / (f.max() - f.min())
    np.testing.assert_allclose(lw.weights, 1 - r, rtol=1e-12)
    np.testing.assert_array_equal(lw.fit.weights, lw.weights)
    assert lw.label == "LW (aDP)" and lw.guarantee == "aDP"
    assert lw.privacy.extra == {"c": 1.0, "g": 0.0}
    # the record with the largest |f| gets weight 0, so the weighted Delta is smaller
    assert lw.weights.min() == 0.0 and lw.weights.max() == 1.0
    assert lw.privacy.delta < base.privacy.delta


def test_lipschitz_weighted_scale_and_shift(poisson_cm, base):
    res = mechanisms.lipschitz_weighted(poisson_cm, base.fit, c=0.5, g=0.3, sampler=TINY, seed=3)
    f = base.fit.bounds.abs_loglik
    r = (f - f.min()) / (f.max() - f.min())
    np.testing.assert_allclose(res.weights, np.clip(0.5 * (1 - r) + 0.3, 0, 1), rtol=1e-12)


def test_count_weighted(poisson_cm, pois_x):
    res = mechanisms.count_weighted(poisson_cm, pois_x, radius=0.1, kind="relative", sampler=TINY, seed=4)
    np.testing.assert_array_equal(res.weights, count_weights(pois_x, 0.1, "relative"))
    assert res.name == "CW" and res.label == "CW (aDP)"
    assert res.privacy.extra == {"radius": 0.1, "kind": "relative"}


def test_scalar_weighted_matches_target(poisson_cm, base, lw):
    target = lw.privacy.delta
    res = mechanisms.scalar_weighted(poisson_cm, base.fit, target, tol=0.05, max_iter=4, sampler=SMALL, seed=5)
    alpha = res.privacy.extra["alpha"]
    np.testing.assert_array_equal(res.weights, np.full(base.fit.x.size, alpha))
    assert 0 < alpha < 1
    assert res.label == "SW (aDP)"
    gap = abs(res.privacy.delta - target)
    assert gap <= 0.05 * target or res.privacy.extra["n_fits"] == 4
    # first guess is Delta_target / Delta_unweighted: the scalar weight is in that neighbourhood
    assert alpha == pytest.approx(target / base.privacy.delta, rel=0.3)


def test_weighted_e_truncates_high_risk_records(poisson_cm, lw):
    eps = 2 * float(np.quantile(lw.bounds.delta_i, 0.8))
    res = mechanisms.weighted_e(poisson_cm, lw, eps, sampler=SMALL, seed=6)
    hit = (lw.bounds.delta_i > eps / 2) & (lw.weights > 0)
    assert res.privacy.extra["n_truncated"] == int(hit.sum()) > 0
    assert (res.weights[hit] == 0).all()
    np.testing.assert_array_equal(res.weights[~hit], lw.weights[~hit])
    assert res.name == "Weighted-e" and res.guarantee == "aDP"
    assert res.privacy.extra["eps_target"] == eps


# --------------------------------------------------------------------------------------------
# censoring
# --------------------------------------------------------------------------------------------


def test_censor_uw(poisson_cm, pois_x):
    res = mechanisms.censored(poisson_cm, pois_x, 6.0, sampler=SMALL, seed=7)
    assert res.name == "Censor_uw" and res.label == "Censor_uw (DP)"
    # Poisson terms are <= 0: the window [-M, 0] has width M = eps
    assert res.privacy.delta <= 6.0 and res.privacy.bound == 6.0
    assert res.fit.bound == 6.0
    assert res.privacy.eps == 6.0 and res.privacy.eps_replace == 12.0
    F = res.fit.loglik()
    assert res.privacy.n_censored == int((np.abs(F) > 6.0).any(axis=0).sum())


def test_censor_w(poisson_cm, pois_x, lw):
    res = mechanisms.censored(poisson_cm, pois_x, 4.0, weights=lw.weights, sampler=SMALL, seed=8)
    # weights computed from the same data: the clamp holds, but the guarantee is aDP only
    assert res.name == "Censor_w" and res.label == "Censor_w (aDP)"
    np.testing.assert_array_equal(res.weights, lw.weights)
    assert res.privacy.delta <= 4.0  # one-signed: M = eps
    F = res.fit.loglik()
    assert res.privacy.n_censored == int((np.abs(lw.weights * F) > 4.0).any(axis=0).sum())


@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    x=st.lists(st.integers(0, 400), min_size=5, max_size=60),
    eps=st.floats(0.05, 30.0),
    weighted=st.booleans(),
    wseed=st.integers(0, 2**16),
)
def test_censored_fit_bounded_for_arbitrary_data(poisson_cm, x, eps, weighted, wseed):
    xv = np.array(x, dtype=float)
    w = np.random.default_rng(wseed).uniform(0, 1, size=xv.size) if weighted else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = mechanisms.censored(poisson_cm, xv, eps, weights=w, sampler=TINY, seed=wseed)
    # Poisson terms are <= 0: one-signed, the clamp is [-M, 0] with M = eps (a window of width eps)
    assert res.privacy.delta <= eps + CENSOR_TOL
    assert (res.bounds.delta_i <= eps + CENSOR_TOL).all()
    assert res.guarantee == ("aDP" if weighted else "DP")
    assert res.privacy.eps == pytest.approx(eps)  # computed from M, not from this data set's Delta
    assert res.privacy.eps_replace == pytest.approx(2 * eps)
    assert res.name == ("Censor_w" if weighted else "Censor_uw")


# --------------------------------------------------------------------------------------------
# re-weighting
# --------------------------------------------------------------------------------------------


def test_reweighted_lw_final(poisson_cm, lw):
    res = mechanisms.reweighted(poisson_cm, lw, k0=0.95, tol=0.05, max_iter=5, sampler=SMALL, seed=9)
    ex = res.privacy.extra
    assert res.name == "LW_final" and res.label == "LW_final (aDP)"
    assert ex["delta_before"] == lw.privacy.delta
    assert res.privacy.delta <= lw.privacy.delta
    if np.isfinite(ex["k"]):
        assert ex["delta_after"] == res.privacy.delta
        np.testing.assert_allclose(res.weights, reweight(lw.weights, lw.bounds.delta_i, lw.privacy.delta, ex["k"]))
    if ex["converged"]:
        assert lw.privacy.delta - res.privacy.delta <= 0.05 * lw.privacy.delta
    # re-weighting raises low-risk weights: on average the weights go up
    assert res.weights.mean() >= lw.weights.mean() or not np.isfinite(ex["k"])


@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(dseed=st.integers(0, 1000), k0=st.floats(0.5, 1.0), tol=st.floats(0.01, 0.3))
def test_reweighting_never_ends_above_original_delta(poisson_cm, dseed, k0, tol):
    x = simulated.poisson_data(80, dseed, mu=50.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        b = mechanisms.unweighted(poisson_cm, x, sampler=TINY, seed=dseed)
        start = mechanisms.lipschitz_weighted(poisson_cm, b.fit, sampler=TINY, seed=dseed + 1)
        res = mechanisms.reweighted(poisson_cm, start, k0=k0, tol=tol, max_iter=3, sampler=TINY, seed=dseed + 2)
    D = start.privacy.delta
    assert res.privacy.delta <= D
    assert res.privacy.extra["delta_after"] <= res.privacy.extra["delta_before"] == D
    assert ((res.weights >= 0) & (res.weights <= 1)).all()
    if res.privacy.extra["converged"]:
        assert D - res.privacy.delta <= tol * D


# --------------------------------------------------------------------------------------------
# downscaling calibrated on historical data, applied to later data with censoring
# --------------------------------------------------------------------------------------------


def test_calibrate_downscale_then_censor_later_data(poisson_cm):
    hist = simulated.poisson_data(200, 51)
    h_fit = mechanisms.unweighted(poisson_cm, hist, sampler=TINY, seed=51).fit
    lw_h = mechanisms.lipschitz_weighted(poisson_cm, h_fit, sampler=TINY, seed=52)
    eps = lw_h.privacy.delta / 2  # one-signed: target Delta = M = eps, half of LW's, so downscaling is needed
    cal = mechanisms.calibrate_downscale(poisson_cm, h_fit, eps, tol=0.1, max_iter=5, sampler=TINY, seed=53)
    assert 0 < cal.c < 1
    assert cal.eps == eps
    assert cal.delta <= eps
    assert (cal.c, cal.delta) in cal.trace
    assert cal.trace[0][0] == 1.0 and cal.trace[0][1] > eps
    # the monthly-release workflow: the same c and eps, now with censoring, on later data
    later = simulated.poisson_data(220, 54)
    l_fit = mechanisms.unweighted(poisson_cm, later, sampler=TINY, seed=54).fit
    w = scale_weights(lipschitz_weights(l_fit.bounds.abs_loglik), cal.c)
    res = mechanisms.censored(poisson_cm, later, eps, weights=w, sampler=TINY, seed=55)
    assert res.privacy.delta <= eps and res.label == "Censor_w (aDP)"  # weights from the later data
    # strictly DP: the LW rule fixed on the historical fit, applied to each later record alone
    rule = mechanisms.public_lipschitz_weights(poisson_cm, h_fit, c=cal.c)
    pub = mechanisms.censored_public(poisson_cm, later, eps, rule, sampler=TINY, seed=56)
    assert pub.privacy.delta <= eps and pub.label == "Censor_w-pub (DP)" and pub.extra["c"] == cal.c
    np.testing.assert_allclose(pub.weights, rule(later))
    assert (pub.weights <= cal.c + 1e-12).all()


def test_public_lipschitz_weights_depend_on_each_record_alone(poisson_cm):
    hist = simulated.poisson_data(150, 61)
    h_fit = mechanisms.unweighted(poisson_cm, hist, sampler=TINY, seed=61).fit
    rule = mechanisms.public_lipschitz_weights(poisson_cm, h_fit)
    x = simulated.poisson_data(120, 62)
    w = rule(x)
    assert w.shape == x.shape and ((0 <= w) & (w <= 1)).all()
    # another data set sharing the first 60 records gives those records the same weights
    x2 = np.concatenate([x[:60], simulated.poisson_data(80, 63)])
    np.testing.assert_array_equal(rule(x2)[:60], w[:60])
    # the historical records get the plain LW weights of the historical fit (up to thinning of draws)
    full = mechanisms.public_lipschitz_weights(poisson_cm, h_fit, max_draws=None)
    np.testing.assert_allclose(full(hist), lipschitz_weights(h_fit.bounds.abs_loglik), atol=1e-12)
    with pytest.raises(ValueError, match="`rule`"):
        mechanisms.censored_public(poisson_cm, x, 2.0, lambda v: np.ones(v.size))
    with pytest.raises(ValueError, match="`c`"):
        mechanisms.public_lipschitz_weights(poisson_cm, h_fit, c="1")


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "3"])
def test_max_iter_must_be_a_positive_integer(poisson_cm, bad):
    x = simulated.poisson_data(40, 64)
    f = fit_from_draws(poisson_cm, x, {"beta": np.log(np.full((3, 1), 100.0)), "sigma_beta": np.ones(3)})
    with pytest.raises(ValueError, match="`max_iter`"):
        mechanisms.scalar_weighted(poisson_cm, f, 1.0, max_iter=bad)
    with pytest.raises(ValueError, match="`max_iter`"):
        mechanisms.calibrate_downscale(poisson_cm, f, 2.0, max_iter=bad)


@pytest.mark.slow
def test_match_cw_radius_lands_in_the_band_or_says_so(poisson_cm):
    x = simulated.poisson_data(200, 71)
    uw = mechanisms.unweighted(poisson_cm, x, sampler=TINY, seed=71)
    lw = mechanisms.lipschitz_weighted(poisson_cm, uw.fit, sampler=TINY, seed=72)
    target = lw.privacy.delta
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res, radius, n_fits = mechanisms.match_cw_radius(poisson_cm, x, target, radius=0.05, kind="relative",
                                                          tol=0.1, max_iter=6, sampler=TINY, seed=73)
    assert res.name == "CW" and 1 <= n_fits <= 6 and radius > 0
    inside = target * 0.9 <= res.privacy.delta <= target
    assert res.extra["radius_matched"] == inside
    # one fit only: the given radius, reported as not matched
    one, r1, n1 = mechanisms.match_cw_radius(poisson_cm, x, target, radius=0.05, kind="relative", match=False,
                                             sampler=TINY, seed=74)
    assert n1 == 1 and r1 == 0.05 and one.extra["radius_matched"] is False

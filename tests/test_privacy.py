"""Lipschitz bounds, censoring counts, the draw-quantile rule and range probabilities.

Expected values are worked out by hand in each test (or by a plain loop written here), never by
calling the code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats

from dpsynth import models, privacy
from dpsynth.privacy import RecordBounds, log_interval_prob, privacy_report, record_bounds
from dpsynth.weights import lipschitz_weights

inf = np.inf

# --------------------------------------------------------------------------------------------
# record_bounds on hand-checked matrices
# --------------------------------------------------------------------------------------------

# 2 draws x 3 records
F3 = np.array([[-1.0, -3.0, -0.5], [-2.0, -1.0, -4.0]])
W3 = np.array([1.0, 0.5, 0.25])
# weighted contributions: [[-1, -1.5, -0.125], [-2, -0.5, -1]]


def test_unweighted_bounds_by_hand():
    b = record_bounds(F3)
    np.testing.assert_array_equal(b.delta_i, [2.0, 3.0, 4.0])
    np.testing.assert_array_equal(b.abs_loglik, [2.0, 3.0, 4.0])
    assert b.delta == 4.0
    assert b.n_censored == 0
    assert b.n_draws == 2
    assert b.draw_quantile == 1.0


def test_weighted_bounds_by_hand():
    b = record_bounds(F3, W3)
    np.testing.assert_allclose(b.delta_i, [2.0, 1.5, 1.0])
    assert b.delta == 2.0
    # abs_loglik is unweighted: the input of Lipschitz weights
    np.testing.assert_array_equal(b.abs_loglik, [2.0, 3.0, 4.0])


def test_scalar_weight_equals_vector_of_that_weight():
    a = record_bounds(F3, 0.5)
    b = record_bounds(F3, [0.5, 0.5, 0.5])
    np.testing.assert_array_equal(a.delta_i, b.delta_i)
    np.testing.assert_allclose(a.delta_i, [1.0, 1.5, 2.0])


def test_positive_log_likelihood_counts_by_absolute_value():
    # densities above 1 give positive log-likelihoods; the bound uses |.|
    b = record_bounds(np.array([[2.5, -0.5], [0.1, -1.0]]))
    np.testing.assert_allclose(b.delta_i, [2.5, 1.0])


def test_censored_bounds_by_hand():
    # M = 1.2: weighted |g| per record over draws: rec0 {1, 2}, rec1 {1.5, 0.5}, rec2 {0.125, 1}
    b = record_bounds(F3, W3, bound=1.2)
    np.testing.assert_allclose(b.delta_i, [1.2, 1.2, 1.0])
    assert b.delta == 1.2
    # rec0 and rec1 exceed M at one draw or more; rec2 has |f| = 4 > M but |alpha f| = 1 <= M
    assert b.n_censored == 2
    # abs_loglik stays uncensored and unweighted
    np.testing.assert_array_equal(b.abs_loglik, [2.0, 3.0, 4.0])


def test_censoring_count_is_strictly_greater_than_bound():
    # M = 1.5: rec1 reaches exactly 1.5, which is not "exceeds"; only rec0 (2 > 1.5) counts
    b = record_bounds(F3, W3, bound=1.5)
    assert b.n_censored == 1
    np.testing.assert_allclose(b.delta_i, [1.5, 1.5, 1.0])


def test_infinite_bound_means_no_censoring():
    b = record_bounds(F3, W3, bound=np.inf)
    np.testing.assert_allclose(b.delta_i, [2.0, 1.5, 1.0])
    assert b.n_censored == 0


def test_weight_zero_record_with_minus_inf_contributes_zero():
    F = np.array([[-inf, -1.0], [-2.0, -3.0]])
    b = record_bounds(F, [0.0, 1.0])
    np.testing.assert_array_equal(b.delta_i, [0.0, 3.0])
    assert b.delta == 3.0
    # its unweighted |f| is infinite, so Lipschitz weights give it weight 0
    np.testing.assert_array_equal(b.abs_loglik, [inf, 3.0])
    np.testing.assert_array_equal(lipschitz_weights(b.abs_loglik), [0.0, 1.0])


def test_weight_zero_minus_inf_not_counted_as_censored():
    F = np.array([[-inf, -1.0], [-2.0, -3.0]])
    b = record_bounds(F, [0.0, 1.0], bound=2.0)
    np.testing.assert_array_equal(b.delta_i, [0.0, 2.0])
    assert b.n_censored == 1  # only record 1 (|-3| > 2)


def test_positive_weight_minus_inf_is_infinite_unless_censored():
    F = np.array([[-inf, -1.0]])
    assert record_bounds(F, [0.5, 1.0]).delta_i[0] == inf
    b = record_bounds(F, [0.5, 1.0], bound=2.0)
    assert b.delta_i[0] == 2.0 and b.n_censored == 1


# --- draw_quantile rule ------------------------------------------------------------------------

# 5 draws x 2 records; per-draw maxima of |f|: 1, 2, 3, 4, 5
FQ = np.array([[-1.0, -0.5], [-0.2, -2.0], [-3.0, -1.0], [-4.0, -0.1], [-0.3, -5.0]])


def test_draw_quantile_one_keeps_every_draw():
    b = record_bounds(FQ, draw_quantile=1.0)
    assert b.n_draws == 5
    np.testing.assert_array_equal(b.delta_i, [4.0, 5.0])


def test_draw_quantile_median_by_hand():
    # median of (1, 2, 3, 4, 5) is 3: draws 0, 1, 2 are kept (max <= 3), draws 3, 4 dropped
    b = record_bounds(FQ, draw_quantile=0.5)
    assert b.n_draws == 3
    assert b.draw_quantile == 0.5
    np.testing.assert_array_equal(b.delta_i, [3.0, 2.0])
    np.testing.assert_array_equal(b.abs_loglik, [3.0, 2.0])  # also over the retained draws


def test_draw_quantile_075_by_hand():
    # 0.75-quantile of (1..5) is 4: draw 4 (max 5) dropped
    b = record_bounds(FQ, draw_quantile=0.75)
    assert b.n_draws == 4
    np.testing.assert_array_equal(b.delta_i, [4.0, 2.0])


def test_draw_quantile_uses_weighted_maxima():
    # weights (1, 0.5): per-draw maxima of |alpha f| are 1, 1, 3, 4, 2.5; their median is 2.5,
    # so draws 0, 1, 4 are kept
    b = record_bounds(FQ, [1.0, 0.5], draw_quantile=0.5)
    assert b.n_draws == 3
    np.testing.assert_allclose(b.delta_i, [1.0, 2.5])
    np.testing.assert_array_equal(b.abs_loglik, [1.0, 5.0])


def test_censoring_count_only_over_retained_draws():
    F = np.array([[-1.0, -0.5], [-0.5, -1.5], [-10.0, -0.2], [-0.3, -1.0]])
    # M = 2: clamped per-draw maxima 1, 1.5, 2, 1; median 1.25 keeps draws 0 and 3
    b = record_bounds(F, bound=2.0, draw_quantile=0.5)
    assert b.n_draws == 2
    np.testing.assert_array_equal(b.delta_i, [1.0, 1.0])
    assert b.n_censored == 0  # record 0 exceeds M only at the dropped draw 2
    b1 = record_bounds(F, bound=2.0)
    np.testing.assert_array_equal(b1.delta_i, [2.0, 1.5])
    assert b1.n_censored == 1


# --- range term (range restriction B) ------------------------------------------------------------


def test_log_range_prob_offset_by_hand():
    F = np.array([[-1.0, -2.0], [-1.5, -0.5]])
    L = np.array([[-0.1, -3.0], [-0.2, -0.01]])
    # g = alpha f - log P: [[-0.5 + 0.1, -2 + 3], [-0.75 + 0.2, -0.5 + 0.01]] = [[-0.4, 1], [-0.55, -0.49]]
    b = record_bounds(F, [0.5, 1.0], log_range_prob=L)
    np.testing.assert_allclose(b.delta_i, [0.55, 1.0])
    np.testing.assert_array_equal(b.abs_loglik, [1.5, 2.0])  # the range term does not enter f_i


def test_log_range_prob_with_weight_zero():
    F = np.array([[-1.0, -2.0], [-1.5, -0.5]])
    L = np.array([[-0.1, -3.0], [-0.2, -0.01]])
    # record 0 has weight 0: g = 0 - log P = 0.1, 0.2
    b = record_bounds(F, [0.0, 1.0], log_range_prob=L)
    np.testing.assert_allclose(b.delta_i, [0.2, 1.0])


def test_zero_log_range_prob_changes_nothing():
    a = record_bounds(F3, W3)
    b = record_bounds(F3, W3, log_range_prob=np.zeros_like(F3))
    np.testing.assert_array_equal(a.delta_i, b.delta_i)


# --------------------------------------------------------------------------------------------
# privacy_report
# --------------------------------------------------------------------------------------------


def test_privacy_report_weighted():
    rep = privacy_report(record_bounds(F3, W3), guarantee="aDP")
    assert rep.delta == 2.0 and rep.eps == 4.0
    assert rep.guarantee == "aDP"
    assert privacy_report(record_bounds(F3, W3)).guarantee is None  # a bare fit states none
    assert rep.bound == inf and rep.n_censored == 0


def test_privacy_report_censored_with_extras():
    rep = privacy_report(record_bounds(F3, W3, bound=1.2), 1.2, guarantee="DP", eps_target=2.4)
    assert rep.delta == 1.2 and rep.eps == 2.4
    assert rep.guarantee == "DP"
    assert rep.bound == 1.2 and rep.n_censored == 2
    assert rep.extra == {"eps_target": 2.4}


def test_privacy_report_refuses_delta_above_bound():
    broken = RecordBounds(delta_i=np.array([0.5, 3.0]), abs_loglik=np.array([0.5, 3.0]), n_censored=0, n_draws=1)
    with pytest.raises(AssertionError, match="censoring is broken"):
        privacy_report(broken, 1.0)


def test_privacy_report_refuses_nan_delta_for_censored_fit():
    # a NaN bound must not be reported as a strict DP guarantee (NaN > M is False)
    broken = RecordBounds(delta_i=np.array([0.5, np.nan]), abs_loglik=np.array([0.5, 3.0]), n_censored=0, n_draws=1)
    with pytest.raises((AssertionError, ValueError)):
        privacy_report(broken, 1.0)


def test_record_bounds_rejects_nan_log_range_prob():
    # like a NaN log-likelihood, a NaN range probability would make Delta NaN
    from dpsynth.validation import DataError

    with pytest.raises(DataError, match=r"`log_range_prob` has NaN"):
        record_bounds(np.array([[-1.0, -2.0]]), bound=1.0, log_range_prob=np.array([[-0.1, np.nan]]))


def test_guarantee_type():
    assert privacy.guarantee_type(True, public_weights=True) == "DP"
    assert privacy.guarantee_type(True, public_weights=False) == "aDP"
    assert privacy.guarantee_type(False, public_weights=True) == "aDP"


# --------------------------------------------------------------------------------------------
# property tests: against a plain loop, and Delta <= eps/2 under censoring
# --------------------------------------------------------------------------------------------


def loop_bounds(F, w, M):
    """Reference by explicit loops: delta_i, abs f_i and the censoring count (q = 1)."""
    S, n = F.shape
    delta, absf, count = [], [], 0
    for i in range(n):
        d, a, hit = 0.0, 0.0, False
        for s in range(S):
            g = 0.0 if w[i] == 0 else w[i] * F[s, i]
            if M is not None and abs(g) > M:
                hit = True
            d = max(d, abs(g) if M is None else min(abs(g), M))
            a = max(a, abs(F[s, i]))
        delta.append(d)
        absf.append(a)
        count += hit
    return np.array(delta), np.array(absf), count


loglik_values = st.one_of(
    st.floats(-1e6, 50.0, allow_nan=False),
    st.just(-np.inf),
)


@st.composite
def loglik_and_weights(draw):
    S = draw(st.integers(1, 8))
    n = draw(st.integers(1, 8))
    F = draw(hnp.arrays(float, (S, n), elements=loglik_values))
    w = draw(hnp.arrays(float, n, elements=st.one_of(st.just(0.0), st.just(1.0), st.floats(0.0, 1.0))))
    return F, w


@settings(max_examples=300, deadline=None)
@given(data=loglik_and_weights(), eps=st.floats(1e-4, 100.0))
def test_censored_delta_never_exceeds_half_eps(data, eps):
    F, w = data
    M = eps / 2
    b = record_bounds(F, w, M)
    assert b.delta <= M
    assert (b.delta_i <= M).all()
    rep = privacy_report(b, M, guarantee="DP")  # does not raise
    assert rep.guarantee == "DP" and rep.eps == pytest.approx(eps) and rep.eps_local <= rep.eps


@settings(max_examples=200, deadline=None)
@given(data=loglik_and_weights(), eps=st.one_of(st.none(), st.floats(1e-3, 50.0)))
def test_record_bounds_matches_loop(data, eps):
    F, w = data
    M = None if eps is None else eps / 2
    d, a, c = loop_bounds(F, w, M)
    b = record_bounds(F, w, M)
    np.testing.assert_allclose(b.delta_i, d, rtol=0, atol=0)
    np.testing.assert_array_equal(b.abs_loglik, a)
    assert b.n_censored == c
    assert b.n_draws == F.shape[0]


@settings(max_examples=100, deadline=None)
@given(data=loglik_and_weights(), eps=st.floats(1e-3, 50.0), q=st.floats(0.05, 1.0))
def test_censoring_with_quantile_rule_still_bounded(data, eps, q):
    F, w = data
    b = record_bounds(F, w, eps / 2, draw_quantile=q)
    assert b.delta <= eps / 2
    assert 1 <= b.n_draws <= F.shape[0]
    assert 0 <= b.n_censored <= F.shape[1]


# --------------------------------------------------------------------------------------------
# log_interval_prob
# --------------------------------------------------------------------------------------------


def _norm_parts(a, b):
    n = stats.norm
    return n.logcdf(a), n.logcdf(b), n.logsf(a), n.logsf(b)


@pytest.mark.parametrize("a, b", [(-1.0, 1.0), (-3.0, -2.0), (0.5, 0.6), (2.0, 4.0), (-0.2, 9.0), (-9.0, 0.1)])
def test_log_interval_prob_matches_direct_normal(a, b):
    # direct computation, safe in these ranges: difference of CDFs below the median, of
    # survival functions above it
    direct = np.log(stats.norm.sf(a) - stats.norm.sf(b)) if a > 0 else np.log(stats.norm.cdf(b) - stats.norm.cdf(a))
    got = log_interval_prob(*_norm_parts(np.array([a]), np.array([b])))
    np.testing.assert_allclose(got, [direct], rtol=1e-10)


@settings(max_examples=200, deadline=None)
@given(a=st.floats(-6.0, 6.0), width=st.floats(0.01, 6.0))
def test_log_interval_prob_property_normal(a, width):
    b = a + width
    direct = math.log(stats.norm.sf(a) - stats.norm.sf(b)) if a > 0 else math.log(stats.norm.cdf(b) - stats.norm.cdf(a))
    got = log_interval_prob(*_norm_parts(np.array([a]), np.array([b])))[0]
    assert np.isfinite(got) and got <= 0
    assert got == pytest.approx(direct, rel=1e-8, abs=1e-12)


def test_log_interval_prob_exactly_empty_range():
    got = log_interval_prob(*_norm_parts(np.array([0.3, -5.0]), np.array([0.3, -5.0])))
    assert np.isneginf(got).all()


def test_log_interval_prob_empty_range_below_the_support():
    # both ends where the CDF is exactly 0 (e.g. a lognormal range [0, 0]): P = 0, log P = -inf
    got = log_interval_prob(np.array([-inf]), np.array([-inf]), np.array([0.0]), np.array([0.0]))
    assert np.isneginf(got).all()


def test_log_interval_prob_empty_range_above_the_support():
    # Beta record x = 0.97 with range [1.05 x, 1.8 x]: the whole range lies above 1, P = 0
    fam = models.BetaFamily()
    draws = {"a": np.array([0.5]), "b": np.array([3.0])}
    x = np.array([0.97])
    lo, hi = 1.05 * x, 1.8 * x
    got = log_interval_prob(fam.logcdf(lo, draws), fam.logcdf(hi, draws), fam.logsf(lo, draws), fam.logsf(hi, draws))
    assert np.isneginf(got).all()


def test_log_interval_prob_whole_line_from_zero_lower_end():
    # lognormal range [0, q]: F(0) = 0, so log P = log F(q)
    got = log_interval_prob(np.array([-inf]), np.array([np.log(0.3)]), np.array([0.0]), np.array([np.log(0.7)]))
    np.testing.assert_allclose(got, [np.log(0.3)], rtol=1e-14)


def log_normal_tail(z: float) -> float:
    """log Q(z) = log P(Z > z) for large z by the asymptotic series (relative error < 1e-13 at z > 35)."""
    s = 1 - 1 / z**2 + 3 / z**4 - 15 / z**6 + 105 / z**8 - 945 / z**10
    return -0.5 * z * z - math.log(z) - 0.5 * math.log(2 * math.pi) + math.log(s)


def test_log_interval_prob_deep_upper_tail_lognormal():
    """Range [0.4 x, 1.8 x] of a record 40 sd above the lognormal's log-mean."""
    fam = models.LognormalFamily()
    draws = {"mu": np.array([0.0]), "sigma": np.array([1.0])}
    x = np.array([math.exp(40.0)])
    lo, hi = 0.4 * x, 1.8 * x
    # the naive computation underflows: both CDFs are 1 in floating point
    with np.errstate(divide="ignore"):
        naive = np.log(stats.lognorm.cdf(hi, s=1.0) - stats.lognorm.cdf(lo, s=1.0))
    assert np.isneginf(naive).all()
    got = log_interval_prob(fam.logcdf(lo, draws), fam.logcdf(hi, draws), fam.logsf(lo, draws), fam.logsf(hi, draws))
    assert got.shape == (1, 1) and np.isfinite(got).all()
    za, zb = 40.0 + math.log(0.4), 40.0 + math.log(1.8)
    la, lb = log_normal_tail(za), log_normal_tail(zb)
    expected = la + math.log1p(-math.exp(lb - la))
    assert expected < -700  # really below what exp() can represent
    assert got[0, 0] == pytest.approx(expected, rel=1e-11)


def test_log_interval_prob_deep_lower_tail_lognormal():
    """Range [0.4 x, 1.8 x] of a record 40 sd below the log-mean (lower tail)."""
    fam = models.LognormalFamily()
    draws = {"mu": np.array([0.0]), "sigma": np.array([1.0])}
    x = np.array([math.exp(-40.0)])
    lo, hi = 0.4 * x, 1.8 * x
    with np.errstate(divide="ignore"):
        naive = np.log(stats.lognorm.cdf(hi, s=1.0) - stats.lognorm.cdf(lo, s=1.0))
    assert np.isneginf(naive).all()
    got = log_interval_prob(fam.logcdf(lo, draws), fam.logcdf(hi, draws), fam.logsf(lo, draws), fam.logsf(hi, draws))
    # Phi(z) = Q(-z): the interval probability is Q(-z_b) - Q(-z_a)
    za, zb = -40.0 + math.log(0.4), -40.0 + math.log(1.8)
    la, lb = log_normal_tail(-zb), log_normal_tail(-za)
    expected = la + math.log1p(-math.exp(lb - la))
    assert got[0, 0] == pytest.approx(expected, rel=1e-11)


def test_log_interval_prob_beta_range_past_the_support():
    # Beta data near 1 with the range [0.4 x, 1.8 x] reaching past 1: P = 1 - F(0.4 x)
    fam = models.BetaFamily()
    draws = {"a": np.array([0.5, 2.0]), "b": np.array([3.0, 2.0])}
    x = np.array([0.95])
    lo, hi = 0.4 * x, 1.8 * x
    got = log_interval_prob(fam.logcdf(lo, draws), fam.logcdf(hi, draws), fam.logsf(lo, draws), fam.logsf(hi, draws))
    expected = np.log(stats.beta.sf(0.38, [0.5, 2.0], [3.0, 2.0]))[:, None]
    np.testing.assert_allclose(got, expected, rtol=1e-12)


# ------------------------------------------------------------------------------------------
# neighbour relations
# ------------------------------------------------------------------------------------------


def test_eps_from_delta_under_both_relations():
    assert privacy.eps_from_delta(1.5, "remove") == 3.0
    assert privacy.eps_from_delta(1.5, "replace") == 6.0  # terms of both signs
    # discrete models: terms in [-1.5, 0], a window of width 1.5
    assert privacy.eps_from_delta(1.5, "replace", one_signed=True) == 3.0
    assert privacy.eps_from_delta(1.5, "remove", one_signed=True) == 1.5


@pytest.mark.parametrize("bad", ["removed", "add", None, 1])
def test_unknown_neighbour_relation_is_an_error(bad):
    with pytest.raises(ValueError, match="`neighbours`"):
        privacy.eps_from_delta(1.0, bad)


def test_report_states_eps_under_both_relations():
    rep = privacy_report(record_bounds(F3, W3), guarantee="aDP")
    assert rep.eps == 2 * rep.delta and rep.eps_replace == 4 * rep.delta
    assert rep.epsilon("remove") == rep.eps and rep.epsilon("replace") == rep.eps_replace
    text = rep.statement()
    assert "removed" in text and "replaced" in text
    assert "x 2" in rep.statement(draws=2) or "2 draws" in rep.statement(draws=2)
    one = privacy_report(record_bounds(F3, W3), guarantee="aDP", one_signed=True)
    assert one.eps == one.delta and one.eps_replace == 2 * one.eps


def test_censored_report_is_computed_from_the_bound():
    # the guarantee covers every data set: eps = 2M, even where this data set's Delta is below M
    rep = privacy_report(record_bounds(F3, W3, bound=5.0), 5.0, guarantee="DP")
    assert rep.delta < 5.0
    assert rep.eps == 10.0 and rep.eps_replace == 20.0 and rep.eps_local == 2 * rep.delta


def test_dp_needs_a_censored_fit_and_a_known_guarantee():
    with pytest.raises(AssertionError, match="censored"):
        privacy_report(record_bounds(F3, W3), guarantee="DP")
    with pytest.raises(ValueError, match="`guarantee`"):
        privacy_report(record_bounds(F3, W3), guarantee="DP-ish")


def test_record_bounds_in_one_compiled_pass_match_the_whole_matrix():
    """The one-pass compiled reduction gives the numbers of the whole-matrix formula."""
    import dpsynth.privacy as privacy

    rng = np.random.default_rng(4)
    F = rng.normal(-1.0, 2.0, (23, 11))
    F[3, 2] = -np.inf
    w = rng.random(11)
    w[[0, 2]] = 0.0
    L = np.log(rng.random((23, 11)))
    r = rng.normal(0.0, 1.0, 11)
    for kw in ({}, {"log_range_prob": L}, {"shift": r}, {"log_range_prob": L, "shift": r}):
        g = np.where(w == 0, 0.0, w * F) - kw.get("log_range_prob", 0.0)
        if "shift" in kw:
            g = np.where(w == 0, 0.0, g - r)
        for M in (None, 1.5):
            b = privacy.record_bounds(F, w, M, **kw)
            expected = np.abs(g) if M is None else np.minimum(np.abs(g), M)
            np.testing.assert_array_equal(b.delta_i, expected.max(axis=0))
            np.testing.assert_array_equal(b.abs_loglik, np.abs(F).max(axis=0))
            assert b.n_censored == (0 if M is None else int((np.abs(g) > M).any(axis=0).sum()))
            assert b.n_draws == 23
            # and of the same formula written on whole matrices, with NumPy (draw_quantile < 1 takes it)
            ref = privacy._abs_contributions(F.copy(), w, kw.get("log_range_prob"), kw.get("shift"))
            d, a, e = privacy._reduce_every_draw(F, w, kw.get("log_range_prob"), kw.get("shift"), M)
            np.testing.assert_array_equal(d, (ref if M is None else np.minimum(ref, M)).max(axis=0))
            np.testing.assert_array_equal(e, np.zeros(11, int) if M is None else (ref > M).sum(axis=0))


# ----------------------------------------------------------------------------------- one bound, one rule


def test_the_censoring_bound_and_its_window_are_inverse():
    for eps in (0.1, 1.0, 7.5):
        for one in (False, True):
            assert privacy.window_width(privacy.censoring_bound(eps, one), one) == pytest.approx(eps)
    assert privacy.censoring_bound(2.0) == 1.0 and privacy.censoring_bound(2.0, True) == 2.0
    assert privacy.eps_from_delta(1.0, "replace") == 4.0 and privacy.eps_from_delta(1.0, one_signed=True) == 1.0


def test_one_signedness_is_the_familys_unless_something_changes_the_sign():
    from dpsynth.models import LognormalFamily, OffsetFamily, PoissonRegression

    pois = PoissonRegression()
    assert privacy.is_one_signed(pois) and not privacy.is_one_signed(LognormalFamily())
    assert not privacy.is_one_signed(pois, reference=np.zeros(3))  # a reference at a public theta_0
    assert privacy.is_one_signed(pois, reference=np.zeros(3), reference_is_max=True)  # a saturated one keeps it
    assert not privacy.is_one_signed(pois, offset=1.0) and not privacy.is_one_signed(None)
    assert not OffsetFamily(base=pois, offset=1.0).one_signed  # the wrapper asks the same rule


def _definitions_and_rules(tree) -> tuple[set, int]:
    """Function names defined in ``tree``, and how many expressions decide one-signedness or pick a bound by it."""
    import ast

    def mentions(node) -> bool:
        return any(isinstance(n, ast.Attribute) and n.attr == "one_signed" or isinstance(n, ast.Name)
                   and n.id == "one_signed" for n in ast.walk(node))

    names = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    rules = sum(1 for n in ast.walk(tree)
                if isinstance(n, ast.BoolOp) and isinstance(n.op, ast.And) and any(mentions(v) for v in n.values)
                or isinstance(n, ast.IfExp) and mentions(n.test))
    return names, rules


def test_the_bound_and_the_rule_are_defined_once_in_the_package():
    """One function computes the censoring bound, one rule decides one-signedness: no module writes its own copy."""
    import ast
    from pathlib import Path

    import dpsynth

    root = Path(dpsynth.__file__).parent
    home = root / "privacy.py"
    for path in sorted(root.rglob("*.py")):
        names, rules = _definitions_and_rules(ast.parse(path.read_text()))
        if path == home:
            assert {"censoring_bound", "is_one_signed", "window_width"} <= names and rules == 1
            continue
        where = path.relative_to(root)
        assert not names & {"censoring_bound", "is_one_signed", "window_width", "eps_from_delta"}, where
        assert rules == 0, f"{where} decides one-signedness or the bound by itself; call dpsynth.privacy"

"""ECDF utility metrics on the pooled sample, summary statistics and intervals, by hand."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpsynth.metrics import STAT_NAMES, bootstrap_interval, ecdf_distances, interval_over_sets, summary_stats
from dpsynth.validation import DataError


def test_ecdf_overlapping_by_hand():
    # pooled (1, 2, 2, 3): F_x = (1/2, 1, 1, 1), F_y = (0, 1/2, 1/2, 1); d = (1/2, 1/2, 1/2, 0)
    d = ecdf_distances([1.0, 2.0], [2.0, 3.0])
    assert d.max_ecdf == 0.5
    assert d.avg_ecdf == pytest.approx(3 * 0.25 / 4)


def test_ecdf_disjoint_by_hand():
    # pooled (0, 1, 5, 6): F_x = (1/2, 1, 1, 1), F_y = (0, 0, 1/2, 1); d = (1/2, 1, 1/2, 0)
    d = ecdf_distances([0.0, 1.0], [5.0, 6.0])
    assert d.max_ecdf == 1.0
    assert d.avg_ecdf == pytest.approx((0.25 + 1 + 0.25) / 4)


def test_ecdf_unequal_sizes_by_hand():
    # x = (1, 2, 3), y = (2); pooled (1, 2, 3, 2): F_x = (1/3, 2/3, 1, 2/3), F_y = (0, 1, 1, 1)
    # d = (1/3, -1/3, 0, -1/3)
    d = ecdf_distances([3.0, 1.0, 2.0], [2.0])
    assert d.max_ecdf == pytest.approx(1 / 3)
    assert d.avg_ecdf == pytest.approx(3 * (1 / 9) / 4)


def test_ecdf_identical_samples():
    x = np.random.default_rng(1).normal(size=50)
    d = ecdf_distances(x, x[::-1])
    assert d.max_ecdf == 0.0 and d.avg_ecdf == 0.0


def loop_ecdf(x, y):
    pooled = list(x) + list(y)
    diffs = [sum(v <= t for v in x) / len(x) - sum(v <= t for v in y) / len(y) for t in pooled]
    return max(abs(d) for d in diffs), sum(d * d for d in diffs) / len(diffs)


@settings(max_examples=200, deadline=None)
@given(
    x=st.lists(st.integers(-10, 10).map(float), min_size=1, max_size=25),
    y=st.lists(st.integers(-10, 10).map(float), min_size=1, max_size=25),
)
def test_ecdf_matches_loop_on_pooled_sample(x, y):
    m, a = loop_ecdf(x, y)
    d = ecdf_distances(x, y)
    assert d.max_ecdf == pytest.approx(m, abs=1e-12)
    assert d.avg_ecdf == pytest.approx(a, abs=1e-12)
    assert 0 <= d.avg_ecdf <= d.max_ecdf**2 + 1e-12 <= 1 + 1e-12


def test_summary_stats_by_hand():
    s = summary_stats(np.arange(101.0))
    assert set(s) == set(STAT_NAMES)
    assert s == {"mean": 50.0, "median": 50.0, "q15": 15.0, "q90": 90.0}


def test_summary_stats_small():
    # (1, 2, 3, 10): mean 4, median 2.5; q15 at position 0.45 -> 1.45; q90 at 2.7 -> 3 + 0.7*7 = 7.9
    s = summary_stats([10.0, 1.0, 3.0, 2.0])
    assert s["mean"] == 4.0 and s["median"] == 2.5
    assert s["q15"] == pytest.approx(1.45) and s["q90"] == pytest.approx(7.9)


def test_interval_over_sets_by_hand():
    assert interval_over_sets(np.arange(101.0)) == pytest.approx((2.5, 97.5))
    assert interval_over_sets(np.arange(101.0), level=0.9) == pytest.approx((5.0, 95.0))


def test_bootstrap_interval_constant_data():
    assert bootstrap_interval(np.full(20, 3.0), seed=1) == (3.0, 3.0)


def test_bootstrap_interval_reproducible_and_sensible():
    x = np.random.default_rng(2).normal(10.0, 2.0, size=400)
    a = bootstrap_interval(x, "mean", seed=3)
    assert a == bootstrap_interval(x, "mean", seed=3)
    assert a != bootstrap_interval(x, "mean", seed=4)
    lo, hi = a
    # the normal-theory interval mean +- 1.96 sd / sqrt(n) has width about 0.39
    assert lo < x.mean() < hi
    assert hi - lo == pytest.approx(2 * 1.96 * x.std() / np.sqrt(x.size), rel=0.15)


@pytest.mark.parametrize("stat", STAT_NAMES)
def test_bootstrap_interval_every_stat(stat):
    x = np.random.default_rng(5).uniform(0, 100, size=300)
    lo, hi = bootstrap_interval(x, stat, n_boot=500, seed=5)
    point = summary_stats(x)[stat]
    assert lo <= point <= hi
    assert hi - lo < 25


# --------------------------------------------------------------------------------------------
# bad arguments of the intervals
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n_boot", [0, -5, 2.5, True, "100"])
def test_bootstrap_interval_bad_n_boot(n_boot):
    with pytest.raises(DataError, match=r"`n_boot` must be a positive integer"):
        bootstrap_interval([1.0, 2.0, 3.0], n_boot=n_boot, seed=1)


@pytest.mark.parametrize("level", [0, 1, 95, -0.5, np.nan, "0.95", True, None])
def test_bootstrap_interval_bad_level_named(level):
    with pytest.raises(DataError, match=r"`level` must be"):
        bootstrap_interval([1.0, 2.0, 3.0], level=level, seed=1)


@pytest.mark.parametrize("stat", ["mode", 3, None, ["mean"]])
def test_bootstrap_interval_bad_stat_named(stat):
    with pytest.raises(DataError, match=r"`stat` must be one of"):
        bootstrap_interval([1.0, 2.0, 3.0], stat, seed=1)


def test_interval_over_sets_string_level():
    with pytest.raises(DataError, match=r"`level` must be a number in \(0, 1\)"):
        interval_over_sets([1.0, 2.0, 3.0], level="0.9")


# --------------------------------------------------------------------------------------------
# log_regression: least squares of log y on a design
# --------------------------------------------------------------------------------------------


def _design(n: int = 60, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.column_stack([np.ones(n), rng.normal(size=n), rng.integers(0, 2, n).astype(float),
                            rng.uniform(-1, 1, n)])


def test_log_regression_recovers_exact_coefficients_on_noiseless_data():
    from dpsynth.metrics import log_regression

    X = _design()
    beta = np.array([6.2, 0.08, -0.45, 1.3])
    coef = log_regression(np.exp(X @ beta), X)
    assert coef.shape == (4,)
    np.testing.assert_allclose(coef, beta, rtol=0, atol=1e-10)
    # lists are accepted; by hand on two records: log y = 1 + 2 t at t = 0, 1
    np.testing.assert_allclose(log_regression([np.e, np.e**3], [[1.0, 0.0], [1.0, 1.0]]), [1.0, 2.0], atol=1e-12)


def test_log_regression_is_least_squares_and_a_unit_moves_only_the_intercept():
    from dpsynth.metrics import log_regression

    X = _design(200, seed=1)
    y = np.exp(X @ np.array([1.0, 0.3, -0.2, 0.5]) + np.random.default_rng(2).normal(0, 0.5, 200))
    coef = log_regression(y, X)
    np.testing.assert_allclose(coef, np.linalg.solve(X.T @ X, X.T @ np.log(y)), rtol=1e-9)
    # the residuals are orthogonal to every column
    np.testing.assert_allclose(X.T @ (np.log(y) - X @ coef), 0.0, atol=1e-9)
    # wages in thousands: the intercept moves by -log 1000, the slopes stay
    thou = log_regression(y / 1000.0, X)
    np.testing.assert_allclose(thou[1:], coef[1:], atol=1e-10)
    assert thou[0] == pytest.approx(coef[0] - np.log(1000.0), abs=1e-10)


@pytest.mark.parametrize("bad", [0.0, -3.0])
def test_log_regression_refuses_non_positive_outcomes(bad):
    from dpsynth.metrics import log_regression

    X = _design(10)
    y = np.ones(10)
    y[[2, 7]] = bad
    with pytest.raises(DataError, match=r"`y` must be positive.*2 value\(s\)"):
        log_regression(y, X)


def test_log_regression_refuses_a_shape_mismatch_and_bad_arrays():
    from dpsynth.metrics import log_regression

    X = _design(10)
    with pytest.raises(DataError, match="`X` has 10 rows but `y` has 9 values"):
        log_regression(np.ones(9), X)
    with pytest.raises(DataError, match="`X` must be 2-dimensional"):
        log_regression(np.ones(10), np.ones(10))
    with pytest.raises(DataError, match="`y`.*non-finite"):
        log_regression(np.r_[np.ones(9), np.nan], X)


@pytest.mark.parametrize("case", ["duplicate column", "constant column", "more columns than rows"])
def test_log_regression_refuses_a_rank_deficient_design(case):
    from dpsynth.metrics import log_regression

    X = _design(10)
    if case == "duplicate column":
        X = np.column_stack([X, X[:, 1]])
    elif case == "constant column":
        X = np.column_stack([X, 3.0 * np.ones(10)])  # collinear with the intercept
    else:
        X = X[:3]
    with pytest.raises(DataError, match=r"`X` has rank \d+ < \d+ columns"):
        log_regression(np.exp(np.arange(X.shape[0], dtype=float) / 10), X)


# --------------------------------------------------------------------------------------------
# ols: coefficients with t intervals from the OLS standard errors
# --------------------------------------------------------------------------------------------


def test_ols_intervals_by_hand():
    from dpsynth.metrics import ols

    # y = (1, 2, 4, 3) on t = (0, 1, 2, 3): t-bar 1.5, Stt 5, Sty 4 -> slope 0.8, intercept 2.5 - 1.2 = 1.3;
    # residuals (-0.3, -0.1, 1.1, -0.7), RSS 1.8, df 2, s^2 0.9; se(slope) = sqrt(0.9 / 5),
    # se(intercept) = sqrt(0.9 (1/4 + 1.5^2 / 5)) = sqrt(0.63); t_{2, 0.975} = 4.302652729911275
    X = [[1.0, 0.0], [1.0, 1.0], [1.0, 2.0], [1.0, 3.0]]
    f = ols([1.0, 2.0, 4.0, 3.0], X)
    t = 4.302652729911275
    np.testing.assert_allclose(f.coef, [1.3, 0.8], atol=1e-12)
    np.testing.assert_allclose(f.se, [np.sqrt(0.63), np.sqrt(0.18)], rtol=1e-12)
    np.testing.assert_allclose(f.lower, [1.3 - t * np.sqrt(0.63), 0.8 - t * np.sqrt(0.18)], rtol=1e-10)
    np.testing.assert_allclose(f.upper, [1.3 + t * np.sqrt(0.63), 0.8 + t * np.sqrt(0.18)], rtol=1e-10)
    assert f.df == 2 and f.sigma == pytest.approx(np.sqrt(0.9)) and f.level == 0.95
    # a 90% interval uses t_{2, 0.95} = 2.919985580355516
    f90 = ols([1.0, 2.0, 4.0, 3.0], X, level=0.9)
    assert f90.upper[1] == pytest.approx(0.8 + 2.919985580355516 * np.sqrt(0.18), rel=1e-10)


def test_ols_matches_the_normal_equations_and_covers_at_its_level():
    from dpsynth.metrics import ols

    X = _design(80, seed=3)
    beta = np.array([1.0, 0.5, -0.3, 0.2])
    rng = np.random.default_rng(4)
    y = X @ beta + rng.normal(0, 0.7, 80)
    f = ols(y, X)
    np.testing.assert_allclose(f.coef, np.linalg.solve(X.T @ X, X.T @ y), rtol=1e-10)
    s2 = np.sum((y - X @ f.coef) ** 2) / (80 - 4)
    np.testing.assert_allclose(f.se, np.sqrt(s2 * np.diag(np.linalg.inv(X.T @ X))), rtol=1e-10)
    # coverage over repeated samples: 95% intervals hold the true slope about 95% of the time
    hits = 0
    for _ in range(400):
        yr = X @ beta + rng.normal(0, 0.7, 80)
        fr = ols(yr, X)
        hits += fr.lower[1] <= beta[1] <= fr.upper[1]
    assert 0.91 <= hits / 400 <= 0.98


def test_ols_refuses_bad_designs():
    from dpsynth.metrics import ols

    X = _design(10)
    with pytest.raises(DataError, match=r"`X` has rank 4 < 5 columns"):
        ols(np.arange(10.0), np.column_stack([X, X[:, 1]]))
    with pytest.raises(DataError, match="more records than coefficients"):
        ols(np.arange(4.0), X[:4])
    with pytest.raises(DataError, match="`X` has 10 rows but `y` has 9 values"):
        ols(np.ones(9), X)
    with pytest.raises(DataError, match="`level` must be"):
        ols(np.arange(10.0), X, level=95)


def test_interval_overlap_by_hand():
    from dpsynth.metrics import interval_overlap

    # identical -> 1; disjoint -> 0; [0, 2] and [1, 5]: o = 1, (1/2 + 1/4) / 2 = 0.375;
    # nested [0, 4] in [0, 8]: (1/2 + 1) / 2 = 0.75
    got = interval_overlap([0, 0, 0, 0], [1, 1, 2, 8], [0, 3, 1, 0], [1, 4, 5, 4])
    np.testing.assert_allclose(got, [1.0, 0.0, 0.375, 0.75])
    with pytest.raises(DataError, match="upper"):
        interval_overlap([1.0], [0.0], [0.0], [1.0])


# --------------------------------------------------------------------------------------------
# pmse: propensity-score mean-squared error and its null expectation
# --------------------------------------------------------------------------------------------


def _mean_ratio(draw, reps=300, seed=0):
    """Mean pMSE ratio over `reps` pairs of tables (its standard error is about 0.05 here)."""
    from dpsynth.metrics import pmse

    rng = np.random.default_rng(seed)
    return float(np.mean([pmse(*draw(rng)).ratio for _ in range(reps)]))


def test_pmse_is_at_its_null_expectation_for_a_correct_synthesizer():
    # Snoke et al. (2018): the synthetic records drawn from the original's own distribution (here
    # resampled from its records), so only the synthesis varies -> E[pMSE] = (k - 1)(1 - c)^2 c / N
    def draw(rng):
        a = rng.normal(size=(400, 3))
        return a, a[rng.integers(400, size=300)]

    assert _mean_ratio(draw) == pytest.approx(1.0, abs=0.2)


def test_pmse_of_two_samples_of_one_distribution_is_near_its_null():
    # both tables random: (k - 1) c (1 - c) / N, a ratio of 1 / (1 - c) = 1.75 with c = 300 / 700
    def draw(rng):
        return rng.normal(size=(400, 3)), rng.normal(size=(300, 3))

    assert _mean_ratio(draw, seed=1) == pytest.approx(1 / (1 - 300 / 700), rel=0.2)


def test_pmse_is_far_above_its_null_for_shifted_samples():
    from dpsynth.metrics import pmse

    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(400, 3)), rng.normal(size=(300, 3))
    shifted = pmse(a, b + [0.5, 0.0, 0.0])
    assert shifted.ratio > 10
    assert shifted.k == 4 and shifted.c == pytest.approx(300 / 700)
    assert shifted.null == pytest.approx(3 * (1 - 300 / 700) ** 2 * (300 / 700) / 700)
    assert shifted.pmse == pytest.approx(shifted.ratio * shifted.null)
    # a larger shift is told apart better; disjoint tables reach the maximum c (1 - c)
    assert pmse(a, b + [1.0, 0.0, 0.0]).pmse > shifted.pmse
    apart = pmse(a, b + [20.0, 0.0, 0.0])
    c = 300 / 700
    assert apart.pmse == pytest.approx(c * (1 - c), rel=1e-3) and not apart.converged


def test_pmse_fit_is_the_logistic_maximum_likelihood():
    from scipy.optimize import minimize
    from scipy.special import expit, log_expit

    from dpsynth.metrics import pmse

    rng = np.random.default_rng(3)
    a = rng.normal(size=(150, 2))
    b = rng.normal(size=(100, 2)) + [0.3, -0.2]
    X = np.vstack([a, b])
    Z = np.column_stack([np.ones(250), (X - X.mean(0)) / X.std(0)])
    y = np.r_[np.zeros(150), np.ones(100)]
    res = minimize(lambda w: -np.sum(y * log_expit(Z @ w) + (1 - y) * log_expit(-Z @ w)), np.zeros(3),
                   jac=lambda w: -Z.T @ (y - expit(Z @ w)), method="BFGS", options={"gtol": 1e-10})
    want = np.mean((expit(Z @ res.x) - 0.4) ** 2)
    got = pmse(a, b)
    assert got.converged and got.pmse == pytest.approx(want, rel=1e-6)


def test_pmse_drops_constant_and_collinear_columns_and_takes_one_column():
    from dpsynth.metrics import pmse

    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(200, 2)), rng.normal(size=(200, 2))
    base = pmse(a, b)
    # a constant column and a copy of a column add no parameter and change nothing
    pad = lambda m: np.column_stack([m, np.full(len(m), 7.0), 2 * m[:, 0]])  # noqa: E731
    padded = pmse(pad(a), pad(b))
    assert padded.k == base.k == 3 and padded.pmse == pytest.approx(base.pmse, rel=1e-8)
    one = pmse(a[:, 0], b[:, 0])
    assert one.k == 2 and one.null == pytest.approx((0.5 ** 3) / 400)


def test_pmse_refuses_mismatched_or_bad_tables():
    from dpsynth.metrics import pmse

    with pytest.raises(DataError, match="`original` has 2 column.*`synthetic` has 3"):
        pmse(np.ones((5, 2)), np.ones((5, 3)))
    with pytest.raises(DataError, match="`synthetic`.*non-finite"):
        pmse(np.ones((5, 2)), np.r_[np.ones((4, 2)), [[np.nan, 1.0]]])


def test_pmse_with_interactions_is_regularised_and_finite():
    """Issue 28: a design with interactions (more features than a plain logistic fit can pin, separated classes)
    gives a finite pMSE, not a LinAlgError."""
    rng = np.random.default_rng(4)
    a = rng.normal(size=(60, 12))
    b = rng.normal(size=(60, 12))
    b[:, 0] += 5.0  # separated: no maximum-likelihood fit without the penalty
    from dpsynth.metrics import pmse

    out = pmse(a, b, interactions=True)
    assert np.isfinite(out.pmse) and out.k > 12 and out.ratio > 1
    same = pmse(a, rng.normal(size=(60, 12)), interactions=True)
    assert np.isfinite(same.pmse) and same.pmse < out.pmse

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

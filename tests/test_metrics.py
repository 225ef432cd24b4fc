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

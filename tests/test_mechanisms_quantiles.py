"""OpenDP-Q: quantiles from OpenDP's private-quantile mechanism, calibrated by OpenDP's own privacy
map, turned into synthetic values by inverse CDF.

OpenDP's noise is drawn from secure randomness and cannot be seeded, so no test depends on a
particular release: utility tests use tolerances with wide margins (set from hundreds of releases),
and the DP audit compares frequencies over thousands of releases with Monte Carlo slack.
"""

from __future__ import annotations

import math

import numpy as np
import opendp.prelude as dp
import pytest

from dpsynth import registry
from dpsynth.mechanisms.quantiles import DEFAULT_PROBS, QuantileRelease, candidate_grid, dp_quantiles
from dpsynth.validation import DataError

dp.enable_features("contrib")


@pytest.fixture(scope="module")
def lognormal():
    """20,000 lognormal records, all inside the public bounds [1, 1e5]."""
    x = np.exp(np.random.default_rng(12).normal(5.0, 0.8, size=20_000))
    assert 1.0 < x.min() and x.max() < 1e5
    return x


def ks_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Largest distance between the ECDFs of ``a`` and ``b``."""
    a, b = np.sort(a), np.sort(b)
    grid = np.concatenate((a, b))
    fa = np.searchsorted(a, grid, side="right") / a.size
    fb = np.searchsorted(b, grid, side="right") / b.size
    return float(np.max(np.abs(fa - fb)))


def opendp_quantile(release: QuantileRelease, j: int):
    """OpenDP's measurement for quantile ``j`` of ``release``, rebuilt from the release's public parameters."""
    return dp.m.make_private_quantile(
        dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance(), dp.max_divergence(),
        candidates=release.candidates.tolist(), alpha=float(release.probs[j]), scale=float(release.noise_scale[j]),
    )


# --------------------------------------------------------------------------------------------
# privacy accounting: OpenDP's map, not hand-typed factors
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("eps", [0.1, 1.0, 50.0])
@pytest.mark.parametrize("probs", [DEFAULT_PROBS, (0.5,), (0.25, 0.75)])
def test_eps_remove_is_opendp_map_at_most_eps_and_close(eps, probs):
    r = dp_quantiles([2.0, 3.0, 5.0], eps, lower=1.0, upper=10.0, probs=probs, n_candidates=50)
    assert r.eps == eps
    assert r.eps_remove <= eps
    assert r.eps_remove >= 0.98 * eps  # the binary search lands at the boundary, within a few %


def test_eps_replace_is_opendp_map2_and_twice_remove():
    r = dp_quantiles([2.0, 3.0, 5.0], 1.0, lower=1.0, upper=10.0, n_candidates=50)
    composed = dp.c.make_composition([opendp_quantile(r, j) for j in range(r.probs.size)])
    assert r.eps_remove == pytest.approx(composed.map(1), rel=1e-12)
    assert r.eps_replace == pytest.approx(composed.map(2), rel=1e-12)
    # what OpenDP gives for data of unknown size: its map is linear in the symmetric distance
    assert r.eps_replace == pytest.approx(2.0 * r.eps_remove, rel=1e-12)


def test_eps_is_split_equally_over_the_quantiles():
    eps = 1.3
    r = dp_quantiles([2.0, 3.0, 5.0], eps, lower=1.0, upper=10.0, n_candidates=50)
    k = r.probs.size
    per = [opendp_quantile(r, j).map(1) for j in range(k)]
    np.testing.assert_allclose(per, eps / k, rtol=1e-9)
    # the extreme levels need more noise than the median for the same eps (OpenDP's score sensitivity)
    mid = int(np.flatnonzero(r.probs == 0.5)[0])
    assert r.noise_scale[0] > r.noise_scale[mid] and r.noise_scale[-1] > r.noise_scale[mid]


def test_guarantee_from_registry_and_statement_names_both_relations():
    r = dp_quantiles([2.0, 3.0, 5.0], 1.0, lower=1.0, upper=10.0, probs=(0.5,), n_candidates=20)
    assert r.guarantee == registry.guarantee("OpenDP-Q") == "DP"
    s = r.statement()
    assert "strict DP" in s
    assert f"{r.eps_remove:.3g} with one record removed" in s
    assert f"{r.eps_replace:.3g} with one record replaced" in s
    assert "cells" not in s


# --------------------------------------------------------------------------------------------
# candidates and released values
# --------------------------------------------------------------------------------------------


def test_candidate_grid_log_and_linear():
    g = candidate_grid(50.0, 18_777.0, 1000, "log")
    assert g.size == 1000 and g[0] == 50.0 and g[-1] == 18_777.0
    np.testing.assert_allclose(np.diff(np.log(g)), math.log(18_777.0 / 50.0) / 999)
    np.testing.assert_array_equal(candidate_grid(0.0, 7.0, 8, "linear"), np.arange(8.0))


def test_released_values_are_sorted_candidates_independent_of_data():
    a = dp_quantiles([1.5, 1.6, 1.7], 0.5, lower=1.0, upper=100.0, n_candidates=40)
    b = dp_quantiles([90.0, 95.0, 99.0, 100.0], 0.5, lower=1.0, upper=100.0, n_candidates=40)
    np.testing.assert_array_equal(a.candidates, b.candidates)  # the grid uses the public bounds only
    for r in (a, b):
        assert np.isin(r.values, r.candidates).all()
        assert (np.diff(r.values) >= 0).all()
        assert r.values.shape == (len(DEFAULT_PROBS),)


# --------------------------------------------------------------------------------------------
# utility: the quantiles track the data at large eps, and the noise is really there at small eps
# --------------------------------------------------------------------------------------------


def test_large_eps_quantiles_and_synthetic_ecdf_track_the_data(lognormal):
    r = dp_quantiles(lognormal, 50.0, lower=1.0, upper=1e5)
    empirical = np.quantile(lognormal, r.probs)
    # grid spacing is log(1e5)/999 = 0.0115 in log: the release is within about one grid step
    assert np.max(np.abs(np.log(r.values) - np.log(empirical))) < 0.03
    synthetic = r.sample(lognormal.size, seed=1)
    assert ks_distance(lognormal, synthetic) < 0.03
    assert synthetic.min() >= 1.0 and synthetic.max() <= 1e5


def test_small_eps_quantiles_are_visibly_noisy(lognormal):
    # over 400 releases at eps = 0.01 the smallest max log error seen was 0.76, the smallest KS 0.085
    a = dp_quantiles(lognormal, 0.01, lower=1.0, upper=1e5)
    b = dp_quantiles(lognormal, 0.01, lower=1.0, upper=1e5)
    empirical = np.quantile(lognormal, a.probs)
    assert np.max(np.abs(np.log(a.values) - np.log(empirical))) > 0.3
    assert ks_distance(lognormal, a.sample(lognormal.size, seed=1)) > 0.05
    assert not np.array_equal(a.values, b.values)  # unseeded: two releases differ


# --------------------------------------------------------------------------------------------
# DP audit: one record removed, a single quantile, many releases
# --------------------------------------------------------------------------------------------


def _release_counts(x: list[float], eps: float, releases: int) -> np.ndarray:
    grid = candidate_grid(0.0, 7.0, 8, "linear")
    idx = [
        int(np.searchsorted(grid, dp_quantiles(x, eps, lower=0.0, upper=7.0, probs=(0.5,), n_candidates=8,
                                               scale="linear").values[0]))
        for _ in range(releases)
    ]
    return np.bincount(idx, minlength=grid.size)


def _audit_statistic(c1: np.ndarray, c2: np.ndarray, *, z: float = 4.0, min_count: int = 30) -> float:
    """Largest lower confidence bound of ``|log P1(i) - log P2(i)|`` over candidates with enough counts."""
    n1, n2 = c1.sum(), c2.sum()
    keep = (c1 >= min_count) & (c2 >= min_count)
    assert keep.sum() >= 3, "too few candidates with enough releases to audit"
    p1, p2 = c1[keep] / n1, c2[keep] / n2
    log_ratio = np.abs(np.log(p1) - np.log(p2))
    se = np.sqrt((1 - p1) / (n1 * p1) + (1 - p2) / (n2 * p2))  # delta method for log of a proportion
    return float(np.max(log_ratio - z * se))


def test_dp_audit_one_record_removed():
    eps, releases = 1.0, 3000
    x = [0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5]  # the median candidate moves when an end record goes
    neighbour = x[1:]  # one record removed
    c1, c2 = _release_counts(x, eps, releases), _release_counts(neighbour, eps, releases)
    stat = _audit_statistic(c1, c2)
    # no candidate's probability ratio exceeds exp(eps) beyond Monte Carlo slack (z = 4 per candidate)
    assert stat <= eps
    # and the audit has power: this neighbour pair's true log ratio is about 0.9, so a mechanism
    # leaking twice as much as eps/2 claims would be caught
    assert stat > eps / 2


def test_dp_audit_catches_a_mechanism_spending_more_than_claimed():
    # releases made at eps = 3, audited against a claim of eps = 1: the audit must fail
    x = [0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5]
    c1, c2 = _release_counts(x, 3.0, 3000), _release_counts(x[1:], 3.0, 3000)
    assert _audit_statistic(c1, c2) > 1.0


# --------------------------------------------------------------------------------------------
# cells (public covariates): parallel composition
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def two_cells():
    rng = np.random.default_rng(4)
    low = np.exp(rng.normal(4.0, 0.5, size=6000))
    high = np.exp(rng.normal(6.5, 0.5, size=6000))
    x = np.concatenate((low, high))
    cells = np.array(["part-time"] * low.size + ["full-time"] * high.size)
    return x, cells


def test_cells_quantiles_track_each_cell(two_cells):
    x, cells = two_cells
    r = dp_quantiles(x, 20.0, lower=1.0, upper=1e5, cells=cells)
    assert list(r.cells) == ["full-time", "part-time"]  # the distinct labels, sorted
    assert r.values.shape == (2, len(DEFAULT_PROBS))
    for i, label in enumerate(r.cells):
        empirical = np.quantile(x[cells == label], r.probs)
        assert np.max(np.abs(np.log(r.values[i]) - np.log(empirical))) < 0.05
        assert (np.diff(r.values[i]) >= 0).all()
    # parallel composition: each cell gets the full eps, and the guarantee is one cell's map
    assert r.eps_remove <= 20.0 and r.eps_remove >= 0.98 * 20.0
    assert r.eps_replace == pytest.approx(2 * r.eps_remove)
    assert "2 public cells" in r.statement()


def test_cells_sample_one_value_per_label(two_cells):
    x, cells = two_cells
    r = dp_quantiles(x, 20.0, lower=1.0, upper=1e5, cells=cells)
    want = np.array(["part-time"] * 5000 + ["full-time"] * 5000)
    s = r.sample(cells=want, seed=3)
    assert s.shape == (10_000,)
    assert ks_distance(s[:5000], x[cells == "part-time"]) < 0.04
    assert ks_distance(s[5000:], x[cells == "full-time"]) < 0.04
    np.testing.assert_array_equal(s, r.sample(cells=want, seed=3))  # sampling is seeded post-processing


def test_cells_unknown_label_and_misuse_are_clear_errors(two_cells):
    x, cells = two_cells
    r = dp_quantiles(x, 5.0, lower=1.0, upper=1e5, cells=cells)
    with pytest.raises(DataError, match=r"no released quantiles \('retired'\)"):
        r.sample(cells=["part-time", "retired"])
    with pytest.raises(DataError, match="pass `cells=`"):
        r.sample(100)
    with pytest.raises(DataError, match="leave `n` as None"):
        r.sample(3, cells=["part-time"])
    plain = dp_quantiles(x, 5.0, lower=1.0, upper=1e5)
    with pytest.raises(DataError, match="has no cells"):
        plain.sample(cells=["part-time"])
    with pytest.raises(DataError, match="`n` must be a positive integer"):
        plain.sample()


def test_cells_with_public_label_list_release_empty_cells(two_cells):
    x, cells = two_cells
    r = dp_quantiles(x, 5.0, lower=1.0, upper=1e5, cells=cells, labels=["part-time", "full-time", "retired"])
    assert list(r.cells) == ["part-time", "full-time", "retired"]  # the given order
    assert r.values.shape == (3, len(DEFAULT_PROBS))
    assert np.isin(r.values[2], r.candidates).all()  # the empty cell gets a release too (pure noise)
    assert r.sample(cells=["retired", "retired"], seed=1).shape == (2,)
    with pytest.raises(DataError, match="missing from `labels`"):
        dp_quantiles(x, 5.0, lower=1.0, upper=1e5, cells=cells, labels=["part-time"])
    with pytest.raises(DataError, match="needs `cells`"):
        dp_quantiles(x, 5.0, lower=1.0, upper=1e5, labels=["part-time"])


@pytest.mark.parametrize(
    "cells, match",
    [
        (["a", "b"], "has 2 labels but `x` has 3"),
        ([["a"], ["b"], ["c"]], "1-dimensional"),
        ([1.0, float("nan"), 2.0], "missing"),
        (np.array(["a", None, "b"], dtype=object), "missing"),
        ("abc", "single string"),
    ],
)
def test_bad_cells(cells, match):
    with pytest.raises(DataError, match=match):
        dp_quantiles([2.0, 3.0, 4.0], 1.0, lower=1.0, upper=10.0, cells=cells)


# --------------------------------------------------------------------------------------------
# the sampler: inverse CDF through (0, lower), (p_j, q_j), (1, upper)
# --------------------------------------------------------------------------------------------


def _release(values, probs, scale, lower=1.0, upper=100.0) -> QuantileRelease:
    return QuantileRelease(
        probs=np.asarray(probs, float), values=np.asarray(values, float), cells=None, lower=lower, upper=upper,
        scale=scale, n_candidates=100, eps=1.0, eps_remove=1.0, eps_replace=2.0, noise_scale=np.ones(len(probs)),
        guarantee="DP",
    )


def test_sample_is_piecewise_linear_in_log_value():
    r = _release([10.0], [0.5], "log")
    s = r.sample(200_000, seed=7)
    tol = 4 * math.sqrt(0.25 / s.size)
    assert np.mean(s <= 10.0) == pytest.approx(0.5, abs=tol)
    assert np.mean(s <= math.sqrt(10.0)) == pytest.approx(0.25, abs=tol)  # log-uniform on [1, 10]
    assert np.mean(s <= math.sqrt(1000.0)) == pytest.approx(0.75, abs=tol)  # log-uniform on [10, 100]
    assert s.min() >= 1.0 and s.max() <= 100.0
    np.testing.assert_array_equal(s[:10], r.sample(10, seed=7))  # seeded


def test_sample_is_piecewise_linear_in_value_for_linear_scale():
    r = _release([10.0, 20.0], [0.2, 0.6], "linear", lower=0.0, upper=100.0)
    s = r.sample(200_000, seed=8)
    tol = 4 * math.sqrt(0.25 / s.size)
    assert np.mean(s <= 5.0) == pytest.approx(0.1, abs=tol)
    assert np.mean(s <= 15.0) == pytest.approx(0.4, abs=tol)
    assert np.mean(s <= 60.0) == pytest.approx(0.8, abs=tol)


def test_sample_with_tied_quantiles_puts_mass_at_the_tie():
    r = _release([10.0, 10.0], [0.3, 0.7], "log")
    s = r.sample(50_000, seed=9)
    assert np.mean(np.isclose(s, 10.0, rtol=1e-12, atol=0.0)) == pytest.approx(0.4, abs=0.02)


# --------------------------------------------------------------------------------------------
# bad inputs
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(lower=10.0, upper=10.0), "upper > lower"),
        (dict(lower=12.0, upper=10.0), "upper > lower"),
        (dict(lower=float("-inf")), "finite"),
        (dict(lower=0.0, x=[1.0], scale="log"), "`lower` must be > 0 for scale='log'"),
        (dict(lower=-1.0, x=[1.0], scale="log"), "`lower` must be > 0 for scale='log'"),
        (dict(lower="1"), "`lower` must be a number"),
        (dict(probs=(0.5, 0.2)), "strictly increasing"),
        (dict(probs=(0.2, 0.2)), "strictly increasing"),
        (dict(probs=(0.0, 0.5)), "strictly between 0 and 1"),
        (dict(probs=(0.5, 1.0)), "strictly between 0 and 1"),
        (dict(probs=(0.5, 1.2)), "strictly between 0 and 1"),
        (dict(probs=()), "non-empty"),
        (dict(probs=("0.5",)), "numbers"),
        (dict(probs=(0.12345,)), "multiples of 1/10,000"),
        (dict(eps=0.0), "`eps` must be a finite privacy budget > 0"),
        (dict(eps=-1.0), "`eps` must be a finite privacy budget > 0"),
        (dict(eps=float("inf")), "`eps` must be a finite privacy budget > 0"),
        (dict(eps=1e-12), "MIN_EPS"),
        (dict(eps="1"), "`eps` must be a positive number"),
        (dict(x=[2.0, float("nan")]), "non-finite"),
        (dict(x=[2.0, float("inf")]), "non-finite"),
        (dict(x=[]), "empty"),
        (dict(x=[[2.0, 3.0]]), "1-dimensional"),
        (dict(x=["2", "3"]), "numeric"),
        (dict(n_candidates=1), "`n_candidates` must be an integer in"),
        (dict(n_candidates=10.0), "`n_candidates` must be an integer in"),
        (dict(scale="sqrt"), "`scale` must be 'log', 'linear' or 'auto'"),
    ],
)
def test_bad_inputs_name_the_argument(kwargs, match):
    args = dict(x=[2.0, 3.0, 4.0], eps=1.0, lower=1.0, upper=10.0) | kwargs
    x, eps = args.pop("x"), args.pop("eps")
    with pytest.raises(DataError, match=match):
        dp_quantiles(x, eps, **args)


def test_the_default_spacing_reads_the_public_lower_bound_only():
    from dpsynth.mechanisms.quantiles import resolve_scale

    assert resolve_scale("auto", 1.0) == "log" and resolve_scale("auto", 0.0) == "linear"
    assert resolve_scale("auto", -3.0) == "linear" and resolve_scale("log", 0.0) == "log"
    # a count's public bounds [0, 49]: evenly spaced candidates, where "log" is refused
    r = dp_quantiles([0.0, 3.0, 7.0, 49.0], 1.0, lower=0.0, upper=49.0, probs=(0.5,), n_candidates=50)
    assert r.scale == "linear" and 0.0 <= r.values[0] <= 49.0
    assert dp_quantiles([2.0, 3.0], 1.0, lower=1.0, upper=10.0, probs=(0.5,), n_candidates=10).scale == "log"


def test_values_at_the_bounds_are_accepted_not_clipped():
    r = dp_quantiles([1.0, 10.0, 10.0], 1.0, lower=1.0, upper=10.0, probs=(0.5,), n_candidates=10)
    assert 1.0 <= r.values[0] <= 10.0


def test_values_outside_the_public_bounds_are_clamped_not_refused():
    """OpenDP clamps to the public bounds; a refusal would tell whether one record lies outside them."""
    rel = dp_quantiles([0.5, 3.0, 30.0], 1.0, lower=1.0, upper=10.0, probs=(0.5,), n_candidates=50)
    assert 1.0 <= rel.values[0] <= 10.0

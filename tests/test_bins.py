"""Public bins of a numeric column (:mod:`dpsynth.bins`): the default rule, clamping, point bins, draws inside bins,
the JSON round trip and merging into equal-mass bins. No sampler."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dpsynth.bins import MAX_INTEGER_BINS, PublicBins, default_bins
from dpsynth.models.ordinal import OrdinalRegression
from dpsynth.validation import DataError

# --------------------------------------------------------------------------------------------
# bins
# --------------------------------------------------------------------------------------------


def test_default_bins_rule_by_kind_and_bounds():
    hours = default_bins("count", 0, 100)  # one bin per integer: no point bins needed
    assert (hours.scale, hours.n_bins, hours.point_lower, hours.point_upper) == ("integer", 101, False, False)
    wide = default_bins("count", 0, 200)  # 201 integers > 200: integer-aligned bins with a point bin at each bound
    assert 201 > MAX_INTEGER_BINS and wide.scale == "integer" and wide.point_lower and wide.point_upper
    assert wide.n_bins < 201 and all(e % 1 == 0.5 for e in wide.edges)
    assert default_bins("continuous", -50, 50).scale == "linear"  # negatives
    assert default_bins("continuous", 0, 1).scale == "linear"  # a share
    assert default_bins("continuous", 0, 50_000).scale == "log1p"  # an amount with exact zeros
    assert default_bins("continuous", 1, 1e5).scale == "log"
    b = default_bins("continuous", 0, 1, n_bins=10)
    assert b.n_bins == 12 and b.n_interior == 10 and b.is_point.tolist() == [True] + [False] * 10 + [True]
    with pytest.raises(DataError, match="lower < upper"):
        default_bins("continuous", 1, 1)
    with pytest.raises(DataError, match="numeric target"):
        default_bins("categorical", 0, 1)


def test_index_clamps_negatives_zeros_heaps_and_points():
    b = default_bins("continuous", -10.0, 10.0, n_bins=4)  # {-10}, (-10,-5], (-5,0], (0,5], (5,10), {10}
    x = np.array([-99.0, -10.0, -7.0, -5.0, 0.0, 0.0, 0.0, 3.0, 9.9, 10.0, 1e9])
    k, clamped = b.index(x, return_clamped=True)
    assert k.tolist() == [0, 0, 1, 1, 2, 2, 2, 3, 4, 5, 5]
    assert clamped == 2 == b.clamped(x)
    spend = default_bins("continuous", 0.0, 50_000.0)
    assert spend.index(np.array([0.0, 0.0, -3.0]))[:3].tolist() == [0, 0, 0]  # exact zeros: the point bin
    assert (spend.index(np.array([1e-9, 12.0, 49_999.0])) > 0).all()
    hours = default_bins("count", 0, 100)
    heaped = np.r_[np.full(50, 40.0), np.arange(0, 100, 2.0)]
    assert (hours.index(heaped)[:50] == 40).all()  # a heap is one integer bin
    assert hours.index(np.array([-4.0, 140.0])).tolist() == [0, 100]


def test_values_inside_bins_and_exact_at_points():
    rng = np.random.default_rng(0)
    for b in (default_bins("continuous", -10, 10, n_bins=7), default_bins("continuous", 0, 5e4),
              default_bins("continuous", 2, 2e4), default_bins("count", 0, 100), default_bins("count", 0, 1000)):
        k = np.repeat(np.arange(b.n_bins), 50)
        v = b.values(k, rng)
        assert ((v >= b.lower) & (v <= b.upper)).all()
        assert (b.index(v) == k).all()  # every value falls back into its own bin
        pts = b.is_point[k]
        assert (v[pts & (k == 0)] == b.lower).all() and (v[pts & (k == b.n_bins - 1)] == b.upper).all()
        assert not np.isin(v[~pts], [b.lower, b.upper] if b.point_lower else []).any()
        if b.scale == "integer":
            assert (v == np.rint(v)).all()
    wide = default_bins("count", 0, 1000, n_bins=10)  # integer-aligned wide bins: uniform over their integers
    j = 3
    v = wide.values(np.full(4000, j), rng)
    lo, hi = math.ceil(wide.edges[j - 1]), math.floor(wide.edges[j])
    assert v.min() == lo and v.max() == hi and len(np.unique(v)) == hi - lo + 1


def test_bins_json_round_trip_and_hash():
    for b in (default_bins("continuous", -3.5, 7.25, n_bins=9), default_bins("count", 0, 500),
              default_bins("continuous", 0, 1).coarsened(np.full(32, 1 / 32), 5)):
        back = PublicBins.from_dict(json.loads(json.dumps(b.to_dict())))
        assert back == b and hash(back) == hash(b)
    fam = OrdinalRegression(bins=default_bins("count", 0, 20).to_dict(), n_coef=3)
    assert fam == OrdinalRegression(bins=default_bins("count", 0, 20), n_coef=3) and hash(fam)
    with pytest.raises(DataError, match="unknown key"):
        PublicBins.from_dict({**fam.bins.to_dict(), "width": 3})
    with pytest.raises(DataError, match="strictly increasing"):
        PublicBins(lower=0, upper=1, edges=(0.0, 0.5, 0.5, 1.0))
    with pytest.raises(DataError, match="needs public `bins`"):
        OrdinalRegression()


def test_coarsened_bins_equal_mass_keep_points_and_integers():
    fine = default_bins("count", 0, 1000, n_bins=100)  # a point bin at 0 and at 1000, integer-aligned bins
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.full(fine.n_bins, 0.5))
    coarse = fine.coarsened(p, 12)
    assert coarse.point_lower and coarse.point_upper and coarse.scale == "integer"
    assert set(coarse.edges) <= set(fine.edges)  # merged edges are fine edges: integer-aligned
    assert coarse.n_bins <= 12 and len(coarse.base) == coarse.n_bins
    assert coarse.base[0] == pytest.approx(p[0] / 1.0, rel=0.5) or coarse.base[0] > 0
    # interior masses about equal: each merged bin holds about 1/10 of the interior mass
    x = fine.values(rng.choice(fine.n_bins, size=20_000, p=p), rng)
    inner = coarse.index(x)[~coarse.is_point[coarse.index(x)]]
    shares = np.bincount(inner, minlength=coarse.n_bins)[~coarse.is_point] / inner.size
    assert shares.max() < 0.25
    with pytest.raises(DataError, match="probability vector"):
        fine.coarsened(p[:-1], 5)



"""The perturbed histogram (PH): bins from n only, Laplace noise of scale 2/eps, negative counts
set to 0, output inside the public bounds, research mode seeded and release mode via OpenDP."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpsynth.mechanisms import histogram
from dpsynth.mechanisms.histogram import bin_count, laplace_noise, perturbed_histogram
from dpsynth.validation import DataError

# --------------------------------------------------------------------------------------------
# bins
# --------------------------------------------------------------------------------------------


def test_bin_count_rules_by_hand():
    assert bin_count(100) == 10
    assert bin_count(101) == 11  # ceil(sqrt(101)) = ceil(10.05)
    assert bin_count(100, "log") == 5  # ceil(4.605)
    assert bin_count(2000, "log") == 8  # ceil(7.6)
    assert bin_count(1) == 1 and bin_count(1, "log") == 1
    assert bin_count(50, 7) == 7


def test_bins_depend_on_public_arguments_only():
    rng = np.random.default_rng(1)
    a = perturbed_histogram(rng.uniform(0, 0.1, size=100), 1.0, upper=5.0, seed=1, bins="sqrt", n_public=100)
    b = perturbed_histogram(rng.uniform(4, 4.9, size=90), 1.0, upper=5.0, seed=1, bins="sqrt", n_public=100)
    np.testing.assert_array_equal(a.edges, b.edges)  # another n, the same public size: the same bins
    np.testing.assert_allclose(a.edges, np.linspace(0, 5, 11))
    assert perturbed_histogram(rng.uniform(0, 5, size=7), 1.0, upper=5.0, seed=1).edges.size == 31  # default 30
    c = perturbed_histogram(rng.uniform(1, 2, size=30), 1.0, lower=1.0 - 1e-3, upper=3.0, bins="log", n_public=30,
                            seed=1)
    assert c.edges.size == math.ceil(math.log(30)) + 1
    assert c.edges[0] == pytest.approx(1.0 - 1e-3) and c.edges[-1] == 3.0


# --------------------------------------------------------------------------------------------
# noise
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [0.4, 2.0])
def test_research_laplace_noise_has_the_scale(scale):
    n = 200_000
    z = laplace_noise(n, scale, seed=3)
    # Laplace(0, b): E|Z| = b, sd |Z| = b; Var Z = 2 b^2
    assert np.abs(z).mean() == pytest.approx(scale, abs=5 * scale / math.sqrt(n))
    assert z.mean() == pytest.approx(0.0, abs=5 * math.sqrt(2) * scale / math.sqrt(n))
    assert z.var() == pytest.approx(2 * scale**2, rel=0.03)


def test_research_noise_reproducible_by_seed():
    np.testing.assert_array_equal(laplace_noise(10, 1.0, seed=5), laplace_noise(10, 1.0, seed=5))
    assert not np.array_equal(laplace_noise(10, 1.0, seed=5), laplace_noise(10, 1.0, seed=6))


def test_release_noise_uses_opendp(monkeypatch):
    import opendp.prelude as dp

    calls = []
    original = dp.m.make_laplace

    def spy(*args, **kwargs):
        calls.append(kwargs.get("scale"))
        return original(*args, **kwargs)

    monkeypatch.setattr(dp.m, "make_laplace", spy)
    z = laplace_noise(4000, 1.5, mode="release")
    assert calls == [1.5]
    assert z.shape == (4000,) and np.isfinite(z).all()
    # statistically a Laplace(0, 1.5): E|Z| = 1.5 (sd of the mean of |Z| is 1.5 / sqrt(4000))
    assert np.abs(z).mean() == pytest.approx(1.5, abs=5 * 1.5 / math.sqrt(4000))
    assert len(np.unique(z)) > 3900


def test_release_noise_refuses_a_seed():
    with pytest.raises(DataError, match=r"release mode .* cannot be seeded; pass seed=None"):
        laplace_noise(3, 1.0, mode="release", seed=1)


def test_bad_noise_mode():
    with pytest.raises(DataError, match=r"`mode` must be one of"):
        laplace_noise(3, 1.0, mode="secure")


def test_ph_noise_scale_is_two_over_eps():
    """Many seeded runs on data whose bins all hold about 250 records (never set to 0)."""
    x = np.random.default_rng(7).uniform(0, 1, size=1000)
    counts = np.histogram(x, bins=np.linspace(0, 1, 5))[0]
    eps = 0.5  # scale 4
    devs = []
    for s in range(1500):
        r = perturbed_histogram(x, eps, upper=1.0, bins=4, n_synthetic=1, seed=s)
        devs.append(r.noisy_counts - counts)
    devs = np.concatenate(devs)
    assert np.abs(devs).mean() == pytest.approx(2 / eps, abs=5 * (2 / eps) / math.sqrt(devs.size))
    assert devs.var() == pytest.approx(2 * (2 / eps) ** 2, rel=0.08)


def _fixed_noise(values):
    def fake(size, scale, *, mode="research", seed=None):
        assert size == len(values)
        fake.scale = scale
        return np.asarray(values, dtype=float)

    return fake


def test_negative_counts_set_to_zero_by_hand(monkeypatch):
    # bins [0,1), [1,2), [2,3), [3,4]: counts 2, 1, 0, 1
    x = np.array([0.5, 0.7, 1.5, 3.2])
    fake = _fixed_noise([-5.0, 3.0, -0.5, 10.0])
    monkeypatch.setattr(histogram, "laplace_noise", fake)
    r = perturbed_histogram(x, 2.0, upper=4.0, bins=4, n_synthetic=5000, seed=1)
    assert fake.scale == 1.0  # 2 / eps
    np.testing.assert_array_equal(r.noisy_counts, [0.0, 4.0, 0.0, 11.0])
    # bins with zero noisy count are never drawn; the others in proportion 4 : 11
    syn = r.synthetic
    assert not ((syn < 1) | ((syn >= 2) & (syn < 3))).any()
    share = np.mean(syn >= 3)
    assert share == pytest.approx(11 / 15, abs=5 * math.sqrt(11 / 15 * 4 / 15 / 5000))


def test_all_counts_zero_gives_uniform(monkeypatch):
    monkeypatch.setattr(histogram, "laplace_noise", _fixed_noise([-1e9] * 4))
    r = perturbed_histogram(np.array([0.5, 1.5, 2.5]), 1.0, upper=4.0, bins=4, n_synthetic=8000, seed=2)
    np.testing.assert_array_equal(r.noisy_counts, np.zeros(4))
    shares = np.histogram(r.synthetic, bins=r.edges)[0] / 8000
    np.testing.assert_allclose(shares, 0.25, atol=5 * math.sqrt(0.25 * 0.75 / 8000))


def test_noisy_counts_never_negative_and_some_zeroed():
    x = np.r_[np.full(50, 0.05), np.full(50, 0.95)]  # the middle bins are empty
    zeros = 0
    for s in range(50):
        r = perturbed_histogram(x, 0.2, upper=1.0, bins=10, seed=s)  # scale 10
        assert (r.noisy_counts >= 0).all()
        zeros += int((r.noisy_counts == 0).sum())
    assert zeros > 50  # empty bins get negative noise about half the time


# --------------------------------------------------------------------------------------------
# output
# --------------------------------------------------------------------------------------------


def test_output_inside_public_bounds_and_size():
    x = np.random.default_rng(9).gamma(2.0, 10.0, size=500)
    r = perturbed_histogram(x, 1.0, lower=0.0, upper=500.0, seed=9)
    assert r.synthetic.shape == (500,)
    assert ((r.synthetic >= 0.0) & (r.synthetic <= 500.0)).all()
    assert r.guarantee == "DP" and r.mode == "research" and r.eps == 1.0
    r2 = perturbed_histogram(x, 1.0, lower=-10.0, upper=500.0, n_synthetic=37, seed=9)
    assert r2.synthetic.shape == (37,) and (r2.synthetic >= -10.0).all()


def test_synthetic_follows_the_data_at_large_eps():
    x = np.random.default_rng(10).beta(0.5, 3.0, size=2000)
    r = perturbed_histogram(x, 50.0, upper=1.0, seed=10)
    assert r.synthetic.mean() == pytest.approx(x.mean(), abs=0.02)


def test_research_mode_reproducible_by_seed():
    x = np.random.default_rng(11).uniform(0, 1, size=300)
    a = perturbed_histogram(x, 1.0, upper=1.0, seed=42)
    b = perturbed_histogram(x, 1.0, upper=1.0, seed=42)
    c = perturbed_histogram(x, 1.0, upper=1.0, seed=43)
    np.testing.assert_array_equal(a.synthetic, b.synthetic)
    np.testing.assert_array_equal(a.noisy_counts, b.noisy_counts)
    assert not np.array_equal(a.noisy_counts, c.noisy_counts)
    assert not np.array_equal(a.synthetic, c.synthetic)


def test_release_mode_uses_opendp(monkeypatch):
    import opendp.prelude as dp

    calls = []
    original = dp.m.make_laplace
    monkeypatch.setattr(dp.m, "make_laplace", lambda *a, **k: calls.append(k["scale"]) or original(*a, **k))
    x = np.random.default_rng(12).uniform(0, 1, size=100)
    r = perturbed_histogram(x, 4.0, upper=1.0, mode="release")
    assert calls == [0.5]  # 2 / eps
    assert r.mode == "release" and r.guarantee == "DP"
    assert ((r.synthetic >= 0) & (r.synthetic <= 1)).all() and r.synthetic.size == 100


def test_release_mode_refuses_a_seed():
    x = np.random.default_rng(13).uniform(0, 1, size=100)
    with pytest.raises(DataError, match=r"seed"):
        perturbed_histogram(x, 1.0, upper=1.0, mode="release", seed=7)


def test_lower_bound_zero_equal_to_data_minimum_is_allowed():
    # 0 as a lower bound is a property of the variable (e.g. salaries), not read off the data
    r = perturbed_histogram(np.array([0.0, 2.0, 3.0]), 1.0, lower=0.0, upper=10.0, seed=1)
    assert r.synthetic.size == 3


# --------------------------------------------------------------------------------------------
# top-coded data, seeds, neighbour relations, limits
# --------------------------------------------------------------------------------------------


def test_top_coded_value_equal_to_public_upper_bound_is_accepted():
    # salaries top-coded at the public bound U: x == U lies in [lower, U]
    x = np.array([10.0, 250.0, 500.0, 500.0])
    r = perturbed_histogram(x, 1.0, upper=500.0, seed=3)
    assert r.synthetic.size == 4 and r.synthetic.max() <= 500.0


def test_values_outside_the_public_bounds_are_clamped_not_refused():
    out = perturbed_histogram(np.array([10.0, 500.5, -3.0]), 1.0, upper=500.0, seed=3, bins=5)
    same = perturbed_histogram(np.array([10.0, 500.0, 0.0]), 1.0, upper=500.0, seed=3, bins=5)
    np.testing.assert_array_equal(out.noisy_counts, same.noisy_counts)  # the clamp, then the mechanism
    assert ((out.synthetic >= 0.0) & (out.synthetic <= 500.0)).all()


def test_seed_sequence_is_not_mutated_and_gives_the_same_result():
    x = np.random.default_rng(4).uniform(0, 1, size=200)
    ss = np.random.SeedSequence(123)
    a = perturbed_histogram(x, 1.0, upper=1.0, seed=ss)
    b = perturbed_histogram(x, 1.0, upper=1.0, seed=ss)
    assert ss.n_children_spawned == 0
    np.testing.assert_array_equal(a.noisy_counts, b.noisy_counts)
    np.testing.assert_array_equal(a.synthetic, b.synthetic)
    # an equal fresh SeedSequence gives the same result too
    c = perturbed_histogram(x, 1.0, upper=1.0, seed=np.random.SeedSequence(123))
    np.testing.assert_array_equal(a.synthetic, c.synthetic)


@pytest.mark.parametrize(("neighbours", "scale"), [("replace", 2.0 / 0.5), ("remove", 1.0 / 0.5)])
def test_neighbour_relation_sets_noise_scale(monkeypatch, neighbours, scale):
    fake = _fixed_noise([0.0] * 4)
    monkeypatch.setattr(histogram, "laplace_noise", fake)
    r = perturbed_histogram(np.array([0.5, 1.5, 2.5]), 0.5, upper=4.0, bins=4, seed=1, neighbours=neighbours)
    assert fake.scale == pytest.approx(scale)
    assert r.noise_scale == pytest.approx(scale)
    assert r.eps == 0.5 and r.neighbours == neighbours
    assert r.eps_remove == pytest.approx(1.0 / scale)
    assert r.eps_replace == pytest.approx(2.0 / scale)


def test_neighbour_relation_default_is_replace_and_eps_fields():
    r = perturbed_histogram(np.array([0.2, 0.4]), 2.0, upper=1.0, seed=1)
    assert r.neighbours == "replace" and r.noise_scale == 1.0
    assert r.eps_replace == 2.0 and r.eps_remove == 1.0
    r2 = perturbed_histogram(np.array([0.2, 0.4]), 2.0, upper=1.0, seed=1, neighbours="remove")
    assert r2.noise_scale == 0.5 and r2.eps_remove == 2.0 and r2.eps_replace == 4.0


def test_bad_neighbour_relation():
    with pytest.raises(DataError, match=r"`neighbours` must be 'replace'.*got 'swap'"):
        perturbed_histogram(np.array([0.2, 0.4]), 1.0, upper=1.0, neighbours="swap")


@pytest.mark.parametrize("n", [0, -3, 2.5, True, "10"])
def test_bin_count_bad_n(n):
    with pytest.raises(DataError, match=r"`n` must be a positive integer"):
        bin_count(n, "log")


def test_bins_above_maximum():
    with pytest.raises(DataError, match=r"`bins` gives 1,000,000,000 bins, above the maximum MAX_BINS"):
        perturbed_histogram(np.array([0.2, 0.4]), 1.0, upper=1.0, bins=10**9)
    assert bin_count(10, histogram.MAX_BINS) == histogram.MAX_BINS


def test_bins_bool_refused():
    with pytest.raises(DataError, match=r"`bins` must be 'sqrt', 'log' or a positive int"):
        bin_count(10, True)


@pytest.mark.parametrize("eps", [1e-320, 1e-13])
def test_ph_eps_too_small(eps):
    with pytest.raises(DataError, match=r"`eps` must be >= MIN_EPS=1e-12"):
        perturbed_histogram(np.array([0.2, 0.4]), eps, upper=1.0, seed=1)


@pytest.mark.parametrize("k", [-1, 0, 2.7, True, "5"])
def test_ph_bad_n_synthetic(k):
    with pytest.raises(DataError, match=r"`n_synthetic` must be a positive integer"):
        perturbed_histogram(np.array([0.2, 0.4]), 1.0, upper=1.0, n_synthetic=k, seed=1)


@pytest.mark.parametrize(("kw", "name"), [({"upper": "1"}, "upper"), ({"upper": 1.0, "lower": True}, "lower")])
def test_ph_bounds_must_be_numbers(kw, name):
    with pytest.raises(DataError, match=rf"`{name}` must be a number"):
        perturbed_histogram(np.array([0.2, 0.4]), 1.0, seed=1, **kw)

"""Simulators of the seeds' data-generating processes."""

from __future__ import annotations

import numpy as np
import pytest

from dpsynth_book import datasets


def test_beta_data():
    x = datasets.beta_data(20000, 1)
    assert x.shape == (20000,)
    assert ((x > 0) & (x < 1)).all()
    assert x.mean() == pytest.approx(0.5 / 3.5, abs=0.005)


def test_beta_data_redraws_values_that_round_to_zero():
    # Beta(0.005, 3) draws underflow to exactly 0 about 2% of the time
    raw = np.random.default_rng(0).beta(0.005, 3.0, size=2000)
    assert (raw == 0).any()
    x = datasets.beta_data(2000, 2, a=0.005, b=3.0)
    assert ((x > 0) & (x < 1)).all()


def test_poisson_data():
    x = datasets.poisson_data(20000, 3)
    assert x.dtype == float and (x == np.round(x)).all() and (x >= 0).all()
    assert x.mean() == pytest.approx(100.0, abs=5 * 10 / np.sqrt(20000))
    assert x.var() == pytest.approx(100.0, rel=0.05)


def test_nb_draw_mean_variance():
    x = datasets.nb_draw(np.random.default_rng(4), 100.0, 5.0, 40000)
    assert x.mean() == pytest.approx(100.0, abs=5 * np.sqrt(2100 / 40000))
    assert x.var() == pytest.approx(100 + 100**2 / 5, rel=0.05)


def test_nb_mixture_data_moments():
    # Var = mu + mu^2 E[1/phi] = 100 + 10000 (0.2/5 + 0.8/20) = 900
    x = datasets.nb_mixture_data(40000, 5)
    assert x.shape == (40000,) and (x == np.round(x)).all() and (x >= 0).all()
    assert x.mean() == pytest.approx(100.0, abs=5 * 30 / np.sqrt(40000))
    assert x.var() == pytest.approx(900.0, rel=0.06)


def test_lognormal_data():
    x = datasets.lognormal_data(20000, 6, meanlog=1.0, sdlog=0.5)
    assert (x > 0).all()
    assert np.log(x).mean() == pytest.approx(1.0, abs=0.02)
    assert np.log(x).std() == pytest.approx(0.5, rel=0.03)


@pytest.mark.parametrize(
    "fn", [datasets.beta_data, datasets.poisson_data, datasets.nb_mixture_data, datasets.lognormal_data]
)
def test_reproducible_by_seed(fn):
    np.testing.assert_array_equal(fn(50, 7), fn(50, 7))
    assert not np.array_equal(fn(50, 7), fn(50, 8))


@pytest.mark.parametrize("n", [0, -3, 2.5])
def test_bad_n(n):
    with pytest.raises(ValueError, match=r"`n` must be a positive integer"):
        datasets.poisson_data(n, 1)


def test_bad_parameters():
    with pytest.raises(ValueError, match=r"`mu` must be finite and > 0"):
        datasets.poisson_data(10, 1, mu=-1.0)
    with pytest.raises(ValueError, match=r"`sdlog` must be finite and > 0"):
        datasets.lognormal_data(10, 1, sdlog=0.0)
    with pytest.raises(ValueError, match=r"`a` must be finite and > 0"):
        datasets.beta_data(10, 1, a=0.0)


# --------------------------------------------------------------------------------------------
# mixture and lognormal parameters are checked, never coerced
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("probs", "pattern"),
    [
        ((-0.2, 1.2), r"`probs` must hold finite mixing weights >= 0"),
        ((np.nan, 0.8), r"`probs` must hold finite mixing weights >= 0"),
        ((0.0, 0.0), r"`probs` must hold finite mixing weights >= 0, not all 0"),
        ((0.2, 0.3, 0.5), r"`probs` has 3 mixing weight\(s\) but `phis` has 2 component\(s\)"),
        (("0.2", "0.8"), r"`probs` must be a sequence of numbers"),
    ],
)
def test_nb_mixture_bad_probs(probs, pattern):
    from dpsynth.validation import DataError

    with pytest.raises(DataError, match=pattern):
        datasets.nb_mixture_data(10, 1, probs=probs)


@pytest.mark.parametrize("phis", [(0.0, 20.0), (-5.0, 20.0), (np.nan, 20.0), (5.0, np.inf), ()])
def test_nb_mixture_bad_phis(phis):
    from dpsynth.validation import DataError

    with pytest.raises(DataError, match=r"`phis` must"):
        datasets.nb_mixture_data(10, 1, phis=phis, probs=(1.0,) * max(len(phis), 1))


def test_nb_mixture_unnormalised_probs_are_normalised():
    a = datasets.nb_mixture_data(50, 3, probs=(1.0, 4.0))
    b = datasets.nb_mixture_data(50, 3, probs=(0.2, 0.8))
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("meanlog", [np.nan, np.inf, "0", True, None])
def test_lognormal_bad_meanlog(meanlog):
    from dpsynth.validation import DataError

    with pytest.raises(DataError, match=r"`meanlog` must be a finite number"):
        datasets.lognormal_data(10, 1, meanlog=meanlog)


def test_beta_data_with_degenerate_shapes_raises_instead_of_looping():
    from dpsynth.validation import DataError

    with pytest.raises(DataError, match="`a` and `b`"):
        datasets.beta_data(50, 1, a=1e-300, b=1.0)


def test_the_library_tests_draw_the_same_data_with_numpy():
    """``tests/simulated.py`` (the library's tests may not import the book) gives the simulators' draws exactly."""
    import simulated

    from dpsynth.seeds import stream

    np.testing.assert_array_equal(simulated.beta_data(300, 11), datasets.beta_data(300, 11))
    np.testing.assert_array_equal(simulated.beta_data(50, 0, a=0.5, b=3.0), datasets.beta_data(50, 0))
    np.testing.assert_array_equal(simulated.poisson_data(250, 31, mu=100.0), datasets.poisson_data(250, 31))
    np.testing.assert_array_equal(simulated.poisson_data(100, stream(1, 0, "data")),
                                  datasets.poisson_data(100, stream(1, 0, "data")))
    np.testing.assert_array_equal(simulated.lognormal_data(150, 41, meanlog=1.0, sdlog=0.6),
                                  datasets.lognormal_data(150, 41, meanlog=1.0, sdlog=0.6))
    a, b = np.random.default_rng(4), np.random.default_rng(4)
    np.testing.assert_array_equal(simulated.nb_draw(a, 100.0, 10.0, 400), datasets.nb_draw(b, 100.0, 10.0, 400))

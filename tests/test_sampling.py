"""Robust random variate generators: extreme parameters, moments, limits and errors.

Moment checks use large samples with fixed seeds and tolerances of several Monte Carlo
standard errors; they depend only on the documented distribution of NumPy's generators, not
on any sampler output.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dpsynth import sampling

PHIS = [1e12, 1e-30, 1e-20]
MUS = [0.0, 1e-300, 1e6, 1e30]
SHAPES = [1e-300, 1e-20, 1e300]
M = 200_000


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


# --------------------------------------------------------------------------------------------
# extreme parameters: finite, in the support, right shape and dtype
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lam", [0.0, 1e-300, 3.0, 1e15, 1e16, 9.3e18, 1e19, 1e100, 1e300, 1.7e308])
def test_poisson_extreme_means(lam):
    x = sampling.poisson(_rng(), np.full(500, lam))
    assert x.shape == (500,) and x.dtype == np.float64
    assert np.isfinite(x).all() and (x >= 0).all() and (x == np.round(x)).all()
    if lam == 0:
        assert (x == 0).all()
    if lam >= 1e15:
        np.testing.assert_allclose(x, lam, rtol=10 / np.sqrt(lam))


def test_poisson_infinite_mean_is_the_limit():
    np.testing.assert_array_equal(sampling.poisson(_rng(), [np.inf, 0.0]), [np.inf, 0.0])


@pytest.mark.parametrize("mu, phi", list(itertools.product(MUS, PHIS)))
def test_negative_binomial_extreme_parameters(mu, phi):
    x = sampling.negative_binomial(_rng(1), np.full(400, mu), np.full(400, phi))
    assert x.shape == (400,) and x.dtype == np.float64
    assert np.isfinite(x).all() and (x >= 0).all() and (x == np.round(x)).all()
    if mu == 0:
        assert (x == 0).all()
    if phi < 1e-10:
        # P(X > 0) = 1 - (phi / (phi + mu))**phi <= phi * log1p(mu / phi), about 1e-18 here
        assert (x == 0).all()


@pytest.mark.parametrize("mu, phi", [(1e30, 1e-20), (1e6, 1e-30), (1e300, 1e-300)])
def test_negative_binomial_where_numpy_fails(mu, phi):
    with pytest.raises(ValueError):
        _rng().negative_binomial(phi, phi / (phi + mu), size=10)
    x = sampling.negative_binomial(_rng(), mu, phi, size=10)
    assert np.isfinite(x).all() and (x >= 0).all()


def test_negative_binomial_huge_phi_keeps_the_gamma_variance():
    # mu >> phi: variance mu + mu^2/phi is dominated by the gamma part (no Poisson cut-off on phi)
    mu, phi = 1e30, 1e12
    z = sampling.negative_binomial(_rng(2), mu, phi, size=M) / mu - 1.0
    sd = np.sqrt(1.0 / mu + 1.0 / phi)
    assert abs(z.mean()) < 5 * sd / np.sqrt(M)
    assert z.std() / sd == pytest.approx(1.0, abs=0.02)


def test_negative_binomial_limits():
    x = sampling.negative_binomial(_rng(), [0.0, 5.0, np.inf, 0.0, 7.0], [np.inf, 0.0, 2.0, 0.0, np.inf])
    assert x[0] == 0 and x[1] == 0 and np.isposinf(x[2]) and x[3] == 0 and x[4] >= 0
    pois = sampling.negative_binomial(_rng(3), 7.0, np.inf, size=M)
    assert pois.mean() == pytest.approx(7.0, abs=5 * np.sqrt(7.0 / M))
    assert pois.var() == pytest.approx(7.0, rel=0.03)


@pytest.mark.parametrize("a, b", list(itertools.product(SHAPES, SHAPES)))
def test_beta_extreme_shapes(a, b):
    x = sampling.beta(_rng(4), np.full(400, a), np.full(400, b))
    assert x.shape == (400,) and x.dtype == np.float64
    assert np.isfinite(x).all() and ((x >= 0) & (x <= 1)).all()
    if a == b == 1e300:
        np.testing.assert_allclose(x, 0.5, atol=1e-12)
    elif a >= 1e3 * b:
        assert (x == 1).all()
    elif b >= 1e3 * a:
        assert (x == 0).all()


@pytest.mark.parametrize("a, b", [(1e-20, 3e-20), (1e-300, 3e-300), (1e-310, 3e-310)])
def test_beta_tiny_shapes_are_bernoulli_with_the_right_weight(a, b):
    # as a, b -> 0 with a / (a + b) fixed, Beta(a, b) -> Bernoulli(a / (a + b)) on {0, 1};
    # 1e-310 (subnormal) exercises the branch where both log gamma variates are -inf
    x = sampling.beta(_rng(5), a, b, size=M)
    assert set(np.unique(x)) <= {0.0, 1.0}
    p = a / (a + b)
    assert x.mean() == pytest.approx(p, abs=5 * np.sqrt(p * (1 - p) / M))


def test_beta_boundary_shapes_are_the_limits():
    x = sampling.beta(_rng(), [0.0, 2.0, np.inf, 2.0, 0.0, np.inf], [2.0, 0.0, 2.0, np.inf, np.inf, 0.0])
    np.testing.assert_array_equal(x, [0.0, 1.0, 1.0, 0.0, 0.0, 1.0])


@pytest.mark.parametrize("a, b", [(0.0, 0.0), (np.inf, np.inf)])
def test_beta_without_a_limit_raises(a, b):
    with pytest.raises(ValueError, match="`a` and `b`"):
        sampling.beta(_rng(), [1.0, a], [1.0, b])


def test_broadcasting_and_size():
    rng = _rng()
    assert sampling.negative_binomial(rng, np.ones((3, 1)), np.ones(4)).shape == (3, 4)
    assert sampling.beta(rng, np.ones((3, 1)), np.full(4, 2.0)).shape == (3, 4)
    assert sampling.poisson(rng, np.ones((2, 1)), size=(2, 5)).shape == (2, 5)
    assert sampling.negative_binomial(rng, 3.0, 2.0, size=7).shape == (7,)
    assert sampling.poisson(rng, 3.0).shape == ()


# --------------------------------------------------------------------------------------------
# moments at ordinary parameters
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lam", [0.7, 3.5, 250.0])
def test_poisson_moments(lam):
    x = sampling.poisson(_rng(6), lam, size=M)
    assert x.mean() == pytest.approx(lam, abs=5 * np.sqrt(lam / M))
    se_var = np.sqrt((lam * (1 + 3 * lam) - lam**2) / M)  # (mu4 - sigma^4) / n
    assert x.var() == pytest.approx(lam, abs=6 * se_var)


def test_poisson_normal_branch_moments():
    lam = 1e18
    z = (sampling.poisson(_rng(7), lam, size=M) - lam) / np.sqrt(lam)
    assert abs(z.mean()) < 5 / np.sqrt(M)
    assert z.std() == pytest.approx(1.0, abs=0.02)


@pytest.mark.parametrize("mu, phi", [(20.0, 2.5), (3.0, 0.4), (100.0, 50.0), (0.5, 1.0)])
def test_negative_binomial_moments(mu, phi):
    x = sampling.negative_binomial(_rng(8), mu, phi, size=M)
    var = mu + mu**2 / phi
    assert x.mean() == pytest.approx(mu, abs=5 * np.sqrt(var / M))
    assert x.var() == pytest.approx(var, rel=0.06)
    # P(X = 0) = (phi / (phi + mu))**phi
    p0 = (phi / (phi + mu)) ** phi
    assert (x == 0).mean() == pytest.approx(p0, abs=5 * np.sqrt(p0 * (1 - p0) / M))


@pytest.mark.parametrize("a, b", [(0.5, 3.0), (0.3, 0.2), (2.5, 4.0), (1.0, 1.0), (40.0, 0.7)])
def test_beta_moments(a, b):
    x = sampling.beta(_rng(9), a, b, size=M)
    assert ((x >= 0) & (x <= 1)).all()
    mean = a / (a + b)
    var = a * b / ((a + b) ** 2 * (a + b + 1))
    assert x.mean() == pytest.approx(mean, abs=5 * np.sqrt(var / M))
    assert x.var() == pytest.approx(var, rel=0.03)


# --------------------------------------------------------------------------------------------
# invalid parameters
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [np.nan, -1.0, -np.inf])
def test_invalid_parameters_raise_naming_the_argument(bad):
    rng = _rng()
    with pytest.raises(ValueError, match="`lam`"):
        sampling.poisson(rng, [1.0, bad])
    with pytest.raises(ValueError, match="`mu`"):
        sampling.negative_binomial(rng, [1.0, bad], 2.0)
    with pytest.raises(ValueError, match="`phi`"):
        sampling.negative_binomial(rng, 1.0, [bad, 2.0])
    with pytest.raises(ValueError, match="`a`"):
        sampling.beta(rng, bad, 1.0)
    with pytest.raises(ValueError, match="`b`"):
        sampling.beta(rng, 1.0, bad)

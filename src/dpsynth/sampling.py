"""Random variate generators that are valid over the whole parameter space.

The simulators of :mod:`dpsynth.models` draw one record per posterior draw, and posterior
draws can be extreme (a dispersion ``phi`` of ``1e-30`` or ``1e12``, a Beta shape that
underflowed to 0). NumPy's own samplers reject parts of the mathematically valid parameter
space: ``Generator.poisson`` raises for ``lam`` above about ``9.2e18``,
``Generator.negative_binomial`` raises ("n too large or p too small") when ``phi / (phi + mu)``
is tiny, and ``Generator.beta`` raises for a shape of exactly 0. Since sampler output is not
bit-identical across machines, such draws will eventually happen; the generators here accept
them.

All functions take a :class:`numpy.random.Generator` and broadcastable parameter arrays, are
vectorised (no Python loop over records) and return float64 arrays. NaN and negative
parameters raise :class:`ValueError` naming the offending argument. Boundary values (0, inf)
are mapped to the limiting distribution, as documented in each function.

Notes
-----
The random streams differ from NumPy's samplers of the same name: the same seed gives
different (equally distributed) values.
"""

from __future__ import annotations

import numpy as np
from scipy import special

__all__ = ["poisson", "negative_binomial", "beta", "POISSON_NORMAL_THRESHOLD"]

#: Above this mean the Poisson is drawn from its normal approximation (see :func:`poisson`).
POISSON_NORMAL_THRESHOLD: float = 1e15

Size = int | tuple[int, ...] | None


def _param(x: np.ndarray | float, name: str) -> np.ndarray:
    """Return ``x`` as a float64 array; raise if any entry is NaN or negative."""
    arr = np.asarray(x, dtype=float)
    bad = np.isnan(arr) | (arr < 0)
    if bad.any():
        raise ValueError(
            f"`{name}` must be non-negative and not NaN; got {arr[bad].ravel()[0]!r} "
            f"({int(bad.sum())} invalid value(s))."
        )
    return arr


def _broadcast(size: Size, *arrays: np.ndarray) -> list[np.ndarray]:
    """Broadcast the parameter arrays to ``size`` (or to their common shape)."""
    shape = np.broadcast_shapes(*(a.shape for a in arrays)) if size is None else size
    return [np.array(np.broadcast_to(a, shape), dtype=float) for a in arrays]


def _gamma_parts(rng: np.random.Generator, shape: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pieces of a standard gamma variate that stay representable for any shape in (0, inf).

    For ``shape >= 1`` the variate is ``g`` itself. For ``shape < 1`` it is
    ``G(shape) = G(shape + 1) * U**(1/shape)``, returned on the log scale as
    ``log g - e / shape`` with ``g ~ Gamma(shape + 1)`` and ``e = -log U ~ Exp(1)``, because
    ``U**(1/shape)`` underflows for tiny shapes. Entries of ``shape`` that are 0 or inf must
    be masked by the caller (a placeholder shape of 1 is drawn there).

    Returns
    -------
    g : numpy.ndarray
        ``Gamma(shape)`` draws where ``shape >= 1``, ``Gamma(shape + 1)`` draws elsewhere.
    e : numpy.ndarray
        Standard exponential draws (used only where ``shape < 1``).
    small : numpy.ndarray of bool
        ``shape < 1``.
    """
    ok = np.isfinite(shape) & (shape > 0)
    s = np.where(ok, shape, 1.0)
    small = s < 1.0
    g = rng.standard_gamma(np.where(small, s + 1.0, s))
    e = rng.standard_exponential(s.shape)
    return g, e, small


def poisson(rng: np.random.Generator, lam: np.ndarray | float, size: Size = None) -> np.ndarray:
    """Poisson draws with mean ``lam``, for every ``lam`` in ``[0, inf]``.

    Parameters
    ----------
    rng : numpy.random.Generator
        Random stream.
    lam : array_like
        Means, non-negative.
    size : int or tuple of int, optional
        Output shape; ``lam`` must broadcast to it. Default: the shape of ``lam``.

    Returns
    -------
    numpy.ndarray
        Float64 counts. ``lam = 0`` gives 0 and ``lam = inf`` gives inf (the limit).

    Raises
    ------
    ValueError
        If ``lam`` has a NaN or negative entry.

    Notes
    -----
    For ``lam > POISSON_NORMAL_THRESHOLD`` (``1e15``) the draw is
    ``max(0, round(lam + sqrt(lam) * z))`` with ``z`` standard normal: NumPy's sampler fails
    above about ``9.2e18``, and at these means the normal approximation is exact to far below
    the Poisson's own spread (skewness ``lam**-0.5 <= 3e-8``; the relative error of any
    quantile is nil in float64).
    """
    (lam,) = _broadcast(size, _param(lam, "lam"))
    out = np.zeros(lam.shape)
    big = lam > POISSON_NORMAL_THRESHOLD
    mid = (lam > 0) & ~big
    if mid.any():
        out[mid] = rng.poisson(lam[mid])
    if big.any():
        lb = lam[big]
        with np.errstate(invalid="ignore"):  # inf + sqrt(inf) * z with z < 0 is still inf
            draw = np.round(lb + np.sqrt(lb) * rng.standard_normal(lb.shape))
        out[big] = np.where(np.isposinf(lb), np.inf, np.maximum(draw, 0.0))
    return out


def negative_binomial(
    rng: np.random.Generator, mu: np.ndarray | float, phi: np.ndarray | float, size: Size = None
) -> np.ndarray:
    """NB2 draws with mean ``mu`` and dispersion ``phi`` (variance ``mu + mu**2 / phi``).

    Drawn as the gamma-Poisson mixture ``lambda ~ Gamma(shape=phi, scale=mu/phi)``,
    ``x ~ Poisson(lambda)`` (with :func:`poisson`, so any ``lambda`` is accepted).

    Parameters
    ----------
    rng : numpy.random.Generator
        Random stream.
    mu : array_like
        Means, in ``[0, inf]``.
    phi : array_like
        Dispersions, in ``[0, inf]``.
    size : int or tuple of int, optional
        Output shape; the parameters must broadcast to it. Default: their broadcast shape.

    Returns
    -------
    numpy.ndarray
        Float64 counts, never NaN. Limits: ``mu = 0`` gives 0; otherwise ``phi = 0`` gives 0
        (the NB puts all its mass at 0 as ``phi -> 0``); otherwise ``mu = inf`` gives inf;
        ``phi = inf`` is the Poisson with mean ``mu``.

    Raises
    ------
    ValueError
        If ``mu`` or ``phi`` has a NaN or negative entry.

    Notes
    -----
    For ``phi >= 1`` the mixing mean is ``(G / phi) * mu`` with ``G ~ Gamma(phi)``, which stays
    accurate for any finite ``phi`` (no Poisson cut-off on ``phi`` alone: with ``mu >> phi``,
    e.g. ``mu = 1e30`` and ``phi = 1e12``, the gamma part dominates the variance). For
    ``phi < 1`` the gamma variate is formed on the log scale,
    ``log lambda = log G(phi + 1) - E / phi + log mu - log phi``, so that ``mu / phi``
    overflowing or the gamma draw underflowing (``phi = 1e-30``) cannot give ``0 * inf``: the
    draw is then 0, the correct limit. A mixing mean beyond the float64 range gives inf.
    NumPy's ``negative_binomial`` raises in these regimes (``phi = 1e-20`` with ``mu = 1e30``).
    """
    mu, phi = _broadcast(size, _param(mu, "mu"), _param(phi, "phi"))
    g, e, small = _gamma_parts(rng, phi)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore", under="ignore"):
        lam_big = (g / phi) * mu
        lam_small = np.exp(np.log(g) - e / phi + np.log(mu) - np.log(phi))
        lam = np.where(small, lam_small, lam_big)
    lam = np.where(np.isposinf(phi), mu, lam)
    lam = np.where(np.isposinf(mu), np.inf, lam)
    lam = np.where((mu == 0) | (phi == 0), 0.0, lam)
    return poisson(rng, lam)


def beta(rng: np.random.Generator, a: np.ndarray | float, b: np.ndarray | float, size: Size = None) -> np.ndarray:
    """Beta(a, b) draws for shapes of any size, including ``1e-300`` and ``1e300``.

    ``X = G_a / (G_a + G_b)`` with independent gamma variates. Where either shape is below 1
    the variates are formed on the log scale (``log G(a) = log G(a + 1) + log(U) / a``) and
    ``X = expit(log G_a - log G_b)``; where both shapes are at least 1, ``X = 1 / (1 + G_b / G_a)``
    (full relative precision, no overflow).

    Parameters
    ----------
    rng : numpy.random.Generator
        Random stream.
    a, b : array_like
        Shapes, in ``[0, inf]`` but not both 0 and not both inf.
    size : int or tuple of int, optional
        Output shape; the shapes must broadcast to it. Default: their broadcast shape.

    Returns
    -------
    numpy.ndarray
        Float64 draws in the closed interval ``[0, 1]``, never NaN. Values that round to 0 or 1
        in float64 are returned as such: with tiny shapes most of the mass lies within
        ``exp(-1/a)`` of 0 or 1 (e.g. ``a = 1e-20``), which float64 cannot separate from the
        end point. Limits: ``a = 0`` (with ``b > 0``) gives 0, ``b = 0`` (with ``a > 0``) gives 1,
        ``a = inf`` (with ``b`` finite) gives 1, ``b = inf`` (with ``a`` finite) gives 0.

    Raises
    ------
    ValueError
        If ``a`` or ``b`` has a NaN or negative entry, or if ``a`` and ``b`` are both 0 or
        both inf (no limiting distribution).
    """
    a, b = _broadcast(size, _param(a, "a"), _param(b, "b"))
    if ((a == 0) & (b == 0)).any() or (np.isposinf(a) & np.isposinf(b)).any():
        raise ValueError("`a` and `b` must not both be 0 or both be inf (the Beta has no limit there).")
    ga, ea, sa = _gamma_parts(rng, a)
    gb, eb, sb = _gamma_parts(rng, b)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore", under="ignore"):
        # both shapes >= 1: plain ratio (an overflowing ratio gives 1 / inf = 0, correct)
        x_ratio = 1.0 / (1.0 + gb / ga)
        # a shape < 1: log scale
        la = np.log(ga) - np.where(sa, ea / a, 0.0)
        lb = np.log(gb) - np.where(sb, eb / b, 0.0)
        x_log = special.expit(la - lb)
        # both log variates -inf (both shapes tiny): compare log(e/shape), the dominant terms
        tie = np.isnan(x_log)
        if tie.any():
            x_log = np.where(tie, (np.log(ea) - np.log(a) < np.log(eb) - np.log(b)).astype(float), x_log)
    x = np.where(sa | sb, x_log, x_ratio)
    x = np.where((a == 0) | np.isposinf(b), 0.0, x)
    x = np.where((b == 0) | np.isposinf(a), 1.0, x)
    return x

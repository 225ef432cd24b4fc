"""Simulators of the data-generating processes of the papers' simulation studies."""

from __future__ import annotations

import numpy as np

from dpsynth.seeds import SeedLike, generator
from dpsynth.validation import DataError, check_positive

__all__ = ["beta_data", "poisson_data", "nb_mixture_data", "lognormal_data", "nb_draw"]


def _n(n: int) -> int:
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"`n` must be a positive integer; got {n!r}.")
    return int(n)


def beta_data(n: int = 2000, seed: SeedLike = None, *, a: float = 0.5, b: float = 3.0) -> np.ndarray:
    """``n`` draws from Beta(a, b) (censoring study: Beta(0.5, 3), n = 2000).

    Draws that round to exactly 0 or 1 in floating point are redrawn so that the data lie in
    the open interval the Beta model needs; this is part of the generating process, not a
    change to user data.
    """
    rng = generator(seed)
    x = rng.beta(check_positive(a, "a"), check_positive(b, "b"), size=_n(n))
    bad = (x <= 0) | (x >= 1)
    for _ in range(100):
        if not bad.any():
            return x
        x[bad] = rng.beta(a, b, size=int(bad.sum()))
        bad = (x <= 0) | (x >= 1)
    raise DataError(
        f"Beta({a!r}, {b!r}) draws keep rounding to exactly 0 or 1 in floating point; `a` and `b` this "
        f"extreme cannot give data in the open interval (0, 1). Use shapes nearer 1."
    )


def poisson_data(n: int = 1000, seed: SeedLike = None, *, mu: float = 100.0) -> np.ndarray:
    """``n`` Poisson(mu) counts (re-weighting study: Poisson(100), n = 1000)."""
    return generator(seed).poisson(check_positive(mu, "mu"), size=_n(n)).astype(float)


def nb_draw(rng: np.random.Generator, mu: float, phi: float, size: int) -> np.ndarray:
    """NB2 draws with mean ``mu`` and dispersion ``phi`` (variance ``mu + mu^2/phi``).

    Drawn with :func:`dpsynth.sampling.negative_binomial` (gamma-Poisson mixture, valid for any
    ``mu`` and ``phi`` in ``[0, inf]``); its random stream differs from NumPy's
    ``Generator.negative_binomial``.
    """
    from dpsynth import sampling

    return sampling.negative_binomial(rng, mu, phi, size=size)


def nb_mixture_data(
    n: int = 1000, seed: SeedLike = None, *, mu: float = 100.0, phis: tuple = (5.0, 20.0), probs: tuple = (0.2, 0.8)
) -> np.ndarray:
    """Mixture ``0.2 NB(mu=100, phi=5) + 0.8 NB(mu=100, phi=20)`` (re-weighting study).

    Parameters
    ----------
    n : int
        Number of draws.
    seed : int or SeedSequence, optional
        Seed.
    mu : float
        Common mean (> 0).
    phis : sequence of float
        Dispersion of each component (finite, > 0).
    probs : sequence of float
        Mixing weights, one per component: finite, >= 0 and not all 0. They are normalised to
        sum to 1 (``(1, 4)`` means ``(0.2, 0.8)``).

    Returns
    -------
    numpy.ndarray
    """
    n = _n(n)
    m = check_positive(mu, "mu", allow_zero=True)
    ph = np.asarray(phis, dtype=float) if _numeric_seq(phis) else None
    if ph is None or ph.ndim != 1 or ph.size == 0:
        raise DataError(f"`phis` must be a non-empty sequence of numbers (one dispersion per component); got {phis!r}.")
    if not (np.isfinite(ph).all() and (ph > 0).all()):
        raise DataError(f"`phis` must hold finite dispersions > 0; got {phis!r}.")
    pr = np.asarray(probs, dtype=float) if _numeric_seq(probs) else None
    if pr is None or pr.ndim != 1:
        raise DataError(f"`probs` must be a sequence of numbers (one mixing weight per component); got {probs!r}.")
    if pr.size != ph.size:
        raise DataError(
            f"`probs` has {pr.size} mixing weight(s) but `phis` has {ph.size} component(s); "
            "pass one weight per component."
        )
    if not (np.isfinite(pr).all() and (pr >= 0).all()) or pr.sum() <= 0:
        raise DataError(f"`probs` must hold finite mixing weights >= 0, not all 0; got {probs!r}.")
    rng = generator(seed)
    comp = rng.choice(ph.size, size=n, p=pr / pr.sum())
    out = np.empty(n)
    for j, phi in enumerate(ph):
        sel = comp == j
        out[sel] = nb_draw(rng, m, float(phi), int(sel.sum()))
    return out


def _numeric_seq(v) -> bool:
    """Whether ``v`` is a sequence of real numbers (no str, bool or object values)."""
    if isinstance(v, (str, bytes)):
        return False
    try:
        arr = np.asarray(v)
    except (TypeError, ValueError):
        return False
    return arr.dtype.kind in "iuf"


def lognormal_data(n: int = 1000, seed: SeedLike = None, *, meanlog: float = 0.0, sdlog: float = 1.0) -> np.ndarray:
    """``n`` lognormal draws with log-mean ``meanlog`` (finite) and log-sd ``sdlog`` (> 0)."""
    if isinstance(meanlog, (bool, np.bool_)) or not isinstance(meanlog, (int, float, np.integer, np.floating)) \
            or not np.isfinite(meanlog):
        raise DataError(f"`meanlog` must be a finite number (the mean of log x); got {meanlog!r}.")
    return generator(seed).lognormal(float(meanlog), check_positive(sdlog, "sdlog"), size=_n(n))

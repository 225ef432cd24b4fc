"""Simulators of the seeds' data-generating processes."""

from __future__ import annotations

import numpy as np

from .seeds import SeedLike, generator
from .validation import check_positive

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
    while bad.any():
        x[bad] = rng.beta(a, b, size=int(bad.sum()))
        bad = (x <= 0) | (x >= 1)
    return x


def poisson_data(n: int = 1000, seed: SeedLike = None, *, mu: float = 100.0) -> np.ndarray:
    """``n`` Poisson(mu) counts (re-weighting study: Poisson(100), n = 1000)."""
    return generator(seed).poisson(check_positive(mu, "mu"), size=_n(n)).astype(float)


def nb_draw(rng: np.random.Generator, mu: float, phi: float, size: int) -> np.ndarray:
    """NB2 draws with mean ``mu`` and dispersion ``phi`` (variance ``mu + mu^2/phi``)."""
    return rng.negative_binomial(phi, phi / (phi + mu), size=size).astype(float)


def nb_mixture_data(
    n: int = 1000, seed: SeedLike = None, *, mu: float = 100.0, phis: tuple = (5.0, 20.0), probs: tuple = (0.2, 0.8)
) -> np.ndarray:
    """Mixture ``0.2 NB(mu=100, phi=5) + 0.8 NB(mu=100, phi=20)`` (re-weighting study)."""
    rng = generator(seed)
    n = _n(n)
    comp = rng.choice(len(phis), size=n, p=np.asarray(probs) / np.sum(probs))
    out = np.empty(n)
    for j, phi in enumerate(phis):
        sel = comp == j
        out[sel] = nb_draw(rng, mu, phi, int(sel.sum()))
    return out


def lognormal_data(n: int = 1000, seed: SeedLike = None, *, meanlog: float = 0.0, sdlog: float = 1.0) -> np.ndarray:
    """``n`` lognormal draws with log-mean ``meanlog`` and log-sd ``sdlog``."""
    return generator(seed).lognormal(meanlog, check_positive(sdlog, "sdlog"), size=_n(n))

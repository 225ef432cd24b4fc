"""Data for the library's tests, drawn with NumPy: the draws of the book's simulators, without the book.

The library's tests must not import the compendium (``dpsynth_book``), whose ``datasets`` module holds the
papers' simulators. These are the same draws from the same streams (``dpsynth.seeds.generator``), so a
test gets exactly the data it got from ``dpsynth_book.datasets`` (``tests/book/test_datasets.py`` holds
the two equal), with none of the simulators' argument checks.
"""

from __future__ import annotations

import numpy as np

from dpsynth.sampling import negative_binomial
from dpsynth.seeds import SeedLike, generator


def beta_data(n: int, seed: SeedLike = None, *, a: float = 0.5, b: float = 3.0) -> np.ndarray:
    """``n`` draws from Beta(a, b), all inside (0, 1) (as ``dpsynth_book.datasets.beta_data``)."""
    x = generator(seed).beta(a, b, size=n)
    assert ((x > 0) & (x < 1)).all(), "a draw at 0 or 1: use dpsynth_book.datasets.beta_data, which redraws it"
    return x


def poisson_data(n: int, seed: SeedLike = None, *, mu: float = 100.0) -> np.ndarray:
    """``n`` Poisson(mu) counts as floats."""
    return generator(seed).poisson(mu, size=n).astype(float)


def lognormal_data(n: int, seed: SeedLike = None, *, meanlog: float = 0.0, sdlog: float = 1.0) -> np.ndarray:
    """``n`` lognormal draws."""
    return generator(seed).lognormal(meanlog, sdlog, size=n)


def nb_draw(rng: np.random.Generator, mu: float, phi: float, size: int) -> np.ndarray:
    """NB2 draws with mean ``mu`` and dispersion ``phi`` (the library's gamma-Poisson sampler)."""
    return negative_binomial(rng, mu, phi, size=size)

"""Utility metrics between confidential and synthetic data."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .seeds import SeedLike, generator
from .validation import DataError, as_data

__all__ = ["ecdf_distances", "ECDFDistances", "summary_stats", "STAT_NAMES", "bootstrap_interval", "interval_over_sets"]

#: Analysis-specific statistics reported for every synthesizer.
STAT_NAMES = ("mean", "median", "q15", "q90")


@dataclass(frozen=True)
class ECDFDistances:
    """``max_ecdf = max |F_x - F_x*|`` and ``avg_ecdf = mean (F_x - F_x*)^2`` over the pooled sample."""

    max_ecdf: float
    avg_ecdf: float


def ecdf_distances(x, x_syn) -> ECDFDistances:
    """ECDF distances between confidential ``x`` and synthetic ``x_syn``.

    Both ECDFs are evaluated at every point of the pooled sample (x and x_syn together).
    """
    a = np.sort(as_data(x, "x"))
    b = np.sort(as_data(x_syn, "x_syn"))
    pooled = np.concatenate([a, b])
    Fa = np.searchsorted(a, pooled, side="right") / a.size
    Fb = np.searchsorted(b, pooled, side="right") / b.size
    d = Fa - Fb
    return ECDFDistances(max_ecdf=float(np.max(np.abs(d))), avg_ecdf=float(np.mean(d**2)))


def summary_stats(x) -> dict[str, float]:
    """Mean, median, 15th and 90th percentiles of ``x``."""
    v = as_data(x, "x")
    q15, med, q90 = np.quantile(v, [0.15, 0.5, 0.90])
    return {"mean": float(v.mean()), "median": float(med), "q15": float(q15), "q90": float(q90)}


def _stat_fn(stat: str):
    fns = {
        "mean": lambda v, axis=-1: v.mean(axis=axis),
        "median": lambda v, axis=-1: np.quantile(v, 0.5, axis=axis),
        "q15": lambda v, axis=-1: np.quantile(v, 0.15, axis=axis),
        "q90": lambda v, axis=-1: np.quantile(v, 0.90, axis=axis),
    }
    if stat not in fns:
        raise DataError(f"`stat` must be one of {sorted(fns)}; got {stat!r}.")
    return fns[stat]


def bootstrap_interval(x, stat: str = "mean", *, level: float = 0.95, n_boot: int = 2000, seed: SeedLike = None) -> tuple[float, float]:
    """Percentile bootstrap interval of ``stat`` from resampling the records of one data set."""
    v = as_data(x, "x")
    if not 0 < level < 1:
        raise DataError(f"`level` must be in (0, 1); got {level!r}.")
    rng = generator(seed)
    idx = rng.integers(v.size, size=(n_boot, v.size))
    reps = _stat_fn(stat)(v[idx], axis=1)
    a = (1 - level) / 2
    lo, hi = np.quantile(reps, [a, 1 - a])
    return float(lo), float(hi)


def interval_over_sets(values, *, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of a statistic over synthetic data sets (or replicates)."""
    v = as_data(values, "values")
    if not 0 < level < 1:
        raise DataError(f"`level` must be in (0, 1); got {level!r}.")
    a = (1 - level) / 2
    lo, hi = np.quantile(v, [a, 1 - a])
    return float(lo), float(hi)

"""Utility metrics between confidential and synthetic data."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .seeds import SeedLike, generator
from .validation import DataError, as_data

__all__ = ["ecdf_distances", "ECDFDistances", "summary_stats", "STAT_NAMES", "bootstrap_interval", "interval_over_sets",
           "log_regression"]

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


def _check_level(level) -> float:
    if isinstance(level, (bool, np.bool_)) or not isinstance(level, (int, float, np.integer, np.floating)):
        raise DataError(f"`level` must be a number in (0, 1), e.g. level=0.95; got {level!r} ({type(level).__name__}).")
    if not 0 < level < 1:
        raise DataError(f"`level` must be in (0, 1); got {level!r}. Pass e.g. level=0.95 (not 95).")
    return float(level)


def _stat_fn(stat: str):
    fns = {
        "mean": lambda v, axis=-1: v.mean(axis=axis),
        "median": lambda v, axis=-1: np.quantile(v, 0.5, axis=axis),
        "q15": lambda v, axis=-1: np.quantile(v, 0.15, axis=axis),
        "q90": lambda v, axis=-1: np.quantile(v, 0.90, axis=axis),
    }
    if not isinstance(stat, str) or stat not in fns:
        raise DataError(f"`stat` must be one of {sorted(fns)}; got {stat!r}.")
    return fns[stat]


def bootstrap_interval(
    x, stat: str = "mean", *, level: float = 0.95, n_boot: int = 2000, seed: SeedLike = None
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``stat`` from resampling the records of one data set.

    Parameters
    ----------
    x : array_like
        One data set.
    stat : {"mean", "median", "q15", "q90"}
        Statistic.
    level : float
        Interval level in (0, 1).
    n_boot : int
        Number of bootstrap resamples (a positive integer).
    seed : int or SeedSequence, optional
        Seed of the resampling.

    Returns
    -------
    (float, float)
        Lower and upper end.
    """
    v = as_data(x, "x")
    lvl = _check_level(level)
    fn = _stat_fn(stat)
    if isinstance(n_boot, (bool, np.bool_)) or not isinstance(n_boot, (int, np.integer)) or n_boot < 1:
        raise DataError(
            f"`n_boot` must be a positive integer (number of bootstrap resamples, e.g. 2000); got {n_boot!r}."
        )
    rng = generator(seed)
    idx = rng.integers(v.size, size=(int(n_boot), v.size))
    reps = fn(v[idx], axis=1)
    a = (1 - lvl) / 2
    lo, hi = np.quantile(reps, [a, 1 - a])
    return float(lo), float(hi)


def interval_over_sets(values, *, level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of a statistic over synthetic data sets (or replicates)."""
    v = as_data(values, "values")
    a = (1 - _check_level(level)) / 2
    lo, hi = np.quantile(v, [a, 1 - a])
    return float(lo), float(hi)


def log_regression(y, X) -> np.ndarray:
    """Least-squares coefficients of ``log y`` on the design ``X`` (the analyst's regression).

    Parameters
    ----------
    y : array_like
        Positive outcomes (confidential or synthetic), one per row of ``X``.
    X : array_like
        ``(n, p)`` design matrix of full column rank (an intercept column included by the caller).

    Returns
    -------
    numpy.ndarray
        The ``p`` coefficients.
    """
    v = as_data(y, "y")
    if (v <= 0).any():
        raise DataError(f"`y` must be positive to take logs; {int((v <= 0).sum())} value(s) are <= 0.")
    A = as_data(X, "X", ndim=2)
    if A.shape[0] != v.size:
        raise DataError(f"`X` has {A.shape[0]} rows but `y` has {v.size} values.")
    coef, _, rank, _ = np.linalg.lstsq(A, np.log(v), rcond=None)
    if rank < A.shape[1]:
        raise DataError(f"`X` has rank {rank} < {A.shape[1]} columns; drop collinear columns.")
    return coef

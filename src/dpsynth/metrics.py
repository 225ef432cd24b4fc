"""Utility metrics between confidential and synthetic data.

* the marginal: ECDF distances on the pooled sample (:func:`ecdf_distances`) and summary statistics;
* an analysis: least-squares coefficients with their confidence intervals (:func:`ols`,
  :func:`log_regression`) and the overlap of two intervals (:func:`interval_overlap`);
* the whole table: the propensity-score mean-squared error (:func:`pmse`) of Woo et al. (2009), with
  its expectation under a correct synthesizer (Snoke et al. 2018).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .seeds import SeedLike, generator
from .validation import DataError, as_data

__all__ = ["ecdf_distances", "ECDFDistances", "summary_stats", "STAT_NAMES", "bootstrap_interval", "interval_over_sets",
           "log_regression", "ols", "OLSFit", "interval_overlap", "pmse", "PMSE"]

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


@dataclass(frozen=True)
class OLSFit:
    """Least-squares coefficients with their standard errors and confidence intervals.

    Attributes
    ----------
    coef, se, lower, upper : numpy.ndarray
        One value per column of the design: estimate, standard error ``sqrt(s^2 (X'X)^-1)_jj``, and
        the ends of the interval ``coef +- t_{df, (1+level)/2} se``.
    sigma : float
        Residual standard deviation ``s`` (residual sum of squares over ``df``).
    df : int
        Residual degrees of freedom ``n - p``.
    level : float
        Interval level.
    """

    coef: np.ndarray
    se: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    sigma: float
    df: int
    level: float


def ols(y, X, *, level: float = 0.95) -> OLSFit:
    """Ordinary least squares of ``y`` on the design ``X``, with t intervals from the OLS standard errors.

    Parameters
    ----------
    y : array_like
        Outcomes, one per row of ``X`` (already on the analysis scale, e.g. ``log y``).
    X : array_like
        ``(n, p)`` design of full column rank, ``n > p`` (an intercept column included by the caller).
    level : float
        Interval level in (0, 1).

    Returns
    -------
    OLSFit
    """
    from scipy import linalg, stats

    v = as_data(y, "y")
    A = as_data(X, "X", ndim=2)
    lvl = _check_level(level)
    n, p = A.shape
    if n != v.size:
        raise DataError(f"`X` has {n} rows but `y` has {v.size} values.")
    if n <= p:
        raise DataError(f"`X` has {n} rows for {p} columns; the intervals need more records than coefficients.")
    Q, R = np.linalg.qr(A)
    d = np.abs(np.diag(R))
    rank = int((d > d.max() * max(n, p) * np.finfo(float).eps).sum()) if d.max() > 0 else 0
    if rank < p:
        raise DataError(f"`X` has rank {rank} < {p} columns; drop collinear columns.")
    coef = linalg.solve_triangular(R, Q.T @ v)
    resid = v - A @ coef
    df = n - p
    s2 = float(resid @ resid) / df
    Rinv = linalg.solve_triangular(R, np.eye(p))
    se = np.sqrt(s2 * np.sum(Rinv**2, axis=1))  # diag of (R'R)^-1 = Rinv Rinv'
    t = float(stats.t.ppf(0.5 + lvl / 2, df))
    return OLSFit(coef=coef, se=se, lower=coef - t * se, upper=coef + t * se, sigma=float(np.sqrt(s2)), df=df,
                  level=lvl)


def interval_overlap(lower, upper, lower_syn, upper_syn) -> np.ndarray:
    """Overlap of the confidence intervals of one estimate from confidential and synthetic data (Karr et al. 2006).

    ``J = (o / (U - L) + o / (U* - L*)) / 2`` with ``o = max(0, min(U, U*) - max(L, L*))``: 1 for
    identical intervals, 0 for disjoint ones. Works elementwise on arrays of intervals.
    """
    lo, hi = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    lo_s, hi_s = np.asarray(lower_syn, dtype=float), np.asarray(upper_syn, dtype=float)
    if np.any(hi <= lo) or np.any(hi_s <= lo_s):
        raise DataError("every interval must have `upper` > `lower`.")
    o = np.maximum(0.0, np.minimum(hi, hi_s) - np.maximum(lo, lo_s))
    return 0.5 * (o / (hi - lo) + o / (hi_s - lo_s))


@dataclass(frozen=True)
class PMSE:
    """Propensity-score mean-squared error of a synthetic table against the original (:func:`pmse`).

    Attributes
    ----------
    pmse : float
        ``mean((p_hat - c)^2)`` over the stacked records.
    null : float
        Its expectation for a correct synthesizer, ``(k - 1) (1 - c)^2 c / N`` (Snoke et al. 2018).
    ratio : float
        ``pmse / null`` (about 1 for a correct synthesizer; NaN when ``k = 1``).
    k : int
        Parameters of the logistic regression (intercept included; constant or collinear columns dropped).
    c : float
        Share of synthetic records, ``n_syn / N``.
    n_original, n_synthetic : int
        Records of each table.
    converged : bool
        Whether the logistic fit converged (it does not when the tables are perfectly separable;
        the pMSE is then near its maximum ``c (1 - c)``).
    """

    pmse: float
    null: float
    ratio: float
    k: int
    c: float
    n_original: int
    n_synthetic: int
    converged: bool


def _features(a, name: str) -> np.ndarray:
    arr = np.asarray(a, dtype=float) if not hasattr(a, "to_numpy") else a.to_numpy(dtype=float)
    return as_data(arr.reshape(-1, 1) if arr.ndim == 1 else arr, name, ndim=2)


#: The ridge penalty of the propensity model, ``RIDGE / 2 * |beta|^2`` on the standardised features (not the
#: intercept): it leaves a well-posed fit as it is (to about 1e-8 in the probabilities) and gives a separated or
#: rank-deficient one (many interactions, few records) a unique, finite maximum.
RIDGE = 1e-6


def _logistic_fit(Z: np.ndarray, y: np.ndarray, *, max_iter: int = 100, tol: float = 1e-9,
                  ridge: float = RIDGE) -> tuple[np.ndarray, bool]:
    """Ridge-penalised logistic regression by Newton's method (IRLS) with step halving: (fitted p, converged).

    The first column of ``Z`` is the intercept (not penalised). Not converged: Newton's method did not
    settle, or the two classes are perfectly separated (the fitted probabilities are then near 0 and 1)."""
    from scipy.special import expit, log_expit

    pen = np.full(Z.shape[1], float(ridge))
    pen[0] = 0.0

    def loglik(beta):
        eta = Z @ beta
        return float(np.sum(y * log_expit(eta) + (1 - y) * log_expit(-eta)) - 0.5 * np.sum(pen * beta**2))

    beta = np.zeros(Z.shape[1])
    ll = loglik(beta)
    for _ in range(max_iter):
        p = expit(Z @ beta)
        w = p * (1 - p)
        H = Z.T @ (Z * w[:, None]) + np.diag(pen)
        g = Z.T @ (y - p) - pen * beta
        step = np.linalg.lstsq(H, g, rcond=None)[0]
        t = 1.0
        while True:
            new = beta + t * step
            ll_new = loglik(new)
            if ll_new >= ll - 1e-12 * abs(ll) or t < 1e-8:
                break
            t /= 2
        moved = float(np.max(np.abs(new - beta)))
        beta, ll = new, ll_new
        if moved <= tol * max(1.0, float(np.max(np.abs(beta)))):
            break
    else:
        eta = Z @ beta
        return expit(eta), False
    eta = Z @ beta
    separated = bool(np.all((2 * y - 1) * eta > 0))  # every record on its side: no maximum-likelihood fit exists
    return expit(eta), not separated


def pmse(original, synthetic, *, interactions: bool = False) -> PMSE:
    """Propensity-score mean-squared error (Woo et al. 2009; Snoke et al. 2018), the utility measure of synthpop.

    Stacks the two tables, labels the synthetic records 1 and the original ones 0, fits a logistic
    regression of the label on an intercept and the columns (main effects, each standardised over
    the stacked records, and with ``interactions=True`` every product of two of them; constant and
    collinear columns are dropped; a small ridge penalty, :data:`RIDGE`, keeps a separated or
    rank-deficient fit finite), and returns
    ``pMSE = mean((p_hat - c)^2)`` with ``c = n_syn / N``, next to its expectation for a correct
    synthesizer, ``(k - 1) (1 - c)^2 c / N`` for ``k`` parameters, and their ratio.

    That expectation counts the randomness of the synthesis only (the synthetic records drawn from
    the original's own distribution). Two independent samples of one distribution give
    ``(k - 1) c (1 - c) / N``, a ratio of ``1 / (1 - c)`` (2 for tables of one size), and so does a
    synthesizer that draws its parameters from the posterior when its model is right.

    Parameters
    ----------
    original, synthetic : array_like
        ``(n, q)`` numeric features of the original and the synthetic records (the same ``q`` columns,
        no intercept: numbers as they are, categories as indicator columns); 1-d for one column.
    interactions : bool
        Add the pairwise products of the standardised features (an interaction-aware propensity model).

    Returns
    -------
    PMSE
    """
    from scipy import linalg

    A = _features(original, "original")
    B = _features(synthetic, "synthetic")
    if A.shape[1] != B.shape[1]:
        raise DataError(f"`original` has {A.shape[1]} column(s) but `synthetic` has {B.shape[1]}; pass the same "
                        f"features of both tables.")
    Xs = np.vstack([A, B])
    y = np.r_[np.zeros(A.shape[0]), np.ones(B.shape[0])]
    N = y.size
    c = B.shape[0] / N
    sd = Xs.std(axis=0)
    scale = np.maximum(np.abs(Xs).max(axis=0), 1.0)
    keep = sd > 1e-12 * scale
    S = (Xs[:, keep] - Xs[:, keep].mean(axis=0)) / sd[keep]
    if interactions and S.shape[1] > 1:
        i, j = np.triu_indices(S.shape[1], 1)
        P = S[:, i] * S[:, j]
        psd = P.std(axis=0)
        P = (P[:, psd > 1e-12] - P[:, psd > 1e-12].mean(axis=0)) / psd[psd > 1e-12]
        S = np.column_stack([S, P])
    Z = np.column_stack([np.ones(N), S])
    _, R, piv = linalg.qr(Z, mode="economic", pivoting=True)
    d = np.abs(np.diag(R))
    rank = int((d > d[0] * Z.shape[0] * np.finfo(float).eps).sum())
    Z = Z[:, np.sort(piv[:rank])]
    k = Z.shape[1]
    p_hat, converged = _logistic_fit(Z, y)
    value = float(np.mean((p_hat - c) ** 2))
    null = (k - 1) * (1 - c) ** 2 * c / N
    return PMSE(pmse=value, null=float(null), ratio=value / null if null > 0 else float("nan"), k=k, c=float(c),
                n_original=int(A.shape[0]), n_synthetic=int(B.shape[0]), converged=converged)

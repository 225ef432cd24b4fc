"""Record-weight formulas (pure functions, no model fitting).

Each function returns weights in [0, 1]. The clipping to [0, 1] is part of each formula as the
seeds define it; inputs outside their domain raise errors instead.
"""

from __future__ import annotations

import warnings

import numpy as np

from .privacy import censoring_bound
from .validation import DataError, _is_number, _numeric_array, as_data, as_weights, check_eps, check_positive

__all__ = [
    "UninformativeWeightsWarning",
    "lipschitz_weights",
    "isolation_rate",
    "count_weights",
    "scalar_weight",
    "truncate_weights",
    "reweight",
    "knowledge_weights",
    "scale_weights",
]


class UninformativeWeightsWarning(UserWarning):
    """Record weights that treat every record alike, so they offer no record-level protection."""


def _scale_shift(risk: np.ndarray, c: float, g: float) -> np.ndarray:
    if not (_is_number(c) and _is_number(g)) or not np.isfinite(c) or not np.isfinite(g):
        raise DataError(f"scale `c` and shift `g` must be finite numbers; got c={c!r}, g={g!r}.")
    return np.clip(c * (1.0 - risk) + g, 0.0, 1.0)


def _check_power(power) -> float:
    if not _is_number(power) or not np.isfinite(power) or power <= 0:
        raise DataError(f"`power` must be a finite number > 0 (1 gives the LW rule itself); got {power!r}.")
    return float(power)


def lipschitz_weights(abs_loglik, c: float = 1.0, g: float = 0.0, power: float = 1.0) -> np.ndarray:
    """LW weights from by-record absolute log-likelihoods (re-weighting paper Algorithm 1).

    ``r_i = (f_i - min f) / (max f - min f)`` and ``alpha_i = clip(c (1 - r_i^p) + g, 0, 1)``,
    where ``f_i = max_s |f_{theta_s}(x_i)|`` from the unweighted fit and ``p = power`` (1 in the
    papers; ``p > 1`` gives milder weights, closer to 1, except at the extremes). Records with a
    non-finite ``f_i`` get weight 0 and are left out of the min and max. When every finite
    ``f_i`` is the same (``max f == min f``), ``r_i = 0`` and every such record gets the same
    weight ``clip(c + g, 0, 1)``; an :class:`UninformativeWeightsWarning` says so, since such
    weights downweight no record and offer no protection.

    Parameters
    ----------
    abs_loglik : array_like
        ``f_i`` per record (``inf`` allowed, meaning a non-finite log-likelihood).
    c, g : float
        Scale and shift.
    power : float
        Power ``p > 0`` of the scaled risk ``r_i``.

    Returns
    -------
    numpy.ndarray
    """
    pw = _check_power(power)
    f = _numeric_array(abs_loglik, "abs_loglik").astype(float)
    if f.ndim != 1 or f.size == 0:
        raise DataError(f"`abs_loglik` must be a non-empty vector; got shape {f.shape}.")
    if np.isnan(f).any():
        raise DataError("`abs_loglik` has NaN entries; use inf for a non-finite log-likelihood.")
    if (f < 0).any():
        raise DataError("`abs_loglik` must be absolute values (>= 0).")
    finite = np.isfinite(f)
    alpha = np.zeros_like(f)
    if finite.any():
        lo, hi = f[finite].min(), f[finite].max()
        r = np.zeros(finite.sum()) if hi == lo else (f[finite] - lo) / (hi - lo)
        alpha[finite] = _scale_shift(r if pw == 1.0 else r**pw, c, g)
        if hi == lo:
            warnings.warn(
                f"CONFIDENTIAL (computed from the data; do not publish): `abs_loglik` is the same ({float(lo):g}) "
                f"for every record with a finite log-likelihood "
                f"({int(finite.sum())} record(s)), so the Lipschitz weights give all of them the same weight "
                f"{float(alpha[finite][0]):g}: they offer no protection to any record. Use another weighting "
                f"(e.g. count weights) or scale the weights down explicitly.",
                UninformativeWeightsWarning,
                stacklevel=2,
            )
    return alpha


def isolation_rate(x, radius: float, kind: str = "absolute") -> np.ndarray:
    """``IR_i``: share of records outside the ball of ``radius`` around record i.

    Parameters
    ----------
    x : array_like
        Univariate data.
    radius : float
        Radius r >= 0 of the ball.
    kind : {"absolute", "relative"}
        ``|x_j - x_i| <= r`` (absolute) or ``|x_j - x_i| <= r |x_i|`` (relative, as the
        re-weighting paper's code used).

    Returns
    -------
    numpy.ndarray
        ``IR_i = #{j : x_j outside B(x_i, r)} / n``, computed by sorting (O(n log n)).

    Notes
    -----
    Membership is decided on the computed distance: ``x_j`` is in the ball of ``x_i`` exactly
    when the floating-point ``|x_j - x_i| <= r`` (absolute) or ``<= r |x_i|`` (relative), as the
    O(n^2) definition would compute it. Floating-point subtraction is antisymmetric, so absolute
    membership is symmetric even at ties such as ``0.1 + 0.2`` (comparing ``x_j`` with
    ``x_i + r`` instead would not be). Because ``x_j - x_i`` rounds monotonically in ``x_j``,
    each ball is a contiguous run of the sorted data, found by a vectorised binary search.
    """
    xv = as_data(x, "x")
    r = check_positive(radius, "radius", allow_zero=True)
    if kind == "absolute":
        half = np.full_like(xv, r)
    elif kind == "relative":
        half = r * np.abs(xv)
    else:
        raise DataError(f"`kind` must be 'absolute' or 'relative'; got {kind!r}.")
    s = np.sort(xv)
    with np.errstate(over="ignore", invalid="ignore"):
        inside = _count_diff(s, xv, half, strict=False) - _count_diff(s, xv, -half, strict=True)
    return (xv.size - inside) / xv.size


def _count_diff(s: np.ndarray, x: np.ndarray, t: np.ndarray, *, strict: bool) -> np.ndarray:
    """For each i, ``#{j : fl(s_j - x_i) <= t_i}`` (``< t_i`` if ``strict``), ``s`` sorted.

    ``fl(s_j - x_i)`` is non-decreasing in ``s_j``, so the count is the first index where the
    condition fails: a binary search run for all i at once (``log2 n`` vectorised steps).
    """
    n = s.size
    lo = np.zeros(x.size, dtype=np.int64)
    hi = np.full(x.size, n, dtype=np.int64)
    while True:
        active = lo < hi
        if not active.any():
            return lo
        mid = (lo + hi) // 2
        d = s[np.minimum(mid, n - 1)] - x
        ok = d < t if strict else d <= t
        lo = np.where(active & ok, mid + 1, lo)
        hi = np.where(active & ~ok, mid, hi)


def count_weights(x, radius: float, kind: str = "absolute", c: float = 1.0, g: float = 0.0) -> np.ndarray:
    """CW weights ``alpha_i = clip(c (1 - IR_i) + g, 0, 1)`` (re-weighting paper Algorithm 2)."""
    return _scale_shift(isolation_rate(x, radius, kind), c, g)


def scalar_weight(delta_target: float, delta_unweighted: float) -> float:
    """SW weight ``alpha = Delta_target / Delta_unweighted``, capped at 1.

    A scalar weight multiplies every record's log-likelihood, so it scales the Lipschitz bound
    of the unweighted posterior (to first order); this is the exponential mechanism.
    """
    t = check_positive(delta_target, "delta_target")
    u = check_positive(delta_unweighted, "delta_unweighted")
    return min(1.0, t / u)


def truncate_weights(weights, delta_i, eps: float) -> tuple[np.ndarray, int]:
    """Weighted-e: set ``alpha_i = 0`` where the by-record bound ``Delta_i > eps / 2``.

    Returns
    -------
    weights : numpy.ndarray
    n_truncated : int
        Number of records set to 0 (among those that were not 0 already).
    """
    d = as_data(delta_i, "delta_i")
    w = as_weights(weights, d.size)
    M = censoring_bound(check_eps(eps))  # two-signed terms: eps / 2
    hit = (d > M) & (w > 0)
    w[hit] = 0.0
    return w, int(hit.sum())


def reweight(weights, delta_i, delta: float, k: float) -> np.ndarray:
    """Re-weighting (Algorithm 3): ``alpha^w_i = clip(k alpha_i Delta / Delta_i, 0, 1)``.

    Records with ``Delta_i = 0`` (a weight-0 record, or a record whose log-likelihood is 0 under
    every draw) have no ratio ``Delta / Delta_i`` to scale by: they keep their weight
    ``alpha_i`` unchanged (not ``k alpha_i``).

    Parameters
    ----------
    weights : array_like
        Current weights ``alpha_i`` in [0, 1].
    delta_i : array_like
        By-record Lipschitz bounds ``Delta_i >= 0``.
    delta : float
        Target bound ``Delta > 0``.
    k : float
        Contraction factor ``k > 0``.

    Returns
    -------
    numpy.ndarray
    """
    d = as_data(delta_i, "delta_i")
    if (d < 0).any():
        raise DataError("`delta_i` must be >= 0.")
    w = as_weights(weights, d.size)
    D = check_positive(delta, "delta")
    kk = check_positive(k, "k")
    # alpha_i / Delta_i first: it is never NaN (0 / d = 0; overflow gives inf, clipped to 1),
    # whereas Delta / Delta_i can overflow and then meet a zero (or underflowing) weight
    pos = d > 0
    out = w.copy()  # Delta_i = 0: the record keeps its weight alpha_i
    with np.errstate(over="ignore"):
        out[pos] = kk * D * (w[pos] / d[pos])
    return np.clip(out, 0.0, 1.0)


def knowledge_weights(weights, lam) -> np.ndarray:
    """Range restriction (A): ``alpha*_i = lambda_i + (1 - lambda_i) alpha_i``.

    ``lambda_i`` is the posterior-predictive probability that a synthetic record falls outside
    the public range of record i.
    """
    lv = as_data(lam, "lam")
    if (lv < 0).any() or (lv > 1).any():
        raise DataError("`lam` must hold probabilities in [0, 1].")
    w = as_weights(weights, lv.size)
    return lv + (1.0 - lv) * w


def scale_weights(weights, c: float) -> np.ndarray:
    """Downscaling: ``c * alpha`` with ``0 < c <= 1``."""
    cc = check_positive(c, "c")
    if cc > 1:
        raise DataError(f"downscaling factor `c` must be in (0, 1]; got {c!r}.")
    w = _numeric_array(weights, "weights")
    return as_weights(w, w.size) * cc

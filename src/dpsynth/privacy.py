"""Privacy accounting: by-record and overall Lipschitz bounds, epsilon and censoring counts.

All functions reduce an ``S x n`` matrix of record log-likelihoods (one row per posterior draw,
one column per record) to per-record vectors right away; the matrix itself is never stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .validation import DataError, as_weights, check_positive, check_probability

__all__ = [
    "RecordBounds",
    "PrivacyReport",
    "record_bounds",
    "privacy_report",
    "guarantee_type",
    "log_interval_prob",
]

#: Numerical slack allowed when checking ``Delta <= M`` for censored fits.
CENSOR_TOL = 1e-9


@dataclass(frozen=True)
class RecordBounds:
    """Per-record reductions of one fit's record log-likelihood matrix.

    Attributes
    ----------
    delta_i : numpy.ndarray
        By-record Lipschitz bound: max over retained draws of the absolute contribution as it
        enters the likelihood (weighted, shifted by a range term if any, clamped if censored).
    abs_loglik : numpy.ndarray
        ``max_s |f_theta_s(x_i)|`` over retained draws, unweighted and unclamped (``inf`` where the
        log-likelihood is not finite); the input of Lipschitz weights.
    n_censored : int
        Records whose uncensored contribution exceeds M in absolute value at one or more
        retained draws (0 when there is no censoring).
    n_draws : int
        Draws retained after the ``draw_quantile`` rule.
    draw_quantile : float
        The quantile rule applied.
    """

    delta_i: np.ndarray
    abs_loglik: np.ndarray
    n_censored: int
    n_draws: int
    draw_quantile: float = 1.0

    @property
    def delta(self) -> float:
        """Overall (local) Lipschitz bound ``max_i delta_i``."""
        return float(np.max(self.delta_i))


def guarantee_type(censored: bool) -> str:
    """Return ``"DP"`` for a censored mechanism and ``"aDP"`` for a weighted one."""
    return "DP" if censored else "aDP"


@dataclass(frozen=True)
class PrivacyReport:
    """The privacy numbers a mechanism reports.

    Attributes
    ----------
    delta : float
        Local Lipschitz bound.
    eps : float
        Local privacy guarantee ``2 * delta``.
    guarantee : str
        ``"DP"`` (censored, strict) or ``"aDP"`` (weighted, asymptotic).
    n_censored : int
        Censoring count (0 for uncensored mechanisms).
    bound : float
        Censoring bound M (``inf`` when not censored).
    extra : dict
        Mechanism-specific numbers (e.g. records truncated by Weighted-e, the k of re-weighting).
    """

    delta: float
    eps: float
    guarantee: str
    n_censored: int = 0
    bound: float = float("inf")
    extra: dict = field(default_factory=dict)


def privacy_report(bounds: RecordBounds, bound: float | None = None, **extra) -> PrivacyReport:
    """Summarise :class:`RecordBounds` as a :class:`PrivacyReport`.

    Raises
    ------
    AssertionError
        If a censored fit reports ``Delta > M`` (which would be a bug, not a data problem).
    """
    censored = bound is not None and np.isfinite(bound)
    delta = bounds.delta
    if censored and not delta <= bound + CENSOR_TOL:
        raise AssertionError(f"censored fit has Delta={delta} > M={bound}; the censoring is broken")
    return PrivacyReport(
        delta=delta,
        eps=2.0 * delta,
        guarantee=guarantee_type(censored),
        n_censored=bounds.n_censored,
        bound=float(bound) if censored else float("inf"),
        extra=dict(extra),
    )


def record_bounds(
    loglik: np.ndarray,
    weights: np.ndarray | float | None = None,
    bound: float | None = None,
    *,
    draw_quantile: float = 1.0,
    log_range_prob: np.ndarray | None = None,
) -> RecordBounds:
    """Reduce an ``S x n`` record log-likelihood matrix to by-record Lipschitz bounds.

    The contribution of record i at draw s is ``g = alpha_i f_s(x_i) - log P_s(R_i)``
    (the range term only when ``log_range_prob`` is given), clamped to ``[-M, M]`` when a
    censoring bound M is given. ``delta_i = max_s |g|``. A record with weight 0 contributes 0.

    Parameters
    ----------
    loglik : numpy.ndarray
        Record log-likelihoods ``f_{theta_s}(x_i)``, shape ``(S, n)``.
    weights : array_like or float, optional
        Record weights in [0, 1] (default all ones).
    bound : float, optional
        Censoring bound M; ``None`` means no censoring.
    draw_quantile : float
        Keep only the draws whose maximum absolute contribution over records is at or below
        this quantile of those maxima (1.0 keeps every draw).
    log_range_prob : numpy.ndarray, optional
        ``log P_{theta_s}(R_i)``, shape ``(S, n)``, for the range-truncated likelihood.

    Returns
    -------
    RecordBounds
    """
    F = np.asarray(loglik, dtype=float)
    if F.ndim != 2 or F.shape[0] == 0 or F.shape[1] == 0:
        raise DataError(f"`loglik` must be a non-empty (draws x records) matrix; got shape {F.shape}.")
    n = F.shape[1]
    w = as_weights(weights, n)
    q = check_probability(draw_quantile, "draw_quantile")
    M = None if bound is None or not np.isfinite(bound) else check_positive(bound, "bound")
    if np.isnan(F).any():
        raise DataError("`loglik` has NaN entries; check the model's log-likelihood.")

    with np.errstate(invalid="ignore", over="ignore"):
        g = np.where(w[None, :] == 0.0, 0.0, w[None, :] * F)
        if log_range_prob is not None:
            L = np.asarray(log_range_prob, dtype=float)
            if L.shape != F.shape:
                raise DataError(f"`log_range_prob` has shape {L.shape}, `loglik` has {F.shape}.")
            if np.isnan(L).any():
                raise DataError("`log_range_prob` has NaN entries; check the family's logcdf/logsf.")
            g = g - L
    absg = np.abs(g)
    del g
    if M is not None:
        exceeds = absg > M
        np.minimum(absg, M, out=absg)
    keep = slice(None)
    if q < 1.0:
        per_draw = absg.max(axis=1)
        keep = per_draw <= np.quantile(per_draw, q)
    absg_kept = absg[keep]
    delta_i = absg_kept.max(axis=0)
    abs_f = np.abs(F[keep]).max(axis=0)
    n_censored = int(exceeds[keep].any(axis=0).sum()) if M is not None else 0
    return RecordBounds(
        delta_i=delta_i,
        abs_loglik=abs_f,
        n_censored=n_censored,
        n_draws=int(absg_kept.shape[0]),
        draw_quantile=q,
    )


def log_interval_prob(
    logcdf_lo: np.ndarray, logcdf_hi: np.ndarray, logsf_lo: np.ndarray, logsf_hi: np.ndarray
) -> np.ndarray:
    """``log(F(hi) - F(lo))`` computed without underflow, also deep in either tail.

    In the lower tail the difference of CDFs is used, in the upper tail the difference of
    survival functions: ``log(F(hi) - F(lo)) = log F(hi) + log1p(-exp(log F(lo) - log F(hi)))``
    and likewise with ``S(lo) - S(hi)``. The form whose leading term is smaller in magnitude
    is chosen element-wise: survival functions when the lower end lies above the median.

    Parameters
    ----------
    logcdf_lo, logcdf_hi, logsf_lo, logsf_hi : numpy.ndarray
        Log CDF and log survival function at the lower and upper ends of the range.

    Returns
    -------
    numpy.ndarray
        Log probability of the range (``-inf`` only if it is exactly empty).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        via_cdf = np.where(np.isneginf(logcdf_hi), -np.inf, logcdf_hi + np.log1p(-np.exp(logcdf_lo - logcdf_hi)))
        via_sf = np.where(np.isneginf(logsf_lo), -np.inf, logsf_lo + np.log1p(-np.exp(logsf_hi - logsf_lo)))
    use_sf = logsf_lo < logcdf_lo  # lower end above the median: upper-tail form is accurate
    return np.where(use_sf, via_sf, via_cdf)

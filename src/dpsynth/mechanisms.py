"""Mechanisms: the fits that turn a synthesizer into a private one.

Each function takes a :class:`~dpsynth.fitting.CompiledModel` (compiled once, refitted here)
and returns a :class:`MechanismResult` with the fit, the weights it used and its privacy report,
labelled with its guarantee type (aDP or DP).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .fitting import CompiledModel, Fit, SamplerConfig
from .privacy import PrivacyReport, RecordBounds, privacy_report, record_bounds
from .seeds import SeedLike, stream
from .validation import DataError, as_weights, check_eps, check_positive
from .weights import (
    knowledge_weights,
    lipschitz_weights,
    count_weights,
    reweight,
    scalar_weight,
    scale_weights,
    truncate_weights,
)

__all__ = [
    "MechanismResult",
    "unweighted",
    "lipschitz_weighted",
    "count_weighted",
    "scalar_weighted",
    "weighted_e",
    "censored",
    "reweighted",
    "range_log_prob",
    "knowledge_lambda",
    "range_averaged",
    "range_truncated",
    "DownscaleCalibration",
    "calibrate_downscale",
]


@dataclass
class MechanismResult:
    """What a mechanism produced.

    Attributes
    ----------
    name : str
        Synthesizer name, e.g. ``"Censor_w"``.
    fit : Fit
        The final (pseudo) posterior.
    weights : numpy.ndarray
        The record weights of the final likelihood.
    bounds : RecordBounds
        By-record Lipschitz bounds the privacy report is computed from.
    privacy : PrivacyReport
        Delta, eps, guarantee type, censoring count and mechanism-specific extras.
    """

    name: str
    fit: Fit
    weights: np.ndarray
    bounds: RecordBounds
    privacy: PrivacyReport
    extra: dict = field(default_factory=dict)

    @property
    def guarantee(self) -> str:
        """``"aDP"`` or ``"DP"``."""
        return self.privacy.guarantee

    @property
    def label(self) -> str:
        """Name with guarantee type, e.g. ``"Censor_w (DP)"``."""
        return f"{self.name} ({self.guarantee})"


def _result(name: str, fit: Fit, bounds: RecordBounds | None = None, **extra) -> MechanismResult:
    b = fit.bounds if bounds is None else bounds
    rep = privacy_report(b, fit.bound if fit.censored else None, **extra)
    return MechanismResult(name=name, fit=fit, weights=fit.weights, bounds=b, privacy=rep, extra=dict(extra))


def unweighted(
    cm: CompiledModel, x, *, covariates=None, sampler: SamplerConfig | None = None, seed: SeedLike = None,
    name: str = "Unweighted",
) -> MechanismResult:
    """Fit the unweighted posterior (all weights 1, no censoring)."""
    return _result(name, cm.fit(x, covariates=covariates, sampler=sampler, seed=seed))


def lipschitz_weighted(
    cm: CompiledModel, base: Fit, *, c: float = 1.0, g: float = 0.0, sampler: SamplerConfig | None = None,
    seed: SeedLike = None, name: str = "LW",
) -> MechanismResult:
    """LW ("Weighted"): weights from the unweighted fit's ``max_s |f|``, then refit.

    Parameters
    ----------
    cm : CompiledModel
        The compiled synthesizer.
    base : Fit
        The unweighted fit on the same data.
    c, g : float
        Scale and shift of the weights.
    """
    w = lipschitz_weights(base.bounds.abs_loglik, c=c, g=g)
    fit = cm.fit(base.x, covariates=base.covariates, weights=w, sampler=sampler, seed=seed)
    return _result(name, fit, c=c, g=g)


def count_weighted(
    cm: CompiledModel, x, *, radius: float, kind: str = "absolute", c: float = 1.0, g: float = 0.0,
    covariates=None, sampler: SamplerConfig | None = None, seed: SeedLike = None, name: str = "CW",
) -> MechanismResult:
    """CW: weights from isolation rates within ``radius`` (absolute or relative), then fit."""
    w = count_weights(x, radius, kind, c=c, g=g)
    fit = cm.fit(x, covariates=covariates, weights=w, sampler=sampler, seed=seed)
    return _result(name, fit, radius=radius, kind=kind)


def scalar_weighted(
    cm: CompiledModel, base: Fit, delta_target: float, *, tol: float = 0.05, max_iter: int = 4,
    sampler: SamplerConfig | None = None, seed: SeedLike = None, name: str = "SW",
) -> MechanismResult:
    """SW: one weight for all records, matched so its Delta is near ``delta_target``.

    Starts at ``Delta_target / Delta_unweighted``, refits and rescales the weight by
    ``Delta_target / Delta`` until ``|Delta - Delta_target| <= tol * Delta_target`` or
    ``max_iter`` fits; the fit closest to the target is returned.
    """
    target = check_positive(delta_target, "delta_target")
    alpha = scalar_weight(target, base.bounds.delta)
    best = None
    for it in range(max_iter):
        fit = cm.fit(base.x, covariates=base.covariates, weights=alpha, sampler=sampler, seed=stream(seed, it))
        gap = abs(fit.bounds.delta - target)
        if best is None or gap < best[0]:
            best = (gap, fit, alpha, it + 1)
        if gap <= tol * target:
            break
        alpha = min(1.0, alpha * target / fit.bounds.delta)
    gap, fit, alpha, n_fits = best
    return _result(name, fit, alpha=alpha, delta_target=target, n_fits=n_fits)


def weighted_e(
    cm: CompiledModel, lw: MechanismResult, eps: float, *, sampler: SamplerConfig | None = None,
    seed: SeedLike = None, name: str = "Weighted-e",
) -> MechanismResult:
    """Weighted-e: zero the LW weight of every record with ``Delta_i > eps/2``, then refit.

    The number of records set to 0 is reported as ``n_truncated``.
    """
    w, n_trunc = truncate_weights(lw.weights, lw.bounds.delta_i, eps)
    fit = cm.fit(lw.fit.x, covariates=lw.fit.covariates, weights=w, sampler=sampler, seed=seed)
    return _result(name, fit, n_truncated=n_trunc, eps_target=check_eps(eps))


def censored(
    cm: CompiledModel, x, eps: float, *, weights=None, covariates=None, sampler: SamplerConfig | None = None,
    seed: SeedLike = None, name: str | None = None,
) -> MechanismResult:
    """Censored likelihood at ``M = eps / 2``: Censor_uw (no weights) or Censor_w (weights).

    The result always has ``Delta <= eps / 2`` (checked) and reports the censoring count.
    """
    e = check_eps(eps)
    if name is None:
        name = "Censor_uw" if weights is None else "Censor_w"
    fit = cm.fit(x, covariates=covariates, weights=weights, bound=e / 2.0, sampler=sampler, seed=seed)
    return _result(name, fit, eps_target=e)


def reweighted(
    cm: CompiledModel, start: MechanismResult, *, k0: float = 0.95, tol: float = 0.02, max_iter: int = 8,
    sampler: SamplerConfig | None = None, seed: SeedLike = None, name: str | None = None,
) -> MechanismResult:
    """Re-weighting (Algorithm 3): lift low-risk records' weights without raising Delta.

    ``alpha^w_i = clip(k alpha_i Delta / Delta_i, 0, 1)``; ``k`` is searched by bisection on
    (0, 1], starting at ``k0``, until the refit's Delta is at most the original Delta and within
    ``tol * Delta`` of it. If no ``k`` tried meets both, the best refit not above the original is
    returned; if none is below it, the starting weights are kept (``converged=False``). The
    result never has a Delta above the original. A censored start is refitted with the same
    censoring bound, so its strict guarantee carries over.

    Returns
    -------
    MechanismResult
        With extras ``k``, ``delta_before``, ``delta_after``, ``n_fits``, ``converged``.
    """
    if not 0 < k0 <= 1:
        raise DataError(f"`k0` must be in (0, 1]; got {k0!r}.")
    check_positive(tol, "tol")
    name = name or f"{start.name}_final"
    D = start.privacy.delta
    bound = start.fit.bound if start.fit.censored else None  # a censored start stays censored
    lo, hi, k = 0.0, 1.0, k0
    best = None  # (delta, fit, k)
    converged = False
    n_fits = 0
    for it in range(max_iter):
        w = reweight(start.weights, start.bounds.delta_i, D, k)
        fit = cm.fit(start.fit.x, covariates=start.fit.covariates, weights=w, bound=bound, sampler=sampler,
                     seed=stream(seed, it))
        n_fits += 1
        d = fit.bounds.delta
        if d <= D:
            if best is None or d > best[0]:
                best = (d, fit, k)
            if D - d <= tol * D:
                converged = True
                break
            lo = k
        else:
            hi = k
        k = 0.5 * (lo + hi)
    if best is None:
        return _result(name, start.fit, start.bounds, k=float("nan"), delta_before=D, delta_after=D,
                       n_fits=n_fits, converged=False)
    d, fit, k = best
    return _result(name, fit, k=k, delta_before=D, delta_after=d, n_fits=n_fits, converged=converged)


def _range_ends(x: np.ndarray, a: float, b: float) -> tuple[np.ndarray, np.ndarray] | None:
    if np.isneginf(a) and np.isposinf(b):
        return None
    if not (0 <= a < b) or np.isnan(a) or np.isnan(b):
        raise DataError(
            f"range multipliers must satisfy 0 <= a < b (or be (-inf, inf)); got a={a!r}, b={b!r}."
        )
    if (x < 0).any():
        raise DataError("relative ranges [a x_i, b x_i] need non-negative data `x`.")
    return a * x, b * x


def range_log_prob(fit: Fit, a: float, b: float) -> np.ndarray:
    """``log P_{theta_s}(R_i)`` for ``R_i = [a x_i, b x_i]`` at the fit's draws, ``(S, n)``.

    ``(a, b) = (-inf, inf)`` gives 0 (no range).
    """
    ends = _range_ends(fit.x, a, b)
    if ends is None:
        return np.zeros((fit.n_draws, fit.x.size))
    return fit.log_range_prob(*ends)


def knowledge_lambda(base: Fit, a: float, b: float, *, log_prob: np.ndarray | None = None) -> np.ndarray:
    """Knowledge probabilities of range restriction (A), one per record.

    ``lambda_i = Pr(x*_i not in [a x_i, b x_i]) = 1 - mean_s P_{theta_s}(R_i)`` under the base
    fit's posterior predictive, from the family's vectorised CDF (no simulation).

    Parameters
    ----------
    base : Fit
        The step-1 (unweighted) fit.
    a, b : float
        Range multipliers, ``0 <= a < b``; ``(-inf, inf)`` gives ``lambda = 0``.
    log_prob : numpy.ndarray, optional
        ``range_log_prob(base, a, b)`` if already computed (it is not computed again).
    """
    L = range_log_prob(base, a, b) if log_prob is None else log_prob
    # the clip guards rounding only: a mean of probabilities lies in [0, 1]
    return np.clip(1.0 - np.exp(L).mean(axis=0), 0.0, 1.0)


def range_averaged(
    cm: CompiledModel, base: Fit, weights, a: float, b: float, *, sampler: SamplerConfig | None = None,
    seed: SeedLike = None, name: str | None = None, base_log_prob: np.ndarray | None = None,
) -> MechanismResult:
    """Range restriction (A), "averaged" knowledge weights.

    ``lambda_i`` (:func:`knowledge_lambda`) from the base (unweighted) fit's predictive
    distribution; the fit uses ``alpha*_i = lambda_i + (1 - lambda_i) alpha_i`` and the reported
    bound is ``max_{s,i} |(1 - lambda_i) alpha_i f_{theta_s}(x_i)|``. ``base_log_prob`` passes
    ``range_log_prob(base, a, b)`` when the caller already has it. The result's ``extra`` holds
    ``lambda`` (per record) and the privacy weights ``privacy_weights = (1 - lambda) alpha``.
    """
    w = as_weights(weights, base.x.size)
    lam = knowledge_lambda(base, a, b, log_prob=base_log_prob)
    alpha_star = knowledge_weights(w, lam)
    pw = (1.0 - lam) * w
    fit = cm.fit(base.x, covariates=base.covariates, weights=alpha_star, privacy_weights=pw,
                 sampler=sampler, seed=seed)
    res = _result(name or f"A[{a:g},{b:g}]", fit, a=a, b=b, mean_lambda=float(lam.mean()))
    res.extra.update(**{"lambda": lam, "privacy_weights": pw})
    return res


def range_truncated(
    cm: CompiledModel, base: Fit, a: float, b: float, *, c: float = 1.0, g: float = 0.0,
    sampler: SamplerConfig | None = None, seed: SeedLike = None, name: str | None = None,
    draw_quantile: float = 1.0, base_log_prob: np.ndarray | None = None,
) -> MechanismResult:
    """Range restriction (B), range-truncated likelihood.

    Record sensitivity ``|alpha_i f_theta(x_i) - log P_theta(R_i)|``. LW weights are computed
    from the unweighted fit's truncated sensitivities, the weighted model is refitted and
    ``Delta = max_{s,i} |alpha_i f_{theta_s}(x_i) - log P_{theta_s}(R_i)|``. ``base_log_prob``
    passes ``range_log_prob(base, a, b)`` when the caller already has it. The result's ``extra``
    holds ``delta_trunc_unweighted``, the largest unweighted truncated sensitivity.
    """
    L_base = range_log_prob(base, a, b) if base_log_prob is None else base_log_prob
    base_b = record_bounds(base.loglik(), None, log_range_prob=L_base, draw_quantile=draw_quantile)
    w = lipschitz_weights(base_b.delta_i, c=c, g=g)
    fit = cm.fit(base.x, covariates=base.covariates, weights=w, sampler=sampler, seed=seed)
    bounds = record_bounds(fit.loglik(), w, log_range_prob=range_log_prob(fit, a, b), draw_quantile=draw_quantile)
    res = _result(name or f"B[{a:g},{b:g}]", fit, bounds, a=a, b=b)
    res.extra["delta_trunc_unweighted"] = base_b.delta
    return res


@dataclass(frozen=True)
class DownscaleCalibration:
    """Result of :func:`calibrate_downscale`.

    Attributes
    ----------
    c : float
        Chosen scale of the LW weights.
    delta : float
        Weighted Delta on the historical data at that scale.
    eps : float
        Target privacy budget (Delta aimed at ``eps / 2``).
    trace : tuple
        ``(c, Delta)`` pairs tried.
    """

    c: float
    delta: float
    eps: float
    trace: tuple


def calibrate_downscale(
    cm: CompiledModel, historical: Fit, eps: float, *, lw_c: float = 1.0, lw_g: float = 0.0,
    tol: float = 0.05, max_iter: int = 8, sampler: SamplerConfig | None = None, seed: SeedLike = None,
) -> DownscaleCalibration:
    """Pick the downscaling factor ``c`` on a *historical* data set.

    Bisects ``c`` in (0, 1] so that the Weighted (LW with weights ``c * alpha``) Delta on the
    historical data lands at or just under ``eps / 2`` (within ``tol * eps / 2``). The same ``c``
    and ``eps`` are then used with censoring on later data sets, so the current data never
    set the privacy parameters.

    Parameters
    ----------
    historical : Fit
        Unweighted fit on the historical data set.
    eps : float
        Target privacy budget.
    """
    target = check_eps(eps) / 2.0
    base_w = lipschitz_weights(historical.bounds.abs_loglik, c=lw_c, g=lw_g)
    lo, hi, c = 0.0, 1.0, 1.0
    trace = []
    best = None
    for it in range(max_iter):
        fit = cm.fit(historical.x, covariates=historical.covariates, weights=scale_weights(base_w, c),
                     sampler=sampler, seed=stream(seed, it))
        d = fit.bounds.delta
        trace.append((c, d))
        if d <= target:
            if best is None or d > best[1]:
                best = (c, d)
            if target - d <= tol * target:
                break
            if c == 1.0:
                break  # no downscaling needed
            lo = c
        else:
            hi = c
        c = 0.5 * (lo + hi)
    if best is None:
        c, d = min(trace, key=lambda t: t[1])
        best = (c, d)
    return DownscaleCalibration(c=best[0], delta=best[1], eps=check_eps(eps), trace=tuple(trace))

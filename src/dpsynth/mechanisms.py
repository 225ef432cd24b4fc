"""Mechanisms: the fits that turn a synthesizer into a private one.

Each function takes a :class:`~dpsynth.fitting.CompiledModel` (compiled once, refitted here)
and returns a :class:`MechanismResult` with the fit, the weights it used and its privacy report.
The guarantee type (none, aDP or DP) of every result comes from the synthesizer registry
(:mod:`dpsynth.registry`), by the result's name.

A censored likelihood is strictly DP only when its weights do not depend on the confidential
data. Censor_w as run in the papers computes its Lipschitz weights from the same data, so one
record changes every weight and the clamp no longer bounds the change of the sum: it is
registered as aDP. :func:`public_lipschitz_weights` fixes the Lipschitz rule on a historical
(public) fit, which makes every weight a function of its own record alone, and
:func:`censored_public` (Censor_w-pub) is then strictly DP.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import registry
from .fitting import CompiledModel, Fit, SamplerConfig
from .privacy import CENSOR_TOL, PrivacyReport, RecordBounds, privacy_report
from .seeds import SeedLike, stream
from .validation import DataError, check_eps, check_positive
from .weights import (
    count_weights,
    lipschitz_weights,
    reweight,
    scalar_weight,
    scale_weights,
    truncate_weights,
)

__all__ = [
    "MechanismResult",
    "mechanism_result",
    "PublicLipschitzWeights",
    "public_lipschitz_weights",
    "censored_public",
    "unweighted",
    "lipschitz_weighted",
    "count_weighted",
    "match_cw_radius",
    "scalar_weighted",
    "weighted_e",
    "censored",
    "reweighted",
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
        """``"none"``, ``"aDP"`` or ``"DP"``, from the registry."""
        return self.privacy.guarantee

    @property
    def label(self) -> str:
        """Name with guarantee type from the registry, e.g. ``"Censor_uw (DP)"``."""
        return registry.label(self.name)


def mechanism_result(name: str, fit: Fit, bounds: RecordBounds | None = None, **extra) -> MechanismResult:
    """Wrap a fit as a :class:`MechanismResult` named ``name``.

    The guarantee comes from the registry entry of ``name`` (an unknown name raises
    ``KeyError``). A strict ``"DP"`` entry needs a censored fit with ``Delta <= M``, else an
    ``AssertionError`` is raised.

    Parameters
    ----------
    name : str
        Registered display name, e.g. ``"Weighted"`` or ``"A[0.4,1.8]"``.
    fit : Fit
        The final fit.
    bounds : RecordBounds, optional
        By-record bounds to report (default: the fit's own).
    **extra
        Mechanism-specific numbers, kept on the report and the result.
    """
    b = fit.bounds if bounds is None else bounds
    g = registry.guarantee(name)
    rep = privacy_report(b, fit.bound if fit.censored else None, guarantee=g, one_signed=fit.family.one_signed,
                         **extra)
    return MechanismResult(name=name, fit=fit, weights=fit.weights, bounds=b, privacy=rep, extra=dict(extra))


_result = mechanism_result  # internal short name


def _check_max_iter(max_iter) -> int:
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise DataError(f"`max_iter` must be an integer >= 1 (the number of fits allowed); got {max_iter!r}.")
    return int(max_iter)


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


def match_cw_radius(cm: CompiledModel, x, delta_target: float, *, radius: float, kind: str, match: bool = True,
                    tol: float = 0.02, max_iter: int = 8, sampler: SamplerConfig | None = None,
                    seed: SeedLike = None, covariates=None) -> tuple[MechanismResult, float, int]:
    """CW fit whose ball radius is tuned so that its Delta lands at, or just under, ``delta_target``.

    The paper compares LW, CW and SW at an equal local Lipschitz bound. CW's bound grows with
    the radius (a wider ball covers more records, so weights rise), so the radius is bisected
    (starting at ``radius``) until ``delta_target (1 - tol) <= Delta <= delta_target``. With
    ``match=False`` the given radius is used as is. Returns ``(result, radius, n_fits)``; if no
    radius meets the band, the fit with the largest Delta not above the target is returned (or,
    if every fit is above it, the smallest radius tried). ``result.extra["radius_matched"]`` says
    whether the band was reached.
    """
    target = check_positive(delta_target, "delta_target")
    max_iter = _check_max_iter(max_iter)
    if not match:
        r = count_weighted(cm, x, radius=radius, kind=kind, covariates=covariates, sampler=sampler,
                           seed=stream(seed, 0))
        r.extra["radius_matched"] = False
        return r, float(radius), 1
    lo, hi = 0.0, None
    r_try = float(radius)
    best, lowest = None, None
    n_fits = 0
    for it in range(max_iter):
        res = count_weighted(cm, x, radius=r_try, kind=kind, covariates=covariates, sampler=sampler,
                             seed=stream(seed, it))
        n_fits += 1
        d = res.privacy.delta
        if d <= target:
            if best is None or d > best[0].privacy.delta:
                best = (res, r_try)
            if d >= target * (1.0 - tol):
                break
            lo = r_try
        else:
            if lowest is None or r_try < lowest[1]:
                lowest = (res, r_try)
            hi = r_try
        r_try = 2.0 * r_try if hi is None else 0.5 * (lo + hi)
    chosen = best if best is not None else lowest
    res = chosen[0]
    d = res.privacy.delta
    # whether the search reached the band; if not, the chapter must say CW's Delta is not matched
    res.extra["radius_matched"] = bool(target * (1.0 - tol) <= d <= target)
    res.extra["delta_target"] = target
    return res, float(chosen[1]), n_fits



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
    max_iter = _check_max_iter(max_iter)
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

    The result always has ``Delta <= eps / 2`` (asserted on every fit) and reports the censoring
    count. With ``weights`` computed from the same data (the papers' Censor_w) the guarantee is
    aDP only; use :func:`censored_public` for weights from a public rule.
    """
    e = check_eps(eps)
    if name is None:
        name = "Censor_uw" if weights is None else "Censor_w"
    fit = cm.fit(x, covariates=covariates, weights=weights, bound=e / 2.0, sampler=sampler, seed=seed)
    if not fit.bounds.delta <= e / 2.0 + CENSOR_TOL:
        raise AssertionError(f"{name} at eps={e}: Delta={fit.bounds.delta} > eps/2; the censoring is broken")
    return _result(name, fit, eps_target=e)


@dataclass(frozen=True, eq=False)
class PublicLipschitzWeights:
    """The Lipschitz-weight rule fixed on a historical fit: a function of each record alone.

    ``alpha(x) = clip(c (1 - r(x)) + g, 0, 1)`` with ``r(x) = clip((f(x) - f_min) / (f_max -
    f_min), 0, 1)`` and ``f(x) = max_s |log p(x | theta_s)|`` over the historical posterior draws
    ``theta_s``; ``f_min`` and ``f_max`` are the historical records' extremes. Nothing in it
    depends on the confidential data set it is applied to, so a record's weight changes only
    with that record. A record with a non-finite log-likelihood gets weight 0.

    Attributes
    ----------
    compiled : CompiledModel
        The compiled synthesizer (its record log-likelihood is evaluated at ``draws``).
    draws : dict
        Posterior draws of the historical fit.
    f_min, f_max : float
        Smallest and largest ``f`` among the historical records.
    c, g : float
        Scale and shift of the LW rule.
    """

    compiled: CompiledModel
    draws: dict
    f_min: float
    f_max: float
    c: float = 1.0
    g: float = 0.0

    def __call__(self, x, covariates=None) -> np.ndarray:
        """Weights of the records ``x`` (with their public ``covariates``)."""
        F = self.compiled.record_loglik(self.draws, x, covariates)
        with np.errstate(invalid="ignore"):
            f = np.abs(F).max(axis=0)
        finite = np.isfinite(f)
        span = self.f_max - self.f_min
        r = np.zeros_like(f) if span <= 0 else np.clip((np.where(finite, f, self.f_max) - self.f_min) / span, 0, 1)
        w = np.clip(self.c * (1.0 - r) + self.g, 0.0, 1.0)
        return np.where(finite, w, 0.0)


def public_lipschitz_weights(
    cm: CompiledModel, historical: Fit, *, c: float = 1.0, g: float = 0.0, max_draws: int | None = 1000
) -> PublicLipschitzWeights:
    """Fix the LW rule on an unweighted fit of a *historical* (public or earlier) data set.

    Parameters
    ----------
    cm : CompiledModel
        The compiled synthesizer.
    historical : Fit
        Unweighted fit of the historical data.
    c, g : float
        Scale (downscaling) and shift of the weights.
    max_draws : int, optional
        Keep at most this many of the historical draws (evenly thinned) to make evaluating the
        rule cheap; ``None`` keeps all.

    Returns
    -------
    PublicLipschitzWeights
    """
    for nm, v in (("c", c), ("g", g)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not np.isfinite(v):
            raise DataError(f"`{nm}` must be a finite number; got {v!r}.")
    f = historical.bounds.abs_loglik
    finite = np.isfinite(f)
    if not finite.any():
        raise DataError(
            "the historical fit has no record with a finite log-likelihood; `historical` cannot fix the rule."
        )
    S = historical.n_draws
    if max_draws is None or S <= max_draws:
        idx = np.arange(S)
    else:
        idx = np.linspace(0, S - 1, int(max_draws)).round().astype(int)
    draws = {k: np.asarray(v)[idx] for k, v in historical.draws.items() if k in cm.param_names}
    return PublicLipschitzWeights(compiled=cm, draws=draws, f_min=float(f[finite].min()), f_max=float(f[finite].max()),
                                  c=float(c), g=float(g))


def censored_public(
    cm: CompiledModel, x, eps: float, rule: PublicLipschitzWeights, *, covariates=None,
    sampler: SamplerConfig | None = None, seed: SeedLike = None, name: str = "Censor_w-pub",
) -> MechanismResult:
    """Censor_w with public weights: weights from a fixed rule of each record, censored at ``eps/2``.

    Strictly ``eps``-DP with one record removed (``2 eps`` replaced, for a continuous model):
    every weighted term is clamped to ``[-eps/2, eps/2]`` and no weight depends on the other
    records. The result's ``extra`` holds the rule's ``c``.
    """
    if not isinstance(rule, PublicLipschitzWeights):
        raise DataError("`rule` must come from `public_lipschitz_weights(cm, historical_fit)`.")
    w = rule(x, covariates)
    res = censored(cm, x, eps, weights=w, covariates=covariates, sampler=sampler, seed=seed, name=name)
    res.extra["c"] = rule.c
    return res


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
    max_iter = _check_max_iter(max_iter)
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
    max_iter = _check_max_iter(max_iter)
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

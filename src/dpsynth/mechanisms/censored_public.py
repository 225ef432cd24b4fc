"""Censor_w-pub: Lipschitz weights fixed on a public (historical) fit, censored at eps/2. Strict DP.

A censored likelihood is strictly DP only when its weights do not depend on the confidential data.
:func:`public_lipschitz_weights` fixes the LW rule on an unweighted fit of a *historical* data set
(public, or an earlier release's data), which makes each record's weight a function of that record
alone; every weighted term is then clamped to ``[-eps/2, eps/2]`` (censoring paper, Sections
4.4-4.5: the monthly-release workflow). :func:`calibrate_downscale` picks the downscaling factor
``c`` on the historical data so that the Weighted bound lands near eps/2, so that censoring is
invoked less often on later data.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..privacy import censoring_bound, is_one_signed
from ..seeds import SeedLike, stream
from ..validation import DataError, check_eps, check_finite, positive_count
from ..weights import lipschitz_weights, scale_weights
from .censored import censored_fit
from .contract import MechanismResult, MechanismSpec, Param, RunContext, censored_eps

if TYPE_CHECKING:  # pragma: no cover
    from ..fitting import CompiledModel, Fit
    from ..mcmc_settings import SamplerConfig

__all__ = ["MECHANISM", "MECHANISMS", "PublicLipschitzWeights", "public_lipschitz_weights", "censored_public",
           "DownscaleCalibration", "calibrate_downscale"]


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
    c, g = check_finite(c, "c"), check_finite(g, "g")
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
    """Censor_w with public weights from a compiled model (a building block; see the spec's run).

    Strictly ``eps``-DP with one record removed (``2 eps`` replaced, for a continuous model):
    every weighted term is clamped to ``[-eps/2, eps/2]`` and no weight depends on the other
    records. The result's ``extra`` holds the rule's ``c``.
    """
    from .censored import check_cap

    if not isinstance(rule, PublicLipschitzWeights):
        raise DataError("`rule` must come from `public_lipschitz_weights(cm, historical_fit)`.")
    e = check_eps(eps)
    fit = cm.fit(x, covariates=covariates, weights=rule(x, covariates),
                 bound=censoring_bound(e, is_one_signed(cm.family)), sampler=sampler, seed=seed)
    check_cap(fit, e, name)
    return MECHANISM.result(fit, name=name, eps_target=e, c=rule.c)


def _check_historical(value, name: str):
    import pandas as pd

    if isinstance(value, pd.DataFrame):
        raise DataError(f"`{name}` as a DataFrame is read by the Synthesizer (laid out like the confidential data); "
                        f"to run the mechanism directly, pass (x, covariates) arrays in the model's unit.")
    if isinstance(value, tuple) and len(value) == 2:
        x, cov = value
    else:
        x, cov = value, None
    from ..validation import as_data

    xv = as_data(x, name)
    cv = None if cov is None else as_data(cov, f"{name} covariates", ndim=2)
    return xv, cv


def _check_rule(value, name: str):
    if not isinstance(value, PublicLipschitzWeights):
        raise DataError(f"`{name}` must come from `public_lipschitz_weights(cm, historical_fit)`; got "
                        f"{type(value).__name__}.")
    return value


def _digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        if a is not None:
            h.update(np.ascontiguousarray(np.asarray(a, dtype=float)).tobytes())
    return h.hexdigest()[:16]


def _rule(ctx: RunContext, params: dict) -> tuple[PublicLipschitzWeights, tuple]:
    if params["rule"] is not None:
        return params["rule"], ()
    if params["historical"] is None:
        raise DataError("the censor_w_public mechanism needs `historical`: a public or earlier data set laid out "
                        "like the confidential data (its unweighted fit fixes the weight rule), or a `rule`.")
    xh, ch = params["historical"]
    key = ("public_rule", _digest(xh, ch), params["c"], params["g"], params["max_draws"])

    def make():
        fit = ctx.fit("historical", x=xh, covariates=ch)
        return public_lipschitz_weights(ctx.compiled, fit, c=params["c"], g=params["g"],
                                        max_draws=params["max_draws"]), (fit,)

    return ctx.shared(key, make)


def _run(ctx: RunContext, params: dict) -> MechanismResult:
    rule, before = _rule(ctx, params)
    eps = params["eps"]
    w = rule(ctx.x, ctx.covariates)
    return censored_fit(ctx, MECHANISM, eps, "censor_w_public", eps, weights=w, before=before, c=rule.c)


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
    historical data lands at or just under the clamp ``M`` of ``eps`` (``eps / 2``, or ``eps`` for a
    one-signed family; within ``tol * M``). The same ``c``
    and ``eps`` are then used with censoring on later data sets, so the current data never
    set the privacy parameters.

    Parameters
    ----------
    historical : Fit
        Unweighted fit on the historical data set.
    eps : float
        Target privacy budget.
    """
    target = censoring_bound(check_eps(eps), is_one_signed(cm.family))
    max_iter = positive_count(max_iter, "max_iter")
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


MECHANISM = MechanismSpec(
    key="censor_w_public", name="Censor_w-pub", guarantee="DP",
    description="Lipschitz weights from a public (historical) fit, censored at ε/2",
    run=_run, takes_eps=True, declared_eps=censored_eps,
    params={
        "historical": Param(None, _check_historical, "a public or earlier data set laid out like the confidential "
                            "data (target and covariates); its unweighted fit fixes the weight rule", cli="table",
                            table=True),
        "rule": Param(None, _check_rule, "a weight rule already fixed by public_lipschitz_weights (instead of "
                      "historical)", cli=None),
        "c": Param(1.0, check_finite, "scale c of the public weight rule (c < 1 downscales)"),
        "g": Param(0.0, check_finite, "shift g of the public weight rule"),
        "max_draws": Param(1000, positive_count, "historical posterior draws the rule keeps (evenly thinned)",
                           cli="int"),
    },
    fits_per_release="1 per release (+1 once, on the historical data)",
    needs="a target ε and a historical (public) data set for the weight rule",
    use_when="regular releases of a survey with a public or earlier wave: strict DP with weights",
    loses="records the public weight rule down-weights or censors; utility depends on how like the public wave "
          "the data are",
)
MECHANISMS = (MECHANISM,)

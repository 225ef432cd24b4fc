"""Re-weighting (LW_final, CW_final): give utility back to records that were down-weighted too much.

Re-weighting paper, Algorithm 3: from a weighted fit with bound ``Delta`` and by-record bounds
``Delta_i``, ``alpha^w_i = clip(k alpha_i Delta / Delta_i, 0, 1)``; ``k`` is searched (bisection
from ``k0``) until the refit's ``Delta`` is at most the start's and within a tolerance of it. The
start's weights depend on the data, so the result is aDP.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..seeds import SeedLike, stream
from ..validation import DataError, check_positive, positive_count, positive_number, unit_interval
from ..weights import reweight
from .contract import MechanismResult, MechanismSpec, Param, RunContext, unique_fits
from .count import CW_PARAMS, cw_result
from .lipschitz import LW_PARAMS, lw_result

if TYPE_CHECKING:  # pragma: no cover
    from ..fitting import CompiledModel
    from ..mcmc_settings import SamplerConfig

__all__ = ["MECHANISMS", "LW_FINAL", "CW_FINAL", "K_PARAMS", "reweighted"]

#: The search over k.
K_PARAMS = {
    "k0": Param(0.95, unit_interval, "starting k of the re-weighting search, in (0, 1]"),
    "k_tol": Param(0.02, positive_number, "relative tolerance: stop when the refit's Delta is within k_tol Delta "
                   "of the start's, and not above it"),
    "k_max_iter": Param(8, positive_count, "fits allowed in the search over k", cli="int"),
}


def reweighted(
    cm: CompiledModel | None, start: MechanismResult, *, k0: float = 0.95, tol: float = 0.02, max_iter: int = 8,
    sampler: SamplerConfig | None = None, seed: SeedLike = None, name: str | None = None, fit_fn=None,
) -> MechanismResult:
    """Re-weighting (Algorithm 3) of a weighted result ``start`` (a building block).

    ``alpha^w_i = clip(k alpha_i Delta / Delta_i, 0, 1)``; ``k`` is searched by bisection on
    (0, 1], starting at ``k0``, until the refit's Delta is at most the original Delta and within
    ``tol * Delta`` of it. If no ``k`` tried meets both, the best refit not above the original is
    returned; if none is below it, the starting weights are kept (``converged=False``). The
    result never has a Delta above the original. A censored start is refitted with the same
    censoring bound, so its strict guarantee carries over. ``fit_fn(weights, bound, it)``, if
    given, replaces ``cm.fit``.

    Returns
    -------
    MechanismResult
        With extras ``k``, ``delta_before``, ``delta_after``, ``n_fits``, ``converged``.
    """
    if not 0 < k0 <= 1:
        raise DataError(f"`k0` must be in (0, 1]; got {k0!r}.")
    check_positive(tol, "tol")
    max_iter = positive_count(max_iter, "max_iter")
    name = name or f"{start.name}_final"
    spec = {"LW_final": LW_FINAL, "CW_final": CW_FINAL}.get(name, LW_FINAL)
    D = start.privacy.delta
    bound = start.fit.bound if start.fit.censored else None  # a censored start stays censored
    lo, hi, k = 0.0, 1.0, k0
    best = None  # (delta, fit, k)
    converged = False
    n_fits = 0
    tried = []
    for it in range(max_iter):
        w = reweight(start.weights, start.bounds.delta_i, D, k)
        if fit_fn is not None:
            fit = fit_fn(w, bound, it)
        else:
            fit = cm.fit(start.fit.x, covariates=start.fit.covariates, weights=w, bound=bound, sampler=sampler,
                         seed=stream(seed, it))
        tried.append(fit)
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
    before = unique_fits(start.fits, tried)
    if best is None:
        return spec.result(start.fit, fits=before, bounds=start.bounds, name=name, k=float("nan"), delta_before=D,
                           delta_after=D, n_fits=n_fits, converged=False)
    d, fit, k = best
    return spec.result(fit, fits=before, name=name, k=k, delta_before=D, delta_after=d, n_fits=n_fits,
                       converged=converged)


def _run(start_of):
    def run(ctx: RunContext, params: dict) -> MechanismResult:
        start = start_of(ctx, params)
        return reweighted(None, start, k0=params["k0"], tol=params["k_tol"], max_iter=params["k_max_iter"],
                          fit_fn=lambda w, bound, it: ctx.fit(f"{start.name}_final", it, weights=w, bound=bound))

    return run


LW_FINAL = MechanismSpec(
    key="lw_final", name="LW_final", guarantee="aDP",
    description="LW re-weighted (re-weighting paper, Algorithm 3)",
    run=_run(lambda ctx, p: lw_result(ctx, p)), params={**LW_PARAMS, **K_PARAMS},
    fits_per_release="3 to 10 (unweighted, LW, up to k_max_iter refits)",
    needs="nothing else (an LW fit is made first)",
    use_when="after LW, to give back utility to over-down-weighted records",
)
CW_FINAL = MechanismSpec(
    key="cw_final", name="CW_final", guarantee="aDP",
    description="CW re-weighted (re-weighting paper, Algorithm 3)",
    run=_run(cw_result), params={**CW_PARAMS, **K_PARAMS},
    fits_per_release="2 to 18 (CW, with its radius search if matched, and up to k_max_iter refits)",
    needs="a ball radius (as CW)", use_when="after CW, same as LW_final",
)
MECHANISMS = (LW_FINAL, CW_FINAL)

"""Scalar weight (SW): one weight for every record, the exponential mechanism.

``alpha = Delta_target / Delta_unweighted`` scales the unweighted bound to the target (LW's
``Delta`` by default, the re-weighting paper's comparison); it is refitted and rescaled until the
fit's ``Delta`` is within a tolerance of the target. The target comes from the data: aDP.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..seeds import SeedLike, stream
from ..validation import check_positive, optional, positive_count, positive_number
from ..weights import scalar_weight
from .contract import MechanismResult, MechanismSpec, Param, RunContext, unique_fits
from .lipschitz import lw_result
from .unweighted import base_result

if TYPE_CHECKING:  # pragma: no cover
    from ..fitting import CompiledModel, Fit
    from ..mcmc_settings import SamplerConfig

__all__ = ["MECHANISM", "MECHANISMS", "scalar_weighted"]


def scalar_weighted(
    cm: CompiledModel | None, base: Fit, delta_target: float, *, tol: float = 0.05, max_iter: int = 4,
    sampler: SamplerConfig | None = None, seed: SeedLike = None, name: str = "SW", fit_fn=None,
) -> MechanismResult:
    """SW: one weight for all records, matched so its Delta is near ``delta_target`` (a building block).

    Starts at ``Delta_target / Delta_unweighted``, refits and rescales the weight by
    ``Delta_target / Delta`` until ``|Delta - Delta_target| <= tol * Delta_target`` or
    ``max_iter`` fits; the fit closest to the target is returned. ``fit_fn(alpha, it)``, if
    given, replaces ``cm.fit``.
    """
    target = check_positive(delta_target, "delta_target")
    max_iter = positive_count(max_iter, "max_iter")
    alpha = scalar_weight(target, base.bounds.delta)
    best = None
    tried = []
    for it in range(max_iter):
        if fit_fn is not None:
            fit = fit_fn(alpha, it)
        else:
            fit = cm.fit(base.x, covariates=base.covariates, weights=alpha, sampler=sampler, seed=stream(seed, it))
        tried.append(fit)
        gap = abs(fit.bounds.delta - target)
        if best is None or gap < best[0]:
            best = (gap, fit, alpha, it + 1)
        if gap <= tol * target:
            break
        alpha = min(1.0, alpha * target / fit.bounds.delta)
    gap, fit, alpha, n_fits = best
    return MECHANISM.result(fit, fits=(base, *tried), name=name, alpha=alpha, delta_target=target, n_fits=n_fits)


def _run(ctx: RunContext, params: dict) -> MechanismResult:
    base = base_result(ctx)
    before = list(base.fits)
    target = params["delta_target"]
    if target is None:
        lw = lw_result(ctx, {})
        target, before = lw.privacy.delta, list(lw.fits)
    res = scalar_weighted(None, base.fit, target, tol=params["match_tol"], max_iter=params["match_max_iter"],
                          fit_fn=lambda a, it: ctx.fit("sw", it, weights=a))
    res.fits = unique_fits(before, res.fits)
    return res


MECHANISM = MechanismSpec(
    key="sw", name="SW", guarantee="aDP",
    description="one scalar weight matched to LW's bound (the exponential mechanism)",
    run=_run,
    params={
        "delta_target": Param(None, optional(positive_number), "target Delta of SW (default: LW's Delta on the same "
                              "data)"),
        "match_tol": Param(0.05, positive_number, "relative tolerance of a match to the target Delta"),
        "match_max_iter": Param(4, positive_count, "fits allowed in a match to the target Delta", cli="int"),
    },
    fits_per_release="3 to 6 (unweighted, LW, up to match_max_iter SW fits)", needs="nothing else",
    use_when="a single weight, i.e. the exponential mechanism: simplest to explain",
)
MECHANISMS = (MECHANISM,)

"""Weighted-e: LW, then every record whose bound exceeds eps/2 gets weight 0, and refit.

The censoring paper's truncation of the Weighted mechanism. The refit moves the posterior, so some
kept records can end above eps/2: the bound is local and the guarantee aDP. The number of records
set to 0 is reported (``n_truncated``; the censoring paper's Table 1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..seeds import SeedLike
from ..validation import check_eps
from ..weights import truncate_weights
from .contract import MechanismResult, MechanismSpec, RunContext, unique_fits
from .lipschitz import LW_PARAMS, lw_result

if TYPE_CHECKING:  # pragma: no cover
    from ..fitting import CompiledModel
    from ..mcmc_settings import SamplerConfig

__all__ = ["MECHANISM", "MECHANISMS", "weighted_e"]


def weighted_e(
    cm: CompiledModel | None, lw: MechanismResult, eps: float, *, sampler: SamplerConfig | None = None,
    seed: SeedLike = None, name: str = "Weighted-e", fit_fn=None,
) -> MechanismResult:
    """Weighted-e from an LW result: zero the weight of every record with ``Delta_i > eps/2``, refit.

    The number of records set to 0 is reported as ``n_truncated``. ``fit_fn(weights)``, if
    given, replaces ``cm.fit``.
    """
    w, n_trunc = truncate_weights(lw.weights, lw.bounds.delta_i, eps)
    if fit_fn is not None:
        fit = fit_fn(w)
    else:
        fit = cm.fit(lw.fit.x, covariates=lw.fit.covariates, weights=w, sampler=sampler, seed=seed)
    return MECHANISM.result(fit, fits=unique_fits(lw.fits), name=name, n_truncated=n_trunc, eps_target=check_eps(eps))


def _run(ctx: RunContext, params: dict) -> MechanismResult:
    lw = lw_result(ctx, params)
    eps = params["eps"]
    step = ("weighted_e", eps) if (params["c"], params["g"], params["power"]) == (1.0, 0.0, 1.0) else (
        "weighted_e", eps, params["c"], params["g"], params["power"])
    return weighted_e(None, lw, eps, fit_fn=lambda w: ctx.fit(*step, weights=w))


MECHANISM = MechanismSpec(
    key="weighted_e", name="Weighted-e", guarantee="aDP",
    description="Weighted, with records whose bound exceeds ε/2 set to weight 0",
    run=_run, params=LW_PARAMS, takes_eps=True, fits_per_release="3 (unweighted, LW, truncated)",
    needs="a target ε", use_when="only to show what zeroing risky records does; it can end above ε/2",
)
MECHANISMS = (MECHANISM,)

"""Lipschitz weights (LW; the censoring paper's "Weighted"): down-weight the records the model fits worst.

Re-weighting paper, Algorithm 1: from the unweighted fit, ``f_i = max_s |log p(x_i | theta_s)|``,
``r_i = (f_i - min f) / (max f - min f)`` and ``alpha_i = clip(c (1 - r_i^p) + g, 0, 1)``; the
weighted pseudo posterior is then fitted. The weights are computed from the confidential data, so
the bound ``Delta`` is local: the guarantee is aDP. Two registry keys, one recipe: ``lw`` (the
re-weighting paper's name, the one the book shows) and ``weighted``, an alias under the censoring
paper's name (:func:`dpsynth.registry.display_name` maps it to LW).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..seeds import SeedLike
from ..validation import check_finite, positive_number
from ..weights import lipschitz_weights
from .contract import MechanismResult, MechanismSpec, Param, RunContext
from .unweighted import base_result

if TYPE_CHECKING:  # pragma: no cover
    from ..fitting import CompiledModel, Fit
    from ..mcmc_settings import SamplerConfig

__all__ = ["MECHANISMS", "WEIGHTED", "LW", "LW_PARAMS", "lw_weights", "lw_fit", "lipschitz_weighted"]

#: The LW rule's parameters, shared by every mechanism built on it.
LW_PARAMS = {
    "c": Param(1.0, check_finite, "scale c of the Lipschitz weights, alpha = clip(c (1 - r^p) + g, 0, 1) "
               "(c < 1 downscales them)"),
    "g": Param(0.0, check_finite, "shift g of the Lipschitz weights"),
    "power": Param(1.0, positive_number, "power p of the scaled risk r in the Lipschitz weights (1 in the papers)"),
}


def lw_weights(ctx: RunContext, c: float = 1.0, g: float = 0.0, power: float = 1.0):
    """The LW weights of the context's data, from its (shared) unweighted fit."""
    return lipschitz_weights(base_result(ctx).bounds.abs_loglik, c=c, g=g, power=power)


def lw_fit(ctx: RunContext, c: float = 1.0, g: float = 0.0, power: float = 1.0) -> Fit:
    """The LW-weighted fit of the context's data (fitted once per context and rule, shared)."""
    step = ("lw",) if (c, g, power) == (1.0, 0.0, 1.0) else ("lw", c, g, power)
    return ctx.shared(step, lambda: ctx.fit(*step, weights=lw_weights(ctx, c, g, power)))


def lw_result(ctx: RunContext, params: dict, spec: MechanismSpec | None = None) -> MechanismResult:
    """An LW result named after ``spec`` (default LW)."""
    c, g, power = params.get("c", 1.0), params.get("g", 0.0), params.get("power", 1.0)
    fit = lw_fit(ctx, c, g, power)
    return (spec or LW).result(fit, fits=base_result(ctx).fits, c=c, g=g)


def lipschitz_weighted(
    cm: CompiledModel, base: Fit, *, c: float = 1.0, g: float = 0.0, sampler: SamplerConfig | None = None,
    seed: SeedLike = None, name: str = "LW",
) -> MechanismResult:
    """LW ("Weighted") from an unweighted fit ``base`` with a compiled model (a building block).

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
    spec = WEIGHTED if name == WEIGHTED.name else LW
    return spec.result(fit, fits=(base,), name=name, c=c, g=g)


WEIGHTED = MechanismSpec(
    key="weighted", name="Weighted", guarantee="aDP",
    description="LW under the censoring paper's name (an alias: the book shows LW)",
    run=lambda ctx, params: lw_result(ctx, params, WEIGHTED), params=LW_PARAMS,
    fits_per_release="2 (unweighted, weighted)", needs="nothing else",
    use_when="as LW", alias_of="lw", shown_name="LW",
)
LW = MechanismSpec(
    key="lw", name="LW", guarantee="aDP",
    description="Lipschitz weights from the unweighted fit (re-weighting paper, Algorithm 1; the censoring "
                "paper's \"Weighted\")",
    run=lambda ctx, params: lw_result(ctx, params, LW), params=LW_PARAMS,
    fits_per_release="2 (unweighted, weighted)", needs="nothing else",
    use_when="a local, data-dependent guarantee is acceptable and no target ε is set",
)
MECHANISMS = (WEIGHTED, LW)

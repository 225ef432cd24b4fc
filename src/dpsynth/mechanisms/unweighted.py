"""Unweighted: the plain posterior, every weight 1. Not private: the reference of every comparison."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..seeds import SeedLike
from .contract import MechanismResult, MechanismSpec, RunContext

if TYPE_CHECKING:  # pragma: no cover
    from ..fitting import CompiledModel
    from ..mcmc_settings import SamplerConfig

__all__ = ["MECHANISM", "MECHANISMS", "base_result", "unweighted"]


def base_result(ctx: RunContext) -> MechanismResult:
    """The unweighted fit of the context's data, fitted once per context and shared.

    Every Lipschitz weight (LW, Weighted-e, Censor_w, SW, range restriction) is computed from it.
    """
    return ctx.shared(("unweighted",), lambda: MECHANISM.result(ctx.fit("unweighted")))


def _run(ctx: RunContext, params: dict) -> MechanismResult:
    return base_result(ctx)


def unweighted(cm: CompiledModel, x, *, covariates=None, sampler: SamplerConfig | None = None,
               seed: SeedLike = None, name: str = "Unweighted") -> MechanismResult:
    """Fit the unweighted posterior of ``x`` with a compiled model (a building block; see :func:`run`)."""
    return MECHANISM.result(cm.fit(x, covariates=covariates, sampler=sampler, seed=seed), name=name)


MECHANISM = MechanismSpec(
    key="unweighted", name="Unweighted", guarantee="none",
    description="the plain posterior, all weights 1: not private",
    run=_run, fits_per_release="1", needs="nothing else",
    use_when="never for a release: it is the reference every private mechanism is measured against",
)
MECHANISMS = (MECHANISM,)

"""Censored likelihoods (Censor_uw, Censor_w): every record term clamped to [-eps/2, eps/2].

The censoring paper: each weighted record term is clamped, ``clamp(alpha_i f_theta(x_i), -M, M)``
with ``M = eps/2``, inside the likelihood that MCMC samples. Every fit asserts ``Delta <= M``. For
a probability mass function the terms are ``<= 0``, the window is ``[-M, 0]`` and ``M = eps``: its
width is ``eps`` either way, so one release is ``eps``-DP with one record removed and ``2 eps``
with one replaced (:mod:`dpsynth.privacy`).

* **Censor_uw** (strict DP): no weights. Each term is bounded for every data set, so one release
  is eps-DP with one record removed (2 eps replaced, for a continuous model).
* **Censor_w** (aDP): LW weights computed from the same confidential data, as run in the papers.
  One record changes every weight, so the clamp no longer bounds the change of the sum: the
  guarantee holds for the data set at hand only. Censor_w-pub
  (:mod:`dpsynth.mechanisms.censored_public`) fixes the weight rule on public data instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..privacy import CENSOR_TOL, censoring_bound, is_one_signed
from ..seeds import SeedLike
from ..validation import check_eps
from .contract import MechanismResult, MechanismSpec, RunContext, censored_eps, unique_fits
from .lipschitz import LW_PARAMS, lw_weights
from .unweighted import base_result

if TYPE_CHECKING:  # pragma: no cover
    from ..fitting import CompiledModel, Fit
    from ..mcmc_settings import SamplerConfig

__all__ = ["MECHANISMS", "CENSOR_UW", "CENSOR_W", "censored", "check_cap", "censored_fit"]


def check_cap(fit: Fit, eps: float, name: str) -> None:
    """Assert ``Delta <= M`` of a censored fit, ``M = eps / 2`` (``eps`` for one-signed terms): on every fit.

    A failure is a bug, never a property of the data.
    """
    M = censoring_bound(eps, fit.one_signed)
    if not (fit.bound == M and fit.bounds.delta <= M + CENSOR_TOL):
        raise AssertionError(f"{name} at eps={eps}: Delta={fit.bounds.delta}, M={fit.bound} > {M}; the censoring is "
                             f"broken")


def censored(
    cm: CompiledModel, x, eps: float, *, weights=None, covariates=None, sampler: SamplerConfig | None = None,
    seed: SeedLike = None, name: str | None = None,
) -> MechanismResult:
    """A censored fit at ``M = eps / 2`` with given weights, from a compiled model (a building block).

    The result always has ``Delta <= eps / 2`` (asserted on every fit) and reports the censoring
    count. Without weights it is Censor_uw (strict DP). With weights it is reported as Censor_w
    (aDP): a weight computed from the same data breaks the strict guarantee; only weights from a
    public rule keep it (:mod:`dpsynth.mechanisms.censored_public`).
    """
    e = check_eps(eps)
    spec = CENSOR_UW if weights is None else CENSOR_W
    name = name or spec.name
    fit = cm.fit(x, covariates=covariates, weights=weights, bound=censoring_bound(e, is_one_signed(cm.family)),
                 sampler=sampler, seed=seed)
    check_cap(fit, e, name)
    return spec.result(fit, name=name, eps_target=e)


def censored_fit(ctx: RunContext, spec: MechanismSpec, eps: float, *step, weights=None, before=(), reference=None,
                 init=None, reference_is_max: bool = False, data=None, **extra) -> MechanismResult:
    """Fit the context's data censored at ``M`` (a window of width ``eps``) with ``weights``; the result of ``spec``.

    ``init``: a public starting point of the chains; ``reference_is_max``: the reference is each record's largest
    term (a one-signed family's differences then keep their sign); ``data``: other ``pm.Data`` values of the family."""
    one_signed = is_one_signed(ctx.family, reference=reference, reference_is_max=reference_is_max)
    fit = ctx.fit(*step, weights=weights, bound=censoring_bound(eps, one_signed), reference=reference, init=init,
                  reference_is_max=reference_is_max, data=data)
    check_cap(fit, eps, spec.name)
    return spec.result(fit, fits=unique_fits(before, (fit,)), eps_target=eps, **extra)


def _run_uw(ctx: RunContext, params: dict) -> MechanismResult:
    eps = params["eps"]
    return censored_fit(ctx, CENSOR_UW, eps, "censor_uw", eps)


def _run_w(ctx: RunContext, params: dict) -> MechanismResult:
    eps, c, g, power = params["eps"], params["c"], params["g"], params["power"]
    w = lw_weights(ctx, c, g, power)
    step = ("censor_w", eps) if (c, g, power) == (1.0, 0.0, 1.0) else ("censor_w", eps, c, g, power)
    return censored_fit(ctx, CENSOR_W, eps, *step, weights=w, before=base_result(ctx).fits, c=c, g=g)


CENSOR_W = MechanismSpec(
    key="censor_w", name="Censor_w", guarantee="aDP",
    description="Lipschitz weights from the same data, censored at ε/2 (as in the papers)",
    run=_run_w, params=LW_PARAMS, takes_eps=True, declared_eps=censored_eps,
    fits_per_release="2 (unweighted, censored)",
    needs="a target ε",
    loses="records whose weighted term leaves the window (censoring bias), and a strict guarantee: its weights "
          "are computed from the data",
    use_when="as in the papers: Δ ≤ ε/2 holds, but the weights leak the data, so only aDP",
    censoring_advice="Choose a public `unit=` (or `offset=`), raise eps, or use mechanism='censor_ref' (unit-free)",
)
CENSOR_UW = MechanismSpec(
    key="censor_uw", name="Censor_uw", guarantee="DP",
    description="unweighted, censored at ε/2",
    run=_run_uw, takes_eps=True, declared_eps=censored_eps, fits_per_release="1", needs="a target ε",
    use_when="strict DP with no other data; expect many censored records at small ε",
    censoring_advice="A continuous density carries its unit: choose a public `unit=` (or `offset=`) that puts the "
                     "records' log-likelihoods within +-eps/2, raise eps, or use mechanism='censor_ref' (unit-free)",
    loses="the tails: records whose term leaves [−ε/2, ε/2] are censored, more at small ε and in the wrong unit",
)
MECHANISMS = (CENSOR_W, CENSOR_UW)

"""Count weights (CW): down-weight the records that are isolated in the data.

Re-weighting paper, Algorithm 2: ``IR_i`` is the share of records outside the ball of radius ``r``
around ``x_i`` (absolute, ``|x_j - x_i| <= r``, or relative, ``|x_j - x_i| <= r |x_i|``, as the
authors' own code used), and ``alpha_i = clip(c (1 - IR_i) + g, 0, 1)``. The paper compares CW with
LW at an equal bound, so the radius can be searched until CW's ``Delta`` lands just under LW's
(``match_delta``). The weights depend on the confidential data: aDP.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..seeds import SeedLike, stream
from ..validation import check_bool, check_finite, check_positive, one_of, positive_count, positive_number
from ..weights import count_weights
from .contract import REQUIRED, MechanismResult, MechanismSpec, Param, RunContext, unique_fits
from .lipschitz import lw_result

if TYPE_CHECKING:  # pragma: no cover
    from ..fitting import CompiledModel
    from ..mcmc_settings import SamplerConfig

__all__ = ["MECHANISM", "MECHANISMS", "CW_PARAMS", "cw_result", "count_weighted", "match_cw_radius"]

#: CW's parameters (CW_final takes them too).
CW_PARAMS = {
    "radius": Param(REQUIRED, positive_number, "radius r of the balls counting near records (CW; required, in the "
                    "model's unit for kind 'absolute', a share of |x_i| for 'relative')"),
    "kind": Param("absolute", one_of("absolute", "relative"), "CW's ball: 'absolute' |x_j - x_i| <= r or "
                  "'relative' |x_j - x_i| <= r |x_i|", cli="str"),
    "c": Param(1.0, check_finite, "scale c of the weights, alpha = clip(c (1 - IR) + g, 0, 1)"),
    "g": Param(0.0, check_finite, "shift g of the weights"),
    "match_delta": Param(False, check_bool, "search the radius so that CW's Delta lands just under LW's (the "
                         "re-weighting paper's comparison at equal Delta; costs up to match_max_iter fits + 2)",
                         cli="flag"),
    "match_tol": Param(0.02, positive_number, "relative tolerance of a match to LW's Delta"),
    "match_max_iter": Param(8, positive_count, "fits allowed in a match to LW's Delta", cli="int"),
}


def _check_max_iter(max_iter) -> int:
    return positive_count(max_iter, "max_iter")


def count_weighted(
    cm: CompiledModel, x, *, radius: float, kind: str = "absolute", c: float = 1.0, g: float = 0.0,
    covariates=None, sampler: SamplerConfig | None = None, seed: SeedLike = None, name: str = "CW",
) -> MechanismResult:
    """CW: weights from isolation rates within ``radius`` (absolute or relative), then fit (a building block)."""
    w = count_weights(x, radius, kind, c=c, g=g)
    fit = cm.fit(x, covariates=covariates, weights=w, sampler=sampler, seed=seed)
    return MECHANISM.result(fit, name=name, radius=radius, kind=kind)


def match_cw_radius(cm: CompiledModel, x, delta_target: float, *, radius: float, kind: str, match: bool = True,
                    tol: float = 0.02, max_iter: int = 8, sampler: SamplerConfig | None = None,
                    seed: SeedLike = None, covariates=None, c: float = 1.0, g: float = 0.0,
                    fit_fn=None) -> tuple[MechanismResult, float, int]:
    """CW fit whose ball radius is tuned so that its Delta lands at, or just under, ``delta_target``.

    CW's bound grows with the radius (a wider ball covers more records, so weights rise), so the
    radius is bisected (starting at ``radius``) until ``delta_target (1 - tol) <= Delta <=
    delta_target``. With ``match=False`` the given radius is used as is. Returns ``(result,
    radius, n_fits)``; if no radius meets the band, the fit with the largest Delta not above the
    target is returned (or, if every fit is above it, the smallest radius tried).
    ``result.extra["radius_matched"]`` says whether the band was reached.

    ``fit_fn(weights, it)``, if given, replaces ``cm.fit`` (a :class:`RunContext` records its fits).
    """
    target = check_positive(delta_target, "delta_target")
    max_iter = _check_max_iter(max_iter)

    def one(r_try, it):
        w = count_weights(x, r_try, kind, c=c, g=g)
        if fit_fn is not None:
            fit = fit_fn(w, it)
        else:
            fit = cm.fit(x, covariates=covariates, weights=w, sampler=sampler, seed=stream(seed, it))
        return MECHANISM.result(fit, radius=r_try, kind=kind)

    if not match:
        r = one(float(radius), 0)
        r.extra["radius_matched"] = False
        return r, float(radius), 1
    lo, hi = 0.0, None
    r_try = float(radius)
    best, lowest = None, None
    n_fits = 0
    for it in range(max_iter):
        res = one(r_try, it)
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


def cw_result(ctx: RunContext, params: dict) -> MechanismResult:
    """The CW result of the context's data (shared: CW_final starts from it)."""
    key = ("cw", *(params[k] for k in CW_PARAMS))

    def make():
        before = []
        target = 1.0
        if params["match_delta"]:
            lw = lw_result(ctx, {})
            before, target = list(lw.fits), lw.privacy.delta
        mine = []

        def fit_fn(w, it):
            f = ctx.fit("cw", it, weights=w)
            mine.append(f)
            return f

        res, radius, n_fits = match_cw_radius(
            None, ctx.x, target, radius=params["radius"], kind=params["kind"], match=params["match_delta"],
            tol=params["match_tol"], max_iter=params["match_max_iter"], c=params["c"], g=params["g"], fit_fn=fit_fn)
        res.extra.update(radius=radius, n_fits=n_fits)
        res.privacy.extra.update(radius=radius, n_fits=n_fits)
        res.fits = unique_fits(before, mine)
        return res

    return ctx.shared(key, make)


MECHANISM = MechanismSpec(
    key="cw", name="CW", guarantee="aDP",
    description="count-weighted (re-weighting paper, Algorithm 2)",
    run=cw_result, params=CW_PARAMS,
    fits_per_release=(f"1; with match_delta, the unweighted and LW fits and up to match_max_iter radius-search fits "
                      f"({CW_PARAMS['match_max_iter'].default} by default, so at most "
                      f"{2 + CW_PARAMS['match_max_iter'].default} in all)"),
    needs="a ball radius (optionally matched to LW's Δ by search)",
    use_when="when isolation in the data, not the model's fit, should decide the weights",
)
MECHANISMS = (MECHANISM,)

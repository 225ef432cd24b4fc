"""Range restriction: privacy amplification when each record is publicly known to lie in a range.

The range-restriction slides [Hu et al.] assume that the public already knows each value to
within a relative range ``R_i = [a x_i, b x_i]`` (``0 <= a < b``) and propose two ways of
charging a risk-weighted pseudo posterior only for what is *not* known:

* **(A) knowledge weights ("averaged").** ``lambda_i = Pr(x*_i not in R_i)`` under the unweighted
  fit's posterior predictive (:func:`knowledge_lambda`); the likelihood uses
  ``alpha*_i = lambda_i + (1 - lambda_i) alpha_i`` and the privacy charge is
  ``max_{s,i} |(1 - lambda_i) alpha_i f_{theta_s}(x_i)|`` (:func:`range_averaged`).
* **(B) range-truncated sensitivity.** The slides write the record's bound as
  ``|alpha_i f_theta(x_i) - log P_theta(R_i)|``: the weight multiplies the record's log-likelihood
  but not the log range probability. :func:`range_truncated` adopts this literal reading: LW
  weights from the unweighted fit's truncated sensitivities ``max_s |f - log P|``, refit, and
  ``Delta = max_{s,i} |alpha_i f - log P|``.
* **(B') the whole-term reading.** If the weight multiplies the range-truncated log-likelihood
  as a whole, the record's contribution is ``(p(x_i | theta) / P_theta(R_i))^alpha_i`` and

  .. math::

     \\Delta^{B'} = \\max_{s,i}
     \\left|\\alpha_i \\bigl(f_{\\theta_s}(x_i) - \\log P_{\\theta_s}(R_i)\\bigr)\\right|.

  The fit is the same as (B)'s; only the accounting differs, so :func:`whole_term_truncated`
  re-accounts a (B) result instead of refitting. :func:`truncation_decomposition` tells which
  record and which term attain the (B) bound.

``P_theta(R_i)`` comes from the families' log-scale CDFs (``log_interval_prob``, ``logcdf``,
``logsf`` in :mod:`dpsynth.models`), so a range far in a tail gives a finite ``log P``.

Every range-restriction mechanism computes its weights (and, for (A), its knowledge
probabilities) from the confidential data, so its bound is local and its guarantee is aDP (the
registry's ``A[a,b]``, ``B[a,b]``, ``B'[a,b]``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..privacy import RecordBounds, record_bounds
from ..seeds import SeedLike
from ..validation import DataError, as_weights, check_finite, check_number
from ..weights import knowledge_weights, lipschitz_weights
from .contract import REQUIRED, MechanismResult, MechanismSpec, Param, RunContext, unique_fits
from .unweighted import base_result

if TYPE_CHECKING:  # pragma: no cover
    from ..fitting import CompiledModel, Fit
    from ..mcmc_settings import SamplerConfig

__all__ = [
    "range_log_prob",
    "knowledge_lambda",
    "range_averaged",
    "range_truncated",
    "truncated_bounds",
    "whole_term_truncated",
    "truncation_decomposition",
    "MECHANISMS",
    "AVERAGED",
    "TRUNCATED",
    "TRUNCATED_WHOLE",
]


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

    ``(a, b) = (-inf, inf)`` gives 0 (no range). A range wholly outside the support gives
    ``-inf`` (never NaN).
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
    cm: CompiledModel | None, base: Fit, weights, a: float, b: float, *, sampler: SamplerConfig | None = None,
    seed: SeedLike = None, name: str | None = None, base_log_prob: np.ndarray | None = None, fit_fn=None,
) -> MechanismResult:
    """Range restriction (A), "averaged" knowledge weights.

    ``lambda_i`` (:func:`knowledge_lambda`) from the base (unweighted) fit's predictive
    distribution; the fit uses ``alpha*_i = lambda_i + (1 - lambda_i) alpha_i`` and the reported
    bound is ``max_{s,i} |(1 - lambda_i) alpha_i f_{theta_s}(x_i)|``. ``base_log_prob`` passes
    ``range_log_prob(base, a, b)`` when the caller already has it. The result's ``extra`` holds
    ``lambda`` (per record) and the privacy weights ``privacy_weights = (1 - lambda) alpha``.
    ``fit_fn(weights, privacy_weights)``, if given, replaces ``cm.fit``.
    """
    w = as_weights(weights, base.x.size)
    lam = knowledge_lambda(base, a, b, log_prob=base_log_prob)
    alpha_star = knowledge_weights(w, lam)
    pw = (1.0 - lam) * w
    if fit_fn is not None:
        fit = fit_fn(alpha_star, pw)
    else:
        fit = cm.fit(base.x, covariates=base.covariates, weights=alpha_star, privacy_weights=pw,
                     sampler=sampler, seed=seed)
    res = AVERAGED.result(fit, fits=(base,), name=name or f"A[{a:g},{b:g}]", a=a, b=b, mean_lambda=float(lam.mean()))
    res.extra.update(**{"lambda": lam, "privacy_weights": pw})
    return res


def range_truncated(
    cm: CompiledModel | None, base: Fit, a: float, b: float, *, c: float = 1.0, g: float = 0.0,
    sampler: SamplerConfig | None = None, seed: SeedLike = None, name: str | None = None,
    draw_quantile: float = 1.0, base_log_prob: np.ndarray | None = None, keep_matrices: bool = False, fit_fn=None,
) -> MechanismResult:
    """Range restriction (B), range-truncated sensitivity (the literal reading).

    Record sensitivity ``|alpha_i f_theta(x_i) - log P_theta(R_i)|``. LW weights are computed
    from the unweighted fit's truncated sensitivities, the weighted model is refitted and
    ``Delta = max_{s,i} |alpha_i f_{theta_s}(x_i) - log P_{theta_s}(R_i)|``. ``base_log_prob``
    passes ``range_log_prob(base, a, b)`` when the caller already has it. The result's ``extra``
    holds ``delta_trunc_unweighted``, the largest unweighted truncated sensitivity, and with
    ``keep_matrices`` also ``matrices``: the weighted fit's ``(loglik, log P)`` ``S x n`` pair, which
    :func:`whole_term_truncated` can re-use instead of computing both again (pop it when done:
    it is large).

    The terms ``alpha f - log P`` take both signs whatever the family (``-log P >= 0``), so the
    report uses ``one_signed=False``: eps with one record replaced is ``4 Delta``. ``fit_fn(weights)``,
    if given, replaces ``cm.fit``.
    """
    L_base = range_log_prob(base, a, b) if base_log_prob is None else base_log_prob
    base_b = record_bounds(base.loglik(), None, log_range_prob=L_base, draw_quantile=draw_quantile)
    w = lipschitz_weights(base_b.delta_i, c=c, g=g)
    if fit_fn is not None:
        fit = fit_fn(w)
    else:
        fit = cm.fit(base.x, covariates=base.covariates, weights=w, sampler=sampler, seed=seed)
    F, L = fit.loglik(), range_log_prob(fit, a, b)
    bounds = record_bounds(F, w, log_range_prob=L, draw_quantile=draw_quantile)
    nm = name or f"B[{a:g},{b:g}]"
    res = _two_signed(TRUNCATED.result(fit, fits=(base,), bounds=bounds, name=nm, a=a, b=b))
    res.extra = {"a": a, "b": b, "delta_trunc_unweighted": base_b.delta}
    if keep_matrices:
        res.extra["matrices"] = (F, L)
    return res


def _two_signed(res: MechanismResult) -> MechanismResult:
    """The terms ``alpha f - log P`` take both signs whatever the family: eps replaced is 4 Delta."""
    import dataclasses

    res.privacy = dataclasses.replace(res.privacy, one_signed=False)
    return res


def _matrices(fit: Fit, a: float, b: float, matrices) -> tuple[np.ndarray, np.ndarray]:
    """``(F, log P)`` of a fit: the given pair, or computed now."""
    return matrices if matrices is not None else (fit.loglik(), range_log_prob(fit, a, b))


def truncated_bounds(
    fit: Fit, weights, a: float, b: float, *, draw_quantile: float = 1.0, matrices=None
) -> RecordBounds:
    """By-record bounds of the whole-term reading (B'): ``max_s |alpha_i (f - log P)|``.

    Parameters
    ----------
    fit : Fit
        A fit whose draws are used (the weighted fit of (B), or an unweighted fit with
        ``weights=1`` for the unweighted truncated sensitivity).
    weights : array_like or float
        Record weights ``alpha`` in [0, 1].
    a, b : float
        Range multipliers.
    draw_quantile : float
        Draw-dropping rule (1.0 keeps every draw).
    matrices : tuple, optional
        ``(fit.loglik(), range_log_prob(fit, a, b))`` if the caller already has them.

    Returns
    -------
    RecordBounds
        ``delta_i`` of the reading; ``abs_loglik`` holds ``max_s |f - log P|`` (unweighted).
    """
    w = as_weights(weights, fit.x.size)
    F, L = _matrices(fit, a, b, matrices)
    G = F - L
    if np.isnan(G).any():
        raise DataError("the truncated log-likelihood has NaN entries (an empty range?).")
    out = record_bounds(G, w, draw_quantile=draw_quantile)
    del G
    return out


def whole_term_truncated(result_b: MechanismResult, *, name: str | None = None, matrices=None) -> MechanismResult:
    """Re-account a (B) result under the whole-term reading (B').

    Parameters
    ----------
    result_b : MechanismResult
        The output of :func:`range_truncated` (its ``extra`` holds ``a``, ``b``).
    name : str, optional
        Default ``"B'[a,b]"``.
    matrices : tuple, optional
        ``(result_b.fit.loglik(), range_log_prob(result_b.fit, a, b))`` if the caller has them
        (``range_truncated(..., keep_matrices=True)`` returns them in ``extra["matrices"]``).

    Returns
    -------
    MechanismResult
        Same fit and weights as ``result_b``; bounds ``max_s |alpha_i (f - log P)|``; ``extra``
        also holds the :func:`truncation_decomposition` of the (B) bound, from the same matrices.
        The truncated log density ``f - log P`` takes both signs, so eps with one record
        replaced is ``4 Delta`` (``one_signed=False``).
    """
    try:
        a, b = float(result_b.extra["a"]), float(result_b.extra["b"])
    except KeyError as exc:
        raise DataError("`result_b` must come from `range_restriction.range_truncated` (needs extra a, b).") from exc
    matrices = _matrices(result_b.fit, a, b, matrices)  # computed (at most) once for both reductions below
    bounds = truncated_bounds(result_b.fit, result_b.weights, a, b, draw_quantile=result_b.bounds.draw_quantile,
                              matrices=matrices)
    decomposition = truncation_decomposition(result_b.fit, result_b.weights, a, b, matrices=matrices)
    del matrices
    nm = name or f"B'[{a:g},{b:g}]"
    res = _two_signed(TRUNCATED_WHOLE.result(result_b.fit, fits=result_b.fits, bounds=bounds, name=nm, a=a, b=b,
                                             reading="whole-term"))
    res.extra = {"a": a, "b": b, "reading": "whole-term", "decomposition": decomposition}
    return res


def truncation_decomposition(fit: Fit, weights, a: float, b: float, *, matrices=None) -> dict:
    """Which record and which term attain the (B) bound ``max |alpha f - log P|``.

    Returns
    -------
    dict
        ``record``: index of the record attaining the bound; ``weight``: its ``alpha``;
        ``weighted_loglik``: ``alpha f`` at the attaining draw; ``log_prob``: ``log P`` there;
        ``max_neg_log_prob``: ``max_{s,i} -log P_{theta_s}(R_i)`` (a lower bound on the (B) Delta
        for any record with weight 0); ``n_zero_weight``: records with ``alpha = 0``.
        ``matrices`` as in :func:`truncated_bounds`.
    """
    w = as_weights(weights, fit.x.size)
    F, L = _matrices(fit, a, b, matrices)
    G = np.where(w[None, :] == 0.0, 0.0, w[None, :] * F)
    absg = np.abs(G - L)
    s, i = np.unravel_index(int(np.argmax(absg)), absg.shape)
    out = {
        "record": int(i),
        "weight": float(w[i]),
        "weighted_loglik": float(G[s, i]),
        "log_prob": float(L[s, i]),
        "max_neg_log_prob": float(np.max(-L)),
        "n_zero_weight": int((w == 0).sum()),
    }
    del F, L, G, absg
    return out


# --- the three range-restriction mechanisms -------------------------------------------------------

#: The range-restriction parameters: the public range multipliers and the LW rule.
RANGE_PARAMS = {
    "a": Param(REQUIRED, check_number, "lower multiplier a of the public range [a x_i, b x_i] an intruder is "
               "credited with (0 <= a < b; -inf with b = inf for no range)"),
    "b": Param(REQUIRED, check_number, "upper multiplier b of the public range [a x_i, b x_i]"),
    "c": Param(1.0, check_finite, "scale c of the Lipschitz weights"),
    "g": Param(0.0, check_finite, "shift g of the Lipschitz weights"),
}


def _base(ctx: RunContext, params: dict) -> tuple[MechanismResult, np.ndarray]:
    fam = ctx.family
    if fam is None or not fam.has_cdf:
        name = "no" if fam is None else f"the {fam.name}"
        raise DataError(f"range restriction needs a model with a CDF (the probability of each public range); "
                        f"{name} model has none. Use a continuous family such as lognormal or beta.")
    a, b = params["a"], params["b"]
    _range_ends(ctx.x, a, b)  # checks a, b and the data before any fit
    base = base_result(ctx)
    lp = ctx.shared(("range_log_prob", a, b), lambda: range_log_prob(base.fit, a, b))
    return base, lp


def _run_averaged(ctx: RunContext, params: dict) -> MechanismResult:
    from .lipschitz import lw_weights

    a, b, c, g = params["a"], params["b"], params["c"], params["g"]
    base, lp = _base(ctx, params)
    res = range_averaged(None, base.fit, lw_weights(ctx, c, g), a, b, base_log_prob=lp,
                         fit_fn=lambda w, pw: ctx.fit("range_averaged", a, b, c, g, weights=w, privacy_weights=pw))
    res.fits = unique_fits(base.fits, res.fits)
    return res


def _truncated(ctx: RunContext, params: dict) -> MechanismResult:
    """(B)'s result, shared; its S x n matrices wait in the context for (B') until it takes them."""
    a, b, c, g = params["a"], params["b"], params["c"], params["g"]
    key = ("range_truncated", a, b, c, g)

    def make():
        base, lp = _base(ctx, params)
        res = range_truncated(None, base.fit, a, b, c=c, g=g, base_log_prob=lp, keep_matrices=True,
                              draw_quantile=ctx.sampler.draw_quantile,
                              fit_fn=lambda w: ctx.fit("range_truncated", a, b, c, g, weights=w))
        ctx.shared(("range_matrices", *key[1:]), lambda: res.extra.pop("matrices"))
        res.fits = unique_fits(base.fits, res.fits)
        return res

    return ctx.shared(key, make)


def _run_truncated_whole(ctx: RunContext, params: dict) -> MechanismResult:
    res_b = _truncated(ctx, params)
    mkey = ("range_matrices", params["a"], params["b"], params["c"], params["g"])
    matrices = ctx.shared(mkey, lambda: None)
    ctx.forget(mkey)  # large: (B') is their last user
    return whole_term_truncated(res_b, matrices=matrices)


AVERAGED = MechanismSpec(
    key="range_averaged", name="A[", pattern=True, guarantee="aDP",
    description="range restriction (A), knowledge weights", run=_run_averaged, params=RANGE_PARAMS,
    fits_per_release="2 (unweighted, weighted)", needs="public ranges [a x_i, b x_i] an intruder is credited with",
    use_when="when a range around each value is public knowledge", targets=("continuous",),
)
TRUNCATED = MechanismSpec(
    key="range_truncated", name="B[", pattern=True, guarantee="aDP",
    description="range restriction (B), range-truncated likelihood", run=_truncated, params=RANGE_PARAMS,
    fits_per_release="2", needs="public ranges", use_when="as (A), with the range-truncated likelihood",
    targets=("continuous",),
)
TRUNCATED_WHOLE = MechanismSpec(
    key="range_truncated_whole", name="B'[", pattern=True, guarantee="aDP",
    description="range restriction (B'), whole-term reading of (B)", run=_run_truncated_whole, params=RANGE_PARAMS,
    fits_per_release="2", needs="public ranges", use_when="reading (B') of the range-truncated likelihood",
    targets=("continuous",),
)
MECHANISMS = (AVERAGED, TRUNCATED, TRUNCATED_WHOLE)

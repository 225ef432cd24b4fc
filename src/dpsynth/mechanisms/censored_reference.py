"""Censor_ref: the unit-free censored likelihood. Each record's term is measured from its own reference.

The censored likelihood's guarantee needs only that each record's term lies in a window of width
``W`` whose place depends on that record and public quantities alone (:mod:`dpsynth.privacy`, "the
window, not its place"). Censor_uw puts every window at ``[-M, M]``, and the term
``log p(x_i | theta)`` of a continuous variable carries its unit: in dollars the wage density's
terms lie near ``-log(x_i)``, far below ``-M``, and nearly every record is censored. Censor_ref
subtracts the record's own term at a reference ``r_i`` and weights the difference by a public scalar
``alpha``:

.. math::

   \\sum_i \\operatorname{clamp}\\big(\\alpha\\,(\\log p(x_i \\mid \\theta) - r_i), -M, M\\big).

The difference is unit-free (a unit's Jacobian cancels), and without the clamp the pseudo posterior
is the ``alpha``-tempered posterior (``r_i`` does not depend on ``theta``). One release is
``2M``-DP with one record removed and ``4M`` with one record replaced, so ``M = eps / 2``; when every
difference has one sign (``r_i`` is the record's largest possible term) the window is ``[-M, 0]``,
``M = eps``.

Where the reference comes from (``reference``):

* ``"record"`` (the default): each record's **saturated** reference, the family's term at the
  record's own location with a public scale (:meth:`dpsynth.models.ModelFamily.reference_loglik`:
  a lognormal at ``mu = log x_i`` with ``sigma = 2``, a Poisson or negative binomial at mean
  ``x_i``, a Beta at mean ``x_i``). It is a function of the record and public constants alone, so it
  costs nothing and cannot land far from the data: no record's window depends on any other record.
  For a categorical variable there is no location; its reference is ``log p_k`` of the record's
  level from **DP counts** of the public levels (Laplace noise, ``reference_eps`` under the run's
  relation, seeded in research mode, OpenDP's secure noise in release mode), smoothed by the noise
  scale as a pseudo count, so that a level's share survives the clamp; the same shares centre the
  intercepts' prior;
* ``"prior"``: ``theta_0`` the model's own prior point (PyMC's initial point of every free
  parameter, each prior's support point or the function's public initial value, without jitter:
  :func:`dpsynth.models.user_function.prior_point`). It is a function of the model's constants
  alone, so it costs nothing and is public by construction; the windows sit where the model's
  own priors expect the data, so it suits a model whose priors were chosen for the data's unit. It
  is the rule for a user's model function (which has no saturated reference and no reference
  scale), and what ``mechanism="auto"`` picks for one (on the command line ``--reference prior``);
* ``"dp_median"``: the earlier design, ``theta_0`` from OpenDP medians of the data's location and
  spread on the family's reference scale (``reference_eps``), widened by ``widen``;
* a dict: a public ``theta_0`` (its term for every record); a ``historical`` data set: ``theta_0``
  from its median and spread.

What the window tolerates. With the saturated reference, a record's difference at ``theta`` is, for
the lognormal, ``alpha (log(s_0 / sigma) - z_i^2 / 2)`` with ``z_i`` its standardised residual and
``s_0`` the public scale: inside the window when ``|log(s_0 / sigma) - z_i^2 / 2| <= K`` with
``K = M / alpha``, the public **tolerance** (default ``K = 2.5``, so ``alpha = min(1, M / 2.5)``; a family may
set its own public default, :meth:`~dpsynth.models.ModelFamily.reference_tolerance`: ``log K + 2.5`` for the
ordinal model over ``K`` bins, whose one-signed terms sit near ``-log K``).
The location never errs. At the fit, nearly every record lies inside its window and the scale is
within 11% of the truth for ``s_0 / sigma`` from 0.7 to 12 (a trimmed likelihood's bias, computed
for normal residuals), i.e. for data whose log has a (residual) standard deviation from about 0.17
to 2.9 in any unit; the benchmark ``benchmarks/bench_reference.py`` measures how often a real file's
subsample falls outside. A smaller ``K`` weights the data more (less tempering) and tolerates less. The chains start
from a wide public point (:meth:`~dpsynth.models.ModelFamily.public_start`), from which records with
``|log x|`` up to about 20 lie inside their windows.
"""

from __future__ import annotations

import numpy as np

from ..privacy import censoring_bound, is_one_signed
from ..validation import DataError, optional, positive_number, unit_interval
from .censored import censored_fit
from .censored_public import _check_historical
from .contract import MechanismResult, MechanismSpec, Param, RunContext

__all__ = [
    "MECHANISM",
    "MECHANISMS",
    "default_alpha",
    "reference_parameters",
    "level_shares",
    "REFERENCE_PROBS",
    "REFERENCE_SPACING",
    "MAD_UPPER",
    "MAD_CANDIDATES",
    "TOLERANCE",
    "family_tolerance",
    "location_candidates",
    "REFERENCE_RULES",
]

#: The default tolerance ``K = M / alpha``: a record's difference from its reference, in log-likelihood units before
#: the weight, that its window holds on either side.
TOLERANCE = 2.5
#: Quantile level of each release of a DP median reference (``reference="dp_median"``).
REFERENCE_PROBS = (0.5,)
#: Spacing of the candidates of the DP median on the reference scale (``reference="dp_median"``).
REFERENCE_SPACING = 0.25
#: Public upper end of the median absolute deviation on the reference scale.
MAD_UPPER = 5.0
#: Candidates of the DP median absolute deviation on [0, MAD_UPPER].
MAD_CANDIDATES = 201
#: A normal distribution's standard deviation per median absolute deviation.
_MAD_SD = 1.482602218505602
#: Smallest reference scale of ``"dp_median"`` (a scale of 0 would censor every other value).
_MIN_SCALE = 0.05


def location_candidates(lo: float, hi: float) -> int:
    """Candidates of the DP median on the public range ``[lo, hi]``: one every :data:`REFERENCE_SPACING`."""
    return int(np.ceil((hi - lo) / REFERENCE_SPACING)) + 1


def default_alpha(eps: float, one_signed: bool = False, tolerance: float = TOLERANCE) -> float:
    """The default public weight ``min(1, M / K)``: ``M`` the clamp of a window of width ``eps``, ``K`` its
    tolerance."""
    return min(1.0, censoring_bound(float(eps), one_signed) / float(tolerance))


#: The named reference rules (``reference=``; on the command line ``--reference``).
REFERENCE_RULES = ("record", "prior", "dp_median")


def family_tolerance(family) -> float:
    """The public tolerance used when none is given: the family's own (:meth:`~dpsynth.models.ModelFamily.
    reference_tolerance`, e.g. ``log K + 2.5`` for the ordinal model, whose terms sit near ``-log K``), else
    :data:`TOLERANCE`."""
    own = family.reference_tolerance() if family is not None else None
    return float(TOLERANCE if own is None else own)


def _check_reference(value, name: str):
    if value is None or (isinstance(value, str) and value in REFERENCE_RULES):
        return value
    if not isinstance(value, dict) or not value:
        raise DataError(f"`{name}` must be 'record' (each record's own reference, the default), 'prior' (the "
                        f"model's own prior point), 'dp_median', or a dict of the model's parameters (a public "
                        f"theta_0); got {value!r}.")
    out = {}
    for k, v in value.items():
        arr = np.asarray(v, dtype=float)
        if not np.isfinite(arr).all():
            raise DataError(f"`{name}`[{k!r}] must be finite numbers; got {v!r}.")
        out[str(k)] = arr.reshape(1, *arr.shape) if arr.ndim == 0 or arr.shape[0] != 1 else arr
    return out


def _scale(mad: float) -> float:
    return max(_MAD_SD * float(mad), _MIN_SCALE)


def level_shares(ctx: RunContext, share: float) -> tuple[np.ndarray, tuple[float, float], dict]:
    """Each public level's share from DP counts: Laplace noise of scale ``d / share`` (``d`` = 1 removed, 2 replaced).

    The noisy counts are kept at 0 or more and smoothed by the noise scale ``b`` as a pseudo count,
    ``(max(c_k, 0) + b) / sum``, so that no level's share is 0 (post-processing). Returns the shares,
    the eps of the release ``(removed, replaced)`` and what it came from.
    """
    from .histogram import laplace_noise

    levels = int(ctx.family.n_levels)
    d = 1.0 if ctx.relation == "remove" else 2.0
    b = d / float(share)
    counts = np.bincount(ctx.x.astype(np.int64), minlength=levels).astype(float)
    seed = ctx.seed_for("reference", "counts") if ctx.mode == "research" else None
    noisy = counts + laplace_noise(levels, b, mode=ctx.mode, seed=seed)
    smoothed = np.maximum(noisy, 0.0) + b
    shares = smoothed / smoothed.sum()
    return shares, (1.0 / b, 2.0 / b), {"reference_source": "dp_counts", "reference_noise_scale": b,
                                        "reference_mode": ctx.mode}


def _dp_median(ctx: RunContext, params: dict) -> tuple[dict, tuple[float, float], dict]:
    from .quantiles import dp_quantiles

    fam = ctx.family
    if fam.reference_scale is None:
        raise DataError(f"the {fam.name} model has no reference scale for a DP median: give `reference`='prior' (the "
                        f"model's own prior point), a dict of its parameters (a public theta_0), or a public "
                        f"`historical` data set.")
    _, lo, hi = fam.reference_scale
    # the share is stated under the run's relation; OpenDP's quantiles are calibrated with one record removed
    # (symmetric distance 1), and one record replaced is a symmetric distance of 2
    d_in = 1 if ctx.relation == "remove" else 2
    half = params["reference_eps"] / 2.0 / d_in
    t = np.clip(fam.reference_transform(ctx.x), lo, hi)
    med = dp_quantiles(t, half, lower=lo, upper=hi, probs=REFERENCE_PROBS, n_candidates=location_candidates(lo, hi),
                       scale="linear")
    loc = float(med.values[0])
    mad = dp_quantiles(np.clip(np.abs(t - loc), 0.0, MAD_UPPER), half, lower=0.0, upper=MAD_UPPER,
                       probs=REFERENCE_PROBS, n_candidates=MAD_CANDIDATES, scale="linear")
    scale = params["widen"] * _scale(mad.values[0])
    spent = (float(med.eps_remove) + float(mad.eps_remove), float(med.eps_replace) + float(mad.eps_replace))
    return fam.reference(loc, scale), spent, {"reference_source": "dp", "reference_loc": loc,
                                              "reference_scale": scale, "reference_lower": lo, "reference_upper": hi}


def reference_parameters(ctx: RunContext, params: dict) -> tuple[dict | None, tuple[float, float], dict]:
    """A public or DP ``theta_0`` (None for the default record-wise reference), its eps ``(removed, replaced)``, and
    what it came from."""
    fam, ref = ctx.family, params["reference"]
    if isinstance(ref, dict):
        return ref, (0.0, 0.0), {"reference_source": "given"}
    if params["historical"] is not None:
        xh, _ = params["historical"]
        t = fam.reference_transform(xh)
        loc = float(np.median(t))
        scale = _scale(np.median(np.abs(t - loc)))
        return fam.reference(loc, params["widen"] * scale), (0.0, 0.0), {"reference_source": "historical"}
    if ref == "prior":
        from ..models.user_function import prior_point

        return prior_point(ctx.compiled.model), (0.0, 0.0), {"reference_source": "prior"}
    if ref == "dp_median":
        return _dp_median(ctx, params)
    return None, (0.0, 0.0), {}


def _theta_terms(ctx: RunContext, theta0: dict) -> tuple[np.ndarray, dict]:
    """Every record's term at a common ``theta_0``, and ``theta_0`` shaped as the model's parameters."""
    missing = [k for k in ctx.compiled.param_names if k not in theta0]
    if missing:
        raise DataError(f"the reference parameter lacks {missing}; give every parameter of the model "
                        f"({ctx.compiled.param_names}).")
    rvs = ctx.compiled.model.free_RVs
    if all(None not in rv.type.shape for rv in rvs):
        shapes = {rv.name: tuple(int(d) for d in rv.type.shape) for rv in rvs}
    else:  # a shape that follows the design (a model function's shape=X.shape[1]): evaluated
        from ..models.user_function import prior_point

        shapes = {k: np.shape(v) for k, v in prior_point(ctx.compiled.model).items()}
    try:
        theta0 = {k: np.asarray(theta0[k], dtype=float).reshape((1, *shapes[k])) for k in shapes}
    except ValueError as e:
        raise DataError(f"the reference parameter has the wrong shape for the model ({e}); the model's parameters "
                        f"have shapes {shapes}.") from None
    return np.asarray(ctx.compiled.record_loglik(theta0, ctx.x, ctx.covariates), dtype=float)[0], theta0


def _run(ctx: RunContext, params: dict) -> MechanismResult:
    from ..models.categorical import PRIOR_MEAN, log_odds

    eps, fam = params["eps"], ctx.family
    theta0, composed, info = reference_parameters(ctx, params)
    data, max_ref = None, False
    if theta0 is not None:  # a common theta_0: each record's term there
        r, theta0 = _theta_terms(ctx, theta0)
        start = {k: v[0] for k, v in theta0.items()}  # every term is 0 there: the chains start inside the windows
    elif fam.categorical:
        shares, composed, info = level_shares(ctx, params["reference_eps"])
        r = np.log(shares)[ctx.x.astype(np.int64)]
        data = {PRIOR_MEAN: log_odds(shares)}  # the DP shares centre the intercepts' prior (post-processing)
        start = fam.public_start()
    else:
        r = fam.reference_loglik(ctx.x, ctx.covariates)
        if r is None:
            raise DataError(f"the {fam.name} model has no record-wise reference: give `reference`='prior' (each "
                            f"record's term at the model's own prior point: public, free), a dict of its parameters "
                            f"(a public theta_0), a public `historical` data set, or `reference`='dp_median'.")
        r, max_ref = np.asarray(r, dtype=float), bool(fam.reference_is_max)
        info = {"reference_source": "record"}
        start = fam.public_start()
    if not np.isfinite(r).all():
        raise DataError(f"{int((~np.isfinite(r)).sum())} record(s) have no density at their reference: widen it (a "
                        f"larger `widen`, or a reference covering every value of the support).")
    one_signed = is_one_signed(fam, reference=r, reference_is_max=max_ref)
    K = params["tolerance"] if params["tolerance"] is not None else family_tolerance(fam)
    alpha = params["alpha"] if params["alpha"] is not None else default_alpha(eps, one_signed, K)
    return censored_fit(
        ctx, MECHANISM, eps, "censor_ref", eps, weights=np.full(ctx.n, alpha), reference=alpha * r, init=start,
        reference_is_max=max_ref, data=data, composed=composed, alpha=alpha, tolerance=K,
        reference_eps_remove=composed[0], reference_eps_replace=composed[1], **info,
    )


def _declared(params: dict, one_signed: bool, extra: dict | None = None) -> tuple[float, float]:
    """The window's ``eps`` (``2 eps`` replaced) plus what the reference's release cost, as the report records it."""
    e = float(params["eps"])
    extra = extra or {}
    return e + float(extra.get("reference_eps_remove", 0.0)), 2.0 * e + float(extra.get("reference_eps_replace", 0.0))


def releases_reference(given, family) -> bool:
    """Whether a run with these (given) parameters releases a reference from the data (charged once per fit)."""
    given = given or {}
    if isinstance(given.get("reference"), dict) or given.get("reference") == "prior" or \
            given.get("historical") is not None:
        return False
    if given.get("reference") == "dp_median":
        return True
    return bool(family is not None and family.categorical)


MECHANISM = MechanismSpec(
    key="censor_ref",
    name="Censor_ref",
    guarantee="DP",
    description="censored at each record's own reference term: unit-free",
    run=_run,
    takes_eps=True,
    declared_eps=_declared,
    releases_reference=releases_reference,
    censoring_advice="The windows are placed at each record's own reference: if the spread of the log of the data "
                     "is below 0.17 or above 2.9, give a public reference (`reference=`, or a `historical=` data set), "
                     "or raise eps",
    params={
        "alpha": Param(None, optional(unit_interval), "public weight alpha in (0, 1] of the differences (default "
                       "min(1, M / tolerance), a function of eps alone)"),
        "tolerance": Param(None, optional(positive_number), "how far (in log-likelihood units before the weight) "
                           "a record's term may lie from its reference inside its window: alpha = M / tolerance "
                           f"(default {TOLERANCE:g}, or the model's own public tolerance: log K + 2.5 for the "
                           "ordinal model over K bins)"),
        "reference": Param(None, _check_reference, "'record' (each record's own reference: the default for a "
                           "shipped family), 'prior' (theta_0 the model's own prior point: public, free; for a "
                           "model function), 'dp_median' (theta_0 from DP medians), or (Python only) a dict of the "
                           "model's parameters (a public theta_0)", cli="str"),
        "historical": Param(None, _check_historical, "a public or earlier data set laid out like the confidential "
                            "data; its median and spread set theta_0", cli="table", table=True),
        "reference_eps": Param(0.1, positive_number, "eps of a reference released from the data (a categorical "
                               "target's DP counts, or reference='dp_median'), under the run's relation; the "
                               "Synthesizer takes it out of the total eps (default: 10% of it)"),
        "widen": Param(2.0, positive_number, "public factor widening the scale of a DP-median or historical theta_0"),
    },
    fits_per_release="1",
    needs="a target ε (a categorical target's DP level counts come out of it)",
    use_when="strict DP with no unit to choose: the default censored mechanism",
    loses="precision: the tempered posterior (weight α < 1 below large ε) is wider, and records far from their "
          "reference are censored",
)
MECHANISMS = (MECHANISM,)

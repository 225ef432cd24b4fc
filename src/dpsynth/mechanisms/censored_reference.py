"""Censor_ref: the unit-free censored likelihood. Each record's term is measured from a public reference.

The censored likelihood's guarantee needs only that each record's term lies in a window of width
``W`` whose place depends on that record and public quantities alone (:mod:`dpsynth.privacy`, "the
window, not its place"). Censor_uw puts every window at ``[-M, M]``, and the term
``log p(x_i | theta)`` of a continuous variable carries its unit: in dollars the wage density's
terms lie near ``-log(x_i)``, far below ``-M``, and nearly every record is censored, in thousands
almost none is. Censor_ref subtracts the record's own term at a public reference parameter
``theta_0`` and weights the difference by a public scalar ``alpha``:

.. math::

   \\sum_i \\operatorname{clamp}\\big(\\alpha\\,(\\log p(x_i \\mid \\theta) - \\log p(x_i \\mid \\theta_0)),
   -M, M\\big), \\qquad M = \\varepsilon / 2.

The difference is unit-free (a unit's Jacobian cancels), each window depends only on ``x_i`` and
``theta_0``, and without the clamp the pseudo posterior is the ``alpha``-tempered posterior (the
reference is a constant in ``theta``). So one release is ``eps``-DP with one record removed and
``2 eps`` with one record replaced, plus what ``theta_0`` cost:

* ``theta_0`` is public: given (``reference``), or from a public historical data set
  (``historical``: its median and median absolute deviation on the model's reference scale), or
  released here: the data's median on the family's reference scale (``log x`` for a positive
  variable, ``logit x`` in (0, 1), ``log(1 + x)`` for counts) by OpenDP's private-quantile mechanism
  over a public candidate grid that spans many orders of magnitude (no unit to choose), then the
  median absolute deviation from it the same way (on ``[0, 5]``), each at ``reference_eps / 2``,
  composed with the fit and charged with it. The candidates are few (one every 0.25 on the
  reference scale): the exponential mechanism behind a DP quantile weighs every candidate, and
  the many far from the median would otherwise win too often on a few hundred records. A median
  is what such a mechanism releases best (every candidate far from it scores ``n/2`` ranks
  away); a quartile of a few hundred records on so wide a grid is often lost in its flat tails;
* its scale is widened by the public factor ``widen`` (a reference narrower than the data puts the
  tails' terms far below it and censors them);
* ``alpha`` is public, a function of ``eps`` alone (default ``min(1, eps / 4)``): smaller ``alpha``
  keeps more records inside the window (less censoring bias) at the cost of a wider, tempered
  posterior.
"""

from __future__ import annotations

import numpy as np

from ..palette import PALETTE
from ..validation import DataError, optional, positive_number, unit_interval
from .censored import censored_fit
from .censored_public import _check_historical
from .contract import MechanismResult, MechanismSpec, Param, RunContext

__all__ = [
    "MECHANISM",
    "MECHANISMS",
    "default_alpha",
    "reference_parameters",
    "REFERENCE_PROBS",
    "REFERENCE_SPACING",
    "MAD_UPPER",
    "MAD_CANDIDATES",
    "location_candidates",
]

#: Quantile level of each release of the reference (a median: of the data, then of the deviations from it).
REFERENCE_PROBS = (0.5,)
#: Spacing of the candidates of the DP median on the reference scale (a widened reference needs no finer grid).
REFERENCE_SPACING = 0.25
#: Public upper end of the median absolute deviation on the reference scale (5 log-units is already absurd).
MAD_UPPER = 5.0
#: Candidates of the DP median absolute deviation on [0, MAD_UPPER].
MAD_CANDIDATES = 201
#: A normal distribution's standard deviation per median absolute deviation.
_MAD_SD = 1.482602218505602
#: Smallest reference scale (a scale of 0, e.g. counts with many ties, would censor every other value).
_MIN_SCALE = 0.05


def location_candidates(lo: float, hi: float) -> int:
    """Candidates of the DP median on the public range ``[lo, hi]``: one every :data:`REFERENCE_SPACING`.

    Few candidates matter: the exponential mechanism behind OpenDP's quantile puts weight
    ``exp(-eps |rank - n/2| / 2)`` on each, and the candidates far from the median, at ``n/2``
    ranks, together outweigh the few near it unless ``n`` is large or they are few.
    """
    return int(np.ceil((hi - lo) / REFERENCE_SPACING)) + 1


def default_alpha(eps: float) -> float:
    """The default public weight: ``min(1, eps / 4)``, a function of ``eps`` alone."""
    return min(1.0, float(eps) / 4.0)


def _check_reference(value, name: str) -> dict:
    if not isinstance(value, dict) or not value:
        raise DataError(f"`{name}` must be a dict of the model's parameters (a public theta_0); got {value!r}.")
    out = {}
    for k, v in value.items():
        arr = np.asarray(v, dtype=float)
        if not np.isfinite(arr).all():
            raise DataError(f"`{name}`[{k!r}] must be finite numbers; got {v!r}.")
        out[str(k)] = arr.reshape(1, *arr.shape) if arr.ndim == 0 or arr.shape[0] != 1 else arr
    return out


def _scale(mad: float) -> float:
    return max(_MAD_SD * float(mad), _MIN_SCALE)


def reference_parameters(ctx: RunContext, params: dict) -> tuple[dict, tuple[float, float], dict]:
    """``theta_0``, the epsilon its release cost ``(removed, replaced)``, and what it came from."""
    fam = ctx.family
    if params["reference"] is not None:
        return params["reference"], (0.0, 0.0), {"reference_source": "given"}
    if fam.public_reference() is not None:  # e.g. equal probabilities of public levels: nothing of the data
        return fam.public_reference(), (0.0, 0.0), {"reference_source": "public"}
    if fam.reference_scale is None:
        raise DataError(
            f"the {fam.name} model has no reference rule: give `reference` (a dict of its parameters, a "
            f"public theta_0) or a public `historical` data set."
        )
    widen = params["widen"]
    if params["historical"] is not None:
        xh, _ = params["historical"]
        t = fam.reference_transform(xh)
        loc = float(np.median(t))
        scale = _scale(np.median(np.abs(t - loc)))
        return fam.reference(loc, widen * scale), (0.0, 0.0), {"reference_source": "historical"}
    from .quantiles import dp_quantiles

    _, lo, hi = fam.reference_scale
    # the share is stated under the run's relation; OpenDP's quantiles are calibrated with one record removed
    # (symmetric distance 1), and one record replaced is a symmetric distance of 2
    d_in = 1 if ctx.relation == "remove" else 2
    half = params["reference_eps"] / 2.0 / d_in
    # clamped to the public range of the reference scale (a step of this release, not of the data used by the fit)
    t = np.clip(fam.reference_transform(ctx.x), lo, hi)
    med = dp_quantiles(
        t, half, lower=lo, upper=hi, probs=REFERENCE_PROBS, n_candidates=location_candidates(lo, hi), scale="linear"
    )
    loc = float(med.values[0])
    # the deviations from the released median (public once released): a second median, composed
    mad = dp_quantiles(
        np.clip(np.abs(t - loc), 0.0, MAD_UPPER),
        half,
        lower=0.0,
        upper=MAD_UPPER,
        probs=REFERENCE_PROBS,
        n_candidates=MAD_CANDIDATES,
        scale="linear",
    )
    scale = _scale(mad.values[0])
    theta0 = fam.reference(loc, widen * scale)
    spent = (float(med.eps_remove) + float(mad.eps_remove), float(med.eps_replace) + float(mad.eps_replace))
    return (
        theta0,
        spent,
        {
            "reference_source": "dp",
            "reference_loc": loc,
            "reference_scale": widen * scale,
            "reference_lower": lo,
            "reference_upper": hi,
        },
    )


def _run(ctx: RunContext, params: dict) -> MechanismResult:
    eps = params["eps"]
    alpha = params["alpha"] if params["alpha"] is not None else default_alpha(eps)
    theta0, composed, info = reference_parameters(ctx, params)
    missing = [k for k in ctx.compiled.param_names if k not in theta0]
    if missing:
        raise DataError(
            f"the reference parameter lacks {missing}; give every parameter of the model ({ctx.compiled.param_names})."
        )
    shapes = {rv.name: tuple(int(d) for d in rv.type.shape) for rv in ctx.compiled.model.free_RVs}
    try:
        theta0 = {k: np.asarray(theta0[k], dtype=float).reshape((1, *shapes[k])) for k in shapes}
    except ValueError as e:
        raise DataError(
            f"the reference parameter has the wrong shape for the model ({e}); the model's "
            f"parameters have shapes {shapes}."
        ) from None
    f0 = np.asarray(ctx.compiled.record_loglik(theta0, ctx.x, ctx.covariates), dtype=float)[0]
    if not np.isfinite(f0).all():
        raise DataError(
            f"{int((~np.isfinite(f0)).sum())} record(s) have no density at the reference parameter: "
            f"widen it (a larger `widen`, or a reference covering every value of the support)."
        )
    res = censored_fit(
        ctx,
        MECHANISM,
        eps,
        "censor_ref",
        eps,
        weights=np.full(ctx.n, alpha),
        reference=alpha * f0,
        init={k: v[0] for k, v in theta0.items()},  # every term is 0 there: the chains start inside the window
        composed=composed,
        alpha=alpha,
        reference_eps_remove=composed[0],
        reference_eps_replace=composed[1],
        **info,
    )
    return res


def _declared(params: dict, one_signed: bool, extra: dict | None = None) -> tuple[float, float]:
    """The window's ``eps`` (``2 eps`` replaced) plus what the reference's release cost, as the report records it."""
    e = float(params["eps"])
    extra = extra or {}
    if extra.get("reference_source") == "dp":
        return e + float(extra["reference_eps_remove"]), 2.0 * e + float(extra["reference_eps_replace"])
    return e, 2.0 * e


def releases_reference(given, family) -> bool:
    """Whether a run with these (given) parameters releases a reference from the data (charged once per fit)."""
    given = given or {}
    if given.get("reference") is not None or given.get("historical") is not None:
        return False
    return family is None or family.public_reference() is None


MECHANISM = MechanismSpec(
    key="censor_ref",
    name="Censor_ref",
    guarantee="DP",
    colour=PALETTE["blue"],
    order=95,
    description="censored at ε/2 around each record's term at a public reference θ₀: unit-free",
    run=_run,
    takes_eps=True,
    declared_eps=_declared,
    releases_reference=releases_reference,
    censoring_advice="The window is placed at the reference theta_0: give a public one (`reference=`, or a "
                     "`historical=` data set), a larger share for it (`reference_eps=`), or raise eps",
    params={
        "alpha": Param(
            None,
            optional(unit_interval),
            "public weight alpha in (0, 1] of the difference from the "
            "reference (default min(1, eps/4), a function of eps alone)",
        ),
        "reference": Param(
            None,
            _check_reference,
            "a public reference parameter theta_0: a dict of the model's parameters (instead of a DP release)",
            cli=None,
        ),
        "historical": Param(
            None,
            _check_historical,
            "a public or earlier data set laid out like the confidential data; its median and spread set theta_0",
            cli="table",
            table=True,
        ),
        "reference_eps": Param(
            0.1,
            positive_number,
            "eps of the DP release (OpenDP medians) of the data's location and spread that sets theta_0, "
            "under the run's relation; the Synthesizer takes it out of the total eps (default: 10% of it)",
        ),
        "widen": Param(2.0, positive_number, "public factor widening theta_0's scale beyond the released one"),
    },
    fits_per_release="1",
    needs="a target ε (θ₀ from a small DP release, a historical data set, or given)",
    use_when="strict DP with no unit to choose: the default censored mechanism",
    loses="precision: the tempered posterior (weight α < 1 at small ε) is wider, and records far from θ₀ are censored",
)
MECHANISMS = (MECHANISM,)

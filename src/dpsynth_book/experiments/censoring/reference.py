"""The Censor_ref study of the censoring chapter (``censoring-reference``): a unit-free window.

:func:`reference_replicate` draws the chapter's confidential data set (``x ~ Beta(0.5, 3)``, the
same ``_data``, family and priors as :func:`dpsynth_book.experiments.censoring.replicate.replicate`)
and a historical data set from the same distribution on its own stream (as Censor_w-pub's is
drawn there), and at each eps of ``ref_eps_grid`` fits the variants of :func:`variants`:

* **Censor_uw** and **Censor_w-pub** (the chapter's strict-DP censored synthesizers);
* **Censor_ref** (:mod:`dpsynth.mechanisms.censored_reference`) with its defaults: each record's window
  is anchored at the record's own *saturated* reference term with public settings
  (:meth:`dpsynth.models.ModelFamily.reference_loglik`; for the Beta model the record at its own mean
  with the public precision :data:`dpsynth.models.base.REFERENCE_PRECISION`), the tolerance
  ``K`` = :data:`~dpsynth.mechanisms.censored_reference.TOLERANCE` and ``alpha = min(1, M / K)`` with
  ``M = eps / 2`` (:func:`~dpsynth.mechanisms.censored_reference.default_alpha`). No reference is
  released, so nothing is charged besides the window's eps;
* Censor_ref with each fixed ``alpha`` of ``ref_alphas`` instead of ``min(1, M / K)`` (its default reference);
* **Censor_ref, DP median θ₀** (``reference="dp_median"``), the earlier default design: a common
  ``theta_0`` from OpenDP's private medians of ``logit x`` and of the absolute deviations from it
  (``ref_eps``, composed with the fit and charged), its scale widened by the default factor
  (:data:`WIDEN`), ``alpha`` by the same rule ``min(1, M / K)`` (the earlier study's ``min(1, eps/4)`` is
  ``K = 2``);
* Censor_ref with ``theta_0`` from the historical data set (its median and spread, widened by
  :data:`WIDEN`; nothing charged);
* the DP median ``theta_0`` with each widening of ``ref_widens`` (widening applies to a common
  ``theta_0`` only, not to the records' own references).

Every fit's random streams are addressed by its cell ``(variant, eps)``, never by its position in
the grid, so a cell recomputed alone repeats the shipped one (up to OpenDP's own randomness in the
DP median's release, which is not seeded).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import xarray as xr

from dpsynth.fitting import compiled_model
from dpsynth.mechanisms import RunContext
from dpsynth.mechanisms import run as run_mechanism
from dpsynth.mechanisms.censored_reference import MECHANISM as _CENSOR_REF
from dpsynth.seeds import stream
from dpsynth.synthetic_data import synthesize

from ...studies import data_fingerprint, rows_to_dataset
from .params import CensoringParams
from .replicate import _check_cap, _data, _family, _fit_cols, _utility, true_stats

__all__ = ["DEFAULT", "DP_MEDIAN", "HISTORICAL", "WIDEN", "variants", "variant_settings", "charges_reference",
           "reference_replicate"]

#: Censor_ref with every default (each record's own reference, alpha = min(1, M / K)).
DEFAULT = "Censor_ref"
#: Censor_ref with a common theta_0 from DP medians (``reference="dp_median"``), the earlier design.
DP_MEDIAN = "Censor_ref, DP median theta_0"
#: Censor_ref with a common theta_0 from the historical data set.
HISTORICAL = "Censor_ref, historical theta_0"
#: The default widening of a common theta_0's scale (Censor_ref's ``widen``).
WIDEN = float(_CENSOR_REF.params["widen"].default)


def _num(v: float) -> str:
    return f"{float(v):g}"


def variants(ref_alphas=(1.0, 0.5, 0.25), ref_widens=(1.0, 4.0)) -> list[str]:
    """Variant names in display order: Censor_uw, Censor_w-pub, Censor_ref and its fixed alphas, then the common
    theta_0 (DP median, historical) and the DP median's other widenings."""
    return ["Censor_uw", "Censor_w-pub", DEFAULT, *(f"Censor_ref, alpha = {_num(a)}" for a in ref_alphas),
            DP_MEDIAN, HISTORICAL, *(f"{DP_MEDIAN}, widen {_num(w)}" for w in ref_widens)]


def variant_settings(name: str) -> dict:
    """What a variant is: ``synthesizer`` (registry name), ``reference``, ``alpha`` rule and ``widen``.

    ``reference`` is ``"record"`` (each record's own saturated reference, the default), ``"dp_median"``,
    ``"historical"`` or ``None`` (Censor_uw, Censor_w-pub); ``alpha`` is ``None`` for the default rule
    ``min(1, M / K)``; ``widen`` is the widening of a common ``theta_0`` (``None`` for the records' own
    references, which are not widened).
    """
    if name in ("Censor_uw", "Censor_w-pub"):
        return {"synthesizer": name, "reference": None, "alpha": None, "widen": None}
    if name == DEFAULT:
        return {"synthesizer": "Censor_ref", "reference": "record", "alpha": None, "widen": None}
    if name.startswith("Censor_ref, alpha = "):
        return {"synthesizer": "Censor_ref", "reference": "record", "alpha": float(name.rsplit(" ", 1)[1]),
                "widen": None}
    if name == DP_MEDIAN:
        return {"synthesizer": "Censor_ref", "reference": "dp_median", "alpha": None, "widen": WIDEN}
    if name == HISTORICAL:
        return {"synthesizer": "Censor_ref", "reference": "historical", "alpha": None, "widen": WIDEN}
    if name.startswith(f"{DP_MEDIAN}, widen "):
        return {"synthesizer": "Censor_ref", "reference": "dp_median", "alpha": None,
                "widen": float(name.rsplit(" ", 1)[1])}
    raise KeyError(f"unknown variant {name!r}.")


def charges_reference(name: str) -> bool:
    """Whether a variant releases its reference from the confidential data (and so charges its eps)."""
    return variant_settings(name)["reference"] == "dp_median"


def _posterior(fit) -> dict:
    """Posterior mean and sd of the Beta model's mean ``phi`` (the implied mean of x) and concentration ``lam``."""
    out = {}
    for k in ("phi", "lam"):
        d = np.asarray(fit.draws[k], dtype=float).ravel()
        out[f"{k}_mean"], out[f"{k}_sd"] = float(d.mean()), float(d.std(ddof=1))
    return out


def _censor_ref_kwargs(s: dict, ref_eps: float, x_hist) -> dict:
    """Censor_ref's parameters for a variant's settings (:func:`variant_settings`)."""
    kw: dict = {"alpha": s["alpha"]}
    if s["reference"] == "dp_median":
        kw.update(reference="dp_median", widen=s["widen"], reference_eps=float(ref_eps))
    elif s["reference"] == "historical":
        kw.update(historical=(x_hist, None), widen=s["widen"])
    return kw


def reference_replicate(r: int, seed: np.random.SeedSequence, params: Mapping) -> xr.Dataset:
    """One replicate of the Censor_ref study.

    Parameters
    ----------
    r : int
        Replicate index (the seed already addresses it).
    seed : numpy.random.SeedSequence
        This replicate's stream.
    params : mapping
        :meth:`CensoringParams.reference_dict` output.

    Returns
    -------
    xarray.Dataset
        Variables over ``(eps, variant)``: ``delta``, ``eps_remove`` and ``eps_replace`` (the
        declared epsilon of one released draw, with a released reference included),
        ``reference_eps_remove`` (0 where no reference is released), ``alpha`` (the value used),
        ``widen`` (NaN where no common theta_0 is widened), ``n_censored`` and ``share_censored``, the
        posterior mean and sd of ``phi`` (the mean of x) and ``lam``, convergence (``converged``,
        ``rhat``, ``ess``, ``divergences``) and the utilities of one synthetic data set (``max_ecdf``,
        ``avg_ecdf``, ``mean``, ``median``, ``q15``, ``q90``); scalars ``true_mean`` and
        ``data_fingerprint``.

    Raises
    ------
    AssertionError
        If a fit reports ``Delta > eps / 2``.
    """
    p = CensoringParams.from_mapping(params)
    x = _data(p.n, stream(seed, "data"))
    # the historical data set is drawn as Censor_w-pub's is in the main study
    x_hist = _data(p.n, stream(seed, "historical", "data"))
    fam = _family(p)
    cm = compiled_model(fam, x)
    # Censor_uw and Censor_w-pub share one context (the historical fit once, its seed free of eps); their fits'
    # steps name the eps, so each cell has its own stream
    base = RunContext(x, family=fam, sampler=p.sampler, seed_fn=lambda *parts: stream(seed, "fit", *parts),
                      compiled=cm)
    names = variants(p.ref_alphas, p.ref_widens)
    rows = []
    for eps in (float(e) for e in p.ref_eps_grid):
        for name in names:
            s = variant_settings(name)
            if s["synthesizer"] == "Censor_uw":
                res = run_mechanism("censor_uw", base, eps=eps)
            elif s["synthesizer"] == "Censor_w-pub":
                res = run_mechanism("censor_w_public", base, eps=eps, historical=(x_hist, None))
            else:
                ctx = RunContext(x, family=fam, sampler=p.sampler, compiled=cm,
                                 seed_fn=lambda *parts, _v=name: stream(seed, "fit", _v, *parts))
                res = run_mechanism("censor_ref", ctx, eps=eps, **_censor_ref_kwargs(s, p.ref_eps, x_hist))
            _check_cap(res, eps)
            pr = res.privacy
            fc = _fit_cols(res.fit)
            rows.append({
                "eps": eps, "variant": name, "delta": pr.delta, "eps_remove": pr.eps, "eps_replace": pr.eps_replace,
                "reference_eps_remove": float(pr.composed[0]),
                "alpha": float(res.extra["alpha"]) if s["synthesizer"] == "Censor_ref" else np.nan,
                "widen": s["widen"] if s["widen"] is not None else np.nan,
                "n_censored": float(pr.n_censored), "share_censored": float(pr.n_censored) / p.n,
                **_posterior(res.fit),
                **{k: fc[k] for k in ("converged", "rhat", "ess", "divergences")},
                **_utility(x, synthesize(res.fit, stream(seed, "syn", name, eps))),
            })
    out = rows_to_dataset(rows, ["eps", "variant"]).reindex(variant=names)
    out["true_mean"] = true_stats()["mean"]
    out["data_fingerprint"] = data_fingerprint(x, x_hist)
    return out

"""Verdicts of the "Your own data" chapter, and the named numbers behind them and behind its prose.

:func:`verdicts` checks the chapter's claims on its results. :func:`units_numbers` and
:func:`fit_time_numbers` return the numbers of the chapter's computed paragraphs, which the
notebook's Markdown quotes through glue (:func:`text_numbers`, :func:`dpsynth.book.glue_numbers`).
"""

from __future__ import annotations

import numpy as np

from ... import registry
from .tables import coefficient_table, fit_frame, privacy_table, study_of, units_of

__all__ = ["units_numbers", "fit_time_numbers", "text_numbers", "verdicts"]


def units_numbers(results) -> dict:
    """The units result: one censored mechanism at the largest eps on the wages in three units.

    Returns
    -------
    dict
        ``mechanism`` (the registry label of the first censored mechanism of the units study, in
        registry order), ``eps`` (the study's largest), ``n`` records and the data's median wage
        (``data_median``, dollars); and per setting, ``dollars``, ``thousands`` and ``offset``
        (dollars with the public offset -log 1000), the mean over runs of the records censored
        (``censored``), the synthetic median (``median``, dollars) and ``max_ecdf``.
    """
    u = units_of(results)
    mech = registry.order([str(m) for m in u["mechanism"].values])[0]
    eps_max = float(u["eps"].values.max())
    pick = u.sel(mechanism=mech, eps=eps_max).mean("replicate")

    def setting(s):
        v = pick.sel(setting=s)
        return {"censored": float(v["n_censored"]), "median": float(v["median"]), "max_ecdf": float(v["max_ecdf"])}

    return {"mechanism": registry.label(mech), "eps": eps_max, "n": int(u.attrs.get("n", 0)),
            "data_median": float(u["median_data"].values.ravel()[0]),
            "dollars": setting("dollars"), "thousands": setting("thousands"),
            "offset": setting("dollars, offset -log 1000")}


def fit_time_numbers(results) -> dict:
    """The wall time of one release at the file's size, over the model-based mechanisms.

    Returns
    -------
    dict
        ``n`` records, ``runs``, and the smallest and largest median release time in seconds
        (``min_seconds``, ``max_seconds``) over the mechanisms fitted by MCMC, from
        :func:`~dpsynth.experiments.own_data.tables.privacy_table` (Weighted and Censor_w include
        the unweighted fit that sets their weights).
    """
    tab = privacy_table(results)
    ds = study_of(results)
    timed = tab[tab["converged"] != "no MCMC"]["time per release (s)"]
    return {"n": int(ds.attrs.get("n", 0)), "runs": int(ds.sizes["replicate"]),
            "min_seconds": float(timed.min()), "max_seconds": float(timed.max())}


def text_numbers(results) -> dict:
    """Every number the chapter's Markdown quotes: ``units`` (:func:`units_numbers`) and ``fit_time``
    (:func:`fit_time_numbers`).

    The notebook glues them with ``dpsynth.book.glue_numbers("own", text_numbers(results))``: e.g.
    ``units_numbers(results)["dollars"]["censored"]`` is the glue key ``own-units-dollars-censored``.
    """
    return {"units": units_numbers(results), "fit_time": fit_time_numbers(results)}


def verdicts(results) -> list:
    """The chapter's claims checked on its results (:class:`dpsynth.verdicts.Verdict`).

    * ``censored_within_bound``: every censored fit has Delta <= eps/2 (asserted on every fit).
    * ``privacy_relations``: with one record replaced, every mechanism's epsilon is twice its
      one-removed figure (continuous densities take both signs; PH and OpenDP's quantiles move
      one record out of one bin or score and into another).
    * ``unit_changes_censoring``: in dollars the censored lognormal discards more than half of the
      records at every eps; in thousands it keeps most of them.
    * ``offset_is_a_unit``: dollars with the public offset ``-log 1000`` censor as many records as
      thousands (within Monte Carlo noise: 2% of n).
    * ``marginal_favours_model_free``: at every eps, PH or OpenDP-Q has a smaller mean max-ECDF
      than Censor_uw (the lognormal regression misses the shape of the marginal distribution).
    * ``model_keeps_regression``: at the largest eps, Censor_uw's synthetic data give the analyst's
      regression coefficients closer to the confidential ones than OpenDP-Q's (root mean squared
      difference over the covariate terms).
    """
    from ...verdicts import Verdict

    f = fit_frame(results)
    out = []
    cens = f[f["synthesizer"].isin(["Censor_w", "Censor_uw"])]
    worst = float((cens["delta"] - cens["eps"] / 2).max()) if len(cens) else float("nan")
    out.append(Verdict("censored_within_bound", "A censored likelihood keeps every record's term within ±ε/2",
                       bool(len(cens)) and worst <= 1e-9,
                       f"largest Δ − ε/2 over {len(cens)} censored fits: {worst:.2g}.", {"worst": worst}))
    priv = f[(f["synthesizer"] != "Data") & np.isfinite(f["eps_remove"])]
    ratio = (priv["eps_replace"] / priv["eps_remove"]).to_numpy()
    ok = bool(np.allclose(ratio, 2.0, rtol=1e-6))
    out.append(Verdict("privacy_relations", "With one record replaced, ε doubles", ok,
                       f"ratio ε(replaced)/ε(removed) from {ratio.min():.3g} to {ratio.max():.3g} over "
                       f"{ratio.size} fits.", {"min": float(ratio.min()), "max": float(ratio.max())}))
    u = units_of(results)
    n = float(u.attrs.get("n", 1))
    share = (u["n_censored"] / n).mean("replicate")
    dol = share.sel(setting="dollars")
    thou = share.sel(setting="thousands")
    off = share.sel(setting="dollars, offset -log 1000")
    holds = bool((dol > 0.5).all() and (thou < 0.5).all())
    out.append(Verdict("unit_changes_censoring", "The unit of a continuous variable decides how much is censored",
                       holds, f"share censored in dollars {float(dol.min()):.1%}–{float(dol.max()):.1%}; in thousands "
                       f"{float(thou.min()):.1%}–{float(thou.max()):.1%} (mechanisms × ε of the units study).",
                       {"dollars_min": float(dol.min()), "thousands_max": float(thou.max())}))
    gap = float(np.abs(off - thou).max())
    out.append(Verdict("offset_is_a_unit", "A public offset −log 1000 in dollars is the thousands fit",
                       gap <= 0.02, f"largest difference in the share censored: {gap:.2%} of the records.",
                       {"gap": gap}))
    eps_grid = sorted({float(e) for e in f["eps"] if np.isfinite(e)})
    means = f.groupby(["synthesizer", "eps"])["max_ecdf"].mean()
    model_free = [n for n in ("PH", "OpenDP-Q") if n in set(f["synthesizer"])]
    if "Censor_uw" in set(f["synthesizer"]) and model_free and eps_grid:
        wins = [e for e in eps_grid if min(means[(n, e)] for n in model_free) < means[("Censor_uw", e)]]
        out.append(Verdict("marginal_favours_model_free",
                           "For the wage's own distribution, a model-free DP release beats the misspecified model",
                           len(wins) == len(eps_grid),
                           f"the better of {' and '.join(model_free)} has a smaller mean max-ECDF than Censor_uw at "
                           f"{len(wins)} of {len(eps_grid)} ε; Unweighted, not private, has "
                           f"{float(f.loc[f['synthesizer'] == 'Unweighted', 'max_ecdf'].mean()):.3f}: the lognormal "
                           f"regression itself misses the shape of the wages.",
                           {"wins": len(wins), "eps": len(eps_grid)}))
    ds = study_of(results)
    top = float(np.nanmax(ds["eps"].values))
    have = set(ds["synthesizer"].values)
    if {"Censor_uw", "OpenDP-Q"} <= have:
        tab = coefficient_table(results, top).drop(index="intercept")
        rms = lambda col: float(np.sqrt(((tab[col] - tab["Data"]) ** 2).mean()))  # noqa: E731
        a, b = rms(registry.label("Censor_uw")), rms(registry.label("OpenDP-Q"))
        out.append(Verdict("model_keeps_regression",
                           "A model of the wage on the covariates keeps the analyst's regression; quantiles do not",
                           a < b, f"at ε = {top:g}, root mean squared coefficient error {a:.3f} (Censor_uw) against "
                           f"{b:.3f} (OpenDP-Q).", {"censor_uw": a, "opendp_q": b}))
    return out

"""Verdicts of the "Your own data" chapter, and the named numbers behind them and behind its prose.

:func:`verdicts` checks the chapter's claims on its results. :func:`units_numbers` and
:func:`fit_time_numbers` return the numbers of the chapter's computed paragraphs, which the
notebook's Markdown quotes through glue (:func:`text_numbers`, :func:`dpsynth_book.book.glue_numbers`).
"""

from __future__ import annotations

import numpy as np

from dpsynth import registry

from ... import presentation
from .tables import CONVERGED_ONLY, coefficient_table, fit_frame, privacy_table, study_of, unit_spread, units_of

__all__ = ["units_numbers", "fit_time_numbers", "rule_numbers", "unit_example_numbers", "text_numbers", "verdicts",
           "files_numbers", "unit_spread", "unitfree_numbers", "new_verdicts"]


def units_numbers(results) -> dict:
    """The units result: one censored mechanism at the largest eps on the wages in three units.

    Returns
    -------
    dict
        ``mechanism`` (the registry label of the first censored mechanism of the units study, in
        the book's order), ``eps`` (the study's largest), ``bound`` (its censoring bound M, half the draw's share
        ``draw`` of the total: no covariates, so the DP released size's share comes first), ``n`` records and the
        data's median wage
        (``data_median``, dollars); and per setting, ``dollars``, ``thousands`` and ``offset``
        (dollars with the public offset -log 1000), the mean over runs of the records censored
        (``censored``), the synthetic median (``median``, dollars) and ``max_ecdf``.
    """
    u = units_of(results)
    mech = presentation.order([str(m) for m in u["mechanism"].values])[0]
    eps_max = float(u["eps"].values.max())
    pick = u.sel(mechanism=mech, eps=eps_max).mean("replicate")

    def setting(s):
        v = pick.sel(setting=s)
        return {"censored": float(v["n_censored"]), "median": float(v["median"]), "max_ecdf": float(v["max_ecdf"])}

    cell = u.sel(mechanism=mech, eps=eps_max)
    return {"mechanism": registry.label(mech), "eps": eps_max, "n": int(u.attrs.get("n", 0)),
            "bound": float(cell["bound"].median()), "draw": float(cell["draw_eps"].median()),
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
        :func:`~dpsynth_book.experiments.own_data.tables.privacy_table` (LW and Censor_w include
        the unweighted fit that sets their weights).
    """
    tab = privacy_table(results)
    ds = study_of(results)
    timed = tab[tab["converged"] != "no MCMC"]["time per release (s)"]
    return {"n": int(ds.attrs.get("n", 0)), "runs": int(ds.sizes["replicate"]),
            "min_seconds": float(timed.min()), "max_seconds": float(timed.max())}


def rule_numbers() -> dict:
    """The package's public rules the chapter's prose quotes (constants, not results).

    Returns
    -------
    dict
        The shares of a total eps (:mod:`dpsynth.release.budget`): ``size_share`` (a DP released size),
        ``reference_share`` (a reference released from the data), ``marginal_share`` (``calibrate=``);
        Censor_ref's tolerance ``tolerance`` (K) and the lognormal's public reference scale
        ``reference_sd`` (s0).
    """
    from dpsynth.mechanisms.censored_reference import TOLERANCE
    from dpsynth.models.lognormal import REFERENCE_SD
    from dpsynth.release.budget import MARGINAL_SHARE, REFERENCE_SHARE, SIZE_SHARE

    return {"size_share": SIZE_SHARE, "reference_share": REFERENCE_SHARE, "marginal_share": MARGINAL_SHARE,
            "tolerance": TOLERANCE, "reference_sd": REFERENCE_SD}


def unit_example_numbers(params, *, eps0: float = 0.1, eps: float = 5.0) -> dict:
    """A unit computed from the data: OpenDP's private median of the wage, and what it takes out of a release's total.

    Runs :func:`dpsynth.mechanisms.quantiles.dp_quantiles` at ``eps0`` (one record removed) on the
    CPS wages in dollars between the study's public bounds (OpenDP's noise: a new draw on every run),
    and splits a total ``eps`` with one record removed (no covariates) by the public rule
    (:meth:`dpsynth.release.budget.Budget.plan`) with and without that median released.

    Returns
    -------
    dict
        ``eps0``, ``eps``, ``dp_median`` and ``data_median`` (dollars), ``size`` (the released size's
        share), ``draw`` (the draw's share with the median released) and ``draw_public`` (with a public
        unit), and the windows' bounds ``bound`` and ``bound_public`` (M, half the draw's share).
    """
    from dpsynth.mechanisms.quantiles import dp_quantiles
    from dpsynth.release.budget import Budget

    from ...public_data import cps1988

    x = cps1988("dollars")["wage"].to_numpy(dtype=float)
    med = dp_quantiles(x, eps0, lower=float(params.lower), upper=float(params.upper), probs=(0.5,))
    with_median = Budget.plan(eps, "remove", dp_size=True, dp_reference=True, reference_eps=float(med.eps_remove))
    public = Budget.plan(eps, "remove", dp_size=True, dp_reference=False)
    return {"eps0": float(med.eps_remove), "eps": float(eps), "dp_median": float(med.values[0]),
            "data_median": float(np.median(x)), "size": float(with_median.size), "draw": float(with_median.draw),
            "draw_public": float(public.draw), "bound": float(with_median.draw) / 2,
            "bound_public": float(public.draw) / 2}


def text_numbers(results) -> dict:
    """Every number the chapter's Markdown quotes from its results: ``units`` (:func:`units_numbers`), ``fit_time``
    (:func:`fit_time_numbers`), ``rules`` (:func:`rule_numbers`) and, when the results hold them, ``files``
    (:func:`files_numbers`) and ``unitfree`` (:func:`unitfree_numbers`).

    The notebook glues them with ``dpsynth_book.book.glue_numbers("own", text_numbers(results))``: e.g.
    ``units_numbers(results)["dollars"]["censored"]`` is the glue key ``own-units-dollars-censored``.
    """
    out = {"units": units_numbers(results), "fit_time": fit_time_numbers(results), "rules": rule_numbers()}
    if getattr(results, "files", None) is not None:
        out["files"] = files_numbers(results)
    if getattr(results, "unitfree", None) is not None:
        out["unitfree"] = unitfree_numbers(results)
    return out


def verdicts(results) -> list:
    """The chapter's claims checked on its results (:class:`dpsynth_book.verdicts.Verdict`).

    * ``censored_within_bound``: every censored fit has Delta <= eps/2 (asserted on every fit).
    * ``privacy_relations``: with one record replaced, every mechanism's stated epsilon is twice its
      one-removed figure, a bound: replacement costs at most twice removal (continuous densities take both
      signs; PH and OpenDP's quantiles move one record out of one bin or score and into another).
    * ``unit_changes_censoring``: in dollars the censored lognormal discards more than half of the
      records at every eps; in thousands it keeps most of them.
    * ``offset_is_a_unit``: dollars with the public offset ``-log 1000`` censor as many records as
      thousands (within Monte Carlo noise: 2% of n).
    * ``marginal_favours_model_free``: at every eps, PH or OpenDP-Q has a smaller mean max-ECDF
      than Censor_uw (the lognormal regression misses the shape of the marginal distribution).
    * ``model_keeps_regression``: at the largest eps, Censor_uw's synthetic data give the analyst's
      regression coefficients closer to the confidential ones than OpenDP-Q's (root mean squared
      difference over the covariate terms).

    With the files and unit-free studies in ``results``, their claims follow (:func:`new_verdicts`).
    """
    from ...verdicts import Verdict

    f = fit_frame(results)
    out = []
    cens = f[f["synthesizer"].isin(["Censor_w", "Censor_uw"])]
    worst = float((cens["delta"] - cens["eps"] / 2).max()) if len(cens) else float("nan")
    out.append(Verdict("censored_within_bound", "A censored likelihood keeps every record's term within ±ε/2",
                       bool(len(cens)) and worst <= 1e-9,
                       f"largest Δ − ε/2 over {len(cens)} censored fits: {worst:.2g}.",
                       {"worst": worst, "fits": len(cens)}))
    priv = f[(f["synthesizer"] != "Data") & np.isfinite(f["eps_remove"])]
    ratio = (priv["eps_replace"] / priv["eps_remove"]).to_numpy()
    ok = bool(np.allclose(ratio, 2.0, rtol=1e-6))
    out.append(Verdict("privacy_relations", "With one record replaced, the stated ε doubles", ok,
                       f"ratio ε(replaced)/ε(removed) from {ratio.min():.3g} to {ratio.max():.3g} over "
                       f"{ratio.size} fits.", {"min": float(ratio.min()), "max": float(ratio.max()),
                                                           "fits": int(ratio.size)}))
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
                       {"dollars_min": float(dol.min()), "dollars_max": float(dol.max()),
                        "thousands_min": float(thou.min()), "thousands_max": float(thou.max())}))
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
                           {"wins": len(wins), "eps": len(eps_grid),
                            "unweighted": float(f.loc[f["synthesizer"] == "Unweighted", "max_ecdf"].mean())}))
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
    if getattr(results, "files", None) is not None or getattr(results, "unitfree", None) is not None:
        out += new_verdicts(results)
    return out


# ------------------------------------------------------------------------------------------------
# the three real files with default settings, and the unit-free window
# ------------------------------------------------------------------------------------------------


def _eps_key(e: float) -> str:
    return f"eps{float(e):g}".replace(".", "p")


def files_numbers(results) -> dict:
    """The files study's numbers, per file and over all files.

    Returns
    -------
    dict
        ``all``: ``fits``, ``converged`` (fits that passed their checks; each fit is run once),
        ``runs`` and ``eps`` (the grid, as text "1 and 5"); per file (its key): ``n`` records,
        ``fits``, ``converged``, ``censored_max`` (largest share censored),
        ``seconds`` (median time per release, fit and sample, over every eps and run),
        ``seconds_max``, ``marginal`` (mean max-ECDF, or total variation distance for the
        categorical target, over eps and runs), ``pmse_ratio``, ``coef_z`` (RMS coefficient error in
        the original's standard errors) and ``overlap`` (mean interval overlap); and per eps
        (``eps1``, ``eps5``): the statement's total ``stated`` (median), its ``reference`` and ``draw`` shares,
        Censor_ref's public weight ``alpha`` and censoring bound ``bound`` (M), and that eps's ``marginal``,
        ``pmse_ratio``, ``coef_z``.
    """
    from .tables import files_of, static

    ds = files_of(results)
    runs = int(ds.sizes["replicate"])
    eps = [float(e) for e in ds["eps"].values]
    out: dict = {"all": {"fits": int(ds["converged"].size), "converged": int(ds["converged"].sum()),
                         "runs": runs,
                         "eps": " and ".join(f"{e:g}" for e in eps)}}
    for f in ds["file"].values:
        d = ds.sel(file=f)
        cat = str(static(d["kind"]).values) == "categorical" if "replicate" in d["kind"].dims else \
            str(d["kind"].values) == "categorical"
        marg = d["tvd"] if cat else d["max_ecdf"]
        row = {"n": int(static(d["n_records"]).values), "fits": int(d["converged"].size),
               "converged": int(d["converged"].sum()),
               "censored_max": float(d["censored_share"].max()),
               "seconds": float(np.median(d["release_seconds"].values)),
               "seconds_max": float(d["release_seconds"].max()),
               "marginal": float(marg.mean()), "pmse_ratio": float(d["pmse_ratio"].mean()),
               "coef_z": float(d["coef_rms_z"].mean()), "overlap": float(d["coef_overlap"].mean())}
        for e in eps:
            c = d.sel(eps=e)
            row[_eps_key(e)] = {"stated": float(c["eps_stated"].median()),
                                "reference": float(c["reference_eps"].median()), "draw": float(c["draw_eps"].median()),
                                "alpha": float(c["alpha"].median()), "bound": float(c["bound"].median()),
                                "marginal": float((c["tvd"] if cat else c["max_ecdf"]).mean()),
                                "pmse_ratio": float(c["pmse_ratio"].mean()), "coef_z": float(c["coef_rms_z"].mean())}
        out[str(f)] = row
    return out


def unitfree_numbers(results) -> dict:
    """The unit-free study's numbers.

    Returns
    -------
    dict
        ``n``, ``runs`` and ``eps`` (the grid, as text "1 and 5"); per mechanism (``ref``, ``uw``):
        per eps (``eps1``, ``eps5``) and unit the mean censored count (``censored``), its share
        (``share``), the mean share censored at a typical draw (``typical``) and ``max_ecdf``; per eps
        the statement (``budget_eps5``: ``stated`` total with one record removed, its ``size``,
        ``reference`` and ``draw`` shares, the public weight ``alpha`` and the censoring bound ``bound``,
        medians over units and runs); ``lowest``: the smallest eps with its ``alpha`` and ``bound``;
        and the largest spread across units, over eps, of the mean
        censored count and max-ECDF (``censored_spread``, ``ecdf_spread``) with the smallest Monte
        Carlo tolerance at that eps (``censored_tolerance``, ``ecdf_tolerance``), over the converged fits
        only for the mechanisms of :data:`~dpsynth_book.experiments.own_data.tables.CONVERGED_ONLY`
        (NaN if no eps could be judged); ``fits`` and ``failed`` (fits that failed their checks, over
        every unit and eps).
    """
    from .tables import unitfree_of

    u = unitfree_of(results)
    n = float(u.attrs.get("n", 1))
    out: dict = {"n": int(n), "runs": int(u.sizes["replicate"]),
                 "eps": " and ".join(f"{float(e):g}" for e in u["eps"].values)}
    m = u.mean("replicate")
    for mech in u["mechanism"].values:
        short = "ref" if str(mech) == "Censor_ref" else "uw" if str(mech) == "Censor_uw" else str(mech)
        row: dict = {}
        for e in u["eps"].values:
            cell = {}
            for unit in u["unit"].values:
                v = m.sel(mechanism=mech, eps=e, unit=unit)
                cell[str(unit)] = {"censored": float(v["n_censored"]), "share": float(v["n_censored"]) / n,
                                   "typical": float(v["censored_share"]), "max_ecdf": float(v["max_ecdf"])}
            row[_eps_key(e)] = cell
            c = u.sel(mechanism=mech, eps=e)
            row[f"budget_{_eps_key(e)}"] = {k: float(c[v].median()) for k, v in (
                ("stated", "eps_stated"), ("size", "size_eps"), ("reference", "reference_eps"), ("draw", "draw_eps"),
                ("alpha", "alpha"), ("bound", "bound"))}
        low = float(u["eps"].values.min())
        row["lowest"] = {"eps": low, **{k: row[f"budget_{_eps_key(low)}"][k] for k in ("alpha", "bound")}}
        for var, key, floor in (("n_censored", "censored", 1.0), ("max_ecdf", "ecdf", 1e-3)):
            sp = unit_spread(u, str(mech), var, floor, converged_only=str(mech) in CONVERGED_ONLY)
            judged = [k for k, v in enumerate(sp["spread"]) if np.isfinite(v)]
            i = max(judged, key=lambda k: sp["spread"][k]) if judged else None
            row[f"{key}_spread"] = sp["spread"][i] if i is not None else float("nan")
            row[f"{key}_tolerance"] = sp["tolerance"][i] if i is not None else float("nan")
        ok = u["converged"].sel(mechanism=mech).astype(bool)
        row["fits"], row["failed"] = int(ok.size), int((~ok).sum())
        out[short] = row
    return out


def _unit_exact(u, mechanism: str) -> float:
    """The largest spread across units of what a statement and a window are made of (total, shares, alpha, M)."""
    sub = u.sel(mechanism=mechanism)
    spread = 0.0
    for v in ("eps_stated", "size_eps", "reference_eps", "draw_eps", "alpha", "bound"):
        a = sub[v].astype(float)
        spread = max(spread, float((a.max("unit") - a.min("unit")).max()))
    return spread


def new_verdicts(results) -> list:
    """The files and unit-free studies' claims (:class:`dpsynth_book.verdicts.Verdict`).

    * ``defaults_converge``: every default fit of every real file passed its convergence checks.
    * ``statement_is_the_total``: every fit's statement publishes exactly the eps asked (the default fits
      of the files with one record replaced, the unit-free fits with one record removed), its shares
      (reference, released size, draw) adding up to it.
    * ``censor_ref_unit_free``: Censor_ref is unit-free: its statement and window (the total, its shares,
      alpha and M) are the same in every unit exactly, and its censored count and max-ECDF do not move
      with the unit beyond their Monte Carlo error (:func:`unit_spread`, floors 1 record and 0.001) at any eps.
      Only converged fits are judged: a failed fit's counts are not the mechanism's, and its values would
      widen the tolerance. It does not hold if the statement or the converged fits move; when a unit has
      fits that failed their checks it cannot be judged there (undecided), whatever the other fits show.
    * ``censor_uw_moves_with_unit``: Censor_uw's censored count does move with the unit at every eps.
    """
    from ...verdicts import Verdict
    from .tables import files_of, unitfree_of

    out = []
    totals = []  # (study, stated - asked, shares - stated) of every fit
    have_files = getattr(results, "files", None) is not None or not hasattr(results, "files")
    have_unitfree = getattr(results, "unitfree", None) is not None or not hasattr(results, "unitfree")
    if have_files:
        ds = files_of(results)
        conv, fits = int(ds["converged"].sum()), int(ds["converged"].size)
        rhat, ess, div = float(ds["rhat_max"].max()), float(ds["ess_min"].min()), int(ds["divergences"].sum())
        out.append(Verdict("defaults_converge", "A newcomer's default fits converge on all three real files",
                           conv == fits, f"{conv} of {fits} default fits passed R-hat, ESS and divergence checks "
                           f"(each run once; worst R-hat {rhat:.3f}, smallest bulk ESS {ess:.0f}, "
                           f"{div} divergence(s) in all).",
                           {"converged": conv, "fits": fits, "rhat_max": rhat, "ess_min": ess,
                            "divergences": div}))
        totals.append((ds, ds["eps"].broadcast_like(ds["eps_stated"])))
    if have_unitfree:
        u = unitfree_of(results)
        totals.append((u, u["eps"].broadcast_like(u["eps_stated"])))
    if totals:
        gap = max(float(np.abs(d["eps_stated"] - e).max()) for d, e in totals)
        parts = max(float(np.abs(d["reference_eps"] + d["size_eps"] + d["draw_eps"] - d["eps_stated"]).max())
                    for d, _ in totals)
        n_fits = sum(int(d["eps_stated"].size) for d, _ in totals)
        nums = {"gap": gap, "parts": parts, "fits": n_fits}
        words = []
        if have_files:
            ds = files_of(results)
            cat = [str(f) for f, k in zip(ds["file"].values, _static_values(ds["kind"])) if str(k) == "categorical"]
            num = [str(f) for f in ds["file"].values if str(f) not in cat]
            ref_num = float(ds["reference_eps"].sel(file=num).max()) if num else float("nan")
            ref_cat = ds["reference_eps"].sel(file=cat) if cat else None
            nums.update(reference_numeric=ref_num)
            if ref_cat is not None:
                share = float((ref_cat / ds["eps"].broadcast_like(ref_cat)).median())
                nums.update(reference_categorical_share=share)
                words.append(f"the reference takes at most {ref_num:.2g} of it for the numeric targets (each record's "
                             f"own reference is free) and {share:.0%} for the categorical one (DP level counts)")
            nums.update(size_with_covariates=float(ds["size_eps"].max()))
        if have_unitfree:
            u = unitfree_of(results)
            share = float((u["size_eps"] / u["eps"].broadcast_like(u["size_eps"])).median())
            nums.update(size_share_without_covariates=share)
            words.append(f"without covariates the released size takes {share:.0%}")
        ok = bool(gap < 1e-9 and parts < 1e-9)
        out.append(Verdict("statement_is_the_total", "The statement publishes exactly the ε asked", ok,
                           f"over {n_fits} fits the stated ε differs from the ε asked by at most {gap:.2g}, and its "
                           f"shares (reference, released size, draw) add up to it within {parts:.2g}"
                           + (f"; {'; '.join(words)}" if words else "") + ".", nums))
    if have_unitfree:
        u = unitfree_of(results)
        mechs = {str(m) for m in u["mechanism"].values}
        units = ", ".join(str(x) for x in u["unit"].values)
        if "Censor_ref" in mechs:
            exact = _unit_exact(u, "Censor_ref")
            c = unit_spread(u, "Censor_ref", "n_censored", 1.0, converged_only=True)
            d = unit_spread(u, "Censor_ref", "max_ecdf", 1e-3, converged_only=True)
            out.append(_unit_free_verdict(u, units, exact, c, d))
        if "Censor_uw" in mechs:
            c = unit_spread(u, "Censor_uw", "n_censored", 1.0)
            every = all(sp > t for sp, t in zip(c["spread"], c["tolerance"]))
            out.append(Verdict("censor_uw_moves_with_unit", "Censor_uw's censoring moves with the unit", every,
                               f"spread across units of the mean censored count {min(c['spread']):.3g}–"
                               f"{max(c['spread']):.3g} records over ε (tolerance {max(c['tolerance']):.3g}).",
                               {"spread_min": float(min(c["spread"]))}))
    return out


def _unit_free_verdict(u, units: str, exact: float, c: dict, d: dict):
    """Censor_ref's unit-free verdict from its statement's spread ``exact`` and the converged fits' spreads."""
    from ...verdicts import Verdict

    fits = int(u.sizes["replicate"]) * int(u.sizes["eps"])  # one unit's fits
    failed = {k: n for k, n in c["failed"].items() if n}
    judged_c = [(s, t) for s, t in zip(c["spread"], c["tolerance"]) if np.isfinite(s)]
    judged_d = [(s, t) for s, t in zip(d["spread"], d["tolerance"]) if np.isfinite(s)]
    moves = exact >= 1e-9 or c["moves"] or d["moves"]
    holds = False if moves else (None if failed or not judged_c else True)
    words = f"in {units} the statement's ε, its shares, α and M differ by at most {exact:.2g}"
    if judged_c:
        words += (f"; over the converged fits the largest spread across units of the mean censored count is "
                  f"{max(s for s, _ in judged_c):.3g} records (Monte Carlo tolerance "
                  f"{min(t for _, t in judged_c):.3g}–{max(t for _, t in judged_c):.3g}) and of the max-ECDF "
                  f"{max(s for s, _ in judged_d):.3g} (tolerance {min(t for _, t in judged_d):.3g}–"
                  f"{max(t for _, t in judged_d):.3g})")
    else:
        words += "; no ε has converged fits in two units, so the censoring and utility are not shown"
    if failed:
        words += ("; " + ", ".join(f"{n} of {fits} fits in {k}" for k, n in failed.items())
                  + " failed their convergence checks and are left out: whether the fit is unit-free there "
                    "cannot be judged")
    return Verdict(
        "censor_ref_unit_free",
        "Censor_ref is unit-free: the same guarantee in every unit exactly, the same censoring and utility up "
        "to Monte Carlo error", holds, words + ".",
        {"exact": exact, "censored_spread": max((s for s, _ in judged_c), default=float("nan")),
         "ecdf_spread": max((s for s, _ in judged_d), default=float("nan")),
         "censored_worst": c["worst"], "ecdf_worst": d["worst"], "failed": failed})


def _static_values(da) -> np.ndarray:
    """The values of a per-file coordinate, without a replicate dimension if run_study stacked one."""
    return (da.isel(replicate=0) if "replicate" in da.dims else da).values

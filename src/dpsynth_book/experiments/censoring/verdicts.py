"""Verdicts of the censoring chapter, and the named numbers behind them and behind the chapter's prose.

:func:`verdicts` checks each "what this shows" claim on the
:class:`~dpsynth_book.experiments.censoring.CensoringResults` of :func:`~dpsynth_book.experiments.censoring.run`
and returns structured :class:`~dpsynth_book.verdicts.Verdict` objects. The ``*_numbers`` functions
return dicts of named numbers; :func:`text_numbers` collects those that the chapter's Markdown
cells quote through glue (:func:`dpsynth_book.book.glue_numbers`): the sentences are written in the
notebook, not here.
"""

from __future__ import annotations

import numpy as np

from dpsynth import registry
from dpsynth.mechanisms.histogram import bin_count
from dpsynth.privacy import CENSOR_TOL

from ... import presentation
from ...verdicts import Verdict
from .reference import DEFAULT, DP_MEDIAN, HISTORICAL, WIDEN, charges_reference, variant_settings
from .replicate import MIX_NAMES, TRUE_BETA, true_stats
from .tables import (
    _ALT,
    CENSORED,
    MEASURES,
    PAPER_DELTA_RANGES,
    PAPER_TABLE1,
    PAPER_TABLE_S5,
    RANK_MIN,
    RATIO_TOL,
    THRESHOLD_MIN_ABOVE,
    WEIGHTED_E_FORMATS,
    _eps_grid,
    _res,
    _show_label,
    _shown,
    _utility_medians,
    count_table,
    milder_table,
    release_summary,
    tally_table,
    threshold_effect,
    utility_table,
    values,
    weighted_e_numbers,
)

__all__ = [
    "VERDICT_MEASURES",
    "threshold_numbers",
    "threshold_verdict",
    "tally_numbers",
    "milder_numbers",
    "mixing_numbers",
    "release_numbers",
    "ph_numbers",
    "discrepancy_numbers",
    "weighted_e_numbers",
    "text_numbers",
    "REFERENCE_SHORT",
    "reference_short",
    "reference_settings",
    "own_reference_window",
    "reference_numbers",
    "reference_verdicts",
    "verdicts",
]

#: The measures the utility verdicts count cells over (the paper's Figures 3-4 and its 15th percentile and median).
VERDICT_MEASURES = ("avg-ECDF", "max-ECDF", "|q15 - true|", "|median - true|")
_MODEL_BASED = ("LW", "Weighted-e", "Censor_w", "Censor_uw")  # the paper's four


# ------------------------------------------------------------------------------- numbers for the prose


def threshold_numbers(results) -> dict:
    """The Unweighted and LW Delta over the replicates, and how often the LW Delta is above eps/2.

    Returns
    -------
    dict
        ``replicates`` (data sets) of ``n`` records; ``unweighted_min``, ``unweighted_max``,
        ``weighted_min``, ``weighted_max``, ``weighted_median`` of Delta and ``ratio_median`` (median
        of Unweighted / LW); the paper's ranges at n = 2000
        (:data:`~dpsynth_book.experiments.censoring.tables.PAPER_DELTA_RANGES`) ``paper_unweighted_low`` / ``_high`` and
        ``paper_weighted_low`` / ``_high``; and ``above``:
        eps (as ``"4"``) -> share of replicates whose LW Delta is above eps/2 (those in which
        Weighted-e truncates anything); ``smallest_ratio``, the median ratio of the Unweighted Delta to
        ``-log(x_(1)) / 2`` (:func:`~.tables.threshold_effect`); and ``effect``, whether the threshold
        effect's verdict (:func:`threshold_verdict`) holds, as the prose says it (``"holds"``,
        ``"does not hold"``, ``"is undecided"``).
    """
    study = results.study
    wd, ud = study["delta_weighted"].values.ravel(), study["delta_unweighted"].values.ravel()
    (pu0, pu1), (pw0, pw1) = PAPER_DELTA_RANGES["Unweighted"], PAPER_DELTA_RANGES["LW"]
    return {"replicates": int(wd.size), "n": int(results.params.n),
            "unweighted_min": float(ud.min()), "unweighted_max": float(ud.max()),
            "weighted_min": float(wd.min()), "weighted_max": float(wd.max()), "weighted_median": float(np.median(wd)),
            "ratio_median": float(np.median(ud / wd)),
            "paper_unweighted_low": pu0, "paper_unweighted_high": pu1,
            "paper_weighted_low": pw0, "paper_weighted_high": pw1,
            "above": {f"{e:g}": float(np.mean(wd > e / 2)) for e in _eps_grid(study)},
            "smallest_ratio": threshold_effect(results)["smallest"]["median_ratio"],
            "effect": {True: "holds", False: "does not hold", None: "is undecided"}[threshold_verdict(results).holds]}


def tally_numbers(results) -> dict:
    """The published Censor_w medians against our two tallies.

    The medians of :func:`~dpsynth_book.experiments.censoring.tables.tally_table`.

    Returns
    -------
    dict
        ``by_eps``: eps (as ``"4"``, only those of the paper's Table 1) -> ``paper``, ``ours``
        (weighted terms above M) and ``alternative`` (unweighted ``|f|`` above M, if invoked) medians.
    """
    t = tally_table(results)
    return {"by_eps": {f"{e:g}": {"paper": float(t.loc[(e, "paper"), "median"]),
                                  "ours": float(t.loc[(e, "weighted terms > M"), "median"]),
                                  "alternative": float(t.loc[(e, "unweighted |f| > M, if invoked"), "median"])}
                       for e in _eps_grid(results.study) if (e, "paper") in t.index}}


def milder_numbers(results, tol: float = 0.25) -> dict:
    """Censor_w counts with the LW and the milder weights against the paper's.

    The numbers of :func:`~dpsynth_book.experiments.censoring.tables.milder_table`.

    Parameters
    ----------
    tol : float
        Relative distance from the published medians at eps 4 and 3 within which a variant reproduces them.

    Returns
    -------
    dict
        ``median`` and ``zeros`` (share of replicates with no record censored): variant -> eps (as
        ``"4"``) -> value, for ``"LW (ours)"`` and each milder variant; ``paper``: eps -> published
        median (eps of the paper's Table 1 only); ``converged`` of ``fits`` extra fits (NaN when not
        stored); and for the verdict, per variant, ``relative_difference`` from the paper's medians
        at eps 4 and 3, ``zeros_at_5``, ``reproduces``, and ``decidable`` (n = 2000 and eps 5, 4, 3
        in the grid) and ``tol``.
    """
    p, study = _res(results)
    t = milder_table(results)
    grid = _eps_grid(study)
    need = (5.0, 4.0, 3.0)
    variants = [k for k in dict.fromkeys(t.index.get_level_values(1)) if k != "paper"]
    rel, zeros5, ok = {}, {}, {}
    for v in variants:
        rel[v] = {f"{e:g}": float(t.loc[(e, v), "median vs paper"]) for e in (4.0, 3.0) if e in grid}
        zeros5[v] = float(t.loc[(5.0, v), "zeros"]) if 5.0 in grid else np.nan
        ok[v] = (len(rel[v]) == 2 and all(abs(x) <= tol for x in rel[v].values()) and zeros5[v] >= 0.5)
    decidable = p.n == 2000 and all(e in grid for e in need) and "milder_n_censored" in study
    conv = (np.asarray(study["milder_converged"].values, dtype=bool) if "milder_converged" in study else None)
    return {"median": {v: {f"{e:g}": float(t.loc[(e, v), "median"]) for e in grid} for v in variants},
            "zeros": {v: {f"{e:g}": float(t.loc[(e, v), "zeros"]) for e in grid} for v in variants},
            "paper": {f"{e:g}": float(t.loc[(e, "paper"), "median"]) for e in grid if (e, "paper") in t.index},
            "converged": int(conv.sum()) if conv is not None else np.nan,
            "fits": int(conv.size) if conv is not None else np.nan,
            "relative_difference": rel, "zeros_at_5": zeros5, "reproduces": ok, "decidable": decidable, "tol": tol}


def mixing_numbers(results) -> dict:
    """One posterior draw per data set against record-wise mixing at ``mix_eps``: utility and cost.

    Returns
    -------
    dict
        Per synthesizer of :data:`~dpsynth_book.experiments.censoring.replicate.MIX_NAMES` (registry names, in registry
        order):
        median max-ECDF with one draw (``one``) and mixed (``mixed``), the replicates in which mixed
        is lower (``lower``) and the median eps of the mixed release with one record removed
        (``eps_mixed``); ``change``: median over the synthesizers of the relative change of max-ECDF
        by mixing, ``(mixed - one) / one`` (negative: mixing lowers it); ``draws``: median
        distinct draws a mixed release used; ``replicates``, ``n``, ``pooled_draws`` (chains times
        draws) and ``eps`` (the one-draw eps, ``mix_eps``).
    """
    p, study = _res(results)
    names = presentation.order(_shown(study, MIX_NAMES))
    one = {k: float(np.median(values(study, "max_ecdf", k, p.mix_eps))) for k in names}
    mixed = {k: float(np.median(values(study, "mix_max_ecdf", k, p.mix_eps))) for k in names}
    lower = {k: int((values(study, "mix_max_ecdf", k, p.mix_eps) < values(study, "max_ecdf", k, p.mix_eps)).sum())
             for k in names}
    change = float(np.median([(mixed[k] - one[k]) / one[k] for k in names]))
    draws = float(np.median(np.concatenate([values(study, "mix_n_draws", k, p.mix_eps) for k in names])))
    eps_mixed = {k: float(np.median(values(study, "mix_eps", k, p.mix_eps))) for k in names}
    return {"one": one, "mixed": mixed, "lower": lower, "eps_mixed": eps_mixed, "change": change, "draws": draws,
            "replicates": int(study.sizes.get("replicate", 1)), "n": int(p.n), "pooled_draws": int(p.chains * p.draws),
            "eps": float(p.mix_eps)}


def release_numbers(results) -> dict:
    """The release workflow's outcome.

    Means over the months, from :func:`~dpsynth_book.experiments.censoring.tables.release_summary`.

    Returns
    -------
    dict
        ``months``, ``eps`` (one record removed) and ``eps_replace`` (one replaced) of the release,
        the calibrated ``c``; mean censored records and avg-ECDF of Censor_w-pub (``public_censored``,
        ``public_avg_ecdf``) and of the papers' Censor_w with weights from each month's data
        (``own_censored``, ``own_avg_ecdf``), both with the calibrated c; and their censored records
        with c = 1 (``public_c1_censored``, ``own_c1_censored``).
    """
    p = results.params
    s = release_summary(results)
    c = float(results.calibration["c"].values.ravel()[0])
    pub, pub1, own, own1 = (s.iloc[i] for i in range(4))
    return {"months": int(p.release_months), "eps": float(p.release_eps), "eps_replace": float(pub["eps (replace)"]),
            "c": c, "public_censored": float(pub["censored"]), "public_avg_ecdf": float(pub["avg-ECDF"]),
            "own_censored": float(own["censored"]), "own_avg_ecdf": float(own["avg-ECDF"]),
            "public_c1_censored": float(pub1["censored"]), "own_c1_censored": float(own1["censored"])}


def ph_numbers(results) -> dict:
    """PH's bin rules and noise scales in this run, and the synthesizer with the smallest median per utility column.

    Returns
    -------
    dict
        ``n``; bin counts ``bins_sqrt`` (ceil sqrt n) and ``bins_log`` (ceil ln n), the width of a
        ``bins_log`` bin (``bin_width_log``) and the true median (``true_median``); at the smallest
        eps (``eps_min``) the median Laplace scale of PH (``scale_ph``, one record removed) and of
        PH-paper (``scale_ph_paper``); ``records_per_bin`` with ``bins_sqrt`` bins; and ``best``:
        eps (as ``"4"``) -> measure of :data:`~dpsynth_book.experiments.censoring.tables.MEASURES` -> label of the
        synthesizer with the smallest median (the rows of
        :func:`~dpsynth_book.experiments.censoring.tables.utility_table`, Censor_ref's from its own study included).
    """
    p, study = _res(results)
    nb_sqrt, nb_log = bin_count(p.n, "sqrt"), bin_count(p.n, "log")
    e_min = min(_eps_grid(study))
    best = {}
    ut = utility_table(results)  # the table the prose names, Censor_ref's rows included
    for e in _eps_grid(study):
        um = ut.loc[f"{e:g}"]
        best[f"{e:g}"] = {m: str(um[m].astype(float).idxmin()) for m in MEASURES}
    return {"n": int(p.n), "bins_sqrt": int(nb_sqrt), "bins_log": int(nb_log), "bin_width_log": 1 / nb_log,
            "true_median": float(true_stats()["median"]), "eps_min": float(e_min),
            "scale_ph": float(np.median(values(study, "noise_scale", "PH", e_min))),
            "scale_ph_paper": float(np.median(values(study, "noise_scale", "PH-paper", e_min))),
            "records_per_bin": p.n / nb_sqrt, "best": best}


def discrepancy_numbers(results) -> dict:
    """Where this run's counts differ from the published ones (every comparison needs the paper's n = 2000).

    Returns
    -------
    dict
        ``replicates``, ``n`` and ``scale`` of this run; ``weighted_e``, ``censor_uw`` and
        ``censor_w``: eps (as ``"4"``, those of the paper's Table 1) -> our and the paper's median
        count (``ours``, ``paper``; for Censor_uw also ``relative``, (ours - paper) / paper); and the
        downscaling comparison: ``downscale_c``, ``downscale_eps``, our median counts
        ``downscaled_weighted_e``, ``downscaled_censor_w`` and the paper's (the supplement's Table 1, Section S5)
        ``paper_downscaled_weighted_e``, ``paper_downscaled_censor_w``.
    """
    p, study = _res(results)
    t1 = count_table(results)
    grid = [e for e in _eps_grid(study) if float(e).is_integer() and (int(e), "Censor_uw") in PAPER_TABLE1]

    def med(eps, name, src):
        key = (eps, registry.label(name), src)
        return float(t1.loc[key, "median"]) if key in t1.index else np.nan

    def by_eps(name, relative=False):
        out = {}
        for e in grid:
            o, q = med(e, name, "ours"), med(e, name, "paper")
            out[f"{e:g}"] = {"ours": o, "paper": q, **({"relative": (o - q) / q} if relative else {})}
        return out

    t5 = count_table(results, downscale=True)
    return {"replicates": int(study.sizes.get("replicate", 1)), "n": int(p.n), "scale": str(p.scale),
            "weighted_e": by_eps("Weighted-e"), "censor_uw": by_eps("Censor_uw", relative=True),
            "censor_w": by_eps("Censor_w"),
            "downscale_c": float(p.downscale), "downscale_eps": float(p.downscale_eps),
            "downscaled_weighted_e": float(t5.loc[("downscale", registry.label("Weighted-e"), "ours"), "median"]),
            "downscaled_censor_w": float(t5.loc[("downscale", registry.label("Censor_w"), "ours"), "median"]),
            "paper_downscaled_weighted_e": float(PAPER_TABLE_S5[("downscale", "Weighted-e")]["median"]),
            "paper_downscaled_censor_w": float(PAPER_TABLE_S5[("downscale", "Censor_w")]["median"])}


def text_numbers(results) -> dict:
    """Every number the chapter's Markdown quotes, by paragraph: ``threshold``, ``tally``, ``milder``,
    ``mixing``, ``release``, ``ph`` and ``discrepancy`` (the ``*_numbers`` functions above).

    The notebook glues them with ``dpsynth_book.book.glue_numbers("censoring", text_numbers(results))``:
    e.g. ``release_numbers(results)["c"]`` is the glue key ``censoring-release-c``.
    """
    return {"threshold": threshold_numbers(results), "tally": tally_numbers(results),
            "milder": milder_numbers(results), "mixing": mixing_numbers(results),
            "release": release_numbers(results), "ph": ph_numbers(results),
            "discrepancy": discrepancy_numbers(results)}


# ----------------------------------------------------------------------------------------- verdicts


def _cap_numbers(results) -> dict:
    study, down, rel = results.study, results.downscale, results.release
    worst = {}
    for k in _shown(study, CENSORED):
        for e in _eps_grid(study):
            worst[f"{k} at {e:g}"] = float(np.max(values(study, "delta", k, e) - e / 2))
    worst["Censor_w downscaled"] = float(np.max(down["delta"].sel(synthesizer="Censor_w", scaling="downscale").values
                                                - results.params.downscale_eps / 2))
    worst["release"] = float(np.max(rel["delta"].values - results.params.release_eps / 2))
    f1 = results.figure1
    worst["illustration"] = float(np.max(f1["delta"].sel(synthesizer="Censor_uw").values - results.params.fig1_eps / 2))
    return worst


def _weighted_e_verdict(results) -> Verdict:
    num = weighted_e_numbers(results)
    cells = {e: d for e, d in num.items() if d["above"] > 0}
    holds = all(d["all_risen"] for d in cells.values()) if cells else None
    if not num:
        ev = "not stored in these results."
    else:
        def one(e, d):
            head = (f"at $\\varepsilon$ = {e}: above $\\varepsilon/2$ = {float(e) / 2:g} in {d['above']} of "
                    f"{d['replicates']} replicates")
            if not d["above"]:
                return head
            f = {k: WEIGHTED_E_FORMATS[k].format(d[k]) for k in WEIGHTED_E_FORMATS}  # as the table shows them
            return (head + f" (median $\\Delta$ {f['delta']}); there the LW fit's bounds made it truncate a median "
                    f"of {f['truncated']} records, yet after the refit {f['above_after_refit']} records are "
                    f"above $\\varepsilon/2$, {f['risen']} of them kept by the truncation (their LW bound was "
                    f"under it), and the refit's posterior mean of $\\phi$ moved {f['shift_sd']} LW posterior sds")

        ev = "; ".join(one(e, d) for e, d in num.items()) + "."
    return Verdict(
        "weighted_e_above_target",
        "Weighted-e ends above eps/2 because its refit raises the bounds of records the truncation kept.",
        holds, ev, num)


def threshold_verdict(results) -> Verdict:
    """The chapter's "threshold effect" behind Weighted-e's counts, checked on the replicates.

    Holds when (i) the Unweighted Delta follows the smallest record: rank correlation with
    ``-log(x_(1)) / 2`` at least :data:`~.tables.RANK_MIN` and a median ratio within :data:`~.tables.RATIO_TOL`
    of 1; (ii) the LW Delta is about a quarter of the Unweighted one (median ratio within ``RATIO_TOL`` of
    4); (iii) Weighted-e truncates no record in any replicate whose LW Delta is at or below eps/2; and
    (iv) at every eps with at least :data:`~.tables.THRESHOLD_MIN_ABOVE` replicates above eps/2 its count
    rises with the LW Delta there (rank correlation at least ``RANK_MIN``). Undecided with fewer than
    ``THRESHOLD_MIN_ABOVE`` replicates or no eps with that many above eps/2. Numbers:
    :func:`~.tables.threshold_effect`, as :func:`~.tables.threshold_table` shows them.
    """
    th = threshold_effect(results)
    sm, qu, by = th["smallest"], th["quarter"], th["by_eps"]
    read = {e: d for e, d in by.items() if d["above"] >= THRESHOLD_MIN_ABOVE}
    parts = {"smallest_record": bool(sm["rank"] >= RANK_MIN and abs(sm["median_ratio"] - 1) <= RATIO_TOL),
             "quarter": bool(abs(qu["median_ratio"] / 4 - 1) <= RATIO_TOL),
             "none_below": all(d["below_max"] == 0 for d in by.values() if d["below"]),
             "rises_above": all(d["rank"] >= RANK_MIN for d in read.values())}
    decided = th["replicates"] >= THRESHOLD_MIN_ABOVE and bool(read) and np.isfinite(sm["rank"])
    holds = all(parts.values()) if decided else None
    eq = "$\\varepsilon$ ="

    def one(e, d):
        below = ("no replicate at or below $\\varepsilon/2$" if not d["below"] else
                 (f"no record truncated in the {d['below']} replicates at or below $\\varepsilon/2$"
                  if d["below_max"] == 0 else f"up to {d['below_max']:g} records truncated in the {d['below']} "
                  "replicates at or below $\\varepsilon/2$"))
        above = (f"a median of {d['above_median']:g} in the {d['above']} above it"
                 + (f", rank correlation with the LW $\\Delta$ {d['rank']:.2f}" if np.isfinite(d["rank"]) else "")
                 if d["above"] else "no replicate above it")
        return f"at {eq} {e}: {below}, {above}"

    ev = (f"over {th['replicates']} replicates the Unweighted $\\Delta$ is a median {sm['median_ratio']:.2f} times "
          f"$-\\tfrac12\\log x_{{(1)}}$ (rank correlation {sm['rank']:.2f}) and {qu['median_ratio']:.2f} times the LW "
          f"$\\Delta$ (rank correlation {qu['rank']:.2f}); " + "; ".join(one(e, d) for e, d in by.items()) + ".")
    if not decided:
        ev = (f"undecided: {th['replicates']} replicate(s), and a rank correlation needs at least "
              f"{THRESHOLD_MIN_ABOVE} above $\\varepsilon/2$ at some $\\varepsilon$; " + ev)
    elif not holds:
        failed = {"smallest_record": "the Unweighted $\\Delta$ does not follow the smallest record",
                  "quarter": f"the LW $\\Delta$ is not within {RATIO_TOL:.0%} of a quarter of the Unweighted one",
                  "none_below": "Weighted-e truncates records where the LW $\\Delta$ is at or below "
                                "$\\varepsilon/2$",
                  "rises_above": "its count does not rise with the LW $\\Delta$ above $\\varepsilon/2$"}
        ev += " Not as the chapter argues: " + "; ".join(w for k, w in failed.items() if not parts[k]) + "."
    return Verdict(
        "weighted_e_threshold_effect",
        "Weighted-e's truncation count is a threshold effect: the smallest record sets the Unweighted Δ, the LW Δ is "
        "about a quarter of it, and Weighted-e truncates nothing while the LW Δ is at or below ε/2 and a count that "
        "rises with the LW Δ above it.", holds, ev, {**th, "parts": parts})


# ------------------------------------------------------------------------------ the Censor_ref study

#: Short glue names of the Censor_ref study's fixed variants (the alpha and widen variants are named from their value).
REFERENCE_SHORT = {"Censor_uw": "uw", "Censor_w-pub": "pub", DEFAULT: "ref", DP_MEDIAN: "dpmed", HISTORICAL: "hist"}
#: The Censor_ref default's median share of censored records must stay under this at every eps.
REFERENCE_SHARE_LIMIT = 0.05
#: Historical and DP median references "censor alike" when their median shares differ by at most this.
REFERENCE_SAME_SHARE = 0.01


def reference_short(variant: str) -> str:
    """The glue name of a variant: ``uw``, ``pub``, ``ref``, ``dpmed``, ``hist``, ``alpha-<a>`` or ``widen-<w>``
    (a widening of the DP median theta_0)."""
    if variant in REFERENCE_SHORT:
        return REFERENCE_SHORT[variant]
    s = variant_settings(variant)
    return f"alpha-{s['alpha']:g}" if s["alpha"] is not None else f"widen-{s['widen']:g}"


def _ref_grid(ref) -> list[float]:
    return sorted((float(e) for e in ref["eps"].values), reverse=True)


def _ref_medians(ref) -> dict:
    """Per variant (short name) and eps (descending): median share and count censored, max-ECDF, bias and sd of phi."""
    out = {}
    for v in (str(x) for x in ref["variant"].values):
        c = ref.sel(variant=v)
        out[reference_short(v)] = {e: {
            "censored": float(np.median(c["share_censored"].sel(eps=e).values)),
            "n_censored": float(np.median(c["n_censored"].sel(eps=e).values)),
            "max_ecdf": float(np.median(c["max_ecdf"].sel(eps=e).values)),
            "bias": float(np.median(c["phi_mean"].sel(eps=e).values - c["true_mean"].values)),
            "sd": float(np.median(c["phi_sd"].sel(eps=e).values)),
            "alpha": float(np.median(c["alpha"].sel(eps=e).values)),
        } for e in _ref_grid(ref)}
    return out


def _fixed_alphas(med: dict) -> list[str]:
    """Short names of the fixed-alpha variants, largest alpha first."""
    return sorted((k for k in med if k.startswith("alpha-")), key=lambda k: float(k[6:]), reverse=True)


def reference_settings() -> dict:
    """Censor_ref's public defaults as the chapter states them, from the mechanism and the Beta model.

    Returns
    -------
    dict
        ``tolerance`` (``K``), ``two_k`` (``2K``: the eps at which ``alpha = min(1, eps / 2K)`` reaches 1 for a
        window of width eps, ``M = eps / 2``), ``precision`` (the public precision of a Beta record's own
        reference) and ``widen`` (the default widening of a common theta_0).
    """
    from dpsynth.mechanisms.censored_reference import TOLERANCE
    from dpsynth.models.base import REFERENCE_PRECISION

    return {"tolerance": float(TOLERANCE), "two_k": 2 * float(TOLERANCE), "precision": float(REFERENCE_PRECISION),
            "widen": WIDEN}


def own_reference_window(tolerance: float | None = None, a: float = TRUE_BETA[0], b: float = TRUE_BETA[1]) -> dict:
    """Where Censor_ref's default window leaves records out, at the generating parameters (no data involved).

    With ``alpha = M / K`` (every eps up to ``2K``) a record is censored when its term differs from its own
    saturated reference by more than ``K``: ``|log Beta(x | a, b) - log Beta(x | mean x, precision P)| > K``
    (``P`` = :data:`dpsynth.models.base.REFERENCE_PRECISION`). This integrates the Beta(``a``, ``b``) mass where
    that happens, on a fine grid in ``logit x`` (exact cdf differences per cell).

    Returns
    -------
    dict
        ``tolerance``; ``share`` (the mass outside the window), ``share_low`` (above it: the records near 0,
        where the density of Beta(a < 1, b) diverges and the reference's does not) with ``x_low`` (the
        largest such x), and ``share_high`` (below it, in the right tail) with ``x_high`` (the smallest such x).
    """
    from scipy import stats
    from scipy.special import expit

    from dpsynth.mechanisms.censored_reference import TOLERANCE
    from dpsynth.models.base import REFERENCE_PRECISION

    k = float(TOLERANCE if tolerance is None else tolerance)
    edges = expit(np.linspace(-60.0, 40.0, 400_001))
    mid = 0.5 * (edges[1:] + edges[:-1])
    d = stats.beta.logpdf(mid, a, b) - stats.beta.logpdf(mid, REFERENCE_PRECISION * mid,
                                                          REFERENCE_PRECISION * (1.0 - mid))
    mass = np.diff(stats.beta.cdf(edges, a, b))
    low, high = d > k, d < -k
    return {"tolerance": k, "share": float(mass[low | high].sum()), "share_low": float(mass[low].sum()),
            "x_low": float(mid[low].max()) if low.any() else float("nan"), "share_high": float(mass[high].sum()),
            "x_high": float(mid[high].min()) if high.any() else float("nan")}


def reference_numbers(results) -> dict:
    """The numbers the chapter's Censor_ref section quotes (glued under ``censoring-ref``).

    Returns
    -------
    dict
        ``eps_low`` and ``eps_high`` (the grid's ends); ``alphas`` and ``widens`` (the fixed alphas and the
        DP median's other widenings, as text: ``"1, 0.5 and 0.25"``); ``ref_eps`` (the median eps the DP median
        theta_0's release cost, one record removed; NaN without that variant); the defaults of
        :func:`reference_settings` (``tolerance``, ``two_k``, ``precision``, ``widen``); ``low`` and
        ``high``: per variant (short name, :func:`reference_short`) the median share and count censored,
        max-ECDF, bias and sd of ``phi`` and the alpha used, at that eps; ``default_max_censored`` and
        ``default_min_censored`` (the default's largest and smallest median share over the grid),
        ``window`` (:func:`own_reference_window`: where the default's windows leave Beta(0.5, 3) out),
        ``sd_ratio`` (at the smallest eps, the median sd of ``phi`` at the smallest fixed alpha over that
        at the largest; NaN without two) and ``converged``
        (share of converged Censor_ref fits); ``holds``: per reference verdict (:func:`reference_verdicts`)
        whether it holds, as the prose says it (``"holds"``, ``"does not hold"``, ``"is undecided"``).
    """
    ref = results.reference
    med = _ref_medians(ref)
    grid = _ref_grid(ref)
    lo, hi = grid[-1], grid[0]
    fixed = _fixed_alphas(med)
    sd_ratio = med[fixed[-1]][lo]["sd"] / med[fixed[0]][lo]["sd"] if len(fixed) > 1 else np.nan
    is_ref = [variant_settings(str(v))["synthesizer"] == "Censor_ref" for v in ref["variant"].values]
    conv = ref["converged"].isel(variant=np.flatnonzero(is_ref)).values.astype(bool)
    names = [str(v) for v in ref["variant"].values]

    def listed(vals) -> str:
        t = [f"{float(v):g}" for v in vals]
        return ", ".join(t[:-1]) + " and " + t[-1] if len(t) > 1 else "".join(t)

    return {"eps_low": lo, "eps_high": hi,
            "alphas": listed(float(k[6:]) for k in fixed), "widens": listed(
                variant_settings(v)["widen"] for v in names if v.startswith(f"{DP_MEDIAN}, widen ")),
            "ref_eps": (float(np.median(ref["reference_eps_remove"].sel(variant=DP_MEDIAN).values))
                        if DP_MEDIAN in names else np.nan),
            **reference_settings(),
            "low": {k: v[lo] for k, v in med.items()}, "high": {k: v[hi] for k, v in med.items()},
            "default_max_censored": max(v["censored"] for v in med["ref"].values()),
            "default_min_censored": min(v["censored"] for v in med["ref"].values()), "sd_ratio": sd_ratio,
            "window": own_reference_window(),
            "converged": float(conv.mean()),
            "holds": {v.key: {True: "holds", False: "does not hold", None: "is undecided"}[v.holds]
                      for v in reference_verdicts(results)}}


def reference_verdicts(results) -> list[Verdict]:
    """The Censor_ref section's claims.

    Keys: ``ref_within_bound``, ``ref_censors_fewer``, ``ref_more_useful``,
    ``ref_default_alpha_censors_little``, ``ref_alpha_trades_censoring_for_width`` (undecided with
    fewer than two fixed alphas), ``ref_own_censors_no_more`` (the default's own references against the
    DP median theta_0), ``ref_historical_like_dp`` (the historical theta_0 against the DP median) and
    ``ref_widen_1_biased`` (the DP median unwidened against widened 2 times); the last three undecided
    without their variants.
    """
    ref = results.reference
    med = _ref_medians(ref)
    grid = _ref_grid(ref)
    r = ref.sizes.get("replicate", 1)
    eq = "$\\varepsilon$ ="
    names = [str(v) for v in ref["variant"].values]
    out = []

    excess = float((ref["delta"] - ref["eps"] / 2).max())
    charged_err = float(np.abs(ref["eps_remove"] - ref["eps"] - ref["reference_eps_remove"]).max())
    paid = [v for v in names if charges_reference(v)]
    free = [v for v in names if variant_settings(v)["synthesizer"] == "Censor_ref" and not charges_reference(v)]
    cost = ref["reference_eps_remove"].sel(variant=paid).values if paid else np.array([])
    free_cost = float(np.abs(ref["reference_eps_remove"].sel(variant=free).values).max()) if free else 0.0
    ok = excess <= CENSOR_TOL and charged_err < 1e-9 and bool(np.all(cost > 0)) and free_cost == 0.0
    out.append(Verdict(
        "ref_within_bound", "Every Censor_ref fit stays at or under eps/2, and its declared eps charges the reference "
        "where one is released from the data (the DP median θ₀) and nothing else.", ok,
        f"largest $\\Delta - \\varepsilon/2$ over {r} replicate(s), every variant and $\\varepsilon$: {excess:.3g}; "
        "the default (each record's own reference), the fixed $\\alpha$ and the historical $\\theta_0$ add nothing "
        "to $\\varepsilon$" + ("" if free_cost == 0.0 else f" (but up to {free_cost:.3g} was added)")
        + (f"; a DP median $\\theta_0$ adds a median {float(np.median(cost)):.3g} (one record removed)" if paid else "")
        + ".", {"worst_excess": excess, "charge_error": charged_err, "free_cost": free_cost}))

    # shares of the same n order as the counts do; quoted as the table's "% censored" column shows them
    fewer = {e: med["ref"][e]["censored"] < min(med["uw"][e]["censored"], med["pub"][e]["censored"]) for e in grid}
    out.append(Verdict(
        "ref_censors_fewer", "Censor_ref censors fewer records than Censor_uw and Censor_w-pub at every eps.",
        all(fewer.values()), "median share of the records censored (Censor_uw, Censor_w-pub, Censor_ref): " + "; ".join(
            ", ".join(f"{100 * med[k][e]['censored']:.3g}%" for k in ("uw", "pub", "ref")) + f" at {eq} {e:g}"
            for e in grid) + ".", {"fewer": fewer}))

    useful = {e: med["ref"][e]["max_ecdf"] < min(med["uw"][e]["max_ecdf"], med["pub"][e]["max_ecdf"]) for e in grid}
    out.append(Verdict(
        "ref_more_useful", "Censor_ref's synthetic data are closer to the data (median max-ECDF) than Censor_uw's "
        "and Censor_w-pub's at every eps.", all(useful.values()),
        "median max-ECDF (Censor_uw, Censor_w-pub, Censor_ref): " + "; ".join(
            f"{med['uw'][e]['max_ecdf']:.3f}, {med['pub'][e]['max_ecdf']:.3f}, {med['ref'][e]['max_ecdf']:.3f} at "
            f"{eq} {e:g}" for e in grid) + ".", {"more_useful": useful}))

    st = reference_settings()
    share = {e: med["ref"][e]["censored"] for e in grid}
    out.append(Verdict(
        "ref_default_alpha_censors_little", "With its defaults (each record's own reference, alpha = min(1, M/K) "
        f"with K = {st['tolerance']:g}), Censor_ref censors under {100 * REFERENCE_SHARE_LIMIT:.0f}% of the records "
        "at every eps (median).",
        all(v < REFERENCE_SHARE_LIMIT for v in share.values()),
        "median share censored: " + ", ".join(f"{100 * v:.1f}% at {eq} {e:g}" for e, v in share.items()) + ".",
        {"share": share}))

    fixed = _fixed_alphas(med)
    trade: dict = {}
    if len(fixed) > 1:
        trade = {e: all(med[a][e]["censored"] >= med[b][e]["censored"] and med[a][e]["sd"] < med[b][e]["sd"]
                        for a, b in zip(fixed, fixed[1:])) for e in grid}
        holds = all(trade.values())
        ev = "; ".join(f"at {eq} {e:g}: " + ", ".join(
            f"α = {k[6:]} {100 * med[k][e]['censored']:.1f}% censored, sd {med[k][e]['sd']:.3g}" for k in fixed)
            for e in grid) + "."
    else:
        holds, ev = None, "undecided: fewer than two fixed values of α."
    out.append(Verdict(
        "ref_alpha_trades_censoring_for_width", "A smaller alpha censors no more records but widens the posterior "
        "of the mean (median sd of phi), at every eps.", holds, ev, {"trade": trade}))

    own: dict = {}
    if "dpmed" in med:
        own = {e: med["ref"][e]["censored"] <= med["dpmed"][e]["censored"] for e in grid}
        holds = all(own.values())
        ev = ("median share of the records censored with each record's own reference against with a DP median "
              "$\\theta_0$: " + ", ".join(f"{100 * med['ref'][e]['censored']:.3g}% against "
                                          f"{100 * med['dpmed'][e]['censored']:.3g}% at {eq} {e:g}" for e in grid)
              + "; median max-ECDF " + ", ".join(f"{med['ref'][e]['max_ecdf']:.3f} against "
                                                 f"{med['dpmed'][e]['max_ecdf']:.3f}" for e in grid) + ".")
    else:
        holds, ev = None, "undecided: no DP median variant."
    out.append(Verdict(
        "ref_own_censors_no_more", "Each record's own reference (the default, free) censors no more records than a "
        "common θ₀ from a DP median (charged), at every eps.", holds, ev, {"no_more": own}))

    diff: dict = {}
    if "hist" in med and "dpmed" in med:
        diff = {e: med["hist"][e]["censored"] - med["dpmed"][e]["censored"] for e in grid}
        holds = all(abs(v) <= REFERENCE_SAME_SHARE for v in diff.values())
        ev = ("median share of the records censored with a historical θ₀ against with a DP median θ₀: "
              + ", ".join(f"{100 * med['hist'][e]['censored']:.3g}% against {100 * med['dpmed'][e]['censored']:.3g}% "
                          f"at {eq} {e:g}" for e in grid) + "; median max-ECDF "
              + ", ".join(f"{med['hist'][e]['max_ecdf']:.3f} against {med['dpmed'][e]['max_ecdf']:.3f}" for e in grid)
              + ".")
    else:
        holds, ev = None, "undecided: no historical or no DP median variant."
    out.append(Verdict(
        "ref_historical_like_dp", "A common theta_0 from a historical data set and from the small DP median release "
        f"censor alike (median shares within {100 * REFERENCE_SAME_SHARE:.0f} percentage point at every eps).", holds,
        ev, {"difference": diff}))

    worse: dict = {}
    if "widen-1" in med and "dpmed" in med:
        worse = {e: abs(med["widen-1"][e]["bias"]) > abs(med["dpmed"][e]["bias"]) for e in grid}
        holds = all(worse.values())
        ev = (f"median bias of the posterior mean of φ with the DP median θ₀ not widened against widened {WIDEN:g} "
              "times: " + ", ".join(f"{med['widen-1'][e]['bias']:+.3g} against {med['dpmed'][e]['bias']:+.3g} at "
                                    f"{eq} {e:g}" for e in grid) + ".")
    else:
        holds, ev = None, "undecided: no DP median variant without widening."
    out.append(Verdict(
        "ref_widen_1_biased", f"An unwidened DP median θ₀ (widen 1) biases the mean more than the default widening "
        f"{WIDEN:g}, at every eps.", holds, ev, {"worse": worse}))
    return out


def verdicts(results) -> list[Verdict]:
    """The chapter's claims checked on ``results`` (see the chapter's "What this shows").

    Keys: ``censored_within_bound``, ``counts_rise_as_eps_falls``, ``censor_w_beats_censor_uw``,
    ``censor_w_pub_beats_censor_uw``, ``ph_least_useful``, ``weighted_most_useful``,
    ``mixing_multiplies_eps``, ``censoring_flattens_posterior``, ``downscaling_reduces_counts``,
    ``censor_uw_counts_match_paper`` (undecided unless n = 2000), ``milder_weights_reproduce_counts``
    (undecided unless n = 2000 and eps 5, 4, 3 are in the grid), ``weighted_e_above_target``
    (undecided when Weighted-e never ends above eps/2).
    """
    p, study = _res(results)
    grid = _eps_grid(study)
    r = study.sizes.get("replicate", 1)
    L = registry.label
    out = []

    worst = _cap_numbers(results)
    cap_ok = all(v <= CENSOR_TOL for v in worst.values())
    over = {k: {f"{e:g}": int((values(study, "delta", k, e) > e / 2 + CENSOR_TOL).sum()) for e in grid}
            for k in ("LW", "Weighted-e")}
    cens = _shown(study, CENSORED)
    out.append(Verdict(
        "censored_within_bound", "The censored synthesizers are always at or under eps/2.", cap_ok,
        ", ".join(L(k) for k in cens) + f" stay at or under $\\varepsilon/2$ in all {r} replicate(s) at every "
        "$\\varepsilon$, and so do the downscaled Censor_w, the release months and the illustration (largest "
        f"excess $\\Delta - \\varepsilon/2$: {max(worst.values()):.3g}). Only the DP ones make this "
        "$\\varepsilon$-DP with one record removed; Censor_w's "
        "weights come from the same data, so it is aDP (the paper calls it DP). The aDP synthesizers exceed "
        "$\\varepsilon/2$ in " + "; ".join(
            f"{L(k)}: " + ", ".join(f"{n}/{r} at $\\varepsilon$ = {e}" for e, n in d.items()) for k, d in over.items())
        + " replicates.",
        {"worst_excess": worst, "adp_over": over}))

    out.append(_weighted_e_verdict(results))
    out.append(threshold_verdict(results))

    med_uw = {e: float(np.median(values(study, "n_censored", "Censor_uw", e))) for e in grid}
    rising = all(med_uw[a] < med_uw[b] for a, b in zip(grid, grid[1:]))  # grid is descending
    out.append(Verdict(
        "counts_rise_as_eps_falls", "Censor_uw censors more records as eps falls.", rising if len(grid) > 1 else None,
        "Median censored records of Censor_uw: "
        + ", ".join(f"{v:g} at $\\varepsilon$ = {e:g}" for e, v in med_uw.items()) + ".", {"median_censored": med_uw}))

    um = {e: _utility_medians(results, e) for e in grid}
    n_cells = len(grid) * len(VERDICT_MEASURES)
    cells_of = ("($\\varepsilon$, measure) cells of the utility table (avg-ECDF, max-ECDF and the errors of the 15th "
                "percentile and the median)")

    def wins(a, b):
        return int(sum(um[e].loc[a, m] < um[e].loc[b, m] for e in grid for m in VERDICT_MEASURES))

    cw = wins("Censor_w", "Censor_uw")
    out.append(Verdict(
        "censor_w_beats_censor_uw", "Censor_w is more useful than Censor_uw.", cw == n_cells,
        f"Censor_w has the smaller median in {cw} of {n_cells} {cells_of}. "
        "This is no longer a comparison of two DP synthesizers: Censor_w is aDP.", {"wins": cw, "cells": n_cells}))

    if "Censor_w-pub" in um[grid[0]].index:
        pw, pc = wins("Censor_w-pub", "Censor_uw"), wins("Censor_w", "Censor_w-pub")
        out.append(Verdict(
            "censor_w_pub_beats_censor_uw", "Weighting still pays when the weights come from a historical fit "
            "(Censor_w-pub, DP, against Censor_uw, DP).", pw > n_cells / 2,
            f"Censor_w-pub beats Censor_uw in {pw} of {n_cells} cells; the papers' Censor_w (aDP) beats "
            f"Censor_w-pub in {pc} of {n_cells}.", {"wins": pw, "cw_over_pub": pc, "cells": n_cells}))

    ph_rows = [k for k in ("PH", "PH" + _ALT, "PH-paper", "PH-paper" + _ALT) if k in um[grid[0]].index]
    mb = list(_MODEL_BASED)
    almost = {k: int(sum(int((um[e].loc[mb, m] < um[e].loc[k, m]).sum()) >= 3 for e in grid for m in VERDICT_MEASURES))
              for k in ph_rows}
    worst_of = {k: int(sum(um[e].loc[mb + [k], m].idxmax() == k for e in grid for m in VERDICT_MEASURES))
                for k in ph_rows}
    out.append(Verdict(
        "ph_least_useful", "PH is the least useful synthesizer (at equal eps with one record removed).",
        almost.get("PH", 0) == n_cells,
        "; ".join(f"{_show_label(k)}: worse than at least three of the paper's four model-based synthesizers in "
                  f"{almost[k]} of {n_cells} cells, the worst of the five in {worst_of[k]}" for k in ph_rows)
        + " (PH-paper is the papers' calibration, $\\varepsilon/2$ with one record removed).",
        {"worse_than_three": almost, "worst": worst_of, "cells": n_cells}))

    ecdf = ("avg-ECDF", "max-ECDF")
    n_ecdf = len(grid) * len(ecdf)
    best = int(sum(um[e].loc[mb, m].idxmin() == "LW" for e in grid for m in ecdf))
    out.append(Verdict(
        "weighted_most_useful", "LW is the most useful model-based synthesizer, without a strict guarantee.",
        best == n_ecdf, f"the smallest median ECDF distance among the paper's four model-based synthesizers in {best} "
        f"of {n_ecdf} cells. Its guarantee is aDP only.", {"best": best, "cells": n_ecdf}))

    mx = mixing_numbers(results)
    eps_one = {k: float(np.median(values(study, "eps_remove", k, p.mix_eps))) for k in mx["one"]}
    draws = {k: float(np.median(values(study, "mix_n_draws", k, p.mix_eps))) for k in mx["one"]}
    mult = {k: mx["eps_mixed"][k] / eps_one[k] for k in mx["one"]}

    def g4(v):  # as the mixing table writes its medians (.4g, thousands with separators)
        return f"{v:,.0f}" if abs(v) >= 1e3 else f"{v:.4g}"

    out.append(Verdict(
        "mixing_multiplies_eps", "Record-wise mixing multiplies the privacy budget by the number of distinct draws.",
        all(v > 1 for v in mult.values()),
        f"at $\\varepsilon$ = {p.mix_eps:g}, medians over the replicates, one draw → record-wise mixed: " + "; ".join(
            f"{L(k)} $\\varepsilon$ {g4(eps_one[k])} → {g4(mx['eps_mixed'][k])} ({g4(draws[k])} distinct draws), "
            f"max-ECDF {g4(mx['one'][k])} → {g4(mx['mixed'][k])}" for k in mx["one"]) + ".",
        {"multiplier": mult, "rel_change": -mx["change"]}))

    f1 = results.figure1.isel(replicate=0) if "replicate" in results.figure1.dims else results.figure1
    post, cens = f1["phi"].sel(synthesizer="Unweighted"), f1["phi"].sel(synthesizer="Censor_uw")
    sd_post, sd_cens = float(post.std()), float(cens.std())
    shift = float(cens.mean()) - float(post.mean())
    out.append(Verdict(
        "censoring_flattens_posterior", "Censoring flattens the posterior toward the prior.", sd_cens > sd_post,
        f"at $\\varepsilon$ = {p.fig1_eps:g} the censored posterior's sd of $\\phi$ is {sd_cens / sd_post:.2f} "
        f"times the posterior's, and its mean is {shift / sd_post:+.1f} posterior sds away.",
        {"sd_ratio": sd_cens / sd_post, "shift_sd": shift / sd_post}))

    t5 = count_table(results, downscale=True)
    drop = {k: (float(t5.loc[("none", L(k), "ours"), "median"]), float(t5.loc[("downscale", L(k), "ours"), "median"]))
            for k in ("Weighted-e", "Censor_w")}
    out.append(Verdict(
        "downscaling_reduces_counts", "Downscaling the weights reduces truncation and censoring counts.",
        all(b <= a for a, b in drop.values()) and any(b < a for a, b in drop.values()),
        "Median counts without → with downscaling: " + ", ".join(f"{L(k)} {a:g} → {b:g}" for k, (a, b) in drop.items())
        + f" at $\\varepsilon$ = {p.downscale_eps:g}, $c$ = {p.downscale:g}.", {"medians": drop}))

    mn = milder_numbers(results)
    good = [v for v, ok in mn["reproduces"].items() if ok and v != "LW (ours)"]  # the milder variants only
    out.append(Verdict(
        "milder_weights_reproduce_counts", "Milder LW weights (closer to 1) reproduce the published Censor_w counts: "
        f"medians within {100 * mn['tol']:.0f}% of the paper's at ε = 4 and 3 and at least half of the replicates "
        "with no record censored at ε = 5.",
        (bool(good) if mn["decidable"] else None),
        ("; ".join(f"{v}: median " + ", ".join(f"{100 * d:+.0f}% at $\\varepsilon$ = {e}" for e, d in rel.items())
                   + f" from the paper's, {100 * mn['zeros_at_5'][v]:.0f}% zeros at $\\varepsilon$ = 5"
                   for v, rel in mn["relative_difference"].items()) + "."
         if mn["decidable"] else f"undecided: this run has n = {p.n} and $\\varepsilon$ in "
         + ", ".join(f"{e:g}" for e in grid) + "; the comparison needs the n of the paper's Table 1 and "
         "$\\varepsilon$ = 5, 4 and 3."),
        {k: mn[k] for k in ("relative_difference", "zeros_at_5", "reproduces")}))

    common = [e for e in grid if float(e).is_integer() and (int(e), "Censor_uw") in PAPER_TABLE1]
    paper_med = {e: PAPER_TABLE1[(int(e), "Censor_uw")]["median"] for e in common}
    rel_err = {f"{e:g}": (med_uw[e] - paper_med[e]) / paper_med[e] for e in common}
    decidable = p.n == 2000 and bool(common)
    out.append(Verdict(
        "censor_uw_counts_match_paper", "Our Censor_uw counts match the published Table 1 (within 10%).",
        (all(abs(v) <= 0.10 for v in rel_err.values()) if decidable else None),
        ("median relative difference "
         + ", ".join(f"{100 * v:+.0f}% at $\\varepsilon$ = {e}" for e, v in rel_err.items())
         if decidable else f"undecided: this run has n = {p.n}, not the n of the paper's Table 1."),
        {"relative_difference": rel_err}))
    if getattr(results, "reference", None) is not None:
        out += reference_verdicts(results)
    return out

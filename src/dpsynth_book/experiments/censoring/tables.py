"""Tables of the censoring chapter, and the lists of its prose whose length depends on the results.

Every function takes the :class:`~dpsynth_book.experiments.censoring.CensoringResults` of
:func:`~dpsynth_book.experiments.censoring.run` (or one of its Datasets) and returns a DataFrame for the
page; :func:`text_lists` formats the per-eps lists that the chapter's Markdown quotes through glue
(their numbers come from :func:`dpsynth_book.experiments.censoring.verdicts.text_numbers`). The
censoring paper's published counts are the constants :data:`PAPER_TABLE1` and
:data:`PAPER_TABLE_S5`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import xarray as xr

from dpsynth import registry
from dpsynth.privacy import CENSOR_TOL

from ... import presentation
from ...studies import select_fits
from .reference import DEFAULT, DP_MEDIAN, HISTORICAL, WIDEN, variant_settings
from .replicate import MIX_NAMES, true_stats

__all__ = [
    "PAPER_TABLE1",
    "PAPER_TABLE_S5",
    "PAPER_DELTA_RANGES",
    "CENSORED",
    "SHORT",
    "MEASURES",
    "count_summary",
    "values",
    "figure1_table",
    "eps_table",
    "WEIGHTED_E_FORMATS",
    "weighted_e_numbers",
    "RANK_MIN",
    "RATIO_TOL",
    "THRESHOLD_MIN_ABOVE",
    "threshold_effect",
    "threshold_table",
    "above_target_table",
    "count_table",
    "tally_table",
    "milder_table",
    "utility_table",
    "mixing_table",
    "calibration_table",
    "release_table",
    "release_summary",
    "convergence_table",
    "REFERENCE_ROW",
    "reference_row_note",
    "reference_label",
    "reference_variants",
    "reference_table",
    "reference_caption",
    "eps_list",
    "text_lists",
]

_COLS = ("min", "Q1", "median", "mean", "Q3", "max", "sd")
#: Columns of the count tables as shown in the book (the quartiles are kept by ``full=True``).
SHORT = ("min", "median", "mean", "max", "sd")


def _row(*vals):
    return dict(zip(_COLS, vals))


#: The censoring paper's Table 1 (published): records (of n = 2000) truncated by Weighted-e or
#: censored by Censor_w / Censor_uw, summarised over 100 replicates; keyed by (eps, synthesizer).
PAPER_TABLE1 = {
    (5, "Weighted-e"): _row(0, 0, 0, 29, 55, 166, 48.80),
    (5, "Censor_w"): _row(0, 0, 0, 110, 260, 341, 129.59),
    (5, "Censor_uw"): _row(196, 236, 244, 247, 255, 296, 17.44),
    (4, "Weighted-e"): _row(0, 130, 219, 195, 272, 364, 103.48),
    (4, "Censor_w"): _row(0, 404, 425, 408, 440, 549, 92.56),
    (4, "Censor_uw"): _row(340, 398, 419, 419, 435, 481, 26.73),
    (3, "Weighted-e"): _row(400, 536, 574, 573, 618, 684, 60.62),
    (3, "Censor_w"): _row(655, 715, 741, 741, 763, 831, 35.66),
    (3, "Censor_uw"): _row(737, 787, 806, 809, 829, 888, 32.85),
}

#: The supplement's Table 1, in its Section S5 (published; eps = 4), without and with downscaling;
#: keyed by (scaling, synthesizer).
PAPER_TABLE_S5 = {
    ("none", "Weighted-e"): _row(0, 130, 219, 195, 272, 364, 103.48),
    ("none", "Censor_w"): _row(0, 404, 425, 408, 440, 549, 92.56),
    ("downscale", "Weighted-e"): _row(0, 0, 93, 91, 165, 269, 86.49),
    ("downscale", "Censor_w"): _row(0, 0, 0, 144, 328, 413, 165.66),
}

#: Ranges of the Lipschitz bounds read off the paper's Figure 10 and supplement S3 (n = 2000).
PAPER_DELTA_RANGES = {"Unweighted": (7.5, 15.0), "LW": (2.0, 3.5)}

#: The censored synthesizers (their Delta is capped at eps/2).
CENSORED = ("Censor_w", "Censor_w-pub", "Censor_uw")
#: Utility measures of :func:`utility_table` (smaller is better).
MEASURES = ("avg-ECDF", "max-ECDF", "|mean - true|", "|q15 - true|", "|median - true|")
#: The measures the utility verdicts count cells over (the paper's Figures 3-4 and its 15th percentile and median).
_ALT = " (ln n bins)"


def count_summary(values) -> dict[str, float]:
    """Min, Q1, median, mean, Q3, max and sd of counts over replicates (NaNs dropped)."""
    v = np.asarray(values, dtype=float).ravel()
    v = v[~np.isnan(v)]
    if v.size == 0:
        return {k: np.nan for k in _COLS}
    q1, med, q3 = np.quantile(v, [0.25, 0.5, 0.75])
    sd = float(v.std(ddof=1)) if v.size > 1 else np.nan
    return dict(zip(_COLS, (float(v.min()), float(q1), float(med), float(v.mean()), float(q3), float(v.max()), sd)))


def values(study: xr.Dataset, var: str, synthesizer: str, eps: float | None = None) -> np.ndarray:
    """``var`` of one synthesizer (at ``eps``) over the replicates, as a flat array."""
    sel = select_fits(study, synthesizer, eps)
    if sel.sizes["fit"] != 1:
        raise KeyError(f"{synthesizer!r} at eps={eps!r}: {sel.sizes['fit']} fits instead of one.")
    return np.asarray(sel[var].isel(fit=0).values, dtype=float).ravel()


def _shown(study: xr.Dataset, names) -> list[str]:
    present = set(map(str, study["synthesizer"].values))
    return [k for k in names if k in present]


def _eps_grid(study: xr.Dataset) -> list[float]:
    e = study["eps"].values
    return sorted({float(v) for v in e[~np.isnan(e)]}, reverse=True)


def _res(results):
    return results.params, results.study


# ---------------------------------------------------------------------------------------- tables


def figure1_table(figure1: xr.Dataset) -> pd.DataFrame:
    """Mean, sd and 95% interval of ``phi`` under the prior (Uniform(0, 1)), posterior and censored posterior.

    Also each distribution's sd as a multiple of the posterior's and its mean's distance from the
    posterior mean in posterior sds (what the verdict ``censoring_flattens_posterior`` quotes).
    """
    f = figure1.isel(replicate=0) if "replicate" in figure1.dims else figure1
    rows = {"prior": {"mean": 0.5, "sd": 1 / np.sqrt(12), "2.5%": 0.025, "97.5%": 0.975}}
    for name, key in (("Unweighted", "posterior"), ("Censor_uw", "censored posterior")):
        v = f["phi"].sel(synthesizer=name).values
        rows[key] = {"mean": float(v.mean()), "sd": float(v.std()), "2.5%": float(np.quantile(v, 0.025)),
                     "97.5%": float(np.quantile(v, 0.975))}
    post = rows["posterior"]
    for r in rows.values():
        r["sd / posterior sd"] = r["sd"] / post["sd"]
        r["mean shift (posterior sds)"] = (r["mean"] - post["mean"]) / post["sd"]
    return pd.DataFrame(rows).T.rename_axis("distribution")


#: The label of Censor_ref's rows, taken from its own study, in the tables of every synthesizer.
REFERENCE_ROW = registry.label("Censor_ref") + " of its own study"


def _reference_default(results, eps: float):
    """Censor_ref's default fits at ``eps`` in the Censor_ref study (None without the study or that eps)."""
    ref = getattr(results, "reference", None)
    if ref is None or not np.isclose(ref["eps"].values, eps).any():
        return None
    return ref.sel(variant=DEFAULT, eps=float(ref["eps"].values[np.isclose(ref["eps"].values, eps)][0]))


def reference_row_note(results) -> str:
    """The caption's sentence on the rows of Censor_ref (the package's default) in the tables of every synthesizer."""
    ref = getattr(results, "reference", None)
    if ref is None:
        return ""
    return (f" \"{REFERENCE_ROW}\": Censor_ref with its defaults, which the main study does not run, from the "
            f"Censor_ref study ({ref.sizes.get('replicate', 1)} replicate(s) of the same data model and n, "
            "{numref}`tbl-censoring-reference`).")


def eps_table(results) -> pd.DataFrame:
    """The eps of one released synthetic data set under both neighbour relations (median and max over replicates).

    Unweighted and LW do not depend on eps and appear once (target ``"any"``). Censor_ref (the package's
    default, DP), which the main study does not run, is added at each eps from the Censor_ref study
    (:data:`REFERENCE_ROW`).
    """
    _, study = _res(results)
    rows = {}
    names = presentation.order(_shown(study, [k for k in registry.names() if k != "Data"]))
    for eps in [np.nan, *_eps_grid(study)]:
        for k in names:
            sel = select_fits(study, k)
            sel = sel.isel(fit=np.flatnonzero(np.isnan(sel["eps"].values) if np.isnan(eps)
                                              else np.isclose(sel["eps"].values, eps)))
            if sel.sizes["fit"] != 1:
                continue
            v = sel.isel(fit=0)
            rows[("any" if np.isnan(eps) else f"{eps:g}", registry.label(k))] = {
                "remove, median": float(v["eps_remove"].median()), "remove, max": float(v["eps_remove"].max()),
                "replace, median": float(v["eps_replace"].median()), "replace, max": float(v["eps_replace"].max()),
                "guarantee": registry.guarantee(k)}
        r = None if np.isnan(eps) else _reference_default(results, eps)
        if r is not None:
            rows[(f"{eps:g}", REFERENCE_ROW)] = {
                "remove, median": float(r["eps_remove"].median()), "remove, max": float(r["eps_remove"].max()),
                "replace, median": float(r["eps_replace"].median()), "replace, max": float(r["eps_replace"].max()),
                "guarantee": registry.guarantee("Censor_ref")}
    df = pd.DataFrame.from_dict(rows, orient="index")
    df.index = pd.MultiIndex.from_tuples(df.index, names=["target eps", "synthesizer"])
    return df


#: How the Weighted-e numbers are written, in :func:`above_target_table` and in the verdict that quotes them.
WEIGHTED_E_FORMATS = {"delta": "{:.2f}", "truncated": "{:.0f}", "above_after_refit": "{:.0f}", "risen": "{:.0f}",
                      "shift_sd": "{:+.2f}"}


def weighted_e_numbers(results) -> dict:
    """Weighted-e against its target eps/2, per eps: why its Delta ends above it.

    Returns
    -------
    dict
        Keyed by eps (as ``"4"``): replicates with Weighted-e's Delta above eps/2 (``above``) of
        ``replicates``; medians over those replicates of the records truncated under the LW fit
        (``truncated``), of the refit's records with ``Delta_i > eps/2`` (``above_after_refit``),
        of those that had been under eps/2 in the LW fit (``risen``), of Delta (``delta``) and of the
        shift of the refit's posterior mean of ``phi`` in LW posterior sds (``shift_sd``); and
        ``all_risen``: in every such replicate the records above eps/2 after the refit are records
        the truncation had kept (their LW bound was at or under eps/2). None where not stored.
    """
    study = results.study
    if "n_above_target" not in study:
        return {}
    out = {}
    for e in _eps_grid(study):
        d = values(study, "delta", "Weighted-e", e)
        hit = d > e / 2 + CENSOR_TOL
        v = {k: values(study, var, "Weighted-e", e)[hit] for k, var in (
            ("truncated", "n_truncated"), ("above_after_refit", "n_above_target"), ("risen", "n_risen"),
            ("shift_sd", "refit_shift_sd"))}

        def med(a):
            return float(np.median(a)) if a.size else np.nan

        out[f"{e:g}"] = {"above": int(hit.sum()), "replicates": int(d.size), "delta": med(d[hit]),
                         **{k: med(a) for k, a in v.items()},
                         "all_risen": bool(np.all((v["risen"] > 0) & (v["risen"] == v["above_after_refit"])))}
    return out


#: Rank correlation (Spearman) at or above which one quantity follows another in :func:`threshold_effect`.
RANK_MIN = 0.5
#: A median ratio "is about" the value the chapter states (1 for the smallest record, 4 for the quarter)
#: within this relative distance.
RATIO_TOL = 0.25
#: Fewest replicates above eps/2 at an eps for the rank correlation of Weighted-e's count with the LW Delta.
THRESHOLD_MIN_ABOVE = 5


def _rank(a, b) -> float:
    """Spearman rank correlation of two series (NaN with fewer than three pairs or a constant series)."""
    from scipy.stats import spearmanr

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 3 or np.ptp(a[ok]) == 0 or np.ptp(b[ok]) == 0:
        return float("nan")
    return float(spearmanr(a[ok], b[ok])[0])


def threshold_effect(results) -> dict:
    """The chain behind Weighted-e's counts (the chapter's "threshold effect"), measured over the replicates.

    The chapter argues: the Unweighted Delta is set by the smallest record, ``-log(x_(1)) / 2``; the LW
    Delta is about a quarter of it; so Weighted-e truncates nothing while the LW Delta is at or below
    eps/2 and a count that rises with the LW Delta above it.

    Returns
    -------
    dict
        ``replicates``; ``smallest``: the median ratio of the Unweighted Delta to ``-log(x_(1)) / 2`` and
        their rank correlation (``median_ratio``, ``rank``); ``quarter``: the median ratio of the Unweighted
        to the LW Delta and their rank correlation; ``by_eps``: eps (as ``"4"``) -> ``half`` (eps/2), the
        replicates whose LW Delta is at or below it (``below``) and the most records Weighted-e truncated
        in them (``below_max``, NaN without any), the replicates above it (``above``), the median count
        there (``above_median``) and the rank correlation of the count with the LW Delta there (``rank``;
        NaN with fewer than :data:`THRESHOLD_MIN_ABOVE` of them).
    """
    study = results.study
    wd, ud = study["delta_weighted"].values.ravel(), study["delta_unweighted"].values.ravel()
    f = -0.5 * np.log(study["x_min"].values.ravel())
    out = {"replicates": int(wd.size),
           "smallest": {"median_ratio": float(np.median(ud / f)), "rank": _rank(f, ud)},
           "quarter": {"median_ratio": float(np.median(ud / wd)), "rank": _rank(wd, ud)}, "by_eps": {}}
    for e in _eps_grid(study):
        t = values(study, "n_truncated", "Weighted-e", e)
        above = wd > e / 2
        out["by_eps"][f"{e:g}"] = {
            "half": e / 2, "below": int((~above).sum()),
            "below_max": float(t[~above].max()) if (~above).any() else np.nan,
            "above": int(above.sum()), "above_median": float(np.median(t[above])) if above.any() else np.nan,
            "rank": _rank(wd[above], t[above]) if above.sum() >= THRESHOLD_MIN_ABOVE else np.nan}
    return out


def threshold_table(results) -> pd.DataFrame:
    """:func:`threshold_effect` as a table: the two ratios, then Weighted-e's count against the LW Delta per eps.

    Rows: the Unweighted Delta against ``-log(x_(1)) / 2``, the Unweighted Delta against the LW Delta,
    and per eps Weighted-e's truncation count against the LW Delta. Columns: replicates, median ratio,
    rank correlation (per eps: of the count with the LW Delta over the replicates above eps/2), and per
    eps the replicates at or below eps/2 with the most records truncated in them and the replicates above
    it with their median count ("–" where a column does not apply).
    """
    th = threshold_effect(results)
    nan = np.nan
    rows = {"Unweighted Δ against −½ log x₍₁₎": {"replicates": th["replicates"],
                                                   "median ratio": th["smallest"]["median_ratio"],
                                                   "rank correlation": th["smallest"]["rank"]},
            "Unweighted Δ against LW Δ": {"replicates": th["replicates"], "median ratio": th["quarter"]["median_ratio"],
                                           "rank correlation": th["quarter"]["rank"]}}
    for e, d in th["by_eps"].items():
        rows[f"Weighted-e count against LW Δ, ε = {e}"] = {
            "replicates": th["replicates"], "median ratio": nan, "rank correlation": d["rank"],
            "at or below ε/2": d["below"], "most truncated there": d["below_max"], "above ε/2": d["above"],
            "median truncated there": d["above_median"]}
    df = pd.DataFrame.from_dict(rows, orient="index").rename_axis("relation")
    for c in ("replicates", "at or below ε/2", "above ε/2"):  # counts as integers, "–" where they do not apply
        df[c] = [str(int(v)) if np.isfinite(v) else "–" for v in df[c].astype(float)]
    return df


def above_target_table(results) -> pd.DataFrame:
    """The aDP synthesizers against the target eps/2, per eps: how often, and for Weighted-e why.

    Columns: the target eps/2; the replicates in which the LW and the Weighted-e Delta end above
    it (beyond :data:`~dpsynth.privacy.CENSOR_TOL`); and over the Weighted-e ones the medians of
    :func:`weighted_e_numbers`: Delta, the records the LW fit truncated, the refit's records above
    eps/2, how many of those the truncation had kept, and the refit's shift of the posterior mean
    of ``phi`` in LW posterior sds (written as :data:`WEIGHTED_E_FORMATS`; "–" where no replicate
    is above). Empty when the results do not store the refit's counts.
    """
    _, study = _res(results)
    num = weighted_e_numbers(results)
    rows = {}
    for e, d in num.items():
        lw = int((values(study, "delta", "LW", float(e)) > float(e) / 2 + CENSOR_TOL).sum())
        med = {k: (WEIGHTED_E_FORMATS[k].format(d[k]) if d["above"] else "–") for k in WEIGHTED_E_FORMATS}
        rows[e] = {"ε/2": float(e) / 2, "LW above": lw, "Weighted-e above": d["above"], "Δ": med["delta"],
                   "truncated": med["truncated"], "above after refit": med["above_after_refit"],
                   "of them kept": med["risen"], "shift of φ (LW sds)": med["shift_sd"]}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("ε")


def count_table(results, *, downscale: bool = False, full: bool = False) -> pd.DataFrame:
    """Our count summaries beside the paper's Table 1 (or the supplement's Table 1 with ``downscale=True``).

    Synthesizers are shown by their registry labels, e.g. ``"Censor_w (aDP)"`` (the papers'
    version) and ``"Censor_w-pub (DP)"`` (ours only: the papers do not run it). Columns
    :data:`SHORT` unless ``full`` (then the quartiles too).

    Returns
    -------
    pandas.DataFrame
        Indexed by (eps or scaling, synthesizer, source), with source ``"ours"`` or ``"paper"``.
    """
    out = {}
    if downscale:
        down = results.downscale
        for scaling in ("none", "downscale"):
            for name in ("Weighted-e", "Censor_w"):
                col = "n_truncated" if name == "Weighted-e" else "n_censored"
                ours = count_summary(down[col].sel(synthesizer=name, scaling=scaling))
                out[(scaling, registry.label(name), "ours")] = ours
                out[(scaling, registry.label(name), "paper")] = PAPER_TABLE_S5[(scaling, name)]
        names = ["scaling", "synthesizer", "source"]
    else:
        study = results.study
        shown = _shown(study, ("Weighted-e", "Censor_w", "Censor_w-pub", "Censor_uw"))
        for eps in _eps_grid(study):
            for name in shown:
                col = "n_truncated" if name == "Weighted-e" else "n_censored"
                out[(eps, registry.label(name), "ours")] = count_summary(values(study, col, name, eps))
                key = (int(eps), name) if float(eps).is_integer() else None
                if key in PAPER_TABLE1:
                    out[(eps, registry.label(name), "paper")] = PAPER_TABLE1[key]
        names = ["eps", "synthesizer", "source"]
    df = pd.DataFrame.from_dict(out, orient="index")
    df.index = pd.MultiIndex.from_tuples(df.index, names=names)
    return df if full else df[list(SHORT)]


def tally_table(results, *, full: bool = False) -> pd.DataFrame:
    """Censor_w counts under our definition (weighted terms above M), the alternative tally, and as published.

    The alternative tally counts, at the Censor_w fit's draws, the records whose *unweighted*
    ``|f|`` exceeds M, in the replicates where the clamp is invoked at all, and 0 in the others.
    """
    study = results.study
    out = {}
    for eps in _eps_grid(study):
        ours = values(study, "n_censored", "Censor_w", eps)
        alt = np.where(ours > 0, values(study, "n_exceed_unweighted", "Censor_w", eps), 0.0)
        out[(eps, "weighted terms > M")] = count_summary(ours)
        out[(eps, "unweighted |f| > M, if invoked")] = count_summary(alt)
        if float(eps).is_integer() and (int(eps), "Censor_w") in PAPER_TABLE1:
            out[(eps, "paper")] = PAPER_TABLE1[(int(eps), "Censor_w")]
    df = pd.DataFrame.from_dict(out, orient="index")
    df.index = pd.MultiIndex.from_tuples(df.index, names=["eps", "Censor_w count"])
    return df if full else df[list(SHORT)]


def _zeros(v) -> float:
    v = np.asarray(v, dtype=float).ravel()
    v = v[~np.isnan(v)]
    return float(np.mean(v == 0)) if v.size else np.nan


def milder_table(results) -> pd.DataFrame:
    """Censor_w counts with the LW weights and with milder weights (:data:`~.replicate.MILDER_LW`), and as published.

    Columns: median, mean, the share of replicates with no record censored (``zeros``; the
    paper gives no share: NaN on its rows, although its median 0 at eps = 5 means at least half),
    and ``median vs paper``, the median's relative difference from the paper's (NaN where the
    paper has no row or a median of 0, and on its own rows).
    """
    study = results.study
    out = {}
    for eps in _eps_grid(study):
        ours = values(study, "n_censored", "Censor_w", eps)
        rows = {"LW (ours)": ours}
        if "milder_n_censored" in study:
            for v in map(str, study["lw_variant"].values):
                rows[v] = np.asarray(study["milder_n_censored"].sel(lw_variant=v, lw_eps=eps).values, dtype=float)
        for k, v in rows.items():
            cs = count_summary(v)
            out[(eps, k)] = {"median": cs["median"], "mean": cs["mean"], "zeros": _zeros(v)}
        if float(eps).is_integer() and (int(eps), "Censor_w") in PAPER_TABLE1:
            pub = PAPER_TABLE1[(int(eps), "Censor_w")]
            out[(eps, "paper")] = {"median": pub["median"], "mean": pub["mean"], "zeros": np.nan}
    for (eps, k), row in out.items():
        pub = out.get((eps, "paper"), {}).get("median", np.nan)
        row["median vs paper"] = ((row["median"] - pub) / pub if k != "paper" and np.isfinite(pub) and pub != 0
                                  else np.nan)
    df = pd.DataFrame.from_dict(out, orient="index")
    df.index = pd.MultiIndex.from_tuples(df.index, names=["eps", "Censor_w weights"])
    return df



def _utility_medians(results, eps: float) -> pd.DataFrame:
    """Median over replicates of each measure, per synthesizer (registry names; PH rules suffixed)."""
    study = results.study
    truth = true_stats()
    out = {}
    names = _shown(study, ("LW", "Weighted-e", "Censor_w", "Censor_w-pub", "Censor_uw", "PH", "PH-paper"))
    for k in names:
        for pre, suffix in (("", ""), ("ph_alt_", _ALT)):
            if pre and (not k.startswith("PH") or f"{pre}avg_ecdf" not in study
                        or np.all(np.isnan(values(study, f"{pre}avg_ecdf", k, eps)))):
                continue
            v = {m: values(study, f"{pre}{m}", k, eps) for m in ("avg_ecdf", "max_ecdf", "mean", "q15", "median")}
            out[k + suffix] = {"avg-ECDF": float(np.median(v["avg_ecdf"])), "max-ECDF": float(np.median(v["max_ecdf"])),
                               "|mean - true|": float(np.median(np.abs(v["mean"] - truth["mean"]))),
                               "|q15 - true|": float(np.median(np.abs(v["q15"] - truth["q15"]))),
                               "|median - true|": float(np.median(np.abs(v["median"] - truth["median"])))}
    return pd.DataFrame(out).T


def _show_label(k: str) -> str:
    base, sep, _ = k.partition(_ALT)
    return registry.label(base) + (_ALT if sep else "")


def utility_table(results) -> pd.DataFrame:
    """Median over replicates of each utility measure, per eps and synthesizer (smaller is better).

    Rows suffixed ``(ln n bins)`` are the perturbed histograms with the supplement's other bin rule. Censor_ref
    (the package's default, DP), which the main study does not run, is added at each eps from the Censor_ref
    study (:data:`REFERENCE_ROW`; its replicates, the same data model and n). The verdicts compare the main
    study's synthesizers only (:func:`_utility_medians`).
    """
    truth = true_stats()
    tabs = {}
    for e in _eps_grid(results.study):
        t = _utility_medians(results, e).rename(index=_show_label)
        r = _reference_default(results, e)
        if r is not None:
            v = {m: np.asarray(r[m].values, dtype=float) for m in ("avg_ecdf", "max_ecdf", "mean", "q15", "median")}
            t.loc[REFERENCE_ROW] = {"avg-ECDF": float(np.median(v["avg_ecdf"])),
                                    "max-ECDF": float(np.median(v["max_ecdf"])),
                                    "|mean - true|": float(np.median(np.abs(v["mean"] - truth["mean"]))),
                                    "|q15 - true|": float(np.median(np.abs(v["q15"] - truth["q15"]))),
                                    "|median - true|": float(np.median(np.abs(v["median"] - truth["median"])))}
        tabs[f"{e:g}"] = t
    return pd.concat(tabs, names=["eps", "synthesizer"])


def mixing_table(results) -> pd.DataFrame:
    """One posterior draw per data set against record-wise mixing, at ``mix_eps`` (medians over replicates)."""
    p, study = _res(results)
    rows = {}
    for k in presentation.order(_shown(study, MIX_NAMES)):
        v = {m: values(study, m, k, p.mix_eps) for m in ("max_ecdf", "mix_max_ecdf", "eps_remove", "mix_eps",
                                                          "mix_eps_replace", "mix_n_draws")}
        rows[registry.label(k)] = {
            "max-ECDF, one draw": np.median(v["max_ecdf"]), "max-ECDF, mixed": np.median(v["mix_max_ecdf"]),
            "eps one draw": np.median(v["eps_remove"]), "eps mixed": np.median(v["mix_eps"]),
            "eps mixed (replace)": np.median(v["mix_eps_replace"]), "distinct draws": np.median(v["mix_n_draws"])}
    return pd.DataFrame(rows).T.astype(float).rename_axis("synthesizer")


def calibration_table(results) -> pd.DataFrame:
    """The values of ``c`` the calibration tried and the LW Delta on the historical data at each."""
    cal = results.calibration.isel(replicate=0)
    return pd.DataFrame({"c tried": cal["trace_c"].values, "LW Delta": cal["trace_delta"].values},
                        index=pd.RangeIndex(1, cal.sizes["step"] + 1, name="step"))


def _release_label(name: str, scaling: str, c: float) -> str:
    return f"{registry.label(name)}, c = {c:.3f}" if scaling == "downscale" else f"{registry.label(name)}, c = 1"


def release_table(results) -> pd.DataFrame:
    """Each later month's releases: Delta, censored records and utilities."""
    rel = results.release
    c = float(results.calibration["c"].values.ravel()[0])
    df = rel[["delta", "n_censored", "max_ecdf", "avg_ecdf", "q15"]].to_dataframe().reset_index()
    df = df.rename(columns={"delta": "Delta", "n_censored": "censored", "max_ecdf": "max-ECDF", "avg_ecdf": "avg-ECDF"})
    df["month"] = df["replicate"] + 1
    df["synthesizer"] = [_release_label(s, sc, c) for s, sc in zip(df["synthesizer"], df["scaling"])]
    return df.drop(columns=["replicate", "scaling"]).set_index(["month", "synthesizer"])


def release_summary(results) -> pd.DataFrame:
    """Releases averaged over the months, with their eps under both relations and failed fits."""
    rel = results.release
    c = float(results.calibration["c"].values.ravel()[0])
    rows = {}
    for s in ("Censor_w-pub", "Censor_w"):
        for sc in ("downscale", "none"):
            v = rel.sel(synthesizer=s, scaling=sc)
            rows[_release_label(s, sc, c)] = {
                "eps (remove)": float(v["eps_remove"].max()), "eps (replace)": float(v["eps_replace"].max()),
                "Delta": float(v["delta"].mean()), "censored": float(v["n_censored"].mean()),
                "avg-ECDF": float(v["avg_ecdf"].mean()),
                "failed fits": int((~v["converged"].values.astype(bool)).sum())}
    return pd.DataFrame(rows).T.rename_axis("release")


def _conv_row(ok, div, rhat, ess) -> dict:
    ok = np.asarray(ok, dtype=bool).ravel()
    div = np.asarray(div, dtype=float).ravel()
    return {"fits": int(ok.size), "failed": int((~ok).sum()), "fits with divergences": int((div > 0).sum()),
            "divergences": int(np.nansum(div)),
            "max R-hat": float(np.nanmax(rhat)) if np.isfinite(rhat).any() else np.nan,
            "min bulk ESS": float(np.nanmin(ess)) if np.isfinite(ess).any() else np.nan}


def convergence_table(results) -> pd.DataFrame:
    """Every MCMC fit of the chapter once: fits, failed fits, divergences, worst R-hat, least bulk ESS.

    A fit fails when R-hat or bulk ESS misses its threshold or any divergence occurred. Rows: each
    synthesizer of the Monte Carlo study, its historical fits, the downscaled fits, the
    illustration, the release workflow's calibration (its bisection fits are counted through the
    study driver's ``convergence_warnings``, one per failed fit), the release months and the Censor_ref
    study (every variant's fit; Censor_w-pub's historical fits are not stored there).
    """
    study, down, rel = results.study, results.downscale, results.release
    rows = {}
    for k in presentation.order(_shown(study, registry.names())):
        v = select_fits(study, k)
        mcmc = v["mcmc"].any("replicate") if "replicate" in v["mcmc"].dims else v["mcmc"]
        v = v.isel(fit=np.flatnonzero(mcmc.values))
        if v.sizes["fit"] == 0:
            continue
        rows[registry.label(k)] = _conv_row(v["converged"].values, v["divergences"].values, v["rhat"].values,
                                            v["ess"].values)
    if "hist_converged" in study:
        rows["historical (Censor_w-pub)"] = _conv_row(*(study[f"hist_{k}"].values for k in
                                                        ("converged", "divergences", "rhat", "ess")))
    own = down["own_fit"].values.astype(bool)
    rows["downscaling study"] = _conv_row(*(down[k].values[own] for k in ("converged", "divergences", "rhat", "ess")))
    f1 = results.figure1
    rows["illustration"] = _conv_row(*(f1[k].values for k in ("converged", "divergences", "rhat", "ess")))
    cal = results.calibration
    n_cal = 1 + cal.sizes["step"]
    warned = int(cal["convergence_warnings"].sum())
    rows["calibration"] = {**_conv_row(cal["converged"].values, cal["divergences"].values, cal["rhat"].values,
                                       cal["ess"].values), "fits": n_cal,
                           "failed": max(warned, int((~cal["converged"].values.astype(bool)).sum()))}
    ok = np.concatenate([rel["converged"].values.ravel(), rel["converged_unweighted"].values.ravel()])
    div = np.concatenate([rel["divergences"].values.ravel(), rel["divergences_unweighted"].values.ravel()])
    rows["release months"] = _conv_row(ok, div, rel["rhat"].values, rel["ess"].values)
    ref = getattr(results, "reference", None)
    if ref is not None:
        rows["Censor_ref study"] = _conv_row(*(ref[k].values for k in ("converged", "divergences", "rhat", "ess")))
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("fits of")



# ------------------------------------------------------------------------------ the Censor_ref study


def reference_label(variant: str) -> str:
    """Display label of a Censor_ref study variant: the registry label, or Censor_ref's with its setting."""
    s = variant_settings(variant)
    if variant in ("Censor_uw", "Censor_w-pub", DEFAULT):
        return registry.label(variant)
    if variant == DP_MEDIAN:
        return "Censor_ref, DP median θ₀"
    if variant == HISTORICAL:
        return "Censor_ref, historical θ₀"
    if s["alpha"] is not None:
        return f"Censor_ref, α = {s['alpha']:g}"
    return f"Censor_ref, DP median θ₀, widen {s['widen']:g}"


def reference_variants(reference: xr.Dataset, kind: str = "all") -> list[str]:
    """The variants of the Censor_ref study present in ``reference``, in study order.

    ``kind``: ``"all"``; ``"main"`` (Censor_uw, Censor_w-pub, Censor_ref with its defaults, and with
    a common theta_0 from the DP median or the historical data set); ``"alpha"`` (Censor_ref with
    the default and each fixed alpha); ``"widen"`` (the DP median theta_0 with the default widening
    and the others).
    """
    have = [str(v) for v in reference["variant"].values]
    if kind == "all":
        return have
    if kind == "main":
        return [v for v in have if v in ("Censor_uw", "Censor_w-pub", DEFAULT, DP_MEDIAN, HISTORICAL)]
    if kind == "alpha":
        return [v for v in have if v == DEFAULT or (variant_settings(v)["synthesizer"] == "Censor_ref"
                                                    and variant_settings(v)["alpha"] is not None)]
    if kind == "widen":
        return [v for v in have if v == DP_MEDIAN or v.startswith(f"{DP_MEDIAN}, widen ")]
    raise ValueError(f"`kind` must be 'all', 'main', 'alpha' or 'widen'; got {kind!r}.")


def reference_table(results, kind: str = "all") -> pd.DataFrame:
    """The Censor_ref study: medians over the replicates per eps (descending) and variant.

    Columns: the alpha used, the declared eps of one released draw with one record removed and
    replaced (a released reference included), the median share of records censored, the
    median max-ECDF of one synthetic data set, the median posterior mean of ``phi`` (the mean of
    x) minus the true mean (bias), the median posterior sd of ``phi`` (width) and the share of
    converged fits.
    """
    ref = results.reference if hasattr(results, "reference") else results
    rows = {}
    for eps in sorted((float(e) for e in ref["eps"].values), reverse=True):
        for v in reference_variants(ref, kind):
            c = ref.sel(eps=eps, variant=v)

            def med(var, c=c):
                v = np.asarray(c[var].values, dtype=float)
                # alpha is NaN off Censor_ref
                return float(np.median(v[~np.isnan(v)])) if (~np.isnan(v)).any() else np.nan

            rows[(f"{eps:g}", reference_label(v))] = {
                "α": med("alpha"), "ε removed": med("eps_remove"), "ε replaced": med("eps_replace"),
                "% censored": 100 * med("share_censored"), "max-ECDF": med("max_ecdf"),
                "bias of φ": float(np.median(c["phi_mean"].values - c["true_mean"].values)),
                "sd of φ": med("phi_sd"), "converged": float(np.mean(c["converged"].values.astype(bool)))}
    df = pd.DataFrame.from_dict(rows, orient="index")
    df.index = pd.MultiIndex.from_tuples(df.index, names=["ε", "variant"])
    return df


def reference_caption(results, kind: str) -> str:
    """Caption of the Censor_ref study's table (``kind="table"``) or figure (``"figure"``), with this run's sizes."""
    from dpsynth.mechanisms.censored_reference import TOLERANCE
    from dpsynth.models.base import REFERENCE_PRECISION

    p, ref = results.params, results.reference
    run = f"{ref.sizes.get('replicate', 1)} replicate(s) of n = {p.n}"
    variants = ("Censor_uw (DP) and Censor_w-pub (DP) as in the main study; Censor_ref (DP) with its defaults: each "
                f"record's window at its own reference term (the Beta at the record's own mean, precision "
                f"{REFERENCE_PRECISION:g}), $\\alpha = \\min(1, M/K)$ with $M = \\varepsilon/2$ and $K$ = "
                f"{TOLERANCE:g}, nothing charged; each other Censor_ref variant changes one setting: $\\alpha$ fixed; "
                f"a common $\\theta_0$ from a DP median of the data (released at $\\varepsilon_0$ = {p.ref_eps:g}, "
                f"charged) or from a historical data set (free), its scale widened {WIDEN:g} times; the DP median's "
                "scale widened " + " or ".join(f"{float(w):g}" for w in p.ref_widens) + f" times instead of {WIDEN:g}.")
    if kind == "table":
        return (f"The Censor_ref study ({run}): medians over the replicates, per $\\varepsilon$ (one record removed, "
                "before a released reference) and variant, of the $\\alpha$ used, the declared $\\varepsilon$ of "
                "one released draw with one record removed and replaced (a released reference included), the "
                "share of records censored, the max-ECDF of one synthetic data set, the bias and sd of the posterior "
                "of $\\phi$ (the mean of $x$, true value 1/7) and the share of converged fits. " + variants)
    if kind == "figure":
        return (f"The Censor_ref study ({run}) against $\\varepsilon$ (one record removed, before a released "
                "reference): medians over the replicates of the share of records censored (symmetric log axis), the "
                "max-ECDF of one synthetic data set, and the bias and sd of the posterior of $\\phi$ (the mean of "
                "$x$). Censor_uw, Censor_w-pub and Censor_ref in their colours (solid); fixed $\\alpha$ dotted; the "
                "DP median $\\theta_0$ dashed and the historical one dash-dotted (black), the DP median's other "
                "widenings dash-dotted (grey). " + variants)
    raise ValueError(f"`kind` must be 'table' or 'figure'; got {kind!r}.")


# ------------------------------------------------------------------ lists the Markdown quotes (glue:md)


def eps_list(items: Mapping[str, str], *, sep: str = ", ") -> str:
    """Items as an inline list, each followed by ``at $\\varepsilon$ = <eps>`` (MyST Markdown).

    With the default ``sep`` the last two items are joined by "and": ``"0% at $\\varepsilon$ = 5,
    38% at $\\varepsilon$ = 4 and 100% at $\\varepsilon$ = 3"``; items that hold commas themselves
    are joined by ``sep="; "``.
    """
    parts = [f"{v} at $\\varepsilon$ = {e}" for e, v in items.items()]
    if sep == ", " and len(parts) > 1:
        return ", ".join(parts[:-1]) + " and " + parts[-1]
    return sep.join(parts)


def text_lists(numbers: Mapping) -> dict[str, str]:
    """The lists of the chapter's prose whose length depends on the results (the eps grid, the synthesizers).

    Parameters
    ----------
    numbers : mapping
        :func:`dpsynth_book.experiments.censoring.verdicts.text_numbers` of the results.

    Returns
    -------
    dict
        MyST Markdown fragments, glued by the notebook under ``censoring-list-<name>`` and quoted
        with the ``{glue:md}`` role: ``threshold_above`` (share of replicates with the LW
        Delta above eps/2, per eps), ``tally`` (published, our and the alternative median Censor_w
        count, per eps of the paper's Table 1), ``milder_eps`` (the eps grid), ``milder`` (per weight
        variant the median count and, in brackets, the share of replicates with none censored, per
        eps), ``milder_paper`` (published medians), ``mixing_max_ecdf`` (per synthesizer median
        max-ECDF one draw -> mixed, and the replicates in which mixed is lower), ``mixing_eps``
        (median eps of a mixed release per synthesizer), ``ph_best`` (the smallest median of each
        utility column, per eps) and ``discrepancy_weighted_e``, ``discrepancy_censor_uw``,
        ``discrepancy_censor_w`` (our median count against the paper's, per common eps).
    """
    L = registry.label
    th, ta, mi, mx, ph, di = (numbers[k] for k in ("threshold", "tally", "milder", "mixing", "ph", "discrepancy"))
    none_common = "no common $\\varepsilon$"
    grid = list(th["above"])

    def against(d, relative=False):
        if not d:
            return none_common
        return eps_list({e: f"{v['ours']:g} against {v['paper']:g}"
                         + (f" ({100 * v['relative']:+.0f}%)" if relative else "") for e, v in d.items()}, sep="; ")

    return {
        "threshold_above": eps_list({e: f"{100 * s:.0f}%" for e, s in th["above"].items()}),
        "tally": (eps_list({e: f"{v['paper']:g}, {v['ours']:g} and {v['alternative']:g}"
                            for e, v in ta["by_eps"].items()}, sep="; ")
                  if ta["by_eps"] else "none: no $\\varepsilon$ of this run is in the paper's Table 1"),
        "milder_eps": ", ".join(grid[:-1]) + (" and " if len(grid) > 1 else "") + grid[-1],
        "milder": "; ".join(f"*{v}*: " + ", ".join(f"{mi['median'][v][e]:g} ({100 * mi['zeros'][v][e]:.0f}%)"
                                                   for e in mi["median"][v]) for v in mi["median"]),
        "milder_paper": (eps_list({e: f"{m:g}" for e, m in mi["paper"].items()}) if mi["paper"]
                         else "not given for any $\\varepsilon$ of this run"),
        "mixing_max_ecdf": "; ".join(f"{L(k)} {mx['one'][k]:.4f} → {mx['mixed'][k]:.4f} ({mx['lower'][k]} of "
                                     f"{mx['replicates']})" for k in mx["one"]),
        "mixing_eps": ", ".join(f"{mx['eps_mixed'][k]:.0f} for {L(k)}" for k in mx["eps_mixed"]),
        "ph_best": "; ".join(f"at $\\varepsilon$ = {e}: " + ", ".join(f"{m} {lab}" for m, lab in b.items())
                             for e, b in ph["best"].items()),
        "discrepancy_weighted_e": against(di["weighted_e"]),
        "discrepancy_censor_uw": against(di["censor_uw"], relative=True),
        "discrepancy_censor_w": against(di["censor_w"]),
    }

"""Tables, computed text and verdicts of the censoring chapter.

Every function takes the :class:`~dpsynth.experiments.censoring.CensoringResults` of
:func:`~dpsynth.experiments.censoring.run` (or one of its Datasets) and returns a DataFrame, a
Markdown string with numbers from the results, or structured :class:`~dpsynth.verdicts.Verdict`
objects. The censoring paper's published counts are the constants :data:`PAPER_TABLE1` and
:data:`PAPER_TABLE_S5`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from ... import registry
from ...mechanisms.histogram import bin_count
from ...privacy import CENSOR_TOL
from ...studies import select_fits
from ...verdicts import Verdict
from .replicate import MIX_SYNTHS, true_stats

__all__ = [
    "PAPER_TABLE1",
    "PAPER_TABLE_S5",
    "PAPER_DELTA_RANGES",
    "CENSORED",
    "SHORT",
    "MEASURES",
    "VERDICT_MEASURES",
    "count_summary",
    "values",
    "figure1_table",
    "eps_table",
    "count_table",
    "tally_table",
    "milder_table",
    "utility_table",
    "mixing_table",
    "calibration_table",
    "release_table",
    "release_summary",
    "convergence_table",
    "threshold_markdown",
    "tally_markdown",
    "milder_markdown",
    "mixing_markdown",
    "release_markdown",
    "ph_markdown",
    "discrepancy_markdown",
    "weighted_e_numbers",
    "verdicts",
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

#: The supplement's Table S5 (published; eps = 4) without and with downscaling; keyed by (scaling, synthesizer).
PAPER_TABLE_S5 = {
    ("none", "Weighted-e"): _row(0, 130, 219, 195, 272, 364, 103.48),
    ("none", "Censor_w"): _row(0, 404, 425, 408, 440, 549, 92.56),
    ("downscale", "Weighted-e"): _row(0, 0, 93, 91, 165, 269, 86.49),
    ("downscale", "Censor_w"): _row(0, 0, 0, 144, 328, 413, 165.66),
}

#: Ranges of the Lipschitz bounds read off the paper's Figure 10 and supplement S3 (n = 2000).
PAPER_DELTA_RANGES = {"Unweighted": (7.5, 15.0), "Weighted": (2.0, 3.5)}

#: The censored synthesizers (their Delta is capped at eps/2).
CENSORED = ("Censor_w", "Censor_w-pub", "Censor_uw")
#: Utility measures of :func:`utility_table` (smaller is better).
MEASURES = ("avg-ECDF", "max-ECDF", "|mean - true|", "|q15 - true|", "|median - true|")
#: The measures the utility verdicts count cells over (the paper's Figures 3-4 and its 15th percentile and median).
VERDICT_MEASURES = ("avg-ECDF", "max-ECDF", "|q15 - true|", "|median - true|")
_MODEL_BASED = ("Weighted", "Weighted-e", "Censor_w", "Censor_uw")  # the paper's four
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
    """Mean, sd and 95% interval of ``phi`` under the prior (Uniform(0, 1)), posterior and censored posterior."""
    f = figure1.isel(replicate=0) if "replicate" in figure1.dims else figure1
    rows = {"prior": {"mean": 0.5, "sd": 1 / np.sqrt(12), "2.5%": 0.025, "97.5%": 0.975}}
    for name, key in (("Unweighted", "posterior"), ("Censor_uw", "censored posterior")):
        v = f["phi"].sel(synthesizer=name).values
        rows[key] = {"mean": float(v.mean()), "sd": float(v.std()), "2.5%": float(np.quantile(v, 0.025)),
                     "97.5%": float(np.quantile(v, 0.975))}
    return pd.DataFrame(rows).T.rename_axis("distribution")


def eps_table(results) -> pd.DataFrame:
    """The eps of one released synthetic data set under both neighbour relations (median and max over replicates).

    Unweighted and Weighted do not depend on eps and appear once (target ``"any"``).
    """
    _, study = _res(results)
    rows = {}
    names = registry.order(_shown(study, [k for k in registry.names() if k != "Data"]))
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
    df = pd.DataFrame.from_dict(rows, orient="index")
    df.index = pd.MultiIndex.from_tuples(df.index, names=["target eps", "synthesizer"])
    return df


def count_table(results, *, downscale: bool = False, full: bool = False) -> pd.DataFrame:
    """Our count summaries beside the paper's Table 1 (or Table S5 with ``downscale=True``).

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

    Columns: median, mean, and the share of replicates with no record censored (``zeros``; the
    paper gives no share: NaN on its rows, although its median 0 at eps = 5 means at least half).
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
    df = pd.DataFrame.from_dict(out, orient="index")
    df.index = pd.MultiIndex.from_tuples(df.index, names=["eps", "Censor_w weights"])
    return df


def _milder_numbers(results, tol: float = 0.25) -> dict:
    """Per variant: medians against the paper's at eps 4 and 3 (relative difference) and the share of zeros at eps 5."""
    p, study = _res(results)
    t = milder_table(results)
    grid = _eps_grid(study)
    need = (5.0, 4.0, 3.0)
    variants = [k for k in dict.fromkeys(t.index.get_level_values(1)) if k != "paper"]
    rel, zeros5, ok = {}, {}, {}
    for v in variants:
        rel[v] = {f"{e:g}": (float(t.loc[(e, v), "median"]) - PAPER_TABLE1[(int(e), "Censor_w")]["median"])
                  / PAPER_TABLE1[(int(e), "Censor_w")]["median"] for e in (4.0, 3.0) if e in grid}
        zeros5[v] = float(t.loc[(5.0, v), "zeros"]) if 5.0 in grid else np.nan
        ok[v] = (len(rel[v]) == 2 and all(abs(x) <= tol for x in rel[v].values()) and zeros5[v] >= 0.5)
    decidable = p.n == 2000 and all(e in grid for e in need) and "milder_n_censored" in study
    return {"relative_difference": rel, "zeros_at_5": zeros5, "reproduces": ok, "decidable": decidable, "tol": tol}


def milder_markdown(results) -> str:
    """Which weight variant's Censor_w counts come near the published row, with this run's numbers."""
    t = milder_table(results)
    grid = _eps_grid(results.study)
    variants = [k for k in dict.fromkeys(t.index.get_level_values(1)) if k != "paper"]
    parts = []
    for v in variants:
        meds = ", ".join(f"{float(t.loc[(e, v), 'median']):g}" for e in grid)
        z = ", ".join(f"{100 * float(t.loc[(e, v), 'zeros']):.0f}%" for e in grid)
        parts.append(f"{v}: medians {meds} and replicates with no record censored {z}")
    eps_txt = ", ".join(f"{e:g}" for e in grid)
    pub = [e for e in grid if (e, "paper") in t.index]
    txt = (f"At $\\varepsilon$ = {eps_txt}, " + "; ".join(parts) + ".")
    if "milder_converged" in results.study:
        ok = np.asarray(results.study["milder_converged"].values, dtype=bool)
        txt += f" {int(ok.sum())} of these {ok.size} extra fits converged (divergences included)."
    if pub:
        txt += (" The published medians are " + ", ".join(f"{float(t.loc[(e, 'paper'), 'median']):g} at "
                                                          f"$\\varepsilon$ = {e:g}" for e in pub) + ".")
    return txt


def _utility_medians(results, eps: float) -> pd.DataFrame:
    """Median over replicates of each measure, per synthesizer (registry names; PH rules suffixed)."""
    study = results.study
    truth = true_stats()
    out = {}
    names = _shown(study, ("Weighted", "Weighted-e", "Censor_w", "Censor_w-pub", "Censor_uw", "PH", "PH-paper"))
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

    Rows suffixed ``(ln n bins)`` are the perturbed histograms with the supplement's other bin rule.
    """
    tabs = {f"{e:g}": _utility_medians(results, e).rename(index=_show_label) for e in _eps_grid(results.study)}
    return pd.concat(tabs, names=["eps", "synthesizer"])


def mixing_table(results) -> pd.DataFrame:
    """One posterior draw per data set against record-wise mixing, at ``mix_eps`` (medians over replicates)."""
    p, study = _res(results)
    rows = {}
    for k in registry.order(_shown(study, MIX_SYNTHS)):
        v = {m: values(study, m, k, p.mix_eps) for m in ("max_ecdf", "mix_max_ecdf", "eps_remove", "mix_eps",
                                                          "mix_eps_replace", "mix_n_draws")}
        rows[registry.label(k)] = {
            "max-ECDF, one draw": np.median(v["max_ecdf"]), "max-ECDF, mixed": np.median(v["mix_max_ecdf"]),
            "eps one draw": np.median(v["eps_remove"]), "eps mixed": np.median(v["mix_eps"]),
            "eps mixed (replace)": np.median(v["mix_eps_replace"]), "distinct draws": np.median(v["mix_n_draws"])}
    return pd.DataFrame(rows).T.astype(float).rename_axis("synthesizer")


def calibration_table(results) -> pd.DataFrame:
    """The values of ``c`` the calibration tried and the Weighted Delta on the historical data at each."""
    cal = results.calibration.isel(replicate=0)
    return pd.DataFrame({"c tried": cal["trace_c"].values, "Weighted Delta": cal["trace_delta"].values},
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
    study driver's ``convergence_warnings``, one per failed fit) and the release months.
    """
    study, down, rel = results.study, results.downscale, results.release
    rows = {}
    for k in registry.order(_shown(study, registry.names())):
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
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("fits of")


# ---------------------------------------------------------------------------------- computed text


def threshold_markdown(results) -> str:
    """The Unweighted and Weighted Delta ranges and how often the Weighted Delta is above eps/2."""
    study = results.study
    wd, ud = study["delta_weighted"].values.ravel(), study["delta_unweighted"].values.ravel()
    (pu0, pu1), (pw0, pw1) = PAPER_DELTA_RANGES["Unweighted"], PAPER_DELTA_RANGES["Weighted"]
    lines = [f"Over our {wd.size} replicate(s) of {results.params.n} records the Unweighted $\\Delta$ ranges from "
             f"{ud.min():.1f} to {ud.max():.1f} (the paper's, at n = 2000: about {pu0:g} to {pu1:g}) and the Weighted "
             f"$\\Delta$ from {wd.min():.2f} to {wd.max():.2f} (paper: about {pw0:g} to {pw1:g}), median "
             f"{np.median(wd):.2f}; the ratio Unweighted/Weighted has median {np.median(ud / wd):.2f}."]
    for eps in _eps_grid(study):
        lines.append(f"At $\\varepsilon$ = {eps:g}, {100 * float(np.mean(wd > eps / 2)):.0f}% of our replicates have a "
                     f"Weighted $\\Delta$ above $\\varepsilon/2$ = {eps / 2:g}, the replicates in which Weighted-e "
                     "truncates anything.")
    return " ".join(lines)


def tally_markdown(results) -> str:
    """The published Censor_w medians against our two tallies, per eps."""
    t = tally_table(results)
    txt = []
    for eps in _eps_grid(results.study):
        if (eps, "paper") in t.index:
            txt.append(f"at $\\varepsilon$ = {eps:g} the published median is {t.loc[(eps, 'paper'), 'median']:g}, ours "
                       f"{t.loc[(eps, 'weighted terms > M'), 'median']:g} (weighted terms > M) and "
                       f"{t.loc[(eps, 'unweighted |f| > M, if invoked'), 'median']:g} (alternative tally)")
    if not txt:
        return "No $\\varepsilon$ of this run is in the paper's Table 1."
    return "In this run, " + "; ".join(txt) + "."


def _mixing_numbers(results) -> dict:
    p, study = _res(results)
    names = registry.order(_shown(study, MIX_SYNTHS))
    one = {k: float(np.median(values(study, "max_ecdf", k, p.mix_eps))) for k in names}
    mixed = {k: float(np.median(values(study, "mix_max_ecdf", k, p.mix_eps))) for k in names}
    lower = {k: int((values(study, "mix_max_ecdf", k, p.mix_eps) < values(study, "max_ecdf", k, p.mix_eps)).sum())
             for k in names}
    rel = float(np.median([(one[k] - mixed[k]) / one[k] for k in names]))
    draws = float(np.median(np.concatenate([values(study, "mix_n_draws", k, p.mix_eps) for k in names])))
    eps_mixed = {k: float(np.median(values(study, "mix_eps", k, p.mix_eps))) for k in names}
    return {"names": names, "one": one, "mixed": mixed, "lower": lower, "rel_change": rel, "draws": draws,
            "eps_mixed": eps_mixed}


def mixing_markdown(results) -> str:
    """What record-wise mixing changed in this run and what it costs."""
    p = results.params
    m = _mixing_numbers(results)
    r = results.study.sizes.get("replicate", 1)
    rc = m["rel_change"]
    buys = "clearly lowers" if rc > 0.2 else "hardly changes" if abs(rc) <= 0.2 else "raises"
    L = registry.label
    return ("Median max-ECDF, one draw → mixed: "
            + ", ".join(f"{L(k)} {m['one'][k]:.4f} → {m['mixed'][k]:.4f} (mixed lower in {m['lower'][k]} of {r})"
                        for k in m["names"])
            + f"; in this run mixing {buys} the utility (median relative change {100 * rc:+.0f}%). It costs the number "
            f"of distinct draws used (median {m['draws']:.0f} for {p.n} records and {p.chains * p.draws} pooled draws) "
            "times the one-draw $\\varepsilon$: a median of "
            + ", ".join(f"{m['eps_mixed'][k]:.0f} for {L(k)}" for k in m["names"])
            + f" with one record removed, instead of {p.mix_eps:g} for the DP synthesizers. So the book releases one "
            "draw per synthetic data set; where more than one data set is released from a fit, each costs its own "
            "$\\varepsilon$.")


def release_markdown(results) -> str:
    """The release workflow's outcome in words (means over the months)."""
    p = results.params
    s = release_summary(results)
    c = float(results.calibration["c"].values.ravel()[0])
    pub, pub1, own, own1 = (s.iloc[i] for i in range(4))
    return (f"Over {p.release_months} month(s) at $\\varepsilon$ = {p.release_eps:g} (one record removed; "
            f"{pub['eps (replace)']:g} with one record replaced), with the calibrated $c$ = {c:.3f}: Censor_w-pub (DP) "
            f"censored {pub['censored']:.1f} records on average and had avg-ECDF {pub['avg-ECDF']:.4f}; the papers' "
            f"Censor_w (aDP), with weights from each month's own data, censored {own['censored']:.1f} and had avg-ECDF "
            f"{own['avg-ECDF']:.4f}. With $c$ = 1 they censored {pub1['censored']:.0f} and {own1['censored']:.0f}. "
            "Only the Censor_w-pub rows carry an $\\varepsilon$-DP guarantee.")


def ph_markdown(results) -> str:
    """PH's bin rules and noise scales in this run, and the best row of each utility column."""
    p, study = _res(results)
    nb_sqrt, nb_log = bin_count(p.n, "sqrt"), bin_count(p.n, "log")
    e_min = min(_eps_grid(study))
    scale = {k: float(np.median(values(study, "noise_scale", k, e_min))) for k in ("PH", "PH-paper")}
    truth = true_stats()
    best = []
    for e in _eps_grid(study):
        um = _utility_medians(results, e)
        best.append(f"at $\\varepsilon$ = {e:g}: " + ", ".join(f"{m} {_show_label(um[m].idxmin())}" for m in MEASURES))
    return (f"**PH and its settings.** PH's rank depends on two settings. The bin count, which the supplement leaves "
            f"open: $\\lceil\\sqrt{{{p.n}}}\\rceil$ = {nb_sqrt} or $\\lceil\\ln {p.n}\\rceil$ = {nb_log} bins (each "
            f"{1 / nb_log:.3f} wide against a true median of {truth['median']:.3f}). And the calibration: at the "
            f"smallest $\\varepsilon$ = {e_min:g} the Laplace scale is {scale['PH']:.2f} for PH (one record removed) "
            f"and {scale['PH-paper']:.2f} for PH-paper, on about {p.n / nb_sqrt:.0f} records per bin on average with "
            f"{nb_sqrt} bins. The smallest median in each column of the utility table in this run: "
            + "; ".join(best) + ". PH's guarantee rests on the public bound $[0, 1]$, which a Beta variable has and "
            "most survey variables do not.")


def discrepancy_markdown(results) -> str:
    """Where this run's counts and bounds differ from the published ones (numbers from this run).

    Every comparison with the paper needs the paper's n = 2000; at another n the list says so.
    """
    p, study = _res(results)
    r = study.sizes.get("replicate", 1)
    ud, wd = study["delta_unweighted"].values.ravel(), study["delta_weighted"].values.ravel()
    t1 = count_table(results)
    grid = [e for e in _eps_grid(study) if float(e).is_integer() and (int(e), "Censor_uw") in PAPER_TABLE1]
    out = [f"**Where our numbers differ from the published ones, and why.** The counts below do not depend on how "
           f"synthetic data are generated. This run has {r} replicate(s) of n = {p.n} ({p.scale} scale); the paper's "
           "Table 1 has 100 replicates of n = 2000"
           + ("." if p.n == 2000 else ", so the comparisons below are of the method, not of the numbers.")]

    def med(eps, name, src):
        key = (eps, registry.label(name), src)
        return float(t1.loc[key, "median"]) if key in t1.index else np.nan

    (pu0, pu1), (pw0, pw1) = PAPER_DELTA_RANGES["Unweighted"], PAPER_DELTA_RANGES["Weighted"]
    we = "; ".join(f"{med(e, 'Weighted-e', 'ours'):g} against {med(e, 'Weighted-e', 'paper'):g} at "
                   f"$\\varepsilon$ = {e:g}" for e in grid)
    out.append(f"1. *Weighted and Unweighted bounds, Weighted-e counts*: same model, priors and weight formula. Our "
               f"Unweighted $\\Delta$ spans {ud.min():.1f} to {ud.max():.1f} (paper about {pu0:g} to {pu1:g}) and our "
               f"Weighted $\\Delta$ {wd.min():.2f} to {wd.max():.2f} (paper about {pw0:g} to {pw1:g}). Median "
               f"Weighted-e truncation counts, ours against the paper's: {we or 'no common eps'}. This row is the most "
               "sensitive to where the Weighted $\\Delta$ falls against $\\varepsilon/2$ (a threshold effect).")
    cu = [(e, med(e, "Censor_uw", "ours"), med(e, "Censor_uw", "paper")) for e in grid]
    out.append("2. *Censor_uw counts*, the check that our model, posterior and censoring count match the authors': "
               "median " + "; ".join(f"{o:g} against {q:g} ({100 * (o - q) / q:+.0f}%) at $\\varepsilon$ = {e:g}"
                                     for e, o, q in cu) + ".")
    cw = [(e, med(e, "Censor_w", "ours"), med(e, "Censor_w", "paper")) for e in grid]
    out.append("3. *Censor_w counts*: median " + "; ".join(f"{o:g} against {q:g} at $\\varepsilon$ = {e:g}"
                                                          for e, o, q in cw)
               + ". The alternative tally of the Censor_w table is the one hypothesis we tried for the published "
               "level; we keep our count (weighted terms above $M$). The bound does not depend on the tally.")
    t5 = count_table(results, downscale=True)
    ds_we = float(t5.loc[("downscale", registry.label("Weighted-e"), "ours"), "median"])
    ds_cw = float(t5.loc[("downscale", registry.label("Censor_w"), "ours"), "median"])
    out.append(f"4. *Downscaling*: the paper's $c$ is not legible in our copy. With $c$ = {p.downscale:g} our "
               f"downscaled Weighted-e and Censor_w (both aDP) truncate and censor a median of {ds_we:g} and "
               f"{ds_cw:g} records at $\\varepsilon$ = {p.downscale_eps:g}, against the paper's "
               f"{PAPER_TABLE_S5[('downscale', 'Weighted-e')]['median']:g} and "
               f"{PAPER_TABLE_S5[('downscale', 'Censor_w')]['median']:g}.")
    out.append("5. *PH*: its bin rule and calibration decide its rank (see above).")
    out.append("6. *Convergence*: the convergence table gives this run's failed fits, divergences included; their "
               "counts and utilities carry more Monte Carlo error, but $\\Delta \\le \\varepsilon/2$ of a censored "
               "fit does not depend on mixing.")
    out.append("A paper-scale run (100 replicates) will be checked for the same six points in a later release.")
    return "\n".join(out)


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
            return (head + f" (median $\\Delta$ {d['delta']:.2f}); there the LW fit's bounds made it truncate a median "
                    f"of {d['truncated']:.0f} records, yet after the refit {d['above_after_refit']:.0f} records are "
                    f"above $\\varepsilon/2$, {d['risen']:.0f} of them kept by the truncation (their LW bound was "
                    f"under it), and the refit's posterior mean of $\\phi$ moved {d['shift_sd']:+.2f} LW posterior sds")

        ev = "; ".join(one(e, d) for e, d in num.items()) + "."
    return Verdict(
        "weighted_e_above_target",
        "Weighted-e ends above eps/2 because its refit raises the bounds of records the truncation kept.",
        holds, ev, num)


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
            for k in ("Weighted", "Weighted-e")}
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
    best = int(sum(um[e].loc[mb, m].idxmin() == "Weighted" for e in grid for m in ecdf))
    out.append(Verdict(
        "weighted_most_useful", "Weighted is the most useful model-based synthesizer, without a strict guarantee.",
        best == n_ecdf, f"the smallest median ECDF distance among the paper's four model-based synthesizers in {best} "
        f"of {n_ecdf} cells. Its guarantee is aDP only.", {"best": best, "cells": n_ecdf}))

    mx = _mixing_numbers(results)
    mult = {k: mx["eps_mixed"][k] / float(np.median(values(study, "eps_remove", k, p.mix_eps))) for k in mx["names"]}
    out.append(Verdict(
        "mixing_multiplies_eps", "Record-wise mixing multiplies the privacy budget by the number of distinct draws.",
        all(v > 1 for v in mult.values()),
        f"at $\\varepsilon$ = {p.mix_eps:g}, a median of {mx['draws']:.0f} distinct draws; median relative change of "
        f"max-ECDF {100 * mx['rel_change']:+.0f}%.", {"multiplier": mult, "rel_change": mx["rel_change"]}))

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

    mn = _milder_numbers(results)
    good = [v for v, ok in mn["reproduces"].items() if ok and v != "LW (ours)"]  # the milder variants only
    out.append(Verdict(
        "milder_weights_reproduce_counts", "Milder LW weights (closer to 1) reproduce the published Censor_w counts: "
        f"medians within {100 * mn['tol']:.0f}% of the paper's at eps = 4 and 3 and at least half of the replicates "
        "with no record censored at eps = 5.",
        (bool(good) if mn["decidable"] else None),
        ("; ".join(f"{v}: median " + ", ".join(f"{100 * d:+.0f}% at $\\varepsilon$ = {e}" for e, d in rel.items())
                   + f" from the paper's, {100 * mn['zeros_at_5'][v]:.0f}% zeros at $\\varepsilon$ = 5"
                   for v, rel in mn["relative_difference"].items()) + "."
         if mn["decidable"] else f"undecided: this run has n = {p.n} and $\\varepsilon$ in "
         + ", ".join(f"{e:g}" for e in grid) + "; the paper n = 2000 and 5, 4, 3."),
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
         if decidable else f"undecided: this run has n = {p.n}, the paper n = 2000."),
        {"relative_difference": rel_err}))
    return out

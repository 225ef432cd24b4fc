"""Tables of the SDR application chapter, and the lists of its prose whose length depends on the results.

Every table is a DataFrame with short column names; the chapter shows them with
:func:`dpsynth_book.book.show_table`. Part 1's table of privacy and utility (the censoring paper's
Table 2) is split in two, :func:`privacy_table` and :func:`utility_table`, each with our numbers
(one replicate) beside the paper's published ones. Privacy figures of a fit that failed the
convergence checks carry a dagger (†). The verdicts and the numbers the chapter's prose quotes are
in :mod:`dpsynth_book.experiments.sdr_application.verdicts`.

Both parts' results have one synthesizer dimension, ``synthesizer``, whose coordinate starts with
"Data". In Part 2 "Data" is not a fit (``is_fit`` false; bootstrap resamples of the confidential
records for the utility statistics): statistics of the fits use :func:`fit_names` / :func:`fitted`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import xarray as xr

from ... import plots
from ...studies import fit_names, fitted  # noqa: F401  (part of this module's API: the notebook uses them)
from .replicate import PART1_NAMES, PART2_SYNTHESIZERS

__all__ = [
    "TABLE2_COLUMNS",
    "PAPER_TABLE2",
    "DAGGER",
    "RANKED",
    "PAPER_ORDER",
    "fit_names",
    "fitted",
    "shown_replicate",
    "privacy_table",
    "utility_table",
    "counts_table",
    "spread_table",
    "cw_match",
    "part2_privacy_table",
    "ranks",
    "ranking_table",
    "part2_weights_table",
    "convergence_table",
    "salary_table",
    "text_lists",
]

#: Synthesizers of the censoring paper's Table 2, in its order (PH-paper is the paper's histogram).
TABLE2_COLUMNS = ("Data", "LW", "Weighted-e", "Censor_w", "Censor_uw", "PH", "PH-paper")
#: The censoring paper's published Table 2 (salary in dollars). ``eps`` is the paper's "Privacy" row,
#: ``2 Delta``, the figure with one record removed; ``eps_replace`` is our ``4 Delta`` from the
#: published Delta. PH (noise 1/eps) is not in the paper.
PAPER_TABLE2 = pd.DataFrame(
    {"Data": [np.nan, np.nan, np.nan, np.nan, np.nan, 91019, 80000, 51000, 150000],
     "LW": [2.62, 5.24, 10.48, 0.0656, 0.0011, 92994, 80135, 44303, 162351],
     "Weighted-e": [2.61, 5.22, 10.44, 0.1020, 0.0025, 89525, 76451, 40574, 158037],
     "Censor_w": [2.50, 5.00, 10.00, 0.0968, 0.0026, 88581, 75642, 41142, 158426],
     "Censor_uw": [2.50, 5.00, 10.00, 0.1350, 0.0039, 88840, 75211, 38107, 162686],
     "PH": [np.nan] * 9,
     "PH-paper": [np.nan, 2.50, 5.00, 0.1310, 0.0057, 93654, 91180, 30108, 163872]},
    index=["delta", "eps", "eps_replace", "max_ecdf", "avg_ecdf", "mean", "median", "q15", "q90"]).T
#: Mark of a privacy figure from a fit that failed the convergence checks.
DAGGER = " †"
#: The private synthesizers of the censoring paper's Table 2 that are ranked by utility.
RANKED = TABLE2_COLUMNS[1:]
#: The paper's utility order (its Table 2, avg-ECDF, best first; its histogram is PH-paper).
PAPER_ORDER = ("LW", "Weighted-e", "Censor_w", "Censor_uw", "PH-paper")


def _dollars(v) -> str:
    return "–" if pd.isna(v) else f"${v:,.0f}"


def _num(v, fmt: str) -> str:
    return "–" if pd.isna(v) else format(float(v), fmt)


def _converged(ds: xr.Dataset, name: str) -> bool:
    return bool(ds.converged.sel(synthesizer=name))


def _mcmc(ds: xr.Dataset, name: str) -> bool:
    return bool(ds.mcmc.sel(synthesizer=name)) if "mcmc" in ds else True


def _dag(ds: xr.Dataset, name: str, text: str) -> str:
    return text if text == "–" or _converged(ds, name) else text + DAGGER


def _pair_index(names) -> pd.MultiIndex:
    return pd.MultiIndex.from_tuples([(plots.label(n), s) for n in names for s in ("ours", "paper")],
                                     names=["synthesizer", "source"])


def shown_replicate(results) -> int:
    """The replicate whose single-run tables and figures the page shows.

    The first replicate that kept its record-level values (``keep_records``) in which every MCMC
    fit of both parts passed the convergence checks (R-hat, ESS, no divergence); 0 if there is
    none (the tables then flag the failed fits with a dagger).
    """
    p1, p2 = results.part1, results.part2
    kept = min(int(results.params.keep_records), p1.sizes["replicate"], p2.sizes["replicate"])
    for r in range(kept):
        a, b = p1.isel(replicate=r), fitted(p2.isel(replicate=r))
        ok1 = all(bool(a.converged.sel(synthesizer=n)) for n in a.synthesizer.values if _mcmc(a, n))
        if ok1 and bool(np.all(b.converged.values)):
            return r
    return 0


def privacy_table(results, replicate: int = 0) -> pd.DataFrame:
    """Part 1 privacy beside the paper's: Delta, eps removed, eps replaced and convergence.

    Rows: (synthesizer label, ``"ours"``/``"paper"``) for LW, Weighted-e, Censor_w,
    Censor_uw, PH and PH-paper. Our privacy figures of a non-converged fit carry :data:`DAGGER`.
    """
    ds = results.part1.isel(replicate=replicate)
    names = TABLE2_COLUMNS[1:]
    rows = []
    for n in names:
        fit = _mcmc(ds, n)
        rows.append([_dag(ds, n, _num(ds[v].sel(synthesizer=n), ".2f")) for v in ("delta", "eps", "eps_replace")]
                    + [("yes" if _converged(ds, n) else "no" + DAGGER) if fit else "no MCMC"])
        rows.append([_num(PAPER_TABLE2.loc[n, v], ".2f") for v in ("delta", "eps", "eps_replace")] + [""])
    return pd.DataFrame(rows, index=_pair_index(names), columns=["Δ", "ε removed", "ε replaced", "converged"])


def utility_table(results, replicate: int = 0) -> pd.DataFrame:
    """Part 1 utility beside the paper's: max-ECDF, avg-ECDF and four salary statistics (dollars)."""
    ds = results.part1.isel(replicate=replicate)
    rows, index = [], []
    for n in TABLE2_COLUMNS:
        for src in ("ours", "paper"):
            val = {v: float(ds[v].sel(synthesizer=n)) if src == "ours" else PAPER_TABLE2.loc[n, v]
                   for v in ("max_ecdf", "avg_ecdf", "mean", "median", "q15", "q90")}
            rows.append([_num(val["max_ecdf"], ".4f"), _num(val["avg_ecdf"], ".4f")]
                        + [_dollars(val[v]) for v in ("mean", "median", "q15", "q90")])
            index.append((plots.label(n), src))
    return pd.DataFrame(rows, index=pd.MultiIndex.from_tuples(index, names=["synthesizer", "source"]),
                        columns=["max-ECDF", "avg-ECDF", "mean", "median", "15th pct", "90th pct"])


def counts_table(results, replicate: int = 0) -> pd.DataFrame:
    """Records censored and truncated, local eps (one record removed), the PH noise scale and a mixed set's eps."""
    ds = results.part1.isel(replicate=replicate)
    names = [n for n in ds.synthesizer.values if n != "Data"]
    sel = lambda v, n: float(ds[v].sel(synthesizer=n))  # noqa: E731
    return pd.DataFrame({
        "censored": [f"{sel('n_censored', n):.0f}" if n.startswith("Censor") else "" for n in names],
        "truncated": [f"{sel('n_truncated', n):.0f}" if n == "Weighted-e" else "" for n in names],
        "local 2Δ": [_dag(ds, n, _num(sel("eps_local", n), ".2f")) if _mcmc(ds, n) else "" for n in names],
        "PH noise": [f"{sel('noise_scale', n):.2f}" if n.startswith("PH") else "" for n in names],
        "ε, mixed set": [f"{sel('eps_mixed', n):,.0f}" if "eps_mixed" in ds and np.isfinite(sel("eps_mixed", n))
                         else "" for n in names],
    }, index=pd.Index([plots.label(n) for n in names], name="synthesizer"))


def spread_table(results) -> pd.DataFrame | None:
    """Mean (min-max) over replicates of Part 1's eps, utility and censored records; ``None`` for one replicate."""
    ds = results.part1
    if ds.sizes["replicate"] < 2:
        return None

    def cell(v, n, scale=1.0, fmt=".2f"):
        a = ds[v].sel(synthesizer=n).values / scale
        return "–" if np.all(np.isnan(a)) else f"{np.nanmean(a):{fmt}} ({np.nanmin(a):{fmt}}–{np.nanmax(a):{fmt}})"

    names = TABLE2_COLUMNS[1:]
    return pd.DataFrame({
        "ε removed": [cell("eps", n) for n in names],
        "avg-ECDF": [cell("avg_ecdf", n, fmt=".4f") for n in names],
        "mean ($k)": [cell("mean", n, 1000, ".1f") for n in names],
        "90th pct ($k)": [cell("q90", n, 1000, ".1f") for n in names],
        "censored": [cell("n_censored", n, fmt=".1f") if n.startswith("Censor") else "" for n in names],
    }, index=pd.Index([plots.label(n) for n in names], name="synthesizer"))


def cw_match(results) -> pd.DataFrame:
    """Per replicate: LW's and CW's Delta, CW's relative gap, and whether CW reached its band.

    The CW radius search aims at ``LW Delta (1 - tol) <= CW Delta <= LW Delta``. ``matched`` is the
    stored ``cw_radius_matched`` of the replicate (when present; otherwise the band is checked from
    the stored Deltas); ``gap`` is ``CW Delta / LW Delta - 1`` (negative: CW below LW).
    """
    p2 = results.part2
    lw = p2.delta.sel(synthesizer="LW").values
    cw = p2.delta.sel(synthesizer="CW").values
    tol = float(results.params.tol)
    if "cw_radius_matched" in p2:
        matched = np.asarray(p2.cw_radius_matched.values, dtype=bool).reshape(lw.shape)
    else:
        matched = (cw >= lw * (1 - tol)) & (cw <= lw)
    return pd.DataFrame({"LW Δ": lw, "CW Δ": cw, "gap": cw / lw - 1, "matched": matched},
                        index=pd.Index(p2.replicate.values, name="replicate"))




def part2_privacy_table(results, replicate: int = 0) -> pd.DataFrame:
    """Part 2 per synthesizer: Delta, eps removed and replaced (equal for the NB), eps of all sets, and
    Delta relative to LW's (CW's row says whether its radius search reached the band)."""
    ds = results.part2.isel(replicate=replicate)
    names = fit_names(ds)
    n_syn = int(ds.sizes["syn_set"])
    lw = float(ds.delta.sel(synthesizer="LW"))
    m = cw_match(results).iloc[replicate]

    def vs_lw(n):
        if n == "LW":
            return "–"
        txt = f"{100 * (float(ds.delta.sel(synthesizer=n)) / lw - 1):+.1f}%"
        return txt + ((" (matched)" if m.matched else " (not matched)") if n == "CW" else "")

    return pd.DataFrame({
        "Δ": [_dag(ds, n, _num(ds.delta.sel(synthesizer=n), ".3f")) for n in names],
        "ε removed": [_dag(ds, n, _num(ds.eps.sel(synthesizer=n), ".2f")) for n in names],
        "ε replaced": [_dag(ds, n, _num(ds.eps_replace.sel(synthesizer=n), ".2f")) for n in names],
        f"ε, {n_syn} sets": [_dag(ds, n, _num(ds.eps_all_sets.sel(synthesizer=n), ".1f")) for n in names],
        "converged": ["yes" if _converged(ds, n) else "no" + DAGGER for n in names],
        "Δ vs LW": [vs_lw(n) for n in names],
    }, index=pd.Index([plots.label(n) for n in names], name="synthesizer"))


def ranks(results, metric: str = "avg_ecdf") -> pd.DataFrame:
    """Rank (1 = smallest ``metric``, the best utility) of each of :data:`RANKED` in each replicate.

    Rows: replicates; columns: synthesizer names. Ties share the lower rank.
    """
    p1 = results.part1
    v = p1[metric].sel(synthesizer=list(RANKED)).transpose("replicate", "synthesizer").values
    df = pd.DataFrame(v, columns=list(RANKED), index=pd.Index(p1.replicate.values, name="replicate"))
    return df.rank(axis=1, method="min")


def _converged_part1(results) -> pd.DataFrame:
    """Per replicate and synthesizer of :data:`RANKED`: whether its fit converged (True where no MCMC)."""
    p1 = results.part1
    c = p1.converged.sel(synthesizer=list(RANKED)).transpose("replicate", "synthesizer").values
    return pd.DataFrame(np.asarray(c, dtype=bool), columns=list(RANKED),
                        index=pd.Index(p1.replicate.values, name="replicate"))


def ranking_table(results) -> pd.DataFrame:
    """The Table 2 utility ranking over replicates: median rank (range) and share ranked first, by avg-ECDF
    and max-ECDF, and the fits that converged.

    A rank cell carries :data:`DAGGER` when some of its replicates come from a fit that failed the
    convergence checks (the "converged" column says how many).
    """
    conv = _converged_part1(results)
    R = len(conv)
    cols = {}
    for metric, lab in (("avg_ecdf", "avg-ECDF"), ("max_ecdf", "max-ECDF")):
        rk = ranks(results, metric)
        cols[f"{lab} rank"] = [
            f"{rk[n].median():g} ({rk[n].min():g}–{rk[n].max():g})" + ("" if conv[n].all() else DAGGER)
            for n in RANKED]
        cols[f"{lab} first"] = [f"{int((rk[n] == 1).sum())} of {R}" for n in RANKED]
    cols["converged"] = ["no MCMC" if not _mcmc(results.part1.isel(replicate=0), n)
                         else f"{int(conv[n].sum())} of {R}" for n in RANKED]
    return pd.DataFrame(cols, index=pd.Index([plots.label(n) for n in RANKED], name="synthesizer"))


def _paper_order_holds(results) -> pd.Series:
    """Per replicate: whether the avg-ECDF order of :data:`PAPER_ORDER` is the paper's (strictly increasing)."""
    v = results.part1.avg_ecdf.sel(synthesizer=list(PAPER_ORDER)).transpose("replicate", "synthesizer").values
    return pd.Series(np.all(np.diff(v, axis=1) > 0, axis=1), index=results.part1.replicate.values)




def part2_weights_table(results, replicate: int = 0) -> pd.DataFrame:
    """Part 2 per synthesizer: weights, re-weighting k, fits run, mean of mu, median mean salary of the sets."""
    ds = results.part2.isel(replicate=replicate)
    names = fit_names(ds)
    return pd.DataFrame({
        "mean weight": [_num(ds.mean_weight.sel(synthesizer=n), ".3f") for n in names],
        "min weight": [_num(ds.min_weight.sel(synthesizer=n), ".3f") for n in names],
        "k": [_num(ds.k.sel(synthesizer=n), ".3f") for n in names],
        "fits": [f"{float(ds.n_fits.sel(synthesizer=n)):.0f}" for n in names],
        "mean of μ": [_dollars(ds.mu_mean.sel(synthesizer=n)) for n in names],
        "median set mean": [_dollars(float(np.median(ds["mean"].sel(synthesizer=n).values))) for n in names],
    }, index=pd.Index([plots.label(n) for n in names], name="synthesizer"))


def convergence_table(results) -> pd.DataFrame:
    """Every reported fit of both parts over all replicates: converged count, divergences, R-hat, ESS."""
    rows, index = [], []
    for part, ds, names in (("1 (beta)", results.part1, PART1_NAMES),
                            ("2 (NB)", results.part2, PART2_SYNTHESIZERS)):
        for n in names:
            d = ds.sel(synthesizer=n)
            rows.append([f"{int(d.converged.sum())} of {d.sizes['replicate']}", int(d.divergences.sum()),
                         f"{float(d.rhat_max.max()):.3f}", f"{float(d.ess_min.min()):.0f}"])
            index.append((part, plots.label(n)))
    return pd.DataFrame(rows, index=pd.MultiIndex.from_tuples(index, names=["part", "synthesizer"]),
                        columns=["converged", "divergences", "max R-hat", "min ESS"])


def salary_table(data) -> pd.DataFrame:
    """Salary summaries of a sample beside the published ones, in dollars."""
    return data.summary_table().map(_dollars)


def text_lists(numbers: Mapping) -> dict[str, str]:
    """The lists of the chapter's prose whose length depends on the results.

    Parameters
    ----------
    numbers : mapping
        :func:`dpsynth_book.experiments.sdr_application.verdicts.text_numbers` of the results.

    Returns
    -------
    dict
        MyST Markdown fragments, glued by the notebook under ``sdr-list-<name>`` and quoted with
        the ``{glue:md}`` role: ``cw_unmatched``, the replicates in which CW's Delta missed its band
        below LW's, each with CW's and LW's Delta and the gap (``"none"`` if it never missed).
    """
    miss = numbers["cw_match"]["unmatched_replicates"]
    return {"cw_unmatched": "; ".join(
        f"replicate {r}: {v['cw']:.2f} against {v['lw']:.2f} ({abs(100 * v['gap']):.1f}% "
        f"{'below' if v['gap'] < 0 else 'above'})" for r, v in miss.items()) or "none"}

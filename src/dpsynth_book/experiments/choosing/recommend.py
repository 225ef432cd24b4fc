"""The choosing page's decision: from the head-to-head grid, the mechanism to use per situation and eps.

:func:`recommendation_table` reads the grid (study ``choosing-grid``, :mod:`.grid`): in each
situation and at each eps it picks, among the **decision candidates** (:data:`DECISION_CANDIDATES`),
the one with the best mean of the situation's measure over the runs, among those usable in every run
(converged, at most half the records censored, not refused). Where the situation's measure is the
analyst's regression, the candidates that release the column alone and drop its covariates (PH,
OpenDP-Q: :data:`IGNORE_COVARIATES`) are not candidates: they are the "no relationship" baseline.
Each pick carries its **uncertainty**: a 95% interval of its mean over the runs, and the paired
difference from the runner-up over the runs that both were usable in; where that difference's 95%
interval holds 0 the cell is a **tie** (the pick is still the better mean, and the page says
"tie"). Censor_uw runs in the grid too and its
numbers are on the page, but it is not a decision candidate: its censoring depends on the unit of
the data (the own-data chapter's unit study), so a pick of it on these files would not carry to a
file in other units; the decision is for files the package has never seen. **Stability** is the
number of runs in which the pick was also the best of the candidates usable in that run.

The same table, written by :func:`write_decisions`, is shipped with the package as
``dpsynth/decisions.json``, which ``mechanism="auto"`` reads (:func:`dpsynth.choice.column_choice`);
a test holds the two equal. The whole-table row (:func:`whole_table_row`) comes from the whole-table
chapter's study, among the package's table default and the peers MST and AIM on the peers' own
measure; the package cannot release with a peer, so that row informs, and ``auto`` covers one column.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import xarray as xr

from dpsynth import choice

from .grid import APPLIES, CALIBRATED, MEASURES, MECHANISM_KEY, SITUATIONS
from .grid_params import CANDIDATE_NAMES, EPS_GRID

__all__ = ["EPS_GRID", "DECISION_CANDIDATES", "NEEDS_BOUNDS", "IGNORE_COVARIATES", "mean_interval", "cell_summary",
           "recommendation_table", "recommendation_grid", "recommendation_markdown", "tie_count", "decisions",
           "write_decisions", "whole_table_row", "DECISIONS_PATH"]

#: The candidates the decision picks from: those whose behaviour does not depend on the data's unit.
DECISION_CANDIDATES = ("censor_ref", "censor_ref_calibrated", "noise_aware", "ph", "opendp_quantiles")
#: Candidates that need public bounds of a numeric column (a categorical column's noise-aware model needs none).
NEEDS_BOUNDS = ("censor_ref_calibrated", "noise_aware", "ph", "opendp_quantiles")
#: Candidates that release the column alone: no candidates where the measure is the regression on the covariates.
IGNORE_COVARIATES = ("ph", "opendp_quantiles")
_KEY = MECHANISM_KEY  # registry key of each candidate (the calibrated variant: censor_ref with calibrate=)
#: Where the library's copy of the decision lives (``dpsynth/decisions.json``, read by :mod:`dpsynth.choice`).
DECISIONS_PATH = Path(choice.__file__).resolve().parent / "decisions.json"
_BY_NAME = {v: k for k, v in CANDIDATE_NAMES.items()}


def _study(grid) -> xr.Dataset:
    """The Dataset of a study's results (a Dataset, or an object holding it as ``.study``)."""
    return grid if isinstance(grid, xr.Dataset) else grid.study


def cell_summary(grid) -> pd.DataFrame:
    """Per (situation, eps, candidate): the mean measure over runs, runs usable of runs, and why a run was not.

    Columns: ``value`` (mean over every run that gave one), ``usable`` (``k``), ``runs`` (``R``), ``why``
    (the most frequent reason among unusable runs, empty when every run was usable), ``eps_published``
    (mean; the eps asked) and ``seconds`` (mean).
    """
    ds = _study(grid)
    rows = []
    R = int(ds.sizes.get("replicate", 1))
    for sit in ds["situation"].values:
        for e in ds["eps"].values:
            for cand in ds["candidate"].values:
                c = ds.sel({"situation": sit, "eps": e, "candidate": cand})
                val = np.asarray(c["value"].values, dtype=float).ravel()
                use = np.asarray(c["usable"].values, dtype=bool).ravel()
                why = [str(w) for w in np.asarray(c["why"].values, dtype=object).ravel() if str(w)]
                rows.append({"situation": str(sit), "eps": float(e), "candidate": str(cand),
                             "value": float(np.nanmean(val)) if np.isfinite(val).any() else float("nan"),
                             "usable": int(use.sum()), "runs": R,
                             "why": max(set(why), key=why.count) if why and not use.all() else "",
                             "eps_published": float(np.nanmean(np.asarray(c["eps_published"].values, dtype=float)))
                             if np.isfinite(np.asarray(c["eps_published"].values, dtype=float)).any() else float("nan"),
                             "seconds": float(np.nanmean(np.asarray(c["seconds"].values, dtype=float)))
                             if np.isfinite(np.asarray(c["seconds"].values, dtype=float)).any() else float("nan")})
    return pd.DataFrame(rows)


def mean_interval(values) -> tuple[float, float]:
    """The mean of ``values`` (finite ones) and the half-width of its 95% interval (Student's t over the runs; NaN
    with fewer than two).

    Examples
    --------
    >>> m, h = mean_interval([1.0, 2.0, 3.0])
    >>> round(m, 3), round(h, 3)
    (2.0, 2.484)
    """
    from scipy import stats

    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return float("nan"), float("nan")
    if v.size < 2:
        return float(v.mean()), float("nan")
    return float(v.mean()), float(stats.t.ppf(0.975, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size))


def _values(ds: xr.Dataset, sit: str, e: float, name: str) -> np.ndarray:
    """A candidate's measure per run (NaN where it was not usable)."""
    c = ds.sel({"situation": sit, "eps": e, "candidate": name})
    v = np.asarray(c["value"].values, dtype=float).ravel()
    return np.where(np.asarray(c["usable"].values, dtype=bool).ravel(), v, np.nan)


def _per_run_best(ds: xr.Dataset, sit: str, e: float, names: list[str]) -> list[str | None]:
    """The best usable decision candidate of each run (None when none was usable in that run)."""
    out = []
    c = ds.sel({"situation": sit, "eps": e, "candidate": names})
    val = np.asarray(c["value"].transpose(..., "candidate").values, dtype=float).reshape(-1, len(names))
    use = np.asarray(c["usable"].transpose(..., "candidate").values, dtype=bool).reshape(-1, len(names))
    for v, u in zip(val, use, strict=True):
        v = np.where(u & np.isfinite(v), v, np.inf)
        out.append(names[int(np.argmin(v))] if np.isfinite(v).any() else None)
    return out


def recommendation_table(grid) -> pd.DataFrame:
    """The decision: one row per (situation, eps) of the grid.

    Columns: ``mechanism`` (registry key, or None when no decision candidate was usable in every run),
    ``candidate`` (the grid's key, e.g. ``censor_ref_calibrated``), ``name``, ``value`` (its mean measure),
    ``measure``, ``stability`` (``"k of R runs"``: the runs in which it was also the best), ``runner_up``
    and its ``runner_value``, ``needs_bounds``, ``calibrate`` and ``reason`` (in words, for ``auto``).
    """
    ds = _study(grid)
    summ = cell_summary(ds)
    R = int(ds.sizes.get("replicate", 1))
    rows = []
    for sit in [str(s) for s in ds["situation"].values]:
        kind = SITUATIONS[sit].kind
        coef = SITUATIONS[sit].measure == "coef"
        keys = [k for k in DECISION_CANDIDATES if k in APPLIES[kind] and CANDIDATE_NAMES[k] in ds["candidate"].values
                and not (coef and k in IGNORE_COVARIATES)]
        names = [CANDIDATE_NAMES[k] for k in keys]
        for e in [float(x) for x in ds["eps"].values]:
            s = summ[(summ["situation"] == sit) & (summ["eps"] == e) & summ["candidate"].isin(names)]
            ok = s[(s["usable"] == s["runs"]) & np.isfinite(s["value"])].sort_values("value")
            measure = MEASURES[SITUATIONS[sit].measure]
            if ok.empty:
                whys = "; ".join(f"{r.candidate}: {r.why or 'no value'}" for r in s.itertuples())
                rows.append({"situation": sit, "eps": e, "mechanism": None, "candidate": None, "name": "none usable",
                             "value": float("nan"), "half_width": float("nan"), "measure": measure, "stability": "",
                             "runner_up": "", "runner_value": float("nan"), "tie": False,
                             "needs_bounds": False, "calibrate": False,
                             "reason": f"no candidate was usable in every run ({whys})"})
                continue
            best = ok.iloc[0]
            key = _BY_NAME[best["candidate"]]
            wins = sum(1 for w in _per_run_best(ds, sit, e, names) if w == best["candidate"])
            runner = ok.iloc[1] if len(ok) > 1 else None
            needs = key in NEEDS_BOUNDS and kind != "categorical"
            _, half = mean_interval(_values(ds, sit, e, best["candidate"]))
            tie = False
            if runner is not None:  # paired over the runs: does the difference's 95% interval hold 0?
                d_mean, d_half = mean_interval(_values(ds, sit, e, runner["candidate"])
                                               - _values(ds, sit, e, best["candidate"]))
                tie = not (np.isfinite(d_half) and d_mean - d_half > 0)
            vs = (f", against {runner['candidate']}'s {runner['value']:.3g}" + (" (a tie: the difference's 95% "
                  "interval over the runs holds 0)" if tie else "") if runner is not None else
                  ", the only candidate usable in every run")
            rows.append({"situation": sit, "eps": e, "mechanism": _KEY.get(key, key), "candidate": key,
                         "name": best["candidate"], "value": float(best["value"]), "half_width": half,
                         "measure": measure, "stability": f"{wins} of {R} runs", "tie": bool(tie),
                         "runner_up": runner["candidate"] if runner is not None else "",
                         "runner_value": float(runner["value"]) if runner is not None else float("nan"),
                         "needs_bounds": bool(needs), "calibrate": key in CALIBRATED,
                         "reason": f"best {measure} on {SITUATIONS[sit].title}: {best['value']:.3g}{vs}; best in "
                                   f"{wins} of {R} runs"})
    return pd.DataFrame(rows)


#: The whole-table study's method labels as the decision names them.
_WHOLE_TABLE_NAMES = {"Ours (auto)": "TableSynthesizer (default)", "auto": "TableSynthesizer (default)"}


def whole_table_row(whole_table) -> pd.DataFrame:
    """The whole-table situation from the whole-table chapter's study: per eps, the method with the smallest pMSE
    ratio (main effects, the peers' own measure; mean over its tables and runs), with the stability over runs."""
    ds = _study(whole_table)
    rows = []
    for e in [float(x) for x in ds["eps"].values]:
        v = ds["pmse_ratio"].sel({"eps": e})
        mean = v.mean([d for d in v.dims if d != "method"]).to_series()
        if not np.isfinite(mean).any():
            continue
        best = str(mean.idxmin())
        per_run = v.mean("table").transpose("replicate", "method") if "replicate" in v.dims else v.mean("table")
        arr = np.asarray(per_run.values, dtype=float).reshape(-1, v.sizes["method"])
        methods = [str(m) for m in v["method"].values]
        wins = sum(1 for r in arr if np.isfinite(r).any() and methods[int(np.nanargmin(r))] == best)
        order = mean.sort_values()
        runner = str(order.index[1]) if len(order) > 1 and np.isfinite(order.iloc[1]) else None
        col = {m: i for i, m in enumerate(methods)}
        _, half = mean_interval(arr[:, col[best]])
        tie = False
        if runner is not None:
            d_mean, d_half = mean_interval(arr[:, col[runner]] - arr[:, col[best]])
            tie = not (np.isfinite(d_half) and d_mean - d_half > 0)
        rows.append({"situation": "whole table", "eps": e, "mechanism": None, "candidate": None,
                     "name": _WHOLE_TABLE_NAMES.get(best, best), "value": float(mean[best]), "half_width": half,
                     "measure": "pMSE ratio (main effects)", "tie": bool(tie),
                     "runner_up": _WHOLE_TABLE_NAMES.get(runner, runner) if runner else "",
                     "runner_value": float(mean[runner]) if runner else float("nan"),
                     "stability": f"{wins} of {arr.shape[0]} runs", "needs_bounds": False, "calibrate": False,
                     "reason": "from the whole-table chapter"})
    return pd.DataFrame(rows)


def recommendation_grid(table: pd.DataFrame) -> pd.DataFrame:
    """Table 8.1: one row per eps, one column per situation, each cell ``"name (value ± half-width; k of R)"``, with
    ``"tie with <runner-up>"`` where the paired difference's 95% interval holds 0, or ``"none usable"``."""
    out = {}
    for sit in dict.fromkeys(table["situation"]):
        col = {}
        for r in table[table["situation"] == sit].itertuples():
            if r.name == "none usable":
                col[r.eps] = "none usable"
                continue
            pm = f" ± {r.half_width:.2g}" if np.isfinite(getattr(r, "half_width", np.nan)) else ""
            tie = f"; tie with {r.runner_up}" if getattr(r, "tie", False) and r.runner_up else ""
            col[r.eps] = f"{r.name} ({r.value:.3g}{pm}; best in {r.stability.replace(' runs', '')}{tie})"
        out[sit] = col
    grid = pd.DataFrame(out)
    grid.index = grid.index.rename("ε")
    return grid.sort_index()


def tie_count(table: pd.DataFrame) -> tuple[int, int]:
    """How many picked cells of the decision are ties, and how many cells were picked."""
    picked = table[table["name"] != "none usable"]
    return int(picked["tie"].fillna(False).astype(bool).sum()), len(picked)


def recommendation_markdown(table: pd.DataFrame) -> str:
    """The measures behind Table 8.1 and the cells no candidate could fill, as a Markdown list."""
    lines = []
    for sit in dict.fromkeys(table["situation"]):
        t = table[table["situation"] == sit]
        lines.append(f"* **{sit}**: {t['measure'].iloc[0]} on "
                     f"{SITUATIONS[sit].title if sit in SITUATIONS else 'the whole-table chapter tables'}.")
        for r in t[t["name"] == "none usable"].itertuples():
            lines.append(f"  At ε = {r.eps:g} {r.reason}.")
    return "\n".join(lines)


def decisions(table: pd.DataFrame) -> dict:
    """The decision as ``decisions.json`` holds it: ``{"eps_grid", "table": {situation: {eps: cell}}}`` for the
    single-column situations (what :func:`dpsynth.choice.column_choice` reads)."""
    out: dict = {"note": "Written by write_decisions of the book's chapter 'Choosing a mechanism' from the shipped "
                         "head-to-head grid (results/choosing-grid.nc); the book's Table 'What to use'.",
                 "eps_grid": sorted(float(e) for e in table["eps"].unique()), "table": {}}
    for r in table[table["situation"].isin(list(SITUATIONS))].itertuples():
        out["table"].setdefault(r.situation, {})[repr(float(r.eps))] = {
            "mechanism": _str_or_none(r.mechanism), "candidate": _str_or_none(r.candidate), "name": r.name,
            "needs_bounds": bool(r.needs_bounds),
            "calibrate": bool(r.calibrate), "reason": r.reason, "stability": r.stability, "tie": bool(r.tie)}
    return out


def _str_or_none(v) -> str | None:
    return v if isinstance(v, str) else None


def write_decisions(grid, path: str | Path = DECISIONS_PATH) -> Path:
    """Write :func:`decisions` of the grid to ``path`` (by default the package's ``decisions.json``)."""
    path = Path(path)
    path.write_text(json.dumps(decisions(recommendation_table(grid)), indent=1, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    return path

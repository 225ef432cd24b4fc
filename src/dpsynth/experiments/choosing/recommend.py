"""The choosing page's recommendation: for each situation and epsilon, the mechanism to use and what it costs.

:func:`recommendation_table` reads the shipped paper-scale results of every chapter (a study per
situation, :data:`SITUATIONS`) and, at each epsilon of :data:`EPS_GRID` (one record removed), picks
among the strictly DP mechanisms that study ran at that epsilon the one with the best utility for
the situation: the smallest regression error where the situation needs the relation with the
covariates, else the smallest marginal distance. A cell says so when no study ran that epsilon or
situation. Every figure is a median over the study's replicates; the cells change when the shipped
results change (the tests edit one and see its cell move).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr

from ... import registry

__all__ = ["EPS_GRID", "SITUATIONS", "Situation", "TABLE_METHODS", "candidates", "recommendation_table",
           "recommendation_markdown", "recommendation_grid", "SHORT_LABELS", "RECOMMENDATION_STUDIES"]

#: The epsilons of the recommendation, one record removed.
EPS_GRID: tuple[float, ...] = (0.5, 1.0, 2.0, 3.0, 5.0, 10.0)


def _med(v) -> float:
    a = np.asarray(v, dtype=float).ravel()
    a = a[np.isfinite(a)]
    return float(np.median(a)) if a.size else float("nan")


def _fit_rows(ds: xr.Dataset, study: str, *, regression: bool) -> list[dict]:
    """Candidates of a study stored over ``fit`` (synthesizer, eps): strict-DP fits at a target eps."""
    rows = []
    syn, eps = ds["synthesizer"].values, ds["eps"].values
    data = [i for i in range(ds.sizes["fit"]) if str(syn[i]) == "Data"]
    for i in range(ds.sizes["fit"]):
        name, e = str(syn[i]), float(eps[i])
        if not np.isfinite(e) or registry.guarantee(name) != "DP":
            continue
        f = ds.isel(fit=i)
        row = {"study": study, "mechanism": name, "eps": e, "marginal": _med(f["max_ecdf"]),
               "regression": float("nan"), "converged": float(np.mean(np.asarray(f["converged"].values, bool)))
               if "converged" in f else float("nan")}
        if regression and "coef" in ds and data:
            ref = ds["coef"].isel(fit=data[0])
            rms = np.sqrt(((f["coef"] - ref) ** 2).mean("term"))
            row["regression"] = _med(rms)
        rows.append(row)
    return rows


def _variant_rows(ds: xr.Dataset, study: str) -> list[dict]:
    """Candidates of a study stored over ``(eps, variant)``: the variants that are registry names (their defaults)."""
    rows = []
    for v in ds["variant"].values:
        name = str(v)
        try:
            if registry.guarantee(name) != "DP":
                continue
        except KeyError:  # a named variant of a mechanism ("Censor_ref, alpha = 1"), not its default
            continue
        for e in ds["eps"].values:
            f = ds.sel(variant=v, eps=e)
            rows.append({"study": study, "mechanism": name, "eps": float(e), "marginal": _med(f["max_ecdf"]),
                         "regression": float("nan"),
                         "converged": float(np.mean(np.asarray(f["converged"].values, bool)))})
    return rows


def _file_rows(ds: xr.Dataset, study: str, file: str, marginal: str) -> list[dict]:
    """Candidates of the own-data chapter's real files (a newcomer's defaults: one mechanism per file)."""
    if file not in [str(f) for f in ds["file"].values]:
        return []
    mech = str(ds.attrs.get("mechanism", "Censor_ref"))
    try:
        name = registry.spec(mech).name
    except KeyError:
        return []
    rows = []
    for e in ds["eps"].values:
        f = ds.sel(file=file, eps=e)
        rows.append({"study": study, "mechanism": name, "eps": float(e), "marginal": _med(f[marginal]),
                     "regression": _med(f["coef_rms_diff"]),
                     "converged": float(np.mean(np.asarray(f["converged"].values, bool)))})
    return rows


#: The whole-table study's methods: guarantee and what a release loses, for those outside the registry.
TABLE_METHODS = {
    "Chain rule (ours)": ("DP", "the relations its conditionals do not model (a column is modelled on the covariates "
                                "and the columns before it); ε adds the DP references' share"),
    "Independent": ("DP", "every relation between the confidential columns"),
    "MST": ("(ε, δ)-DP", "the numeric columns' shape within their public bins, relations beyond its selected "
                         "marginals, and the public covariates (synthesized too)"),
    "AIM": ("(ε, δ)-DP", "the numeric columns' shape within their public bins, and the public covariates "
                         "(synthesized too)"),
}


def _table_rows(ds: xr.Dataset, study: str) -> list[dict]:
    """Candidates of the whole-table study: every method at every eps, pooled over its tables."""
    rows = []
    for m in ds["method"].values:
        if str(m) not in TABLE_METHODS:
            continue
        for e in ds["eps"].values:
            f = ds.sel({"method": m, "eps": e})
            rows.append({"study": study, "mechanism": str(m), "eps": float(e), "marginal": _med(f["marginal"]),
                         "regression": _med(f["coef_rmse"]),
                         "converged": float(np.mean(np.asarray(f["converged"].values, bool)))})
    return rows


def _rows(name: str, ds: xr.Dataset, *, regression: bool) -> list[dict]:
    if "variant" in ds.dims:
        return _variant_rows(ds, name)
    return _fit_rows(ds, name, regression=regression)


@dataclass(frozen=True)
class Situation:
    """One row group of the recommendation: what the agency releases, and where the book measured it.

    Attributes
    ----------
    label : str
        The situation in words.
    studies : tuple of str
        Shipped studies (``results/<name>.nc``) that measured it, in order of preference.
    choose_by : {"marginal", "regression"}
        The utility the recommendation minimises.
    rows : callable
        ``rows(study_name, dataset) -> list of dict`` (keys ``study``, ``mechanism``, ``eps``,
        ``marginal``, ``regression``, ``converged``): the strictly DP candidates of that study.
    describe : dict
        Study name -> the study in words, for the table's "measured on" column.
    """

    label: str
    studies: tuple[str, ...]
    choose_by: str
    rows: Callable[[str, xr.Dataset], list]
    describe: Mapping[str, str]


_BETA = "Beta(0.5, 3), n = 2,000 (censoring chapter)"
SITUATIONS: tuple[Situation, ...] = (
    Situation("one bounded variable, marginal only", ("censoring-reference", "censoring"), "marginal",
              lambda name, ds: _rows(name, ds, regression=False),
              {"censoring": _BETA, "censoring-reference": _BETA + ", Censor_ref study"}),
    Situation("one variable, regression on public covariates", ("own_data",), "regression",
              lambda name, ds: _rows(name, ds, regression=True),
              {"own_data": "CPS 1988 wages, n = 28,155 (own data chapter)"}),
    Situation("a count, regression on public covariates", ("own_data-files",), "regression",
              lambda name, ds: _file_rows(ds, name, "nmes1988", "max_ecdf"),
              {"own_data-files": "NMES 1988 physician visits, n = 4,406, default settings (own data chapter)"}),
    Situation("a categorical variable, regression on public covariates", ("own_data-files",), "regression",
              lambda name, ds: _file_rows(ds, name, "fishing", "tvd"),
              {"own_data-files": "Fishing mode, n = 1,182, default settings (own data chapter); marginal: "
                                 "total variation distance"}),
    Situation("a whole table (several confidential columns)", ("whole_table",), "regression",
              lambda name, ds: _table_rows(ds, name),
              {"whole_table": "AER HousePrices and an NMES 1988 subsample, three confidential columns each "
                              "(whole-table chapter); regression: coefficient RMSE"}),
)
#: Every study the recommendation reads.
RECOMMENDATION_STUDIES: tuple[str, ...] = tuple(dict.fromkeys(s for sit in SITUATIONS for s in sit.studies))


def _display(name: str) -> str:
    return name if name in TABLE_METHODS else registry.spec(name).name


def _describe(name: str) -> tuple[str, str]:
    """(guarantee, what a release loses) of a mechanism or a whole-table method."""
    if name in TABLE_METHODS:
        return TABLE_METHODS[name]
    spec = registry.spec(name)
    return spec.guarantee, spec.loses


def candidates(studies: Mapping[str, xr.Dataset], situation: Situation) -> pd.DataFrame:
    """The strictly DP candidates of a situation in the studies present (one row per mechanism and eps)."""
    rows = [r for name in situation.studies if name in studies for r in situation.rows(name, studies[name])]
    cols = ["study", "mechanism", "eps", "marginal", "regression", "converged"]
    return pd.DataFrame(rows, columns=cols)


def recommendation_table(studies: Mapping[str, xr.Dataset], eps_grid=EPS_GRID,
                         situations: tuple[Situation, ...] = SITUATIONS) -> pd.DataFrame:
    """For each situation and epsilon: the strictly DP mechanism to use, and its measured utility cost.

    Returns
    -------
    pandas.DataFrame
        Index ``(situation, ε)``; columns ``mechanism`` (display name, or "—"), ``guarantee``,
        ``marginal`` (median max-ECDF distance), ``regression`` (median RMS difference of the
        regression coefficients from the confidential data's, where measured), ``it loses`` (the
        mechanism's own statement of what a release loses, from its spec), ``runner-up``
        (the next best, with its figure), ``measured on`` (the study), and ``why`` (why no
        mechanism is named, where none is).
    """
    out = []
    for sit in situations:
        cand = candidates(studies, sit)
        for e in eps_grid:
            at = cand[np.isclose(cand["eps"].astype(float), e)] if len(cand) else cand
            row = {"situation": sit.label, "ε": float(e), "mechanism": "—", "guarantee": "", "marginal": np.nan,
                   "regression": np.nan, "it loses": "", "runner-up": "",
                   "measured on": "; ".join(dict.fromkeys(sit.describe[n] for n in sit.studies if n in studies)),
                   "why": ""}
            if not any(n in studies for n in sit.studies):
                row["why"] = "no shipped study measures this situation"
            elif at.empty:
                ran = sorted({float(v) for v in cand["eps"]}) if len(cand) else []
                row["why"] = ("the study ran ε = " + ", ".join(f"{v:g}" for v in ran) + " only") if ran else \
                    "no strictly DP mechanism in the study"
            else:
                key = sit.choose_by if at[sit.choose_by].notna().any() else "marginal"
                at = at.sort_values(key, kind="stable")
                best = at.iloc[0]
                guarantee, loses = _describe(best["mechanism"])
                row.update({"mechanism": _display(best["mechanism"]), "guarantee": guarantee,
                            "marginal": best["marginal"], "regression": best["regression"], "it loses": loses,
                            "measured on": sit.describe[best["study"]]})
                others = at[at["mechanism"] != best["mechanism"]]
                if len(others):
                    nxt = others.iloc[0]
                    row["runner-up"] = f"{_display(nxt['mechanism'])} ({nxt[key]:.3f})"
            out.append(row)
    return pd.DataFrame(out).set_index(["situation", "ε"])


def recommendation_markdown(table: pd.DataFrame) -> str:
    """One sentence per situation on :func:`recommendation_table`, every name and number read from it.

    For each situation: the mechanisms recommended across the epsilons its study ran, with their
    utility at the smallest and the largest of them, and what the recommended mechanism loses.
    """
    out = []
    for sit, rows in table.groupby(level="situation", sort=False):
        have = rows[rows["mechanism"] != "—"]
        if have.empty:
            out.append(f"*{sit}*: {rows['why'].iloc[0]}.")
            continue
        eps = [float(e) for e in have.index.get_level_values("ε")]
        names = list(dict.fromkeys(have["mechanism"]))
        lo, hi = have.iloc[0], have.iloc[-1]
        use = "regression" if np.isfinite(float(lo["regression"])) else "marginal"
        what = "regression coefficients' RMS error" if use == "regression" else "max-ECDF distance"
        who = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
        span = (f"ε = {eps[0]:g}" if len(eps) == 1 else f"ε = {eps[0]:g} to {eps[-1]:g}")
        sent = (f"*{sit}* ({span}, one record removed): {who} ({have['guarantee'].iloc[0]}); its {what} is "
                f"{float(lo[use]):.3g} at ε = {eps[0]:g}" + (f" and {float(hi[use]):.3g} at ε = {eps[-1]:g}"
                                                              if len(eps) > 1 else "")
                + f". At ε = {eps[0]:g}, {lo['mechanism']} loses {lo['it loses']}.")
        out.append(sent)
    return "\n".join(f"* {s}" for s in out)


#: Short column labels of :func:`recommendation_grid`, in the order of :data:`SITUATIONS`.
SHORT_LABELS = ("bounded marginal", "regression", "count", "category", "whole table")


def recommendation_grid(table: pd.DataFrame) -> pd.DataFrame:
    """:func:`recommendation_table` as a grid that fits the page: a row per ε, a column per situation.

    Each cell is the recommended mechanism with its deciding figure (the regression's RMS error where
    measured, else the marginal distance) to two significant digits, or "—" where no study ran that ε.
    Columns carry :data:`SHORT_LABELS` for the situations of :data:`SITUATIONS`.
    """
    def cell(r) -> str:
        if r["mechanism"] == "—":
            return "—"
        v = r["regression"] if np.isfinite(float(r["regression"])) else r["marginal"]
        return f"{r['mechanism']} {float(v):.2g}"

    g = table.apply(cell, axis=1).unstack("situation")
    order = list(dict.fromkeys(table.index.get_level_values("situation")))
    short = {s.label: lab for s, lab in zip(SITUATIONS, SHORT_LABELS)}
    g = g[order].rename(columns=lambda c: short.get(c, c))
    g.index = [f"{float(e):g}" for e in g.index]
    g.index.name = "ε"
    g.columns.name = None
    return g

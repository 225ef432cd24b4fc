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

__all__ = ["EPS_GRID", "SITUATIONS", "Situation", "candidates", "recommendation_table", "RECOMMENDATION_STUDIES"]

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
)
#: Every study the recommendation reads.
RECOMMENDATION_STUDIES: tuple[str, ...] = tuple(dict.fromkeys(s for sit in SITUATIONS for s in sit.studies))


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
                spec = registry.spec(best["mechanism"])
                row.update({"mechanism": spec.name, "guarantee": "DP", "marginal": best["marginal"],
                            "regression": best["regression"], "it loses": spec.loses,
                            "measured on": sit.describe[best["study"]]})
                others = at[at["mechanism"] != best["mechanism"]]
                if len(others):
                    nxt = others.iloc[0]
                    row["runner-up"] = f"{registry.spec(nxt['mechanism']).name} ({nxt[key]:.3f})"
            out.append(row)
    return pd.DataFrame(out).set_index(["situation", "ε"])

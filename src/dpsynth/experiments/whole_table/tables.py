"""Tables of the "Releasing a whole table" chapter: ``f(results) -> pandas.DataFrame``.

Every function takes the chapter's results (:class:`~dpsynth.experiments.whole_table.WholeTableResults`)
or the study's Dataset itself (over ``replicate, table, eps, method``,
:func:`dpsynth.experiments.whole_table.replicate.replicate`).
Utilities are means over the runs; each run is one synthetic table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from .replicate import TABLES

__all__ = ["COLUMNS", "study_of", "mean_frame", "comparison_table", "privacy_table", "tables_table", "peer_bins_table",
           "verdict_means_table"]

#: Displayed utility columns: variable -> header.
COLUMNS = {
    "marginal_numeric": "marg. num.",
    "marginal_categorical": "marg. cat.",
    "pairwise": "pairs |Δ|",
    "contingency": "pairs TVD",
    "coef_rmse": "coef. RMSE",
    "coef_overlap": "CI overlap",
    "pmse_ratio": "pMSE ratio",
    "seconds": "time (s)",
}


def study_of(results) -> xr.Dataset:
    """The study Dataset of ``results`` (or ``results`` itself when it is one)."""
    return results if isinstance(results, xr.Dataset) else results.study


def mean_frame(results) -> pd.DataFrame:
    """Means over the runs, one row per (table, eps, method), with ``runs`` and ``converged_runs``."""
    ds = study_of(results)
    keep = [v for v in ds.data_vars if {"table", "eps", "method"} <= set(ds[v].dims)]
    num = ds[keep].drop_vars("converged")
    out = num.mean("replicate").to_dataframe()
    out["runs"] = int(ds.sizes["replicate"])
    out["converged_runs"] = ds["converged"].sum("replicate").to_series()
    return out.reset_index()


def comparison_table(results, table: str) -> pd.DataFrame:
    """The methods side by side on one table: one row per (eps, method), the utilities as columns.

    A method with a run whose convergence check failed is marked with ``*`` after its name (its
    runs are kept in the means).
    """
    f = mean_frame(results)
    f = f[f["table"] == table]
    if f.empty:
        raise KeyError(f"table {table!r} is not in the results; they have {sorted(set(mean_frame(results).table))}.")
    names = [m if c == r else f"{m} *" for m, c, r in zip(f["method"], f["converged_runs"], f["runs"], strict=True)]
    out = f.assign(method=names).set_index(["eps", "method"])[list(COLUMNS)].rename(columns=COLUMNS)
    out.index = out.index.set_names(["ε", "method"])
    return out


def privacy_table(results) -> pd.DataFrame:
    """Per table, eps and method: the statement's epsilons and delta, and the convergence record.

    Columns: ``ε removed`` (one record removed; ours: the total of its parts including their DP references; the
    peers: what they spent, for one record added or removed), ``ε replaced`` (one record replaced; ours only),
    ``δ``, ``converged runs`` (``k / R``; "no MCMC" for the peers), ``max R-hat`` and
    ``divergences`` (summed over the conditionals, mean over runs).
    """
    f = mean_frame(results)
    peers = f["rhat_max"].isna()
    conv = [("no MCMC" if p else f"{int(c)} / {int(r)}")
            for p, c, r in zip(peers, f["converged_runs"], f["runs"], strict=True)]
    out = pd.DataFrame({
        "table": f["table"], "ε": f["eps"], "method": f["method"],
        "ε removed": f["eps_remove"], "ε replaced": f["eps_replace"], "δ": f["delta"],
        "converged runs": conv, "max R-hat": f["rhat_max"], "divergences": f["divergences"],
    })
    return out.set_index(["table", "ε", "method"])


def tables_table(results) -> pd.DataFrame:
    """The real tables: rows, confidential columns (in the chain's order), public covariates, regression."""
    ds = study_of(results)
    rows = []
    for name in ds["table"].values:
        spec = TABLES[str(name)]
        n = int(np.asarray(ds["n"].sel(table=name)).ravel()[0])
        rows.append({"table": str(name), "title": spec.title, "rows": n,
                     "confidential (order)": ", ".join(f"{c} ({spec.kinds[c]})" for c in spec.targets),
                     "public": ", ".join(f"{c} ({spec.kinds[c]})" for c in spec.covariates),
                     "regression": f"{spec.outcome} ~ {' + '.join(spec.predictors)}"})
    return pd.DataFrame(rows).set_index("table")


def peer_bins_table(results) -> pd.DataFrame:
    """The peers' public bounds and bins of every numeric column of the study's tables (no data read)."""
    ds = study_of(results)
    rows = []
    for name in ds["table"].values:
        spec = TABLES[str(name)]
        for c, (lo, hi, bins) in spec.peer_bounds.items():
            rows.append({"table": str(name), "column": c, "kind": spec.kinds[c], "lower": lo, "upper": hi,
                         "bins": bins, "bin width": (hi - lo) / bins})
    return pd.DataFrame(rows).set_index(["table", "column"])


def verdict_means_table(verdicts) -> pd.DataFrame:
    """The counts and means the comparison verdicts quote, one row per verdict that compares two means.

    Parameters
    ----------
    verdicts : list of dpsynth.verdicts.Verdict
        :func:`dpsynth.experiments.whole_table.verdicts` of the results.

    Returns
    -------
    pandas.DataFrame
        Indexed by the verdict's claim: the (table, ε) cells compared, the cells the verdict's
        winner takes, and the mean over the cells of the chain rule's value and of the other
        side's (Independent, or the better of MST and AIM).
    """
    rows = {}
    for v in verdicts:
        n = v.numbers or {}
        if "ours_mean" in n and "other_mean" in n:
            rows[v.claim] = {"cells": int(n["cells"]), "wins": int(n["wins"]), "chain rule, mean": n["ours_mean"],
                             "other, mean": n["other_mean"]}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("verdict")

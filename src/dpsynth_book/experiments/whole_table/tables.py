"""Tables of the "Releasing a whole table" chapter: ``f(results) -> pandas.DataFrame``.

Every function takes the chapter's results (:class:`~dpsynth_book.experiments.whole_table.WholeTableResults`)
or the study's Dataset itself (over ``replicate, table, eps, method``,
:func:`dpsynth_book.experiments.whole_table.replicate.replicate`).
Utilities are means over the runs; each run is one synthetic table (and, for ours' intervals, ``m``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from dpsynth.choice import table_column_choice

from .params import METHOD_NAMES
from .replicate import TABLES

__all__ = ["COLUMNS", "OURS", "CHAIN", "PEERS", "study_of", "mean_frame", "comparison_table", "privacy_table",
           "tables_table", "targets_table", "TARGETS"]

OURS = METHOD_NAMES["auto"]
CHAIN = METHOD_NAMES["censor_chain"]
#: The peers' display names.
PEERS = (METHOD_NAMES["mst"], METHOD_NAMES["aim"])

#: Displayed utility columns: variable -> header.
COLUMNS = {
    "marginal_numeric": "marg. num.",
    "marginal_categorical": "marg. cat.",
    "pairwise": "pairs |Δ|",
    "coef_rmse": "coef. RMSE",
    "pmse_ratio": "pMSE ratio",
    "pmse_int_ratio": "pMSE ratio, inter.",
    "coverage": "CI coverage",
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


def comparison_table(results, table: str, eps=None) -> pd.DataFrame:
    """The methods side by side on one table: one row per (eps, method), the utilities as columns.

    ``eps``: the epsilons shown (default all). A method with a run whose convergence check failed is
    marked with ``*`` after its name (its runs are kept in the means).
    """
    f = mean_frame(results)
    f = f[f["table"] == table]
    if f.empty:
        raise KeyError(f"table {table!r} is not in the results; they have {sorted(set(mean_frame(results).table))}.")
    if eps is not None:
        f = f[f["eps"].isin([float(e) for e in eps])]
    names = [m if c == r else f"{m} *" for m, c, r in zip(f["method"], f["converged_runs"], f["runs"], strict=True)]
    out = f.assign(method=names).set_index(["eps", "method"])[list(COLUMNS)].rename(columns=COLUMNS)
    out.index = out.index.set_names(["ε", "method"])
    return out


def privacy_table(results) -> pd.DataFrame:
    """Per table, eps and method: what is published, and the convergence record.

    Columns: ``ε published (one record removed)`` ( ours: the total of its parts and the released size;
    the peers: what they spent, for one record added or removed), ``δ``, ``ε of m tables`` (ours: the
    total of the ``m`` tables combined for intervals, the same), ``converged runs`` (``k / R``; "no
    MCMC" for the peers) and ``max R-hat`` (over the conditionals, mean over runs).
    """
    f = mean_frame(results)
    peers = f["method"].isin(PEERS)
    conv = [("no MCMC" if p else f"{int(c)} / {int(r)}")
            for p, c, r in zip(peers, f["converged_runs"], f["runs"], strict=True)]
    out = pd.DataFrame({
        "table": f["table"], "ε": f["eps"], "method": f["method"], "ε published (one record removed)": f["eps_total"],
        "δ": f["delta"],
        "ε of m tables": f["eps_implicates"], "converged runs": conv, "max R-hat": f["rhat_max"],
    })
    return out.set_index(["table", "ε", "method"])


def tables_table(results) -> pd.DataFrame:
    """The real tables: rows, columns in the chain's order with their kinds, public bounds and what ``auto``
    chooses for each (from public facts only), and the analyst's regression."""
    ds = study_of(results)
    rows = []
    for name in ds["table"].values:
        spec = TABLES[str(name)]
        n = int(np.asarray(ds["n"].sel(table=name)).ravel()[0])
        cols = []
        for c in spec.columns:
            b = spec.public_bounds.get(c)
            mech = table_column_choice(spec.kinds[c], b).mechanism
            cal = " + calibration" if mech == "censor_ref" and b is not None else ""
            bounds = f", {b[0]:g} to {b[1]:g}" if b is not None else ""
            cols.append(f"{c} ({spec.kinds[c]}{bounds}: {mech.replace('_', '-')}{cal})")
        rows.append({"table": str(name), "title": spec.title, "rows": n, "columns (order; public bounds: auto's "
                     "choice)": "; ".join(cols), "regression": f"{spec.outcome} ~ {' + '.join(spec.predictors)}"})
    return pd.DataFrame(rows).set_index("table")


#: The chapter's targets: key -> (variable, measure, criterion text, factor on the better peer, epsilons).
TARGETS = {
    "pmse_mid": ("pmse_ratio", "pMSE ratio (main effects)", "≤ the better peer's", 1.0, (3.0, 5.0)),
    "pmse_low": ("pmse_ratio", "pMSE ratio (main effects)", "≤ 1.5 × the better peer's", 1.5, (1.0,)),
    "marginal_numeric": ("marginal_numeric", "numeric marginals (max ECDF)", "≤ the better peer's", 1.0,
                         (1.0, 3.0, 5.0)),
    "marginal_categorical": ("marginal_categorical", "categorical marginals (TVD)", "≤ 2 × the better peer's", 2.0,
                             (1.0, 3.0, 5.0)),
    "coef_rmse": ("coef_rmse", "regression, coefficient RMSE", "< the better peer's", 1.0, (1.0, 3.0, 5.0)),
    "pmse_int": ("pmse_int_ratio", "pMSE ratio (interactions)", "< the better peer's", 1.0, (1.0, 3.0, 5.0)),
    "seconds": ("seconds", "fit and one table (s)", "≤ the slower peer's", 1.0, (1.0, 3.0, 5.0)),
}


def targets_table(results) -> pd.DataFrame:
    """Each of the chapter's targets against the peers: per target and table, the cells (eps) it is judged on,
    ours' mean over them, the peers' (the better, or for time the slower), the ratio and the cells met.

    Coverage (``≥ 0.9`` of the coefficients' intervals covering the confidential estimate) is judged on ours
    alone (``peer``: the better peer's, its one table used as if real). A target whose epsilons are not in the
    results is left out.
    """
    f = mean_frame(results)
    rows = []
    for var, what, crit, factor, epss in TARGETS.values():
        for table in f["table"].unique():
            g = f[(f["table"] == table) & f["eps"].isin(epss)]
            if g.empty or OURS not in set(g["method"]) or not set(PEERS) <= set(g["method"]):
                continue
            piv = g.pivot_table(index="eps", columns="method", values=var, dropna=False)
            ours = piv[OURS]
            peer = piv[list(PEERS)].max(axis=1) if var == "seconds" else piv[list(PEERS)].min(axis=1)
            strict = crit.startswith("<")
            met = (ours < factor * peer) if strict else (ours <= factor * peer)
            rows.append({"target": what, "criterion": crit, "table": table,
                         "ε": ", ".join(f"{e:g}" for e in piv.index), "ours": float(ours.mean()),
                         "peer": float(peer.mean()), "ours / peer": float(ours.mean() / peer.mean()),
                         "cells met": f"{int(met.sum())} of {len(met)}"})
    sel = f[f["eps"].isin((1.0, 3.0, 5.0))]
    for table, g in sel[sel["method"] == OURS].groupby("table", sort=False):
        met = g["coverage"] >= 0.9
        peers = sel[(sel["table"] == table) & sel["method"].isin(PEERS)].groupby("method")["coverage"].mean()
        rows.append({"target": "95% intervals cover the confidential estimate (peers: one table as if real)",
                     "criterion": "≥ 0.9", "table": table, "ε": ", ".join(f"{e:g}" for e in g["eps"]),
                     "ours": float(g["coverage"].mean()), "peer": float(peers.max()) if len(peers) else np.nan,
                     "ours / peer": np.nan, "cells met": f"{int(met.sum())} of {len(met)}"})
    return pd.DataFrame(rows).set_index(["target", "table"])

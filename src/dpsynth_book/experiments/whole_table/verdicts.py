"""Verdicts of the "Releasing a whole table" chapter, and the numbers its prose quotes.

:func:`verdicts` checks the chapter's targets on the means over runs (:func:`.tables.targets_table`,
:func:`.tables.mean_frame`); :func:`text_numbers` returns the numbers of its computed paragraphs,
which the notebook glues (:func:`dpsynth_book.book.glue_numbers`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...verdicts import Verdict
from .params import METHOD_NAMES
from .tables import CHAIN, OURS, PEERS, TARGETS, mean_frame, study_of, targets_table

__all__ = ["OURS", "CHAIN", "PEERS", "cell_values", "coverage_misses", "pmse_misses", "text_numbers", "verdicts"]


def cell_values(results, var: str) -> pd.DataFrame:
    """Means over runs of ``var``: one row per (table, eps), one column per method."""
    f = mean_frame(results)
    return f.pivot_table(index=["table", "eps"], columns="method", values=var, dropna=False)


def _nanmean(v: np.ndarray) -> float:
    return float(np.nanmean(v)) if np.isfinite(v).any() else float("nan")


def _met(cells: str) -> tuple[int, int]:
    a, b = cells.split(" of ")
    return int(a), int(b)


def pmse_misses(results) -> dict:
    """Where ours missed a main-effects pMSE target (:data:`.tables.TARGETS` ``pmse_mid``, ``pmse_low``), what its
    marginals did in those cells.

    Returns ``judged`` and ``missed`` (table x eps cells), and over the missed cells: ``numeric_worse`` and
    ``categorical_worse`` (cells where ours' numeric or categorical marginal distance exceeded the better peer's),
    the means ``ours_numeric``, ``peer_numeric``, ``ours_categorical``, ``peer_categorical`` (NaN without a
    missed cell), and ``worst_ratio`` with its ``worst_table`` and ``worst_eps`` (ours' pMSE ratio over the better
    peer's in the worst missed cell). Zeros when the peers or the epsilons were not run.
    """
    nan = float("nan")
    out = {"judged": 0, "missed": 0, "numeric_worse": 0, "categorical_worse": 0, "ours_numeric": nan,
           "peer_numeric": nan, "ours_categorical": nan, "peer_categorical": nan, "worst_ratio": nan,
           "worst_table": "", "worst_eps": nan}
    f = mean_frame(results)
    if OURS not in set(f["method"]) or not set(PEERS) <= set(f["method"]):
        return out
    piv = {v: cell_values(results, v) for v in ("pmse_ratio", "marginal_numeric", "marginal_categorical")}
    missed = []
    for key in ("pmse_mid", "pmse_low"):
        _var, _what, _crit, factor, epss = TARGETS[key]
        for (table, e), row in piv["pmse_ratio"].iterrows():
            if float(e) not in epss:
                continue
            out["judged"] += 1
            peer = float(row[list(PEERS)].min())
            if not float(row[OURS]) <= factor * peer:
                missed.append((table, float(e), float(row[OURS]) / peer))
    out["missed"] = len(missed)
    if not missed:
        return out
    idx = [(t, e) for t, e, _ in missed]
    for kind in ("numeric", "categorical"):
        tab = piv[f"marginal_{kind}"].loc[idx]
        ours, peer = tab[OURS].to_numpy(dtype=float), tab[list(PEERS)].min(axis=1).to_numpy(dtype=float)
        out[f"{kind}_worse"] = int(np.sum(ours > peer))
        out[f"ours_{kind}"], out[f"peer_{kind}"] = _nanmean(ours), _nanmean(peer)
    table, e, ratio = max(missed, key=lambda m: m[2])
    out.update(worst_ratio=ratio, worst_table=str(table), worst_eps=e)
    return out


def coverage_misses(results, eps=(1.0, 3.0, 5.0), target: float = 0.9) -> dict:
    """Where ours' intervals covered the confidential estimate for fewer than ``target`` of the coefficients (means
    over runs, per table and eps in ``eps``): how many cells, how many at the smallest eps, and how wide the
    intervals were there.

    Returns ``judged``, ``missed``, ``missed_low`` (at ``min(eps)``), ``eps_low``, and over the missed cells
    ``coverage`` (mean) and ``width`` (the mean of the median ratio of the interval's width to the confidential
    interval's; NaN without a missed cell).
    """
    nan = float("nan")
    out = {"judged": 0, "missed": 0, "missed_low": 0, "eps_low": float(min(eps)), "coverage": nan, "width": nan}
    f = mean_frame(results)
    g = f[(f["method"] == OURS) & f["eps"].isin([float(e) for e in eps])]
    g = g[np.isfinite(g["coverage"].to_numpy(dtype=float))]
    if g.empty:
        return out
    miss = g[g["coverage"] < target]
    out.update(judged=len(g), missed=len(miss), missed_low=int((miss["eps"] == float(min(eps))).sum()))
    if len(miss):
        out.update(coverage=float(miss["coverage"].mean()), width=_nanmean(miss["width_ratio"].to_numpy(dtype=float)))
    return out


def text_numbers(results) -> dict:
    """Every number the chapter's Markdown quotes, under keys present at every scale.

    ``runs``, ``eps_min``, ``eps_max``, ``cells`` (tables x eps), ``tables``, ``implicates``; ``unconverged``
    of ``model_runs`` (fitted tables of ours and of the censored chain with a conditional that failed a
    check); ``top``: per method key (``auto``, ``censor_chain``, ``mst``, ``aim``) the means over the tables
    at the largest eps of
    ``marginal_numeric``, ``marginal_categorical``, ``pmse`` (ratio), ``pmse_int``, ``coef`` (RMSE),
    ``coverage`` and ``seconds`` (NaN for a method not run); ``chain_gain``: ours' numeric marginal
    over the censored chain's, mean over every cell (NaN without the chain); ``miss``: :func:`pmse_misses`;
    ``cover``: :func:`coverage_misses`.
    """
    ds = study_of(results)
    f = mean_frame(results)
    eps = sorted(float(e) for e in ds["eps"].values)
    out = {"runs": int(ds.sizes["replicate"]), "eps_min": eps[0], "eps_max": eps[-1],
           "cells": int(ds.sizes["table"] * ds.sizes["eps"]), "tables": int(ds.sizes["table"]),
           "implicates": int(ds.attrs.get("implicates", 0)) or _implicates(ds)}
    top = f[f["eps"] == eps[-1]]
    out["top"] = {}
    for key, name in METHOD_NAMES.items():
        g = top[top["method"] == name]
        out["top"][key] = {k: float(g[v].mean()) if len(g) else float("nan")
                            for k, v in (("marginal_numeric", "marginal_numeric"),
                                         ("marginal_categorical", "marginal_categorical"), ("pmse", "pmse_ratio"),
                                         ("pmse_int", "pmse_int_ratio"), ("coef", "coef_rmse"),
                                         ("coverage", "coverage"), ("seconds", "seconds"))}
    model = ds["converged"].sel({"method": [m for m in (OURS, CHAIN) if m in ds["method"].values]})
    out["unconverged"] = int((~model.astype(bool)).sum())
    out["model_runs"] = int(model.size)
    tab = cell_values(results, "marginal_numeric")
    out["chain_gain"] = float((tab[OURS] / tab[CHAIN]).mean()) if {OURS, CHAIN} <= set(tab.columns) else float("nan")
    out["miss"] = pmse_misses(results)
    out["cover"] = coverage_misses(results)
    return out


def _implicates(ds) -> int:
    import json

    try:
        return int(json.loads(ds.attrs["params"]).get("implicates", 0))
    except (KeyError, ValueError, TypeError):
        return 0


def verdicts(results) -> list[Verdict]:
    """The chapter's targets checked on its results (:class:`dpsynth_book.verdicts.Verdict`).

    One verdict per target of :data:`.tables.TARGETS` (key ``target_<key>``: it holds when ours meets the
    criterion in every (table, eps) cell judged; the evidence gives ours' and the peers' means and the
    cells met per table), ``target_coverage`` (ours' intervals cover the confidential estimate for at least
    90% of the coefficients, mean over runs, in every cell), ``models_converged`` (every conditional of ours
    and of the censored chain passed its checks in every run) and ``auto_beats_chain`` (ours' numeric
    marginals are closer than the censored chain's in every cell).
    """
    out = []
    tt = targets_table(results)
    for key, (_var, what, crit, _factor, epss) in TARGETS.items():
        rows = tt.xs(what, level="target", drop_level=False) if what in tt.index.get_level_values("target") else None
        if rows is not None:
            rows = rows[rows["criterion"] == crit]
        if rows is None or rows.empty:
            out.append(Verdict(f"target_{key}", f"{what} {crit} at ε = {', '.join(f'{e:g}' for e in epss)}", None,
                               "the methods or epsilons were not all run.", {}))
            continue
        met = [_met(c) for c in rows["cells met"]]
        holds = all(a == b for a, b in met)
        per = "; ".join(f"{t}: ours {r['ours']:.3g} vs {r['peer']:.3g} ({r['cells met']} cells)"
                        for (_, t), r in rows.iterrows())
        nums = {"cells": sum(b for _, b in met), "met": sum(a for a, _ in met),
                "ours_mean": float(rows["ours"].mean()), "peer_mean": float(rows["peer"].mean()),
                "ratio": float(rows["ours"].mean() / rows["peer"].mean())}
        out.append(Verdict(f"target_{key}", f"Ours: {what} {crit} at ε = {', '.join(f'{e:g}' for e in epss)}",
                           holds, per + ".", nums))
    cov = tt[tt["criterion"] == "≥ 0.9"]
    if cov.empty:
        out.append(Verdict("target_coverage", "Ours' 95% intervals cover the confidential estimate", None,
                           "ours was not run at ε = 1, 3, 5.", {}))
    else:
        met = [_met(c) for c in cov["cells met"]]
        per = "; ".join(f"{t}: {r['ours']:.2f} (better peer as if real: {r['peer']:.2f})"
                        for (_, t), r in cov.iterrows())
        out.append(Verdict("target_coverage", "Ours' 95% intervals from m tables cover the confidential estimate "
                           "for at least 90% of the coefficients at ε = 1, 3, 5", all(a == b for a, b in met),
                           per + ".", {"cells": sum(b for _, b in met), "met": sum(a for a, _ in met),
                                       "ours_mean": float(cov["ours"].mean()),
                                       "peer_mean": _nanmean(cov["peer"].to_numpy(dtype=float))}))
    tn = text_numbers(results)
    out.append(Verdict("models_converged", "Every conditional model of ours and of the censored chain passed its "
                       "convergence checks", tn["unconverged"] == 0,
                       f"{tn['unconverged']} of {tn['model_runs']} fitted tables had a conditional that failed a "
                       f"check (kept in the results and marked * in the tables).",
                       {"unconverged": tn["unconverged"], "runs": tn["model_runs"]}))
    tab = cell_values(results, "marginal_numeric")
    if {OURS, CHAIN} <= set(tab.columns):
        wins = tab[OURS] < tab[CHAIN]
        out.append(Verdict("auto_beats_chain", "Ours keeps the numeric marginals closer than the censored chain at "
                           "every ε", bool(wins.all()),
                           f"in {int(wins.sum())} of {len(wins)} cells; mean {tab[OURS].mean():.3f} vs "
                           f"{tab[CHAIN].mean():.3f}.", {"cells": len(wins), "wins": int(wins.sum())}))
    return out

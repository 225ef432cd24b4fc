"""Verdicts of the "Releasing a whole table" chapter, and the numbers its prose quotes.

:func:`verdicts` checks the chapter's claims on the means over runs (:func:`.tables.mean_frame`);
:func:`text_numbers` returns the numbers of its computed paragraphs, which the notebook glues
(:func:`dpsynth.book.glue_numbers`).
"""

from __future__ import annotations

import pandas as pd

from ...verdicts import Verdict
from .params import METHOD_NAMES
from .tables import mean_frame, study_of

__all__ = ["OURS", "INDEPENDENT", "PEERS", "cell_values", "text_numbers", "verdicts"]

OURS = METHOD_NAMES["table"]
INDEPENDENT = METHOD_NAMES["independent"]
#: The peers' display names.
PEERS = (METHOD_NAMES["mst"], METHOD_NAMES["aim"])


def cell_values(results, var: str) -> pd.DataFrame:
    """Means over runs of ``var``: one row per (table, eps), one column per method."""
    f = mean_frame(results)
    return f.pivot_table(index=["table", "eps"], columns="method", values=var, dropna=False)


def _have(tab: pd.DataFrame, *methods: str) -> bool:
    return all(m in tab.columns for m in methods)


def _compare(results, var: str, better: str, worse, *, cells: str = "all") -> tuple[bool | None, dict]:
    """Whether ``better``'s mean ``var`` is below ``worse``'s (a name, or the best of several) in every cell.

    ``cells="largest"`` keeps only the largest eps of each table.
    """
    tab = cell_values(results, var)
    worse = (worse,) if isinstance(worse, str) else tuple(worse)
    if not _have(tab, better, *worse):
        return None, {}
    if cells == "largest":
        tab = tab[tab.index.get_level_values("eps") == tab.index.get_level_values("eps").max()]
    a = tab[better]
    b = tab[list(worse)].min(axis=1)
    wins = (a < b)
    numbers = {"cells": int(len(tab)), "wins": int(wins.sum()),
               "ours_mean": float(a.mean()), "other_mean": float(b.mean())}
    for (t, e), va, vb in zip(tab.index, a, b, strict=True):
        numbers[f"{t}-eps{e:g}"] = {"better": float(va), "other": float(vb)}
    return bool(wins.all()), numbers


def _range(tab: pd.Series) -> str:
    return f"{tab.min():.3g} to {tab.max():.3g}"


def text_numbers(results) -> dict:
    """Every number the chapter's Markdown quotes, under keys present at every scale.

    ``runs``, ``eps_min``, ``eps_max``, ``cells`` (tables x eps), ``tables`` (how many);
    ``ours_eps_remove`` and ``ours_eps_replace`` (the chain rule's statement at the smallest eps:
    mean over runs and tables); ``unconverged`` of ``model_runs`` (fitted tables of ours and
    Independent with a conditional that failed a check); ``top``: per method key (``table``,
    ``independent``, ``mst``, ``aim``) the means over the tables at the largest eps of
    ``marginal``, ``pairwise``, ``coef`` (RMSE), ``pmse`` (ratio) and ``seconds`` (NaN for a method
    not run).
    """
    ds = study_of(results)
    f = mean_frame(results)
    eps = sorted(float(e) for e in ds["eps"].values)
    out = {"runs": int(ds.sizes["replicate"]), "eps_min": eps[0], "eps_max": eps[-1],
           "cells": int(ds.sizes["table"] * ds.sizes["eps"]), "tables": int(ds.sizes["table"])}
    ours = f[(f["method"] == OURS) & (f["eps"] == eps[0])]
    out["ours_eps_remove"] = float(ours["eps_remove"].mean()) if len(ours) else float("nan")
    out["ours_eps_replace"] = float(ours["eps_replace"].mean()) if len(ours) else float("nan")
    top = f[f["eps"] == eps[-1]]
    out["top"] = {}
    for key, name in METHOD_NAMES.items():
        g = top[top["method"] == name]
        out["top"][key] = {k: float(g[v].mean()) if len(g) else float("nan")
                           for k, v in (("marginal", "marginal"), ("pairwise", "pairwise"), ("coef", "coef_rmse"),
                                        ("pmse", "pmse_ratio"), ("seconds", "seconds"))}
    model = ds["converged"].sel({"method": [m for m in (OURS, INDEPENDENT) if m in ds["method"].values]})
    out["unconverged"] = int((~model.astype(bool)).sum())
    out["model_runs"] = int(model.size)
    return out


def verdicts(results) -> list[Verdict]:
    """The chapter's claims checked on its results (:class:`dpsynth.verdicts.Verdict`).

    * ``chain_keeps_pairs``: ours has the smaller mean absolute difference of pairwise associations
      than Independent in every (table, eps).
    * ``chain_regression_vs_peers``: at the largest eps, ours has a smaller regression-coefficient
      RMSE than both MST and AIM on every table.
    * ``chain_pmse_vs_peers``: ours has a smaller pMSE ratio than both peers in every (table, eps).
    * ``peers_categorical_marginal``: the better peer keeps the categorical column's marginal
      closer (TVD) than ours in every (table, eps).
    * ``peers_numeric_marginal``: the better peer keeps the numeric columns' marginals closer (max
      ECDF) than ours in every (table, eps).
    * ``peers_faster``: the slower peer takes less wall time than ours in every (table, eps).
    * ``models_converged``: every conditional of ours and of Independent passed its convergence
      checks in every run.
    """
    out = []

    def add(key, claim, holds, numbers, evidence_fn):
        out.append(Verdict(key, claim, holds, evidence_fn(numbers) if numbers else "the methods were not all run.",
                           numbers))

    h, n = _compare(results, "pairwise", OURS, INDEPENDENT)
    add("chain_keeps_pairs", "The chain rule keeps the pairwise associations better than independent columns at "
        "every ε", h, n, lambda n: (f"ours is closer in {n['wins']} of {n['cells']} (table, ε) cells; mean |Δ| "
                                    f"{n['ours_mean']:.3f} vs {n['other_mean']:.3f}."))
    h, n = _compare(results, "coef_rmse", OURS, PEERS, cells="largest")
    add("chain_regression_vs_peers", "At the largest ε, the chain rule recovers the analyst's regression "
        "coefficients better than both MST and AIM", h, n,
        lambda n: (f"ours has the smaller coefficient RMSE on {n['wins']} of {n['cells']} tables; mean "
                   f"{n['ours_mean']:.3f} vs the better peer's {n['other_mean']:.3f}."))
    h, n = _compare(results, "pmse_ratio", OURS, PEERS)
    add("chain_pmse_vs_peers", "The chain rule's tables are harder to tell from the data (pMSE ratio) than both "
        "peers' at every ε", h, n,
        lambda n: (f"ours has the smaller pMSE ratio in {n['wins']} of {n['cells']} cells; mean {n['ours_mean']:.3g} "
                   f"vs the better peer's {n['other_mean']:.3g}."))
    for var, key, what in (("marginal_categorical", "peers_categorical_marginal", "the categorical column's"),
                           ("marginal_numeric", "peers_numeric_marginal", "the numeric columns'")):
        tab = cell_values(results, var)
        if _have(tab, OURS, *PEERS):
            best = tab[list(PEERS)].min(axis=1)
            wins = best < tab[OURS]
            nums = {"cells": int(len(tab)), "wins": int(wins.sum()), "ours_mean": float(tab[OURS].mean()),
                    "other_mean": float(best.mean())}
            hh = bool(wins.all())
        else:
            hh, nums = None, {}
        add(key, f"The better of MST and AIM keeps {what} marginal closer than the chain rule at every ε", hh, nums,
            lambda n: (f"the better peer is closer in {n['wins']} of {n['cells']} cells; mean {n['other_mean']:.3f} "
                       f"vs ours {n['ours_mean']:.3f}."))
    tab = cell_values(results, "seconds")
    if _have(tab, OURS, *PEERS):
        slow = tab[list(PEERS)].max(axis=1)
        wins = slow < tab[OURS]
        nums = {"cells": int(len(tab)), "wins": int(wins.sum()), "ours_range": _range(tab[OURS]),
                "peers_range": _range(slow)}
        hh = bool(wins.all())
    else:
        hh, nums = None, {}
    add("peers_faster", "Both peers take less wall time than the chain rule at every ε", hh, nums,
        lambda n: (f"in {n['wins']} of {n['cells']} cells; ours took {n['ours_range']} s, the slower peer "
                   f"{n['peers_range']} s (mean over runs)."))
    tn = text_numbers(results)
    add("models_converged", "Every conditional model of the chain rule and of Independent passed its convergence "
        "checks", tn["unconverged"] == 0, {"unconverged": tn["unconverged"], "runs": tn["model_runs"]},
        lambda n: (f"{n['unconverged']} of {n['runs']} fitted tables had a conditional that failed a check "
                   f"(kept in the results and marked * in the tables)."))
    return out

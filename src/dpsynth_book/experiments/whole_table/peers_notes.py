"""Why the peers' analyst numbers degrade with eps on some tables: the numbers the chapter states.

The issue: on NMES, AIM's coefficient RMSE rose from about 0.3 (eps <= 3) to 4.35 (eps 10) and MST's
interval coverage fell as eps grew. The cause is not the binning, the bounds or the design: it is the
way MST and AIM draw their rows. Both draw them with Private-PGM's
``MarkovRandomField.synthetic_data`` (package ``mbi``); smartnoise-synth 1.0.8 requires
``mbi>=1.1.0,<2`` and mbi 1.1.0 hands out a column's values, within each group of rows that share its
parents' values, **in the order of the rows** (fixed upstream by mbi's commit a987d84, mbi 1.3.0).
Every column drawn given a parent then rises with the row position inside each parent group, so two
such columns come out comonotone: a correlation the fitted model does not have, invisible in the
one-way marginals (which stay exact) and large in the analyst's regression. ``peers/run_peer.py``
now draws the rows with the fixed function (``mbi_sampling_fix``, on by default).

Three functions, all pure:

* :func:`row_order` -- per column of a table, its association with the row position (Spearman's
  correlation, or the correlation ratio for a category): near 0 for the data and for a correct draw
  (its noise is about ``1/sqrt(n)``), large for a column drawn in row order;
* :func:`synthetic_notes` -- the numbers of one synthetic table against the data: the largest row-order
  association, the pair of columns whose association moved most, the coefficient that moved most,
  the coefficient RMSE, and the candidates the audit ruled out (distinct values per numeric column,
  the share of values on the peers' bin midpoints, the condition number of the analyst's design);
* :func:`peer_cells` and :func:`peer_trends` -- from the study's results, a measure per (table, eps,
  peer) over the runs, and the numbers of the issue (a peer's measure at the smallest and largest eps).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpsynth import table_metrics
from dpsynth.validation import DataError

from .replicate import TableSpec
from .tables import PEERS, study_of

__all__ = ["row_order", "bin_midpoints", "synthetic_notes", "peer_cells", "peer_trends", "sampling_caveat"]


def row_order(frame: pd.DataFrame, kinds: dict) -> pd.Series:
    """Each column's association with the row position (0, 1, ..., n - 1).

    Spearman's correlation for a numeric column, the correlation ratio of the positions' ranks on the
    levels (eta) for a categorical one (:func:`dpsynth.table_metrics.association`). A table whose rows
    are in no particular order gives values of order ``1/sqrt(n)``; a column whose values were handed
    out in the order of the rows gives values near 1 in absolute value.
    """
    position = pd.Series(np.arange(len(frame), dtype=float), index=frame.index)
    out = {}
    for c, k in kinds.items():
        out[c] = table_metrics.association(position, frame[c], "continuous", k)[1]
    return pd.Series(out, name="row_order", dtype=float)


def bin_midpoints(lower: float, upper: float, bins: int, *, integer: bool = False) -> np.ndarray:
    """The midpoints of the peers' ``bins`` equal-width bins on ``[lower, upper]`` (snsynth's ``BinTransformer``);
    rounded to whole numbers for an integer column, as :func:`dpsynth_book.peers.run_peer` returns them."""
    edges = lower + (upper - lower) * np.arange(bins + 1) / bins
    mid = (edges[:-1] + edges[1:]) / 2
    return np.unique(np.rint(mid)) if integer else mid


def _on_midpoints(values: np.ndarray, mids: np.ndarray) -> float:
    v = values[np.isfinite(values)]
    if v.size == 0:
        return float("nan")
    return float(np.mean(np.isclose(v[:, None], mids[None, :], rtol=0.0, atol=1e-9).any(axis=1)))


def _condition_number(frame: pd.DataFrame, spec: TableSpec, like: pd.DataFrame) -> float:
    """The condition number of the analyst's design without its intercept, columns centred and scaled."""
    from dpsynth.table_metrics import _design, _levels, analysis_values  # noqa: PLC2701 - the analyst's design

    kinds = dict(spec.kinds)
    levels = {c: _levels(like[c]) for c in spec.predictors if kinds[c] == "categorical"}
    X, _ = _design(frame, list(spec.predictors), kinds, levels, like)
    y = analysis_values(frame[spec.outcome], kinds[spec.outcome], like=like[spec.outcome])
    X = X[np.isfinite(y) & np.all(np.isfinite(X), axis=1)][:, 1:]
    sd = X.std(axis=0)
    if X.shape[0] < 2 or np.any(sd == 0):
        return float("inf")
    return float(np.linalg.cond((X - X.mean(axis=0)) / sd))


def synthetic_notes(original: pd.DataFrame, synthetic: pd.DataFrame, spec: TableSpec) -> dict:
    """The numbers that explain one synthetic table's regression, against the confidential table.

    Returns
    -------
    dict
        ``row_order_max`` and ``row_order_column`` (the largest absolute :func:`row_order` of the
        synthetic table, and its column), ``row_order_original`` (the same for the data);
        ``assoc_gap_max``, ``assoc_gap_pair``, ``assoc_original``, ``assoc_synthetic`` (the pair of
        columns whose association moved most, :func:`dpsynth.table_metrics.pairwise_table`);
        ``coef_rmse`` (as the study computes it, intercept left out; NaN if the synthetic design is rank
        deficient), ``coef_error_max`` and ``coef_error_term`` (the coefficient that moved most);
        ``condition_number`` and ``condition_number_original`` (the analyst's design, centred and
        scaled); and per numeric column ``c``: ``distinct_c``, ``distinct_original_c`` and
        ``midpoint_share_c`` (the share of the synthetic values on the peers' bin midpoints,
        :func:`bin_midpoints` of ``spec.bounds``).
    """
    kinds = dict(spec.kinds)
    ro_syn, ro_orig = row_order(synthetic, kinds), row_order(original, kinds)
    top = ro_syn.abs().idxmax() if ro_syn.notna().any() else ""
    pw = table_metrics.pairwise_table(original, synthetic, kinds)
    gap = pw["difference"].abs()
    i = int(gap.idxmax()) if gap.notna().any() else None
    out = {
        "row_order_max": float(ro_syn.abs().max()),
        "row_order_column": str(top),
        "row_order_original": float(ro_orig.abs().max()),
        "assoc_gap_max": float(gap.max()) if i is not None else float("nan"),
        "assoc_gap_pair": f"{pw.loc[i, 'a']}~{pw.loc[i, 'b']}" if i is not None else "",
        "assoc_original": float(pw.loc[i, "original"]) if i is not None else float("nan"),
        "assoc_synthetic": float(pw.loc[i, "synthetic"]) if i is not None else float("nan"),
    }
    try:
        reg = table_metrics.regression_table(original, synthetic, spec.outcome, list(spec.predictors), kinds)
        reg = reg.drop(index="intercept")
        err = (reg["synthetic"] - reg["original"]).abs()
        out.update(coef_rmse=float(np.sqrt(np.mean(err ** 2))), coef_error_max=float(err.max()),
                   coef_error_term=str(err.idxmax()))
    except DataError:  # a level that never occurs: no regression
        out.update(coef_rmse=float("nan"), coef_error_max=float("nan"), coef_error_term="")
    out["condition_number"] = _condition_number(synthetic, spec, original)
    out["condition_number_original"] = _condition_number(original, spec, original)
    for c, (lo, hi, bins) in spec.bounds.items():
        integer = kinds[c] == "count"
        out[f"distinct_{c}"] = int(pd.Series(synthetic[c]).nunique())
        out[f"distinct_original_{c}"] = int(pd.Series(original[c]).nunique())
        out[f"midpoint_share_{c}"] = _on_midpoints(pd.to_numeric(synthetic[c]).to_numpy(dtype=float),
                                                   bin_midpoints(lo, hi, bins, integer=integer))
    return out


def peer_cells(results, var: str = "coef_rmse") -> pd.DataFrame:
    """``var`` of the peers over the runs: one row per (table, eps, method), with ``mean``, ``median``,
    ``min``, ``max`` and ``runs`` (runs with a value)."""
    ds = study_of(results)
    peers = [m for m in PEERS if m in set(ds["method"].values)]
    if not peers:
        return pd.DataFrame(columns=["table", "eps", "method", "mean", "median", "min", "max", "runs"])
    da = ds[var].sel({"method": peers})  # a dict: `method` is also a keyword of sel
    f = da.to_dataframe(name=var).reset_index()
    g = f.groupby(["table", "eps", "method"], sort=False)[var]
    out = pd.DataFrame({"mean": g.mean(), "median": g.median(), "min": g.min(), "max": g.max(),
                        "runs": g.count()}).reset_index()
    return out


def peer_trends(results, table: str = "nmes1988") -> dict:
    """The issue's numbers: for each peer and measure (``coef_rmse``, ``coverage``, ``width_ratio``), the
    mean over runs at the smallest and at the largest eps of the study, and the eps from which the
    coefficient RMSE first exceeds three times its value at the smallest eps (NaN if never).

    Keys ``"{peer}_{measure}_{low|high}"`` (peer ``mst`` or ``aim``), ``"{peer}_jump_eps"``, ``eps_low`` and
    ``eps_high``.
    """
    ds = study_of(results)
    eps = sorted(float(e) for e in ds["eps"].values)
    out: dict = {"eps_low": eps[0], "eps_high": eps[-1]}
    for peer in PEERS:
        key = peer.lower()
        if peer not in set(ds["method"].values):
            continue
        for var in ("coef_rmse", "coverage", "width_ratio"):
            m = ds[var].sel({"table": table, "method": peer}).mean("replicate")
            out[f"{key}_{var}_low"] = float(m.sel(eps=eps[0]))
            out[f"{key}_{var}_high"] = float(m.sel(eps=eps[-1]))
        m = ds["coef_rmse"].sel({"table": table, "method": peer}).mean("replicate")
        jump = [e for e in eps if float(m.sel(eps=e)) > 3 * out[f"{key}_coef_rmse_low"]]
        out[f"{key}_jump_eps"] = jump[0] if jump else float("nan")
    return out


def sampling_caveat(results) -> str:
    """What the page must say about how the study's MST and AIM rows were drawn, read from the study's own record.

    Runs made since ``peers/run_peer.py`` draws with mbi's fixed ``synthetic_data`` say so in the study's
    ``peers`` attribute; runs made before drew with mbi 1.1.0's function, which hands out a column's values in
    row order within each parent group: their one-way marginals are exact, but any two columns drawn given a
    parent come out comonotone, so the peers' pairwise, interaction, regression and coverage numbers are worse
    than their fitted model and the comparison on those measures favours the package.
    """
    ds = study_of(results)
    if "synthetic_data as fixed upstream" in str(ds.attrs.get("peers", "")):
        return ("MST's and AIM's rows were drawn with Private-PGM's `synthetic_data` as fixed upstream (mbi commit "
                "a987d84), as `peers/run_peer.py` does by default.")
    return ("**Caveat on these runs.** MST's and AIM's rows in the results on this page were drawn with Private-PGM "
            "1.1.0's `synthetic_data` (the only release smartnoise-synth 1.0.8 allows), which hands out a column's "
            "values in the order of the rows within each group of its parents' values (fixed upstream in mbi commit "
            "a987d84, see `peers/README.md`). Their one-way marginals are exact and their main-effects pMSE is not "
            "affected, but two columns drawn given a parent come out comonotone: MST's and AIM's pairwise, "
            "interaction, regression and coverage numbers below are worse than their fitted models, and the "
            "package's lead on those measures is overstated until the study is recomputed (`make results`), which "
            "draws them with the fixed function.")

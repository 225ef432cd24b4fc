"""Tables of the range-restriction chapter, computed from the study Dataset.

Every function takes the study Dataset of :func:`dpsynth_book.experiments.range_restriction.run`
(``results.study``; dimensions ``replicate``, ``n_obs``, ``synthesizer``, ``range``, ``record``)
or the results object itself. Every eps is stated with one record removed (``2 Delta``, the book's
relation) and, beside it, with one record replaced (``4 Delta``). The verdicts and the numbers the
chapter's prose quotes are in :mod:`dpsynth_book.experiments.range_restriction.verdicts`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from dpsynth import registry

__all__ = [
    "study_of", "n_main", "range_tags", "eps_table", "inequality_table", "decomposition_table", "mixing_table",
    "spread_table", "convergence_table", "verdict_numbers_table",
]


def study_of(results) -> xr.Dataset:
    """The study Dataset of ``results`` (a results object or the Dataset itself)."""
    return results if isinstance(results, xr.Dataset) else results.study


def n_main(ds: xr.Dataset) -> int:
    """The sample size of the by-record and utility results (``params.n``)."""
    return int(ds.attrs["n_main"])


def _names(ds: xr.Dataset) -> list[str]:
    return [str(m) for m in ds["synthesizer"].values]


def range_tags(ds: xr.Dataset) -> list[str]:
    """The ranges as in the registry names, e.g. ``["[0.4,1.8]", "[0.6,1.2]"]``, in the study's order."""
    return [m[1:] for m in _names(ds) if m.startswith("A[")]


def _width(tag: str) -> float:
    a, b = (float(v) for v in tag.strip("[]").split(","))
    return float(np.log(b / a)) if a > 0 else float("inf")


def _le_lw(ds: xr.Dataset, m: str) -> xr.DataArray:
    d = ds["delta"]
    return d.sel(synthesizer=m) <= d.sel(synthesizer="LW")


def _range_names(ds: xr.Dataset) -> list[str]:
    return [m for m in _names(ds) if m not in ("Unweighted", "LW")]


def eps_table(results) -> pd.DataFrame:
    """Median Delta and local eps (removed, replaced) by synthesizer and n, with non-converged fits.

    The local ``εₓ`` columns are named so: each is ``2 Delta`` (``4 Delta``) of one data set, conditional on
    that data set (aDP), not a DP guarantee.
    """
    ds = study_of(results)
    R = ds.sizes["replicate"]
    rows = []
    for m in _names(ds):
        for nn in ds["n_obs"].values:
            sub = ds.sel(synthesizer=m, n_obs=nn)
            rows.append({"synthesizer": registry.label(m), "n": int(nn), "median Δ": float(sub["delta"].median()),
                         "local εₓ (remove)": float(sub["eps"].median()),
                         "local εₓ (replace)": float(sub["eps_replace"].median()),
                         "not converged": f"{int((~sub['converged'].values.astype(bool)).sum())}/{R}"})
    return pd.DataFrame(rows).set_index(["synthesizer", "n"])


def inequality_table(results) -> pd.DataFrame:
    """Replicates with Delta <= Delta_LW on the same data, and the median ratio, by synthesizer and n."""
    ds = study_of(results)
    R = ds.sizes["replicate"]
    out = {}
    for nn in ds["n_obs"].values:
        d = ds["delta"].sel(n_obs=nn)
        col = {}
        for m in _range_names(ds):
            le = int(_le_lw(ds.sel(n_obs=nn), m).sum())
            ratio = float((d.sel(synthesizer=m) / d.sel(synthesizer="LW")).median())
            col[registry.label(m)] = f"{le}/{R} ({ratio:.2f})"
        out[f"n = {int(nn)}"] = col
    frame = pd.DataFrame(out)
    frame.index.name = "synthesizer"
    return frame


def decomposition_table(results) -> pd.DataFrame:
    """What attains the literal (B) bound, by range and n (medians over replicates)."""
    ds = study_of(results)
    R = ds.sizes["replicate"]
    rows = []
    for t in range_tags(ds):
        for nn in ds["n_obs"].values:
            sub = ds.sel(n_obs=nn, synthesizer=f"B{t}")
            rows.append({
                "range": t, "n": int(nn),
                "$\\Delta_B$": float(sub["delta"].median()),
                "$\\Delta_{B'}$": float(ds["delta"].sel(n_obs=nn, synthesizer=f"B'{t}").median()),
                "$\\Delta_{LW}$": float(ds["delta"].sel(n_obs=nn, synthesizer="LW").median()),
                "max −log P": float(sub["max_neg_log_prob"].median()),
                "attained at weight 0": f"{int((sub['weight_at_max'] == 0).sum())}/{R}",
                "unweighted max|f − log P|": float(ds["delta_trunc_unweighted"].sel(n_obs=nn, range=t).median()),
            })
    return pd.DataFrame(rows).set_index(["range", "n"])


def mixing_table(results) -> pd.DataFrame:
    """One draw per data set against record-wise mixing at n = ``params.n`` (medians over replicates).

    Its ``εₓ`` columns are local: conditional on the data set at hand (aDP), not a DP guarantee.
    """
    ds = study_of(results)
    sub = ds.sel(n_obs=n_main(ds))
    k = sub["n_draws_mixed"]
    frame = pd.DataFrame({
        "avg-ECDF (one draw)": sub["avg_ecdf"].median("replicate").to_pandas(),
        "avg-ECDF (mixed)": sub["avg_ecdf_mixed"].median("replicate").to_pandas(),
        "draws used (mixed)": k.median("replicate").to_pandas(),
        "local εₓ remove (one draw)": sub["eps"].median("replicate").to_pandas(),
        "local εₓ remove (mixed)": (k * sub["eps"]).median("replicate").to_pandas(),
        "local εₓ replace (mixed)": (k * sub["eps_replace"]).median("replicate").to_pandas(),
    })
    frame = frame.loc[_names(ds)]
    frame.index = [registry.label(m) for m in frame.index]
    frame.index.name = "synthesizer"
    return frame


def _spread(ds: xr.Dataset) -> xr.DataArray:
    d = ds["delta"]  # the interquartile range, the spread of the book's contraction verdict
    return d.quantile(0.75, "replicate").drop_vars("quantile") - d.quantile(0.25, "replicate").drop_vars("quantile")


def spread_table(results) -> pd.DataFrame:
    """Spread of Delta over replicates (interquartile range, as the contraction verdict uses) by synthesizer and n."""
    ds = study_of(results)
    sp = _spread(ds).transpose("synthesizer", "n_obs").to_pandas().loc[_names(ds)]
    sp.index = [registry.label(m) for m in sp.index]
    sp.index.name = "synthesizer"
    sp.columns = [f"n = {int(c)}" for c in sp.columns]
    return sp


def _fit_names(ds: xr.Dataset) -> list[str]:
    return [m for m in _names(ds) if not m.startswith("B'")]  # B' re-uses B's fit


def convergence_table(results) -> pd.DataFrame:
    """Convergence by synthesizer over all replicates and sample sizes (B' re-uses B's fit)."""
    ds = study_of(results)
    rows = {}
    for m in _fit_names(ds):
        sub = ds.sel(synthesizer=m)
        conv, div = sub["converged"].values.astype(bool), sub["divergences"].values
        rows[registry.label(m)] = {"fits": int(conv.size), "not converged": int((~conv).sum()),
                                   "fits with divergences": int((div > 0).sum()),
                                   "divergences (total)": int(div.sum()),
                                   "max R-hat": float(sub["rhat_max"].max()),
                                   "min bulk ESS": float(sub["ess_min"].min())}
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = "synthesizer"
    return frame


def verdict_numbers_table(verdicts) -> pd.DataFrame:
    """The counts and means the verdicts quote that the chapter's other tables do not show.

    Parameters
    ----------
    verdicts : list of dpsynth_book.verdicts.Verdict
        :func:`dpsynth_book.experiments.range_restriction.verdicts` of the results, in the page's order.

    Returns
    -------
    pandas.DataFrame
        :func:`dpsynth_book.verdicts.quoted_numbers_table`: indexed by the verdict's number and the figure,
        one column ``value``: for each verdict that counts replicate-and-n cases (pooled over the
        ranges), the cases and how many satisfy it; and the mean knowledge probability λ of the
        narrow and the wide range at the chapter's n.
    """
    from ...verdicts import quoted_numbers_table

    n = {v.key: v.numbers for v in verdicts}
    fig: dict = {}
    if "lw_below_unweighted" in n:
        c = n["lw_below_unweighted"]
        fig["lw_below_unweighted"] = [("replicate-and-n cases", f"{c['cases']}"),
                                      ("$\\Delta_{LW} < \\Delta_{Unweighted}$", f"{c['lower']}")]
    for key in ("averaged_within_lw", "literal_b_within_lw", "whole_term_within_lw"):
        if key in n:
            fig[key] = [("replicate-and-n cases, all ranges", f"{n[key]['cases']}"),
                        ("$\\Delta \\le \\Delta_{LW}$", f"{n[key]['within']}")]
    if "literal_b_exceeds_by_range_term" in n:
        c = n["literal_b_exceeds_by_range_term"]
        fig["literal_b_exceeds_by_range_term"] = [
            ("replicate-and-n cases, all ranges", f"{c['cases']}"), ("$\\Delta_B > \\Delta_{LW}$", f"{c['exceed']}"),
            ("of them, $-\\log P \\ge \\Delta_{LW}$", f"{c['exceed_by_range_term']}")]
    if "literal_b_attained_by_zero_weight" in n:
        c = n["literal_b_attained_by_zero_weight"]
        fig["literal_b_attained_by_zero_weight"] = [
            ("$\\Delta_B > \\Delta_{LW}$", f"{c['exceed']}"), ("of them, at weight 0", f"{c['exceed_at_zero_weight']}"),
            ("all cases at weight 0", f"{c['attained_at_zero_weight']} of {c['cases']}")]
    if "mean_lambda_narrow" in n.get("narrower_range_buys_more", {}):
        c = n["narrower_range_buys_more"]
        fig["narrower_range_buys_more"] = [(f"mean λ, {c['narrow']}", f"{c['mean_lambda_narrow']:.2f}"),
                                           (f"mean λ, {c['wide']}", f"{c['mean_lambda_wide']:.2f}")]
    return quoted_numbers_table(verdicts, fig)

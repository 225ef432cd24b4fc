"""Tables and verdicts of the range-restriction chapter, computed from the study Dataset.

Every function takes the study Dataset of :func:`dpsynth.experiments.range_restriction.run`
(``results.study``; dimensions ``replicate``, ``n_obs``, ``synthesizer``, ``range``, ``record``)
or the results object itself. Every eps is stated with one record removed (``2 Delta``, the book's
relation) and, beside it, with one record replaced (``4 Delta``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import xarray as xr

from ... import registry
from ...privacy import CENSOR_TOL
from ...verdicts import Verdict

__all__ = [
    "study_of", "n_main", "range_tags", "eps_table", "inequality_table", "decomposition_table", "mixing_table",
    "spread_table", "convergence_table", "convergence_summary", "verdicts",
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
    """Median Delta and local eps (removed, replaced) by synthesizer and n, with non-converged fits."""
    ds = study_of(results)
    R = ds.sizes["replicate"]
    rows = []
    for m in _names(ds):
        for nn in ds["n_obs"].values:
            sub = ds.sel(synthesizer=m, n_obs=nn)
            rows.append({"synthesizer": registry.label(m), "n": int(nn), "median Δ": float(sub["delta"].median()),
                         "eps (remove)": float(sub["eps"].median()),
                         "eps (replace)": float(sub["eps_replace"].median()),
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
                "Δ_B": float(sub["delta"].median()),
                "Δ_B'": float(ds["delta"].sel(n_obs=nn, synthesizer=f"B'{t}").median()),
                "Δ_LW": float(ds["delta"].sel(n_obs=nn, synthesizer="LW").median()),
                "max −log P": float(sub["max_neg_log_prob"].median()),
                "attained at weight 0": f"{int((sub['weight_at_max'] == 0).sum())}/{R}",
                "unweighted max|f − log P|": float(ds["delta_trunc_unweighted"].sel(n_obs=nn, range=t).median()),
            })
    return pd.DataFrame(rows).set_index(["range", "n"])


def mixing_table(results) -> pd.DataFrame:
    """One draw per data set against record-wise mixing at n = ``params.n`` (medians over replicates)."""
    ds = study_of(results)
    sub = ds.sel(n_obs=n_main(ds))
    k = sub["n_draws_mixed"]
    frame = pd.DataFrame({
        "avg-ECDF (one draw)": sub["avg_ecdf"].median("replicate").to_pandas(),
        "avg-ECDF (mixed)": sub["avg_ecdf_mixed"].median("replicate").to_pandas(),
        "draws used (mixed)": k.median("replicate").to_pandas(),
        "eps remove (one draw)": sub["eps"].median("replicate").to_pandas(),
        "eps remove (mixed)": (k * sub["eps"]).median("replicate").to_pandas(),
        "eps replace (mixed)": (k * sub["eps_replace"]).median("replicate").to_pandas(),
    })
    frame = frame.loc[_names(ds)]
    frame.index = [registry.label(m) for m in frame.index]
    frame.index.name = "synthesizer"
    return frame


def _spread(ds: xr.Dataset) -> xr.DataArray:
    d = ds["delta"]
    return d.quantile(0.9, "replicate").drop_vars("quantile") - d.quantile(0.1, "replicate").drop_vars("quantile")


def spread_table(results) -> pd.DataFrame:
    """Spread of Delta over replicates (90th minus 10th percentile) by synthesizer and n."""
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


def convergence_summary(results) -> dict:
    """Counts for the convergence sentence: fits, failed fits, fits with divergences, warnings."""
    ds = study_of(results)
    sub = ds.sel(synthesizer=_fit_names(ds))
    conv, div = sub["converged"].values.astype(bool), sub["divergences"].values
    warn = int(ds["convergence_warnings"].sum()) if "convergence_warnings" in ds else 0
    return {"fits": int(conv.size), "not_converged": int((~conv).sum()), "fits_with_divergences": int((div > 0).sum()),
            "divergences": int(div.sum()), "convergence_warnings": warn,
            "not_converged_at_n": int((~ds["converged"].sel(n_obs=n_main(ds)).values.astype(bool)).sum())}


def _count(ok: xr.DataArray) -> tuple[int, int]:
    return int(ok.sum()), int(ok.size)


def verdicts(results) -> list[Verdict]:
    """The chapter's claims ("What this shows"), each checked on the study.

    Keys: ``accounting_consistent``, ``lw_below_unweighted``, ``averaged_within_lw``,
    ``literal_b_within_lw``, ``literal_b_exceeds_by_range_term``, ``literal_b_attained_by_zero_weight``,
    ``whole_term_within_lw``,
    ``narrower_range_buys_more``, ``averaged_utility_within_lw``, ``utility_comparison_same_when_mixing``,
    ``bound_contracts``.
    """
    ds = study_of(results)
    tags = range_tags(ds)
    n = n_main(ds)
    ns = [int(v) for v in ds["n_obs"].values]
    d = ds["delta"]
    med = d.sel(n_obs=n).median("replicate")
    out = []

    # the accounting itself
    lam = ds["mean_lambda"].sel(synthesizer=[f"A{t}" for t in tags])
    rec = ds["record_delta"].isel(replicate=0).max("record")
    zero_ok = True
    for t in tags:
        sub = ds.sel(synthesizer=f"B{t}")
        zero = (sub["weight_at_max"] == 0).values
        zero_ok &= bool(np.allclose(sub["delta"].values[zero], sub["neg_log_prob_at_max"].values[zero]))
    checks = {
        "eps_is_2_delta": bool(np.allclose(ds["eps"], 2 * d)),
        "eps_replace_is_4_delta": bool(np.allclose(ds["eps_replace"], 4 * d)),
        "lambda_in_unit_interval": bool(((lam >= 0) & (lam <= 1)).all()),
        "record_bounds_match_delta": bool(np.allclose(rec, d.isel(replicate=0).sel(n_obs=n))),
        "zero_weight_bound_is_neg_log_prob": zero_ok,
        "delta_finite_positive": bool((np.isfinite(d) & (d > 0)).all()),
    }
    out.append(Verdict(
        "accounting_consistent", "Every reported eps is 2 Delta (one record removed) and 4 Delta (one record "
        "replaced), the knowledge probabilities lie in [0, 1] and the per-record bounds reproduce Delta.",
        all(checks.values()), "; ".join(f"{k.replace('_', ' ')}: {'yes' if v else 'no'}" for k, v in checks.items())
        + ".", checks))

    k, N = _count(d.sel(synthesizer="LW") < d.sel(synthesizer="Unweighted"))
    out.append(Verdict(
        "lw_below_unweighted", "The Lipschitz weights (LW) lower the local bound below Unweighted's.", k == N,
        f"at n = {n} the median Δ goes from {float(med.sel(synthesizer='Unweighted')):.2f} (Unweighted, not private) "
        f"to {float(med.sel(synthesizer='LW')):.2f} (LW): a local ε of {2 * float(med.sel(synthesizer='LW')):.2f} with "
        f"one record removed, {4 * float(med.sel(synthesizer='LW')):.2f} with one record replaced; lower in {k} of {N} "
        "replicate-and-n cases.",
        {"cases": N, "lower": k, "median_delta_unweighted": float(med.sel(synthesizer="Unweighted")),
         "median_delta_lw": float(med.sel(synthesizer="LW"))}))

    def within(prefix: str, key: str, claim: str, note: str) -> None:
        per = {t: _count(_le_lw(ds, f"{prefix}{t}")) for t in tags}
        k, N = sum(v[0] for v in per.values()), sum(v[1] for v in per.values())
        meds = {t: float(med.sel(synthesizer=f"{prefix}{t}")) for t in tags}
        ev = (f"$\\Delta \\le \\Delta_{{LW}}$ (same data) in {k} of {N} replicate-and-n cases; median Δ at n = {n}: "
              + ", ".join(f"{prefix}{t} {meds[t]:.2f}" for t in tags)
              + f" against LW {float(med.sel(synthesizer='LW')):.2f}. "
              + note)
        out.append(Verdict(key, claim, k == N, ev, {"cases": N, "within": k, "median_delta": meds,
                                                    "per_range": {t: v[0] for t, v in per.items()}}))

    within("A", "averaged_within_lw", "(A) knowledge weights: a public range gives a bound at most LW's "
           "($\\Delta_{\\alpha,\\lambda,x} \\le \\Delta_{\\alpha,x}$).",
           "The charged weight (1 − λ_i) α_i is at most α_i on every record, so only the Monte Carlo difference "
           "between the two fits could break it.")
    within("B", "literal_b_within_lw", "(B) range-truncated sensitivity, literal reading |α f − log P|: a public "
           "range gives a bound at most LW's ($\\Delta_{\\alpha,I,x} \\le \\Delta_{\\alpha,x}$).",
           "The weight shrinks f but not −log P, so a record with weight 0 keeps its −log P.")

    # why the literal reading can exceed LW
    exceed, attained, by_range_term = 0, 0, 0
    for t in tags:
        sub = ds.sel(synthesizer=f"B{t}")
        over = (~_le_lw(ds, f"B{t}")).values
        exceed += int(over.sum())
        attained += int((over & (sub["weight_at_max"] == 0).values).sum())
        by_range_term += int((over & (sub["neg_log_prob_at_max"] >= d.sel(synthesizer="LW")).values).sum())
    w0 = sum(int((ds["weight_at_max"].sel(synthesizer=f"B{t}") == 0).sum()) for t in tags)
    total = len(tags) * ds.sizes["replicate"] * len(ns)
    counts = {"cases": total, "exceed": exceed, "exceed_at_zero_weight": attained,
              "exceed_by_range_term": by_range_term, "attained_at_zero_weight": w0}
    out.append(Verdict(
        "literal_b_exceeds_by_range_term", "Where the literal (B) bound exceeds LW's, the range term "
        "−log P_θ(R_i) of the record attaining it alone exceeds LW's bound, and no weight can reduce it.",
        None if exceed == 0 else by_range_term == exceed,
        f"(B) exceeds LW in {exceed} of {total} cases; in {by_range_term} of them the attaining record's "
        "−log P_θ(R_i) alone is at least LW's Δ." if exceed else "(B) never exceeds LW here.", counts))
    out.append(Verdict(
        "literal_b_attained_by_zero_weight", "Where the literal (B) bound exceeds LW's, it is attained by a record "
        "with weight 0, so the bound is exactly that record's −log P_θ(R_i).",
        None if exceed == 0 else attained == exceed,
        (f"{attained} of the {exceed} cases in which (B) exceeds LW are attained by a weight-0 record (the others by a "
         f"record with a small positive weight); over all cases, {w0} of {total}.") if exceed else
        f"(B) never exceeds LW here; its bound is attained by a weight-0 record in {w0} of {total} cases.", counts))

    within("B'", "whole_term_within_lw", "(B') whole-term reading |α (f − log P)|: a public range gives a bound at "
           "most LW's.",
           "Each record's term is its weight times the unweighted truncated term |f − log P|, much smaller than "
           "|f| for outlying records.")

    if len(tags) >= 2:
        t_n, t_w = min(tags, key=_width), max(tags, key=_width)
        lam_n = ds["mean_lambda"].sel(synthesizer=f"A{t_n}")
        lam_w = ds["mean_lambda"].sel(synthesizer=f"A{t_w}")
        more = bool((lam_n > lam_w).all())
        lower = float(med.sel(synthesizer=f"A{t_n}")) < float(med.sel(synthesizer=f"A{t_w}"))
        out.append(Verdict(
            "narrower_range_buys_more", "A narrower (more informative) public range rules out more predictive mass "
            "and lowers the (A) bound more.", more and lower,
            f"mean λ at n = {n}: {float(lam_n.sel(n_obs=n).mean()):.2f} for {t_n} against "
            f"{float(lam_w.sel(n_obs=n).mean()):.2f} for {t_w} (larger in every case: {'yes' if more else 'no'}); "
            f"median $\\Delta_A$ {float(med.sel(synthesizer=f'A{t_n}')):.2f} against "
            f"{float(med.sel(synthesizer=f'A{t_w}')):.2f}.",
            {"narrow": t_n, "wide": t_w, "lambda_larger_everywhere": more, "delta_lower": lower}))
    else:
        out.append(Verdict("narrower_range_buys_more", "A narrower public range buys more.", None,
                           "only one range was run.", {}))

    def emed(m: str, v: str = "avg_ecdf") -> float:
        return float(ds[v].sel(n_obs=n, synthesizer=m).median())

    one = {t: emed(f"A{t}") <= emed("LW") for t in tags}
    mix = {t: emed(f"A{t}", "avg_ecdf_mixed") <= emed("LW", "avg_ecdf_mixed") for t in tags}
    out.append(Verdict(
        "averaged_utility_within_lw", "(A) puts weight λ_i back on every record, so its utility is at least LW's "
        "(median avg-ECDF at or below LW's).", all(one.values()),
        f"median avg-ECDF at n = {n} (one synthetic data set from one posterior draw): LW {emed('LW'):.4f}; "
        + ", ".join(f"A{t} {emed(f'A{t}'):.4f}" for t in tags) + ".",
        {"lw": emed("LW"), **{f"A{t}": emed(f"A{t}") for t in tags}}))
    out.append(Verdict(
        "utility_comparison_same_when_mixing", "The comparison of (A) with LW on avg-ECDF is the same whether each "
        "data set comes from one posterior draw or each record from its own draw.", one == mix,
        f"median avg-ECDF one draw vs mixed: LW {emed('LW'):.4f} vs {emed('LW', 'avg_ecdf_mixed'):.4f}; "
        + ", ".join(f"A{t} {emed(f'A{t}'):.4f} vs {emed(f'A{t}', 'avg_ecdf_mixed'):.4f}" for t in tags)
        + ". A mixed data set uses a median of "
        + f"{float(ds['n_draws_mixed'].sel(n_obs=n, synthesizer='LW').median()):.0f} "
        "distinct draws and would cost that many times the one-draw ε.",
        {"one_draw": one, "mixed": mix}))

    sp = _spread(ds).sel(synthesizer="LW")
    first, last = float(sp.sel(n_obs=ns[0])), float(sp.sel(n_obs=ns[-1]))
    R = ds.sizes["replicate"]
    out.append(Verdict(
        "bound_contracts", "The local bound of the weighted mechanisms settles as n grows (contraction, the "
        "argument behind aDP).", None if R < 3 else last < first + CENSOR_TOL,
        f"spread of LW's Δ over replicates (90th − 10th percentile) {first:.2f} at n = {ns[0]} and {last:.2f} at "
        f"n = {ns[-1]}" + (" (fewer than 3 replicates: undecided)." if R < 3 else f" ({R} replicates)."),
        {"spread_first": first, "spread_last": last, "replicates": R}))
    return out

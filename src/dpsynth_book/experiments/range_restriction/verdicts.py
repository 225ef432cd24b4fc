"""Verdicts of the range-restriction chapter, and the named numbers behind them and behind its prose.

:func:`verdicts` checks each claim of the chapter's "What this shows" on the study Dataset of
:func:`dpsynth_book.experiments.range_restriction.run` (or the results object).
:func:`convergence_summary` returns the numbers of the convergence paragraph, which the notebook's
Markdown quotes through glue (:func:`text_numbers`, :func:`dpsynth_book.book.glue_numbers`).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ...verdicts import Verdict, contraction_verdict
from .tables import _fit_names, _le_lw, _width, n_main, range_tags, study_of

__all__ = ["convergence_summary", "contraction_verdict_of", "contraction_numbers", "text_numbers", "verdicts"]


def convergence_summary(results) -> dict:
    """Counts for the convergence sentence: fits, failed fits, fits with divergences, warnings."""
    ds = study_of(results)
    sub = ds.sel(synthesizer=_fit_names(ds))
    conv, div = sub["converged"].values.astype(bool), sub["divergences"].values
    warn = int(ds["convergence_warnings"].sum()) if "convergence_warnings" in ds else 0
    return {"fits": int(conv.size), "not_converged": int((~conv).sum()), "fits_with_divergences": int((div > 0).sum()),
            "divergences": int(div.sum()), "convergence_warnings": warn,
            "not_converged_at_n": int((~ds["converged"].sel(n_obs=n_main(ds)).values.astype(bool)).sum())}


def contraction_verdict_of(results) -> Verdict:
    """The book's one contraction verdict (:func:`dpsynth_book.verdicts.contraction_verdict`) on LW's local bound."""
    ds = study_of(results)
    ns = [int(v) for v in ds["n_obs"].values]
    return contraction_verdict({n: ds["delta"].sel(n_obs=n, synthesizer="LW").values for n in ns},
                               who="LW", key="bound_contracts")


def contraction_numbers(results) -> dict:
    """What the contraction paragraph says: ``word`` (``"holds"``, ``"does not hold"`` or ``"is undecided"``),
    ``evidence`` (the verdict's evidence, MyST Markdown), the IQR and median of LW's Δ per n (``iqr``,
    ``median``: n -> value) and ``rises`` (how many steps of n at which the IQR does not fall)."""
    v = contraction_verdict_of(results)
    row = v.numbers["LW"]
    return {"word": {True: "holds", False: "does not hold", None: "is undecided"}[v.holds], "evidence": v.evidence,
            "iqr": dict(zip(row["n"], row["iqr"])), "median": dict(zip(row["n"], row["median"])),
            "rises": len(row["iqr_not_falling"])}


def text_numbers(results) -> dict:
    """Every number the chapter's Markdown quotes: ``convergence`` (:func:`convergence_summary`) and
    ``contraction`` (:func:`contraction_numbers`).

    The notebook glues them with ``dpsynth_book.book.glue_numbers("range", text_numbers(results))``: e.g.
    ``convergence_summary(results)["fits"]`` is the glue key ``range-convergence-fits``.
    """
    return {"convergence": convergence_summary(results), "contraction": contraction_numbers(results)}


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
        f"at n = {n} the median Δ goes from {float(med.sel(synthesizer='Unweighted')):.3g} (Unweighted, not private) "
        f"to {float(med.sel(synthesizer='LW')):.3g} (LW): a local ε of {2 * float(med.sel(synthesizer='LW')):.3g} with "
        f"one record removed, {4 * float(med.sel(synthesizer='LW')):.3g} with one record replaced; lower in {k} of {N} "
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
            {"narrow": t_n, "wide": t_w, "lambda_larger_everywhere": more, "delta_lower": lower,
             "mean_lambda_narrow": float(lam_n.sel(n_obs=n).mean()),
             "mean_lambda_wide": float(lam_w.sel(n_obs=n).mean())}))
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

    # the book's one contraction verdict (dpsynth_book.verdicts.contraction_verdict), on LW's local bound: its IQR over
    # data sets must fall at every step of n
    out.append(contraction_verdict_of(ds))
    return out

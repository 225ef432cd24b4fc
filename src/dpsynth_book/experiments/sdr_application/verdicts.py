"""Verdicts of the SDR application chapter, and the named numbers behind them and behind its prose.

:func:`verdicts` checks each claim of the chapter's "What this shows" against the results. The
``*_numbers`` functions return dicts of named numbers; :func:`text_numbers` collects those that the
chapter's Markdown cells quote through glue (:func:`dpsynth_book.book.glue_numbers`): the sentences are
written in the notebook, not here.
"""

from __future__ import annotations

import numpy as np

from dpsynth.privacy import CENSOR_TOL

from ... import plots
from ...studies import fitted
from ...verdicts import Verdict, contraction_verdict
from .replicate import PART1_NAMES, PART2_SYNTHESIZERS
from .tables import (
    PAPER_ORDER,
    RANKED,
    TABLE2_COLUMNS,
    _converged_part1,
    _mcmc,
    _paper_order_holds,
    cw_match,
    ranks,
    shown_replicate,
)

__all__ = ["ranking_numbers", "cw_match_numbers", "caveats_numbers", "text_numbers", "verdicts"]


def ranking_numbers(results) -> dict:
    """The fits behind the Table 2 ranking over the replicates, and how often the paper's order holds.

    Returns
    -------
    dict
        ``synthesizers`` (model-based ones ranked, fitted by MCMC) times ``replicates`` = ``fits``;
        ``failed`` fits of those and the replicates with one (``failed_replicates``);
        ``paper_order`` (the paper's avg-ECDF order as labels, best first), the replicates in which
        it holds (``holds``), those whose fits all converged (``clean``) and those of them in which
        it holds (``holds_clean``).
    """
    conv = _converged_part1(results)
    fits = [n for n in RANKED if _mcmc(results.part1.isel(replicate=0), n)]
    R = len(conv)
    holds = _paper_order_holds(results)
    clean = conv[list(PAPER_ORDER)].all(axis=1)
    return {"synthesizers": len(fits), "replicates": R, "fits": len(fits) * R,
            "failed": int((~conv[fits]).to_numpy().sum()), "failed_replicates": int((~conv[fits].all(axis=1)).sum()),
            "paper_order": ", ".join(plots.label(n) for n in PAPER_ORDER), "holds": int(holds.sum()),
            "clean": int(clean.sum()), "holds_clean": int((holds & clean).sum())}


def cw_match_numbers(results) -> dict:
    """In how many replicates CW's Delta is within the band below LW's.

    From :func:`~dpsynth_book.experiments.sdr_application.tables.cw_match`.

    Returns
    -------
    dict
        ``search`` (``"on"``: the CW radius is searched, ``"off"``: not), ``max_iter`` fits at most,
        ``tolerance`` (the band, relative), ``matched`` of ``replicates``, ``unmatched`` and
        ``unmatched_replicates``: replicate -> CW's and LW's Delta (``cw``, ``lw``) and ``gap``
        (``CW / LW - 1``; negative: CW below LW).
    """
    p = results.params
    m = cw_match(results)
    miss = m[~m.matched]
    return {"search": "on" if bool(p.cw_match) else "off", "max_iter": int(p.cw_max_iter),
            "tolerance": float(p.tol), "matched": int(m.matched.sum()), "replicates": len(m),
            "unmatched": len(miss),
            "unmatched_replicates": {int(r): {"cw": float(row["CW Δ"]), "lw": float(row["LW Δ"]),
                                              "gap": float(row["gap"])} for r, row in miss.iterrows()}}


def caveats_numbers(results) -> dict:
    """The values behind "why our numbers differ from the published ones".

    Returns
    -------
    dict
        ``source`` (``"the stand-in"`` or ``"the SDR file"``), Part 1's records ``n1`` (the paper does
        not state its n), the public salary bound ``salary_bound`` (dollars) and ``draws``, the
        pooled posterior draws the Lipschitz bounds are maxima over.
    """
    p = results.params
    return {"source": "the stand-in" if results.standin else "the SDR file", "n1": int(results.data1.n),
            "salary_bound": float(p.salary_bound), "draws": int(p.chains * p.draws)}


def text_numbers(results) -> dict:
    """Every number the chapter's Markdown quotes, by paragraph: ``ranking``, ``cw_match`` and ``caveats``.

    The notebook glues them with ``dpsynth_book.book.glue_numbers("sdr", text_numbers(results))``: e.g.
    ``ranking_numbers(results)["failed"]`` is the glue key ``sdr-ranking-failed``.
    """
    return {"ranking": ranking_numbers(results), "cw_match": cw_match_numbers(results),
            "caveats": caveats_numbers(results)}


def _frac(a) -> float:
    a = np.asarray(a, dtype=float)
    return float(np.mean(a)) if a.size else float("nan")


def verdicts(results) -> list[Verdict]:
    """Each claim of the chapter's "What this shows", checked against the results.

    Keys: ``censored_within_bound``, ``privacy_relations``, ``weighted_above_target``,
    ``weights_spare_censoring``, ``censor_w_beats_censor_uw``, ``histogram_last``,
    ``censor_uw_beats_ph_equal_budget``, ``mixed_sets_compose_eps``, ``reweighting_keeps_delta``,
    ``reweighting_raises_weights``, ``cw_gains_more``, ``table2_ranking``, ``all_fits_converged``,
    ``local_bound_contracts`` (the book's one contraction verdict on LW's bound over the replicates:
    undecided here, since every replicate has the same size).
    """
    p1, p2 = results.part1, results.part2
    f2 = fitted(p2)
    eps = float(results.params.eps)
    R1 = p1.sizes["replicate"]
    s1 = lambda v, n: p1[v].sel(synthesizer=n).values  # noqa: E731
    s2 = lambda v, n: p2[v].sel(synthesizer=n).values  # noqa: E731
    util = {n: _frac(s1("avg_ecdf", n)) for n in TABLE2_COLUMNS[1:]}
    fits = list(PART1_NAMES)
    out = []
    reps = "replicate" if R1 == 1 else f"mean over {R1} replicates"
    rep = shown_replicate(results)  # the replicate the page's single-run tables show
    one1, one2 = p1.isel(replicate=rep), p2.isel(replicate=rep)

    d_cens = np.concatenate([s1("delta", n) for n in ("Censor_w", "Censor_uw")])
    out.append(Verdict(
        "censored_within_bound", f"The censored mechanisms keep Δ ≤ ε/2 = {eps / 2:g} and report ε = {eps:g}.",
        bool(np.all(d_cens <= eps / 2 + CENSOR_TOL) and np.allclose(s1("eps", ["Censor_w", "Censor_uw"]), eps)),
        f"largest Δ of Censor_w and Censor_uw over {R1} replicate(s): {d_cens.max():.3f}.",
        {"delta_max": float(d_cens.max()), "bound": eps / 2}))

    unc = ["Unweighted", "LW", "Weighted-e"]
    rel = (np.allclose(s1("eps", unc), 2 * s1("delta", unc))
           and np.allclose(s1("eps_replace", fits), 2 * s1("eps", fits))
           and np.allclose(s1("eps", "PH"), eps) and np.allclose(s1("eps", "PH-paper"), eps / 2)
           and np.allclose(s1("eps_replace", "PH-paper"), eps)
           and np.allclose(f2.eps, f2.delta) and np.allclose(f2.eps_replace, 2 * f2.eps))
    out.append(Verdict(
        "privacy_relations", "ε is 2Δ with one record removed for the beta regression and Δ for the NB (its terms "
        "are ≤ 0); replacement doubles either; PH is at ε and PH-paper at ε/2 with one record removed.", bool(rel),
        f"checked on every fit of both parts; PH-paper: ε = {float(s1('eps', 'PH-paper')[0]):g} removed, "
        f"{float(s1('eps_replace', 'PH-paper')[0]):g} replaced.", {}))

    loc = {n: float(one1["eps_local"].sel(synthesizer=n)) for n in ("LW", "Weighted-e")}
    conv_w = all(bool(one1["converged"].sel(synthesizer=n)) for n in loc)
    above = all(v > eps for v in loc.values())
    out.append(Verdict(
        "weighted_above_target", f"LW and Weighted-e exceed the target: local 2Δ above {eps:g} "
        "(the paper: 5.24 and 5.22).", above if conv_w else None,
        f"local 2Δ {loc['LW']:.2f} (LW) and {loc['Weighted-e']:.2f} (Weighted-e), replicate {rep} (the tables')"
        + ("" if conv_w else "; a fit failed the convergence checks, so this is not established") + ".",
        dict(loc)))

    nc = {n: _frac(s1("n_censored", n)) for n in ("Censor_w", "Censor_uw")}
    out.append(Verdict(
        "weights_spare_censoring", "Lipschitz weights spare records from censoring: Censor_w censors fewer than "
        "Censor_uw.", nc["Censor_w"] < nc["Censor_uw"],
        f"records censored ({reps}): Censor_w {nc['Censor_w']:{'.0f' if R1 == 1 else '.1f'}}, Censor_uw "
        f"{nc['Censor_uw']:{'.0f' if R1 == 1 else '.1f'}} of "
        f"{results.data1.n}.", nc))

    out.append(Verdict(
        "censor_w_beats_censor_uw", "Censor_w has better utility (smaller avg-ECDF) than Censor_uw (the paper: "
        "0.0026 against 0.0039).", util["Censor_w"] < util["Censor_uw"],
        f"avg-ECDF ({reps}): Censor_w {util['Censor_w']:.4f}, Censor_uw {util['Censor_uw']:.4f}.",
        {k: util[k] for k in ("Censor_w", "Censor_uw")}))

    model = ["LW", "Weighted-e", "Censor_w", "Censor_uw"]
    worst_model = max(util[n] for n in model)
    out.append(Verdict(
        "histogram_last", "The papers' histogram (PH-paper) has the worst avg-ECDF of the private synthesizers.",
        util["PH-paper"] > worst_model,
        f"avg-ECDF ({reps}): PH-paper {util['PH-paper']:.4f}, worst model-based {worst_model:.4f}; "
        f"PH at the censored mechanisms' budget {util['PH']:.4f}.",
        {"PH-paper": util["PH-paper"], "PH": util["PH"], "worst_model": worst_model}))

    out.append(Verdict(
        "censor_uw_beats_ph_equal_budget", f"At equal budgets (ε = {eps:g}, one record removed) Censor_uw has better "
        "utility than the perturbed histogram.", util["Censor_uw"] < util["PH"],
        f"avg-ECDF ({reps}): Censor_uw {util['Censor_uw']:.4f}, PH {util['PH']:.4f} (PH-paper, at half the "
        f"budget, {util['PH-paper']:.4f}).", {k: util[k] for k in ("Censor_uw", "PH", "PH-paper")}))

    mixed = s1("eps_mixed", fits)
    one = s1("eps", fits)
    k_mix = float(np.nanmax(mixed / one))
    out.append(Verdict(
        "mixed_sets_compose_eps", "A set whose records each come from their own posterior draw (the papers' code) "
        "costs ε composed over the draws it used, more than a one-draw set.", bool(np.all(mixed > one)),
        f"in every replicate; in replicate {rep} (the tables') Censor_uw's mixed set cost "
        f"{float(one1['eps_mixed'].sel(synthesizer='Censor_uw')):,.0f} with one record removed against "
        f"{float(one1['eps'].sel(synthesizer='Censor_uw')):g} for one draw.",
        {"max_draws": k_mix, "avg_ecdf_mixed": {n: _frac(s1("avg_ecdf_mixed", n)) for n in model},
         "avg_ecdf_one_draw": {n: util[n] for n in model}}))

    keeps = {n: bool(np.all(s2("delta", f"{n}_final") <= s2("delta", n) * (1 + 1e-12))) for n in ("LW", "CW")}
    d2 = lambda n: float(one2["delta"].sel(synthesizer=n))  # noqa: E731
    out.append(Verdict(
        "reweighting_keeps_delta", "Re-weighting never raises Δ above its starting value.", all(keeps.values()),
        f"checked in each of {p2.sizes['replicate']} replicate(s); replicate {rep} (the tables'): "
        + ", ".join(f"{n} {d2(n):.3f} → {n}_final {d2(n + '_final'):.3f}" for n in keeps) + ".", keeps))

    mw_all = {n: p2["mean_weight"].sel(synthesizer=n).values for n in ("LW", "LW_final", "CW", "CW_final")}
    raised = (mw_all["LW_final"] >= mw_all["LW"]) & (mw_all["CW_final"] > mw_all["CW"])
    mw = {n: float(one2["mean_weight"].sel(synthesizer=n)) for n in mw_all}
    out.append(Verdict(
        "reweighting_raises_weights", "Re-weighting raises the weights (mean weight up from LW and CW).",
        bool(raised.all()),
        f"in {int(raised.sum())} of {raised.size} replicate(s); replicate {rep} (the tables'): mean weight LW "
        f"{mw['LW']:.3f} → {mw['LW_final']:.3f}, CW {mw['CW']:.3f} → {mw['CW_final']:.3f}.", mw))

    med_all = {s: np.median(p2["mean"].sel(synthesizer=s).values, axis=-1)
               for s in ("Data", "LW", "LW_final", "CW", "CW_final")}
    gain_cw = np.abs(med_all["CW"] - med_all["Data"]) - np.abs(med_all["CW_final"] - med_all["Data"])
    gain_lw = np.abs(med_all["LW"] - med_all["Data"]) - np.abs(med_all["LW_final"] - med_all["Data"])
    gains = (gain_cw > 0) & (gain_cw > gain_lw)
    med = {s: float(v[rep]) for s, v in med_all.items()}
    out.append(Verdict(
        "cw_gains_more", "Re-weighting improves CW's utility much more than LW's (mean salary closer to the data).",
        bool(gains.all()),
        f"in {int(gains.sum())} of {gains.size} replicate(s); replicate {rep} (the tables'), median mean salary of "
        f"the synthetic sets: CW \\${med['CW']:,.0f} → \\${med['CW_final']:,.0f}, LW \\${med['LW']:,.0f} → "
        f"\\${med['LW_final']:,.0f}.", med))

    holds = _paper_order_holds(results)
    clean = _converged_part1(results)[list(PAPER_ORDER)].all(axis=1)
    med = ranks(results, "avg_ecdf").median()
    order = sorted(PAPER_ORDER, key=lambda n: (med[n], util[n]))
    n_clean = int(clean.sum())
    verdict = (bool(holds[clean.to_numpy()].mean() > 0.5) if n_clean else None)
    out.append(Verdict(
        "table2_ranking", "The censoring paper's utility ranking holds: by avg-ECDF LW is best, then Weighted-e, "
        "Censor_w and Censor_uw, and the papers' histogram (PH-paper) is last.", verdict,
        (f"the order holds in {int((holds & clean).sum())} of the {n_clean} replicate(s) whose fits all converged "
         f"({int(holds.sum())} of {R1} in all)" if n_clean else f"the order holds in {int(holds.sum())} of {R1} "
         "replicate(s)") + "; by median rank over replicates: "
        + " < ".join(plots.label(n) for n in order)
        + ("" if n_clean else "; no replicate has all its fits converged, so this is not established") + ".",
        {"holds_in": int((holds & clean).sum()), "clean_replicates": n_clean, "replicates": R1,
         "median_rank": {n: float(med[n]) for n in PAPER_ORDER}}))

    c1 = p1.converged.sel(synthesizer=fits).values.ravel()
    c2 = f2.converged.values.ravel()
    bad = [f"Part 1 {plots.label(n)}" for n in fits if not np.all(s1("converged", n))]
    bad += [f"Part 2 {plots.label(n)}" for n in PART2_SYNTHESIZERS if not np.all(s2("converged", n))]
    out.append(Verdict(
        "all_fits_converged", "Every reported fit passed the convergence checks (R-hat, ESS, no divergences).",
        bool(c1.all() and c2.all()),
        f"{int((~c1).sum() + (~c2).sum())} fits failed over {R1} replicate(s)"
        + (f" ({', '.join(bad)}): their numbers are marked †" if bad else "") + ".",
        {"failed": int((~c1).sum() + (~c2).sum()), "fits": int(c1.size + c2.size)}))
    # the book's one contraction verdict: every replicate here has the same size, so it cannot decide
    out.append(contraction_verdict({int(results.data2.n): s2("delta", "LW")}, who="LW"))
    return out

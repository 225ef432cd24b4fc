"""Verdicts of the re-weighting chapter, and the named numbers behind them and behind its prose and captions.

:func:`verdicts` turns each claim of the chapter's "What this shows" into a
:class:`~dpsynth.verdicts.Verdict`, computed from a
:class:`~dpsynth.experiments.reweighting.ReweightingResults`. :func:`settings_numbers` and
:func:`caption_numbers` return the numbers that the notebook's Markdown (through glue,
:func:`dpsynth.book.glue_numbers`) and its figure and table captions quote; the sentences are
written in the notebook, not here.
"""

from __future__ import annotations

import numpy as np

from ... import registry
from ...metrics import interval_over_sets
from ...privacy import CENSOR_TOL, neighbours_phrase
from ...studies import fit_names, fitted
from ...synthetic_data import composed_eps
from ...verdicts import Verdict, contraction_verdict
from .tables import (
    DM_LABEL,
    PAPER_SW_ALPHA,
    PAPER_TABLE1,
    STAT_LABEL,
    TABLE1_SOURCES,
    contraction_table,
    data_value,
    table1,
    width_table,
)

__all__ = [
    "bias",
    "width_summary",
    "convergence_warnings",
    "settings_numbers",
    "caption_numbers",
    "text_numbers",
    "verdicts",
]


def bias(res, data_model: str, synthesizer: str, stat: str) -> float:
    """Mean over the synthetic sets (bootstrap resamples for "Data") of ``stat`` minus the confidential value."""
    m = res.synthesizers.sel(data_model=data_model)
    return float(m[stat].sel(synthesizer=synthesizer).mean()) - data_value(m, stat)


def _v(res, data_model: str, var: str, synthesizer: str) -> float:
    return float(res.synthesizers[var].sel(data_model=data_model, synthesizer=synthesizer))




def width_summary(res) -> dict:
    """Numbers behind the one-draw / mixed comparison on the mixture."""
    wt = width_table(res)
    t1 = table1(res)
    m = res.synthesizers.sel(data_model="nb_mixture")
    names = fit_names(m)
    ratio_by_syn = {}
    for nm in names:
        r = []
        for s in PAPER_TABLE1:
            a, b = (
                interval_over_sets(m[s].sel(synthesizer=nm).values),
                interval_over_sets(m[f"{s}_mixed"].sel(synthesizer=nm).values),
            )
            r.append((a[1] - a[0]) / (b[1] - b[0]) if b[1] > b[0] else np.nan)
        ratio_by_syn[nm] = float(np.nanmedian(r))
    shift = max(
        abs(float(m[s].sel(synthesizer=nm).mean()) - float(m[f"{s}_mixed"].sel(synthesizer=nm).mean()))
        for s in PAPER_TABLE1
        for nm in names
    )
    syn = list(TABLE1_SOURCES[1:])
    n_mixed = float(m.mixed_n_draws.sel(synthesizer=syn).mean())
    eps_lw = float(m.eps.sel(synthesizer="LW"))
    ratios = wt["ratio"].to_numpy(dtype=float)
    one_syn_ov = t1.drop(index="Data", level="source")["overlap"].to_numpy(dtype=bool)
    return {
        "median_ratio": float(np.nanmedian(ratios)),
        "min_ratio": float(np.nanmin(ratios)),
        "max_ratio": float(np.nanmax(ratios)),
        "paper_ratio_one": float(np.median(wt["width, one draw"] / wt["width, paper"])),
        "paper_ratio_mixed": float(np.median(wt["width, mixed"] / wt["width, paper"])),
        "overlap_one": int(one_syn_ov.sum()),
        "overlap_mixed": int(wt["mixed overlaps paper"].sum()),
        "n_intervals": int(len(wt)),
        "ratio_by_synthesizer": ratio_by_syn,
        "max_mean_shift": float(shift),
        "mixed_n_draws": n_mixed,
        "eps_lw": eps_lw,
        "eps_lw_mixed": composed_eps(eps_lw, max(1, int(round(n_mixed)))),
    }




def _trend(res, data_model: str, synthesizer: str, column: str) -> list[float]:
    t = contraction_table(res)
    return [
        float(t.loc[(DM_LABEL[data_model], registry.label(synthesizer), int(nn)), column])
        for nn in res.contraction.n.values
    ]




def convergence_warnings(res) -> int:
    """ConvergenceWarnings raised while the studies were computed (search fits included)."""
    n = 0
    for ds in (res.synthesizers, res.contraction):
        if "convergence_warnings" in ds:
            n += int(ds["convergence_warnings"].sum())
    return n




def settings_numbers(res) -> dict:
    """The parameter values in force (values, not parameter names), for the settings paragraph.

    Returns
    -------
    dict
        ``scale``, ``n``, ``draws``, ``tune``, ``chains``, ``synthetic_sets``, ``cw_ball``,
        ``cw_start_radius``, ``cw_search`` (``"on"``: the radius is searched to match LW's Delta
        within ``cw_tolerance``; ``"off"``: the start radius is kept), ``cw_tolerance``, ``k_start``,
        ``reweight_tolerance``; the appendix study's ``replicates`` (databases per size),
        ``sizes`` (the sample sizes as text, e.g. ``"250, 1000, 4000"``) and ``contraction_draws``;
        and ``seed``.
    """
    p = res.params
    return {"scale": str(p.scale), "n": int(p.n), "draws": int(p.draws), "tune": int(p.tune), "chains": int(p.chains),
            "synthetic_sets": int(p.synthetic_sets), "cw_ball": str(p.cw_ball),
            "cw_start_radius": float(p.cw_start_radius), "cw_search": "on" if p.cw_match_lw else "off",
            "cw_tolerance": float(p.cw_tolerance), "k_start": float(p.k_start),
            "reweight_tolerance": float(p.reweight_tolerance), "replicates": int(p.replicates),
            "sizes": ", ".join(str(int(v)) for v in p.sizes), "contraction_draws": int(p.contraction_draws),
            "seed": int(p.seed)}


def caption_numbers(res) -> dict:
    """The numbers the chapter's figure and table captions quote.

    Returns
    -------
    dict
        ``scale`` and ``synthetic_sets``; ``bounds``: per data model (``poisson``, ``nb_mixture``)
        the records ``n``, LW's and Unweighted's Delta (``delta_lw``, ``delta_unweighted``), CW's
        radius ``cw_radius`` and SW's weight ``sw_alpha``; ``mixture_bias``: per synthesizer
        (Unweighted, LW, CW, SW) the mean bias of the 15th and 90th percentile on the mixture
        (``q15``, ``q90``); on the mixture before re-weighting, the share of each of LW's and CW's
        records whose bound is under half its Delta (``below_half``); the re-weighting factors
        ``k`` of LW_final and CW_final; the share of records that lost weight by re-weighting
        (``lost_weight``, LW and CW) and the mean weights (``mean_weight``: LW, LW_final, CW,
        CW_final); the appendix study's ``databases`` per size at ``n`` records, LW's bounds there
        (``lw_range``: per data model ``min`` and ``max``) and its median Delta per size
        (``lw_median``: per data model, size -> median); ``not_converged`` reported fits and the
        ``convergence_warnings`` raised while computing.
    """
    p, m, c = res.params, res.synthesizers, res.contraction
    mn = m.sel(data_model="nb_mixture")
    lw = contraction_table(res).xs(registry.label("LW"), level="synthesizer")
    return {
        "scale": str(p.scale), "synthetic_sets": int(p.synthetic_sets), "n": int(p.n),
        "bounds": {str(dm): {"n": int(mm.x.size), "delta_lw": float(mm.delta.sel(synthesizer="LW")),
                             "delta_unweighted": float(mm.delta.sel(synthesizer="Unweighted")),
                             "cw_radius": float(mm.cw_radius), "sw_alpha": float(mm.sw_alpha.sel(synthesizer="SW"))}
                   for dm, mm in ((dm, m.sel(data_model=dm)) for dm in m.data_model.values)},
        "mixture_bias": {s: {"q15": bias(res, "nb_mixture", s, "q15"), "q90": bias(res, "nb_mixture", s, "q90")}
                         for s in ("Unweighted", "LW", "CW", "SW")},
        "below_half": {s: float(np.mean(mn.delta_i.sel(synthesizer=s).values
                                        < 0.5 * float(mn.delta.sel(synthesizer=s)))) for s in ("LW", "CW")},
        "k": {s: float(mn.k.sel(synthesizer=s)) for s in ("LW_final", "CW_final")},
        "lost_weight": {s: float(np.mean((mn.weight.sel(synthesizer=f"{s}_final") - mn.weight.sel(synthesizer=s)).values
                                         < -CENSOR_TOL)) for s in ("LW", "CW")},
        "mean_weight": {s: float(mn.mean_weight.sel(synthesizer=s)) for s in ("LW", "LW_final", "CW", "CW_final")},
        "databases": int(c.sizes["replicate"]),
        "lw_range": {dm: {k: float(lw.loc[(DM_LABEL[dm], p.n), k]) for k in ("min", "max")}
                     for dm in ("poisson", "nb_mixture")},
        "lw_median": {dm: dict(zip((int(v) for v in c.n.values), _trend(res, dm, "LW", "median Δ")))
                      for dm in ("poisson", "nb_mixture")},
        "not_converged": int((~fitted(m).converged.astype(bool)).sum()),
        "convergence_warnings": convergence_warnings(res),
    }


def text_numbers(res) -> dict:
    """Every number the chapter's Markdown and captions quote: ``settings`` (:func:`settings_numbers`) and
    ``captions`` (:func:`caption_numbers`).

    The notebook glues them with ``dpsynth.book.glue_numbers("reweighting", text_numbers(res))``:
    e.g. ``settings_numbers(res)["k_start"]`` is the glue key ``reweighting-settings-k-start``.
    """
    return {"settings": settings_numbers(res), "captions": caption_numbers(res)}

def verdicts(res) -> list[Verdict]:
    """The claims of the chapter's "What this shows", checked against the results."""
    m, c, p = res.synthesizers, res.contraction, res.params
    dms = [str(v) for v in m.data_model.values]
    lab = registry.label
    out = []

    # invariants of re-weighting
    rows = []
    for dm in dms:
        for nm in ("LW_final", "CW_final"):
            start = nm.replace("_final", "")
            rows.append(
                (
                    dm,
                    nm,
                    _v(res, dm, "delta_before", nm),
                    _v(res, dm, "delta_after", nm),
                    _v(res, dm, "delta", start),
                    _v(res, dm, "delta", nm),
                )
            )
    ok = all(np.isclose(d0, ds) and np.isclose(d1, df) and d1 <= d0 + CENSOR_TOL for _, _, d0, d1, ds, df in rows)
    worst = max(d1 / d0 for _, _, d0, d1, _, _ in rows)
    out.append(
        Verdict(
            "reweighting_never_raises_delta",
            "Re-weighting does not raise the local bound Δ.",
            bool(ok),
            f"Δ after / Δ before is at most {worst:.3f} over both data models and both starts (band: "
            f"{100 * p.reweight_tolerance:g}% below the start).",
            {"max_ratio": worst},
        )
    )
    mf, cf = fitted(m), fitted(c)
    w = mf.weight.values
    out.append(
        Verdict(
            "weights_in_unit_interval",
            "Every record weight lies in [0, 1].",
            bool(np.all((w >= 0) & (w <= 1))),
            f"weights range over [{w.min():.3f}, {w.max():.3f}].",
            {"min": float(w.min()), "max": float(w.max())},
        )
    )
    eq = bool(np.allclose(mf.eps, mf.delta) and np.allclose(mf.eps_replace, 2 * mf.eps))
    out.append(
        Verdict(
            "one_signed_window",
            "For these count models ε is Δ with one record removed (half the paper's 2Δ) and 2Δ with one replaced.",
            eq,
            "every Poisson and NB log-likelihood term is ≤ 0, so a record's term moves within [−Δ, 0], a window of "
            "width Δ; checked on every fit.",
            {},
        )
    )

    # weights control the bound
    lw_main = {dm: (_v(res, dm, "delta", "Unweighted"), _v(res, dm, "delta", "LW")) for dm in dms}
    lw_contr = bool(np.all(c.delta.sel(synthesizer="LW") < c.delta.sel(synthesizer="Unweighted")))
    out.append(
        Verdict(
            "lw_lowers_delta",
            "Lipschitz weights lower the local bound below the unweighted posterior's.",
            bool(all(b < a for a, b in lw_main.values()) and lw_contr),
            "; ".join(
                f"{DM_LABEL[dm]}: Δ {a:.3g} ({lab('Unweighted')}) → {b:.3g} ({lab('LW')}, ε_x = {b:.3g} with "
                f"{neighbours_phrase('remove')})"
                for dm, (a, b) in lw_main.items()
            )
            + f"; LW below Unweighted in every database of the appendix study: {'yes' if lw_contr else 'no'}.",
            {dm: {"unweighted": a, "lw": b} for dm, (a, b) in lw_main.items()},
        )
    )
    mw = {dm: (_v(res, dm, "mean_weight", "LW"), _v(res, dm, "mean_weight", "CW")) for dm in dms}
    out.append(
        Verdict(
            "cw_lower_mean_weight",
            "At a matched Δ, CW downweights more than LW (lower mean weight).",
            bool(all(cw < lw for lw, cw in mw.values())),
            "; ".join(
                f"{DM_LABEL[dm]}: mean weight LW {lw:.2f}, CW {cw:.2f} (Δ {_v(res, dm, 'delta', 'LW'):.2f} and "
                f"{_v(res, dm, 'delta', 'CW'):.2f})"
                for dm, (lw, cw) in mw.items()
            )
            + ".",
            {dm: {"lw": lw, "cw": cw} for dm, (lw, cw) in mw.items()},
        )
    )
    sd = {
        dm: float(m.mu_draw.sel(data_model=dm, synthesizer="SW").std())
        / float(m.mu_draw.sel(data_model=dm, synthesizer="LW").std())
        for dm in dms
    }
    out.append(
        Verdict(
            "sw_wider_posterior",
            "A scalar weight (SW) pays in posterior uncertainty: its posterior of μ is wider than LW's.",
            bool(all(v > 1 for v in sd.values())),
            "; ".join(
                f"{DM_LABEL[dm]}: SW's α = {_v(res, dm, 'sw_alpha', 'SW'):.3f}, posterior sd of μ {v:.1f}× LW's"
                for dm, v in sd.items()
            )
            + f" (the paper reports α ≈ {PAPER_SW_ALPHA:g} on the Poisson data).",
            {"sd_ratio": sd, "paper_alpha": PAPER_SW_ALPHA},
        )
    )

    # skewed data: tails
    b = {s: (bias(res, "nb_mixture", s, "q15"), bias(res, "nb_mixture", s, "q90")) for s in ("LW", "CW", "SW")}
    pois = max(abs(bias(res, "poisson", s, st)) for s in ("LW", "CW", "SW") for st in STAT_LABEL)
    out.append(
        Verdict(
            "skewed_tails_shortened",
            "On the skewed mixture the weighted synthesizers shorten the tails "
            "(15th percentile too high, 90th too low).",
            bool(all(lo > 0 and hi < 0 for lo, hi in b.values())),
            "mean bias of the 15th / 90th percentile: "
            + ", ".join(f"{lab(s)} {lo:+.1f} / {hi:+.1f}" for s, (lo, hi) in b.items())
            + f"; on the Poisson data every bias of LW, CW and SW is within {pois:.1f}.",
            {"mixture": b, "poisson_max_abs": pois},
        )
    )

    # re-weighting
    lift, tail = {}, {}
    for s in ("LW", "CW"):
        lift[s] = (_v(res, "nb_mixture", "mean_weight", s), _v(res, "nb_mixture", "mean_weight", f"{s}_final"))
        tail[s] = (
            abs(bias(res, "nb_mixture", s, "q15")) + abs(bias(res, "nb_mixture", s, "q90")),
            abs(bias(res, "nb_mixture", f"{s}_final", "q15")) + abs(bias(res, "nb_mixture", f"{s}_final", "q90")),
        )
    out.append(
        Verdict(
            "reweighting_lifts_weights",
            "Re-weighting raises the mean weight (mixture).",
            bool(all(a >= b0 for b0, a in lift.values())),
            "; ".join(
                f"{s}: {b0:.2f} → {a:.2f} (k = {_v(res, 'nb_mixture', 'k', f'{s}_final'):.3g})"
                for s, (b0, a) in lift.items()
            )
            + ".",
            {"mean_weight": lift},
        )
    )
    out.append(
        Verdict(
            "reweighting_cw_reduces_tail_bias",
            "Re-weighting CW moves its tails back onto the data's (mixture).",
            bool(tail["CW"][1] < tail["CW"][0]),
            "|bias| of the 15th plus the 90th percentile: "
            + "; ".join(f"{lab(s)} {b0:.1f} → {lab(s + '_final')} {a:.1f}" for s, (b0, a) in tail.items())
            + f" (differences of the size of {width_summary(res)['max_mean_shift']:.1f}, how far the "
            f"centres move between "
            f"one-draw and mixed synthesis, are Monte Carlo noise).",
            {"tail_bias": tail, "mean_shift": width_summary(res)["max_mean_shift"]},
        )
    )

    # one draw per set
    ws = width_summary(res)
    out.append(
        Verdict(
            "one_draw_wider_than_mixed",
            "Intervals over one-draw synthetic sets are wider than over record-wise mixed sets.",
            bool(ws["median_ratio"] > 1.1),
            f"median width ratio {ws['median_ratio']:.1f}× (range {ws['min_ratio']:.1f}–{ws['max_ratio']:.1f}×) on the "
            f"mixture; a mixed set used {ws['mixed_n_draws']:.0f} distinct draws on average, so its ε is about "
            f"{ws['eps_lw_mixed']:.0f} for LW instead of {ws['eps_lw']:.2f} ({neighbours_phrase('remove')}).",
            {k: ws[k] for k in ("median_ratio", "min_ratio", "max_ratio", "mixed_n_draws", "eps_lw", "eps_lw_mixed")},
        )
    )
    out.append(
        Verdict(
            "intervals_overlap_paper",
            "Our 95% intervals agree with the paper's Table 1 (they overlap).",
            bool(ws["overlap_one"] >= ws["n_intervals"] / 2),
            f"{ws['overlap_one']} of {ws['n_intervals']} synthesizer intervals overlap the published ones "
            f"(record-wise mixed: {ws['overlap_mixed']}); our widths are {ws['paper_ratio_one']:.2f}× the paper's "
            f"(mixed: {ws['paper_ratio_mixed']:.2f}×).",
            {k: ws[k] for k in ("overlap_one", "overlap_mixed", "n_intervals", "paper_ratio_one", "paper_ratio_mixed")},
        )
    )

    # local to global: the book's one contraction verdict (dpsynth.verdicts.contraction_verdict)
    out.append(contraction_verdict(
        {DM_LABEL[dm]: {int(nn): c["delta"].sel(data_model=dm, n=nn, synthesizer="LW").values for nn in c.n.values}
         for dm in dms}, who="LW", key="local_bound_contracts"))
    bad_m, bad_c = int((~mf.converged.astype(bool)).sum()), int((~cf.converged.astype(bool)).sum())
    fits_m, fits_c = int(mf.converged.size), int(cf.converged.size)
    bad, total = bad_m + bad_c, fits_m + fits_c
    out.append(
        Verdict(
            "fits_converged",
            "Every reported fit passed its R-hat, bulk-ESS and divergence checks.",
            bad == 0,
            f"{bad_m} of {fits_m} reported fits of Sections 3–4 and {bad_c} of {fits_c} fits of the appendix study "
            "did not converge"
            + (
                "."
                if bad == 0
                else "; their Δ and ε are reported, flagged, as Monte Carlo estimates from a sampler that "
                "failed its checks."
            ),
            {"not_converged": bad, "fits": total, "sections": (bad_m, fits_m), "appendix": (bad_c, fits_c)},
        )
    )
    return out

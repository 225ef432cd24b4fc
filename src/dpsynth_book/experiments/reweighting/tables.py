"""Tables of the re-weighting chapter, computed from :func:`run`'s results.

Every function takes a :class:`~dpsynth_book.experiments.reweighting.ReweightingResults` (anything with
``params``, ``synthesizers`` and ``contraction``). Both results have one synthesizer dimension,
``synthesizer``, whose coordinate starts with "Data" (the confidential data; not a fit, ``is_fit``
false): statistics of the fits only use :func:`fitted`. Tables use registry labels and at most seven
columns. The verdicts and the numbers the chapter's prose and captions quote are in
:mod:`dpsynth_book.experiments.reweighting.verdicts`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpsynth import registry
from dpsynth.metrics import interval_over_sets
from dpsynth.privacy import eps_from_delta

from ...studies import fit_names, fitted  # noqa: F401  (part of this module's API)

__all__ = [
    "DM_LABEL",
    "STAT_LABEL",
    "PAPER_TABLE1",
    "TABLE1_SOURCES",
    "data_value",
    "fit_names",
    "fitted",
    "fits_table",
    "reweighting_table",
    "table1",
    "width_table",
    "contraction_table",
    "convergence_table",
    "PAPER_SW_ALPHA",
    "verdict_numbers_table",
]

#: Display names of the generating models.
DM_LABEL = {"poisson": "Poisson(100)", "nb_mixture": "NB mixture"}
#: Display names of the summary statistics.
STAT_LABEL = {"q15": "15th percentile", "q90": "90th percentile", "mean": "mean", "median": "median"}
#: The re-weighting paper's appendix Table 1 (negative binomial mixture): published 95% intervals.
PAPER_TABLE1 = {
    "q15": {
        "Data": (70.0, 75.0),
        "LW": (70.0, 74.3),
        "LW_final": (70.6, 74.8),
        "CW": (77.2, 80.8),
        "CW_final": (71.6, 75.8),
    },
    "q90": {
        "Data": (132.0, 140.0),
        "LW": (132.1, 139.0),
        "LW_final": (133.1, 140.3),
        "CW": (128.5, 134.0),
        "CW_final": (131.0, 137.7),
    },
    "mean": {
        "Data": (98.8, 102.3),
        "LW": (98.0, 101.4),
        "LW_final": (98.7, 102.0),
        "CW": (100.6, 103.3),
        "CW_final": (98.6, 101.8),
    },
    "median": {
        "Data": (96.0, 101.0),
        "LW": (95.6, 99.7),
        "LW_final": (96.0, 100.0),
        "CW": (98.7, 102.4),
        "CW_final": (96.1, 100.1),
    },
}
#: The scalar weight the paper reports for SW on the Poisson data (Section 3.1).
PAPER_SW_ALPHA = 0.375
#: Rows ("Data" and synthesizers) of the paper's Table 1.
TABLE1_SOURCES = ("Data", "LW", "LW_final", "CW", "CW_final")


def _fmt_iv(iv) -> str:
    return f"[{iv[0]:.1f}, {iv[1]:.1f}]"


def _overlap(a, b) -> bool:
    return max(a[0], b[0]) <= min(a[1], b[1])




def data_value(ds, stat: str) -> float:
    """A summary statistic of the confidential records ``ds.x``."""
    x = np.asarray(ds["x"].values, dtype=float)
    if stat == "mean":
        return float(x.mean())
    return float(np.quantile(x, {"q15": 0.15, "q90": 0.90, "median": 0.5}[stat]))




def fits_table(res) -> pd.DataFrame:
    """Per data model and synthesizer: Delta, eps under both relations, mean weight, convergence."""
    rows = []
    ds = res.synthesizers
    for dm in ds.data_model.values:
        for nm in fit_names(ds):
            r = ds.sel(data_model=dm, synthesizer=nm)
            rows.append(
                {
                    "data": DM_LABEL[str(dm)],
                    "synthesizer": registry.label(str(nm)),
                    "Δ": float(r.delta),
                    "ε (remove)": float(r.eps),
                    "ε (replace)": float(r.eps_replace),
                    "mean weight": float(r.mean_weight),
                    "converged": bool(r.converged),
                    "divergences": int(r.divergences),
                }
            )
    return pd.DataFrame(rows).set_index(["data", "synthesizer"])


def reweighting_table(res) -> pd.DataFrame:
    """Per data model, for LW_final and CW_final: k, Delta before/after, fits, an independent refit's Delta."""
    rows = []
    ds = res.synthesizers
    for dm in ds.data_model.values:
        for nm in ("LW_final", "CW_final"):
            r = ds.sel(data_model=dm, synthesizer=nm)
            rows.append(
                {
                    "data": DM_LABEL[str(dm)],
                    "synthesizer": registry.label(nm),
                    "k": float(r.k),
                    "Δ before": float(r.delta_before),
                    "Δ after": float(r.delta_after),
                    "fits (search)": int(r.n_fits),
                    "Δ, independent refit": float(r.delta_refit),
                    "refit converged": bool(r.refit_converged),
                }
            )
    return pd.DataFrame(rows).set_index(["data", "synthesizer"])


def _intervals(res, mixed: bool = False) -> dict:
    m = res.synthesizers.sel(data_model="nb_mixture")
    out = {}
    for s in PAPER_TABLE1:
        out[s] = {}
        for src in TABLE1_SOURCES:
            if mixed and src == "Data":
                continue
            v = m[f"{s}_mixed"].sel(synthesizer=src) if mixed else m[s].sel(synthesizer=src)
            out[s][src] = interval_over_sets(v.values)
    return out


def table1(res) -> pd.DataFrame:
    """Our 95% intervals on the mixture (one-draw sets; bootstrap for Data) beside the paper's Table 1."""
    ours = _intervals(res)
    rows = [
        {
            "statistic": STAT_LABEL[s],
            "source": registry.label(src) if src != "Data" else "Data",
            "ours": _fmt_iv(ours[s][src]),
            "paper": _fmt_iv(PAPER_TABLE1[s][src]),
            "overlap": _overlap(ours[s][src], PAPER_TABLE1[s][src]),
        }
        for s in PAPER_TABLE1
        for src in TABLE1_SOURCES
    ]
    return pd.DataFrame(rows).set_index(["statistic", "source"])


def width_table(res) -> pd.DataFrame:
    """Interval widths on the mixture: one draw per set against record-wise mixed sets and the paper."""
    one, mix = _intervals(res), _intervals(res, mixed=True)
    rows = []
    for s in PAPER_TABLE1:
        for src in TABLE1_SOURCES[1:]:
            w1, wm = one[s][src][1] - one[s][src][0], mix[s][src][1] - mix[s][src][0]
            wp = PAPER_TABLE1[s][src][1] - PAPER_TABLE1[s][src][0]
            rows.append(
                {
                    "statistic": STAT_LABEL[s],
                    "synthesizer": registry.label(src),
                    "mixed": _fmt_iv(mix[s][src]),
                    "width, one draw": w1,
                    "width, mixed": wm,
                    "ratio": w1 / wm if wm > 0 else float("nan"),
                    "width, paper": wp,
                    "mixed overlaps paper": _overlap(mix[s][src], PAPER_TABLE1[s][src]),
                }
            )
    return pd.DataFrame(rows).set_index(["statistic", "synthesizer"])




def contraction_table(res) -> pd.DataFrame:
    """Spread of the local bound over the databases, per data model, synthesizer and sample size."""
    c = res.contraction
    rows = []
    for dm in c.data_model.values:
        for nm in ("Unweighted", "LW"):
            for nn in c.n.values:
                d = c.delta.sel(data_model=dm, n=nn, synthesizer=nm).values
                q25, q50, q75 = np.quantile(d, [0.25, 0.5, 0.75])
                rows.append(
                    {
                        "data": DM_LABEL[str(dm)],
                        "synthesizer": registry.label(nm),
                        "n": int(nn),
                        "median Δ": q50,
                        "min": d.min(),
                        "max": d.max(),
                        "max − min": d.max() - d.min(),
                        "IQR": q75 - q25,
                        # Poisson and NB terms are <= 0: a window of width Delta
                        "max $\\varepsilon_x$ (remove)": eps_from_delta(d.max(), "remove", one_signed=True),
                    }
                )
    return pd.DataFrame(rows).set_index(["data", "synthesizer", "n"])




def convergence_table(res) -> pd.DataFrame:
    """Fits, non-converged fits, divergences, worst R-hat and smallest bulk ESS per study."""
    m, c = fitted(res.synthesizers), fitted(res.contraction)
    refit = m.delta_refit.notnull()
    rows = [
        {
            "study": "Sections 3–4 (reported fits)",
            "fits": int(m.converged.size),
            "not converged": int((~m.converged.astype(bool)).sum()),
            "fits with divergences": int((m.divergences > 0).sum()),
            "divergences": int(m.divergences.sum()),
            "worst R-hat": float(m.rhat_max.max()),
            "smallest bulk ESS": float(m.ess_min.min()),
        },
        {
            "study": "Sections 3–4 (independent refits)",
            "fits": int(refit.sum()),
            "not converged": int((refit & ~m.refit_converged.astype(bool)).sum()),
            "fits with divergences": int((m.refit_divergences > 0).sum()),
            "divergences": int(m.refit_divergences.sum()),
            "worst R-hat": float("nan"),
            "smallest bulk ESS": float("nan"),
        },
        {
            "study": "appendix contraction",
            "fits": int(c.converged.size),
            "not converged": int((~c.converged.astype(bool)).sum()),
            "fits with divergences": int((c.divergences > 0).sum()),
            "divergences": int(c.divergences.sum()),
            "worst R-hat": float(c.rhat_max.max()),
            "smallest bulk ESS": float(c.ess_min.min()),
        },
    ]
    return pd.DataFrame(rows).set_index("study")


def verdict_numbers_table(verdicts) -> pd.DataFrame:
    """The figures the verdicts quote that the chapter's other tables do not show, as the verdicts write them.

    Parameters
    ----------
    verdicts : list of dpsynth_book.verdicts.Verdict
        :func:`dpsynth_book.experiments.reweighting.verdicts` of the results, in the page's order.

    Returns
    -------
    pandas.DataFrame
        :func:`dpsynth_book.verdicts.quoted_numbers_table`: indexed by the verdict's number and the figure,
        one column ``value``: the largest Δ after / Δ before of re-weighting, the range of the
        weights, the bias of the Poisson percentiles (the paper's Figure 2a) in units and in standard
        deviations of the confidential statistic, SW's posterior sd against LW's and the paper's SW
        weight, the mean bias of the 15th and 90th percentiles on the mixture and the largest on the
        Poisson data, the tail bias before and after re-weighting and the largest shift of a mean
        between one-draw and mixed sets, the width ratios, the draws and ε of a mixed set, and LW's
        median and maximum Δ at the paper's n against its bound with the databases above it.
    """
    from ...verdicts import quoted_numbers_table

    n = {v.key: v.numbers for v in verdicts}
    lab = registry.label
    fig: dict = {}
    if "reweighting_never_raises_delta" in n:
        worst = n["reweighting_never_raises_delta"]["max_ratio"]
        fig["reweighting_never_raises_delta"] = [("largest Δ after / Δ before", f"{worst:.3f}")]
    if "weights_in_unit_interval" in n:
        w = n["weights_in_unit_interval"]
        fig["weights_in_unit_interval"] = [("smallest and largest weight", f"{w['min']:.3f}, {w['max']:.3f}")]
    if "cw_quantiles_biased" in n:
        q = n["cw_quantiles_biased"]
        fig["cw_quantiles_biased"] = [(f"bias of 15th / 90th pct, {lab(s)} (Poisson)",
                                       f"{q['bias'][s]['q15']:+.2f} / {q['bias'][s]['q90']:+.2f} "
                                       f"({q['in_sd'][s]['q15']:+.1f} / {q['in_sd'][s]['q90']:+.1f} sd)")
                                      for s in ("LW", "CW", "SW")]
        fig["cw_quantiles_biased"].append(("sd of the confidential 15th / 90th pct (Poisson)",
                                           f"{q['data_sd']['q15']:.2f} / {q['data_sd']['q90']:.2f}"))
    if "sw_wider_posterior" in n:
        sw = n["sw_wider_posterior"]
        fig["sw_wider_posterior"] = [(f"posterior sd of μ, SW / LW ({DM_LABEL.get(dm, dm)})", f"{v:.1f}×")
                                     for dm, v in sw["sd_ratio"].items()]
        fig["sw_wider_posterior"].append(("SW's α in the paper (Poisson)", f"{sw['paper_alpha']:g}"))
    if "skewed_tails_shortened" in n:
        t = n["skewed_tails_shortened"]
        fig["skewed_tails_shortened"] = [(f"bias of 15th / 90th pct, {lab(s)}", f"{lo:+.1f} / {hi:+.1f}")
                                         for s, (lo, hi) in t["mixture"].items()]
        fig["skewed_tails_shortened"].append(("largest |bias|, Poisson data", f"{t['poisson_max_abs']:.1f}"))
    if "reweighting_cw_reduces_tail_bias" in n:
        fig["reweighting_cw_reduces_tail_bias"] = [
            (f"|bias| 15th + 90th pct, {lab(s)} → {lab(s + '_final')}", f"{b0:.1f} → {a:.1f}")
            for s, (b0, a) in n["reweighting_cw_reduces_tail_bias"]["tail_bias"].items()]
        fig["reweighting_cw_reduces_tail_bias"].append(
            ("largest shift of a mean, one draw − mixed", f"{n['reweighting_cw_reduces_tail_bias']['mean_shift']:.1f}"))
    if "one_draw_wider_than_mixed" in n:
        w = n["one_draw_wider_than_mixed"]
        fig["one_draw_wider_than_mixed"] = [("width ratio, one draw / mixed (median)", f"{w['median_ratio']:.1f}×"),
                                            ("distinct draws per mixed set (mean)", f"{w['mixed_n_draws']:.0f}"),
                                            ("LW's ε, one draw (mixture)", f"{w['eps_lw']:.2f}"),
                                            ("LW's ε, a mixed set", f"{w['eps_lw_mixed']:.0f}")]
    if "intervals_overlap_paper" in n:
        o = n["intervals_overlap_paper"]
        fig["intervals_overlap_paper"] = [("width / paper's (median), one draw", f"{o['paper_ratio_one']:.2f}×"),
                                          ("width / paper's (median), mixed", f"{o['paper_ratio_mixed']:.2f}×")]
    if n.get("local_bound_matches_paper", {}).get("per_model"):
        pb = n["local_bound_matches_paper"]
        fig["local_bound_matches_paper"] = [
            (f"LW's median / maximum Δ at n = {pb['n']}, {DM_LABEL.get(dm, dm)} (paper's bound {r['bound']:g})",
             f"{r['median']:.2f} / {r['max']:.2f} ({r['median_vs_bound']:+.0%} / {r['max_vs_bound']:+.0%})")
            for dm, r in pb["per_model"].items()]
        fig["local_bound_matches_paper"] += [
            (f"databases above the paper's bound, {DM_LABEL.get(dm, dm)}", f"{r['above']} of {r['datasets']}")
            for dm, r in pb["per_model"].items()]
    return quoted_numbers_table(verdicts, fig)

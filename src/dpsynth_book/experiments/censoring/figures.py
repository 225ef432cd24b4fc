"""Figures of the censoring chapter.

Each function takes the chapter's results (or one of its Datasets) and returns the Axes it drew on
(an array for multi-panel figures), creating a figure when none is given. Names, colours and
labels come from :mod:`dpsynth.registry`; every figure stays legible in the book's text column.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from scipy import stats

from dpsynth import registry
from dpsynth.figure_style import PALETTE

from ... import plots, presentation
from .reference import DEFAULT, DP_MEDIAN, HISTORICAL, variant_settings
from .replicate import DOWNSCALE_NAMES, MIX_NAMES, true_stats
from .tables import _eps_grid, _shown, reference_label, values

__all__ = ["downscale_captions", "posterior_figure", "bounds_figure", "threshold_figure", "ecdf_figure",
           "mixing_figure", "percentile_figure", "downscale_figure", "downscale_utility_figure", "reference_style",
           "reference_figure", "STAT_LABELS"]

#: Axis labels of the utility statistics.
STAT_LABELS = {"max_ecdf": "max-ECDF", "avg_ecdf": "avg-ECDF", "mean": "mean", "median": "median",
               "q15": "15th percentile", "q90": "90th percentile"}

_MAX_W = 9.0  # inches: at dpi 110 the 9-pt tick labels stay >= 9 px in a 660-px column


def _grid(axes, n: int, *, ncols: int = 2, height: float = 3.6, sharey=True):
    if axes is not None:
        return np.atleast_1d(axes)
    plots.use_style()
    ncols = min(ncols, n)
    nrows = int(np.ceil(n / ncols))
    fig, ax = plt.subplots(nrows, ncols, figsize=(min(_MAX_W, 4.5 * ncols), height * nrows), sharey=sharey,
                           squeeze=False)
    flat = ax.ravel()
    for extra in flat[n:]:
        extra.set_visible(False)
    return flat[:n]


def _panels(study, var, names, eps):
    return {k: values(study, var, k, eps) for k in _shown(study, names)}


def posterior_figure(figure1, axes=None):
    """Prior (Uniform(0, 1)), posterior and censored posterior of ``phi`` on one data set; right: centred."""
    f = figure1.isel(replicate=0) if "replicate" in figure1.dims else figure1
    ax = _grid(axes, 2, sharey=False)
    post = f["phi"].sel(synthesizer="Unweighted").values
    cens = f["phi"].sel(synthesizer="Censor_uw").values
    samples = {"posterior": (post, plots.color("Unweighted"), "-"),
               "censored posterior": (cens, plots.color("Censor_uw"), "--")}
    both = np.concatenate([post, cens])
    lo, hi = np.quantile(both, 5e-4), np.quantile(both, 1 - 5e-4)
    grid = np.linspace(lo - 0.1 * (hi - lo), hi + 0.1 * (hi - lo), 400)
    half = 4 * max(post.std(), cens.std())
    cgrid = np.linspace(-half, half, 400)
    for a, g, centred in ((ax[0], grid, False), (ax[1], cgrid, True)):
        a.plot(g, np.where((g >= 0) & (g <= 1), 1.0, 0.0) if not centred else np.ones_like(g), color="#7f7f7f", ls=":",
               label="prior")
        for k, (v, col, ls) in samples.items():
            a.plot(g, stats.gaussian_kde(v - v.mean() if centred else v)(g), color=col, ls=ls, label=k)
        a.set_ylabel("density")
        a.legend(loc="upper right")
    ax[0].set_xlabel("$\\phi$ (mean of the Beta model)")
    ax[0].set_title("on the parameter's scale")
    ax[1].set_xlabel("$\\phi$ minus its mean")
    ax[1].set_title("centred at each mean")
    return ax


def bounds_figure(results, axes=None, *, unweighted: bool = False):
    """Lipschitz bound Delta per synthesizer and eps (one record removed), eps/2 dashed."""
    study = results.study
    grid = _eps_grid(study)
    names = (["Unweighted"] if unweighted else []) + ["LW", "Weighted-e", "Censor_w", "Censor_w-pub", "Censor_uw"]
    ax = _grid(axes, len(grid), height=3.8)
    for a, eps in zip(ax, grid):
        plots.violins(a, _panels(study, "delta", names, eps), ylabel="Lipschitz bound $\\Delta$", hline=eps / 2,
                      hline_label="$\\varepsilon/2$", title=f"$\\varepsilon$ = {eps:g} (one record removed)")
    return ax


def threshold_figure(results, axes=None):
    """Left: Unweighted and LW Delta against -log(min x)/2. Right: Weighted-e truncations by LW Delta."""
    study = results.study
    ax = _grid(axes, 2, sharey=False)
    xmin = study["x_min"].values.ravel()
    for k, var in (("Unweighted", "delta_unweighted"), ("LW", "delta_weighted")):
        ax[0].scatter(-0.5 * np.log(xmin), study[var].values.ravel(), s=14, color=plots.color(k), label=plots.label(k))
    ax[0].set_xlabel("$-\\frac{1}{2}\\log x_{(1)}$ (smallest record)")
    ax[0].set_ylabel("Lipschitz bound $\\Delta$")
    ax[0].legend()
    wd = study["delta_weighted"].values.ravel()
    for eps, mk in zip(_eps_grid(study), "os^vD"):
        ax[1].scatter(wd, values(study, "n_truncated", "Weighted-e", eps), s=14, marker=mk,
                      label=f"$\\varepsilon$ = {eps:g}")
        ax[1].axvline(eps / 2, ls="--", lw=0.8, color="black")
    ax[1].set_xlabel("LW $\\Delta$ of the replicate")
    ax[1].set_ylabel("records truncated (Weighted-e)")
    ax[1].legend()
    return ax


def ecdf_figure(results, axes=None, *, measure: str = "max_ecdf"):
    """max-ECDF or avg-ECDF (log axis) of one synthetic data set per synthesizer, replicate and eps."""
    study = results.study
    grid = _eps_grid(study)
    names = ["LW", "Weighted-e", "Censor_w", "Censor_w-pub", "Censor_uw", "PH", "PH-paper"]
    lab = {"max_ecdf": "max-ECDF", "avg_ecdf": "avg-ECDF"}[measure]
    ax = _grid(axes, len(grid), height=3.8)
    for a, eps in zip(ax, grid):
        plots.violins(a, _panels(study, measure, names, eps), ylabel=lab,
                      title=f"$\\varepsilon$ = {eps:g} (one record removed)")
        if measure == "avg_ecdf":
            a.set_yscale("log")
    return ax


def mixing_figure(results, axes=None):
    """One draw per data set (filled) against record-wise mixing (open): max-ECDF and eps of the release."""
    p, study = results.params, results.study
    names = presentation.order(_shown(study, MIX_NAMES))
    ax = _grid(axes, 2, sharey=False, height=4.0)
    for j, k in enumerate(names):
        for a, (one, mixed) in zip(ax, (("max_ecdf", "mix_max_ecdf"), ("eps_remove", "mix_eps"))):
            for var, off, mk in ((one, -0.15, "o"), (mixed, 0.15, "s")):
                y = values(study, var, k, p.mix_eps)
                a.scatter(np.full(y.size, j + off), y, s=18, marker=mk, color=plots.color(k),
                          facecolors="none" if var == mixed else plots.color(k))
    for a in ax:
        a.set_xticks(range(len(names)), [registry.label(k) for k in names], rotation=20, ha="right")
    ax[0].set_ylabel("max-ECDF")
    ax[0].set_title(f"utility at $\\varepsilon$ = {p.mix_eps:g}")
    ax[1].set_yscale("log")
    ax[1].set_ylabel("$\\varepsilon$ of the release (removed;\nlocal $\\varepsilon_x$ for aDP)")
    ax[1].set_title("privacy cost")
    return ax


def percentile_figure(results, axes=None, *, stat: str = "median"):
    """Mean, median, 15th or 90th percentile of one synthetic data set per synthesizer, with the true value.

    Data (the confidential data) and Unweighted (none; the model's fit without any privacy
    mechanism, the same values in every panel) are shown beside the synthesizers, so that model
    misfit (Unweighted away from the line) and the mechanisms' own bias can be told apart.
    """
    if stat not in ("mean", "median", "q15", "q90"):
        raise ValueError(f"`stat` must be 'mean', 'median', 'q15' or 'q90'; got {stat!r}.")
    study = results.study
    grid = _eps_grid(study)
    lab = STAT_LABELS[stat]
    names = ["Data", "Unweighted", "LW", "Weighted-e", "Censor_w", "Censor_w-pub", "Censor_uw", "PH", "PH-paper"]
    ax = _grid(axes, len(grid), height=3.8)
    truth = true_stats()[stat]
    for j, (a, eps) in enumerate(zip(ax, grid)):
        plots.violins(a, _panels(study, stat, names, eps), ylabel=lab, hline=truth,
                      hline_label="Beta(0.5, 3)" if j == 0 else None, title=f"$\\varepsilon$ = {eps:g}")
        for t in a.get_xticklabels():  # nine labels in a half-width panel: steeper, so they do not overlap
            t.set_rotation(40)
            t.set_horizontalalignment("right")
    return ax


def downscale_figure(results, axes=None):
    """LW, Weighted-e and Censor_w at the downscaling eps without (left) and with (right) downscaled weights."""
    p, down = results.params, results.downscale
    truth = true_stats()
    if axes is None:
        plots.use_style()
        _, axes = plt.subplots(3, 2, figsize=(_MAX_W, 10.5), sharey="row", squeeze=False)
    axes = np.asarray(axes).reshape(3, 2)
    rows = (("delta", "Lipschitz bound $\\Delta$", p.downscale_eps / 2, "$\\varepsilon/2$"),
            ("avg_ecdf", "avg-ECDF", None, None), ("q15", "15th percentile", truth["q15"], "Beta(0.5, 3)"))
    for i, (var, lab, line, line_lab) in enumerate(rows):
        for j, scaling in enumerate(("none", "downscale")):
            vals = {k: down[var].sel(synthesizer=k, scaling=scaling).values.ravel() for k in DOWNSCALE_NAMES}
            title = "without downscaling" if scaling == "none" else f"downscaled, c = {p.downscale:g}"
            plots.violins(axes[i, j], vals, ylabel=lab, hline=line, hline_label=line_lab if j == 0 else None,
                          title=title if i == 0 else None)
    return axes


def downscale_utility_figure(results, axes=None, *, stats=("max_ecdf", "mean")):
    """Utility of LW, Weighted-e and Censor_w at the downscaling eps, without (top) and with (bottom) downscaling.

    The supplement's S5 Figures 7-10: one column per statistic of ``stats`` (``max_ecdf``,
    ``avg_ecdf``, ``mean``, ``median``, ``q15``, ``q90``), violins over the replicates, the
    analytical Beta(0.5, 3) value dashed for the summary statistics. Rows: the LW weights as they
    are (top) and scaled by ``c`` (bottom). Returns the (2, len(stats)) axes array.
    """
    p, down = results.params, results.downscale
    stats = tuple(stats)
    bad = [s for s in stats if s not in STAT_LABELS]
    if bad or not stats:
        raise ValueError(f"`stats` must be a non-empty selection of {tuple(STAT_LABELS)}; got {stats!r}.")
    truth = true_stats()
    if axes is None:
        plots.use_style()
        _, axes = plt.subplots(2, len(stats), figsize=(min(_MAX_W, 4.5 * len(stats)), 7.6), sharey="col",
                               squeeze=False)
    axes = np.asarray(axes).reshape(2, len(stats))
    for j, stat in enumerate(stats):
        for i, scaling in enumerate(("none", "downscale")):
            vals = {k: down[stat].sel(synthesizer=k, scaling=scaling).values.ravel() for k in DOWNSCALE_NAMES}
            where = "without downscaling" if scaling == "none" else f"downscaled, c = {p.downscale:g}"
            line = truth.get(stat)
            plots.violins(axes[i, j], vals, ylabel=STAT_LABELS[stat], hline=line,
                          hline_label="Beta(0.5, 3)" if line is not None and i == 0 else None, title=where)
    return axes


#: Okabe-Ito colours of Censor_ref's fixed-alpha variants, largest alpha first (Censor_ref keeps its own blue).
_ALPHA_COLOURS = (PALETTE["orange"], PALETTE["bluish green"], PALETTE["vermillion"], PALETTE["yellow"])
_ALPHA_MARKERS = ("^", "v", "<", ">")


def reference_style(variant: str, variants) -> dict:
    """Colour, line style and marker of a variant of the Censor_ref study (distinct without colour too).

    Censor_uw, Censor_w-pub and Censor_ref keep their colours (presentation; solid lines, circles,
    diamonds, squares); each fixed alpha of Censor_ref an Okabe-Ito colour, dotted, with its own
    triangle; the common theta_0 black, the DP median dashed with an X and the historical one
    dash-dotted with a plus; each other widening of the DP median a grey, dash-dotted, with its own cross.
    """
    s = variant_settings(variant)
    if variant in ("Censor_uw", "Censor_w-pub", DEFAULT):
        return {"color": presentation.color(variant), "ls": "-", "marker": {"Censor_uw": "o", "Censor_w-pub": "D"}.get(
            variant, "s")}
    if variant == DP_MEDIAN:
        return {"color": PALETTE["black"], "ls": "--", "marker": "X"}
    if variant == HISTORICAL:
        return {"color": PALETTE["black"], "ls": "-.", "marker": "P"}
    if s["alpha"] is not None:
        fixed = [v for v in variants if variant_settings(v)["alpha"] is not None]
        i = fixed.index(variant) % len(_ALPHA_COLOURS)
        return {"color": _ALPHA_COLOURS[i], "ls": ":", "marker": _ALPHA_MARKERS[i]}
    widths = [v for v in variants if v.startswith(f"{DP_MEDIAN}, widen ")]
    i = widths.index(variant)
    return {"color": (PALETTE["grey"], PALETTE["dark grey"])[i % 2], "ls": "-.",
            "marker": ("x", "+", "*")[i % 3]}


def reference_figure(results, axes=None, *, variants=None):
    """The Censor_ref study against eps: median share censored, max-ECDF, bias and sd of the posterior mean ``phi``.

    One line per variant (``variants``: default every variant of the study), medians over the
    replicates; eps with one record removed, before a released reference (the DP median's).
    """
    ref = results.reference
    names = [str(v) for v in ref["variant"].values] if variants is None else list(variants)
    grid = sorted(float(e) for e in ref["eps"].values)
    if axes is None:
        plots.use_style()
        _, axes = plt.subplots(2, 2, figsize=(_MAX_W, 8.6), sharex=True, squeeze=False)
    axes = np.asarray(axes).ravel()
    truth = float(np.asarray(ref["true_mean"].values).ravel()[0])
    panels = (("share_censored", "records censored (%)", 100.0, None),
              ("max_ecdf", "max-ECDF of one synthetic set", 1.0, None),
              ("phi_mean", "bias of the posterior mean of $\\phi$", 1.0, truth),
              ("phi_sd", "posterior sd of $\\phi$", 1.0, None))
    for a, (var, lab, mult, minus) in zip(axes, panels):
        for v in names:
            y = [mult * float(np.median(ref[var].sel(eps=e, variant=v).values - (minus or 0.0))) for e in grid]
            st = reference_style(v, names)
            a.plot(grid, y, label=reference_label(v), color=st["color"], ls=st["ls"], marker=st["marker"], lw=1.6,
                   ms=6)
        a.set_ylabel(lab)
        if var == "phi_mean":
            a.axhline(0.0, color="black", lw=0.8)
        if var == "share_censored":
            a.set_yscale("symlog", linthresh=1.0)
    for a in axes[-2:]:
        a.set_xlabel("$\\varepsilon$ (one record removed)")
        a.set_xticks(grid)
    fig = axes[0].figure
    handles, labels = axes[0].get_legend_handles_labels()
    # below the panels (constrained layout makes room for an "outside" legend)
    fig.legend(handles, labels, loc="outside lower center", ncol=3, frameon=False)
    return axes


def downscale_captions(results, run_tag: str, downscale_evidence: str) -> dict[str, str]:
    """Captions of the downscaling section (supplement S5): the bounds figure (``"bounds"``), the two utility
    figures (``"ecdf-mean"``, ``"median-q90"``) and the counts table (``"counts"``), with this run's settings.

    Parameters
    ----------
    results : CensoringResults
        The chapter's results (their ``params`` give eps and c).
    run_tag : str
        The run's scale and replicates, e.g. ``"paper scale, 100 replicates of n = 2000"``.
    downscale_evidence : str
        The evidence of the ``downscaling_reduces_counts`` verdict, appended to the table's caption.
    """
    from .tables import PAPER_DELTA_RANGES

    p = results.params
    lo, hi = PAPER_DELTA_RANGES["LW"]
    at = f"at $\\varepsilon$ = {p.downscale_eps:g} (one record removed)"
    three = "LW (aDP), Weighted-e (aDP) and Censor_w (aDP, weights from the same data)"
    out = {"bounds": (
        f"{three} {at} without (left) and with (right) the weights scaled by $c$ = {p.downscale:g} ({run_tag}): "
        f"Lipschitz bound (top), avg-ECDF of one synthetic data set (middle) and 15th percentile (bottom, analytical "
        f"value dashed). The paper's LW bounds range from about {lo:g} to {hi:g}; $c$ = {p.downscale:g} moves the "
        f"middle of that range, {(lo + hi) / 2:g}, to {p.downscale * (lo + hi) / 2:g} (target $\\varepsilon/2$ = "
        f"{p.downscale_eps / 2:g}).")}
    for shown, tag, what in ((("max_ecdf", "mean"), "ecdf-mean", "Max-ECDF (left) and mean (right)"),
                             (("median", "q90"), "median-q90", "Median (left) and 90th percentile (right)")):
        out[tag] = (
            f"{what} of one synthetic data set (one posterior draw) per replicate ({run_tag}) for {three} {at}, "
            f"without downscaling (top) and with the weights scaled by $c$ = {p.downscale:g} (bottom); analytical "
            f"Beta(0.5, 3) values dashed ("
            + ", ".join(f"{STAT_LABELS[s]} {true_stats()[s]:.4f}" for s in shown if s != "max_ecdf")
            + "). The supplement's S5 Figures 7–10.")
    out["counts"] = (
        f"Truncation (Weighted-e, aDP) and censoring (Censor_w, aDP) counts {at} without and with downscaling "
        f"({run_tag}), ours ($c$ = {p.downscale:g}) beside the supplement's Table 1 (Section S5; whose $c$ we could "
        f"not read). " + downscale_evidence)
    return out

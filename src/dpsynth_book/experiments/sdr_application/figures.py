"""Figures of the SDR application chapter.

Each function takes the chapter's results (:class:`dpsynth_book.experiments.sdr_application.SDRResults`)
and an optional array of axes, and returns the axes array (creating a figure when none is given).
Salary is shown in thousand dollars. Names and labels come from the registry, colours from the book's
presentation (:mod:`dpsynth_book.presentation`).
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from scipy.stats import gaussian_kde

from ... import plots

__all__ = [
    "density_figure",
    "before_reweighting_figure",
    "bounds_weights_figure",
    "reweighting_scatter_figure",
    "reweighting_violins_figure",
    "utility_figure",
]

#: Part 1 synthesizers of the density panels.
DENSITY_PANELS = ("LW", "Weighted-e", "Censor_w", "Censor_uw", "PH", "PH-paper")
#: Part 2 synthesizers before and around re-weighting.
BEFORE = ("LW", "CW", "SW")
FOUR = ("LW", "LW_final", "CW", "CW_final")
_STATS = (("q15", "15th percentile"), ("q90", "90th percentile"), ("mean", "mean"), ("median", "median"))
_DELTA_I = "bound $\\Delta_i$"
_WEIGHT = "weight $\\alpha_i$"


def _axes(axes, nrows, ncols, figsize, **kw):
    if axes is None:
        plots.use_style()
        _, axes = plt.subplots(nrows, ncols, figsize=figsize, squeeze=False, **kw)
    return np.asarray(axes)


def density_figure(results, axes=None, replicate: int = 0):
    """Kernel densities of the confidential and one synthetic salary set per synthesizer (3 x 2 panels).

    The censoring paper's Figure 9. Panel titles give each synthesizer's eps with one record
    removed (local for the aDP ones) and † for a fit that failed the convergence checks.
    """
    ax = _axes(axes, 3, 2, (9.5, 9.0), sharex=True, sharey=True)
    ds = results.part1.isel(replicate=replicate)
    data = ds.salary.sel(synthesizer="Data").values
    grid = np.linspace(0, float(np.nanquantile(data, 0.995)) * 1.3, 400)
    kd = gaussian_kde(data)(grid)
    for a, nm in zip(ax.flat, DENSITY_PANELS):
        a.plot(grid / 1000, kd * 1000, color=plots.color("Data"), lw=2, label="Data")
        syn = ds.salary.sel(synthesizer=nm).values
        if np.all(np.isfinite(syn)) and np.ptp(syn) > 0:
            a.plot(grid / 1000, gaussian_kde(syn)(grid) * 1000, color=plots.color(nm), lw=1.8, ls="--",
                   label="synthetic")
        dag = "" if bool(ds.converged.sel(synthesizer=nm)) else " †"
        a.set_title(f"{plots.label(nm)}: ε = {float(ds.eps.sel(synthesizer=nm)):.3g}{dag}")
        a.legend(loc="upper right")
    for a in ax[-1]:
        a.set_xlabel("salary (thousand dollars)")
    for a in ax[:, 0]:
        a.set_ylabel("density (per $1000)")
    return ax


def _violin_stats(ax_list, ds, names):
    """Four statistics over synthetic sets; ``names`` are ``synthesizer`` values ("Data": bootstrap resamples)."""
    for a, (stat, lab) in zip(ax_list, _STATS):
        plots.violins(a, {s: ds[stat].sel(synthesizer=s).values / 1000 for s in names}, ylabel=f"{lab} ($1000)")


def before_reweighting_figure(results, axes=None, replicate: int = 0):
    """LW, CW and SW before re-weighting (3 x 2 panels): bounds, weights and four statistics.

    The re-weighting paper's appendix Figure 13; statistics over synthetic sets (each from one
    posterior draw) beside bootstrap resamples of the data.
    """
    ax = _axes(axes, 3, 2, (9.5, 10.0))
    ds = results.part2.isel(replicate=replicate)
    plots.violins(ax[0, 0], {s: ds.delta_i.sel(synthesizer=s).values for s in BEFORE}, ylabel=_DELTA_I)
    plots.violins(ax[0, 1], {s: ds.weight.sel(synthesizer=s).values for s in BEFORE}, ylabel=_WEIGHT)
    _violin_stats(ax.flat[2:], ds, ("Data",) + BEFORE)
    return ax


def _scatter(a, ds, nm, marker="o"):
    a.scatter(ds.weight.sel(synthesizer=nm), ds.delta_i.sel(synthesizer=nm), s=8, alpha=0.5, marker=marker,
              color=plots.color(nm), label=plots.label(nm))


def bounds_weights_figure(results, axes=None, replicate: int = 0):
    """By-record bound against weight for LW and CW before re-weighting (1 x 2; re-weighting paper Figure 8)."""
    ax = _axes(axes, 1, 2, (9.5, 4.0), sharey=True)
    ds = results.part2.isel(replicate=replicate)
    for a, nm in zip(ax.flat, ("LW", "CW")):
        _scatter(a, ds, nm)
        d = float(ds.delta.sel(synthesizer=nm))
        a.axhline(d, color="black", ls="--", lw=1, label=f"Δ = {d:.2f}")
        a.set_xlabel(_WEIGHT)
        a.set_title(plots.label(nm))
        a.legend(loc="lower right")
    ax.flat[0].set_ylabel(_DELTA_I)
    return ax


def reweighting_scatter_figure(results, axes=None, replicate: int = 0):
    """The same scatter before (circles) and after (triangles) re-weighting (re-weighting paper Figure 9)."""
    ax = _axes(axes, 1, 2, (9.5, 4.0), sharey=True)
    ds = results.part2.isel(replicate=replicate)
    for a, start in zip(ax.flat, ("LW", "CW")):
        _scatter(a, ds, start)
        _scatter(a, ds, f"{start}_final", marker="^")
        d = float(ds.delta.sel(synthesizer=start))
        a.axhline(d, color="black", ls="--", lw=1, label=f"{start} Δ = {d:.2f}")
        a.set_xlabel(_WEIGHT)
        a.set_title(f"{start} before and after")
        a.legend(loc="lower right")
    ax.flat[0].set_ylabel(_DELTA_I)
    return ax


#: Panels of the re-weighting paper's Figure 10, in its order: (variable, start, panel letter).
FIGURE10_PANELS = (("delta_i", "LW", "a"), ("delta_i", "CW", "b"), ("weight", "LW", "c"), ("weight", "CW", "d"))


def reweighting_violins_figure(results, axes=None, replicate: int = 0):
    """Before and after re-weighting (2 x 2; the re-weighting paper's Figure 10).

    (a) by-record Lipschitz bounds of LW and LW_final, (b) of CW and CW_final, (c) record weights
    of LW and LW_final, (d) of CW and CW_final. The bound panels draw the starting synthesizer's
    Delta (dashed), which re-weighting must not exceed.
    """
    ax = _axes(axes, 2, 2, (9.5, 8.0))
    ds = results.part2.isel(replicate=replicate)
    for a, (var, start, letter) in zip(ax.flat, FIGURE10_PANELS):
        pair = (start, f"{start}_final")
        vals = {s: ds[var].sel(synthesizer=s).values for s in pair}
        what = "Lipschitz bounds" if var == "delta_i" else "weights"
        title = f"({letter}) {what}: {plots.label(start)} vs {plots.label(pair[1])}"
        if var == "delta_i":
            d = float(ds.delta.sel(synthesizer=start))
            plots.violins(a, vals, ylabel=_DELTA_I, hline=d, hline_label=f"{plots.label(start)} Δ = {d:.2f}",
                          title=title)
        else:
            plots.violins(a, vals, ylabel=_WEIGHT, title=title)
            a.set_ylim(-0.05, 1.05)
    return ax


def utility_figure(results, axes=None, replicate: int = 0):
    """Utility before and after re-weighting (3 x 2; re-weighting paper Figure 11), thousand dollars.

    Four statistics over synthetic sets beside the data bootstrap (dashed: its median), the
    posterior of the NB mean (dashed: the sample mean) and one synthetic set beside the data.
    """
    ax = _axes(axes, 3, 2, (9.5, 10.0))
    ds = results.part2.isel(replicate=replicate)
    names = ("Data",) + FOUR
    _violin_stats(ax.flat[:4], ds, names)
    for a, (stat, _) in zip(ax.flat[:4], _STATS):
        a.axhline(float(np.median(ds[stat].sel(synthesizer="Data"))) / 1000, ls="--", color="black", lw=1.0)
    x = results.data2.salary
    plots.violins(ax.flat[4], {s: ds.mu_draw.sel(synthesizer=s).values / 1000 for s in FOUR},
                  ylabel="NB mean μ ($1000)", hline=float(np.mean(x)) / 1000, hline_label="data mean")
    dist = {"Data": x / 1000, **{s: ds.synthetic.sel(synthesizer=s).values / 1000 for s in FOUR}}
    plots.violins(ax.flat[5], dist, ylabel="salary ($1000)", title="one synthetic set")
    return ax

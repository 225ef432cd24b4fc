"""Figures of the 'Choosing a mechanism' chapter: privacy against utility across the book.

:func:`tradeoff_figure` draws the table of :func:`~.tables.tradeoff_table`, one panel per study,
and :func:`tradeoff_caption` is its caption. Names, colours and guarantees come from
:mod:`dpsynth.registry`; the figure stays legible in the book's text column.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import matplotlib.lines as mlines
import matplotlib.pyplot as plt
import matplotlib.ticker as mticker
import numpy as np
import pandas as pd

from dpsynth import registry
from dpsynth.figure_style import PALETTE
from dpsynth.validation import DataError

from ... import plots, presentation

__all__ = ["tradeoff_figure", "tradeoff_caption", "grid_figure"]


#: Marker shapes, one per synthesizer (the fill shows the guarantee: filled DP, open aDP; "x" for none).
_MARKERS = ("o", "s", "^", "D", "v", "P", "<", ">", "h", "p", "*", "d", "H", "X")


def _style(names: Sequence[str]) -> dict[str, dict]:
    """Colour, marker and fill of each synthesizer, fixed across the panels."""
    out = {}
    shapes = iter(_MARKERS * (1 + len(names) // len(_MARKERS)))
    for nm in names:
        g = registry.guarantee(nm)
        c = plots.color(nm, names)
        marker = "x" if g == "none" else next(shapes)
        out[nm] = {"color": c, "marker": marker, "mfc": c if g == "DP" else "white", "mec": c,
                   "label": plots.label(nm)}
    return out


def _log_ticks(lo: float, hi: float) -> list[float]:
    """Tick values for a log axis from ``lo`` to ``hi``: the coarsest of 1-2-5, 1-1.5-2-3-5-7 and 1-9 giving 3."""
    decades = range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1)
    ticks: list[float] = []
    for subs in ((1, 2, 5), (1, 1.5, 2, 3, 5, 7), tuple(range(1, 10))):
        ticks = [float(f"{m * 10.0 ** d:.6g}") for d in decades for m in subs if lo <= m * 10.0 ** d <= hi]
        if len(ticks) >= 3:
            break
    return ticks


def tradeoff_figure(table: pd.DataFrame):
    """One panel per study: median max-ECDF distance against epsilon (one record removed).

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`~.tables.tradeoff_table`.

    Returns
    -------
    fig : matplotlib.figure.Figure
    axes : numpy.ndarray of Axes
        One per study, in the table's order (unused grid cells are hidden).

    Notes
    -----
    A point is one synthesizer at one target epsilon: its median over replicates, with the
    interquartile ranges as error bars in both directions. Colours and names with guarantees
    come from the registry; filled markers are strict DP, open ones aDP (their epsilon is the
    local figure of the data set, not a guarantee), "x" no protection. Points of one synthesizer
    at several targets are joined by a thin line.
    """
    if table.empty:
        raise DataError("the privacy-utility table is empty: no shipped study had a finite epsilon.")
    plots.use_style()
    panels = list(pd.unique(table["study"]))
    names = presentation.order(list(pd.unique(table["synthesizer"])))
    style = _style(names)
    # two panels a row at the page's width (6 in at 110 dpi is the 660-pixel column), the legend below
    ncol = min(2, len(panels))
    nrow = int(np.ceil(len(panels) / ncol))
    legend_rows = int(np.ceil(len(names) / 3))
    fig, axes = plt.subplots(nrow, ncol, figsize=(2.85 * ncol + 0.3, 2.6 * nrow + 0.8 + 0.22 * legend_rows),
                             squeeze=False)
    axes = axes.ravel()
    for ax, study in zip(axes, panels):
        sub = table[table["study"] == study]
        for nm in presentation.order(list(pd.unique(sub["synthesizer"]))):
            r = sub[sub["synthesizer"] == nm].sort_values("eps")
            st = style[nm]
            if len(r) > 1:
                ax.plot(r["eps"], r["max_ecdf"], color=st["color"], lw=0.8, alpha=0.6, zorder=1)
            ax.errorbar(r["eps"], r["max_ecdf"],
                        xerr=np.array([r["eps"] - r["eps_lo"], r["eps_hi"] - r["eps"]]),
                        yerr=np.array([r["max_ecdf"] - r["max_ecdf_lo"], r["max_ecdf_hi"] - r["max_ecdf"]]),
                        fmt=st["marker"], color=st["color"], mfc=st["mfc"], mec=st["mec"], ms=6, mew=1.3,
                        elinewidth=0.9, capsize=0, zorder=3)
        ax.set_xscale("log")
        ax.xaxis.set_major_locator(mticker.FixedLocator(_log_ticks(*ax.get_xlim())))
        ax.xaxis.set_major_formatter(mticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(mticker.NullFormatter())
        ax.set_ylim(bottom=0)
        ax.set_title("\n".join(textwrap.wrap(study, 28, break_on_hyphens=False)), fontsize=10)
    for i, ax in enumerate(axes):
        if i >= len(panels):
            ax.set_visible(False)
        elif i + ncol >= len(panels):
            ax.set_xlabel("ε, one record removed")
    fig.supylabel("max-ECDF distance (median; lower is better)", fontsize=11)
    handles = [mlines.Line2D([], [], ls="none", marker=style[n]["marker"], color=style[n]["color"],
                             mfc=style[n]["mfc"], mec=style[n]["mec"], ms=7, mew=1.3) for n in names]
    fig.legend(handles, [style[n]["label"] for n in names], loc="outside lower center", ncol=min(3, len(names)),
               columnspacing=1.0, handletextpad=0.3)
    return fig, axes[:len(panels)]


def tradeoff_caption(table: pd.DataFrame) -> str:
    """Caption of :func:`tradeoff_figure`: what is plotted, and how many replicates each panel is over.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`~.tables.tradeoff_table` (computed from the shipped paper-scale results).
    """
    parts = []
    for study, r in table.groupby("study", sort=False)[["replicates", "releases"]].max().iterrows():
        reps, rel = int(r["replicates"]), int(r["releases"])
        sets = f", of {rel // reps} synthetic sets each," if rel > reps else ""
        parts.append(f"{reps}{sets} for “{study}”")
    stand_in = table["study"].str.contains("SDR stand-in", regex=False).any()
    return (
        "Privacy and utility of each synthesizer of the papers' studies and of the own-data chapter at every "
        "$\\varepsilon$ they ran, from the shipped paper-scale results (Censor_ref is compared in the head-to-head "
        "grid above and in its own study of the censoring chapter): median largest distance between the ECDFs of a "
        "synthetic and of the confidential data set "
        "(lower is better) against the median $\\varepsilon$ of one release with one record removed "
        "(log scale), with quartile bars in both directions. Filled markers: strict DP; open markers: aDP, whose "
        "$\\varepsilon$ is the local figure of the data set, not a guarantee; crosses: no protection. Replicates "
        "per panel: " + "; ".join(parts) + "."
        + (f" The SDR panels use the {plots.STAND_IN_NOTE}." if stand_in else "")
    )


def grid_figure(grid):
    """The head-to-head grid: one panel per situation, its measure (mean over runs) against the total eps
    (log scale), one line per candidate; a filled marker where the candidate was usable in every run, an
    open one where it was not (failed checks, censored most records, or refused in some run).

    Parameters
    ----------
    grid : xarray.Dataset
        The study ``choosing-grid`` (:func:`dpsynth_book.experiments.choosing.run`).
    """
    from .grid import MEASURES, SITUATIONS
    from .grid_params import CANDIDATE_NAMES
    from .recommend import _study, cell_summary

    plots.use_style()
    ds = _study(grid)
    summ = cell_summary(ds)
    sits = [str(s) for s in ds["situation"].values]
    cands = [str(c) for c in ds["candidate"].values]
    calibrated = CANDIDATE_NAMES["censor_ref_calibrated"]
    style = {}
    for i, c in enumerate(cands):
        base = "Censor_ref" if c == calibrated else c
        col = presentation.color(base) if base in registry.names() else PALETTE["dark grey"]
        style[c] = {"color": col, "marker": _MARKERS[i % len(_MARKERS)], "ls": "--" if c == calibrated else "-"}
    ncol = 2
    nrow = -(-len(sits) // ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(6.6, 2.3 * nrow + 0.9), squeeze=False, constrained_layout=True)
    zeros = False
    for k, sit in enumerate(sits):
        ax = axes[k // ncol, k % ncol]
        positive = summ.loc[(summ["situation"] == sit) & np.isfinite(summ["value"]) & (summ["value"] > 0), "value"]
        floor = float(positive.min()) / 2 if len(positive) else 1e-3  # a zero is drawn here (a log axis has none)
        for c in cands:
            g = summ[(summ["situation"] == sit) & (summ["candidate"] == c)].sort_values("eps")
            g = g[np.isfinite(g["value"])]
            if g.empty:
                continue
            st = style[c]
            y = g["value"].where(g["value"] > 0, floor)
            ax.plot(g["eps"], y, color=st["color"], ls=st["ls"], lw=1.2)
            full, zero = g["usable"] == g["runs"], g["value"] <= 0
            zeros = zeros or bool(zero.any())
            ax.plot(g["eps"][full & ~zero], y[full & ~zero], st["marker"], color=st["color"], ms=5, ls="none")
            ax.plot(g["eps"][~full & ~zero], y[~full & ~zero], st["marker"], color=st["color"], mfc="white", ms=5,
                    ls="none")
            ax.plot(g["eps"][zero], y[zero], "v", color=st["color"], mfc="white" if not full[zero].all() else None,
                    ms=6, ls="none")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_major_locator(mticker.FixedLocator([float(e) for e in ds["eps"].values]))
        ax.xaxis.set_major_formatter(mticker.FormatStrFormatter("%g"))
        ax.xaxis.set_minor_locator(mticker.NullLocator())
        vals = summ.loc[(summ["situation"] == sit) & np.isfinite(summ["value"]) & (summ["value"] > 0), "value"]
        if len(vals):
            ax.yaxis.set_major_locator(mticker.FixedLocator(_log_ticks(float(vals.min()), float(vals.max()))))
            ax.yaxis.set_major_formatter(mticker.FormatStrFormatter("%g"))
            ax.yaxis.set_minor_formatter(mticker.NullFormatter())
        ax.set_title(sit, fontsize=10)
        ax.set_ylabel(textwrap.fill(MEASURES[SITUATIONS[sit].measure], 22), fontsize=8)
        ax.set_xlabel("total ε", fontsize=8)
    for k in range(len(sits), nrow * ncol):
        axes[k // ncol, k % ncol].set_axis_off()
    handles = [mlines.Line2D([], [], color=style[c]["color"], marker=style[c]["marker"], ls=style[c]["ls"], label=c)
               for c in cands]
    handles.append(mlines.Line2D([], [], color="black", marker="o", mfc="white", ls="none",
                                 label="open: not usable in every run"))
    if zeros:
        handles.append(mlines.Line2D([], [], color="black", marker="v", ls="none",
                                     label="a mean of 0, at the panel's foot"))
    fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=8, frameon=False)
    return fig

"""One figure style for the whole book: names and guarantees from the registry, colours and order from the book.

The style itself (the matplotlib settings, the palette) is the library's, :mod:`dpsynth.figure_style`, which the
release reports use too: :func:`use_style` is its function.

Every figure that compares synthesizers takes its labels (name plus guarantee type) from
:mod:`dpsynth.registry`, and its order and colours from :mod:`dpsynth_book.presentation`; an
unregistered name is an error.
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib as mpl
import numpy as np

from dpsynth import registry
from dpsynth.figure_style import use_style
from dpsynth.registry import label

from .presentation import color, order

__all__ = ["use_style", "label", "color", "order", "violins", "guarantee_of", "STAND_IN_NOTE"]

#: Caption note for figures and tables made from the SDR stand-in sample.
STAND_IN_NOTE = "SDR stand-in sample generated from published summaries (not the real file)"


def guarantee_of(name: str) -> str | None:
    """Guarantee type of a registered synthesizer (``None`` for the confidential data)."""
    return registry.guarantee(name)


def violins(
    ax: mpl.axes.Axes,
    values: Mapping[str, np.ndarray],
    *,
    ylabel: str,
    hline: float | None = None,
    hline_label: str | None = None,
    title: str | None = None,
) -> mpl.axes.Axes:
    """Violin plot of one value per replicate (or per record) for each synthesizer.

    Parameters
    ----------
    ax : matplotlib Axes
    values : mapping of synthesizer name to 1-d array
        Plotted in the book's order with the book's colours and labels.
    ylabel : str
        Axis label (quantity and unit).
    hline : float, optional
        A reference value drawn as a dashed line (e.g. eps/2 or the true quantile).
    hline_label : str, optional
        Legend text for the reference line.
    title : str, optional
    """
    names = order(list(values))
    data = [np.asarray(values[n], dtype=float) for n in names]
    pos = np.arange(1, len(names) + 1)
    parts = ax.violinplot(data, positions=pos, showmedians=True, showextrema=True, widths=0.8)
    for body, n in zip(parts["bodies"], names):
        body.set_facecolor(color(n, names))
        body.set_edgecolor("black")
        body.set_alpha(0.75)
    for key in ("cmedians", "cmins", "cmaxes", "cbars"):
        if key in parts:
            parts[key].set_color("black")
            parts[key].set_linewidth(0.8)
    for p, n, v in zip(pos, names, data):
        v = v[np.isfinite(v)]
        if v.size == 0:
            continue
        if np.ptp(v) <= 1e-9 * max(1.0, float(np.abs(v).max())):
            # a constant series (e.g. Censor_uw exactly at eps/2) has no violin: draw a visible bar
            ax.plot([p - 0.35, p + 0.35], [v[0], v[0]], color=color(n, names), lw=5, solid_capstyle="butt",
                    zorder=3)
            ax.plot([p - 0.35, p + 0.35], [v[0], v[0]], color="black", lw=0.8, zorder=4)
        elif v.size <= 30:
            # few replicates: show each one
            jitter = np.linspace(-0.12, 0.12, v.size) if v.size > 1 else np.zeros(1)
            ax.scatter(p + jitter, v, s=9, color="black", alpha=0.6, zorder=4, linewidths=0)
    ax.set_xticks(pos, [label(n) for n in names], rotation=20, ha="right")
    ax.set_ylabel(ylabel)
    if hline is not None:
        ax.axhline(hline, ls="--", color="black", lw=1.0, label=hline_label)
        if hline_label:
            ax.legend(loc="best")
    if title:
        ax.set_title(title)
    return ax

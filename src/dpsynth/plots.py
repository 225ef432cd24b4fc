"""One figure style for the whole book, and the synthesizers' names, order and colours.

Every figure that compares synthesizers takes its order and colours from :data:`SYNTHESIZERS`
and labels them with :func:`label` (name plus guarantee type).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import resources

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np

__all__ = ["SYNTHESIZERS", "use_style", "label", "color", "order", "violins", "guarantee_of", "STAND_IN_NOTE"]

#: (name, guarantee, colour) in the order every figure uses.
SYNTHESIZERS: tuple[tuple[str, str | None, str], ...] = (
    ("Data", None, "#4d4d4d"),
    ("Unweighted", "aDP", "#a6a6a6"),
    ("Weighted", "aDP", "#1f77b4"),
    ("LW", "aDP", "#1f77b4"),
    ("CW", "aDP", "#2ca02c"),
    ("SW", "aDP", "#9467bd"),
    ("LW_final", "aDP", "#17becf"),
    ("CW_final", "aDP", "#bcbd22"),
    ("Weighted-e", "aDP", "#ff7f0e"),
    ("Censor_w", "DP", "#d62728"),
    ("Censor_uw", "DP", "#8c564b"),
    ("PH", "DP", "#e377c2"),
)
_EXTRA = ("#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354")
_INDEX = {name: i for i, (name, _, _) in enumerate(SYNTHESIZERS)}

#: Caption note for figures and tables made from the SDR stand-in sample.
STAND_IN_NOTE = "SDR stand-in sample generated from published summaries (not the real file)"


def use_style() -> None:
    """Apply the book's matplotlib style."""
    with resources.as_file(resources.files("dpsynth") / "dpsynth.mplstyle") as path:
        plt.style.use(str(path))


def guarantee_of(name: str) -> str | None:
    """Guarantee type of a named synthesizer (``None`` for the confidential data).

    Range-restriction variants (names starting with ``"A["``, ``"B["`` or ``"LW ("``) are aDP.
    """
    if name in _INDEX:
        return SYNTHESIZERS[_INDEX[name]][1]
    return "aDP"


def label(name: str, guarantee: str | None = "auto") -> str:
    """Display label, e.g. ``"Censor_w (DP)"``; the confidential data are just ``"Data"``."""
    g = guarantee_of(name) if guarantee == "auto" else guarantee
    return name if g is None else f"{name} ({g})"


def order(names: Sequence[str]) -> list[str]:
    """Sort synthesizer names into the book's order (unknown names last, in given order)."""
    known = sorted((n for n in names if n in _INDEX), key=_INDEX.get)
    return known + [n for n in names if n not in _INDEX]


#: Colour families of the range-restriction variants, by name prefix (one shade per range).
_PREFIX_COLOURS = {
    "B'[": ("#e6550d", "#fdae6b", "#a63603"),
    "A[": ("#31a354", "#a1d99b", "#006d2c"),
    "B[": ("#756bb1", "#bcbddc", "#54278f"),
}


def color(name: str, names: Sequence[str] | None = None) -> str:
    """Colour of a synthesizer.

    Names in :data:`SYNTHESIZERS` have fixed colours; range-restriction variants (``A[a,b]``,
    ``B[a,b]``, ``B'[a,b]``) get shades of one colour family per variant, in the order the
    ranges appear in ``names``; any other name gets a stable extra colour.
    """
    if name in _INDEX:
        return SYNTHESIZERS[_INDEX[name]][2]
    pool = list(names or [name])
    for prefix, shades in _PREFIX_COLOURS.items():
        if name.startswith(prefix):
            same = [n for n in pool if n.startswith(prefix)] or [name]
            i = same.index(name) if name in same else 0
            return shades[i % len(shades)]
    rest = [n for n in pool if n not in _INDEX and not n.startswith(tuple(_PREFIX_COLOURS))]
    i = rest.index(name) if name in rest else 0
    return _EXTRA[i % len(_EXTRA)]


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
    ax.set_xticks(pos, [label(n) for n in names], rotation=20, ha="right")
    ax.set_ylabel(ylabel)
    if hline is not None:
        ax.axhline(hline, ls="--", color="black", lw=1.0, label=hline_label)
        if hline_label:
            ax.legend(loc="best")
    if title:
        ax.set_title(title)
    return ax

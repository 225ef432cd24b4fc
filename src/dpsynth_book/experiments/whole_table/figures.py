"""The figure of the "Releasing a whole table" chapter: ``f(results) -> Figure``.

Colours are the Okabe-Ito palette (:data:`dpsynth.figure_style.PALETTE`, colour-blind safe), and each
method also has its own marker and line style, so the figure reads in grey too.
"""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import numpy as np

from dpsynth.figure_style import PALETTE

from ... import plots
from .params import METHOD_NAMES
from .replicate import TABLES
from .tables import mean_frame, study_of

__all__ = ["STYLE", "PANELS", "metrics_figure"]

#: Method display name -> line style.
STYLE = {
    METHOD_NAMES["auto"]: {"color": PALETTE["blue"], "marker": "o", "ls": "-"},
    METHOD_NAMES["censor_chain"]: {"color": PALETTE["orange"], "marker": "s", "ls": "--"},
    METHOD_NAMES["mst"]: {"color": PALETTE["bluish green"], "marker": "^", "ls": "-."},
    METHOD_NAMES["aim"]: {"color": PALETTE["reddish purple"], "marker": "D", "ls": ":"},
}
#: The figure's rows: variable -> (axis label, log scale).
PANELS = {
    "marginal_numeric": ("numeric marginals\n(max ECDF)", False),
    "marginal_categorical": ("categorical marginals\n(TVD)", False),
    "pmse_ratio": ("pMSE ratio (null: 1)", True),
    "pmse_int_ratio": ("pMSE ratio,\ninteractions", True),
    "coef_rmse": ("regression coef. RMSE", False),
    "coverage": ("95% CI coverage", False),
}


def metrics_figure(results, panels=tuple(PANELS)):
    """Small multiples: one row per metric, one column per table; x = eps (log scale), one line per method (mean
    over runs). Each point of a line is the mean over the runs; the small dots are the runs themselves. A method
    without a value (the censored chain's coverage) is left out of that panel.
    """
    plots.use_style()
    ds = study_of(results)
    f = mean_frame(results)
    tables = [str(t) for t in ds["table"].values]
    methods = [str(m) for m in ds["method"].values]
    # the page's width (6 in at 110 dpi is the 660-pixel column), whatever the number of tables
    fig, axes = plt.subplots(len(panels), len(tables), figsize=(6.6, 1.7 * len(panels) + 0.8),
                             squeeze=False, sharex=True, constrained_layout=True)
    eps = sorted(float(e) for e in ds["eps"].values)
    for j, t in enumerate(tables):
        for i, var in enumerate(panels):
            ax = axes[i, j]
            label, log = PANELS[var]
            for m in methods:
                st = STYLE.get(m, {"color": PALETTE["dark grey"], "marker": "x", "ls": "-"})
                g = f[(f["table"] == t) & (f["method"] == m)].sort_values("eps")
                if g[var].isna().all():
                    ax.plot([], [], lw=1.4, ms=5, label=m, **st)
                    continue
                ax.plot(g["eps"], g[var], lw=1.4, ms=5, label=m, **st)
                runs = ds[var].sel({"table": t, "method": m})
                x = np.repeat(runs["eps"].values[None, :], runs.sizes["replicate"], axis=0)
                ax.plot(x.ravel(), runs.transpose("replicate", "eps").values.ravel(), st["marker"], ms=2.5,
                        alpha=0.35, color=st["color"], label="_nolegend_")
            if log:
                ax.set_yscale("log")
            elif var != "coverage":
                ax.set_ylim(bottom=0)
            if var in ("pmse_ratio", "pmse_int_ratio"):
                ax.axhline(1.0, color=PALETTE["grey"], lw=0.8, ls="-")
            if var == "coverage":
                ax.axhline(0.95, color=PALETTE["grey"], lw=0.8, ls="-")
                ax.set_ylim(0, 1.05)
            if j == 0:
                ax.set_ylabel(label)
            if i == 0:
                ax.set_title("\n".join(textwrap.wrap(TABLES[t].title if t in TABLES else t, 30)), fontsize=10)
            ax.set_xscale("log")
            ax.set_xticks(eps)
            ax.set_xticklabels([f"{e:g}" for e in eps], fontsize=7)
            ax.minorticks_off()
        axes[-1, j].set_xlabel("ε (one record removed)")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(methods), fontsize=9, frameon=False)
    return fig

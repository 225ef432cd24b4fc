"""Figures of the "Your own data" chapter: ``f(results, ...) -> Figure``.

Colours, markers and labels come from the registry (:mod:`dpsynth.registry`): a filled marker is
a strict-DP mechanism, an open one aDP, a line the non-private reference.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ... import plots, registry
from .tables import fit_frame, study_of, units_of

__all__ = ["utility_figure", "coefficient_figure", "units_figure"]

_WIDTH = 8.5


def _marker(name: str) -> dict:
    g = registry.guarantee(name)
    c = registry.color(name)
    if g == "DP":
        return {"color": c, "markerfacecolor": c}
    return {"color": c, "markerfacecolor": "white"}


def utility_figure(results):
    """Max-ECDF distance and the median of one synthetic data set against eps, per mechanism.

    Each point is one run (one synthetic data set); the line joins the means. Unweighted (not
    private) and Weighted (its epsilon set by the data, given in the legend) are horizontal lines.
    """
    plots.use_style()
    f = fit_frame(results)
    fig, axes = plt.subplots(1, 2, figsize=(_WIDTH, 3.8), constrained_layout=True)
    data_median = float(f.loc[f["synthesizer"] == "Data", "q50"].mean())
    for ax, var, ylab in ((axes[0], "max_ecdf", "max-ECDF distance"), (axes[1], "q50", "synthetic median ($)")):
        for name in registry.order([n for n in f["synthesizer"].unique() if n != "Data"]):
            g = f[f["synthesizer"] == name]
            if g["eps"].isna().all():
                eps_w = float(g["eps_remove"].median())
                lab = registry.label(name) + ("" if name == "Unweighted" else f", ε≈{eps_w:.3g}")
                ax.axhline(float(g[var].mean()), color=registry.color(name), lw=1.2,
                           ls="--" if name == "Unweighted" else ":", label=lab)
                continue
            m = g.groupby("eps")[var].mean()
            ax.plot(m.index, m.values, "-o", ms=5, lw=1.2, label=registry.label(name), **_marker(name))
            ax.plot(g["eps"], g[var], "o", ms=3, alpha=0.5, color=registry.color(name), label="_nolegend_")
        if var == "q50":
            ax.axhline(data_median, color="black", lw=1.0, label="Data")
        ax.set_xscale("log")
        ax.set_xlabel("ε (one record removed)")
        ax.set_ylabel(ylab)
    axes[0].set_ylim(bottom=0)
    handles, labels = axes[1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=3, fontsize=9, frameon=False)
    return fig


def coefficient_figure(results, eps: float):
    """The analyst's regression coefficients of log wage: Data and each mechanism at ``eps`` (mean over runs)."""
    plots.use_style()
    ds = study_of(results)
    e = ds["eps"].values
    keep = np.flatnonzero(np.isnan(e) | np.isclose(e, float(eps)))
    sub = ds.isel(fit=keep)
    terms = [str(t) for t in sub["term"].values if str(t) != "intercept"]
    names = [str(n) for n in sub["synthesizer"].values]
    fig, ax = plt.subplots(figsize=(_WIDTH, 5.2), constrained_layout=True)
    shown = [n for n in registry.order(list(dict.fromkeys(names)))]
    y = np.arange(len(terms))
    width = 0.8 / max(len(shown), 1)
    for j, name in enumerate(shown):
        i = names.index(name)
        coef = sub["coef"].isel(fit=i).mean("replicate").sel(term=terms).values
        off = (j - (len(shown) - 1) / 2) * width
        if name == "Data":
            ax.plot(coef, y + off, "D", color="black", ms=5, label="Data")
        else:
            ax.plot(coef, y + off, "o", ms=5, label=registry.label(name), **_marker(name))
    ax.axvline(0.0, color="grey", lw=0.8)
    ax.set_yticks(y, terms)
    ax.invert_yaxis()
    ax.set_xlabel("coefficient of log weekly wage")
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=4, fontsize=9, frameon=False)
    return fig


def units_figure(results):
    """Share of records censored in dollars, in thousands and with the public offset, per eps."""
    plots.use_style()
    u = units_of(results)
    share = (u["n_censored"] / float(u.attrs.get("n", 1))).mean("replicate")
    mechs = registry.order([str(m) for m in u["mechanism"].values])
    settings = [str(s) for s in u["setting"].values]
    eps = [float(v) for v in u["eps"].values]
    fig, axes = plt.subplots(1, len(mechs), figsize=(_WIDTH, 3.9), constrained_layout=True, squeeze=False)
    hatches = ("", "//", "..")
    width = 0.8 / len(settings)
    for ax, mech in zip(axes[0], mechs):
        for k, s in enumerate(settings):
            vals = share.sel(mechanism=mech, setting=s).values
            x = np.arange(len(eps)) + (k - (len(settings) - 1) / 2) * width
            ax.bar(x, vals, width=width, color=registry.color(mech), edgecolor="black", hatch=hatches[k % 3],
                   alpha=1.0 if k == 0 else 0.55, label=s)
        ax.set_xticks(np.arange(len(eps)), [f"ε = {e:g}" for e in eps])
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("share of records censored")
        ax.set_title(registry.label(mech))
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(settings), fontsize=9, frameon=False)
    return fig


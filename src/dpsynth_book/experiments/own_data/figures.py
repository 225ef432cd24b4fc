"""Figures of the "Your own data" chapter: ``f(results, ...) -> Figure``.

Labels and guarantees come from the registry (:mod:`dpsynth.registry`), colours from the book's
presentation (:mod:`dpsynth_book.presentation`): a filled marker is a strict-DP mechanism, an open one
aDP, a line the non-private reference.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from dpsynth import registry

from ... import plots, presentation
from .tables import fit_frame, study_of, units_of

__all__ = ["utility_figure", "coefficient_figure", "units_figure", "files_figure", "unitfree_figure"]

_WIDTH = 8.5


def _marker(name: str) -> dict:
    g = registry.guarantee(name)
    c = presentation.color(name)
    if g == "DP":
        return {"color": c, "markerfacecolor": c}
    return {"color": c, "markerfacecolor": "white"}


def utility_figure(results):
    """Max-ECDF distance and the median of one synthetic data set against eps, per mechanism.

    Each point is one run (one synthetic data set); the line joins the means. Unweighted (not
    private) and LW (its epsilon set by the data, given in the legend) are horizontal lines.
    """
    plots.use_style()
    f = fit_frame(results)
    fig, axes = plt.subplots(1, 2, figsize=(_WIDTH, 3.8), constrained_layout=True)
    data_median = float(f.loc[f["synthesizer"] == "Data", "q50"].mean())
    for ax, var, ylab in ((axes[0], "max_ecdf", "max-ECDF distance"), (axes[1], "q50", "synthetic median ($)")):
        for name in presentation.order([n for n in f["synthesizer"].unique() if n != "Data"]):
            g = f[f["synthesizer"] == name]
            if g["eps"].isna().all():
                eps_w = float(g["eps_remove"].median())
                lab = registry.label(name) + ("" if name == "Unweighted" else f", ε≈{eps_w:.3g}")
                ax.axhline(float(g[var].mean()), color=presentation.color(name), lw=1.2,
                           ls="--" if name == "Unweighted" else ":", label=lab)
                continue
            m = g.groupby("eps")[var].mean()
            ax.plot(m.index, m.values, "-o", ms=5, lw=1.2, label=registry.label(name), **_marker(name))
            ax.plot(g["eps"], g[var], "o", ms=3, alpha=0.5, color=presentation.color(name), label="_nolegend_")
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
    shown = [n for n in presentation.order(list(dict.fromkeys(names)))]
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
    mechs = presentation.order([str(m) for m in u["mechanism"].values])
    settings = [str(s) for s in u["setting"].values]
    eps = [float(v) for v in u["eps"].values]
    fig, axes = plt.subplots(1, len(mechs), figsize=(_WIDTH, 3.9), constrained_layout=True, squeeze=False)
    hatches = ("", "//", "..")
    width = 0.8 / len(settings)
    for ax, mech in zip(axes[0], mechs):
        for k, s in enumerate(settings):
            vals = share.sel(mechanism=mech, setting=s).values
            x = np.arange(len(eps)) + (k - (len(settings) - 1) / 2) * width
            ax.bar(x, vals, width=width, color=presentation.color(mech), edgecolor="black", hatch=hatches[k % 3],
                   alpha=1.0 if k == 0 else 0.55, label=s)
        ax.set_xticks(np.arange(len(eps)), [f"ε = {e:g}" for e in eps])
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("share of records censored")
        ax.set_title(registry.label(mech))
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(settings), fontsize=9, frameon=False)
    return fig



# ------------------------------------------------------------------------------------------------
# the three real files with default settings, and the unit-free window
# ------------------------------------------------------------------------------------------------

_EPS_STYLES = ("--", "-", ":", "-.")
_FILE_TITLES = {"cps1988": "CPS 1988: weekly wage ($1000s)", "nmes1988": "NMES 1987-88: physician visits",
                "fishing": "Fishing: mode chosen"}


def files_figure(results):
    """The release report's two figures for each real file, from the shipped numbers (no data needed).

    Top row: the marginal of the target; for a numeric target its quantile curve (quantiles at
    levels 0.01 to 0.99, the original in black, the synthetic data's mean over runs at each eps in
    the default mechanism's colour; a log axis for the wage), for the categorical target the share
    of each level (original grey, synthetic hatched). Bottom row: every regression coefficient but
    the intercepts, as the difference synthetic − original in the original's standard errors
    (mean over runs; the grey band is the original's 95% interval, ±1.96).
    """
    from .tables import files_of, static

    plots.use_style()
    ds = files_of(results)
    files = [str(f) for f in ds["file"].values]
    eps = [float(e) for e in ds["eps"].values]
    colour = presentation.color(str(ds.attrs.get("mechanism", "Censor_ref")))
    fig, axes = plt.subplots(2, len(files), figsize=(_WIDTH, 7.4), constrained_layout=True, squeeze=False,
                             gridspec_kw={"height_ratios": [1.0, 1.5]})
    for k, f in enumerate(files):
        d = ds.sel(file=f)
        kind = str(static(d["kind"]).values)
        ax = axes[0][k]
        if kind == "categorical":
            orig = static(d["share_original"])
            levels = [str(v) for v, s in zip(ds["mode_level"].values, orig.values) if np.isfinite(s)]
            width = 0.8 / (1 + len(eps))
            x = np.arange(len(levels))
            ax.bar(x - 0.4 + width / 2, orig.sel(mode_level=levels).values, width=width, color="0.6",
                   edgecolor="black", label="original")
            for j, e in enumerate(eps):
                syn = d["share_synthetic"].sel(eps=e, mode_level=levels).mean("replicate").values
                ax.bar(x - 0.4 + width * (j + 1.5), syn, width=width, color=colour, alpha=0.45 + 0.5 * j / max(
                    len(eps) - 1, 1), edgecolor="black", hatch="//", label=f"synthetic, ε = {e:g}")
            ax.set_xticks(x, levels, fontsize=8.5)
            ax.set_ylim(0, 1.45 * float(np.nanmax(orig.values)))  # room for the legend above the bars
            ax.set_ylabel("share of records")
        else:
            lv = ds["level"].values
            ax.plot(lv, static(d["curve_original"]).values, color="black", lw=1.6, label="original")
            for j, e in enumerate(eps):
                ax.plot(lv, d["curve_synthetic"].sel(eps=e).mean("replicate").values, color=colour, lw=1.3,
                        ls=_EPS_STYLES[j % len(_EPS_STYLES)], label=f"synthetic, ε = {e:g}")
            if kind == "continuous":
                ax.set_yscale("log")
            ax.set_xlabel("quantile level")
            ax.set_ylabel(f"quantile of {str(static(d['target']).values)}")
        ax.set_title(_FILE_TITLES.get(f, f), fontsize=10)
        ax.legend(fontsize=8.5, frameon=False)
        # the coefficients, in the original's standard errors
        ax = axes[1][k]
        have = np.isfinite(static(d["coef_original"]).values)
        terms = [str(t) for t, h in zip(ds["term"].values, have) if h and not str(t).endswith("intercept")]
        y = np.arange(len(terms))
        ax.axvspan(-1.96, 1.96, color="0.88", lw=0)
        ax.axvline(0.0, color="black", lw=0.8)
        co, se = static(d["coef_original"]).sel(term=terms), static(d["se_original"]).sel(term=terms)
        for j, e in enumerate(eps):
            z = ((d["coef_synthetic"].sel(eps=e, term=terms) - co) / se).mean("replicate").values
            off = (j - (len(eps) - 1) / 2) * 0.3
            ax.plot(z, y + off, "o", ms=4.5, color=colour, markerfacecolor=colour if j else "white",
                    label=f"synthetic, ε = {e:g}")
        ax.set_yticks(y, terms, fontsize=8.5)
        ax.invert_yaxis()
        ax.set_xlabel("synthetic − original\n(original's standard errors)")
    handles, labels = axes[1][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(eps), fontsize=9, frameon=False,
               title="regression coefficients; grey: the original's 95% interval", title_fontsize=9)
    return fig


def unitfree_figure(results):
    """Share of records censored and max-ECDF of Censor_uw and Censor_ref in dollars, thousands and cents, per eps.

    Bars are means over runs; each dot is one run.
    """
    from .tables import unitfree_of

    plots.use_style()
    u = unitfree_of(results)
    n = float(u.attrs.get("n", 1))
    mechs = presentation.order([str(m) for m in u["mechanism"].values])
    units = [str(s) for s in u["unit"].values]
    eps = [float(v) for v in u["eps"].values]
    fig, axes = plt.subplots(2, len(mechs), figsize=(_WIDTH, 6.0), constrained_layout=True, squeeze=False,
                             sharey="row")
    hatches = ("", "//", "..")
    width = 0.8 / len(units)
    for col, mech in enumerate(mechs):
        for row, (var, scale, ylab) in enumerate((("n_censored", n, "share of records censored"),
                                                  ("max_ecdf", 1.0, "max-ECDF distance"))):
            ax = axes[row][col]
            vals = u[var].sel(mechanism=mech) / scale
            for k, s in enumerate(units):
                x = np.arange(len(eps)) + (k - (len(units) - 1) / 2) * width
                ax.bar(x, vals.sel(unit=s).mean("replicate").values, width=width, color=presentation.color(mech),
                       edgecolor="black", hatch=hatches[k % 3], alpha=1.0 if k == 0 else 0.55, label=s)
                for r in range(u.sizes["replicate"]):
                    ax.plot(x, vals.sel(unit=s).isel(replicate=r).values, "o", ms=2.5, color="black")
            ax.set_xticks(np.arange(len(eps)), [f"ε = {e:g}" for e in eps])
            ax.set_ylim(0, 1.05)
            if col == 0:
                ax.set_ylabel(ylab)
            if row == 0:
                ax.set_title(registry.label(mech))
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(units), fontsize=9, frameon=False)
    return fig

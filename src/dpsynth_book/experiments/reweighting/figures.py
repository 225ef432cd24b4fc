"""Figures of the re-weighting chapter: ``f(results, ..., axes=None) -> axes``.

Each function draws on the given axes (a figure is created when none is given), in the book's
style, with registry labels and the book's colours, at most 9 inches wide so that no text is smaller than
:data:`dpsynth_book.book.MIN_TEXT_PX` in the book's column.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ... import plots
from .tables import DM_LABEL, STAT_LABEL, data_value

__all__ = [
    "bounds_and_weights",
    "utility",
    "quantile_bias",
    "bound_vs_weight",
    "before_after",
    "reweighting_weights",
    "local_bounds",
    "estimands",
    "contraction_by_n",
]

_BOUND = r"by-record bound $\Delta_{\alpha,x_i}$"
_LOCAL = r"local bound $\Delta_{\alpha,\mathbf{x}_r}$"
_WEIGHT = r"record weight $\alpha_i$"


def _axes(axes, nrows: int, ncols: int, size: tuple[float, float], **kw):
    if axes is None:
        plots.use_style()
        _, axes = plt.subplots(nrows, ncols, figsize=size, squeeze=False, **kw)
        return axes if nrows > 1 else axes[0]
    return np.asarray(axes)


def bounds_and_weights(res, data_model: str = "poisson", axes=None):
    """(a) By-record bounds of Unweighted, LW, CW, SW with LW's Delta; (b) their weights (paper Figs. 1, 3a-b)."""
    axes = _axes(axes, 1, 2, (9.0, 3.9))
    m = res.synthesizers.sel(data_model=data_model)
    four = ["Unweighted", "LW", "CW", "SW"]
    plots.violins(
        axes[0],
        {nm: m.delta_i.sel(synthesizer=nm).values for nm in four},
        ylabel=_BOUND,
        hline=float(m.delta.sel(synthesizer="LW")),
        hline_label="LW's Δ",
        title="(a) by-record bounds",
    )
    plots.violins(
        axes[1],
        {nm: m.weight.sel(synthesizer=nm).values for nm in four[1:]},
        ylabel=_WEIGHT,
        title="(b) record weights",
    )
    axes[1].set_ylim(-0.03, 1.03)
    return axes


def _mu_density(ax, m, names):
    for nm in plots.order(names):
        ax.hist(
            m.mu_draw.sel(synthesizer=nm).values,
            bins=50,
            density=True,
            histtype="step",
            lw=1.4,
            color=plots.color(nm),
            label=plots.label(nm),
        )
    ax.axvline(float(m.x.values.mean()), ls="--", color="black", lw=1.0, label="data mean")
    ax.set_xlabel(r"posterior draws of $\mu = e^{\beta}$")
    ax.set_ylabel("density")
    ax.legend(loc="upper left")


def utility(res, data_model: str = "poisson", sources=("Data", "Unweighted", "LW", "CW", "SW"), axes=None):
    """Statistics over one-draw synthetic sets (a-d), posterior of mu (e), records (f) (paper Figs. 2, 3c-f, 7).

    ``sources`` are values of the ``synthesizer`` coordinate: "Data" (bootstrap resamples in (a-d),
    the confidential records in (f)) and synthesizers.
    """
    axes = _axes(axes, 3, 2, (9.0, 10.5))
    flat = axes.ravel()
    m = res.synthesizers.sel(data_model=data_model)
    for i, (ax, s) in enumerate(zip(flat, ("q15", "q90", "mean", "median"))):
        plots.violins(
            ax,
            {src: m[s].sel(synthesizer=src).values for src in sources},
            ylabel=STAT_LABEL[s],
            hline=data_value(m, s),
            hline_label="confidential" if i == 0 else None,
            title=f"({'abcd'[i]}) {STAT_LABEL[s]}",
        )
    syn = [s for s in sources if s != "Data"]
    _mu_density(flat[4], m, (["Unweighted"] if "Unweighted" not in syn else []) + syn)
    flat[4].set_title(r"(e) posterior of $\mu$")
    plots.violins(
        flat[5],
        {"Data": m.x.values, **{nm: m.synthetic.sel(synthesizer=nm).values for nm in syn}},
        ylabel="record value",
        title="(f) records",
    )
    return axes


def quantile_bias(res, data_model: str = "poisson", sources=("Data", "Unweighted", "LW", "CW", "SW"), axes=None):
    """The paper's Figure 2a as bias: each percentile's mean over the synthetic sets minus the confidential value.

    One panel per statistic (15th and 90th percentile). For each source ("Data": bootstrap resamples of
    the records; the synthesizers: one-draw synthetic sets) a marker at the mean bias with a bar of two
    standard errors of that mean, and a thin line over the middle 95% of the sets; the grey band is
    :data:`~dpsynth_book.experiments.reweighting.verdicts.NOTABLE_BIAS_SD` standard deviations of the confidential
    statistic (over the bootstrap resamples) around 0, the line the verdict ``cw_quantiles_biased`` draws.
    """
    from .verdicts import NOTABLE_BIAS_SD, quantile_bias_numbers

    axes = _axes(axes, 1, 2, (9.0, 3.9))
    m = res.synthesizers.sel(data_model=data_model)
    names = plots.order(list(sources))
    syn = [s for s in names if s != "Data"]
    q = quantile_bias_numbers(res, data_model, sources=tuple(syn))
    for i, (ax, s) in enumerate(zip(np.ravel(axes), ("q15", "q90"))):
        sd = q["data_sd"][s]
        band = NOTABLE_BIAS_SD * sd
        ax.axhspan(-band, band, color="0.85", zorder=0,
                   label=f"±{NOTABLE_BIAS_SD:g} sd of the confidential statistic" if i == 0 else None)
        ax.axhline(0.0, ls="--", color="black", lw=1.0, label="confidential value" if i == 0 else None)
        truth = data_value(m, s)
        for j, src in enumerate(names):
            v = np.asarray(m[s].sel(synthesizer=src).values, dtype=float) - truth
            v = v[np.isfinite(v)]
            mean, se = float(v.mean()), float(v.std(ddof=1)) / np.sqrt(v.size) if v.size > 1 else 0.0
            lo, hi = np.quantile(v, [0.025, 0.975])
            col = plots.color(src, names)
            ax.plot([j, j], [lo, hi], color=col, lw=1.0, zorder=2)
            ax.errorbar([j], [mean], yerr=[[2 * se], [2 * se]], fmt="o", ms=7, color=col, mec="black", mew=0.8,
                        ecolor="black", elinewidth=2.2, capsize=0, zorder=3)
        ax.set_xticks(np.arange(len(names)), [plots.label(n) for n in names], rotation=20, ha="right")
        ax.set_xlim(-0.6, len(names) - 0.4)
        ax.set_ylabel(f"bias of the {STAT_LABEL[s]}")
        ax.set_title(f"({'ab'[i]}) {STAT_LABEL[s]}")
    np.ravel(axes)[0].legend(loc="lower left")
    return axes


def _scatter(ax, m, names, line_of: str):
    for nm in names:
        ax.scatter(
            m.weight.sel(synthesizer=nm),
            m.delta_i.sel(synthesizer=nm),
            s=9,
            alpha=0.55,
            color=plots.color(nm),
            label=plots.label(nm),
        )
    d = float(m.delta.sel(synthesizer=line_of))
    ax.axhline(d, ls="--", color="black", lw=1.1, label=f"{line_of}'s Δ = {d:.2f}")
    ax.set_xlabel(_WEIGHT)
    ax.set_ylabel(_BOUND)
    ax.legend(loc="lower right")


def bound_vs_weight(res, axes=None):
    """By-record bound against weight for LW and CW on the mixture, before re-weighting (paper Fig. 4)."""
    axes = _axes(axes, 1, 2, (9.0, 3.9), sharey=True)
    m = res.synthesizers.sel(data_model="nb_mixture")
    for ax, nm in zip(axes, ("LW", "CW")):
        _scatter(ax, m, [nm], nm)
        ax.set_title(plots.label(nm))
    return axes


def before_after(res, axes=None):
    """The same cloud before and after re-weighting, LW and CW on the mixture (paper Fig. 5)."""
    axes = _axes(axes, 1, 2, (9.0, 3.9), sharey=True)
    m = res.synthesizers.sel(data_model="nb_mixture")
    for ax, nm in zip(axes, ("LW", "CW")):
        _scatter(ax, m, [nm, f"{nm}_final"], nm)
        ax.set_title(f"{nm} → {nm}_final")
    return axes


def reweighting_weights(res, axes=None):
    """(a) bounds before/after, (b) weight after vs before, (c, d) weight distributions (paper Fig. 6)."""
    axes = _axes(axes, 2, 2, (9.0, 7.6))
    m = res.synthesizers.sel(data_model="nb_mixture")
    four = ["LW", "LW_final", "CW", "CW_final"]
    plots.violins(
        axes[0, 0],
        {nm: m.delta_i.sel(synthesizer=nm).values for nm in four},
        ylabel=_BOUND,
        hline=float(m.delta.sel(synthesizer="LW")),
        hline_label="LW's Δ",
        title="(a) by-record bounds",
    )
    ax = axes[0, 1]
    for start in ("LW", "CW"):
        ax.scatter(
            m.weight.sel(synthesizer=start),
            m.weight.sel(synthesizer=f"{start}_final"),
            s=9,
            alpha=0.6,
            color=plots.color(f"{start}_final"),
            label=f"{start} → {start}_final",
        )
    ax.plot([0, 1], [0, 1], ls=":", color="black", lw=1, label="no change")
    ax.set_xlabel("weight before")
    ax.set_ylabel("weight after")
    ax.legend(loc="lower right")
    ax.set_title("(b) weights, record by record")
    for ax, start, t in zip(axes[1], ("LW", "CW"), ("(c)", "(d)")):
        plots.violins(
            ax,
            {nm: m.weight.sel(synthesizer=nm).values for nm in (start, f"{start}_final")},
            ylabel=_WEIGHT,
            title=f"{t} weights, {start}",
        )
        ax.set_ylim(-0.03, 1.03)
    return axes


def local_bounds(res, axes=None):
    """Local bounds of Unweighted and LW over the databases of size n (paper Figs. 14, 16)."""
    axes = _axes(axes, 1, 2, (9.0, 3.9))
    c, n = res.contraction, int(res.params.n)
    for ax, dm in zip(axes, c.data_model.values):
        d = c.delta.sel(data_model=dm, n=n)
        plots.violins(
            ax,
            {nm: d.sel(synthesizer=nm).values for nm in ("Unweighted", "LW")},
            ylabel=_LOCAL,
            title=f"{DM_LABEL[str(dm)]}, n = {n}",
        )
    return axes


def estimands(res, axes=None):
    """Statistics of the data and of one synthetic set per database, Unweighted and LW (paper Figs. 15, 17)."""
    c, n = res.contraction, int(res.params.n)
    dms = [str(v) for v in c.data_model.values]
    axes = _axes(axes, 4, len(dms), (9.0, 12.0))
    axes = np.asarray(axes).reshape(4, len(dms))
    for j, dm in enumerate(dms):
        for i, s in enumerate(("q15", "q90", "mean", "median")):
            plots.violins(
                axes[i, j],
                {nm: c[s].sel(data_model=dm, n=n, synthesizer=nm).values for nm in ("Data", "Unweighted", "LW")},
                ylabel=STAT_LABEL[s],
                title=f"{DM_LABEL[dm]}: {STAT_LABEL[s]}",
            )
    return axes


def contraction_by_n(res, axes=None):
    """Not in the paper: the local bound's distribution over databases at every sample size."""
    c = res.contraction
    dms = [str(v) for v in c.data_model.values]
    axes = _axes(axes, 1, len(dms), (9.0, 4.0))
    axes = np.atleast_1d(axes)
    ns = [int(v) for v in c.n.values]
    for ax, dm in zip(axes, dms):
        for j, nm in enumerate(("Unweighted", "LW")):
            pos = np.arange(len(ns)) * 3 + j + 1
            vals = [c.delta.sel(data_model=dm, n=nn, synthesizer=nm).values for nn in ns]
            parts = ax.violinplot(vals, positions=pos, showmedians=True, widths=0.85)
            for body in parts["bodies"]:
                body.set_facecolor(plots.color(nm))
                body.set_edgecolor("black")
                body.set_alpha(0.75)
            for key in ("cmedians", "cmins", "cmaxes", "cbars"):
                if key in parts:
                    parts[key].set_color("black")
                    parts[key].set_linewidth(0.8)
            if len(vals[0]) <= 30:
                ax.scatter(
                    np.repeat(pos, [len(v) for v in vals]),
                    np.concatenate(vals),
                    s=9,
                    color="black",
                    alpha=0.6,
                    zorder=4,
                    linewidths=0,
                )
            ax.plot([], [], color=plots.color(nm), lw=6, label=plots.label(nm))
        ax.set_xticks(np.arange(len(ns)) * 3 + 1.5, [f"n = {v}" for v in ns])
        ax.set_ylabel(_LOCAL)
        ax.set_xlabel("records per database")
        ax.set_title(DM_LABEL[dm])
        ax.legend(loc="upper left")
    return axes

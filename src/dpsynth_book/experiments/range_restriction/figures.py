"""Figures of the range-restriction chapter: ``f(study, ax=None) -> Axes`` (multi-panel: ``axes=None``).

``study`` is the chapter's results object or its study Dataset. Every figure uses the book's style,
the book's colours, the registry's labels, and :func:`dpsynth_book.plots.violins`; B' (the same fit as B,
accounted differently) is hatched so that it can be told apart from B.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ... import plots
from .tables import n_main, study_of

__all__ = ["record_bounds_figure", "q90_figure", "avg_ecdf_figure", "contraction_figure"]

_WIDTH = 8.5  # inches; with the style's 9-pt ticks the smallest text stays above 9 px in the book


def _violins(ax, values: dict, **kw):
    """The book's violins; B' bodies hatched."""
    n0 = len(ax.collections)
    plots.violins(ax, values, **kw)
    for body, m in zip(ax.collections[n0:], plots.order(list(values))):
        if m.startswith("B'"):
            body.set_hatch("///")
    return ax


def _ax(ax, height: float = 4.4):
    if ax is None:
        plots.use_style()
        _, ax = plt.subplots(figsize=(_WIDTH, height))
    return ax


def _names(ds) -> list[str]:
    return [str(m) for m in ds["synthesizer"].values]


def record_bounds_figure(study, ax=None):
    """By-record Lipschitz bounds ``Delta_i`` of every synthesizer on one sample (replicate 0, n = ``params.n``)."""
    ds = study_of(study)
    ax = _ax(ax)
    rec = ds["record_delta"].isel(replicate=0)
    _violins(ax, {m: rec.sel(synthesizer=m).values for m in _names(ds)},
             ylabel=r"by-record bound $\Delta_i$")
    return ax


def q90_figure(study, ax=None):
    """90th percentile of the data and of one synthetic data set per synthesizer, over replicates (n = ``params.n``)."""
    ds = study_of(study)
    ax = _ax(ax)
    n = n_main(ds)
    q = {m: ds["q90"].sel(n_obs=n, synthesizer=m).values for m in _names(ds)}
    q["Data"] = ds["q90_data"].sel(n_obs=n).values
    _violins(ax, q, ylabel="90th percentile", hline=ds.attrs.get("true_q90"),
             hline_label="population 90th percentile" if "true_q90" in ds.attrs else None)
    return ax


def avg_ecdf_figure(study, ax=None):
    """avg-ECDF distance of one synthetic data set (one posterior draw) to the data, over replicates."""
    ds = study_of(study)
    ax = _ax(ax)
    n = n_main(ds)
    _violins(ax, {m: ds["avg_ecdf"].sel(n_obs=n, synthesizer=m).values for m in _names(ds)},
             ylabel="avg-ECDF distance")
    return ax


def contraction_figure(study, axes=None):
    """Local bound ``Delta`` over replicates, one panel per sample size (two panels a row)."""
    ds = study_of(study)
    ns = [int(v) for v in ds["n_obs"].values]
    if axes is None:
        plots.use_style()
        rows = int(np.ceil(len(ns) / 2))
        _, axes = plt.subplots(rows, min(2, len(ns)), figsize=(_WIDTH + 0.5, 4.6 * rows), sharey=True, squeeze=False)
    flat = np.ravel(axes)
    for i, (ax, nn) in enumerate(zip(flat, ns)):
        _violins(ax, {m: ds["delta"].sel(n_obs=nn, synthesizer=m).values for m in _names(ds)},
                 ylabel=r"local bound $\Delta$ (of the data set)" if i % 2 == 0 else "", title=f"n = {nn}")
        ax.tick_params(axis="x", labelrotation=60)
    for ax in flat[len(ns):]:
        ax.set_visible(False)
    return axes

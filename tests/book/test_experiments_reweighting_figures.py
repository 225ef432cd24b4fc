"""Figures of the re-weighting chapter: axes returned, registry labels, legible in the book's column."""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from reweighting_fake import fake_results

from dpsynth import registry
from dpsynth_book import book
from dpsynth_book.experiments.reweighting import figures

matplotlib.use("Agg")

FIGURES = [
    ("bounds_and_weights", {"data_model": "poisson"}, 2),
    ("bounds_and_weights", {"data_model": "nb_mixture"}, 2),
    ("utility", {"data_model": "poisson"}, 6),
    ("quantile_bias", {}, 2),
    ("utility", {"data_model": "nb_mixture", "sources": ("Data", "LW", "LW_final", "CW", "CW_final")}, 6),
    ("bound_vs_weight", {}, 2),
    ("before_after", {}, 2),
    ("reweighting_weights", {}, 4),
    ("local_bounds", {}, 2),
    ("estimands", {}, 8),
    ("contraction_by_n", {}, 2),
]


@pytest.fixture(scope="module")
def res():
    return fake_results()


def _texts(fig):
    return " ".join(t.get_text() for t in fig.findobj(lambda a: hasattr(a, "get_text")))


@pytest.mark.parametrize("name,kw,n_axes", FIGURES)
def test_figure_returns_axes_and_is_legible(res, name, kw, n_axes):
    axes = getattr(figures, name)(res, **kw)
    flat = np.ravel(axes)
    assert len(flat) == n_axes and all(isinstance(a, matplotlib.axes.Axes) for a in flat)
    fig = flat[0].figure
    assert fig.get_figwidth() <= 9.5
    assert book.smallest_text_px(fig) >= book.MIN_TEXT_PX
    text = _texts(fig)
    assert "(aDP)" in text or "(none)" in text
    assert "Unweighted (aDP)" not in text
    plt.close(fig)


def test_registry_labels_on_utility(res):
    axes = figures.utility(res, "poisson")
    ticks = [t.get_text() for t in axes[0, 0].get_xticklabels()]
    assert ticks == ["Data"] + [registry.label(n) for n in ("Unweighted", "LW", "CW", "SW")]
    plt.close(axes[0, 0].figure)


def test_draws_on_given_axes(res):
    fig, axes = plt.subplots(1, 2)
    out = figures.bounds_and_weights(res, "poisson", axes=axes)
    assert out[0] is axes[0] and out[1] is axes[1]
    plt.close(fig)


def test_quantile_bias_draws_one_marker_per_source_at_the_mean_bias(res):
    from dpsynth_book.experiments.reweighting.verdicts import quantile_bias_numbers

    axes = figures.quantile_bias(res)
    q = quantile_bias_numbers(res)
    ax = axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["Data"] + [registry.label(n) for n in
                                                                        ("Unweighted", "LW", "CW", "SW")]
    # the markers sit at the mean biases (the "Data" marker first)
    markers = [ln for ln in ax.get_lines() if ln.get_marker() == "o"]
    ys = [float(ln.get_ydata()[0]) for ln in markers]
    assert ys[1:] == pytest.approx([q["bias"][s]["q15"] for s in ("Unweighted", "LW", "CW", "SW")])
    assert ys[0] == pytest.approx(q["data_offset"]["q15"])
    plt.close(ax.figure)

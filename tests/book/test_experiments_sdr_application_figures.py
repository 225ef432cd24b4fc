"""Figures of the SDR application chapter on small synthetic results: axes, registry labels, legibility."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
import sdr_application_fakes as fakes

from dpsynth_book import book, plots
from dpsynth_book.experiments.sdr_application import figures

FIGURES = [figures.density_figure, figures.before_reweighting_figure, figures.bounds_weights_figure,
           figures.reweighting_scatter_figure, figures.reweighting_violins_figure, figures.utility_figure]


@pytest.fixture(scope="module")
def res():
    return fakes.results(converged=False)


@pytest.mark.parametrize("fn", FIGURES, ids=lambda f: f.__name__)
def test_figure_returns_axes_and_is_legible(res, fn):
    ax = fn(res)
    assert isinstance(ax, np.ndarray) and all(isinstance(a, plt.Axes) for a in ax.flat)
    fig = ax.flat[0].figure
    assert fig.get_figwidth() <= 9.5
    assert book.smallest_text_px(fig) >= book.MIN_TEXT_PX
    labels = " ".join(a.get_title() for a in ax.flat) + " ".join(
        t.get_text() for a in ax.flat for t in a.get_xticklabels()) + " ".join(
        lab for a in ax.flat for lab in a.get_legend_handles_labels()[1])
    assert any(plots.label(n) in labels for n in ("LW", "CW", "LW_final"))
    plt.close(fig)


def test_density_titles_flag_non_converged_fits(res):
    ax = figures.density_figure(res)
    titles = [a.get_title() for a in ax.flat]
    assert titles[0].startswith(plots.label("LW")) and titles[0].endswith("†")
    assert not titles[4].endswith("†")  # PH has no MCMC
    plt.close(ax.flat[0].figure)


def test_given_axes_are_used(res):
    fig, axes = plt.subplots(2, 2, figsize=(9, 8))
    out = figures.reweighting_violins_figure(res, axes=axes)
    assert out.flat[0] is axes[0, 0]
    plt.close(fig)


def test_figure10_has_four_labelled_panels_as_in_the_paper(res):
    ax = figures.reweighting_violins_figure(res)
    assert ax.shape == (2, 2)
    titles = [a.get_title() for a in ax.flat]
    assert [t[:3] for t in titles] == ["(a)", "(b)", "(c)", "(d)"]
    for t, (what, start) in zip(titles, [("bounds", "LW"), ("bounds", "CW"), ("weights", "LW"), ("weights", "CW")]):
        assert what in t and plots.label(start) in t and plots.label(f"{start}_final") in t
    ticks = [[x.get_text() for x in a.get_xticklabels()] for a in ax.flat]
    assert ticks[1] == [plots.label("CW"), plots.label("CW_final")]
    plt.close(ax.flat[0].figure)

"""Figures of the range-restriction chapter: Axes returned, registry labels, legible in the book."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from range_restriction_fake import NAMES, fake_study  # noqa: E402

from dpsynth import registry  # noqa: E402
from dpsynth_book import book  # noqa: E402
from dpsynth_book.experiments.range_restriction import figures as F  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


@pytest.mark.parametrize("fn", [F.record_bounds_figure, F.q90_figure, F.avg_ecdf_figure])
def test_single_panel_figures(fn):
    ax = fn(fake_study())
    assert isinstance(ax, matplotlib.axes.Axes)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert [registry.label(m) for m in NAMES] == [lab for lab in labels if lab != "Data"]
    assert book.smallest_text_px(ax.figure) >= book.MIN_TEXT_PX


def test_q90_figure_shows_the_data_and_the_population_value():
    ax = F.q90_figure(fake_study())
    assert "Data" in [t.get_text() for t in ax.get_xticklabels()]
    assert any(np.allclose(line.get_ydata(), 9.8) for line in ax.get_lines())


def test_b_prime_is_hatched():
    ax = F.avg_ecdf_figure(fake_study())
    hatched = [c for c in ax.collections if c.get_hatch()]
    assert len(hatched) == 2


def test_figure_draws_on_a_given_axes():
    fig, ax = plt.subplots()
    assert F.record_bounds_figure(fake_study(), ax=ax) is ax


def test_contraction_figure_one_panel_per_n_and_legible():
    axes = F.contraction_figure(fake_study())
    visible = [ax for ax in np.ravel(axes) if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == ["n = 40", "n = 80", "n = 160"]
    assert book.smallest_text_px(visible[0].figure) >= book.MIN_TEXT_PX
    for ax in visible:
        assert [t.get_text() for t in ax.get_xticklabels()] == [registry.label(m) for m in NAMES]

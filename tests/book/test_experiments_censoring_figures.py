"""Figures of the censoring chapter: Axes returned, registry labels, legible in the book's column."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from censoring_fake import fake_results  # noqa: E402

from dpsynth import registry  # noqa: E402
from dpsynth_book import (
    book,  # noqa: E402
    presentation,
)
from dpsynth_book.experiments.censoring import figures as F  # noqa: E402

RES = fake_results()
LABELS = {registry.label(k) for k in registry.names()}

CASES = [
    (F.posterior_figure, RES.figure1, {}),
    (F.bounds_figure, RES, {}),
    (F.bounds_figure, RES, {"unweighted": True}),
    (F.threshold_figure, RES, {}),
    (F.ecdf_figure, RES, {"measure": "max_ecdf"}),
    (F.ecdf_figure, RES, {"measure": "avg_ecdf"}),
    (F.mixing_figure, RES, {}),
    (F.percentile_figure, RES, {"stat": "q15"}),
    (F.percentile_figure, RES, {"stat": "mean"}),
    (F.downscale_figure, RES, {}),
    (F.downscale_utility_figure, RES, {}),
    (F.downscale_utility_figure, RES, {"stats": ("median", "q90")}),
]


@pytest.mark.parametrize("fn, arg, kw", CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_figure_returns_axes_and_is_legible(fn, arg, kw):
    axes = np.atleast_1d(fn(arg, **kw))
    assert all(isinstance(a, matplotlib.axes.Axes) for a in axes.ravel())
    fig = axes.ravel()[0].figure
    assert fig.get_figwidth() <= 9.5
    assert book.smallest_text_px(fig) >= book.MIN_TEXT_PX
    ticks = {t.get_text() for a in axes.ravel() for t in a.get_xticklabels()}
    if fn not in (F.posterior_figure, F.threshold_figure):
        assert ticks & LABELS and not any(t in set(registry.names()) - {"Data"} for t in ticks)
    plt.close(fig)


def test_figure_draws_on_given_axes():
    fig, axes = plt.subplots(1, 2)
    out = F.bounds_figure(RES, axes=axes)
    assert out[0] is axes[0] and out[0].get_ylabel().startswith("Lipschitz")
    plt.close(fig)


def test_percentile_figure_shows_unweighted_and_the_truth():
    axes = F.percentile_figure(RES, stat="mean")
    for a in axes:
        ticks = [t.get_text() for t in a.get_xticklabels()]
        assert registry.label("Unweighted") in ticks and "Data" in ticks
    assert len(axes) == 2  # one panel per eps of the fake
    with pytest.raises(ValueError, match="stat"):
        F.percentile_figure(RES, stat="q99")
    plt.close(axes[0].figure)


def test_downscale_utility_figure_layout():
    axes = F.downscale_utility_figure(RES, stats=("max_ecdf", "mean"))
    assert axes.shape == (2, 2)
    assert axes[0, 0].get_title() == "without downscaling" and axes[1, 0].get_title().startswith("downscaled")
    assert axes[0, 1].get_ylabel() == "mean" and axes[0, 0].get_ylabel() == "max-ECDF"
    with pytest.raises(ValueError, match="stats"):
        F.downscale_utility_figure(RES, stats=("nope",))
    plt.close(axes[0, 0].figure)


def test_reference_figure_one_line_per_variant_and_legible():
    axes = F.reference_figure(RES)
    fig = axes[0].figure
    names = [str(v) for v in RES.reference["variant"].values]
    assert len(axes) == 4 and fig.get_figwidth() <= 9.5 and book.smallest_text_px(fig) >= book.MIN_TEXT_PX
    for a in axes:
        assert len(a.get_lines()) >= len(names)
    # the censored share (in %) of Censor_uw at the fake's eps 1 and 4: 40% and 10%
    uw = next(ln for ln in axes[0].get_lines() if ln.get_label() == registry.label("Censor_uw"))
    np.testing.assert_allclose(uw.get_ydata(), [40.05, 10.05], rtol=1e-6)
    assert list(uw.get_xdata()) == [1.0, 4.0]
    # registry colours for the registered synthesizers; every variant distinct by line style and marker (no colour)
    assert uw.get_color() == presentation.color("Censor_uw")
    styles = {(ln.get_linestyle(), ln.get_marker()) for ln in axes[0].get_lines() if not ln.get_label().startswith("_")}
    assert len(styles) == len(names)
    plt.close(fig)


def test_reference_figure_subset_of_variants():
    axes = F.reference_figure(RES, variants=["Censor_uw", "Censor_ref"])
    assert {ln.get_label() for ln in axes[1].get_lines()} == {registry.label("Censor_uw"), registry.label("Censor_ref")}
    plt.close(axes[0].figure)

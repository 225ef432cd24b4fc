"""Figures of the censoring chapter: Axes returned, registry labels, legible in the book's column."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from censoring_fake import fake_results  # noqa: E402

from dpsynth import book, registry  # noqa: E402
from dpsynth.experiments.censoring import figures as F  # noqa: E402

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
    (F.downscale_figure, RES, {}),
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

"""The figure of the "Releasing a whole table" chapter, on constructed Datasets."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from whole_table_fake import AIM, BASE, METHODS, fake_results  # noqa: E402

from dpsynth_book.experiments.whole_table.figures import PANELS, STYLE, metrics_figure  # noqa: E402


def test_figure_is_metric_by_table_with_one_line_per_method():
    fig = metrics_figure(fake_results())
    axes = fig.get_axes()
    assert len(axes) == len(PANELS) * 2
    ax = axes[0]  # first row, first column: numeric marginals on house prices
    lines = [ln for ln in ax.get_lines() if not ln.get_label().startswith("_")]
    assert [ln.get_label() for ln in lines] == list(METHODS)
    aim = lines[METHODS.index(AIM)]
    np.testing.assert_allclose(aim.get_xdata(), [1.0, 3.0, 5.0])
    np.testing.assert_allclose(aim.get_ydata(), BASE["marginal_numeric"][AIM] / np.sqrt([1.0, 3.0, 5.0]))
    assert len({STYLE[m]["color"] for m in METHODS}) == 4 and len({STYLE[m]["marker"] for m in METHODS}) == 4
    assert fig.legends and len(fig.legends[0].get_texts()) == 4
    plt.close(fig)


def test_figure_with_one_table_and_one_eps():
    fig = metrics_figure(fake_results(tables=("house_prices",), eps=(3.0,)))
    assert len(fig.get_axes()) == len(PANELS)
    plt.close(fig)

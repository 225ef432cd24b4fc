"""The choosing chapter's privacy-utility figure and its caption: legible, guarantees marked, numbers from the table."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402
from choosing_fake import fake_studies  # noqa: E402

from dpsynth import registry  # noqa: E402
from dpsynth_book import (
    book,  # noqa: E402
    presentation,
)
from dpsynth_book.experiments.choosing import figures, tables  # noqa: E402


def test_tradeoff_figure_is_legible_and_marks_guarantees():
    t = tables.tradeoff_table(fake_studies())
    fig, axes = figures.tradeoff_figure(t)
    try:
        assert len(axes) == t["study"].nunique()
        assert book.smallest_text_px(fig) >= book.MIN_TEXT_PX
        assert all(ax.get_xscale() == "log" for ax in axes)
        (legend,) = fig.legends
        labels = [x.get_text() for x in legend.get_texts()]
        assert labels == [registry.label(n) for n in presentation.order(list(pd.unique(t["synthesizer"])))]
        handles = dict(zip(labels, legend.legend_handles))
        assert handles["Unweighted (none)"].get_marker() == "x"
        ph = handles["PH (DP)"]
        assert ph.get_markerfacecolor().lower() == presentation.color("PH").lower()      # filled: DP
        assert handles["LW (aDP)"].get_markerfacecolor() == "white"                  # open: aDP
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


def test_tradeoff_caption_states_source_and_replicates():
    t = tables.tradeoff_table(fake_studies())
    cap = figures.tradeoff_caption(t)
    assert "shipped paper-scale results" in cap
    assert "4 for “Beta, n = 2,000 (censoring study)”" in cap
    assert "1, of 8 synthetic sets each, for “Poisson, n = 1,000 (re-weighting study)”" in cap
    assert "SDR stand-in" in cap


def test_log_ticks_are_readable():
    assert figures._log_ticks(1.4, 19.0) == [2.0, 5.0, 10.0]
    assert figures._log_ticks(8.5, 29.0) == [10.0, 15.0, 20.0]
    assert figures._log_ticks(24.0, 68.0) == [30.0, 40.0, 50.0, 60.0]


def test_grid_figure_has_a_panel_per_situation_and_open_markers_for_unusable_cells():
    from test_experiments_choosing_recommend import fake_grid

    from dpsynth_book.experiments.choosing.figures import grid_figure

    ds = fake_grid()
    ds["usable"].loc[{"situation": "count", "eps": 1.0, "candidate": "PH", "replicate": 0}] = False
    fig = grid_figure(ds)
    panels = [ax for ax in fig.axes if ax.get_visible() and ax.axison]
    assert [ax.get_title() for ax in panels] == list(ds["situation"].values)
    count = panels[list(ds["situation"].values).index("count")]
    open_markers = [ln for ln in count.lines if ln.get_markerfacecolor() == "white" and len(ln.get_xdata())]
    assert len(open_markers) == 1 and list(open_markers[0].get_xdata()) == [1.0]
    assert all(ax.get_xscale() == "log" for ax in panels)

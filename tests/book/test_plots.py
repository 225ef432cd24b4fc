"""One figure style: names with guarantee type, order and colours, labelled violin plots."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

from dpsynth_book import plots  # noqa: E402


def test_plots_take_labels_from_the_registry():
    assert plots.label("Censor_uw") == "Censor_uw (DP)"
    assert plots.label("Censor_w") == "Censor_w (aDP)"
    assert plots.label("Unweighted") == "Unweighted (none)"
    assert plots.guarantee_of("Data") is None
    with pytest.raises(KeyError, match="unknown synthesizer"):
        plots.label("Mystery")


def test_unknown_names_get_stable_distinct_colours():
    names = ["A[0.4,1.8]", "B[0.4,1.8]", "Censor_w"]
    a = plots.color("A[0.4,1.8]", names)
    b = plots.color("B[0.4,1.8]", names)
    assert a != b
    assert a == plots.color("A[0.4,1.8]", names)
    assert a != plots.color("Censor_w")


def test_use_style():
    plots.use_style()
    plt.close("all")


def test_violins_labelled_and_coloured():
    rng = np.random.default_rng(1)
    values = {"Censor_w": rng.normal(size=30), "Data": rng.normal(size=30), "LW": rng.normal(size=30)}
    fig, ax = plt.subplots()
    try:
        out = plots.violins(ax, values, ylabel="max-ECDF", hline=2.5, hline_label="eps/2", title="Utility")
        assert out is ax
        assert ax.get_ylabel() == "max-ECDF"
        assert ax.get_title() == "Utility"
        ticks = [t.get_text() for t in ax.get_xticklabels()]
        assert ticks == ["Data", "LW (aDP)", "Censor_w (aDP)"]
        bodies = [c for c in ax.collections if c.get_paths()]
        faces = [to_hex(b.get_facecolor()[0]) for b in bodies[:3]]
        assert faces == [to_hex(plots.color(n)) for n in ["Data", "LW", "Censor_w"]]
        legend = ax.get_legend()
        assert legend is not None and [t.get_text() for t in legend.get_texts()] == ["eps/2"]
        assert any(np.allclose(line.get_ydata(), 2.5) for line in ax.get_lines())
    finally:
        plt.close(fig)


def test_violins_without_reference_line():
    fig, ax = plt.subplots()
    try:
        plots.violins(ax, {"PH": np.arange(5.0), "Unweighted": np.arange(5.0)}, ylabel="Delta")
        assert ax.get_legend() is None
        assert [t.get_text() for t in ax.get_xticklabels()] == ["Unweighted (none)", "PH (DP)"]
    finally:
        plt.close(fig)


def test_stand_in_note_names_the_stand_in():
    assert "stand-in" in plots.STAND_IN_NOTE


def test_range_variants_get_one_colour_family_each_and_distinct_shades():
    names = ["LW", "A[0.4,1.8]", "B[0.4,1.8]", "B'[0.4,1.8]", "A[0.6,1.2]", "B[0.6,1.2]", "B'[0.6,1.2]"]
    cols = [plots.color(n, names) for n in names]
    assert len(set(cols)) == len(cols)
    assert plots.color("A[0.4,1.8]", names) != plots.color("A[0.6,1.2]", names)
    assert plots.color("LW", names) not in cols[1:]


def test_constant_series_stays_visible():
    # Censor_uw's Delta is exactly eps/2 in every replicate: the violin has no width, so a bar is drawn
    fig, ax = plt.subplots()
    try:
        plots.violins(ax, {"Censor_uw": np.full(20, 1.5), "Weighted": np.linspace(1, 2, 20)}, ylabel="Delta")
        thick = [ln for ln in ax.get_lines() if ln.get_linewidth() >= 4 and np.allclose(ln.get_ydata(), 1.5)]
        assert thick, "a constant series must be drawn as a visible bar"
        assert to_hex(thick[0].get_color()) == to_hex(plots.color("Censor_uw"))
    finally:
        plt.close(fig)

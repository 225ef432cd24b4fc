"""One figure style: names with guarantee type, order and colours, labelled violin plots."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_hex  # noqa: E402

from dpsynth import plots  # noqa: E402


def test_labels_carry_the_guarantee_type():
    assert plots.label("Censor_w") == "Censor_w (DP)"
    assert plots.label("Censor_uw") == "Censor_uw (DP)"
    assert plots.label("PH") == "PH (DP)"
    assert plots.label("Weighted") == "Weighted (aDP)"
    assert plots.label("LW_final") == "LW_final (aDP)"
    assert plots.label("Weighted-e") == "Weighted-e (aDP)"
    assert plots.label("Data") == "Data"
    assert plots.label("B[0.4,1.8]") == "B[0.4,1.8] (aDP)"
    assert plots.label("Censor_w", guarantee=None) == "Censor_w"


def test_guarantee_of():
    assert plots.guarantee_of("Censor_w") == "DP"
    assert plots.guarantee_of("SW") == "aDP"
    assert plots.guarantee_of("Data") is None
    assert plots.guarantee_of("A[0.6,1.2]") == "aDP"


def test_guarantees_match_mechanism_types():
    for name, g, _ in plots.SYNTHESIZERS:
        if name.startswith("Censor") or name == "PH":
            assert g == "DP", name
        elif name != "Data":
            assert g == "aDP", name


def test_order():
    assert plots.order(["PH", "Censor_w", "Data", "LW", "Weighted-e", "Unweighted"]) == [
        "Data", "Unweighted", "LW", "Weighted-e", "Censor_w", "PH",
    ]
    assert plots.order(["B[0.4,1.8]", "Censor_uw", "A[0.4,1.8]", "Data"]) == [
        "Data", "Censor_uw", "B[0.4,1.8]", "A[0.4,1.8]",
    ]


def test_colours_consistent_and_distinct():
    known = [n for n, _, _ in plots.SYNTHESIZERS]
    cols = {n: plots.color(n) for n in known}
    assert cols["Censor_w"] == plots.color("Censor_w", ["Data", "Censor_w"])  # independent of context
    # Weighted and LW are the same mechanism under two names; every other pair differs
    assert cols["Weighted"] == cols["LW"]
    others = [c for n, c in cols.items() if n != "Weighted"]
    assert len(set(others)) == len(others)


def test_unknown_names_get_stable_distinct_colours():
    names = ["A[0.4,1.8]", "B[0.4,1.8]", "Censor_w"]
    a = plots.color("A[0.4,1.8]", names)
    b = plots.color("B[0.4,1.8]", names)
    assert a != b
    assert a == plots.color("A[0.4,1.8]", names)
    assert a not in {c for _, _, c in plots.SYNTHESIZERS}


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
        assert ticks == ["Data", "LW (aDP)", "Censor_w (DP)"]
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
        assert [t.get_text() for t in ax.get_xticklabels()] == ["Unweighted (aDP)", "PH (DP)"]
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

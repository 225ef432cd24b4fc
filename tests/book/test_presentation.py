"""How the book shows each mechanism: one table of colours and places, keyed by the registry key."""

from __future__ import annotations

import pytest
from matplotlib.colors import to_rgb

from dpsynth import mechanisms, registry
from dpsynth.figure_style import PALETTE
from dpsynth.mechanisms import catalog
from dpsynth.mechanisms.contract import MechanismSpec
from dpsynth_book import plots, presentation
from dpsynth_book.presentation import LOOKS, Look


def test_every_registry_entry_has_one_look_and_nothing_else_has_one():
    keys = [s.key for s in registry.entries()]
    assert sorted(LOOKS) == sorted(keys)
    for key, look in LOOKS.items():
        for c in (look.colour if isinstance(look.colour, tuple) else (look.colour,)):
            to_rgb(c)
        assert isinstance(look.colour, tuple) == registry.spec(key).pattern, key  # a pattern has shades


def test_colours_are_the_colour_blind_safe_palette():
    for key, look in LOOKS.items():
        if not registry.spec(key).pattern:
            assert look.colour in PALETTE.values(), key
    assert presentation.color("Data") == PALETTE["dark grey"]


def test_a_look_needs_hex_colours():
    with pytest.raises(ValueError, match="hex colour"):
        Look("red", 1)
    with pytest.raises(ValueError, match="hex colour"):
        Look(("#000000", "blue"), 1)


def test_order_is_the_book_s():
    assert presentation.order(["PH", "Censor_w", "Data", "LW", "Weighted-e", "Unweighted"]) == [
        "Data", "Unweighted", "LW", "Weighted-e", "Censor_w", "PH",
    ]
    assert presentation.order(["B[0.4,1.8]", "Censor_uw", "A[0.6,1.2]", "A[0.4,1.8]", "Data"]) == [
        "Data", "Censor_uw", "A[0.6,1.2]", "A[0.4,1.8]", "B[0.4,1.8]",
    ]
    # an alias at its mechanism's place
    assert presentation.order(["PH", "Weighted", "CW", "Data"]) == ["Data", "Weighted", "CW", "PH"]
    # the book's order of the package's mechanisms is the catalogue's
    assert presentation.order(registry.names()) == registry.names()
    with pytest.raises(KeyError, match="unknown synthesizer"):
        presentation.order(["Mystery"])


def test_colours_fixed_and_distinct_within_each_chapter_figure():
    assert presentation.color("Weighted") == presentation.color("LW")
    assert presentation.color("Censor_w") == presentation.color("Censor_w", ["Data", "Censor_w"])
    figures = [
        ["Data", "Unweighted", "Weighted", "Weighted-e", "Censor_w", "Censor_w-pub", "Censor_uw", "PH", "PH-paper"],
        ["Data", "Unweighted", "LW", "CW", "SW", "LW_final", "CW_final"],
        ["Unweighted", "LW", "A[0.4,1.8]", "B[0.4,1.8]", "B'[0.4,1.8]", "A[0.6,1.2]", "B[0.6,1.2]", "B'[0.6,1.2]"],
    ]
    for shown in figures:
        cols = [presentation.color(n, shown) for n in shown]
        assert len(set(cols)) == len(cols), shown


def test_noise_aware_has_a_colour_of_its_own_among_the_dp_mechanisms_it_is_shown_with():
    mine = presentation.color("Noise-aware")
    others = {presentation.color(s.key) for s in mechanisms.specs()
              if s.key != "noise_aware" and s.runnable and not s.pattern and LOOKS[s.key].order >= 80}
    assert mine in PALETTE.values() and mine not in others
    assert 100 < LOOKS["noise_aware"].order < 110


def test_plots_read_the_presentation():
    assert plots.color is presentation.color and plots.order is presentation.order


def test_a_mechanism_without_a_look_comes_last_and_asks_for_its_row():
    spec = MechanismSpec(key="toy_look", name="Toy-look", guarantee="DP", description="a test's toy",
                         not_runnable="a test's toy")
    catalog.register(spec)
    try:
        assert presentation.order(["Toy-look", "Unweighted", "Data"]) == ["Data", "Unweighted", "Toy-look"]
        with pytest.raises(KeyError, match="add its row to dpsynth_book.presentation.LOOKS"):
            presentation.color("Toy-look")
        # the decision table of the choosing chapter lists it, from its spec
        from dpsynth_book.experiments.choosing import decision_table

        table = decision_table()
        assert "Toy-look" in table.index and table.loc["Toy-look", "guarantee"] == "DP"
    finally:
        catalog.unregister("toy_look")
    assert "toy_look" not in catalog.keys()

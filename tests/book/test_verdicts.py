"""Structured verdicts render as a numbered list."""

from dpsynth_book.verdicts import Verdict, verdicts_markdown


def test_verdict_markdown():
    v = [Verdict("a", "PH is the least useful", False, "worse in 2 of 12 cells", {"cells": 2}),
         Verdict("b", "Censored stay at eps/2", True, "in all 8 replicates")]
    md = verdicts_markdown(v)
    assert md.startswith("1. *PH is the least useful* — **does not hold**: worse in 2 of 12 cells")
    assert "2. *Censored stay at eps/2* — **holds**" in md
    assert Verdict("c", "x", None, "y").word == "undecided"


def test_contraction_holds_when_the_spread_shrinks():
    import numpy as np

    from dpsynth_book.verdicts import contraction_verdict

    rng = np.random.default_rng(0)
    v = contraction_verdict({250: 3 + rng.normal(0, 1.0, 100), 4000: 3.5 + rng.normal(0, 0.2, 100)}, who="LW")
    assert v.holds is True and v.key == "local_bound_contracts"
    assert v.numbers["LW"]["iqr"][0] > v.numbers["LW"]["iqr"][1]
    assert "interquartile range" in v.claim


def test_contraction_fails_when_the_spread_grows_even_if_the_median_settles():
    import numpy as np

    from dpsynth_book.verdicts import contraction_verdict

    rng = np.random.default_rng(1)
    groups = {"A": {250: 3 + rng.normal(0, 0.2, 50), 1000: 3 + rng.normal(0, 0.1, 50)},
              "B": {250: 3 + rng.normal(0, 0.2, 50), 1000: 3 + rng.normal(0, 0.6, 50)}}
    v = contraction_verdict(groups, who="LW", key="bound_contracts")
    assert v.holds is False and v.key == "bound_contracts"  # one group's spread grows
    assert set(v.numbers) == {"A", "B"}


def test_contraction_is_undecided_with_one_size_or_too_few_data_sets():
    import numpy as np

    from dpsynth_book.verdicts import contraction_verdict

    one = contraction_verdict({1000: np.arange(10.0)}, who="LW")
    assert one.holds is None and "one sample size" in one.evidence
    few = contraction_verdict({250: [1.0, 2.0], 1000: [1.0, 1.1]}, who="LW")
    assert few.holds is None and "2 data sets" in few.evidence


def _spread(iqr: float, level: float = 3.0, k: int = 101):
    """Values whose interquartile range is exactly ``iqr`` (evenly spaced around ``level``)."""
    import numpy as np

    return level + iqr * np.linspace(-1.0, 1.0, k)


def test_contraction_needs_the_spread_to_fall_at_every_step():
    from dpsynth_book.verdicts import contraction_verdict

    ok = contraction_verdict({200: _spread(0.8), 400: _spread(0.6), 1600: _spread(0.4), 6400: _spread(0.3)},
                             who="LW", key="bound_contracts")
    assert ok.holds is True and ok.numbers["LW"]["iqr_not_falling"] == []
    assert "falls at every step" in ok.evidence
    # smaller at the largest n than at the smallest, but it rises at the last step: not a contraction
    v = contraction_verdict({200: _spread(0.73, 3.38), 400: _spread(0.58, 3.52), 1600: _spread(0.42, 3.66),
                             6400: _spread(0.51, 4.01)}, who="LW", key="bound_contracts")
    assert v.holds is False
    assert v.numbers["LW"]["iqr_not_falling"] == [(1600, 6400)]
    assert v.numbers["LW"]["iqr"][-1] < v.numbers["LW"]["iqr"][0]  # the old reading (last < first) would hold
    assert "rises from 0.42 at n = 1600 to 0.51 at n = 6400" in v.evidence
    assert "the median rises at every step (3.38 → 3.52 → 3.66 → 4.01, +19%" in v.evidence
    assert abs(v.numbers["LW"]["median_change"] - (4.01 / 3.38 - 1)) < 1e-9


def test_contraction_fails_in_the_group_whose_spread_rises_and_says_which():
    from dpsynth_book.verdicts import contraction_verdict

    groups = {"Poisson": {250: _spread(0.24), 1000: _spread(0.28), 4000: _spread(0.33)},
              "mixture": {250: _spread(1.07), 1000: _spread(0.97), 4000: _spread(0.68)}}
    v = contraction_verdict(groups, who="LW")
    assert v.holds is False
    assert v.numbers["Poisson"]["contracts"] is False and v.numbers["mixture"]["contracts"] is True
    assert v.numbers["Poisson"]["iqr_not_falling"] == [(250, 1000), (1000, 4000)]
    assert "LW (mixture): the IQR of Δ over data sets goes 1.07 → 0.97 → 0.68" in v.evidence

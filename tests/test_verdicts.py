"""Structured verdicts render as a numbered list."""

from dpsynth.verdicts import Verdict, verdicts_markdown


def test_verdict_markdown():
    v = [Verdict("a", "PH is the least useful", False, "worse in 2 of 12 cells", {"cells": 2}),
         Verdict("b", "Censored stay at eps/2", True, "in all 8 replicates")]
    md = verdicts_markdown(v)
    assert md.startswith("1. *PH is the least useful* — **does not hold**: worse in 2 of 12 cells")
    assert "2. *Censored stay at eps/2* — **holds**" in md
    assert Verdict("c", "x", None, "y").word == "undecided"


def test_contraction_holds_when_the_spread_shrinks():
    import numpy as np

    from dpsynth.verdicts import contraction_verdict

    rng = np.random.default_rng(0)
    v = contraction_verdict({250: 3 + rng.normal(0, 1.0, 100), 4000: 3.5 + rng.normal(0, 0.2, 100)}, who="LW")
    assert v.holds is True and v.key == "local_bound_contracts"
    assert v.numbers["LW"]["iqr"][0] > v.numbers["LW"]["iqr"][1]
    assert "interquartile range" in v.claim


def test_contraction_fails_when_the_spread_grows_even_if_the_median_settles():
    import numpy as np

    from dpsynth.verdicts import contraction_verdict

    rng = np.random.default_rng(1)
    groups = {"A": {250: 3 + rng.normal(0, 0.2, 50), 1000: 3 + rng.normal(0, 0.1, 50)},
              "B": {250: 3 + rng.normal(0, 0.2, 50), 1000: 3 + rng.normal(0, 0.6, 50)}}
    v = contraction_verdict(groups, who="LW", key="bound_contracts")
    assert v.holds is False and v.key == "bound_contracts"  # one group's spread grows
    assert set(v.numbers) == {"A", "B"}


def test_contraction_is_undecided_with_one_size_or_too_few_data_sets():
    import numpy as np

    from dpsynth.verdicts import contraction_verdict

    one = contraction_verdict({1000: np.arange(10.0)}, who="LW")
    assert one.holds is None and "one sample size" in one.evidence
    few = contraction_verdict({250: [1.0, 2.0], 1000: [1.0, 1.1]}, who="LW")
    assert few.holds is None and "2 data sets" in few.evidence

"""The decision table and the odds table of the 'Choosing a mechanism' page."""

import numpy as np
import pytest

from dpsynth import guide, registry


def test_decision_table_takes_guarantees_from_the_registry():
    t = guide.decision_table()
    assert t.loc["Censor_uw", "guarantee"] == registry.guarantee("Censor_uw") == "DP"
    assert t.loc["Censor_w", "guarantee"] == "aDP"
    assert t.loc["Censor_w-pub", "guarantee"] == "DP"
    assert "historical" in t.loc["Censor_w-pub", "needs"]
    assert "public bound" in t.loc["PH", "needs"]
    with pytest.raises(ValueError, match="no decision-table entry"):
        guide.decision_table(["unweighted"])


def test_posterior_probability_bound():
    # eps = 0: nothing learned
    assert guide.posterior_probability_bound(0.1, 0.0) == pytest.approx(0.1)
    # odds 1:9 times e^1
    odds = (0.1 / 0.9) * np.e
    assert guide.posterior_probability_bound(0.1, 1.0) == pytest.approx(odds / (1 + odds))
    with pytest.raises(ValueError, match="`prior`"):
        guide.posterior_probability_bound(1.0, 1.0)
    with pytest.raises(ValueError, match="`eps`"):
        guide.posterior_probability_bound(0.5, -1.0)


def test_odds_table():
    t = guide.odds_table([1.0, 5.0], priors=(0.01,))
    assert t.loc[5.0, "odds factor e^eps"] == pytest.approx(np.exp(5.0))
    assert t.loc[1.0, "prior 0.01 -> at most"] < t.loc[5.0, "prior 0.01 -> at most"] < 1

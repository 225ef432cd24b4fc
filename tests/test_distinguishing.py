"""Distinguishing games: Clopper-Pearson bounds and the empirical epsilon they give."""

from __future__ import annotations

import numpy as np
import pytest

from dpsynth.distinguishing import clopper_pearson, empirical_eps, threshold_game
from dpsynth.validation import DataError


def test_clopper_pearson_bounds():
    lo, hi = clopper_pearson(10, 10, 0.05)
    assert lo == pytest.approx(0.05 ** (1 / 10)) and hi == 1.0
    lo, hi = clopper_pearson(0, 10, 0.05)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.05 ** (1 / 10))
    with pytest.raises(DataError):
        clopper_pearson(3, 2)


def test_perfect_separation_gives_a_bound_that_grows_with_the_trials():
    assert empirical_eps(15, 15, 0, 15) > 1.0
    assert empirical_eps(40, 40, 0, 40) > empirical_eps(15, 15, 0, 15)
    assert empirical_eps(7, 15, 8, 15) == 0.0  # indistinguishable outcomes prove nothing


def test_a_threshold_game_scores_on_held_out_trials():
    rng = np.random.default_rng(0)
    same = threshold_game(rng.normal(size=40), rng.normal(size=40))
    apart = threshold_game(rng.normal(size=40), rng.normal(5.0, 1.0, size=40))
    assert same < 0.5 < 1.0 < apart
    with pytest.raises(DataError, match="at least 4"):
        threshold_game([1.0], [2.0])

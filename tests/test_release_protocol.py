"""The one release protocol: the eps asked is the eps published, charges are paid once, and no refusal depends on
a figure of the data that was not released (a distinguishing game on neighbouring data sets, with a leaky control)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dpsynth import Synthesizer
from dpsynth.distinguishing import empirical_eps
from dpsynth.release.protocol import UnusableReleaseError, pick_draws


def test_a_draw_is_released_once_while_another_is_left():
    slots = {"wage": ("f:wage", 3)}
    charged = {"f:wage:draw:0": 0.9, "f:wage:draw:2": 0.9}
    assert pick_draws(slots, charged, 1) == {"wage": 1}
    every = {f"f:wage:draw:{d}": 0.9 for d in range(3)}
    assert pick_draws(slots, every, 1)["wage"] in {0, 1, 2}  # all used: any, and it costs nothing more


# ----------------------------------------------------------------------------------- the refusal game

#: Issue 27's neighbouring data sets: 50 zeros and 450 tens, and the same with one more ten. A censored Poisson fit
#: at eps = 1 censors the tens: 450 / 500 = 90% on D, 451 / 501 > 90% on D'.
D = pd.DataFrame({"x": np.r_[np.zeros(50), np.full(450, 10)].astype(np.int64)})
D_PRIME = pd.DataFrame({"x": np.r_[np.zeros(50), np.full(451, 10)].astype(np.int64)})
TRIALS = 15


def _refusals(frame: pd.DataFrame) -> tuple[int, list[float]]:
    refused, shares = 0, []
    for t in range(TRIALS):
        s = Synthesizer(frame, "x", model="poisson", mechanism="censor_uw", eps=1.0, n_release=500,
                        sampler={"draws": 300, "tune": 300}, allow_unconverged=True, retries=0, progress=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s.fit(seed=t)
        shares.append(s.report_unchecked.censored_share)
        try:
            s.sample(seed=t)
        except UnusableReleaseError:
            refused += 1
    return refused, shares


_UNUSABLE = Synthesizer._unusable


def _the_old_refusal(self, values):
    """Today's rule before issue 27 (the control): refuse when the fit censored more than 90% of the records."""
    reasons = _UNUSABLE(self, values)
    if self._privacy.censored_share > 0.9:
        reasons.append(f"the fit censored {self._privacy.censored_share:.0%} of the records")
    return reasons


@pytest.mark.slow
def test_a_refusal_tells_nothing_the_release_would_not(monkeypatch):
    """Acceptance (issue 27): the refusal game on neighbouring data sets. The control, which refuses on the censored
    share (a confidential figure), leaks: its refusals alone prove eps > 1. The protocol's own refusals do not."""
    k, shares = _refusals(D)
    k_prime, shares_prime = _refusals(D_PRIME)
    assert max(shares) <= 0.9 < min(shares_prime)  # the premise: the confidential figure differs
    assert empirical_eps(k, TRIALS, k_prime, TRIALS) <= 1.0
    monkeypatch.setattr(Synthesizer, "_unusable", _the_old_refusal)
    k, _ = _refusals(D)
    k_prime, _ = _refusals(D_PRIME)
    assert (k, k_prime) == (0, TRIALS)
    assert empirical_eps(k, TRIALS, k_prime, TRIALS) > 1.0  # the game detects a leaking refusal

"""The combining rules for synthetic data: Reiter's partially synthetic and Raghunathan-Reiter-Rubin's fully
synthetic."""

from __future__ import annotations

import numpy as np
import pytest

from dpsynth.combining import combine
from dpsynth.validation import DataError


def test_partial_rule_by_hand():
    q = np.array([[1.0], [1.2], [0.8], [1.1], [0.9]])
    u = np.full((5, 1), 0.04)
    out = combine(q, u, rule="partial").iloc[0]
    b = q.var(ddof=1)
    assert out["estimate"] == pytest.approx(1.0)
    assert out["se"] == pytest.approx(np.sqrt(0.04 + b / 5))
    assert out["df"] == pytest.approx(4 * (1 + 0.04 / (b / 5)) ** 2)
    assert out["lower"] < 1.0 < out["upper"]


def test_full_rule_and_its_adjustment():
    q = np.array([[1.0, 2.0], [1.5, 2.0], [0.5, 2.0]])
    u = np.array([[0.01, 0.5], [0.01, 0.5], [0.01, 0.5]])
    out = combine(q, u, rule="full", names=["a", "b"], n_ratio=1.0)
    assert out.loc["a", "se"] == pytest.approx(np.sqrt((1 + 1 / 3) * 0.25 - 0.01))
    assert not out.loc["a", "adjusted"]
    assert out.loc["b", "adjusted"] and out.loc["b", "se"] == pytest.approx(np.sqrt(0.5))  # b = 0: T_f <= 0


def test_coverage_of_the_partial_rule_in_a_simulation():
    """A proper posterior-predictive synthesizer of a normal mean: the combined 95% interval covers the
    confidential estimate about 95% of the time; one set used as if real covers it far less often."""
    rng = np.random.default_rng(1)
    n, m, runs = 200, 5, 400
    hit_combined = hit_naive = 0
    for _ in range(runs):
        x = rng.normal(0.3, 1.0, n)
        mean_hat, s2 = x.mean(), x.var(ddof=1)
        draws = rng.normal(mean_hat, np.sqrt(s2 / n), m)  # posterior draws of the mean (flat prior)
        syn = [rng.normal(d, np.sqrt(s2), n) for d in draws]
        q = np.array([[s.mean()] for s in syn])
        u = np.array([[s.var(ddof=1) / n] for s in syn])
        c = combine(q, u, rule="partial").iloc[0]
        hit_combined += c["lower"] <= mean_hat <= c["upper"]
        naive_half = 1.96 * np.sqrt(u[0, 0])
        hit_naive += abs(q[0, 0] - mean_hat) <= naive_half
    assert hit_combined / runs >= 0.90
    assert hit_naive / runs < hit_combined / runs


def test_bad_input_is_named():
    with pytest.raises(DataError, match="at least 2"):
        combine([[1.0]], [[0.1]])
    with pytest.raises(DataError, match="same shape"):
        combine([[1.0], [2.0]], [[0.1]])
    with pytest.raises(DataError, match="`rule`"):
        combine([[1.0], [2.0]], [[0.1], [0.1]], rule="rubin")

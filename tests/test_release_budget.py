"""The budget: the total eps a user asks for, and the public rule that carves a release's shares out of it."""

from __future__ import annotations

import numpy as np
import pytest

from dpsynth.release.budget import (
    DEFAULT_SIZE_EPS,
    REFERENCE_SHARE,
    SIZE_SHARE,
    Budget,
    DrawSlot,
    TableBudget,
    split_shares,
)
from dpsynth.validation import DataError


@pytest.mark.parametrize(("relation", "dp_size", "dp_reference", "want"), [
    ("replace", False, True, (1.0, 0.0, REFERENCE_SHARE, 1.0 - REFERENCE_SHARE)),
    ("remove", True, True, (1.0, SIZE_SHARE, REFERENCE_SHARE, 1.0 - SIZE_SHARE - REFERENCE_SHARE)),
    ("remove", True, False, (1.0, SIZE_SHARE, 0.0, 1.0 - SIZE_SHARE)),
    ("replace", False, False, (1.0, 0.0, 0.0, 1.0)),
])
def test_every_share_is_carved_out_of_the_total(relation, dp_size, dp_reference, want):
    b = Budget.plan(1.0, relation, dp_size=dp_size, dp_reference=dp_reference)
    assert (b.total, b.size, b.reference, b.draw) == pytest.approx(want)
    assert b.size + b.reference + b.draw == pytest.approx(b.total)  # exactly the total, nothing on top
    assert b.cost(1) == pytest.approx(1.0)


def test_more_releases_cost_more_draws():
    """m releases from m different draws of one fit: reference and size once, the draw m times."""
    b = Budget.plan(2.0, "remove", dp_size=True, dp_reference=True)
    assert b.cost(3) == pytest.approx(b.size + b.reference + 3 * b.draw) == pytest.approx(0.1 + 0.2 + 3 * 1.7)
    assert "each further release from another draw adds 1.7" in b.plan_line("budget")


def test_the_mechanisms_eps_is_the_draws_share_under_the_relation():
    """The one place where eps becomes a clamp: a window of width W is W removed and 2W replaced."""
    replaced = Budget.plan(1.0, "replace", dp_size=False, dp_reference=True)
    assert replaced.mechanism_eps((1.0, 2.0)) == pytest.approx(0.45)
    removed = Budget.plan(1.0, "remove", dp_size=False, dp_reference=False)
    assert removed.mechanism_eps((1.0, 2.0)) == pytest.approx(1.0)
    assert removed.mechanism_eps((0.5, 1.0)) == pytest.approx(2.0)  # a mechanism calibrated under replacement


def test_explicit_shares_come_out_of_the_total_and_must_leave_a_draw():
    b = Budget.plan(1.0, "remove", dp_size=True, dp_reference=True, size_eps=0.2, reference_eps=0.3)
    assert (b.size, b.reference, b.draw) == pytest.approx((0.2, 0.3, 0.5))
    with pytest.raises(DataError, match="nothing is left for the draw"):
        Budget.plan(1.0, "remove", dp_size=True, dp_reference=True, size_eps=0.5, reference_eps=0.5)
    with pytest.raises(DataError, match="`eps`"):
        Budget.plan(-1.0, "remove", dp_size=False, dp_reference=False)
    with pytest.raises(DataError, match="neighbours"):
        Budget.plan(1.0, "swap", dp_size=False, dp_reference=False)


def test_a_mechanism_without_a_target_reports_its_draw_after_the_fit():
    b = Budget.plan(None, "remove", dp_size=True, dp_reference=False)
    assert b.total is None and b.size == DEFAULT_SIZE_EPS and b.mechanism_eps((1.0, 2.0)) is None
    after = b.with_draw(3.0)
    assert after.total == pytest.approx(3.0 + DEFAULT_SIZE_EPS) and after.draw == 3.0
    with pytest.raises(DataError, match="needs a total"):
        Budget.plan(None, "remove", dp_size=False, dp_reference=True)


def test_charges_name_the_fit_they_belong_to():
    """The one list of what a release charges: the size by the fit that drew it, the rest by the column's fit."""
    b = Budget.plan(1.0, "remove", dp_size=True, dp_reference=True, dp_marginal=True)
    slot = DrawSlot("f1:wage", 10, b, "DP")
    charges = b.charges("f1", {"wage": slot}, {"wage": 3}, dp_size=True)
    assert [c.key for c in charges] == ["f1:size", "f1:wage:reference", "f1:wage:marginal", "f1:wage:draw:3"]
    assert [c.what for c in charges] == ["released size", "reference of wage", "DP marginal of wage (calibration)",
                                         "posterior draw 3 of wage"]
    assert sum(c.eps for c in charges) == pytest.approx(b.total) and {c.guarantee for c in charges} == {"DP"}
    assert [c.key for c in b.charges("f1", {"wage": slot}, {"wage": 3}, dp_size=False)][0] == "f1:wage:reference"
    free = DrawSlot("f2:wage", 1, Budget("remove", None, draw=float("inf")), "none", released="the release of X")
    assert free.charges(0, "wage") == [("f2:wage:draw:0", "the release of X", 0.0, "none")]


def test_a_tables_charges_are_its_size_once_and_each_columns_own():
    a = Budget.plan(1.0, "remove", dp_size=False, dp_reference=True)
    b = Budget.plan(1.0, "remove", dp_size=False, dp_reference=False)
    t = TableBudget("remove", 2.2, 0.2, {"a": a, "b": b})
    slots = {"a": DrawSlot("fa:a", 5, a, "DP"), "b": DrawSlot("fb:b", 5, b, "aDP")}
    keys = [c.key for c in t.charges("T", slots, {"a": 1, "b": 4}, dp_size=True)]
    assert keys == ["T:size", "fa:a:reference", "fa:a:draw:1", "fb:b:draw:4"]


def test_a_tables_split_is_proportional_and_complete():
    shares = split_shares(3.0, ["a", "b", "c"], {"a": 2, "b": 1, "c": 1})
    assert shares == pytest.approx({"a": 1.5, "b": 0.75, "c": 0.75})
    assert split_shares(3.0, ["a", "b"], None) == {"a": 1.5, "b": 1.5}
    with pytest.raises(DataError, match="lacks column"):
        split_shares(3.0, ["a", "b"], {"a": 1})
    t = TableBudget("replace", 2.0, 0.0, {"a": Budget.plan(1.0, "replace", dp_size=False, dp_reference=True),
                                          "b": Budget.plan(1.0, "replace", dp_size=False, dp_reference=False)})
    assert t.draw == pytest.approx(0.9 + 1.0)
    assert TableBudget.from_dict(t.to_dict()) == t


def test_amplification_by_subsampling_and_its_inverse():
    from dpsynth.release.budget import SUBSAMPLE_ABOVE, SUBSAMPLE_SIZE, amplify, deamplify, subsample_rate

    assert amplify(2.0, 1.0) == pytest.approx(2.0) and amplify(2.0, 0.1) < 2.0
    assert amplify(deamplify(1.0, 0.1), 0.1) == pytest.approx(1.0)
    assert deamplify(1.0, 0.1) == pytest.approx(np.log1p(np.expm1(1.0) / 0.1))
    assert subsample_rate(SUBSAMPLE_ABOVE) == 1.0 and subsample_rate(None) == 1.0
    assert subsample_rate(1_000_000) == pytest.approx(SUBSAMPLE_SIZE / 1_000_000)
    assert subsample_rate(1_000_000, False) == 1.0 and subsample_rate(1000, 100) == pytest.approx(0.1)
    b = Budget.plan(1.0, "replace", dp_size=False, dp_reference=False, sample_rate=0.1)
    # the draw's share on the file is spent, amplified, on the records the fit sees
    assert b.mechanism_eps((1.0, 2.0)) == pytest.approx(deamplify(1.0, 0.1) / 2)
    assert "fitted on a random 0.1 of the records" in b.phrase()


def test_releases_split_the_draws_share_and_are_said():
    b = Budget.plan(5.0, "remove", dp_size=True, dp_reference=True, releases=5)
    assert (b.size, b.reference, b.draw, b.releases) == pytest.approx((0.25, 0.5, 0.85, 5))
    assert b.cost(5) == pytest.approx(5.0) and b.cost(6) == pytest.approx(5.85)
    assert "5 x 0.85 for one posterior draw each" in b.phrase()
    assert "for the first 5 releases" in b.plan_line("X")
    assert Budget(**b.to_dict()) == b
    for bad in (0, 1.5, True):
        with pytest.raises(DataError, match="releases"):
            Budget.plan(5.0, "remove", dp_size=True, dp_reference=True, releases=bad)


def test_a_table_plans_its_releases_for_model_parts_only():
    import pandas as pd

    from dpsynth import TableSynthesizer

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.lognormal(size=80), "b": rng.lognormal(size=80)})
    t = TableSynthesizer(df, ["a", "b"], eps=2.0, releases=4, mechanisms={"a": "censor_ref", "b": "ph"},
                         mechanism_params={"b": {"lower": 0.0, "upper": 50.0}})
    assert t.budget.releases == 4 and t.budget.parts["a"].releases == 4 and t.budget.parts["b"].releases == 1
    assert "for the first 4 released tables" in t.budget.plan_line("T")
    assert TableBudget.from_dict(t.budget.to_dict()) == t.budget

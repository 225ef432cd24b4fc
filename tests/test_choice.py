"""``auto``: the table rule and the decision table read from public facts only."""

from __future__ import annotations

import pytest

from dpsynth import choice
from dpsynth.validation import DataError


@pytest.mark.parametrize(
    ("kind", "bounds", "mechanism", "calibrated"),
    [
        ("categorical", None, "noise_aware", False),
        ("count", (0, 8), "noise_aware", False),
        ("count", (0, 49), "censor_ref", True),
        ("count", None, "censor_ref", False),
        ("continuous", (1.0, 500.0), "censor_ref", True),
        ("continuous", None, "censor_ref", False),
    ],
)
def test_the_table_rule_reads_the_kind_and_the_public_bounds(kind, bounds, mechanism, calibrated):
    c = choice.table_column_choice(kind, bounds)
    assert c.mechanism == mechanism and (c.calibrate is not None) == calibrated and c.reason
    if mechanism == "noise_aware" and bounds is not None:
        assert c.params == {"lower": bounds[0], "upper": bounds[1]}


@pytest.mark.parametrize("bounds", [(5.0, 1.0), (1.0,), {"upper": 3.0}, "wide"])
def test_bad_bounds_are_named(bounds):
    with pytest.raises(DataError, match="bounds"):
        choice.table_column_choice("continuous", bounds)


def test_the_situation_comes_from_public_facts():
    assert choice.situation_of("continuous", 5000, has_covariates=False) == "bounded marginal"
    assert choice.situation_of("continuous", 5000, has_covariates=True) == "regression"
    assert choice.situation_of("count", None, has_covariates=True) == "count"
    assert choice.situation_of("categorical", 5000, has_covariates=False) == "category"
    assert choice.situation_of("continuous", choice.SMALL_N - 1, has_covariates=True) == "small n, regression"
    assert choice.situation_of("continuous", choice.SMALL_N - 1, has_covariates=False) == "small n, marginal"
    assert choice.situation_of("count", choice.SMALL_N - 1, has_covariates=True) == "count"  # its own row at any n
    assert choice.situation_of("categorical", 10, has_covariates=False) == "category"


@pytest.mark.parametrize(("kind", "bounds", "ordinal"), [
    ("continuous", (0.0, 100.0), True), ("continuous", (-5.0, 5.0), True), ("continuous", (0.5, 100.0), False),
    ("count", (0, 200), False), ("count", (-3, 200), True), ("count", (0, 10), False), ("categorical", None, False),
])
def test_a_table_column_gets_the_ordinal_family_when_its_public_bounds_take_what_the_default_cannot(kind, bounds,
                                                                                                    ordinal):
    c = choice.table_column_choice(kind, bounds)
    assert choice.needs_ordinal(kind, bounds) is ordinal
    assert (c.model == "ordinal") is ordinal
    if ordinal:
        assert c.mechanism == "censor_ref" and c.calibrate == {"lower": bounds[0], "upper": bounds[1]}
        assert "ordinal" in c.reason

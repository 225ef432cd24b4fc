"""Verdicts of the "Your own data" chapter and the numbers its prose quotes, on small constructed Datasets
(no MCMC)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
from own_data_fake import EPS, N, fake_results, fake_study, fake_units

from dpsynth import registry
from dpsynth_book import book
from dpsynth_book.experiments.own_data import OwnDataResults, verdicts
from dpsynth_book.experiments.own_data.replicate import UNIT_SETTINGS

# the module (the package attribute ``own_data.verdicts`` is the function it re-exports)
V = importlib.import_module("dpsynth_book.experiments.own_data.verdicts")


def _by_key(vs):
    return {v.key: v for v in vs}


def test_units_numbers_are_the_study_s():
    units = fake_units(dollars=0.9, thousands=0.01, offset=0.012)
    n = V.units_numbers(units)
    pick = units.sel(mechanism="Censor_w", eps=10.0).mean("replicate")
    assert (n["mechanism"], n["eps"], n["n"]) == (registry.label("Censor_w"), 10.0, N)
    assert n["data_median"] == pytest.approx(float(units["median_data"].values.ravel()[0]))
    for key, setting in (("dollars", "dollars"), ("thousands", "thousands"), ("offset", "dollars, offset -log 1000")):
        assert n[key]["censored"] == pytest.approx(float(pick["n_censored"].sel(setting=setting)))
        assert n[key]["max_ecdf"] == pytest.approx(float(pick["max_ecdf"].sel(setting=setting)))
    assert n["dollars"]["median"] == pytest.approx(150.5)
    assert set(UNIT_SETTINGS) == {"dollars", "thousands", "dollars, offset -log 1000"}
    # with both censorings, the numbers are of the first in the book's order (Censor_w), as with one
    both = V.units_numbers(fake_units(dollars=0.9, thousands=0.01, offset=0.012, mechanisms=("Censor_w", "Censor_uw")))
    assert both["mechanism"] == registry.label("Censor_w")


def test_fit_time_numbers_are_the_range_of_model_based_release_times():
    study = fake_study()
    n = V.fit_time_numbers(study)
    # PH and OpenDP-Q (no MCMC, 0.01 and 0.5 s) are left out; Censor_w includes the unweighted fit
    assert (n["min_seconds"], n["max_seconds"]) == (91.0, 95.0 + 110.0)
    assert (n["n"], n["runs"]) == (N, 3)


def test_text_numbers_glue_under_fixed_keys():
    keys = book.glue_values("own", V.text_numbers(fake_results()))
    for key in ("own-units-dollars-censored", "own-units-offset-max-ecdf", "own-units-mechanism",
                "own-fit-time-min-seconds", "own-fit-time-n"):
        assert key in keys, key


# --------------------------------------------------------------------------------------------
# verdicts
# --------------------------------------------------------------------------------------------

KEYS = {"censored_within_bound", "privacy_relations", "unit_changes_censoring", "offset_is_a_unit",
        "marginal_favours_model_free", "model_keeps_regression"}


def test_verdicts_hold_on_results_where_the_claims_are_true():
    v = _by_key(verdicts(fake_results()))
    assert set(v) == KEYS
    for k in KEYS:
        assert v[k].holds is True, (k, v[k].evidence)
    assert v["censored_within_bound"].numbers["worst"] == pytest.approx(0.0, abs=1e-12)
    assert {k: v["privacy_relations"].numbers[k] for k in ("min", "max")} == {"min": pytest.approx(2.0),
                                                                             "max": pytest.approx(2.0)}
    assert v["unit_changes_censoring"].numbers["dollars_min"] == pytest.approx(0.95, abs=1e-4)
    assert v["offset_is_a_unit"].numbers["gap"] == pytest.approx(0.005, abs=1e-9)
    n = v["model_keeps_regression"].numbers
    assert n["censor_uw"] < n["opendp_q"]
    assert "12 censored fits" in v["censored_within_bound"].evidence


def test_a_censored_fit_above_its_bound_breaks_censored_within_bound():
    v = _by_key(verdicts(fake_results(delta_excess=0.01)))
    assert v["censored_within_bound"].holds is False
    assert v["censored_within_bound"].numbers["worst"] == pytest.approx(0.01)


def test_a_wrong_replaced_epsilon_breaks_privacy_relations():
    v = _by_key(verdicts(fake_results(replace_ratio=1.0)))
    assert v["privacy_relations"].holds is False
    assert v["privacy_relations"].numbers["min"] == pytest.approx(1.0)
    # a censored fit's Delta above its bound changes eps_remove and eps_replace alike: the relation holds
    assert _by_key(verdicts(fake_results(delta_excess=0.01)))["privacy_relations"].holds is True


@pytest.mark.parametrize("dollars, thousands", [(0.4, 0.02), (0.95, 0.6)])
def test_unit_changes_censoring_fails_when_the_unit_does_not_matter(dollars, thousands):
    v = _by_key(verdicts(fake_results(dollars=dollars, thousands=thousands, offset=thousands)))
    assert v["unit_changes_censoring"].holds is False
    assert v["offset_is_a_unit"].holds is True


def test_offset_is_a_unit_fails_beyond_two_percent():
    v = _by_key(verdicts(fake_results(thousands=0.02, offset=0.06)))
    assert v["offset_is_a_unit"].holds is False
    assert v["offset_is_a_unit"].numbers["gap"] == pytest.approx(0.04, abs=1e-9)


def test_model_keeps_regression_fails_when_quantiles_are_closer():
    v = _by_key(verdicts(fake_results(regression_kept=False)))
    assert v["model_keeps_regression"].holds is False
    assert v["model_keeps_regression"].numbers["censor_uw"] > v["model_keeps_regression"].numbers["opendp_q"]
    for k in KEYS - {"model_keeps_regression"}:
        assert v[k].holds is True


def test_model_keeps_regression_needs_both_mechanisms():
    res = fake_results()
    keep = np.flatnonzero(res.study["synthesizer"].values != "OpenDP-Q")
    res = OwnDataResults(params=res.params, study=res.study.isel(fit=keep), units=res.units)
    assert set(_by_key(verdicts(res))) == KEYS - {"model_keeps_regression"}


def test_a_model_closer_to_the_marginal_breaks_marginal_favours_model_free():
    res = fake_results()
    study = fake_study(model_free_offset=0.1)  # OpenDP-Q (0.1/eps) and PH (0.2/eps) above Censor_uw (0.05/eps)
    res = OwnDataResults(params=res.params, study=study, units=res.units)
    v = _by_key(verdicts(res))["marginal_favours_model_free"]
    assert v.holds is False and {k: v.numbers[k] for k in ("wins", "eps")} == {"wins": 0, "eps": len(EPS)}
    assert _by_key(verdicts(fake_results()))["marginal_favours_model_free"].numbers["wins"] == len(EPS)


# --------------------------------------------------------------------------------------------
# the files and unit-free studies
# --------------------------------------------------------------------------------------------


def test_files_numbers_are_the_study_s():
    from own_data_fake import FILE_N, fake_files

    n = V.files_numbers(fake_files(unconverged=[("fishing", 5.0, 0)]))
    assert n["all"] == {"fits": 18, "converged": 17, "runs": 3, "eps": "1 and 5"}
    assert n["cps1988"]["n"] == FILE_N["cps1988"] and n["fishing"]["converged"] == 5
    assert n["nmes1988"]["seconds"] == pytest.approx(8.5)  # median over eps and runs of 7 + r + 0.5
    assert n["fishing"]["marginal"] == pytest.approx((0.02 + 0.004) / 2)  # the TVD
    assert n["cps1988"]["eps1"]["stated"] == pytest.approx(1.0)
    assert n["fishing"]["eps5"]["reference"] == pytest.approx(0.5) and n["cps1988"]["eps5"]["reference"] == 0.0
    assert n["fishing"]["eps5"]["draw"] == pytest.approx(4.5)
    assert n["cps1988"]["eps5"]["alpha"] == pytest.approx(0.5) and n["cps1988"]["eps5"]["bound"] == pytest.approx(1.25)
    keys = book.glue_values("own", {"files": n})
    assert "own-files-nmes1988-eps5-stated" in keys and "own-files-all-converged" in keys


def test_unit_spread_against_monte_carlo_error():
    from own_data_fake import fake_unitfree

    u = fake_unitfree(ref_censored=(20.0, 22.0, 20.0), noise=2.0)  # sd 2 over 3 runs: tolerance 3 sqrt(2/3) 2 = 4.9
    s = V.unit_spread(u, "Censor_ref", "n_censored", 1.0)
    assert s["spread"] == pytest.approx([2.0, 2.0]) and s["tolerance"] == pytest.approx([3 * np.sqrt(2 / 3) * 2] * 2)
    assert not s["moves"]
    s = V.unit_spread(fake_unitfree(ref_censored=(20.0, 40.0, 20.0)), "Censor_ref", "n_censored", 1.0)
    assert s["moves"] and s["worst"] == pytest.approx(20.0 / (3 * np.sqrt(2 / 3) * 2))
    # no spread across runs: the floor decides
    s = V.unit_spread(fake_unitfree(noise=0.0), "Censor_ref", "n_censored", 1.0)
    assert s["tolerance"] == [1.0, 1.0] and not s["moves"]


def test_unit_spread_of_converged_fits_only():
    from own_data_fake import fake_unitfree

    # two of three cents fits at eps 5 failed and censored every record: with them the tolerance is huge
    u = fake_unitfree(ref_censored=(20.0, 40.0, 20.0), ref_failed=[("cents", 5.0, 0), ("cents", 5.0, 1)])
    every = V.unit_spread(u, "Censor_ref", "n_censored", 1.0)
    assert every["failed"] == {"dollars": 0, "thousands": 0, "cents": 2} and every["unjudged"] == [[], []]
    only = V.unit_spread(u, "Censor_ref", "n_censored", 1.0, converged_only=True)
    assert only["spread"] == pytest.approx([20.0, 20.0])  # thousands (40) against dollars (20); cents' run 2: 22
    assert only["tolerance"][1] < every["tolerance"][1] and only["moves"]
    # a unit with no converged fit at an eps is left out there; with one unit left nothing is judged
    u = fake_unitfree(ref_failed=[(unit, 5.0, r) for unit in ("cents", "thousands") for r in range(3)])
    s = V.unit_spread(u, "Censor_ref", "n_censored", 1.0, converged_only=True)
    assert s["unjudged"] == [[], ["thousands", "cents"]] and np.isnan(s["spread"][1]) and not s["moves"]


def test_unitfree_numbers():
    from own_data_fake import fake_unitfree

    n = V.unitfree_numbers(fake_unitfree(ref_censored=(20.0, 24.0, 21.0)))
    assert n["ref"]["eps5"]["thousands"]["censored"] == pytest.approx(24.0)
    assert n["uw"]["eps1"]["dollars"]["share"] == pytest.approx(28000.0 / N)
    assert n["ref"]["censored_spread"] == pytest.approx(4.0) and n["uw"]["censored_spread"] == pytest.approx(27800.0)
    assert (n["n"], n["runs"], n["eps"]) == (N, 3, "1 and 5")
    b = n["ref"]["budget_eps5"]
    assert b["stated"] == pytest.approx(5.0) and n["uw"]["budget_eps1"]["stated"] == pytest.approx(1.0)
    assert (b["size"], b["reference"], b["draw"]) == pytest.approx((0.25, 0.0, 4.75))
    assert b["alpha"] == pytest.approx(0.95) and b["bound"] == pytest.approx(2.375)
    assert n["ref"]["eps1"]["dollars"]["typical"] == pytest.approx(20.0 / N / 2)
    assert n["ref"]["censored_tolerance"] == pytest.approx(3 * np.sqrt(2 / 3) * 2)
    assert n["ref"]["lowest"] == pytest.approx({"eps": 1.0, "alpha": 0.95 / 2 / 2.5, "bound": 0.95 / 2})


@pytest.mark.parametrize("kw, key, holds", [
    ({}, "defaults_converge", True),
    ({"unconverged_files": [("cps1988", 1.0, 1)]}, "defaults_converge", False),
    ({}, "statement_is_the_total", True),
    ({}, "censor_ref_unit_free", True),
    ({"ref_censored": (20.0, 60.0, 20.0)}, "censor_ref_unit_free", False),
    ({"ref_alpha_shift": 0.01}, "censor_ref_unit_free", False),  # the window moved with the unit
    # failed fits in cents: not judged there, so the verdict cannot pass (nor fail on the converged ones)
    ({"ref_failed": [("cents", 1.0, 0), ("cents", 5.0, 2)]}, "censor_ref_unit_free", None),
    ({"ref_failed": [("cents", 1.0, 0)], "ref_censored": (20.0, 60.0, 20.0)}, "censor_ref_unit_free", False),
    ({}, "censor_uw_moves_with_unit", True),
    ({"uw_censored": (300.0, 301.0, 300.0)}, "censor_uw_moves_with_unit", False),
])
def test_new_verdicts_hold_and_fail(kw, key, holds):
    from own_data_fake import fake_all

    vs = _by_key(verdicts(fake_all(**kw)))
    assert vs[key].holds is holds, vs[key].evidence
    assert KEYS <= set(vs)


def test_a_statement_above_the_eps_asked_fails():
    from own_data_fake import fake_files

    ds = fake_files(stated_shift=0.1)  # a reference charged on top of the eps asked
    vs = _by_key(V.new_verdicts(OwnDataResults(params=None, study=None, units=None, files=ds, unitfree=None)))
    assert vs["statement_is_the_total"].holds is False
    assert "censor_ref_unit_free" not in vs
    ok = _by_key(V.new_verdicts(OwnDataResults(params=None, study=None, units=None, files=fake_files(),
                                               unitfree=None)))["statement_is_the_total"]
    assert ok.holds is True and ok.numbers["reference_categorical_share"] == pytest.approx(0.1)
    assert ok.numbers["reference_numeric"] == 0.0


def test_text_numbers_include_the_new_studies_when_present():
    from own_data_fake import fake_all

    keys = book.glue_values("own", V.text_numbers(fake_all()))
    for key in ("own-files-cps1988-seconds", "own-files-fishing-marginal", "own-unitfree-ref-eps5-cents-censored",
                "own-unitfree-uw-censored-spread"):
        assert key in keys, key
    assert not any(k.startswith("own-files") for k in book.glue_values("own", V.text_numbers(fake_results())))


def test_unit_free_verdict_names_the_unit_it_cannot_judge():
    from own_data_fake import fake_all

    # cents' failed fits censor every record: counted with them, the tolerance would have passed anything
    v = _by_key(verdicts(fake_all(ref_failed=[("cents", 1.0, 0), ("cents", 5.0, 2)])))["censor_ref_unit_free"]
    assert v.holds is None and v.numbers["failed"] == {"cents": 2}
    assert "2 of 6 fits in cents failed their convergence checks" in v.evidence and "cannot be judged" in v.evidence
    assert v.numbers["censored_spread"] == pytest.approx(1.0)  # the converged fits' spread, not the failed ones'
    n = V.unitfree_numbers(fake_all(ref_failed=[("cents", 1.0, 0)]).unitfree)
    assert (n["ref"]["fits"], n["ref"]["failed"]) == (18, 1) and n["ref"]["censored_spread"] == pytest.approx(1.0)

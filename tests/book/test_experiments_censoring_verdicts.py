"""Verdicts of the censoring chapter and the numbers its prose quotes, on small synthetic results (no MCMC)."""

from __future__ import annotations

import dataclasses
import importlib

import numpy as np
import pytest
from censoring_fake import fake_reference, fake_results

from dpsynth_book import book
from dpsynth_book.experiments.censoring import reference as ref_mod
from dpsynth_book.experiments.censoring import verdicts

# the module (the package attribute ``censoring.verdicts`` is the function it re-exports)
V = importlib.import_module("dpsynth_book.experiments.censoring.verdicts")


@pytest.fixture(scope="module")
def res():
    return fake_results()


def test_verdicts_on_known_orderings(res):
    v = {x.key: x for x in verdicts(res)}
    for key in ("censored_within_bound", "counts_rise_as_eps_falls", "censor_w_beats_censor_uw",
                "censor_w_pub_beats_censor_uw", "ph_least_useful", "weighted_most_useful", "mixing_multiplies_eps",
                "censoring_flattens_posterior", "downscaling_reduces_counts"):
        assert v[key].holds is True, key
    assert v["censor_uw_counts_match_paper"].holds is None  # n is not the paper's
    assert v["censor_w_beats_censor_uw"].numbers == {"wins": 8, "cells": 8}
    assert v["mixing_multiplies_eps"].numbers["multiplier"]["Censor_uw"] == pytest.approx(150)
    assert v["mixing_multiplies_eps"].numbers["rel_change"] == pytest.approx(0.2)
    assert v["censored_within_bound"].numbers["adp_over"]["LW"] == {"4": 1, "3": 3}


def test_weighted_e_above_target_verdict(res):
    v = {x.key: x for x in verdicts(res)}["weighted_e_above_target"]
    assert v.holds is True
    n = v.numbers
    assert (n["4"]["above"], n["3"]["above"]) == (1, 3) and n["3"]["replicates"] == 3
    assert n["3"]["above_after_refit"] == 4 and n["3"]["risen"] == 4 and n["3"]["all_risen"]
    assert "posterior mean" in v.evidence


def test_weighted_e_verdict_fails_when_kept_records_did_not_rise():
    bad = fake_results()
    bad.study["n_risen"] = bad.study["n_risen"] * 0
    v = {x.key: x for x in verdicts(bad)}["weighted_e_above_target"]
    assert v.holds is False
    bad.study = bad.study.drop_vars(["n_above_target", "n_risen", "refit_shift_sd"])
    v = {x.key: x for x in verdicts(bad)}["weighted_e_above_target"]
    assert v.holds is None and v.numbers == {}


def _with_threshold_effect(replicates: int = 12):
    """Fake results in which the smallest record sets the Unweighted Delta, the LW Delta is a quarter of it
    and Weighted-e truncates nothing at or below eps/2 and more records the further the LW Delta is above it."""
    res = fake_results(replicates)
    st = res.study
    ud = 7.0 + np.arange(replicates)
    st["delta_unweighted"] = ("replicate", ud)
    st["x_min"] = ("replicate", np.exp(-2.0 * ud))  # -log(x_(1)) / 2 is the Unweighted Delta
    st["delta_weighted"] = ("replicate", ud / 4)
    for e in (4.0, 3.0):
        _set_truncated(st, e, np.where(ud / 4 > e / 2, 100 * (ud / 4 - e / 2), 0.0))
    return res


def _set_truncated(study, eps, counts):
    i = np.flatnonzero((study["synthesizer"].values == "Weighted-e") & np.isclose(study["eps"].values, eps))
    assert i.size == 1
    study["n_truncated"][:, int(i[0])] = counts


def test_threshold_effect_holds_where_the_chain_is_there():
    v = {x.key: x for x in verdicts(_with_threshold_effect())}["weighted_e_threshold_effect"]
    assert v.holds is True, v.evidence
    n = v.numbers
    assert n["smallest"]["median_ratio"] == pytest.approx(1.0) and n["quarter"]["median_ratio"] == pytest.approx(4.0)
    assert (n["by_eps"]["4"]["below"], n["by_eps"]["4"]["above"], n["by_eps"]["4"]["below_max"]) == (2, 10, 0.0)
    assert n["by_eps"]["4"]["rank"] == pytest.approx(1.0) and all(n["parts"].values())
    assert "no record truncated in the 2 replicates at or below" in v.evidence


def test_threshold_effect_fails_without_the_effect():
    # the default fake: the Unweighted Delta falls as the smallest record grows smaller, Weighted-e truncates
    # records at or below eps/2
    v = {x.key: x for x in verdicts(fake_results(12))}["weighted_e_threshold_effect"]
    assert v.holds is False
    assert not v.numbers["parts"]["smallest_record"] and not v.numbers["parts"]["none_below"]
    assert "Not as the chapter argues" in v.evidence
    # the count falls as the LW Delta rises above eps/2: no threshold effect either
    res = _with_threshold_effect()
    ud = res.study["delta_unweighted"].values
    _set_truncated(res.study, 3.0, 1000 - 100 * ud / 4)
    v = {x.key: x for x in verdicts(res)}["weighted_e_threshold_effect"]
    assert v.holds is False and v.numbers["parts"] == {"smallest_record": True, "quarter": True, "none_below": True,
                                                        "rises_above": False}
    # a count below the threshold breaks it too; and a ratio far from a quarter
    res = _with_threshold_effect()
    _set_truncated(res.study, 4.0, np.full(12, 3.0))
    assert not {x.key: x for x in verdicts(res)}["weighted_e_threshold_effect"].numbers["parts"]["none_below"]
    res = _with_threshold_effect()
    res.study["delta_weighted"] = res.study["delta_unweighted"] / 2
    v = {x.key: x for x in verdicts(res)}["weighted_e_threshold_effect"]
    assert v.holds is False and not v.numbers["parts"]["quarter"]


def test_threshold_effect_is_undecided_with_few_replicates(res):
    v = {x.key: x for x in verdicts(res)}["weighted_e_threshold_effect"]
    assert v.holds is None and v.evidence.startswith("undecided")


def test_verdict_fails_when_the_bound_is_broken():
    v = {x.key: x for x in verdicts(fake_results(break_bound=True))}
    assert v["censored_within_bound"].holds is False
    assert v["censored_within_bound"].numbers["worst_excess"]["Censor_uw at 3"] == pytest.approx(3.5)


def test_threshold_and_tally_numbers(res):
    t = V.threshold_numbers(res)
    assert (t["replicates"], t["n"]) == (3, 300)
    assert (t["unweighted_min"], t["unweighted_max"]) == (7.0, 9.0)
    assert (t["weighted_min"], t["weighted_max"], t["weighted_median"]) == pytest.approx((1.8, 2.2, 2.0))
    assert t["ratio_median"] == pytest.approx(4.0) and (t["paper_weighted_low"], t["paper_weighted_high"]) == (2, 3.5)
    assert t["above"] == pytest.approx({"4": 1 / 3, "3": 1.0})
    assert t["effect"] == "is undecided"  # three replicates: too few for the threshold effect's verdict
    assert t["smallest_ratio"] == pytest.approx(float(np.median([7.0, 8.0, 9.0] / (-0.5 * np.log([1e-6, 2e-6, 3e-6])))))
    assert V.threshold_numbers(_with_threshold_effect())["effect"] == "holds"
    assert V.tally_numbers(res)["by_eps"]["4"] == {"paper": 425, "ours": 210, "alternative": 300}


def test_mixing_release_and_ph_numbers(res):
    m = V.mixing_numbers(res)
    assert list(m["one"]) == ["LW", "Censor_w", "Censor_w-pub", "Censor_uw"]
    assert m["draws"] == 150 and m["change"] == pytest.approx(-0.2) and m["lower"]["Censor_uw"] == 3
    assert m["eps_mixed"]["Censor_uw"] == 600 and (m["n"], m["pooled_draws"], m["eps"]) == (300, 200, 4.0)
    r = V.release_numbers(res)
    assert r["c"] == pytest.approx(0.7) and (r["months"], r["eps"], r["eps_replace"]) == (1, 3.0, 6.0)
    assert (r["public_c1_censored"], r["own_c1_censored"]) == (70, 70)
    p = V.ph_numbers(res)
    assert (p["bins_sqrt"], p["bins_log"], p["eps_min"]) == (18, 6, 3.0)
    assert p["scale_ph"] == pytest.approx(1 / 3) and p["scale_ph_paper"] == pytest.approx(2 / 3)
    assert p["records_per_bin"] == pytest.approx(300 / 18) and p["bin_width_log"] == pytest.approx(1 / 6)
    assert p["best"]["3"]["avg-ECDF"] == "LW (aDP)"


def test_discrepancy_numbers(res):
    d = V.discrepancy_numbers(res)
    assert (d["replicates"], d["n"], d["scale"]) == (3, 300, "smoke")
    assert d["censor_uw"]["4"] == pytest.approx({"ours": 210, "paper": 419, "relative": 210 / 419 - 1})
    assert d["weighted_e"]["3"] == {"ours": 3, "paper": 574}
    assert (d["downscaled_weighted_e"], d["paper_downscaled_weighted_e"], d["downscale_c"]) == (1, 93, 0.8)


def test_text_numbers_glue_under_fixed_keys(res):
    numbers = V.text_numbers(res)
    assert set(numbers) == {"threshold", "tally", "milder", "mixing", "release", "ph", "discrepancy"}
    keys = book.glue_values("censoring", numbers)
    for key in ("censoring-release-c", "censoring-threshold-unweighted-min", "censoring-mixing-change",
                "censoring-ph-scale-ph-paper", "censoring-discrepancy-downscaled-censor-w",
                "censoring-milder-converged", "censoring-mixing-one-censor-w-pub", "censoring-ph-best-4-mean-true"):
        assert key in keys, key
    assert keys["censoring-milder-converged"] == 12 and keys["censoring-milder-fits"] == 12


def test_milder_numbers_and_verdict(res):
    n = V.milder_numbers(res)
    assert n["median"]["shift"] == {"4": 426, "3": 742} and n["zeros"]["shift"]["4"] == pytest.approx(1 / 3)
    assert n["paper"] == {"4": 425, "3": 741} and (n["converged"], n["fits"]) == (12, 12)
    v = {x.key: x for x in verdicts(res)}["milder_weights_reproduce_counts"]
    assert v.holds is None and "undecided" in v.evidence  # n = 300 and no eps = 5
    res2 = fake_results()
    res2.study = res2.study.drop_vars(["milder_converged"])
    assert np.isnan(V.milder_numbers(res2)["converged"])


def test_milder_verdict_decides_at_the_papers_design(res, monkeypatch):
    import dataclasses

    import pandas as pd

    pub = {4.0: 425, 3.0: 741}  # the paper's Table 1 medians of Censor_w
    rows = {(5.0, "a"): [0, 50, 0.8], (4.0, "a"): [400, 380, 0.1], (3.0, "a"): [700, 690, 0.0],
            (5.0, "b"): [200, 210, 0.0], (4.0, "b"): [425, 420, 0.0], (3.0, "b"): [741, 741, 0.0],
            (5.0, "paper"): [0, 110, np.nan]}
    rows = {(e, k): [*v, (v[0] - pub[e]) / pub[e] if e in pub else np.nan] for (e, k), v in rows.items()}
    t = pd.DataFrame.from_dict(rows, orient="index", columns=["median", "mean", "zeros", "median vs paper"])
    t.index = pd.MultiIndex.from_tuples(t.index)
    monkeypatch.setattr(V, "milder_table", lambda results: t)
    monkeypatch.setattr(V, "_eps_grid", lambda study: [5.0, 4.0, 3.0])
    r2 = dataclasses.replace(res, params=dataclasses.replace(res.params, n=2000))
    n = V.milder_numbers(r2)
    assert n["decidable"] and n["reproduces"] == {"a": True, "b": False}  # b: no zeros at eps = 5
    assert n["relative_difference"]["a"]["4"] == pytest.approx(400 / 425 - 1)


def _ref_verdicts(reference):
    return {x.key: x for x in V.reference_verdicts(dataclasses.replace(fake_results(1), reference=reference))}


def test_reference_verdicts_on_known_orderings(res):
    v = {x.key: x for x in verdicts(res)}
    for key in ("ref_within_bound", "ref_censors_fewer", "ref_more_useful", "ref_default_alpha_censors_little",
                "ref_alpha_trades_censoring_for_width", "ref_own_censors_no_more", "ref_historical_like_dp",
                "ref_widen_1_biased"):
        assert v[key].holds is True, key
    assert v["ref_censors_fewer"].numbers["fewer"] == {4.0: True, 1.0: True}
    assert v["ref_within_bound"].numbers["charge_error"] < 1e-9 and v["ref_within_bound"].numbers["free_cost"] == 0
    assert "K = 2.5" in v["ref_default_alpha_censors_little"].claim
    assert "a DP median $\\theta_0$ adds a median 0.1" in v["ref_within_bound"].evidence


def test_reference_verdicts_can_fail():
    bad = _ref_verdicts(fake_reference(2, ref_censors=0.3))  # Censor_ref censoring 30%: more than Censor_w-pub
    assert bad["ref_censors_fewer"].holds is False and bad["ref_more_useful"].holds is False
    assert bad["ref_default_alpha_censors_little"].holds is False
    assert bad["ref_own_censors_no_more"].holds is False  # the DP median censors 2.5%
    assert bad["ref_historical_like_dp"].holds is True  # both common references censor 2.5%
    assert _ref_verdicts(fake_reference(2, over_bound=True))["ref_within_bound"].holds is False
    ref = fake_reference(2)
    ref["phi_sd"].loc[{"variant": "Censor_ref, alpha = 0.25"}] = 0.001  # narrower than at alpha = 1
    assert _ref_verdicts(ref)["ref_alpha_trades_censoring_for_width"].holds is False
    ref = fake_reference(2)
    ref["share_censored"].loc[{"variant": ref_mod.HISTORICAL}] = 0.2
    assert _ref_verdicts(ref)["ref_historical_like_dp"].holds is False
    ref = fake_reference(2)
    ref["eps_remove"].loc[{"variant": ref_mod.DP_MEDIAN}] = ref["eps"]  # the released reference not charged
    assert _ref_verdicts(ref)["ref_within_bound"].holds is False
    ref = fake_reference(2)
    ref["reference_eps_remove"].loc[{"variant": "Censor_ref"}] = 0.1  # the default charged for a reference
    ref["eps_remove"].loc[{"variant": "Censor_ref"}] = ref["eps"] + 0.1
    v = _ref_verdicts(ref)["ref_within_bound"]
    assert v.holds is False and v.numbers["free_cost"] == pytest.approx(0.1)
    ref = fake_reference(2)
    ref["phi_mean"].loc[{"variant": f"{ref_mod.DP_MEDIAN}, widen 1"}] = ref["true_mean"]  # unbiased without widening
    assert _ref_verdicts(ref)["ref_widen_1_biased"].holds is False


def test_reference_verdicts_undecided_without_their_variants():
    v = _ref_verdicts(fake_reference(2, alphas=(0.5,), widens=(4.0,)))
    assert v["ref_alpha_trades_censoring_for_width"].holds is None and v["ref_widen_1_biased"].holds is None
    assert v["ref_censors_fewer"].holds is True
    ref = fake_reference(2).drop_sel(variant=[ref_mod.DP_MEDIAN])
    v = _ref_verdicts(ref)
    assert v["ref_own_censors_no_more"].holds is None and v["ref_historical_like_dp"].holds is None


def test_reference_numbers_are_glued(res):
    n = V.reference_numbers(res)
    assert (n["eps_low"], n["eps_high"], n["ref_eps"]) == (1.0, 4.0, pytest.approx(0.1))
    assert (n["tolerance"], n["two_k"], n["precision"], n["widen"]) == (2.5, 5.0, 4.0, 2.0)
    assert (n["alphas"], n["widens"]) == ("1, 0.5 and 0.25", "1 and 4")
    assert n["low"]["uw"]["censored"] == pytest.approx(0.4005)
    assert n["low"]["ref"]["alpha"] == pytest.approx(0.2) and n["high"]["ref"]["alpha"] == pytest.approx(0.8)
    assert n["high"]["alpha-0.25"]["sd"] > n["high"]["ref"]["sd"]
    assert n["low"]["dpmed"]["censored"] == pytest.approx(0.0255)
    assert n["sd_ratio"] == pytest.approx(2.0) and n["converged"] == 1.0
    assert n["default_max_censored"] == pytest.approx(0.0205)
    keys = book.glue_values("censoring-ref", n)
    for k in ("censoring-ref-low-uw-censored", "censoring-ref-high-alpha-0.25-sd", "censoring-ref-low-widen-1-bias",
              "censoring-ref-eps-low", "censoring-ref-sd-ratio", "censoring-ref-low-dpmed-censored",
              "censoring-ref-tolerance", "censoring-ref-holds-ref-own-censors-no-more"):
        assert k in keys, k


def test_reference_numbers_say_whether_each_verdict_holds():
    holds = V.reference_numbers(fake_results(2))["holds"]
    assert holds["ref_censors_fewer"] == "holds" and len(holds) == 8
    res = dataclasses.replace(fake_results(1), reference=fake_reference(2, ref_censors=0.3, widens=(4.0,)))
    holds = V.reference_numbers(res)["holds"]
    assert holds["ref_censors_fewer"] == "does not hold" and holds["ref_widen_1_biased"] == "is undecided"


def test_own_reference_window_at_the_generating_beta():
    w = V.own_reference_window()
    assert w["tolerance"] == 2.5 and w["share"] == pytest.approx(w["share_low"] + w["share_high"])
    # Beta(0.5, 3)'s density diverges at 0 and its saturated reference's does not: the records near 0 lie above
    assert 0 < w["x_low"] < 0.01 < 0.5 < w["x_high"] < 1 and w["share_low"] > w["share_high"] > 0
    # a wider tolerance leaves fewer records out; a Beta whose density is bounded (a, b > 1) none near 0
    assert V.own_reference_window(5.0)["share"] < w["share"]
    assert V.own_reference_window(a=2.0, b=3.0)["share_low"] == 0.0
    assert V.reference_numbers(fake_results(2))["window"] == pytest.approx(w)

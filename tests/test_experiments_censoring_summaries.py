"""Tables, computed text and verdicts of the censoring chapter, on small synthetic results (no MCMC)."""

from __future__ import annotations

import numpy as np
import pytest
from censoring_fake import fake_results

from dpsynth.experiments.censoring import summaries as S
from dpsynth.experiments.censoring import verdicts


@pytest.fixture(scope="module")
def res():
    return fake_results()


def test_paper_tables_and_count_summary():
    s = S.count_summary([0, 10, 20, np.nan])
    assert (s["min"], s["median"], s["mean"], s["max"]) == (0, 10, 10, 20) and s["sd"] == pytest.approx(10.0)
    assert np.isnan(S.count_summary([np.nan])["mean"])
    assert S.PAPER_TABLE_S5[("none", "Censor_w")] == S.PAPER_TABLE1[(4, "Censor_w")]
    assert S.PAPER_TABLE1[(3, "Weighted-e")]["min"] == 400


def test_values_selects_one_fit(res):
    assert S.values(res.study, "delta", "Censor_uw", 4.0).tolist() == [2.0, 2.0, 2.0]
    assert S.values(res.study, "delta", "Weighted", 3.0).size == 3  # eps-independent: any eps
    with pytest.raises(KeyError):
        S.values(res.study, "delta", "Censor_uw")


def test_tables_use_registry_labels(res):
    t1 = S.count_table(res)
    assert set(t1.index.get_level_values("synthesizer")) == {
        "Weighted-e (aDP)", "Censor_w (aDP)", "Censor_w-pub (DP)", "Censor_uw (DP)"}
    assert t1.loc[(4.0, "Censor_uw (DP)", "paper"), "median"] == 419
    assert t1.loc[(3.0, "Censor_uw (DP)", "ours"), "median"] == pytest.approx(310.0)
    t5 = S.count_table(res, downscale=True)
    assert t5.shape == (8, 5) and S.count_table(res, full=True).shape[1] == 7
    assert t5.loc[("downscale", "Censor_w (aDP)", "ours"), "median"] == 0
    eps = S.eps_table(res)
    assert ("any", "Weighted (aDP)") in eps.index and ("4", "PH-paper (DP)") in eps.index
    assert eps.shape[1] <= 7 and {"remove, median", "replace, median"} <= set(eps.columns)
    assert S.tally_table(res).shape == (6, 5)
    u = S.utility_table(res)
    assert list(u.columns) == list(S.MEASURES) and ("4", "PH (DP) (ln n bins)") in u.index
    assert "|mean - true|" in u.columns and u.shape[1] == 5
    m = S.mixing_table(res)
    assert m.shape == (4, 6) and m.loc["Censor_uw (DP)", "distinct draws"] == 150
    assert S.calibration_table(res).shape == (4, 2)
    assert S.release_table(res).shape == (12, 5)
    rs = S.release_summary(res)
    assert "Censor_w-pub (DP), c = 0.700" in rs.index and rs.shape[1] <= 7
    assert set(S.figure1_table(res.figure1).index) == {"prior", "posterior", "censored posterior"}


def test_convergence_table_counts_every_fit_once(res):
    conv = S.convergence_table(res)
    assert conv.loc["Weighted (aDP)", "fits"] == 3            # once per replicate, not per eps
    assert conv.loc["Censor_uw (DP)", "fits"] == 6            # 2 eps x 3 replicates
    assert conv.loc["Censor_uw (DP)", "failed"] == 4 and conv.loc["Censor_uw (DP)", "divergences"] == 6
    assert "PH (DP)" not in conv.index and "Data" not in conv.index
    assert conv.loc["downscaling study", "fits"] == 9         # own fits only
    assert conv.loc["calibration", "fits"] == 5 and conv.loc["calibration", "failed"] == 2  # from the warnings
    assert conv.loc["illustration", "failed"] == 1 and conv.loc["release months", "fits"] == 15
    assert {"fits with divergences", "divergences", "max R-hat", "min bulk ESS"} <= set(conv.columns)


def test_verdicts_on_known_orderings(res):
    v = {x.key: x for x in verdicts(res)}
    for key in ("censored_within_bound", "counts_rise_as_eps_falls", "censor_w_beats_censor_uw",
                "censor_w_pub_beats_censor_uw", "ph_least_useful", "weighted_most_useful", "mixing_multiplies_eps",
                "censoring_flattens_posterior", "downscaling_reduces_counts"):
        assert v[key].holds is True, key
    assert v["censor_uw_counts_match_paper"].holds is None  # n is not the paper's
    assert v["censor_w_beats_censor_uw"].numbers == {"wins": 8, "cells": 8}
    assert v["mixing_multiplies_eps"].numbers["multiplier"]["Censor_uw"] == pytest.approx(150)
    assert v["censored_within_bound"].numbers["adp_over"]["Weighted"] == {"4": 1, "3": 3}


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


def test_verdict_fails_when_the_bound_is_broken():
    v = {x.key: x for x in verdicts(fake_results(break_bound=True))}
    assert v["censored_within_bound"].holds is False
    assert v["censored_within_bound"].numbers["worst_excess"]["Censor_uw at 3"] == pytest.approx(3.5)


def test_computed_text_has_this_runs_numbers(res):
    assert "7.0 to 9.0" in S.threshold_markdown(res)
    assert "published median is 425" in S.tally_markdown(res)
    assert "150 distinct" not in S.mixing_markdown(res) and "median 150" in S.mixing_markdown(res)
    assert "c$ = 0.700" in S.release_markdown(res)
    assert "18 bins" in S.ph_markdown(res) or "$\\lceil\\sqrt{300}\\rceil$ = 18" in S.ph_markdown(res)
    d = S.discrepancy_markdown(res)
    assert "n = 300" in d and "later release" in d and "R = 100" not in d


def test_milder_table_and_verdict(res):
    t = S.milder_table(res)
    assert list(t.columns) == ["median", "mean", "zeros"]
    assert t.loc[(4.0, "shift"), "median"] == pytest.approx(426.0)
    assert t.loc[(4.0, "shift"), "zeros"] == pytest.approx(1 / 3)
    assert t.loc[(3.0, "power"), "mean"] == pytest.approx(201.0) and t.loc[(4.0, "LW (ours)"), "zeros"] == 0
    assert t.loc[(3.0, "paper"), "median"] == 741 and np.isnan(t.loc[(3.0, "paper"), "zeros"])
    assert "shift: medians 426, 742" in S.milder_markdown(res) and "425 at" in S.milder_markdown(res)
    v = {x.key: x for x in verdicts(res)}["milder_weights_reproduce_counts"]
    assert v.holds is None and "undecided" in v.evidence  # n = 300 and no eps = 5


def test_milder_verdict_decides_at_the_papers_design(res, monkeypatch):
    import dataclasses

    import pandas as pd

    rows = {(5.0, "a"): [0, 50, 0.8], (4.0, "a"): [400, 380, 0.1], (3.0, "a"): [700, 690, 0.0],
            (5.0, "b"): [200, 210, 0.0], (4.0, "b"): [425, 420, 0.0], (3.0, "b"): [741, 741, 0.0],
            (5.0, "paper"): [0, 110, np.nan]}
    t = pd.DataFrame.from_dict(rows, orient="index", columns=["median", "mean", "zeros"])
    t.index = pd.MultiIndex.from_tuples(t.index)
    monkeypatch.setattr(S, "milder_table", lambda results: t)
    monkeypatch.setattr(S, "_eps_grid", lambda study: [5.0, 4.0, 3.0])
    r2 = dataclasses.replace(res, params=dataclasses.replace(res.params, n=2000))
    n = S._milder_numbers(r2)
    assert n["decidable"] and n["reproduces"] == {"a": True, "b": False}  # b: no zeros at eps = 5
    assert n["relative_difference"]["a"]["4"] == pytest.approx(400 / 425 - 1)

"""Verdicts of the SDR application chapter and the numbers its prose quotes, on small synthetic results
(no MCMC), and the smoke preset end to end (slow)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import sdr_application_fakes as fakes

from dpsynth_book import book, plots
from dpsynth_book.experiments import sdr_application as app
from dpsynth_book.experiments.sdr_application import tables, verdicts

# the module (the package attribute ``sdr_application.verdicts`` is the function it re-exports)
V = importlib.import_module("dpsynth_book.experiments.sdr_application.verdicts")

KEYS = ["censored_within_bound", "privacy_relations", "weighted_above_target", "weights_spare_censoring",
        "censor_w_beats_censor_uw", "histogram_last", "censor_uw_beats_ph_equal_budget", "mixed_sets_compose_eps",
        "reweighting_keeps_delta", "reweighting_raises_weights", "cw_gains_more", "table2_ranking",
        "all_fits_converged", "local_bound_contracts"]
#: Verdicts that must hold at smoke scale (the lead's notebook test asserts the same).
SMOKE_KEYS = ["censored_within_bound", "privacy_relations", "mixed_sets_compose_eps", "reweighting_keeps_delta"]


def test_verdicts_on_synthetic_results():
    v = {x.key: x for x in verdicts(fakes.results())}
    assert list(v) == KEYS
    for k in ("censored_within_bound", "privacy_relations", "weights_spare_censoring", "censor_w_beats_censor_uw",
              "histogram_last", "censor_uw_beats_ph_equal_budget", "mixed_sets_compose_eps",
              "reweighting_keeps_delta", "reweighting_raises_weights", "table2_ranking", "all_fits_converged"):
        assert v[k].holds is True, (k, v[k].evidence)
    assert v["weighted_above_target"].holds is False  # local 2 Delta of 4-6 against eps 5 is not above in both
    assert v["censored_within_bound"].numbers["bound"] == 2.5


def test_verdicts_turn_when_the_results_do():
    res = fakes.results(converged=False)
    res.part1["delta"].loc[dict(synthesizer="Censor_uw")] = 2.9
    res.part2["delta"].loc[dict(synthesizer="CW_final")] = 5.0
    v = {x.key: x for x in verdicts(res)}
    assert v["censored_within_bound"].holds is False
    assert v["reweighting_keeps_delta"].holds is False
    assert v["all_fits_converged"].holds is False and v["all_fits_converged"].numbers["failed"] == 11
    assert v["weighted_above_target"].holds is None  # not established from non-converged fits
    assert v["table2_ranking"].holds is None  # no replicate with all fits converged


def test_ranking_numbers_and_verdict_over_replicates():
    res = fakes.results(replicates=4)
    res.part1["avg_ecdf"].loc[dict(replicate=2, synthesizer="Censor_w")] = 0.0  # best in one replicate
    n = V.ranking_numbers(res)
    assert (n["synthesizers"], n["replicates"], n["fits"], n["failed"], n["failed_replicates"]) == (4, 4, 16, 0, 0)
    assert (n["holds"], n["clean"], n["holds_clean"]) == (3, 4, 3)
    assert n["paper_order"] == ", ".join(plots.label(k) for k in tables.PAPER_ORDER)
    v = {x.key: x for x in verdicts(res)}["table2_ranking"]
    assert v.holds is True and v.numbers["holds_in"] == 3 and v.numbers["clean_replicates"] == 4
    # a non-converged fit is counted and left out of the verdict
    res.part1["converged"].loc[dict(replicate=[0, 1, 3], synthesizer="LW")] = False
    n = V.ranking_numbers(res)
    assert (n["failed"], n["failed_replicates"], n["clean"]) == (3, 3, 1)
    v = {x.key: x for x in verdicts(res)}["table2_ranking"]
    assert v.holds is False and v.numbers["clean_replicates"] == 1


def test_cw_match_and_caveats_numbers():
    res = fakes.results(replicates=3)
    res.part2["cw_radius_matched"] = ("replicate", [True, False, True])
    res.part2["delta"].loc[dict(replicate=1, synthesizer="CW")] = 1.8  # LW 2.0: 10% below
    n = V.cw_match_numbers(res)
    assert (n["matched"], n["replicates"], n["unmatched"], n["search"]) == (2, 3, 1, "on")
    assert n["tolerance"] == pytest.approx(0.05) and list(n["unmatched_replicates"]) == [1]
    assert n["unmatched_replicates"][1] == pytest.approx({"cw": 1.8, "lw": 2.0, "gap": -0.1})
    c = V.caveats_numbers(res)
    assert (c["source"], c["n1"]) == ("the stand-in", 40) and c["draws"] == res.params.chains * res.params.draws
    keys = book.glue_values("sdr", V.text_numbers(res))
    for key in ("sdr-ranking-failed", "sdr-cw-match-tolerance", "sdr-cw-match-unmatched-replicates-1-gap",
                "sdr-caveats-salary-bound"):
        assert key in keys, key


@pytest.mark.slow
def test_smoke_preset_end_to_end(tmp_path):
    res = app.run(app.Params.smoke(), cache_dir=tmp_path, progress=False)
    assert res.part1.sizes["replicate"] == 1 and res.data1.n == 60 and res.standin
    assert "convergence_warnings" in res.part1
    v = {x.key: x for x in app.verdicts(res)}
    assert list(v) == KEYS
    for k in SMOKE_KEYS:
        assert v[k].holds is True, (k, v[k].evidence)
    assert "cw_radius_matched" in res.part2 and res.part2.cw_radius_matched.dtype == bool
    assert bool(res.part2.cw_radius_matched[0]) == bool(tables.cw_match(res).matched.iloc[0])
    assert np.isclose(v["censored_within_bound"].numbers["bound"], 2.5)
    again = app.run(app.Params.smoke(), cache_dir=tmp_path, progress=False)
    assert again.part1.attrs["from_cache"] == 1

"""Tables and verdicts of the SDR application chapter on small synthetic results (no MCMC), and the
smoke preset end to end (slow)."""

from __future__ import annotations

import numpy as np
import pytest
import sdr_application_fakes as fakes

from dpsynth import plots
from dpsynth.experiments import sdr_application as app
from dpsynth.experiments.sdr_application import summaries

KEYS = ["censored_within_bound", "privacy_relations", "weighted_above_target", "weights_spare_censoring",
        "censor_w_beats_censor_uw", "histogram_last", "censor_uw_beats_ph_equal_budget", "mixed_sets_compose_eps",
        "reweighting_keeps_delta", "reweighting_raises_weights", "cw_gains_more", "table2_ranking",
        "all_fits_converged"]
#: Verdicts that must hold at smoke scale (the lead's notebook test asserts the same).
SMOKE_KEYS = ["censored_within_bound", "privacy_relations", "mixed_sets_compose_eps", "reweighting_keeps_delta"]


def test_table2_is_split_with_few_columns_and_registry_labels():
    res = fakes.results()
    priv, util = summaries.privacy_table(res), summaries.utility_table(res)
    assert list(priv.columns) == ["Δ", "ε removed", "ε replaced", "converged"]
    assert len(util.columns) <= 6 and len(priv.columns) <= 6
    assert priv.index.get_level_values(0)[0] == plots.label("Weighted")
    assert set(priv.index.get_level_values(1)) == {"ours", "paper"}
    assert priv.loc[(plots.label("PH-paper"), "paper"), "ε removed"] == "2.50"
    assert priv.loc[(plots.label("PH"), "ours"), "converged"] == "no MCMC"
    assert util.loc[(plots.label("Weighted"), "paper"), "mean"] == "$92,994"
    assert "†" not in "".join(priv.loc[(plots.label("Censor_w"), "ours")])


def test_daggers_flag_non_converged_fits():
    res = fakes.results(converged=False)
    priv = summaries.privacy_table(res)
    row = priv.loc[(plots.label("Censor_uw"), "ours")]
    assert all(str(v).endswith("†") for v in row)
    assert "†" not in "".join(priv.loc[(plots.label("PH"), "ours")][:3])
    assert summaries.part2_privacy_table(res)["ε removed"].str.endswith("†").all()
    assert summaries.counts_table(res).loc[plots.label("Weighted"), "local 2Δ"].endswith("†")


def test_other_tables():
    res = fakes.results(replicates=2)
    counts = summaries.counts_table(res)
    assert counts.loc[plots.label("Censor_uw"), "censored"] == "9"
    assert counts.loc[plots.label("PH"), "PH noise"] == "0.20"
    spread = summaries.spread_table(res)
    assert spread is not None and len(spread) == 6 and len(spread.columns) <= 6
    assert summaries.spread_table(fakes.results()) is None
    # one synthesizer dimension: "Data" first, not a fit, so not a row of Part 2's tables
    assert list(res.part2.synthesizer.values) == list(app.PART2_ROWS) and "source" not in res.part2.dims
    assert summaries.fit_names(res.part2) == list(app.PART2_SYNTHESIZERS)
    assert list(summaries.fitted(res.part2).synthesizer.values) == list(app.PART2_SYNTHESIZERS)
    p2 = summaries.part2_privacy_table(res)
    assert list(p2.index) == [plots.label(n) for n in app.PART2_SYNTHESIZERS] and "ε, 5 sets" in p2.columns
    w = summaries.part2_weights_table(res)
    assert w.loc[plots.label("LW_final"), "k"] == "0.900" and w.loc[plots.label("LW"), "k"] == "–"
    conv = summaries.convergence_table(res)
    assert len(conv) == len(app.PART1_SYNTHESIZERS) + len(app.PART2_SYNTHESIZERS)
    assert (conv["converged"] == "2 of 2").all()
    assert list(summaries.salary_table(res.data1).columns) == ["this sample", "published"]
    assert "40" in summaries.caveats(res) and "stand-in" in summaries.caveats(res)


def test_verdicts_on_synthetic_results():
    v = {x.key: x for x in summaries.verdicts(fakes.results())}
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
    v = {x.key: x for x in summaries.verdicts(res)}
    assert v["censored_within_bound"].holds is False
    assert v["reweighting_keeps_delta"].holds is False
    assert v["all_fits_converged"].holds is False and v["all_fits_converged"].numbers["failed"] == 11
    assert v["weighted_above_target"].holds is None  # not established from non-converged fits
    assert v["table2_ranking"].holds is None  # no replicate with all fits converged


def test_cw_match_counts_replicates_and_shortfall():
    res = fakes.results(replicates=3)
    res.part2["cw_radius_matched"] = ("replicate", [True, False, True])
    res.part2["delta"].loc[dict(replicate=1, synthesizer="CW")] = 1.8  # LW 2.0: 10% below
    m = summaries.cw_match(res)
    assert list(m.matched) == [True, False, True] and np.isclose(m.gap.iloc[1], -0.1)
    text = summaries.cw_match_sentence(res)
    assert "2 of 3 replicates" in text and "10.0% below" in text and "replicate 1" in text
    p2 = summaries.part2_privacy_table(res, replicate=1)
    assert p2.loc[plots.label("CW"), "Δ vs LW"] == "-10.0% (not matched)"
    assert p2.loc[plots.label("LW"), "Δ vs LW"] == "–" and len(p2.columns) <= 7
    assert summaries.part2_privacy_table(res).loc[plots.label("CW"), "Δ vs LW"].endswith("(matched)")
    # without the stored flag, the band is checked from the stored Deltas
    del res.part2["cw_radius_matched"]
    assert list(summaries.cw_match(res).matched) == [True, False, True]  # fakes: CW 1.9 vs LW 2.0, smoke tol 5%
    res.params = app.Params.preset("smoke", tol=0.02)
    assert list(summaries.cw_match(res).matched) == [False, False, False]
    assert "0 of 3" in summaries.cw_match_sentence(res)


def test_ranking_table_over_replicates_marks_non_converged_fits():
    res = fakes.results(replicates=4)
    res.part1["avg_ecdf"].loc[dict(replicate=2, synthesizer="Censor_w")] = 0.0  # best in one replicate
    rk = summaries.ranks(res)
    assert list(rk.columns) == list(summaries.RANKED) and rk.loc[2, "Censor_w"] == 1 and rk.loc[0, "Weighted"] == 1
    t = summaries.ranking_table(res)
    assert len(t.columns) <= 7 and list(t.index) == [plots.label(n) for n in summaries.RANKED]
    assert t.loc[plots.label("Weighted"), "avg-ECDF first"] == "3 of 4"
    assert t.loc[plots.label("Censor_w"), "avg-ECDF rank"] == "3 (1–3)"
    assert t.loc[plots.label("PH"), "converged"] == "no MCMC" and "†" not in "".join(t.iloc[:, 0])
    assert "0 failed" in summaries.ranking_sentence(res) and "3 of 4 replicates" in summaries.ranking_sentence(res)
    v = {x.key: x for x in summaries.verdicts(res)}["table2_ranking"]
    assert v.holds is True and v.numbers["holds_in"] == 3 and v.numbers["clean_replicates"] == 4
    # a non-converged fit marks its ranks and is left out of the verdict
    res.part1["converged"].loc[dict(replicate=[0, 1, 3], synthesizer="Weighted")] = False
    t = summaries.ranking_table(res)
    assert t.loc[plots.label("Weighted"), "avg-ECDF rank"].endswith("†")
    assert t.loc[plots.label("Weighted"), "converged"] == "1 of 4"
    assert "3 failed the convergence checks, in 3 of 4 replicates" in summaries.ranking_sentence(res)
    v = {x.key: x for x in summaries.verdicts(res)}["table2_ranking"]
    assert v.holds is False and v.numbers["clean_replicates"] == 1


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
    assert bool(res.part2.cw_radius_matched[0]) == bool(summaries.cw_match(res).matched.iloc[0])
    assert np.isclose(v["censored_within_bound"].numbers["bound"], 2.5)
    again = app.run(app.Params.smoke(), cache_dir=tmp_path, progress=False)
    assert again.part1.attrs["from_cache"] == 1


def test_shown_replicate_is_the_first_kept_one_with_every_fit_converged():
    import dataclasses

    res = fakes.results(replicates=3)
    res = dataclasses.replace(res, params=dataclasses.replace(res.params, keep_records=3))
    assert summaries.shown_replicate(res) == 0
    bad = res.part2.converged.copy()
    bad[0, list(res.part2.synthesizer.values).index("CW_final")] = False  # replicate 0: one failed fit
    res = dataclasses.replace(res, part2=res.part2.assign(converged=bad))
    assert summaries.shown_replicate(res) == 1
    # a replicate that kept no records is never shown; with none left, replicate 0 (flagged by daggers)
    one_kept = dataclasses.replace(res, params=dataclasses.replace(res.params, keep_records=1))
    assert summaries.shown_replicate(one_kept) == 0

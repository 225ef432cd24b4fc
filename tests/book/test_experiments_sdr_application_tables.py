"""Tables of the SDR application chapter, and the lists its prose quotes, on small synthetic results (no MCMC)."""

from __future__ import annotations

import numpy as np
import sdr_application_fakes as fakes

from dpsynth_book import plots
from dpsynth_book.experiments import sdr_application as app
from dpsynth_book.experiments.sdr_application import tables
from dpsynth_book.experiments.sdr_application.verdicts import text_numbers


def test_table2_is_split_with_few_columns_and_registry_labels():
    res = fakes.results()
    priv, util = tables.privacy_table(res), tables.utility_table(res)
    assert list(priv.columns) == ["Δ", "ε removed", "ε replaced", "converged"]
    assert len(util.columns) <= 6 and len(priv.columns) <= 6
    assert priv.index.get_level_values(0)[0] == plots.label("LW")
    assert set(priv.index.get_level_values(1)) == {"ours", "paper"}
    assert priv.loc[(plots.label("PH-paper"), "paper"), "ε removed"] == "2.50"
    assert priv.loc[(plots.label("PH"), "ours"), "converged"] == "no MCMC"
    assert util.loc[(plots.label("LW"), "paper"), "mean"] == "$92,994"
    assert "†" not in "".join(priv.loc[(plots.label("Censor_w"), "ours")])


def test_daggers_flag_non_converged_fits():
    res = fakes.results(converged=False)
    priv = tables.privacy_table(res)
    row = priv.loc[(plots.label("Censor_uw"), "ours")]
    assert all(str(v).endswith("†") for v in row)
    assert "†" not in "".join(priv.loc[(plots.label("PH"), "ours")][:3])
    assert tables.part2_privacy_table(res)["ε removed"].str.endswith("†").all()
    assert tables.counts_table(res).loc[plots.label("LW"), "local 2Δ"].endswith("†")


def test_other_tables():
    res = fakes.results(replicates=2)
    counts = tables.counts_table(res)
    assert counts.loc[plots.label("Censor_uw"), "censored"] == "9"
    assert counts.loc[plots.label("PH"), "PH noise"] == "0.20"
    spread = tables.spread_table(res)
    assert spread is not None and len(spread) == 6 and len(spread.columns) <= 6
    assert tables.spread_table(fakes.results()) is None
    # one synthesizer dimension: "Data" first, not a fit, so not a row of Part 2's tables
    assert list(res.part2.synthesizer.values) == list(app.PART2_ROWS) and "source" not in res.part2.dims
    assert tables.fit_names(res.part2) == list(app.PART2_SYNTHESIZERS)
    assert list(tables.fitted(res.part2).synthesizer.values) == list(app.PART2_SYNTHESIZERS)
    p2 = tables.part2_privacy_table(res)
    assert list(p2.index) == [plots.label(n) for n in app.PART2_SYNTHESIZERS] and "ε, 5 sets" in p2.columns
    w = tables.part2_weights_table(res)
    assert w.loc[plots.label("LW_final"), "k"] == "0.900" and w.loc[plots.label("LW"), "k"] == "–"
    conv = tables.convergence_table(res)
    assert len(conv) == len(app.PART1_SYNTHESIZERS) + len(app.PART2_SYNTHESIZERS)
    assert (conv["converged"] == "2 of 2").all()
    assert list(tables.salary_table(res.data1).columns) == ["this sample", "published"]


def test_cw_match_counts_replicates_and_shortfall():
    res = fakes.results(replicates=3)
    res.part2["cw_radius_matched"] = ("replicate", [True, False, True])
    res.part2["delta"].loc[dict(replicate=1, synthesizer="CW")] = 1.8  # LW 2.0: 10% below
    m = tables.cw_match(res)
    assert list(m.matched) == [True, False, True] and np.isclose(m.gap.iloc[1], -0.1)
    assert tables.text_lists(text_numbers(res))["cw_unmatched"] == "replicate 1: 1.80 against 2.00 (10.0% below)"
    p2 = tables.part2_privacy_table(res, replicate=1)
    assert p2.loc[plots.label("CW"), "Δ vs LW"] == "-10.0% (not matched)"
    assert p2.loc[plots.label("LW"), "Δ vs LW"] == "–" and len(p2.columns) <= 7
    assert tables.part2_privacy_table(res).loc[plots.label("CW"), "Δ vs LW"].endswith("(matched)")
    # without the stored flag, the band is checked from the stored Deltas
    del res.part2["cw_radius_matched"]
    assert list(tables.cw_match(res).matched) == [True, False, True]  # fakes: CW 1.9 vs LW 2.0, smoke tol 5%
    res.params = app.Params.preset("smoke", tol=0.02)
    assert list(tables.cw_match(res).matched) == [False, False, False]
    assert tables.text_lists(text_numbers(res))["cw_unmatched"].count("replicate") == 3
    res.part2["delta"].loc[dict(synthesizer="CW")] = 1.99
    assert tables.text_lists(text_numbers(res))["cw_unmatched"] == "none"


def test_ranking_table_over_replicates_marks_non_converged_fits():
    res = fakes.results(replicates=4)
    res.part1["avg_ecdf"].loc[dict(replicate=2, synthesizer="Censor_w")] = 0.0  # best in one replicate
    rk = tables.ranks(res)
    assert list(rk.columns) == list(tables.RANKED) and rk.loc[2, "Censor_w"] == 1 and rk.loc[0, "LW"] == 1
    t = tables.ranking_table(res)
    assert len(t.columns) <= 7 and list(t.index) == [plots.label(n) for n in tables.RANKED]
    assert t.loc[plots.label("LW"), "avg-ECDF first"] == "3 of 4"
    assert t.loc[plots.label("Censor_w"), "avg-ECDF rank"] == "3 (1–3)"
    assert t.loc[plots.label("PH"), "converged"] == "no MCMC" and "†" not in "".join(t.iloc[:, 0])
    # a non-converged fit marks its ranks
    res.part1["converged"].loc[dict(replicate=[0, 1, 3], synthesizer="LW")] = False
    t = tables.ranking_table(res)
    assert t.loc[plots.label("LW"), "avg-ECDF rank"].endswith("†")
    assert t.loc[plots.label("LW"), "converged"] == "1 of 4"


def test_shown_replicate_is_the_first_kept_one_with_every_fit_converged():
    import dataclasses

    res = fakes.results(replicates=3)
    res = dataclasses.replace(res, params=dataclasses.replace(res.params, keep_records=3))
    assert tables.shown_replicate(res) == 0
    bad = res.part2.converged.copy()
    bad[0, list(res.part2.synthesizer.values).index("CW_final")] = False  # replicate 0: one failed fit
    res = dataclasses.replace(res, part2=res.part2.assign(converged=bad))
    assert tables.shown_replicate(res) == 1
    # a replicate that kept no records is never shown; with none left, replicate 0 (flagged by daggers)
    one_kept = dataclasses.replace(res, params=dataclasses.replace(res.params, keep_records=1))
    assert tables.shown_replicate(one_kept) == 0

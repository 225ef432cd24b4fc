"""Tables of the censoring chapter and the lists its prose quotes, on small synthetic results (no MCMC)."""

from __future__ import annotations

import numpy as np
import pytest
from censoring_fake import fake_results

from dpsynth_book.experiments.censoring import tables as T
from dpsynth_book.experiments.censoring.verdicts import text_numbers


@pytest.fixture(scope="module")
def res():
    return fake_results()


def test_paper_tables_and_count_summary():
    s = T.count_summary([0, 10, 20, np.nan])
    assert (s["min"], s["median"], s["mean"], s["max"]) == (0, 10, 10, 20) and s["sd"] == pytest.approx(10.0)
    assert np.isnan(T.count_summary([np.nan])["mean"])
    assert T.PAPER_TABLE_S5[("none", "Censor_w")] == T.PAPER_TABLE1[(4, "Censor_w")]
    assert T.PAPER_TABLE1[(3, "Weighted-e")]["min"] == 400


def test_values_selects_one_fit(res):
    assert T.values(res.study, "delta", "Censor_uw", 4.0).tolist() == [2.0, 2.0, 2.0]
    assert T.values(res.study, "delta", "LW", 3.0).size == 3  # eps-independent: any eps
    with pytest.raises(KeyError):
        T.values(res.study, "delta", "Censor_uw")


def test_tables_use_registry_labels(res):
    t1 = T.count_table(res)
    assert set(t1.index.get_level_values("synthesizer")) == {
        "Weighted-e (aDP)", "Censor_w (aDP)", "Censor_w-pub (DP)", "Censor_uw (DP)"}
    assert t1.loc[(4.0, "Censor_uw (DP)", "paper"), "median"] == 419
    assert t1.loc[(3.0, "Censor_uw (DP)", "ours"), "median"] == pytest.approx(310.0)
    t5 = T.count_table(res, downscale=True)
    assert t5.shape == (8, 5) and T.count_table(res, full=True).shape[1] == 7
    assert t5.loc[("downscale", "Censor_w (aDP)", "ours"), "median"] == 0
    eps = T.eps_table(res)
    assert ("any", "LW (aDP)") in eps.index and ("4", "PH-paper (DP)") in eps.index
    assert eps.shape[1] <= 7 and {"remove, median", "replace, median"} <= set(eps.columns)
    assert T.tally_table(res).shape == (6, 5)
    u = T.utility_table(res)
    assert list(u.columns) == list(T.MEASURES) and ("4", "PH (DP) (ln n bins)") in u.index
    assert "|mean - true|" in u.columns and u.shape[1] == 5
    m = T.mixing_table(res)
    assert m.shape == (4, 6) and m.loc["Censor_uw (DP)", "distinct draws"] == 150
    assert T.calibration_table(res).shape == (4, 2)
    assert T.release_table(res).shape == (12, 5)
    rs = T.release_summary(res)
    assert "Censor_w-pub (DP), c = 0.700" in rs.index and rs.shape[1] <= 7
    assert set(T.figure1_table(res.figure1).index) == {"prior", "posterior", "censored posterior"}


def test_convergence_table_counts_every_fit_once(res):
    conv = T.convergence_table(res)
    assert conv.loc["LW (aDP)", "fits"] == 3            # once per replicate, not per eps
    assert conv.loc["Censor_uw (DP)", "fits"] == 6            # 2 eps x 3 replicates
    assert conv.loc["Censor_uw (DP)", "failed"] == 4 and conv.loc["Censor_uw (DP)", "divergences"] == 6
    assert "PH (DP)" not in conv.index and "Data" not in conv.index
    assert conv.loc["downscaling study", "fits"] == 9         # own fits only
    assert conv.loc["calibration", "fits"] == 5 and conv.loc["calibration", "failed"] == 2  # from the warnings
    assert conv.loc["illustration", "failed"] == 1 and conv.loc["release months", "fits"] == 15
    assert {"fits with divergences", "divergences", "max R-hat", "min bulk ESS"} <= set(conv.columns)


def test_milder_table(res):
    t = T.milder_table(res)
    assert list(t.columns) == ["median", "mean", "zeros", "median vs paper"]
    assert t.loc[(3.0, "power"), "median vs paper"] == pytest.approx((t.loc[(3.0, "power"), "median"] - 741) / 741)
    assert np.isnan(t.loc[(3.0, "paper"), "median vs paper"])
    assert t.loc[(4.0, "shift"), "median"] == pytest.approx(426.0)
    assert t.loc[(4.0, "shift"), "zeros"] == pytest.approx(1 / 3)
    assert t.loc[(3.0, "power"), "mean"] == pytest.approx(201.0) and t.loc[(4.0, "LW (ours)"), "zeros"] == 0
    assert t.loc[(3.0, "paper"), "median"] == 741 and np.isnan(t.loc[(3.0, "paper"), "zeros"])


def test_eps_list_joins_items_over_the_grid():
    assert T.eps_list({"5": "0%", "4": "38%", "3": "100%"}) == (
        "0% at $\\varepsilon$ = 5, 38% at $\\varepsilon$ = 4 and 100% at $\\varepsilon$ = 3")
    assert T.eps_list({"4": "a, b"}) == "a, b at $\\varepsilon$ = 4"
    assert T.eps_list({"4": "a, b", "3": "c, d"}, sep="; ") == "a, b at $\\varepsilon$ = 4; c, d at $\\varepsilon$ = 3"


def test_text_lists_hold_one_item_per_eps_and_synthesizer(res):
    lists = T.text_lists(text_numbers(res))
    assert lists["threshold_above"] == "33% at $\\varepsilon$ = 4 and 100% at $\\varepsilon$ = 3"
    assert lists["tally"] == "425, 210 and 300 at $\\varepsilon$ = 4; 741, 310 and 400 at $\\varepsilon$ = 3"
    assert lists["milder_eps"] == "4 and 3"
    assert lists["milder"].startswith("*LW (ours)*: 210 (0%), 310 (0%); *shift*: 426 (33%), 742 (0%)")
    assert lists["milder_paper"] == "425 at $\\varepsilon$ = 4 and 741 at $\\varepsilon$ = 3"
    assert lists["mixing_max_ecdf"].startswith("LW (aDP) 0.0101 → 0.0081 (3 of 3); Censor_w (aDP)")
    assert lists["mixing_eps"].count(" for ") == 4 and "600 for Censor_uw (DP)" in lists["mixing_eps"]
    assert lists["ph_best"].count("at $\\varepsilon$") == 2 and "avg-ECDF LW (aDP)" in lists["ph_best"]
    assert lists["discrepancy_censor_uw"] == (
        "210 against 419 (-50%) at $\\varepsilon$ = 4; 310 against 806 (-62%) at $\\varepsilon$ = 3")
    assert lists["discrepancy_weighted_e"].startswith("2 against 219 at")


def test_text_lists_say_when_the_paper_has_no_common_eps(res):
    numbers = text_numbers(res)
    numbers["tally"]["by_eps"], numbers["milder"]["paper"] = {}, {}
    numbers["discrepancy"]["censor_w"] = {}
    lists = T.text_lists(numbers)
    assert lists["tally"].startswith("none") and lists["milder_paper"].startswith("not given")
    assert lists["discrepancy_censor_w"] == "no common $\\varepsilon$"


def test_reference_table(res):
    t = T.reference_table(res)
    assert list(t.index.get_level_values("ε").unique()) == ["4", "1"]  # descending
    assert t.shape[0] == 2 * res.reference.sizes["variant"]
    assert list(t.columns) == ["α", "ε removed", "ε replaced", "% censored", "max-ECDF", "bias of φ", "sd of φ",
                               "converged"]
    row = t.loc[("1", "Censor_uw (DP)")]
    assert row["% censored"] == pytest.approx(40.05) and np.isnan(row["α"]) and row["ε removed"] == 1.0
    # the default: each record's own reference, nothing charged, alpha = min(1, M / K) = eps / 5 (K = 2.5)
    row = t.loc[("1", "Censor_ref (DP)")]
    assert row["α"] == pytest.approx(0.2) and row["ε removed"] == 1.0 and row["ε replaced"] == 2.0
    row = t.loc[("1", "Censor_ref, DP median θ₀")]
    assert row["ε removed"] == pytest.approx(1.1) and row["ε replaced"] == pytest.approx(2.2)
    assert t.loc[("4", "Censor_ref, historical θ₀"), "ε removed"] == 4.0
    assert t.loc[("4", "Censor_ref, DP median θ₀, widen 1"), "bias of φ"] == pytest.approx(-0.029)
    assert list(T.reference_table(res, "alpha").loc["4"].index) == ["Censor_ref (DP)", "Censor_ref, α = 1",
                                                                    "Censor_ref, α = 0.5", "Censor_ref, α = 0.25"]
    assert list(T.reference_table(res, "main").loc["1"].index) == ["Censor_uw (DP)", "Censor_w-pub (DP)",
                                                                   "Censor_ref (DP)", "Censor_ref, DP median θ₀",
                                                                   "Censor_ref, historical θ₀"]
    assert list(T.reference_table(res, "widen").loc["1"].index) == ["Censor_ref, DP median θ₀",
                                                                    "Censor_ref, DP median θ₀, widen 1",
                                                                    "Censor_ref, DP median θ₀, widen 4"]
    with pytest.raises(ValueError, match="kind"):
        T.reference_table(res, "other")


def test_reference_captions_and_convergence_row(res):
    for kind in ("table", "figure"):
        c = T.reference_caption(res, kind)
        assert "3 replicate(s) of n = 300" in c and "one record removed" in c and "$\\varepsilon_0$ = 0.1" in c
    with pytest.raises(ValueError, match="kind"):
        T.reference_caption(res, "other")
    row = T.convergence_table(res).loc["Censor_ref study"]
    assert row["fits"] == 3 * 2 * res.reference.sizes["variant"] and row["failed"] == 0


def test_the_tables_hold_the_numbers_the_verdicts_quote():
    """The Weighted-e, posterior and Censor_ref verdicts quote only what the chapter's tables show (12
    replicates, so the replicate counts are above the small integers the page check spares)."""
    from test_page_check import _page

    from dpsynth_book import page_check
    from dpsynth_book.experiments.censoring import verdicts

    res = fake_results(12)
    a = T.above_target_table(res)
    assert a.loc["4", ["ε/2", "LW above", "Weighted-e above"]].tolist() == [2.0, 10, 10]
    assert a.loc["3", ["LW above", "Weighted-e above", "of them kept"]].tolist() == [12, 12, "8"]
    f1 = T.figure1_table(res.figure1)
    assert f1.loc["posterior", "sd / posterior sd"] == 1 and f1.loc["posterior", "mean shift (posterior sds)"] == 0
    v = {x.key: x for x in verdicts(res)}
    keys = ("censored_within_bound", "weighted_e_above_target", "censoring_flattens_posterior", "ref_censors_fewer",
            "weighted_e_threshold_effect")
    tables = [a, f1, T.reference_table(res), T.threshold_table(res)]
    page = _page([v[k] for k in keys], tables)
    assert page_check.unheld_numbers(page, declared=[4.0, 3.0, 1.0, 12]) == []
    # without the new table the Weighted-e medians are not held
    assert {u[1] for u in page_check.unheld_numbers(_page([v[k] for k in keys], tables[1:-1] + tables[-1:]),
                                                     declared=[4.0, 3.0, 1.0, 12])} == {
        v["weighted_e_above_target"].claim}


def test_threshold_table_shows_the_numbers_of_the_effect():
    res = fake_results(6)
    t = T.threshold_table(res)
    th = T.threshold_effect(res)
    assert list(t.index) == ["Unweighted Δ against −½ log x₍₁₎", "Unweighted Δ against LW Δ",
                             "Weighted-e count against LW Δ, ε = 4", "Weighted-e count against LW Δ, ε = 3"]
    assert t.loc["Unweighted Δ against LW Δ", "median ratio"] == pytest.approx(th["quarter"]["median_ratio"])
    row = t.loc["Weighted-e count against LW Δ, ε = 4"]
    d = th["by_eps"]["4"]
    assert (row["at or below ε/2"], row["above ε/2"]) == (str(d["below"]), str(d["above"]))
    assert row["median truncated there"] == pytest.approx(d["above_median"]) and np.isnan(row["median ratio"])
    assert t.loc["Unweighted Δ against LW Δ", "above ε/2"] == "–"


def test_tables_of_every_synthesizer_show_censor_ref_from_its_own_study():
    res = fake_results(2)
    u = T.utility_table(res)
    assert ("4", T.REFERENCE_ROW) in u.index and ("3", T.REFERENCE_ROW) not in u.index  # the fake study: eps 4, 1
    ref = res.reference.sel(variant="Censor_ref", eps=4.0)
    assert u.loc[("4", T.REFERENCE_ROW), "max-ECDF"] == pytest.approx(float(np.median(ref["max_ecdf"].values)))
    e = T.eps_table(res)
    assert e.loc[("4", T.REFERENCE_ROW), "remove, max"] == 4.0 and e.loc[("4", T.REFERENCE_ROW), "guarantee"] == "DP"
    assert T.REFERENCE_ROW.startswith("Censor_ref (DP)") and "2 replicate(s)" in T.reference_row_note(res)
    # without the Censor_ref study the tables are the main study's alone
    res.reference = None
    assert T.REFERENCE_ROW not in T.utility_table(res).index.get_level_values(1)
    assert T.reference_row_note(res) == ""

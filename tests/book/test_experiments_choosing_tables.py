"""Tables and computed text of the choosing chapter: decision and odds tables, privacy against utility."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from choosing_fake import (
    fake_range_restriction,
    fake_sdr_censoring,
    fake_sdr_reweighting,
    fake_studies,
)

from dpsynth import registry
from dpsynth_book.experiments.choosing import tables
from dpsynth_book.result_files import ShippedResultsError


def test_decision_table_takes_guarantees_from_the_registry():
    t = tables.decision_table()
    assert t.loc["Censor_uw", "guarantee"] == registry.guarantee("Censor_uw") == "DP"
    assert t.loc["Censor_w", "guarantee"] == "aDP"
    assert t.loc["Censor_w-pub", "guarantee"] == "DP"
    assert "historical" in t.loc["Censor_w-pub", "needs"]
    assert "public bounds" in t.loc["PH", "needs"]
    assert "OpenDP-Q" in t.index and "Unweighted" not in t.index  # every private mechanism, from the specs
    assert list(t.index[:2]) == ["LW", "CW"] and "Weighted" not in t.index  # one row per mechanism (an alias is LW)
    assert tables.decision_table(["unweighted"]).loc["Unweighted", "guarantee"] == "none"
    with pytest.raises(ValueError, match="unknown mechanism 'nope'"):
        tables.decision_table(["nope"])


def test_posterior_probability_bound():
    # eps = 0: nothing learned
    assert tables.posterior_probability_bound(0.1, 0.0) == pytest.approx(0.1)
    # odds 1:9 times e^1
    odds = (0.1 / 0.9) * np.e
    assert tables.posterior_probability_bound(0.1, 1.0) == pytest.approx(odds / (1 + odds))
    with pytest.raises(ValueError, match="`prior`"):
        tables.posterior_probability_bound(1.0, 1.0)
    with pytest.raises(ValueError, match="`eps`"):
        tables.posterior_probability_bound(0.5, -1.0)


def test_odds_table():
    t = tables.odds_table([1.0, 5.0], priors=(0.01,))
    assert t.loc[5.0, "odds factor e^eps"] == pytest.approx(np.exp(5.0))
    assert t.loc[1.0, "prior 0.01 -> at most"] < t.loc[5.0, "prior 0.01 -> at most"] < 1


# --- privacy and utility across the book: small data sets with the shipped files' structure ------------------


def _row(t, study_part, synthesizer, target=None):
    m = t["study"].str.contains(study_part, regex=False) & (t["synthesizer"] == synthesizer)
    if target is not None:
        m &= np.isclose(t["eps_target"], target)
    assert m.sum() == 1, (study_part, synthesizer, target, m.sum())
    return t[m].iloc[0]


def test_tradeoff_table_rows_guarantees_and_dropped_rows():
    t = tables.tradeoff_table(fake_studies())
    assert list(t.columns) == list(tables.TRADEOFF_COLUMNS)
    assert "Data" not in set(t["synthesizer"])
    assert not t["synthesizer"].str.startswith("ds_").any()
    # LW has no finite eps in the censoring file: dropped
    assert not ((t["source"] == "censoring") & (t["synthesizer"] == "LW")).any()
    assert np.isfinite(t["eps"]).all()
    for _, r in t.iterrows():
        assert r["guarantee"] == registry.guarantee(r["synthesizer"])
    # censoring: one row per (synthesizer, eps target); Unweighted once, without a target
    cens = t[t["source"] == "censoring"]
    assert len(cens) == 1 + 4 * 2
    assert sorted(cens["eps_target"].dropna().unique()) == [3.0, 5.0]
    assert np.isnan(_row(t, "censoring study", "Unweighted")["eps_target"])
    # one panel per generating model; SDR panels carry the stand-in caveat
    studies = list(pd.unique(t["study"]))
    assert len(studies) == 6
    assert studies[0] == "Beta, n = 2,000 (censoring study)"
    assert any(s.startswith("Poisson, n = 1,000") for s in studies)
    assert any(s.startswith("NB mixture, n = 1,000") for s in studies)
    assert sum("SDR stand-in" in s for s in studies) == 2
    # SDR Part 1: a target only for the mechanisms run at one; PH-paper's eps is half of it
    assert np.isnan(_row(t, "censoring synthesizers", "Unweighted")["eps_target"])
    ph_paper = _row(t, "censoring synthesizers", "PH-paper")
    assert ph_paper["eps_target"] == 5.0 and ph_paper["eps"] == 2.5
    assert _row(t, "censoring synthesizers", "PH")["guarantee"] == "DP"
    assert _row(t, "censoring synthesizers", "Censor_w")["guarantee"] == "aDP"


def test_tradeoff_table_medians_and_quartiles():
    data = fake_studies()
    t = tables.tradeoff_table(data)
    # over replicates (censoring: Unweighted's eps is 18 + replicate)
    r = _row(t, "censoring study", "Unweighted")
    e = data["censoring"]["eps_remove"].isel(fit=1).values
    assert r["eps"] == pytest.approx(np.median(e))
    assert (r["eps_lo"], r["eps_hi"]) == pytest.approx(tuple(np.percentile(e, [25, 75])))
    u = data["censoring"]["max_ecdf"].isel(fit=1).values
    assert (r["max_ecdf_lo"], r["max_ecdf"], r["max_ecdf_hi"]) == pytest.approx(tuple(np.percentile(u, [25, 50, 75])))
    assert r["replicates"] == 4 and r["releases"] == 4
    # range restriction: the n_obs == n_main slice only
    r = _row(t, "range restriction", "LW")
    rr = data["range_restriction"].sel(n_obs=400, synthesizer="LW")
    assert r["eps"] == pytest.approx(float(np.median(rr["eps"].values)))
    assert r["max_ecdf"] == pytest.approx(float(np.median(rr["max_ecdf"].values)))
    # re-weighting: one replicate, quartiles over the synthetic sets
    r = _row(t, "NB mixture", "CW")
    u = data["reweighting-synthesizers"]["max_ecdf"].sel(data_model="nb_mixture", synthesizer="CW").values.ravel()
    assert (r["max_ecdf_lo"], r["max_ecdf"], r["max_ecdf_hi"]) == pytest.approx(tuple(np.percentile(u, [25, 50, 75])))
    assert r["eps"] == r["eps_lo"] == r["eps_hi"] == pytest.approx(9.7)
    assert r["replicates"] == 1 and r["releases"] == 8
    r = _row(t, "re-weighting synthesizers", "SW")
    assert r["max_ecdf"] == pytest.approx(0.06 + 0.001 * np.median(np.arange(6)))


def test_tradeoff_table_skips_missing_studies_and_reads_older_source_dim():
    t = tables.tradeoff_table({"sdr_reweighting": fake_sdr_reweighting()})
    assert set(t["source"]) == {"sdr_reweighting"}
    assert list(t["synthesizer"]) == ["Unweighted", "LW", "SW"]
    # an older layout: no "Data" on `synthesizer`, utility over a separate `source` dimension
    ds = fake_sdr_reweighting().drop_vars("is_fit")
    old = ds.isel(synthesizer=slice(1, None)).drop_vars("max_ecdf")
    old["max_ecdf"] = ds["max_ecdf"].rename(synthesizer="source")
    t_old = tables.tradeoff_table({"sdr_reweighting": old})
    pd.testing.assert_frame_equal(t_old, t)
    assert tables.tradeoff_table({}).empty


def test_tradeoff_markdown_numbers_come_from_the_table():
    t = tables.tradeoff_table(fake_studies())
    md = tables.tradeoff_markdown(t)
    cens = t[(t["source"] == "censoring") & (t["eps_target"] == 5.0)]
    best_dp = cens[cens["guarantee"] == "DP"].sort_values("max_ecdf").iloc[0]
    best_adp = cens[cens["guarantee"] == "aDP"].sort_values("max_ecdf").iloc[0]
    assert f"is {best_dp['synthesizer']}" in md and f"{best_dp['max_ecdf']:.3f}" in md
    assert best_adp["synthesizer"] in md and f"{best_adp['max_ecdf']:.3f}" in md
    assert f"{best_dp['max_ecdf'] / best_adp['max_ecdf']:.2f} times" in md
    assert "still the best DP mechanism at ε = 3" in md  # PH-paper is the best DP one at both targets
    # the SDR panel's best DP is PH-paper, named with its own eps (half the target)
    assert "PH-paper (ε = 2.5 with one record removed)" in md
    none = t[t["guarantee"] == "none"]
    assert f"{none['eps'].min():.3g}" in md and f"{none['eps'].max():.3g}" in md
    assert 2 <= md.count(". ") + 1 <= 4


def test_shipped_studies_reads_present_files_without_checking(tmp_path):
    with pytest.raises(ShippedResultsError, match="make results"):
        tables.shipped_studies(folder=tmp_path)
    fake_sdr_censoring().to_netcdf(tmp_path / "sdr_censoring.nc", engine="h5netcdf")
    fake_range_restriction().to_netcdf(tmp_path / "range_restriction.nc", engine="h5netcdf")
    got = tables.shipped_studies(folder=tmp_path)
    assert list(got) == ["range_restriction", "sdr_censoring"]
    assert all(ds.attrs["from_shipped"] == 1 for ds in got.values())
    assert tables.tradeoff_table(got)["source"].nunique() == 2
    assert list(tables.shipped_studies(["sdr_censoring"], folder=tmp_path)) == ["sdr_censoring"]


def test_the_package_re_exports_the_public_names():
    from dpsynth_book.experiments import choosing
    from dpsynth_book.experiments.choosing import figures

    own = {"Params", "GridParams", "run"}  # the chapter's head-to-head grid
    for name in set(choosing.__all__) - own:
        assert getattr(choosing, name) is getattr(tables if name in tables.__all__ else figures, name), name
    assert set(choosing.__all__) - own <= set(tables.__all__) | set(figures.__all__)
    assert own <= set(choosing.__all__)


def test_cw_fits_state_the_default_search_and_the_sdr_chapter_s_longer_one():
    from dpsynth import mechanisms
    from dpsynth_book.experiments.sdr_application import Params as SDRParams

    fits = tables.decision_table().loc["CW", "MCMC fits"]
    default = mechanisms.get("cw").params["match_max_iter"].default
    assert f"({default} by default, so at most {2 + default} in all)" in fits
    assert f"search allows up to {SDRParams.paper().cw_max_iter}" in fits
    assert "SDR" not in tables.decision_table().loc["LW", "MCMC fits"]


def test_decision_table_shows_parameter_names_as_code_and_mechanism_names_as_names():
    from dpsynth_book import page_check

    t = tables.decision_table()
    for col in t.columns:
        for text in t[col].astype(str):
            prose = " ".join(text.split("`")[::2])  # what is outside code spans
            assert page_check.caption_defects(prose) == [], text
    assert "`match_max_iter`" in t.loc["CW", "MCMC fits"] and "LW_final" in t.index


def test_costs_publish_the_eps_asked_and_price_saved_files_and_further_releases():
    t = tables.costs_table(2.0, keep_draws=10)
    assert (t["ε published"] == 2.0).all()
    ref = t.loc["bounded marginal (no covariates), Censor_ref"]
    assert ref["relation"] == "one record removed" and ref["size"] > 0
    assert ref["saved, 10 draws"] == pytest.approx(ref["size"] + 10 * ref["one draw"])
    na = t.loc["bounded marginal (no covariates), Noise-aware"]
    assert na["each further release"] == 0 and na["saved, 10 draws"] == pytest.approx(2.0)
    cov = t.loc["regression or count (public covariates carried)"]
    assert cov["relation"] == "one record replaced" and cov["size"] == 0 and cov["one draw"] == pytest.approx(2.0)
    cat = t.loc["category (public covariates carried)"]
    assert cat["reference"] > 0 and cat["reference"] + cat["one draw"] == pytest.approx(2.0)

"""The decision table and the odds table of the 'Choosing a mechanism' page."""

import numpy as np
import pytest

from dpsynth import guide, registry


def test_decision_table_takes_guarantees_from_the_registry():
    t = guide.decision_table()
    assert t.loc["Censor_uw", "guarantee"] == registry.guarantee("Censor_uw") == "DP"
    assert t.loc["Censor_w", "guarantee"] == "aDP"
    assert t.loc["Censor_w-pub", "guarantee"] == "DP"
    assert "historical" in t.loc["Censor_w-pub", "needs"]
    assert "public bound" in t.loc["PH", "needs"]
    with pytest.raises(ValueError, match="no decision-table entry"):
        guide.decision_table(["unweighted"])


def test_posterior_probability_bound():
    # eps = 0: nothing learned
    assert guide.posterior_probability_bound(0.1, 0.0) == pytest.approx(0.1)
    # odds 1:9 times e^1
    odds = (0.1 / 0.9) * np.e
    assert guide.posterior_probability_bound(0.1, 1.0) == pytest.approx(odds / (1 + odds))
    with pytest.raises(ValueError, match="`prior`"):
        guide.posterior_probability_bound(1.0, 1.0)
    with pytest.raises(ValueError, match="`eps`"):
        guide.posterior_probability_bound(0.5, -1.0)


def test_odds_table():
    t = guide.odds_table([1.0, 5.0], priors=(0.01,))
    assert t.loc[5.0, "odds factor e^eps"] == pytest.approx(np.exp(5.0))
    assert t.loc[1.0, "prior 0.01 -> at most"] < t.loc[5.0, "prior 0.01 -> at most"] < 1


# --- privacy and utility across the book: small data sets with the shipped files' structure ------------------

import json  # noqa: E402

import pandas as pd  # noqa: E402
import xarray as xr  # noqa: E402

from dpsynth import book, shipped  # noqa: E402

NAN = float("nan")


def _censoring(reps=4):
    """The censoring file: dim ``fit`` with coords synthesizer and eps; "Data" first; ``ds_`` variables."""
    syn = ["Data", "Unweighted", "Weighted", "Censor_uw", "Censor_w", "PH", "PH-paper",
           "Censor_uw", "Censor_w", "PH", "PH-paper"]
    tgt = [NAN, NAN, NAN, 5, 5, 5, 5, 3, 3, 3, 3]
    r = np.arange(reps)[:, None]
    eps_remove = np.tile(np.array([NAN, 18.0, 5.5, 5, 5, 5, 2.5, 3, 3, 3, 1.5]), (reps, 1))
    eps_remove[:, 1] += r[:, 0]                         # Unweighted varies over replicates
    eps_remove[:, 2] = NAN                              # Weighted: no finite eps -> dropped
    ecdf = np.array([0.0, 0.03, 0.06, 0.10, 0.06, 0.08, 0.077, 0.2, 0.13, 0.076, 0.075]) + 0.01 * r
    return xr.Dataset(
        {"max_ecdf": (("replicate", "fit"), ecdf), "eps_remove": (("replicate", "fit"), eps_remove),
         "eps_replace": (("replicate", "fit"), 2 * eps_remove),
         "ds_max_ecdf": (("replicate", "ds_synthesizer", "scaling"), np.zeros((reps, 2, 2))),
         "ds_eps_remove": (("replicate", "ds_synthesizer", "scaling"), np.ones((reps, 2, 2)))},
        coords={"replicate": np.arange(reps), "synthesizer": ("fit", syn), "eps": ("fit", np.array(tgt, float)),
                "ds_synthesizer": ["Censor_w", "Weighted-e"], "scaling": ["downscale", "none"]},
        attrs={"params": json.dumps({"n": 2000, "eps_grid": [5.0, 3.0]}), "replicates": reps},
    )


def _range_restriction(reps=3):
    syn = ["Unweighted", "LW", "A[0.4,1.8]", "B[0.4,1.8]"]
    n_obs = [200, 400]
    base = np.array([18.0, 6.0, 2.4, 11.0])
    eps = np.stack([np.stack([base * (1 + j) + i for j in range(2)]) for i in range(reps)])
    ecdf = np.stack([np.stack([np.array([0.05, 0.08, 0.04, 0.12]) * (2 - j) + 0.01 * i for j in range(2)])
                     for i in range(reps)])
    return xr.Dataset(
        {"eps": (("replicate", "n_obs", "synthesizer"), eps), "max_ecdf": (("replicate", "n_obs", "synthesizer"), ecdf),
         "q90_data": (("replicate", "n_obs"), np.ones((reps, 2)))},
        coords={"replicate": np.arange(reps), "n_obs": n_obs, "synthesizer": syn,
                "guarantee": ("synthesizer", [registry.guarantee(s) for s in syn])},
        attrs={"n_main": 400, "params": json.dumps({"n": 400})},
    )


def _reweighting(sets=8):
    """The re-weighting file: "Data" first on ``synthesizer``, ``is_fit``, utility per synthetic set."""
    syn = ["Data", "Unweighted", "LW", "CW"]
    dms = ["poisson", "nb_mixture"]
    eps = np.array([[[NAN, 27.5, 9.1, 9.0], [NAN, 26.1, 10.7, 9.7]]])
    ecdf = np.zeros((1, 2, 4, sets))
    for a in range(2):
        for b in range(4):
            ecdf[0, a, b] = 0.01 * (1 + a + b) + 0.001 * np.arange(sets)
    return xr.Dataset(
        {"is_fit": (("replicate", "data_model", "synthesizer"), np.broadcast_to([False, True, True, True], (1, 2, 4))),
         "eps": (("replicate", "data_model", "synthesizer"), eps),
         "eps_replace": (("replicate", "data_model", "synthesizer"), eps),
         "max_ecdf": (("replicate", "data_model", "synthesizer", "syn_set"), ecdf)},
        coords={"replicate": [0], "data_model": dms, "synthesizer": syn, "syn_set": np.arange(sets)},
        attrs={"params": json.dumps({"n": 1000, "synthetic_sets": sets})},
    )


def _sdr_censoring(reps=2):
    """SDR Part 1: "Data" row (confidential salaries, no eps); one synthetic set per fit and replicate."""
    syn = ["Data", "Unweighted", "Censor_w", "Censor_uw", "PH", "PH-paper"]
    eps = np.tile([NAN, 17.2, 5.0, 5.0, 5.0, 2.5], (reps, 1))
    ecdf = np.tile([NAN, 0.094, 0.082, 0.086, 0.057, 0.052], (reps, 1)) + 0.002 * np.arange(reps)[:, None]
    return xr.Dataset(
        {"eps": (("replicate", "synthesizer"), eps), "max_ecdf": (("replicate", "synthesizer"), ecdf)},
        coords={"replicate": np.arange(reps), "synthesizer": syn},
        attrs={"source": "stand-in", "n": 1000, "params": json.dumps({"eps": 5.0, "n1": 1000, "sdr_path": ""})},
    )


def _sdr_reweighting(sets=6):
    syn = ["Data", "Unweighted", "LW", "SW"]
    ecdf = np.array([[0.02, 0.04, 0.05, 0.06]])[..., None] + 0.001 * np.arange(sets)
    return xr.Dataset(
        {"is_fit": (("replicate", "synthesizer"), [[False, True, True, True]]),
         "eps": (("replicate", "synthesizer"), [[NAN, 65.7, 26.6, 27.8]]),
         "max_ecdf": (("replicate", "synthesizer", "syn_set"), ecdf)},
        coords={"replicate": [0], "synthesizer": syn, "syn_set": np.arange(sets)},
        attrs={"params": json.dumps({"eps": 5.0, "n2": 1000, "sdr_path": ""})},
    )


def _all():
    return {"censoring": _censoring(), "range_restriction": _range_restriction(),
            "reweighting-synthesizers": _reweighting(), "sdr_censoring": _sdr_censoring(),
            "sdr_reweighting": _sdr_reweighting()}


def _row(t, study_part, synthesizer, target=None):
    m = t["study"].str.contains(study_part, regex=False) & (t["synthesizer"] == synthesizer)
    if target is not None:
        m &= np.isclose(t["eps_target"], target)
    assert m.sum() == 1, (study_part, synthesizer, target, m.sum())
    return t[m].iloc[0]


def test_tradeoff_table_rows_guarantees_and_dropped_rows():
    t = guide.tradeoff_table(_all())
    assert list(t.columns) == list(guide.TRADEOFF_COLUMNS)
    assert "Data" not in set(t["synthesizer"])
    assert not t["synthesizer"].str.startswith("ds_").any()
    # Weighted has no finite eps in the censoring file: dropped
    assert not ((t["source"] == "censoring") & (t["synthesizer"] == "Weighted")).any()
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
    assert studies[0] == "Beta, n = 2000 (censoring study)"
    assert any(s.startswith("Poisson, n = 1000") for s in studies)
    assert any(s.startswith("NB mixture, n = 1000") for s in studies)
    assert sum("SDR stand-in" in s for s in studies) == 2
    # SDR Part 1: a target only for the mechanisms run at one; PH-paper's eps is half of it
    assert np.isnan(_row(t, "censoring synthesizers", "Unweighted")["eps_target"])
    ph_paper = _row(t, "censoring synthesizers", "PH-paper")
    assert ph_paper["eps_target"] == 5.0 and ph_paper["eps"] == 2.5
    assert _row(t, "censoring synthesizers", "PH")["guarantee"] == "DP"
    assert _row(t, "censoring synthesizers", "Censor_w")["guarantee"] == "aDP"


def test_tradeoff_table_medians_and_quartiles():
    data = _all()
    t = guide.tradeoff_table(data)
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
    t = guide.tradeoff_table({"sdr_reweighting": _sdr_reweighting()})
    assert set(t["source"]) == {"sdr_reweighting"}
    assert list(t["synthesizer"]) == ["Unweighted", "LW", "SW"]
    # an older layout: no "Data" on `synthesizer`, utility over a separate `source` dimension
    ds = _sdr_reweighting().drop_vars("is_fit")
    old = ds.isel(synthesizer=slice(1, None)).drop_vars("max_ecdf")
    old["max_ecdf"] = ds["max_ecdf"].rename(synthesizer="source")
    t_old = guide.tradeoff_table({"sdr_reweighting": old})
    pd.testing.assert_frame_equal(t_old, t)
    assert guide.tradeoff_table({}).empty


def test_tradeoff_figure_is_legible_and_marks_guarantees():
    t = guide.tradeoff_table(_all())
    fig, axes = guide.tradeoff_figure(t)
    try:
        assert len(axes) == t["study"].nunique()
        assert book.smallest_text_px(fig) >= book.MIN_TEXT_PX
        assert all(ax.get_xscale() == "log" for ax in axes)
        (legend,) = fig.legends
        labels = [x.get_text() for x in legend.get_texts()]
        assert labels == [registry.label(n) for n in registry.order(list(pd.unique(t["synthesizer"])))]
        handles = dict(zip(labels, legend.legend_handles))
        assert handles["Unweighted (none)"].get_marker() == "x"
        ph = handles["PH (DP)"]
        assert ph.get_markerfacecolor().lower() == registry.color("PH").lower()      # filled: DP
        assert handles["LW (aDP)"].get_markerfacecolor() == "white"                  # open: aDP
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


def test_tradeoff_markdown_numbers_come_from_the_table():
    t = guide.tradeoff_table(_all())
    md = guide.tradeoff_markdown(t)
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
    with pytest.raises(shipped.ShippedResultsError, match="make results"):
        guide.shipped_studies(folder=tmp_path)
    _sdr_censoring().to_netcdf(tmp_path / "sdr_censoring.nc", engine="h5netcdf")
    _range_restriction().to_netcdf(tmp_path / "range_restriction.nc", engine="h5netcdf")
    got = guide.shipped_studies(folder=tmp_path)
    assert list(got) == ["range_restriction", "sdr_censoring"]
    assert all(ds.attrs["from_shipped"] == 1 for ds in got.values())
    assert guide.tradeoff_table(got)["source"].nunique() == 2
    assert list(guide.shipped_studies(["sdr_censoring"], folder=tmp_path)) == ["sdr_censoring"]


def test_tradeoff_caption_states_source_and_replicates():
    t = guide.tradeoff_table(_all())
    cap = guide.tradeoff_caption(t)
    assert "shipped paper-scale results" in cap
    assert "4 for “Beta, n = 2000 (censoring study)”" in cap
    assert "1, of 8 synthetic sets each, for “Poisson, n = 1000 (re-weighting study)”" in cap
    assert "SDR stand-in" in cap


def test_log_ticks_are_readable():
    assert guide._log_ticks(1.4, 19.0) == [2.0, 5.0, 10.0]
    assert guide._log_ticks(8.5, 29.0) == [10.0, 15.0, 20.0]
    assert guide._log_ticks(24.0, 68.0) == [30.0, 40.0, 50.0, 60.0]

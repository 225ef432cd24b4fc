"""The censoring chapter's replicate functions (small data, short chains)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from dpsynth import mechanisms
from dpsynth.experiments import censoring as cen
from dpsynth.privacy import CENSOR_TOL
from dpsynth.seeds import stream

PARAMS = dict(n=300, eps_grid=[4.0, 3.0], draws=150, tune=150, chains=2, downscale=0.8, downscale_eps=4.0,
              ph_bins="sqrt", ph_alt_bins="log", ph_upper=1.0, mix_eps=4.0)


def test_count_summary_and_paper_tables():
    s = cen.count_summary([0, 10, 20, np.nan])
    assert s["min"] == 0 and s["max"] == 20 and s["median"] == 10 and s["mean"] == 10
    assert s["sd"] == pytest.approx(10.0)
    assert np.isnan(cen.count_summary([np.nan])["mean"])
    # Table S5's "none" rows are Table 1's eps = 4 rows.
    assert cen.PAPER_TABLE_S5[("none", "Censor_w")] == cen.PAPER_TABLE1[(4, "Censor_w")]
    assert cen.PAPER_TABLE1[(3, "Weighted-e")]["min"] == 400


def test_true_stats_match_scipy():
    t = cen.true_stats()
    assert t["mean"] == pytest.approx(0.5 / 3.5)
    assert 0 < t["q15"] < t["median"] < t["q90"] < 1


def test_synthesizer_names_are_registered():
    from dpsynth import registry

    for name in (*cen.SYNTHS, *cen.MIX_SYNTHS, *cen.DOWNSCALE_SYNTHS, *(s for s, _ in cen.RELEASE_ROWS)):
        registry.label(name)
    assert registry.guarantee("Censor_w") == "aDP" and registry.guarantee("Censor_w-pub") == "DP"
    assert dict(cen.PH_SYNTHS) == {"PH": "remove", "PH-paper": "replace"}


@pytest.mark.slow
def test_replicate_structure_and_guarantee():
    ds = cen.replicate(0, stream(11, 0), PARAMS)
    assert set(ds.synth.values) == {"Data", *cen.SYNTHS}
    assert sorted(ds.eps.values) == [3.0, 4.0]
    for name in ("Censor_uw", "Censor_w", "Censor_w-pub"):
        for eps in (3.0, 4.0):
            assert float(ds["delta"].sel(synth=name, eps=eps)) <= eps / 2 + CENSOR_TOL
            assert float(ds["n_censored"].sel(synth=name, eps=eps)) >= 0
            # A censored fit's eps is 2M with one record removed, 4M replaced (Beta terms take both signs).
            assert float(ds["eps_remove"].sel(synth=name, eps=eps)) == pytest.approx(eps)
            assert float(ds["eps_replace"].sel(synth=name, eps=eps)) == pytest.approx(2 * eps)
    # PH is calibrated under removal, PH-paper (Laplace(2/eps)) is eps/2 under removal.
    for eps in (3.0, 4.0):
        assert float(ds["eps_remove"].sel(synth="PH", eps=eps)) == pytest.approx(eps)
        assert float(ds["eps_remove"].sel(synth="PH-paper", eps=eps)) == pytest.approx(eps / 2)
        assert float(ds["eps_replace"].sel(synth="PH-paper", eps=eps)) == pytest.approx(eps)
    assert set(ds.ph_synth.values) == {"PH", "PH-paper"} and "ph_alt_avg_ecdf" in ds
    assert float(ds["ds_delta"].sel(ds_synth="Censor_w", scaling="downscale")) <= 2.0 + CENSOR_TOL
    # Unweighted and Weighted do not depend on eps; the "none" downscaling rows reuse the eps=4 fits.
    np.testing.assert_array_equal(ds["delta"].sel(synth="Weighted", eps=3.0), ds["delta"].sel(synth="Weighted", eps=4.0))
    assert float(ds["ds_delta"].sel(ds_synth="Censor_w", scaling="none")) == float(ds["delta"].sel(synth="Censor_w", eps=4.0))
    assert float(ds["max_ecdf"].sel(synth="Data", eps=4.0)) == 0.0
    assert float(ds["delta_unweighted"]) > float(ds["delta_weighted"])
    # Divergences are recorded per fit; the historical fit of Censor_w-pub has its diagnostics too.
    assert np.all(ds["divergences"].sel(synth="Censor_uw").values >= 0)
    assert "hist_fit_ok" in ds and float(ds["hist_divergences"]) >= 0
    # Record-wise mixing at mix_eps only, for MIX_SYNTHS: eps composed over the distinct draws used.
    for name in cen.MIX_SYNTHS:
        v = ds.sel(synth=name, eps=4.0)
        k = float(v["mix_n_draws"])
        assert 1 < k <= 300
        assert float(v["mix_eps"]) == pytest.approx(k * float(v["eps_remove"]))
        assert np.isnan(float(ds["mix_eps"].sel(synth=name, eps=3.0)))
    assert np.isnan(float(ds["mix_eps"].sel(synth="PH", eps=4.0)))
    # Same stream, same result (replicates are addressed, not drawn in sequence).
    again = cen.replicate(0, stream(11, 0), PARAMS)
    np.testing.assert_allclose(again["delta"].values, ds["delta"].values)

    both = xr.concat([ds, again], dim=pd.Index([0, 1], name="replicate"))
    table = cen.count_table(both)
    assert ("ours" in table.index.get_level_values("source")) and ("paper" in table.index.get_level_values("source"))
    labels = set(table.index.get_level_values("synthesizer"))
    assert {"Censor_w (aDP)", "Censor_w-pub (DP)", "Censor_uw (DP)", "Weighted-e (aDP)"} == labels
    assert cen.count_table(both, downscale=True).shape[0] == 8
    failed, total = cen.fit_failures(both)
    # per replicate: Unweighted, Weighted, historical, 4 per eps x 2 eps, 3 downscaled
    assert total == 2 * (3 + 4 * 2 + 3) and 0 <= failed <= total
    conv = cen.convergence_table(both)
    assert int(conv["fits"].sum()) == total and int(conv["failed"].sum()) == failed
    assert {"fits with divergences", "divergences", "max R-hat", "min bulk ESS"} <= set(conv.columns)


@pytest.mark.slow
def test_replicate_without_public_variant():
    params = {**PARAMS, "public": False, "eps_grid": [4.0], "mix_eps": None, "ph_alt_bins": None}
    ds = cen.replicate(0, stream(13, 0), params)
    assert "Censor_w-pub" not in ds.synth.values and "hist_fit_ok" not in ds and "mix_eps" not in ds


@pytest.mark.slow
def test_release_replicate_holds_the_bound():
    import warnings

    from dpsynth.fitting import ConvergenceWarning, SamplerConfig, compiled_model
    from dpsynth import datasets
    from dpsynth.models import BetaFamily

    cfg = SamplerConfig(draws=150, tune=150, chains=2)
    x_hist = datasets.beta_data(300, stream(5, "hist"))
    cm = compiled_model(BetaFamily(), x_hist)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # short chains; the test checks the plumbing
        hist = mechanisms.unweighted(cm, x_hist, sampler=cfg, seed=stream(5, "hist-fit"))
    rule = mechanisms.public_lipschitz_weights(cm, hist.fit, c=0.7, max_draws=50)
    rp = cen.release_params(rule)
    json.dumps(rp)  # part of the study's cache key
    assert len(rp["hist_draws"][next(iter(rp["hist_draws"]))]) == 50 and rp["c"] == 0.7
    ds = cen.release_replicate(0, stream(5, 0), dict(n=300, eps=3.0, draws=150, tune=150, chains=2, **rp))
    assert set(ds.scaling.values) == {"none", "downscale"}
    assert set(ds.synth.values) == {"Censor_w", "Censor_w-pub"}
    assert np.all(ds["delta"].values <= 1.5 + CENSOR_TOL)
    assert np.allclose(ds["eps_remove"].values, 3.0) and np.allclose(ds["eps_replace"].values, 6.0)
    assert "divergences" in ds and "divergences_unweighted" in ds


@pytest.mark.slow
def test_downscaling_eps_off_the_grid():
    """With the downscaling eps not among eps_grid, the comparison fits its own 'none' rows."""
    params = {**PARAMS, "eps_grid": [5.0], "downscale_eps": 4.0, "public": False, "mix_eps": 5.0}
    ds = cen.replicate(0, stream(12, 0), params)
    assert list(ds.eps.values) == [5.0]
    assert float(ds["ds_delta"].sel(ds_synth="Censor_w", scaling="none")) <= 2.0 + CENSOR_TOL
    both = xr.concat([ds], dim=pd.Index([0], name="replicate"))
    both.attrs["params"] = json.dumps(params)
    failed, total = cen.fit_failures(both)
    assert total == 2 + 3 + 3 + 2

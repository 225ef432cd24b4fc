"""The censoring chapter's replicate functions (small data, short chains) and the smoke run end to end."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from dpsynth import registry
from dpsynth.privacy import CENSOR_TOL
from dpsynth.seeds import stream
from dpsynth_book.experiments import censoring as cen
from dpsynth_book.experiments.censoring import replicate as rep
from dpsynth_book.studies import select_fits

SMALL = cen.Params.preset("smoke", draws=150, tune=150)


def test_names_are_registered_and_truth():
    for name in (*rep.SYNTHS, *rep.MIX_SYNTHS, *rep.DOWNSCALE_SYNTHS, *(s for s, _ in rep.RELEASE_ROWS)):
        registry.label(name)
    assert registry.guarantee("Censor_w") == "aDP" and registry.guarantee("Censor_w-pub") == "DP"
    assert dict(rep.PH_SYNTHS) == {"PH": "ph", "PH-paper": "ph_paper"}
    t = rep.true_stats()
    assert t["mean"] == pytest.approx(0.5 / 3.5) and 0 < t["q15"] < t["median"] < t["q90"] < 1


def test_milder_weights_are_milder():
    f = np.array([0.5, 1.0, 2.0, 4.0, np.inf])
    lw = rep.lipschitz_weights(f)
    np.testing.assert_allclose(rep.milder_weights(f), lw)
    for g, p in rep.MILDER_LW.values():
        w = rep.milder_weights(f, g, p)
        assert np.all(w >= lw) and np.all((w >= 0) & (w <= 1)) and w[-1] == 0 and w[0] == 1
        assert np.any(w[1:4] > lw[1:4])
    np.testing.assert_allclose(rep.milder_weights(f, 0.0, 2.0)[:4], 1 - ((f[:4] - 0.5) / 3.5) ** 2)
    np.testing.assert_allclose(rep.milder_weights(f, 0.25)[:4], np.clip(lw[:4] + 0.25, 0, 1))
    with pytest.raises(ValueError):
        rep.milder_weights(f, 0.0, 0.0)


@pytest.mark.slow
def test_replicate_structure_and_guarantee():
    out = rep.replicate(0, stream(11, 0), SMALL.study_dict())
    ds, down = rep.split_study(out)
    assert set(ds["synthesizer"].values) == {"Data", *rep.SYNTHS}
    # eps-independent fits are stored once (eps NaN), the others once per eps
    assert select_fits(ds, "Weighted").sizes["fit"] == 1 and np.isnan(select_fits(ds, "Weighted")["eps"].values[0])
    assert select_fits(ds, "Censor_uw").sizes["fit"] == 2
    for name in ("Censor_uw", "Censor_w", "Censor_w-pub"):
        for eps in (3.0, 4.0):
            v = select_fits(ds, name, eps).isel(fit=0)
            assert float(v["delta"]) <= eps / 2 + CENSOR_TOL and float(v["n_censored"]) >= 0
            assert float(v["eps_remove"]) == pytest.approx(eps) and float(v["eps_replace"]) == pytest.approx(2 * eps)
            assert bool(v["mcmc"]) and v["converged"].dtype == bool and int(v["divergences"]) >= 0
    for eps in (3.0, 4.0):
        ph, paper = select_fits(ds, "PH", eps).isel(fit=0), select_fits(ds, "PH-paper", eps).isel(fit=0)
        assert float(ph["eps_remove"]) == pytest.approx(eps) and float(paper["eps_remove"]) == pytest.approx(eps / 2)
        assert not bool(ph["mcmc"]) and np.isfinite(float(ph["ph_alt_avg_ecdf"]))
    # record-wise mixing at mix_eps only: eps composed over the distinct draws used
    for name in rep.MIX_SYNTHS:
        v = select_fits(ds, name, 4.0).isel(fit=0)
        k = float(v["mix_n_draws"])
        assert 1 < k <= SMALL.n and float(v["mix_eps"]) == pytest.approx(k * float(v["eps_remove"]))
    assert np.isnan(float(select_fits(ds, "Censor_uw", 3.0).isel(fit=0)["mix_eps"]))
    # Weighted-e's refit: records above eps/2 after it, those the truncation kept, the shift of phi
    for eps in (3.0, 4.0):
        v = select_fits(ds, "Weighted-e", eps).isel(fit=0)
        above, risen = float(v["n_above_target"]), float(v["n_risen"])
        assert 0 <= risen <= above and (above > 0) == (float(v["delta"]) > eps / 2 + CENSOR_TOL)
        assert np.isfinite(float(v["refit_shift_sd"]))
        assert np.isnan(float(select_fits(ds, "Censor_uw", eps).isel(fit=0)["n_above_target"]))
    # downscaling: own fits flagged; the "none" rows repeat fits of the main study at eps = 4
    assert set(down["scaling"].values) == {"none", "downscale"}
    assert float(down["delta"].sel(synthesizer="Censor_w", scaling="downscale")) <= 2.0 + CENSOR_TOL
    assert not bool(down["own_fit"].sel(synthesizer="Censor_w", scaling="none"))
    assert float(down["delta"].sel(synthesizer="Censor_w", scaling="none")) == float(
        select_fits(ds, "Censor_w", 4.0).isel(fit=0)["delta"])
    assert float(out["delta_unweighted"]) > float(out["delta_weighted"]) and "hist_converged" in out
    # Censor_w with milder weights: one count per variant and eps, never below the LW Censor_w's by design
    mild = ds["milder_n_censored"]
    assert mild.dims == ("lw_variant", "lw_eps") and list(mild["lw_variant"].values) == list(rep.MILDER_LW)
    assert np.all(mild.values >= 0) and ds["milder_converged"].dtype == bool
    again = rep.replicate(0, stream(11, 0), SMALL.study_dict())
    np.testing.assert_allclose(again["delta"].values, out["delta"].values)


@pytest.mark.slow
def test_replicate_off_grid_downscaling_and_no_public():
    p = dataclasses.replace(cen.Params.preset("smoke", eps_grid=(5.0,), mix_eps=5.0, public=False), ph_alt_bins=None)
    out = rep.replicate(0, stream(12, 0), p.study_dict())
    ds, down = rep.split_study(out)
    assert "Censor_w-pub" not in ds["synthesizer"].values and "hist_converged" not in ds
    assert bool(down["own_fit"].sel(synthesizer="Censor_w", scaling="none"))
    assert np.all(np.isnan(ds["ph_alt_avg_ecdf"].values))


@pytest.mark.slow
def test_side_studies_hold_the_bound():
    d = SMALL.study_dict()
    f1 = rep.figure1_replicate(0, stream(5, 0), d)
    assert float(f1["delta"].sel(synthesizer="Censor_uw")) <= SMALL.fig1_eps / 2 + CENSOR_TOL
    assert f1["phi"].sizes["draw"] == SMALL.draws * SMALL.chains
    cal = rep.calibration_replicate(0, stream(5, 1), d)
    assert 0 < float(cal["c"]) <= 1 and cal.sizes["step"] >= 1
    rp = rep.release_params(cal, SMALL)
    json.dumps(rp)  # part of the release study's cache key
    assert rp["c"] == float(cal["c"]) and len(next(iter(rp["hist_draws"].values()))) == cal.sizes["rule_draw"]
    rel = rep.release_replicate(0, stream(5, 2), rp)
    assert set(rel["scaling"].values) == {"none", "downscale"}
    assert set(rel["synthesizer"].values) == {"Censor_w", "Censor_w-pub"}
    assert np.all(rel["delta"].values <= SMALL.release_eps / 2 + CENSOR_TOL)
    assert np.allclose(rel["eps_remove"].values, 3.0) and np.allclose(rel["eps_replace"].values, 6.0)
    assert "n_above_target" not in rel


@pytest.mark.slow
def test_smoke_run_end_to_end(tmp_path):
    res = cen.run(cen.Params.smoke(), cache_dir=tmp_path, progress=False)
    v = {x.key: x for x in cen.verdicts(res)}
    for key in ("censored_within_bound", "mixing_multiplies_eps", "counts_rise_as_eps_falls",
                "censoring_flattens_posterior", "ref_within_bound"):
        assert v[key].holds is True, key
    assert v["censor_uw_counts_match_paper"].holds is None  # n = 300, not the paper's 2000
    assert "convergence_warnings" in res.calibration and res.release.sizes["replicate"] == 1
    assert res.reference.sizes["replicate"] == 1 and list(res.reference["eps"].values) == [3.0]
    assert sorted(p.name.split("-")[0] for p in tmp_path.glob("censoring*.nc")) == ["censoring"] * 5

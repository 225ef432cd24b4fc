"""The censoring chapter's Censor_ref study (``censoring-reference``): variants and one replicate at smoke scale."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dpsynth.mechanisms.censored_reference import default_alpha
from dpsynth.privacy import CENSOR_TOL
from dpsynth.seeds import stream
from dpsynth_book.experiments import censoring as cen
from dpsynth_book.experiments.censoring import reference as ref


def test_variants_and_their_settings():
    names = ref.variants((1.0, 0.25), (4.0,))
    assert names == ["Censor_uw", "Censor_w-pub", "Censor_ref", "Censor_ref, alpha = 1", "Censor_ref, alpha = 0.25",
                     ref.DP_MEDIAN, ref.HISTORICAL, f"{ref.DP_MEDIAN}, widen 4"]
    s = {n: ref.variant_settings(n) for n in names}
    assert s["Censor_uw"] == {"synthesizer": "Censor_uw", "reference": None, "alpha": None, "widen": None}
    # the default: each record's own reference (not widened), alpha by the default rule
    assert s["Censor_ref"] == {"synthesizer": "Censor_ref", "reference": "record", "alpha": None, "widen": None}
    assert s["Censor_ref, alpha = 0.25"] == {"synthesizer": "Censor_ref", "reference": "record", "alpha": 0.25,
                                             "widen": None}
    # the earlier design, a common theta_0 from DP medians, widened 2 times; the historical theta_0 likewise
    assert s[ref.DP_MEDIAN] == {"synthesizer": "Censor_ref", "reference": "dp_median", "alpha": None, "widen": 2.0}
    assert s[ref.HISTORICAL] == {"synthesizer": "Censor_ref", "reference": "historical", "alpha": None, "widen": 2.0}
    assert s[f"{ref.DP_MEDIAN}, widen 4"]["reference"] == "dp_median" and s[f"{ref.DP_MEDIAN}, widen 4"]["widen"] == 4
    assert [n for n in names if ref.charges_reference(n)] == [ref.DP_MEDIAN, f"{ref.DP_MEDIAN}, widen 4"]
    assert ref.WIDEN == 2.0
    for bad in ("Censor_ref, something else", "Censor_ref, widen 4"):  # a widening applies to a common theta_0 only
        with pytest.raises(KeyError):
            ref.variant_settings(bad)


def test_variants_run_censor_ref_with_its_current_parameters():
    from dpsynth.mechanisms.censored_reference import MECHANISM

    x_hist = np.linspace(0.01, 0.9, 5)
    kw = {n: ref._censor_ref_kwargs(ref.variant_settings(n), 0.1, x_hist) for n in ref.variants((0.5,), (4.0,))[2:]}
    assert kw["Censor_ref"] == {"alpha": None}  # every default: reference, tolerance, alpha rule
    assert kw["Censor_ref, alpha = 0.5"] == {"alpha": 0.5}
    assert kw[ref.DP_MEDIAN] == {"alpha": None, "reference": "dp_median", "widen": 2.0, "reference_eps": 0.1}
    assert kw[ref.HISTORICAL]["historical"][0] is x_hist and kw[ref.HISTORICAL]["widen"] == 2.0
    assert kw[f"{ref.DP_MEDIAN}, widen 4"]["widen"] == 4.0
    for k in kw.values():  # every name is a parameter of the mechanism
        assert set(k) <= set(MECHANISM.params)
    assert MECHANISM.params["reference"].default is None  # None: each record's own reference


@pytest.mark.slow
def test_reference_replicate_at_smoke_scale():
    p = dataclasses.replace(cen.Params.smoke(), ref_alphas=(1.0, 0.25), ref_widens=(4.0,), ref_eps_grid=(4.0, 1.0))
    out = ref.reference_replicate(0, stream(21, 0), p.reference_dict())
    names = ref.variants((1.0, 0.25), (4.0,))
    assert list(out["variant"].values) == names and sorted(out["eps"].values) == [1.0, 4.0]
    for var in ("delta", "eps_remove", "eps_replace", "reference_eps_remove", "alpha", "n_censored", "share_censored",
                "phi_mean", "phi_sd", "lam_mean", "converged", "rhat", "ess", "divergences", "max_ecdf", "mean"):
        assert out[var].dims == ("eps", "variant"), var
    assert np.all(out["delta"].values <= out["eps"].values[:, None] / 2 + CENSOR_TOL)
    np.testing.assert_allclose(out["share_censored"].values, out["n_censored"].values / p.n)
    for e in (1.0, 4.0):
        c = out.sel(eps=e)
        # the DP median reference is charged (removed and replaced); the default and the historical one are free
        for v in (ref.DP_MEDIAN, f"{ref.DP_MEDIAN}, widen 4"):
            cost = float(c["reference_eps_remove"].sel(variant=v))
            assert 0 < cost <= 2 * p.ref_eps and float(c["eps_remove"].sel(variant=v)) == pytest.approx(e + cost)
            assert float(c["eps_replace"].sel(variant=v)) > 2 * e
        for v in ("Censor_uw", "Censor_w-pub", "Censor_ref", "Censor_ref, alpha = 1", ref.HISTORICAL):
            assert float(c["eps_remove"].sel(variant=v)) == pytest.approx(e)
            assert float(c["eps_replace"].sel(variant=v)) == pytest.approx(2 * e)
            assert float(c["reference_eps_remove"].sel(variant=v)) == 0.0
        assert float(c["alpha"].sel(variant="Censor_ref")) == pytest.approx(default_alpha(e))
        assert float(c["alpha"].sel(variant=ref.DP_MEDIAN)) == pytest.approx(default_alpha(e))
        assert float(c["alpha"].sel(variant="Censor_ref, alpha = 0.25")) == 0.25
        assert np.isnan(float(c["alpha"].sel(variant="Censor_uw")))
        assert np.isnan(float(c["widen"].sel(variant="Censor_ref")))
        assert float(c["widen"].sel(variant=f"{ref.DP_MEDIAN}, widen 4")) == 4.0
    assert 0 < float(out["phi_mean"].sel(eps=4.0, variant="Censor_ref")) < 1
    # cells are addressed by (variant, eps), not by position: eps = 1 alone repeats the seeded fits
    alone = ref.reference_replicate(0, stream(21, 0), dataclasses.replace(p, ref_eps_grid=(1.0,)).reference_dict())
    assert int(alone["data_fingerprint"]) == int(out["data_fingerprint"])
    for v in ("Censor_uw", "Censor_w-pub", "Censor_ref", ref.HISTORICAL):  # no unseeded DP release in these
        for k in ("delta", "n_censored", "phi_mean", "max_ecdf"):
            assert float(alone[k].sel(eps=1.0, variant=v)) == float(out[k].sel(eps=1.0, variant=v)), (v, k)


def test_results_list_their_studies():
    from censoring_fake import fake_results

    res = fake_results(1)
    assert list(res.studies()) == ["censoring", "censoring-figure1", "censoring-calibration", "censoring-release",
                                   "censoring-reference"]
    assert res.studies()["censoring-reference"] is res.reference
    res.reference = None
    assert "censoring-reference" not in res.studies()

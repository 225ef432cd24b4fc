"""The censoring chapter's replicate functions (small data, short chains)."""

from __future__ import annotations

import numpy as np
import pytest

from dpsynth.experiments import censoring as cen
from dpsynth.privacy import CENSOR_TOL
from dpsynth.seeds import stream

PARAMS = dict(n=300, eps_grid=[4.0, 3.0], draws=150, tune=150, chains=2, downscale=0.8, downscale_eps=4.0,
              ph_bins="sqrt", ph_alt_bins="log", ph_upper=1.0)


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


@pytest.mark.slow
def test_replicate_structure_and_guarantee():
    ds = cen.replicate(0, stream(11, 0), PARAMS)
    assert set(ds.synth.values) == {"Data", *cen.SYNTHS}
    assert sorted(ds.eps.values) == [3.0, 4.0]
    for name in ("Censor_uw", "Censor_w"):
        for eps in (3.0, 4.0):
            assert float(ds["delta"].sel(synth=name, eps=eps)) <= eps / 2 + CENSOR_TOL
            assert float(ds["n_censored"].sel(synth=name, eps=eps)) >= 0
    assert float(ds["ds_delta"].sel(ds_synth="Censor_w", scaling="downscale")) <= 2.0 + CENSOR_TOL
    # Unweighted and Weighted do not depend on eps; the "none" downscaling rows reuse the eps=4 fits.
    np.testing.assert_array_equal(ds["delta"].sel(synth="Weighted", eps=3.0), ds["delta"].sel(synth="Weighted", eps=4.0))
    assert float(ds["ds_delta"].sel(ds_synth="Censor_w", scaling="none")) == float(ds["delta"].sel(synth="Censor_w", eps=4.0))
    assert float(ds["max_ecdf"].sel(synth="Data", eps=4.0)) == 0.0
    assert "ph_alt_avg_ecdf" in ds and float(ds["delta_unweighted"]) > float(ds["delta_weighted"])
    # Same stream, same result (replicates are addressed, not drawn in sequence).
    again = cen.replicate(0, stream(11, 0), PARAMS)
    np.testing.assert_allclose(again["delta"].values, ds["delta"].values)

    import xarray as xr
    import pandas as pd

    both = xr.concat([ds, again], dim=pd.Index([0, 1], name="replicate"))
    table = cen.count_table(both)
    assert ("ours" in table.index.get_level_values("source")) and ("paper" in table.index.get_level_values("source"))
    assert cen.count_table(both, downscale=True).shape[0] == 8
    failed, total = cen.fit_failures(both)
    assert total == 2 * (2 + 3 * 2 + 3) and 0 <= failed <= total


@pytest.mark.slow
def test_release_replicate_holds_the_bound():
    ds = cen.release_replicate(0, stream(5, 0), dict(n=300, eps=3.0, c=0.7, draws=150, tune=150, chains=2))
    assert set(ds.scaling.values) == {"none", "downscale"}
    assert np.all(ds["delta"].values <= 1.5 + CENSOR_TOL)


@pytest.mark.slow
def test_downscaling_eps_off_the_grid():
    """With the downscaling eps not among eps_grid, the comparison fits its own 'none' rows."""
    import json

    import pandas as pd
    import xarray as xr

    params = {**PARAMS, "eps_grid": [5.0], "downscale_eps": 4.0}
    ds = cen.replicate(0, stream(12, 0), params)
    assert list(ds.eps.values) == [5.0]
    assert float(ds["ds_delta"].sel(ds_synth="Censor_w", scaling="none")) <= 2.0 + CENSOR_TOL
    both = xr.concat([ds], dim=pd.Index([0], name="replicate"))
    both.attrs["params"] = json.dumps(params)
    failed, total = cen.fit_failures(both)
    assert total == 2 + 3 + 5

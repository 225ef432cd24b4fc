"""Result files: the mode, where files go, provenance, and the loader that checks the settings."""

from __future__ import annotations

import json

import pytest
import xarray as xr

from dpsynth import __version__, result_files
from dpsynth.validation import DataError


def test_results_mode_and_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("DPSYNTH_RESULTS", raising=False)
    assert result_files.results_mode() == "off"
    monkeypatch.setenv("DPSYNTH_RESULTS", "use")
    assert result_files.results_mode() == "use"
    assert result_files.results_mode("write") == "write"  # the argument wins
    with pytest.raises(DataError, match="DPSYNTH_RESULTS"):
        result_files.results_mode("sometimes")
    monkeypatch.setenv("DPSYNTH_RESULTS_DIR", str(tmp_path))
    assert result_files.shipped_path("a") == tmp_path / "a.nc"
    assert result_files.shipped_path("a", tmp_path / "other") == tmp_path / "other" / "a.nc"


def test_write_then_load_checks_params_replicates_and_seed(tmp_path):
    params = {"n": 10, "draws": 5, "chains": 2}
    ds = xr.Dataset({"delta": ("replicate", [1.0, 2.0])}, coords={"replicate": [0, 1]}, attrs={"from_cache": 1})
    attrs = result_files.provenance(params, replicates=2, seed=7, elapsed_seconds=3.0, workers=1)
    assert attrs["dpsynth_version"] == __version__
    assert json.loads(attrs["sampler"]) == {"draws": 5, "chains": 2}
    with_mm = result_files.provenance({**params, "mass_matrix": "low_rank"}, replicates=2, seed=7, elapsed_seconds=3.0,
                                      workers=1)
    assert json.loads(with_mm["sampler"]) == {"draws": 5, "chains": 2, "mass_matrix": "low_rank"}
    assert result_files.machine_description() == attrs["machine"]
    path = result_files.write(ds, tmp_path / "s.nc", attrs)
    got = result_files.load("s", params, replicates=2, seed=7, path=path)
    xr.testing.assert_equal(got["delta"], ds["delta"])
    assert got.attrs["from_shipped"] == 1 and "from_cache" not in got.attrs
    with pytest.raises(result_files.ShippedResultsError, match="n: shipped 10, asked 11"):
        result_files.load("s", {**params, "n": 11}, replicates=2, seed=7, path=path)
    with pytest.raises(result_files.ShippedResultsError, match="seed: shipped 7, asked 8"):
        result_files.load("s", params, replicates=2, seed=8, path=path)
    (tmp_path / "bad.nc").write_bytes(b"not netcdf")
    with pytest.raises(result_files.ShippedResultsError, match="cannot be read"):
        result_files.load("bad", params, replicates=2, seed=7, path=tmp_path / "bad.nc")
    with pytest.raises(result_files.ShippedResultsError, match="no shipped result gone.nc"):
        result_files.load("gone", params, replicates=2, seed=7, path=tmp_path / "gone.nc")

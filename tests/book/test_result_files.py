"""Result files: the mode, where files go, provenance, and the loader that checks the settings."""

from __future__ import annotations

import json

import pytest
import xarray as xr

from dpsynth import __version__
from dpsynth.validation import DataError
from dpsynth_book import result_files


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


def test_a_study_extended_by_later_replicates_states_both_parts(tmp_path):
    from dpsynth_book import book

    params = {"n": 10, "draws": 5, "chains": 2}
    first = xr.Dataset({"delta": (("replicate", "eps"), [[1.0, 2.0], [3.0, 4.0]])},
                       coords={"replicate": [0, 1], "eps": [1.0, 5.0]})
    first.attrs.update(result_files.provenance(params, replicates=2, seed=7, elapsed_seconds=600.0, workers=2),
                       git_commit="1e85318abb9382e653efa68397d6ee395d220bd0", created="2026-11-26T19:05:50+00:00")
    later = [xr.Dataset({"delta": ("eps", [5.0, 6.0])}, coords={"eps": [1.0, 5.0]}) for _ in range(3)]
    ds, attrs = result_files.merge_parts(first, later, params=params, seed=7, later_elapsed=900.0, workers=2,
                                         note="Between them only the retry rule changed.")
    assert list(ds["replicate"].values) == [0, 1, 2, 3, 4] and float(ds["delta"].sel(replicate=4, eps=5.0)) == 6.0
    assert attrs["replicates"] == 5 and attrs["elapsed_seconds"] == 1500.0
    parts = json.loads(attrs["parts"])
    assert [p["runs"] for p in parts] == ["1–2", "3–5"] and parts[0]["git_commit"].startswith("1e85318")
    path = result_files.write(ds, tmp_path / "s.nc", attrs)
    got = result_files.load("s", params, replicates=5, seed=7, path=path)
    said = book.provenance_markdown({"s": got})
    assert "computed in 2 parts: runs 1–2 at commit `1e85318abb` on 2026-11-26 (10.0 min" in said
    assert "runs 3–5" in said and said.endswith("Between them only the retry rule changed.")


def test_a_study_with_cells_recomputed_later_states_both_parts(tmp_path):
    from dpsynth_book import book

    params = {"n": 10}
    first = xr.Dataset({"value": (("replicate", "cell"), [[1.0, 2.0], [3.0, 4.0]]),
                        "why": (("replicate", "cell"), [["", "refused: bad setting"], ["", "refused: bad setting"]])},
                       coords={"replicate": [0, 1], "cell": ["a", "b"]})
    first.attrs.update(result_files.provenance(params, replicates=2, seed=7, elapsed_seconds=600.0, workers=2))
    new = [({"replicate": r, "cell": "b"}, xr.Dataset({"value": 9.0 + r, "why": ""})) for r in (0, 1)]
    ds, attrs = result_files.replace_cells(first, new, params=params, seed=7, later_elapsed=30.0, workers=1,
                                           what="runs 1–2, cell b recomputed", note="Cell b was misconfigured.")
    assert ds["value"].values.tolist() == [[1.0, 9.0], [3.0, 10.0]] and set(ds["why"].values.ravel()) == {""}
    assert first["value"].values.tolist() == [[1.0, 2.0], [3.0, 4.0]]  # the original is left as it was
    assert attrs["replicates"] == 2 and attrs["elapsed_seconds"] == 630.0
    path = result_files.write(ds, tmp_path / "s.nc", attrs)
    said = book.provenance_markdown({"s": result_files.load("s", params, replicates=2, seed=7, path=path)})
    assert "computed in 2 parts: runs 1–2, every cell at commit" in said
    assert "runs 1–2, cell b recomputed at commit" in said and said.endswith("Cell b was misconfigured.")
    with pytest.raises(KeyError, match="variable 'other'"):
        result_files.replace_cells(first, [({"replicate": 0, "cell": "a"}, xr.Dataset({"other": 1.0}))],
                                   params=params, seed=7, later_elapsed=1.0, workers=1, what="x", note="y")

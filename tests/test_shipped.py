"""Shipped results (``results/*.nc``): present, small, with provenance, and not stale.

The staleness test recomputes the first replicate of every shipped study with the current code
and the file's own parameters and seed: the simulated data must match exactly, the privacy and
utility figures within the Monte Carlo tolerance of :data:`dpsynth.shipped.SHIPPED_STUDIES`. A
failure names the file to recompute (``make results``).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr

from dpsynth import shipped

PROVENANCE = ("dpsynth_version", "git_commit", "params", "replicates", "seed", "sampler", "created",
              "elapsed_seconds", "workers", "machine", "load_average_at_end")


def test_every_study_is_shipped_with_its_provenance():
    assert shipped.shipped_names() == list(shipped.SHIPPED_STUDIES), "run `make results` and commit results/"
    for name in shipped.shipped_names():
        ds = xr.open_dataset(shipped.shipped_path(name), engine="h5netcdf")
        missing = [k for k in PROVENANCE if k not in ds.attrs]
        assert not missing, f"{name}.nc lacks {missing}"
        assert isinstance(json.loads(ds.attrs["params"]), dict)
        assert ds.sizes["replicate"] == int(ds.attrs["replicates"])
        assert "uncommitted" not in ds.attrs["git_commit"], f"{name}.nc was made from uncommitted code"
        ds.close()


def test_shipped_results_stay_under_20_mb():
    total = sum(shipped.shipped_path(n).stat().st_size for n in shipped.shipped_names())
    assert 0 < total < 20e6


@pytest.fixture(scope="module")
def recomputed(tmp_path_factory):
    """name -> (shipped, first replicate recomputed); each computed once, on first use."""
    cache = tmp_path_factory.mktemp("staleness-cache")
    done: dict = {}

    def get(name):
        if name not in done:
            done[name] = shipped.recompute(name, replicates=1, cache_dir=cache)
        return done[name]

    return get


@pytest.mark.slow
@pytest.mark.parametrize("name", list(shipped.SHIPPED_STUDIES))
def test_shipped_file_is_current(name, recomputed):
    ship, again = recomputed(name)
    problems = shipped.staleness(name, ship, again)
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_a_privacy_figure_off_by_30_percent_is_reported(recomputed):
    ship, again = recomputed("censoring")
    edited = ship.copy(deep=True)
    edited["delta"] = edited["delta"] * 1.3
    problems = shipped.staleness("censoring", edited, again)
    assert len(problems) == 1 and "delta:" in problems[0] and "results/censoring.nc is stale" in problems[0]


@pytest.mark.slow
def test_an_altered_shipped_file_is_reported_stale(recomputed, tmp_path):
    ship, again = recomputed("censoring-figure1")
    # the simulated data: one record's data set replaced
    fp = ship.copy(deep=True)
    fp["data_fingerprint"] = fp["data_fingerprint"] + 1
    problems = shipped.staleness("censoring-figure1", fp, again)
    assert problems and all(p.startswith("results/censoring-figure1.nc is stale") for p in problems)
    assert any("data_fingerprint: the simulated values differ" in p for p in problems)
    # a privacy figure edited in the file on disk; the check reads the edited file and recomputes
    edited = ship.copy(deep=True)
    edited["delta"] = edited["delta"] * 1.5
    path = tmp_path / "censoring-figure1.nc"
    shipped.write(edited, path, ship.attrs)
    problems = shipped.check_current("censoring-figure1", cache_dir=tmp_path / "cache", path=path)
    assert [p for p in problems if "delta:" in p and "Monte Carlo tolerance" in p], problems
    assert all(p.startswith(f"{path} is stale") for p in problems)


def test_compare_replicates_checks_every_cell_within_its_tolerance():
    rng = np.random.default_rng(1)
    base = xr.Dataset({"delta": (("replicate", "eps"), 2.0 + 0.1 * rng.standard_normal((20, 3))),
                       "data_fingerprint": ("replicate", np.arange(20))},
                      coords={"replicate": np.arange(20), "eps": [1.0, 2.0, 4.0]})
    again = base.isel(replicate=slice(0, 2)).copy(deep=True)
    assert shipped.compare_replicates(base, again, exact=["data_fingerprint"], relative={"delta": 0.05}) == []
    again["delta"][:, 2] += 1.0  # one cell moved by 10 sd
    problems = shipped.compare_replicates(base, again, exact=["data_fingerprint"], relative={"delta": 0.05})
    assert len(problems) == 1 and "1 of 3 cells" in problems[0] and "eps=" in problems[0]


def _write_fake(folder, name, elapsed, **extra):
    ds = xr.Dataset({"delta": ("replicate", [1.0, 2.0])}, coords={"replicate": [0, 1]})
    attrs = shipped.provenance({"scale": "paper", "draws": 10}, replicates=2, seed=3, elapsed_seconds=elapsed,
                               workers=2)
    shipped.write(ds, folder / f"{name}.nc", {**attrs, **extra})


def test_chapter_times_sums_each_chapters_studies(tmp_path):
    with pytest.raises(shipped.ShippedResultsError, match="make results"):
        shipped.chapter_times(tmp_path)
    _write_fake(tmp_path, "censoring", 120.0)
    _write_fake(tmp_path, "censoring-release", 60.0)
    _write_fake(tmp_path, "range_restriction", 30.0)
    t = shipped.chapter_times(tmp_path)
    assert list(t.index) == ["censoring", "range_restriction", "all chapters"]
    assert t.loc["censoring", "wall time (min)"] == pytest.approx(3.0)
    assert t.loc["censoring", "replicates"] == "2 + 2"
    assert t.loc["all chapters", "wall time (min)"] == pytest.approx(3.5)
    assert "cores" in t.loc["range_restriction", "machine"]

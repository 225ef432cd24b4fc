"""Monte Carlo study driver: seeding, caching, atomic writes, Dask and local processes."""

from __future__ import annotations

import json

import numpy as np
import pytest
import study_replicates
import xarray as xr

from dpsynth.fitting import SamplerConfig
from dpsynth_book import studies

PARAMS = {"loc": 1.5}
MCMC_PARAMS = {"n": 60, "mu": 50.0, "draws": 150, "tune": 150, "eps": 4.0}


def _files(d):
    return sorted(p.name for p in d.iterdir())


# --------------------------------------------------------------------------------------------
# keys and paths
# --------------------------------------------------------------------------------------------


def test_study_key_depends_on_everything_that_sets_results():
    k = studies.study_key("s", {"a": 1}, 10, 3)
    assert k == studies.study_key("s", {"a": 1}, 10, 3)
    assert len(k) == 16
    others = {
        studies.study_key("t", {"a": 1}, 10, 3),
        studies.study_key("s", {"a": 2}, 10, 3),
        studies.study_key("s", {"a": 1}, 11, 3),
        studies.study_key("s", {"a": 1}, 10, 4),
    }
    assert k not in others and len(others) == 4


def test_study_key_ignores_dict_order_and_accepts_numpy_and_dataclasses():
    a = studies.study_key("s", {"x": np.float64(1.5), "cfg": SamplerConfig(draws=5)}, 2, 1)
    b = studies.study_key("s", {"cfg": SamplerConfig(draws=5), "x": 1.5}, 2, 1)
    assert a == b
    assert a != studies.study_key("s", {"x": 1.5, "cfg": SamplerConfig(draws=6)}, 2, 1)
    assert studies.study_key("s", {"v": np.arange(3)}, 1, 1) == studies.study_key("s", {"v": [0, 1, 2]}, 1, 1)


def test_code_fingerprint_enters_the_key(tmp_path):
    import hashlib
    from pathlib import Path

    import dpsynth

    fp = studies.code_fingerprint(study_replicates.counting_replicate)
    packages = (Path(dpsynth.__file__).resolve().parent, Path(studies.__file__).resolve().parent)
    pkg = sorted(f for package in packages for f in package.rglob("*.py"))
    h = hashlib.sha256()
    for f in pkg + [Path(study_replicates.__file__).resolve()]:
        h.update(f.read_bytes())
    assert fp == h.hexdigest()[:16]  # the library's and the book's modules and the replicate's own file
    assert studies.code_fingerprint(len) != fp  # built-in: no source file, package code only
    assert studies.study_key("s", {}, 1, 1, fp) != studies.study_key("s", {}, 1, 1, "")
    ds = _run(tmp_path)
    assert ds.attrs["key"] == studies.study_path("study", PARAMS, 3, 1, tmp_path, fp).stem


def test_study_path(tmp_path):
    p = studies.study_path("censoring", {"a": 1}, 3, 7, tmp_path)
    assert p.parent == tmp_path
    assert p.name == f"censoring-{studies.study_key('censoring', {'a': 1}, 3, 7)}.nc"


def test_rows_to_dataset():
    ds = studies.rows_to_dataset(
        [{"synth": "LW", "eps": 1.0, "delta": 0.4}, {"synth": "LW", "eps": 2.0, "delta": 0.9},
         {"synth": "Censor_w", "eps": 1.0, "delta": 0.5}],
        ["synth", "eps"],
    )
    assert set(ds.dims) == {"synth", "eps"}
    assert float(ds.delta.sel(synth="LW", eps=2.0)) == 0.9
    assert np.isnan(float(ds.delta.sel(synth="Censor_w", eps=2.0)))


# --------------------------------------------------------------------------------------------
# seeding, cache and atomic writes (cheap replicate function)
# --------------------------------------------------------------------------------------------


def _run(tmp_path, fn=study_replicates.counting_replicate, seed=1, params=PARAMS, replicates=3, **kw):
    return studies.run_study("study", fn, params, replicates=replicates, seed=seed, cache_dir=tmp_path,
                             progress=False, **kw)


def test_result_layout_and_attrs(tmp_path):
    ds = _run(tmp_path)
    assert ds.value.dims == ("replicate", "stat")
    assert ds.replicate.values.tolist() == [0, 1, 2]
    assert ds.attrs["seed"] == 1 and ds.attrs["replicates"] == 3 and ds.attrs["study"] == "study"
    assert json.loads(ds.attrs["params"]) == PARAMS
    assert ds.attrs["elapsed_seconds"] >= 0
    assert _files(tmp_path) == [ds.attrs["key"] + ".nc"]


def test_replicate_r_gets_stream_r(tmp_path):
    from dpsynth.seeds import generator, stream

    ds = _run(tmp_path, seed=9)
    for r in range(3):
        expected = generator(stream(9, r)).normal(1.5, 1.0, size=3)
        np.testing.assert_array_equal(ds.value.sel(replicate=r).values, expected)


def test_same_seed_same_results_other_seed_differs(tmp_path):
    a = _run(tmp_path, seed=1, force=True)
    b = _run(tmp_path, seed=1, force=True)
    c = _run(tmp_path, seed=2, force=True)
    xr.testing.assert_equal(a, b)
    assert not np.allclose(a.value.values, c.value.values)


def test_cache_used_on_second_call(tmp_path):
    study_replicates.CALLS.clear()
    first = _run(tmp_path, params={"loc": 2.0})
    assert study_replicates.CALLS == [0, 1, 2]
    second = _run(tmp_path, params={"loc": 2.0})
    assert study_replicates.CALLS == [0, 1, 2]  # loaded, not recomputed
    assert first.attrs["from_cache"] == 0 and second.attrs["from_cache"] == 1
    for ds in (first, second):
        del ds.attrs["from_cache"]
    xr.testing.assert_identical(first, second)  # including elapsed_seconds of the computation
    # other parameters: a new computation and a second file
    _run(tmp_path, params={"loc": 3.0})
    assert study_replicates.CALLS == [0, 1, 2] * 2
    assert len(_files(tmp_path)) == 2
    # force recomputes
    _run(tmp_path, params={"loc": 2.0}, force=True)
    assert len(study_replicates.CALLS) == 9


def test_failing_replicate_leaves_nothing(tmp_path):
    with pytest.raises(RuntimeError, match="replicate 1 failed on purpose"):
        _run(tmp_path, fn=study_replicates.failing_replicate)
    assert _files(tmp_path) == []


def test_failed_write_leaves_no_file_and_no_temp(tmp_path):
    with pytest.raises(ValueError, match="cannot serialize"):
        _run(tmp_path, fn=study_replicates.unwritable_replicate, replicates=1)
    assert _files(tmp_path) == []


def test_write_interrupted_half_way_leaves_no_file_and_no_temp(tmp_path, monkeypatch):
    written = []

    def half_write(self, path, *args, **kwargs):
        with open(path, "wb") as fh:  # a partial file exists when the failure happens
            fh.write(b"\x89HDF partial")
        written.append(path)
        raise OSError("disk full")

    monkeypatch.setattr(xr.Dataset, "to_netcdf", half_write)
    with pytest.raises(OSError, match="disk full"):
        _run(tmp_path)
    assert len(written) == 1 and str(written[0]).startswith(str(tmp_path))
    assert _files(tmp_path) == []


def test_failed_write_keeps_an_existing_result(tmp_path):
    _run(tmp_path, seed=5)
    before = _files(tmp_path)
    path = tmp_path / before[0]
    content = path.read_bytes()

    # same key (same name, params, replicates, seed), but this time the computed result cannot
    # be written: the earlier file must survive intact, and no temporary file remain
    with pytest.raises(ValueError, match="cannot serialize"):
        studies.run_study("study", study_replicates.unwritable_replicate, PARAMS, replicates=3, seed=5,
                          cache_dir=tmp_path, progress=False, force=True)
    assert _files(tmp_path) == before
    assert path.read_bytes() == content


# --------------------------------------------------------------------------------------------
# unwritable cache directory, damaged cache file
# --------------------------------------------------------------------------------------------


def test_unwritable_cache_dir_fails_before_any_replicate(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("a regular file, not a directory")
    study_replicates.CALLS.clear()
    with pytest.raises(studies.CacheDirError, match=r"`cache_dir` .*afile/cache.* cannot be used"):
        _run(tmp_path / "afile" / "cache")
    assert study_replicates.CALLS == []  # failed before computing any replicate
    assert issubclass(studies.CacheDirError, ValueError)


def test_cache_dir_probe_leaves_no_file(tmp_path):
    d = tmp_path / "new" / "cache"
    ds = _run(d)
    assert _files(d) == [ds.attrs["key"] + ".nc"]


def test_damaged_cache_file_is_reported_and_recomputed(tmp_path):
    fn = study_replicates.counting_replicate
    path = studies.study_path("study", PARAMS, 3, 1, tmp_path, studies.code_fingerprint(fn))
    reference = _run(tmp_path / "reference")
    path.write_bytes(b"\x89HDF\r\n\x1a\n truncated garbage")
    study_replicates.CALLS.clear()
    with pytest.warns(studies.DamagedCacheWarning, match=r"could not be read") as rec:
        ds = _run(tmp_path)
    assert any(str(path) in str(w.message) for w in rec)
    assert study_replicates.CALLS == [0, 1, 2]  # recomputed
    assert ds.attrs["from_cache"] == 0
    np.testing.assert_array_equal(ds.value.values, reference.value.values)
    # the file was replaced by a readable one, and no temporary file is left
    again = xr.load_dataset(path, engine="h5netcdf")
    np.testing.assert_array_equal(again.value.values, reference.value.values)
    assert _files(tmp_path) == sorted([path.name, "reference"])
    assert _run(tmp_path).attrs["from_cache"] == 1


# --------------------------------------------------------------------------------------------
# real replicate function (fits a small model): seeds, Dask and local processes
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mcmc_reference(tmp_path_factory, poisson_cm):
    d = tmp_path_factory.mktemp("mcmc_ref")
    return studies.run_study("mcmc", study_replicates.mcmc_replicate, MCMC_PARAMS, replicates=2, seed=11,
                             cache_dir=d, progress=False, force=True)


def _values_equal(a, b):
    xr.testing.assert_equal(a, b)


@pytest.mark.slow
def test_mcmc_study_reproducible(tmp_path, mcmc_reference):
    ref = mcmc_reference
    assert set(ref.synth.values) == {"Unweighted", "Censor_uw"}
    assert float(ref.delta.sel(synth="Censor_uw").max()) <= MCMC_PARAMS["eps"]  # Poisson, one-signed: M = eps
    again = studies.run_study("mcmc", study_replicates.mcmc_replicate, MCMC_PARAMS, replicates=2, seed=11,
                              cache_dir=tmp_path, progress=False, force=True)
    _values_equal(ref, again)
    other = studies.run_study("mcmc", study_replicates.mcmc_replicate, MCMC_PARAMS, replicates=2, seed=12,
                              cache_dir=tmp_path, progress=False, force=True)
    assert not np.allclose(ref.beta_mean.values, other.beta_mean.values)
    # replicates differ from each other too (own streams)
    assert not np.allclose(ref.beta_mean.sel(replicate=0).values, ref.beta_mean.sel(replicate=1).values)


@pytest.mark.slow
def test_mcmc_study_on_dask_cluster_matches_local(tmp_path, mcmc_reference):
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, processes=False, threads_per_worker=1, host="127.0.0.1", protocol="tcp",
                      dashboard_address=":0") as cluster:
        ds = studies.run_study("mcmc", study_replicates.mcmc_replicate, MCMC_PARAMS, replicates=2, seed=11,
                               cache_dir=tmp_path, progress=False, force=True, scheduler=cluster.scheduler_address)
    _values_equal(mcmc_reference, ds)
    assert len(_files(tmp_path)) == 1


@pytest.mark.slow
def test_mcmc_study_on_local_processes_matches_in_process(tmp_path, mcmc_reference):
    ds = studies.run_study("mcmc", study_replicates.mcmc_replicate, MCMC_PARAMS, replicates=2, seed=11,
                           cache_dir=tmp_path, progress=False, force=True, workers=2)
    _values_equal(mcmc_reference, ds)


# ------------------------------------------------------------------------------------------
# result layout and convergence-warning counting
# ------------------------------------------------------------------------------------------


def test_fits_to_dataset_stores_eps_independent_fits_once():
    rows = [{"synthesizer": "Unweighted", "eps": None, "delta": 8.0},
            {"synthesizer": "Censor_uw", "eps": 4.0, "delta": 2.0},
            {"synthesizer": "Censor_uw", "eps": 3.0, "delta": 1.5}]
    ds = studies.fits_to_dataset(rows)
    assert ds.sizes["fit"] == 3 and list(ds["synthesizer"].values) == ["Unweighted", "Censor_uw", "Censor_uw"]
    at4 = studies.select_fits(ds, eps=4.0)
    assert sorted(at4["synthesizer"].values) == ["Censor_uw", "Unweighted"]
    assert float(studies.select_fits(ds, "Censor_uw", 3.0)["delta"].item()) == 1.5
    with pytest.raises(KeyError, match="unknown synthesizer"):
        studies.fits_to_dataset([{"synthesizer": "Mystery", "delta": 1.0}])
    with pytest.raises(ValueError, match="repeated"):
        studies.fits_to_dataset(rows + [rows[1]])


def warning_replicate(r, ss, params):
    """Replicate whose 'fit' raises two ConvergenceWarnings."""
    import warnings as w

    from dpsynth.fitting import ConvergenceWarning

    w.warn("fit 1 did not converge", ConvergenceWarning, stacklevel=1)
    w.warn("fit 2 did not converge", ConvergenceWarning, stacklevel=1)
    return study_replicates.counting_replicate(r, ss, params)


def test_study_driver_counts_convergence_warnings(tmp_path, recwarn):
    ds = studies.run_study("warn", warning_replicate, {"loc": 0.0}, replicates=2, seed=1, cache_dir=tmp_path,
                           progress=False)
    assert ds["convergence_warnings"].values.tolist() == [2, 2]
    assert not [w for w in recwarn if "did not converge" in str(w.message)]


# ------------------------------------------------------------------------------------------
# shipped results
# ------------------------------------------------------------------------------------------


def test_shipped_results_write_then_use(tmp_path, monkeypatch):
    from dpsynth_book import result_files

    monkeypatch.setenv("DPSYNTH_RESULTS_DIR", str(tmp_path / "results"))
    params = {"loc": 1.0, "draws": 10, "tune": 10, "chains": 2}
    study_replicates.CALLS.clear()
    ds = studies.run_study("shipme", study_replicates.counting_replicate, params, replicates=3, seed=4,
                           cache_dir=tmp_path / "cache", progress=False, results="write")
    f = tmp_path / "results" / "shipme.nc"
    assert f.exists()
    study_replicates.CALLS.clear()
    used = studies.run_study("shipme", study_replicates.counting_replicate, params, replicates=3, seed=4,
                             cache_dir=tmp_path / "other-cache", progress=False, results="use")
    assert study_replicates.CALLS == []  # nothing recomputed
    xr.testing.assert_allclose(used["value"], ds["value"])
    for key in ("dpsynth_version", "git_commit", "params", "sampler", "created", "elapsed_seconds", "machine"):
        assert key in used.attrs, key
    assert json.loads(used.attrs["sampler"]) == {"draws": 10, "tune": 10, "chains": 2}
    # other settings, a missing file: clear errors that say what to do
    with pytest.raises(result_files.ShippedResultsError, match="loc: shipped 1.0, asked 2.0.*make results"):
        studies.run_study("shipme", study_replicates.counting_replicate, {**params, "loc": 2.0}, replicates=3, seed=4,
                          cache_dir=tmp_path / "c", progress=False, results="use")
    with pytest.raises(result_files.ShippedResultsError, match="replicates: shipped 3, asked 2"):
        studies.run_study("shipme", study_replicates.counting_replicate, params, replicates=2, seed=4,
                          cache_dir=tmp_path / "c", progress=False, results="use")
    with pytest.raises(result_files.ShippedResultsError, match="no shipped result nothere.nc"):
        studies.run_study("nothere", study_replicates.counting_replicate, params, replicates=2, seed=4,
                          cache_dir=tmp_path / "c", progress=False, results="use")
    monkeypatch.setenv("DPSYNTH_RESULTS", "sometimes")
    with pytest.raises(ValueError, match="DPSYNTH_RESULTS"):
        studies.run_study("shipme", study_replicates.counting_replicate, params, replicates=3, seed=4,
                          cache_dir=tmp_path / "c", progress=False)


def test_compare_replicates_reports_what_differs():
    from dpsynth_book import shipped

    base = xr.Dataset({"x_min": ("replicate", [0.1, 0.2, 0.3]), "delta": ("replicate", [2.0, 2.1, 1.9])},
                      coords={"replicate": [0, 1, 2]})
    same = base.isel(replicate=slice(0, 2))
    assert shipped.compare_replicates(base, same, exact=["x_min"], tolerances={"delta": 0.1}) == []
    moved = same.assign(x_min=("replicate", [0.1, 0.25]), delta=("replicate", [2.5, 2.6]))
    problems = shipped.compare_replicates(base, moved, exact=["x_min"], tolerances={"delta": 0.1})
    assert any(p.startswith("x_min") for p in problems) and any(p.startswith("delta") for p in problems)


def test_fit_names_and_fitted_drop_the_data_row():
    ds = xr.Dataset({"is_fit": (("synthesizer", "data_model"), [[False, False], [True, True], [True, False]]),
                     "delta": ("synthesizer", [np.nan, 2.0, 3.0])},
                    coords={"synthesizer": ["Data", "LW", "CW"], "data_model": ["a", "b"]})
    assert studies.fit_names(ds) == ["LW"]  # a fit in every slice
    assert list(studies.fitted(ds).synthesizer.values) == ["LW"]


def test_data_fingerprint_tells_data_sets_apart():
    x = np.linspace(0.1, 0.9, 50)
    a = studies.data_fingerprint(x)
    assert a == studies.data_fingerprint(x.copy()) and a >= 0
    y = x.copy()
    y[7] = np.nextafter(y[7], 1.0)  # one record changed in its last bit
    assert studies.data_fingerprint(y) != a
    assert studies.data_fingerprint(x[:49]) != a
    assert studies.data_fingerprint(x, x) != a


# ------------------------------------------------------------------------------------------
# refused arguments
# ------------------------------------------------------------------------------------------


def test_run_study_bad_replicates(tmp_path):
    with pytest.raises(ValueError, match=r"`replicates` must be a positive integer"):
        studies.run_study("s", lambda r, s, p: None, {}, replicates=0, seed=1, cache_dir=tmp_path)


def test_run_study_bad_seed(tmp_path):
    with pytest.raises(ValueError, match=r"`seed` must be a non-negative integer"):
        studies.run_study("s", lambda r, s, p: None, {}, replicates=1, seed=-3, cache_dir=tmp_path)


def test_rows_to_dataset_empty():
    with pytest.raises(ValueError, match=r"`rows` is empty"):
        studies.rows_to_dataset([], ["synth"])

"""Shipped results (``results/*.nc``): present, small, with provenance, and not stale.

The staleness test recomputes the first replicate of every shipped study with the current code
and the file's own parameters and seed: the simulated data must match exactly, the privacy and
utility figures within the Monte Carlo tolerance of :data:`dpsynth_book.shipped.SHIPPED_STUDIES`. A
failure names the file to recompute (``make results``).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr

from dpsynth_book import result_files, shipped

PROVENANCE = ("dpsynth_version", "git_commit", "params", "replicates", "seed", "sampler", "created",
              "elapsed_seconds", "workers", "machine", "load_average_at_end")


def test_every_study_is_shipped_with_its_provenance():
    assert shipped.shipped_names() == list(shipped.SHIPPED_STUDIES), "run `make results` and commit results/"
    for name in shipped.shipped_names():
        ds = xr.open_dataset(result_files.shipped_path(name), engine="h5netcdf")
        missing = [k for k in PROVENANCE if k not in ds.attrs]
        assert not missing, f"{name}.nc lacks {missing}"
        assert isinstance(json.loads(ds.attrs["params"]), dict)
        assert ds.sizes["replicate"] == int(ds.attrs["replicates"])
        assert "uncommitted" not in ds.attrs["git_commit"], f"{name}.nc was made from uncommitted code"
        ds.close()


def test_no_provenance_names_a_module_so_moving_the_code_leaves_the_files_current():
    """The replicate functions are named in the code (``SHIPPED_STUDIES``), not in the files: a file's
    provenance and coordinates hold no module path, so moving a module (``dpsynth`` to ``dpsynth_book``)
    leaves every shipped file as current as before, and the staleness check recomputes with the new paths."""
    import importlib
    import re

    module_path = re.compile(r"\bdpsynth(_book)?\.[a-z_]+")
    for name in shipped.shipped_names():
        ds = xr.open_dataset(result_files.shipped_path(name), engine="h5netcdf")
        named = {k: str(v) for k, v in ds.attrs.items() if module_path.search(str(v))}
        named.update({c: "coordinate" for c in ds.coords if ds[c].dtype.kind in "OU"
                      and any(module_path.search(str(v)) for v in np.ravel(ds[c].values))})
        ds.close()
        assert not named, f"{name}.nc names a module: {named}"
    for name, spec in shipped.SHIPPED_STUDIES.items():
        module, func = spec.function.split(":")
        assert module.startswith("dpsynth_book.experiments."), name
        assert callable(getattr(importlib.import_module(module), func)), name


def test_shipped_results_stay_under_20_mb():
    total = sum(result_files.shipped_path(n).stat().st_size for n in shipped.shipped_names())
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
def test_shipped_file_is_current(name, recomputed, tmp_path):
    from dpsynth_book.peers import PeerUnavailable

    try:
        ship, again = recomputed(name)
    except PeerUnavailable as err:  # the whole-table study recomputes a SmartNoise peer
        pytest.skip(f"{name}: {err}")
    problems = shipped.staleness(name, ship, again)
    problems = shipped.confirm_stale(name, problems, cache_dir=tmp_path)
    assert not problems, "\n".join(problems)


def test_a_study_with_unseeded_noise_is_stale_only_if_a_second_recomputation_differs(monkeypatch, tmp_path):
    name = "whole_table"
    assert shipped.SHIPPED_STUDIES[name].unseeded
    ship = xr.Dataset({"marginal": ("replicate", [0.1])})
    second: list = []
    monkeypatch.setattr(shipped, "recompute", lambda *a, **k: (ship, ship))
    monkeypatch.setattr(shipped, "staleness", lambda *a, **k: list(second))
    with pytest.warns(UserWarning, match="first recomputation differed"):
        assert shipped.confirm_stale(name, ["marginal: off"], cache_dir=tmp_path) == [], "the second look passed"
    second.append("marginal: off again")
    got = shipped.confirm_stale(name, ["marginal: off"], cache_dir=tmp_path)
    assert got[0] == "marginal: off again" and got[1].startswith("(first recomputation;") and len(got) == 2
    # a seeded study gets no second look: its first failure stands
    assert not shipped.SHIPPED_STUDIES["censoring"].unseeded
    assert shipped.confirm_stale("censoring", ["delta: off"], cache_dir=tmp_path) == ["delta: off"]
    assert shipped.confirm_stale(name, [], cache_dir=tmp_path) == []


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
    result_files.write(edited, path, ship.attrs)
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
    attrs = result_files.provenance({"scale": "paper", "draws": 10}, replicates=2, seed=3, elapsed_seconds=elapsed,
                                    workers=2)
    result_files.write(ds, folder / f"{name}.nc", {**attrs, **extra})


def test_chapter_times_sums_each_chapters_studies(tmp_path):
    with pytest.raises(result_files.ShippedResultsError, match="make results"):
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


# --------------------------------------------------------------------------------------------
# a check that recomputes part of a grid (ShippedStudy.check_overrides): align_to
# --------------------------------------------------------------------------------------------


def _fit_study(cells, replicates=3, seed=0):
    """A study over (replicate, fit) with the given (synthesizer, eps) cells, as fits_to_dataset makes it."""
    import pandas as pd

    from dpsynth_book.studies import fits_to_dataset

    rng = np.random.default_rng(seed)
    reps = []
    for r in range(replicates):
        rows = [{"synthesizer": s, "eps": e, "delta": 1.0 + (0.0 if np.isnan(e) else e) + 0.01 * rng.standard_normal(),
                 "max_ecdf": 0.05 + 0.001 * r} for s, e in cells]
        ds = fits_to_dataset(rows)
        ds["data_fingerprint"] = np.int64(42)
        reps.append(ds)
    return xr.concat(reps, dim=pd.Index(range(replicates), name="replicate"))


NAN = float("nan")
GRID = [("Data", NAN), ("Unweighted", NAN), ("Weighted", NAN), *[(s, e) for e in (1.0, 5.0, 10.0)
                                                                 for s in ("Censor_uw", "PH")]]


def _cells(ds):
    return [(str(s), float(e)) for s, e in zip(ds["synthesizer"].values, ds["eps"].values)]


def _same_cells(a, b):
    return len(a) == len(b) and all(s == t and (e == f or (np.isnan(e) and np.isnan(f)))
                                    for (s, e), (t, f) in zip(a, b))


def test_align_to_selects_the_recomputed_fits_nan_eps_included():
    ship = _fit_study(GRID)
    sub = [("Data", NAN), ("Unweighted", NAN), ("Weighted", NAN), ("Censor_uw", 10.0), ("PH", 10.0)]
    again = _fit_study(sub, replicates=1, seed=1)
    out = shipped.align_to(ship, again)
    assert _same_cells(_cells(out), sub)
    assert out.sizes["replicate"] == 3  # all shipped replicates kept (compare_replicates takes the first k)
    for i, (s, e) in enumerate(sub):
        j = next(k for k, c in enumerate(_cells(ship)) if _same_cells([c], [(s, e)]))
        np.testing.assert_array_equal(out["delta"].isel(fit=i).values, ship["delta"].isel(fit=j).values)
    assert shipped.compare_replicates(out, out.isel(replicate=[0]), exact=["data_fingerprint"],
                                      relative={"delta": 0.05, "max_ecdf": 0.5}) == []
    # in the recomputation's order, whatever the shipped order
    rev = again.isel(fit=slice(None, None, -1))
    assert _same_cells(_cells(shipped.align_to(ship, rev)), sub[::-1])
    # without alignment the shapes differ: the check would fail on a partial grid
    problems = shipped.compare_replicates(ship, again, relative={"delta": 0.05})
    assert len(problems) == 1 and "shape" in problems[0]


def test_align_to_selects_values_of_an_indexed_dimension():
    values = np.arange(3 * 2 * 3, dtype=float).reshape(3, 2, 3)
    base = xr.Dataset({"n_censored": (("replicate", "setting", "eps"), values),
                       "data_fingerprint": ("replicate", np.full(3, 7))},
                      coords={"replicate": np.arange(3), "setting": ["dollars", "thousands"], "eps": [2.0, 5.0, 10.0]})
    again = base.sel(eps=[10.0], setting=["thousands"]).isel(replicate=[0])
    out = shipped.align_to(base, again)
    assert list(out["eps"].values) == [10.0] and list(out["setting"].values) == ["thousands"]
    assert out.sizes["replicate"] == 3
    np.testing.assert_array_equal(out["n_censored"].values, base["n_censored"].sel(eps=[10.0], setting=["thousands"]))
    assert shipped.compare_replicates(out, again, exact=["data_fingerprint"], relative={"n_censored": 0.01}) == []
    # an equal dataset is left as it is; a dimension the shipped file lacks is ignored
    xr.testing.assert_identical(shipped.align_to(base, base), base)
    extra = again.expand_dims(chain=[0])
    assert dict(shipped.align_to(base, extra).sizes) == {"replicate": 3, "setting": 1, "eps": 1}


def test_a_recomputed_cell_missing_from_the_shipped_file_is_a_shape_difference():
    # fit dimension: the recomputation has eps 20, which the shipped grid lacks
    ship = _fit_study(GRID)
    again = _fit_study([("Unweighted", NAN), ("Censor_uw", 10.0), ("Censor_uw", 20.0)], replicates=1)
    out = shipped.align_to(ship, again)
    assert _same_cells(_cells(out), [("Unweighted", NAN), ("Censor_uw", 10.0)])
    problems = shipped.compare_replicates(out, again, relative={"delta": 0.05})
    assert len(problems) == 1 and problems[0].startswith("delta: shape (2,) shipped vs (3,) recomputed")
    # indexed dimension: eps 20 is not shipped
    base = xr.Dataset({"n_censored": (("replicate", "eps"), np.ones((2, 2)))},
                      coords={"replicate": [0, 1], "eps": [5.0, 10.0]})
    more = xr.Dataset({"n_censored": (("replicate", "eps"), np.ones((1, 2)))},
                      coords={"replicate": [0], "eps": [10.0, 20.0]})
    problems = shipped.compare_replicates(shipped.align_to(base, more), more, relative={"n_censored": 0.1})
    assert problems == ["n_censored: shape (1,) shipped vs (2,) recomputed"]


def test_staleness_aligns_and_names_the_file(tmp_path):
    cells = [("Data", NAN), ("Unweighted", NAN), ("Censor_uw", 5.0), ("Censor_uw", 10.0)]
    ship = _fit_study(cells)
    for v in ("n_censored", "q50"):
        ship[v] = ship["delta"] * 0 + 3.0
    again = ship.isel(replicate=[0], fit=[0, 1, 3])
    path = tmp_path / "own_data.nc"
    assert shipped.staleness("own_data", ship, again, path=path) == []
    moved = again.copy(deep=True)
    moved["delta"][0, 2] *= 1.5
    problems = shipped.staleness("own_data", ship, moved, path=path)
    assert len(problems) == 1 and problems[0].startswith(f"{path} is stale") and "delta:" in problems[0]


def test_own_data_check_overrides_pick_cells_of_the_paper_grid():
    from dpsynth_book.experiments.own_data import Params

    paper = Params.paper()
    assert set(shipped.SHIPPED_STUDIES["own_data"].check_overrides["eps"]) <= set(paper.eps)
    assert set(shipped.SHIPPED_STUDIES["own_data-units"].check_overrides["units_eps"]) <= set(paper.units_eps)
    files, unitfree = shipped.SHIPPED_STUDIES["own_data-files"], shipped.SHIPPED_STUDIES["own_data-unitfree"]
    assert set(files.check_overrides["files"]) <= set(paper.files)
    assert set(files.check_overrides["files_eps"]) <= set(paper.files_eps)
    assert set(unitfree.check_overrides["unitfree_units"]) <= set(paper.unitfree_units)
    assert set(unitfree.check_overrides["unitfree_eps"]) <= set(paper.unitfree_eps)
    assert shipped.CHAPTER_STUDIES["own_data"] == ("own_data", "own_data-units", "own_data-files", "own_data-unitfree")
    for name in shipped.CHAPTER_STUDIES["own_data"]:
        assert name in shipped.SHIPPED_STUDIES
    # a study without overrides recomputes its own parameters
    assert shipped.SHIPPED_STUDIES["censoring"].check_overrides == {}


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::dpsynth.fitting.ConvergenceWarning")
def test_recompute_one_eps_of_a_shipped_own_data_study_repeats_its_cells(tmp_path, monkeypatch):
    """End to end at smoke scale: ship eps (5, 10), recompute eps 10 alone (the override), compare."""
    import dataclasses

    from dpsynth_book.experiments.own_data import Params
    from dpsynth_book.experiments.own_data.replicate import replicate
    from dpsynth_book.studies import run_study

    spec = dataclasses.replace(shipped.SHIPPED_STUDIES["own_data"], check_overrides={"eps": [10.0]})
    monkeypatch.setitem(shipped.SHIPPED_STUDIES, "own_data", spec)

    params = Params.preset("smoke", eps=(5.0, 10.0), mechanisms=("censor_uw", "ph")).study_dict()
    ds = run_study("own_data", replicate, params, replicates=1, seed=11, cache_dir=tmp_path / "c1", workers=1,
                   progress=False, results="off")
    path = tmp_path / "own_data.nc"
    attrs = result_files.provenance(params, replicates=1, seed=11, elapsed_seconds=1.0, workers=1)
    result_files.write(ds, path, attrs)
    ship, again = shipped.recompute("own_data", replicates=1, cache_dir=tmp_path / "c2", path=path)
    assert sorted(set(np.asarray(again["eps"].values[~np.isnan(again["eps"].values)]))) == [10.0]
    assert ship.sizes["fit"] == 2 + 2 * 2 and again.sizes["fit"] == 2 + 2
    assert shipped.staleness("own_data", ship, again, path=path) == []
    # the file with a privacy figure at eps 10 edited is reported stale; an edit at eps 5 (not recomputed) is not
    for e, stale in ((10.0, True), (5.0, False)):
        edited = ship.copy(deep=True)
        i = int(np.flatnonzero((ship["synthesizer"].values == "Censor_uw") & (ship["eps"].values == e))[0])
        edited["delta"][:, i] = edited["delta"][:, i] * 1.5
        assert bool(shipped.staleness("own_data", edited, again, path=path)) is stale, e


def test_pooled_sets_compare_their_mean_not_each_set():
    """Synthetic set j of a recomputation comes from another draw than set j shipped: pooled, they agree."""
    rng = np.random.default_rng(5)
    vals = rng.gamma(2.0, 0.02, size=(10, 2, 200))  # replicate x synthesizer x syn_set, skewed like max_ecdf
    ship = xr.Dataset({"max_ecdf": (("replicate", "synthesizer", "syn_set"), vals)},
                      coords={"replicate": range(10), "synthesizer": ["A", "B"], "syn_set": range(200)})
    again = ship.isel(replicate=[0]).copy()
    again["max_ecdf"] = again["max_ecdf"].copy(data=rng.gamma(2.0, 0.02, size=(1, 2, 200)))  # other draws
    kw = dict(relative={"max_ecdf": 0.5}, sd_vars=("max_ecdf",))
    assert shipped.compare_replicates(ship, again, pool=("syn_set",), **kw) == []
    # a real change (every set twice as far) is still caught after pooling
    worse = again.assign(max_ecdf=again["max_ecdf"] * 3.0)
    assert shipped.compare_replicates(ship, worse, pool=("syn_set",), **kw)


def test_paper_scale_markdown_says_what_to_plan_for():
    import pandas as pd

    def times(minutes, workers="2", load="1.0, 1.0, 1.0"):
        t = pd.DataFrame({"wall time (min)": minutes, "workers": workers, "load average at end": load},
                         index=pd.Index(["own_data", "censoring"][:len(minutes)], name="chapter"))
        t.loc["all chapters"] = {"wall time (min)": sum(minutes), "workers": "", "load average at end": ""}
        return t

    assert "well under 30 min on two cores" in shipped.paper_scale_markdown(times([10.0, 12.0]))
    assert "goal" not in shipped.paper_scale_markdown(times([10.0, 12.0]))
    slow = shipped.paper_scale_markdown(times([50.0, 20.0], workers="1", load="5.0, 4.0, 3.0"))
    assert "**70 min**" in slow and "plan for about that" in slow and "own_data, 50 min" in slow and "goal" not in slow
    assert "one worker process (own_data, censoring)" in slow and "load average above 3" in slow
    assert "plan for about 4.0 hours" in shipped.paper_scale_markdown(times([200.0, 40.0]))
    assert "fewer replicates or shorter chains" in slow  # every study samples as a release does
    older = times([50.0, 20.0])
    older["mass matrix"] = ["diagonal", "low-rank", ""]
    said = shipped.paper_scale_markdown(older)
    assert "Some studies (own_data) were sampled with the diagonal mass matrix" in said
    assert "fewer replicates" not in said


def test_a_study_s_mass_matrix_is_read_from_its_parameters():
    assert shipped.study_mass_matrix({"params": json.dumps({"draws": 10, "mass_matrix": "low_rank"})}) == "low_rank"
    assert shipped.study_mass_matrix({"params": json.dumps({"draws": 10})}) == "diag"  # written before the choice

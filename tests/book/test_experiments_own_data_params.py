"""Parameters of the "Your own data" chapter: presets, validation of every field, round trip."""

from __future__ import annotations

import dataclasses

import pytest

from dpsynth.validation import DataError
from dpsynth_book.experiments.own_data import OwnDataParams, Params
from dpsynth_book.experiments.own_data.params import CELL_COLUMNS, MECHANISM_KEYS
from dpsynth_book.public_data import WAGE_CATEGORICAL


def test_params_is_the_chapter_class():
    assert Params is OwnDataParams


def test_presets_values():
    smoke, quick, paper = Params.smoke(), Params.quick(), Params.paper()
    assert (smoke.scale, quick.scale, paper.scale) == ("smoke", "quick", "paper")
    # quick: one run of every mechanism at eps 1 and 5 on the whole file
    assert quick.replicates == 1 and quick.draws == 1000 and quick.tune == 500 and quick.chains == 2
    assert quick.eps == (1.0, 5.0) and quick.mechanisms == MECHANISM_KEYS and quick.n == 0
    assert quick.units_eps == (5.0, 10.0) and quick.units_mechanisms == ("censor_w",)
    assert quick.unit == "thousands" and (quick.lower, quick.upper) == (10.0, 25000.0)
    assert quick.quantile_cells == ("parttime", "smsa") and quick.n_candidates == 1000
    assert (quick.beta_sd, quick.sigma_prior_scale, quick.ph_bins) == (10.0, 5.0, "sqrt")
    # paper: five runs over five epsilons, both censorings in the units study
    assert paper.replicates == 5 and paper.draws == 1000 and paper.tune == 1000
    assert paper.eps == (0.5, 1.0, 2.0, 5.0, 10.0) and paper.units_mechanisms == ("censor_w", "censor_uw")
    assert paper.n == 0 and paper.mechanisms == MECHANISM_KEYS
    # smoke: seconds, a subsample, one epsilon
    assert smoke.replicates == 1 and smoke.draws == 100 and smoke.tune == 100
    assert smoke.eps == (5.0,) and smoke.units_eps == (10.0,) and smoke.n == 400 and smoke.n_candidates == 50
    assert smoke.mechanisms == MECHANISM_KEYS  # every code path runs
    # the check of the shipped file recomputes eps 10, which the paper grid holds
    assert 10.0 in paper.eps and 10.0 in paper.units_eps
    assert smoke.sampler.draws == 100 and smoke.sampler.chains == 2


def test_mechanism_and_cell_vocabulary():
    assert MECHANISM_KEYS == ("weighted", "censor_w", "censor_uw", "ph", "opendp_quantiles")
    assert set(CELL_COLUMNS) == set(WAGE_CATEGORICAL)


@pytest.mark.parametrize("overrides, field", [
    ({"eps": ()}, "`eps`"),
    ({"eps": (-1.0,)}, "`eps`"),
    ({"eps": (0.0, 1.0)}, "`eps`"),
    ({"eps": (1.0, 1.0)}, "`eps`"),
    ({"eps": (float("inf"),)}, "eps"),
    ({"units_eps": ()}, "`units_eps`"),
    ({"units_eps": (5.0, -5.0)}, "`units_eps`"),
    ({"units_eps": (5.0, 5.0)}, "`units_eps`"),
    ({"mechanisms": ()}, "`mechanisms`"),
    ({"mechanisms": ("censor_uw", "lw")}, "`mechanisms`"),
    ({"mechanisms": ("unweighted",)}, "`mechanisms`"),
    ({"units_mechanisms": ("ph",)}, "`units_mechanisms`"),
    ({"units_mechanisms": ()}, "`units_mechanisms`"),
    ({"unit": "pence"}, "`unit`"),
    ({"files": ()}, "`files`"),
    ({"files": ("cps1988", "cps1988")}, "`files`"),
    ({"files": ("adult",)}, "`files`"),
    ({"files_eps": ()}, "`files_eps`"),
    ({"files_eps": (0.0,)}, "`files_eps`"),
    ({"unitfree_eps": (5.0, 5.0)}, "`unitfree_eps`"),
    ({"unitfree_units": ("dollars", "pence")}, "`unitfree_units`"),
    ({"unitfree_units": ()}, "`unitfree_units`"),
    ({"unitfree_mechanisms": ("censor_w",)}, "`unitfree_mechanisms`"),
    ({"unitfree_mechanisms": ()}, "`unitfree_mechanisms`"),
    ({"new_replicates": 0}, "`new_replicates`"),
    ({"lower": 0.0}, "bounds"),
    ({"lower": -10.0}, "bounds"),
    ({"lower": 100.0, "upper": 100.0}, "bounds"),
    ({"lower": 30000.0}, "bounds"),
    ({"quantile_cells": ("education",)}, "`quantile_cells`"),
    ({"quantile_cells": ("parttime", "wage")}, "`quantile_cells`"),
    ({"n_candidates": 1}, "`n_candidates`"),
    ({"beta_sd": 0.0}, "`beta_sd`"),
    ({"sigma_prior_scale": -1.0}, "`sigma_prior_scale`"),
    ({"n": -1}, "`n`"),
    ({"n": 1}, "`n`"),
    ({"n": 49}, "`n`"),
    ({"n": 100.5}, "`n`"),
    ({"replicates": 0}, "`replicates`"),
    ({"draws": 0}, "`draws`"),
])
def test_validation_names_the_field(overrides, field):
    with pytest.raises(DataError, match=field):
        Params.preset("quick", **overrides)


@pytest.mark.parametrize("overrides", [
    {"n": 0}, {"n": 50}, {"quantile_cells": ()}, {"quantile_cells": CELL_COLUMNS}, {"unit": "dollars"},
    {"mechanisms": ("opendp_quantiles",)}, {"units_mechanisms": ("censor_uw",)}, {"eps": (0.25,)},
    {"n_candidates": 2},
])
def test_valid_edges_are_accepted(overrides):
    p = Params.preset("quick", **overrides)
    for k, v in overrides.items():
        assert getattr(p, k) == v


def test_unknown_override_is_refused():
    with pytest.raises(DataError, match="unknown parameter"):
        Params.preset("quick", epsilon=(1.0,))


@pytest.mark.parametrize("scale", ["smoke", "quick", "paper"])
def test_from_mapping_round_trip(scale):
    p = Params.preset(scale)
    d = p.study_dict()
    assert "scale" not in d and "replicates" not in d and "seed" not in d
    assert d["eps"] == list(p.eps) and d["quantile_cells"] == list(p.quantile_cells)
    q = OwnDataParams.from_mapping(d)
    assert isinstance(q, OwnDataParams)
    for f in dataclasses.fields(OwnDataParams):
        if f.name in ("scale", "replicates", "seed"):
            continue
        a, b = getattr(p, f.name), getattr(q, f.name)
        assert (list(a) if isinstance(a, tuple) else a) == (list(b) if isinstance(b, (tuple, list)) else b), f.name
    assert q.study_dict() == d
    # from_mapping validates: a bad value in the mapping is refused
    with pytest.raises(DataError, match="`unit`"):
        OwnDataParams.from_mapping({**d, "unit": "pounds"})


def test_check_overrides_of_the_shipped_file_are_valid_params():
    from dpsynth_book import shipped

    for name in ("own_data", "own_data-units", "own_data-files", "own_data-unitfree"):
        over = shipped.SHIPPED_STUDIES[name].check_overrides
        assert over, name
        q = OwnDataParams.from_mapping({**Params.paper().study_dict(), **over})
        for k, v in over.items():
            assert list(getattr(q, k)) == list(v)


#: The parameters the two older studies were shipped with (results/own_data.nc, own_data-units.nc): their keys
#: must not change, or run_study would refuse the shipped files.
LEGACY_KEYS = {"beta_sd", "chains", "draws", "eps", "lower", "mass_matrix", "mechanisms", "n", "n_candidates",
               "ph_bins", "quantile_cells", "sigma_prior_scale", "tune", "unit", "units_eps", "units_mechanisms",
               "upper"}


@pytest.mark.parametrize("scale", ["smoke", "quick", "paper"])
def test_the_older_studies_get_their_shipped_keys_and_the_new_ones_only_theirs(scale):
    p = Params.preset(scale)
    assert set(p.legacy_dict()) == LEGACY_KEYS
    assert set(p.files_dict()) == {"draws", "tune", "chains", "mass_matrix", "files", "files_eps", "n"}
    assert set(p.unitfree_dict()) == {"draws", "tune", "chains", "mass_matrix", "beta_sd", "sigma_prior_scale", "n",
                                      "unitfree_units", "unitfree_eps", "unitfree_mechanisms"}
    # each rebuilds the parameters it holds
    q = OwnDataParams.from_mapping(p.files_dict())
    assert (tuple(q.files), tuple(q.files_eps), q.n) == (p.files, p.files_eps, p.n)


def test_legacy_keys_are_those_of_the_shipped_files():
    import json

    import xarray as xr

    from dpsynth_book import result_files

    for name in ("own_data", "own_data-units"):
        path = result_files.shipped_path(name)
        if not path.exists():
            pytest.skip(f"{name}.nc is not shipped here")
        with xr.open_dataset(path, engine="h5netcdf") as ds:
            shipped = json.loads(ds.attrs["params"])
        assert shipped == Params.paper().legacy_dict(), name


def test_new_studies_presets():
    smoke, quick, paper = Params.smoke(), Params.quick(), Params.paper()
    assert paper.files == ("cps1988", "nmes1988", "fishing") and paper.files_eps == (1.0, 5.0)
    assert paper.unitfree_units == ("dollars", "thousands", "cents") and paper.unitfree_eps == (1.0, 5.0)
    assert paper.unitfree_mechanisms == ("censor_ref", "censor_uw") and paper.new_replicates == 3
    for p in (smoke, quick):
        assert len(p.files_eps) == 1 and len(p.unitfree_eps) == 1 and p.new_replicates == 1
    assert smoke.n == 400

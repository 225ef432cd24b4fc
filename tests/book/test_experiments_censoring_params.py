"""Parameters of the censoring chapter: presets and validation."""

from __future__ import annotations

import pytest

from dpsynth.validation import DataError
from dpsynth_book.experiments.censoring import Params


def test_presets():
    q, p, s = Params.quick(), Params.paper(), Params.smoke()
    assert (q.scale, q.replicates, q.n, q.eps_grid) == ("quick", 8, 2000, (5.0, 4.0, 3.0))
    assert (p.replicates, p.n, p.release_months) == (100, 2000, 12)
    assert s.replicates == 1 and s.n < q.n and s.draws <= 150 and s.release_months == 1
    assert s.mix_eps in s.eps_grid and Params.preset("smoke") == s


def test_preset_overrides_and_study_dict():
    p = Params.preset("quick", replicates=None, seed=7, n=300)
    assert p.seed == 7 and p.n == 300 and p.replicates == 8
    d = p.study_dict()
    assert "seed" not in d and "replicates" not in d and d["eps_grid"] == [5.0, 4.0, 3.0]
    assert Params.from_mapping(d).n == 300


@pytest.mark.parametrize("field, value", [
    ("n", 5), ("downscale", 1.5), ("downscale", 0.0), ("eps_grid", (4.0, -1.0)), ("eps_grid", (4.0, 4.0)),
    ("mix_eps", 2.0), ("ph_bins", "cube"), ("ph_alt_bins", 0), ("release_months", 0), ("fig1_eps", 0.0),
    ("public", "yes"),
])
def test_validation_names_the_field(field, value):
    with pytest.raises(DataError, match=field.split("[")[0]):
        Params.preset("quick", **{field: value})


def test_unknown_field():
    with pytest.raises(DataError, match="unknown"):
        Params.preset("quick", R=3)


def test_reference_fields_stay_out_of_the_other_studies():
    p = Params.paper()
    d = p.study_dict()
    assert not any(k.startswith("ref_") for k in d)  # the four shipped studies' parameters did not change
    r = p.reference_dict()
    assert set(r) == {"n", "draws", "tune", "chains", "mass_matrix", "lambda_min", "lambda_alpha", "ref_eps_grid",
                      "ref_alphas", "ref_widens", "ref_eps"}
    assert r["ref_eps_grid"] == [5.0, 4.0, 3.0, 2.0, 1.0] and p.ref_replicates == 20
    back = Params.from_mapping(r)
    assert back.n == p.n and tuple(back.ref_alphas) == p.ref_alphas
    assert Params.smoke().reference_dict()["ref_eps_grid"] == [3.0]


@pytest.mark.parametrize("field, value", [
    ("ref_replicates", 0), ("ref_eps_grid", ()), ("ref_eps_grid", (1.0, 1.0)), ("ref_eps_grid", (1.0, -2.0)),
    ("ref_alphas", (0.5, 1.5)), ("ref_alphas", (0.0,)), ("ref_widens", (0.0,)), ("ref_widens", (2.0,)),
    ("ref_eps", 0.0),
])
def test_reference_validation_names_the_field(field, value):
    with pytest.raises(DataError, match=field):
        Params.preset("quick", **{field: value})

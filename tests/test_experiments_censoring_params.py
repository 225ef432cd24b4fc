"""Parameters of the censoring chapter: presets and validation."""

from __future__ import annotations

import pytest

from dpsynth.experiments.censoring import Params
from dpsynth.validation import DataError


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

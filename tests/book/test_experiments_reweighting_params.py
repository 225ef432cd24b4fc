"""Parameters of the re-weighting chapter: presets, validation, round trip through a replicate."""

from __future__ import annotations

import dataclasses

import pytest

from dpsynth.validation import DataError
from dpsynth_book.experiments.reweighting import Params


def test_presets_are_valid_and_ordered():
    smoke, quick, paper = Params.smoke(), Params.quick(), Params.paper()
    assert (smoke.scale, quick.scale, paper.scale) == ("smoke", "quick", "paper")
    assert smoke.n < quick.n and smoke.draws < quick.draws < paper.draws
    assert smoke.replicates <= quick.replicates < paper.replicates
    assert paper.replicates == 100 and paper.synthetic_sets == 100
    assert smoke.draws <= 150 and smoke.tune <= 150 and smoke.synthetic_sets >= 2


def test_sizes_include_n():
    p = Params.preset("quick", n=500, contraction_sizes=(250, 1000))
    assert p.sizes == (250, 500, 1000)


def test_preset_ignores_none_and_rejects_unknown():
    assert Params.preset("quick", replicates=None, seed=None) == Params.quick()
    with pytest.raises(DataError, match="unknown"):
        Params.preset("quick", n_syn=3)


def test_study_dict_round_trip():
    p = Params.preset("smoke", cw_ball="absolute", cw_start_radius=5.0)
    d = p.study_dict()
    assert "scale" not in d and "seed" not in d and "replicates" not in d
    back = Params.from_mapping(d)
    assert back.cw_ball == "absolute" and back.n == p.n and tuple(back.contraction_sizes) == p.contraction_sizes


@pytest.mark.parametrize(
    "field,value",
    [
        ("n", 5),
        ("synthetic_sets", 1),
        ("cw_start_radius", 0.0),
        ("cw_ball", "square"),
        ("cw_tolerance", 1.0),
        ("k_start", 0.0),
        ("k_start", 1.5),
        ("reweight_tolerance", 0.0),
        ("contraction_draws", 0),
        ("contraction_sizes", (5,)),
        ("contraction_sizes", ()),
        ("data_models", ("gamma",)),
        ("data_models", ("poisson", "poisson")),
        ("replicates", 0),
        ("draws", 0),
    ],
)
def test_validation_names_the_field(field, value):
    with pytest.raises(DataError, match=f"`{field}`"):
        dataclasses.replace(Params.quick(), **{field: value})


def test_types_are_checked():
    with pytest.raises(DataError, match="`n`"):
        Params.preset("quick", n=10.5)
    with pytest.raises(DataError, match="`cw_match_lw`"):
        Params.preset("quick", cw_match_lw="yes")

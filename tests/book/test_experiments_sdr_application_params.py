"""Parameters of the SDR application chapter: presets, validation, what replicates receive."""

from __future__ import annotations

import pytest

from dpsynth.validation import DataError
from dpsynth_book.experiments.sdr_application import Params


def test_presets():
    q, p, s = Params.quick(), Params.paper(), Params.smoke()
    assert (q.scale, q.replicates, q.draws, q.n_syn, q.n1, q.n2) == ("quick", 3, 500, 20, 1000, 1000)
    assert (p.replicates, p.draws, p.tune, p.n_syn) == (10, 2000, 1000, 100)
    assert (s.replicates, s.draws, s.tune, s.n1, s.n2, s.n_syn) == (1, 100, 100, 60, 60, 3)
    assert s.standin and Params.preset("smoke") == s


def test_preset_overrides_and_none_ignored():
    p = Params.preset("quick", replicates=None, seed=None, n1=300, filters1={"NDGMED": ["7"]})
    assert p.n1 == 300 and p.replicates == 3 and p.filters1 == {"NDGMED": ["7"]}
    with pytest.raises(DataError, match="unknown parameter"):
        Params.preset("quick", R=3)


@pytest.mark.parametrize("field, value", [
    ("eps", 0.0), ("ph_mode", "fast"), ("cw_kind", "ball"), ("k0", 1.5), ("tol", 0.0), ("n_syn", 0),
    ("n2", 2), ("n1", 1), ("salary_bound", -1.0), ("age_levels", (30,)), ("columns", {"income": "X"}),
    ("filters1", ["NDGMED"]), ("cw_radius", 0.0), ("cw_max_iter", 0),
])
def test_validation_names_the_field(field, value):
    with pytest.raises(DataError, match=f"`{field}"):
        Params.preset("smoke", **{field: value})


def test_study_dict_round_trip_and_file_digest(tmp_path):
    s = Params.smoke()
    d = s.study_dict()
    assert "scale" not in d and "replicates" not in d and d["age_levels"] == list(s.age_levels)
    back = Params.from_mapping(d)
    assert back.n1 == s.n1 and back.eps == s.eps
    f = tmp_path / "puf.csv"
    f.write_text("SALARY\n1\n")
    with_file = Params.preset("smoke", sdr_path=str(f), n1=0)
    assert len(with_file.study_dict()["file_sha256"]) == 16 and not with_file.standin

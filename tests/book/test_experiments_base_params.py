"""Study parameters: one vocabulary, presets, validation in one place."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from dpsynth.validation import DataError
from dpsynth_book.experiments.base_params import StudyParams


@dataclass(frozen=True)
class ToyParams(StudyParams):
    n: int = 200
    eps_grid: tuple[float, ...] = (5.0, 4.0)
    bins: str = "sqrt"
    note: str | None = None

    @classmethod
    def paper(cls):
        return cls(scale="paper", replicates=100, n=2000)


def test_presets_and_overrides():
    assert ToyParams.quick().scale == "quick"
    p = ToyParams.preset("paper", replicates=5, seed=None)
    assert p.replicates == 5 and p.n == 2000 and p.scale == "paper"
    s = ToyParams.smoke()
    assert s.replicates == 1 and s.draws == 100
    assert p.sampler.draws == p.draws
    d = p.study_dict()
    assert "replicates" not in d and "seed" not in d and "scale" not in d and d["eps_grid"] == [5.0, 4.0]
    assert ToyParams.from_mapping(d).n == 2000


@pytest.mark.parametrize("kw, name", [
    ({"replicates": 0}, "`replicates`"), ({"replicates": 2.5}, "`replicates`"), ({"draws": True}, "`draws`"),
    ({"seed": -1}, "`seed`"), ({"n": "200"}, "`n`"), ({"eps_grid": (5.0, "4")}, "`eps_grid\\[1\\]`"),
    ({"bins": 3}, "`bins`"), ({"note": 3}, "`note`"),
])
def test_bad_values_name_the_field(kw, name):
    with pytest.raises(DataError, match=name):
        ToyParams(**kw)


def test_unknown_scale_and_field():
    with pytest.raises(DataError, match="`scale`"):
        ToyParams.preset("huge")
    with pytest.raises(DataError, match="unknown parameter"):
        ToyParams.preset("quick", R=4)
    with pytest.raises(NotImplementedError):
        StudyParams.paper()

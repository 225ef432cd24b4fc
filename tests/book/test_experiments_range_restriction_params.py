"""Parameters of the range-restriction chapter: presets and validation."""

from __future__ import annotations

import pytest

from dpsynth.validation import DataError
from dpsynth_book.experiments.range_restriction import Params


def test_presets_are_valid_and_ordered():
    smoke, quick, paper = Params.smoke(), Params.quick(), Params.paper()
    assert (smoke.scale, quick.scale, paper.scale) == ("smoke", "quick", "paper")
    assert smoke.replicates < quick.replicates < paper.replicates == 100
    assert paper.ns == (200, 400, 1600, 6400) and paper.n == 400 and paper.draws == 1000
    assert smoke.n in smoke.ns and max(smoke.ns) <= 100 and smoke.draws <= 150
    # smoke keeps per-record bounds for one replicate and not the other: both code paths run
    assert smoke.replicates > smoke.record_replicates >= 1


def test_study_dict_round_trip():
    p = Params.preset("quick", replicates=5, seed=None)
    assert p.replicates == 5
    d = p.study_dict()
    assert "scale" not in d and "replicates" not in d and d["ranges"] == [[0.4, 1.8], [0.6, 1.2]]
    q = Params.from_mapping(d)
    assert q.range_pairs == p.range_pairs and list(q.ns) == list(p.ns)


@pytest.mark.parametrize("overrides, field", [
    ({"n": 45}, "`n`"),
    ({"ranges": ((1.2, 0.6),)}, "`ranges`"),
    ({"ranges": ()}, "`ranges`"),
    ({"sdlog": 0.0}, "`sdlog`"),
    ({"ns": (2, 400)}, "`ns`"),
    ({"mu_prior_sd": -1.0}, "`mu_prior_sd`"),
    ({"record_replicates": -1}, "`record_replicates`"),
    ({"replicates": 0}, "`replicates`"),
])
def test_validation_names_the_field(overrides, field):
    with pytest.raises(DataError, match=field):
        Params.preset("quick", **overrides)


def test_unknown_override_is_refused():
    with pytest.raises(DataError, match="unknown parameter"):
        Params.preset("quick", R=3)

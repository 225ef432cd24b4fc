"""Parameters of the "Releasing a whole table" chapter: presets and validation (each error names its field)."""

from __future__ import annotations

import pytest

from dpsynth.validation import DataError
from dpsynth_book.experiments.whole_table import Params
from dpsynth_book.experiments.whole_table.params import EPS_GRID, METHOD_KEYS, TABLE_KEYS


def test_presets_are_valid_and_ordered():
    smoke, quick, paper = Params.smoke(), Params.quick(), Params.paper()
    assert paper.tables == TABLE_KEYS and paper.eps == EPS_GRID and paper.methods == METHOD_KEYS
    assert paper.replicates >= 5 and {1.0, 3.0, 5.0} <= set(paper.eps) and paper.implicates == 5
    assert len(quick.eps) == 1 and quick.replicates == 1
    assert smoke.n and smoke.draws < quick.draws
    assert {"scale", "replicates", "seed"}.isdisjoint(paper.study_dict())


@pytest.mark.parametrize("field, value", [
    ("eps", (1.0, 1.0)), ("eps", (0.0,)), ("eps", ()), ("tables", ("cps1988",)), ("tables", ()),
    ("methods", ("mst", "mst")), ("methods", ("privbayes",)), ("delta", 0.0), ("delta", 0.1),
    ("nmes_n", 10), ("nmes_n", 5000), ("n", 10), ("n", -1), ("implicates", 1),
])
def test_invalid_values_name_their_field(field, value):
    with pytest.raises(DataError, match=f"`{field}`"):
        Params.preset("quick", **{field: value})


def test_from_mapping_round_trip():
    p = Params.paper()
    q = Params.from_mapping(p.study_dict())
    assert (tuple(q.tables), tuple(q.eps), tuple(q.methods), q.delta, q.nmes_n) == (
        p.tables, p.eps, p.methods, p.delta, p.nmes_n)

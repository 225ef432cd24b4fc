"""The data holder's report of a whole-table release: sections, figures, tables, refusals (no MCMC)."""

from __future__ import annotations

import re
import stat

import numpy as np
import pandas as pd
import pytest

from dpsynth.report import BANNER
from dpsynth.table_report import TABLE_FILES, write_table_report
from dpsynth.validation import DataError

KINDS = {"z": "continuous", "region": "categorical", "income": "continuous", "visits": "count",
         "mode": "categorical"}
TARGETS = ["income", "visits", "mode"]


def tables(n: int = 300, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    region = rng.choice(["north", "south"], n)
    income = np.exp(1 + 0.5 * z + rng.normal(0, 0.3, n))
    visits = rng.poisson(np.exp(0.3 + 0.4 * z))
    mode = np.where(z + rng.normal(0, 0.5, n) > 0, "car", "bus")
    original = pd.DataFrame({"z": z, "region": region, "income": income, "visits": visits, "mode": mode})
    independent = original.copy()
    for t in TARGETS:  # each column's marginal kept, its relations broken
        independent[t] = rng.permutation(original[t].to_numpy())
    return original, independent


def write(tmp_path, released=None, **kw):
    original, independent = tables()
    args = {"targets": TARGETS, "kinds": KINDS, "statement": "strict DP eps = 3 with one record replaced.",
            "diagnostics": "n = 300", "out_dir": tmp_path / "rep"}
    args.update(kw)
    return write_table_report(original, independent if released is None else released, **args)


def text(path) -> str:
    s = path.read_text(encoding="utf-8")
    s = re.sub(r"<style>.*?</style>", "", s, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", s))


def test_the_page_has_every_section_figure_and_table(tmp_path):
    path = write(tmp_path)
    assert sorted(p.name for p in path.parent.iterdir()) == sorted(TABLE_FILES)
    for p in path.parent.iterdir():
        assert stat.S_IMODE(p.stat().st_mode) == 0o600
    t = text(path)
    assert BANNER in t
    for heading in ("1. Privacy", "2. Each column's distribution", "3. The relations between columns",
                    "4. Regressions of the confidential columns", "5. Can the synthetic records be told apart?"):
        assert heading in t
    for label in ("Figure 1.", "Figure 2.", "Table 1.", "Table 2.", "Table 3.", "Table 4.", "Table 5."):
        assert label in t, label
    assert "log income" in t and "log(1 + visits)" in t  # each numeric target's regression on its scale
    assert "income – visits" in t and "Cramér's V" in t
    html = path.read_text(encoding="utf-8")
    for fig in TABLE_FILES[1:]:
        assert f'src="{fig}"' in html


def test_independent_columns_show_in_the_pairwise_table(tmp_path):
    """The page is a measurement: broken relations show as large differences, kept ones as none."""
    original, independent = tables()
    kept = write(tmp_path, released=original, out_dir=tmp_path / "kept")
    lost = write(tmp_path, released=independent, out_dir=tmp_path / "lost")
    k = re.search(r"z – income Spearman (\S+) (\S+) (\S+)", text(kept))
    m = re.search(r"z – income Spearman (\S+) (\S+) (\S+)", text(lost))
    assert k and m
    assert float(k.group(3).replace("−", "-")) == 0.0
    assert abs(float(m.group(3).replace("−", "-"))) > 0.5


def test_refusals_name_the_argument(tmp_path):
    original, independent = tables()
    write(tmp_path)
    with pytest.raises(DataError, match="force"):
        write(tmp_path)
    write(tmp_path, force=True)
    with pytest.raises(DataError, match="has columns"):
        write(tmp_path, released=independent[["income", "z", "region", "visits", "mode"]], out_dir=tmp_path / "b")
    with pytest.raises(DataError, match="use one of"):
        write(tmp_path, kinds={**KINDS, "z": "money"}, out_dir=tmp_path / "c")
    with pytest.raises(DataError, match="statement"):
        write(tmp_path, statement=" ", out_dir=tmp_path / "d")
    with pytest.raises(DataError, match=r"targets.*no kind"):
        write(tmp_path, targets=["income", "pay"], out_dir=tmp_path / "e")

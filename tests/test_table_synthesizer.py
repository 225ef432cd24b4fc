"""The whole-table release: TableSynthesizer's conditionals, composed guarantee, ledger, save/load."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dpsynth import Synthesizer
from dpsynth import TableSynthesizer as _TableSynthesizer
from dpsynth.release.ledger import Ledger
from dpsynth.synthesizer_files import ChecksumError, digest
from dpsynth.validation import DataError

LEVELS = ["bus", "car", "walk"]  # 'walk' is a public level that never occurs


def TableSynthesizer(*args, **kwargs):  # noqa: N802 - the chain of censored regressions these tests are about
    kwargs.setdefault("mechanisms", "censor_ref")
    return _TableSynthesizer(*args, **kwargs)


def table(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    region = rng.choice(["north", "south"], n)
    income = np.exp(1.0 + 0.4 * z + 0.3 * (region == "south") + rng.normal(0, 0.3, n))
    visits = rng.poisson(np.exp(0.3 + 0.5 * (np.log(income) - 1.0)))
    mode = np.where(np.log(income) + 0.3 * visits + rng.normal(0, 0.5, n) > 1.4, "car", "bus")
    return pd.DataFrame(
        {
            "income": income,
            "visits": visits.astype(np.int64),
            "mode": pd.Categorical(mode, categories=LEVELS),
            "z": z,
            "region": region,
        }
    )


TARGETS = ["income", "visits", "mode"]


@pytest.fixture(scope="module")
def fitted():
    # eps is the table's total with one record replaced: 4 per column, 2 of the categorical one's for its DP counts
    return TableSynthesizer(table(), TARGETS, covariates=["z", "region"], eps=12.0, progress=False,
                            mechanism_params={t: {"reference_eps": 2.0} for t in TARGETS}).fit(seed=1)


# ----------------------------------------------------------------------------------- arguments


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"targets": "income"}, "list of column names"),
        ({"targets": ["income", "income"]}, "twice"),
        ({"targets": ["income", "z"]}, r"both `targets` and `covariates`"),
        ({"targets": ["income", "pay"]}, r"column 'pay' is not in `data`"),
        ({"covariates": ["z"]}, r"neither `targets` nor `covariates`: \['region'\]"),
        ({"eps": None}, "`eps` is required"),
        ({"eps_split": [1.0, 1.0]}, "one proportion per target"),
        ({"eps_split": {"income": 1.0, "visits": -1.0, "mode": 2.0}}, r"eps_split\['visits'\]"),
        ({"eps_split": {"income": 1.0}}, r"lacks column\(s\) \['visits', 'mode'\]"),
        ({"mechanism_params": {"mode": {"reference_eps": 1.0}}}, "nothing is left for the draw"),
        ({"mechanisms": {"pay": "ph"}}, r"\['pay'\] that are not targets"),
        ({"mechanisms": {"mode": "laplace"}}, r"`mechanisms`\['mode'\] must be a registry key"),
    ],
)
def test_bad_arguments_name_the_argument(kwargs, match):
    kw = {"targets": TARGETS, "covariates": ["z", "region"], "eps": 3.0, **kwargs}
    with pytest.raises(DataError, match=match):
        TableSynthesizer(table(40), **kw)


def test_eps_is_the_tables_total_split_equally_or_in_public_proportions():
    t = TableSynthesizer(table(40), TARGETS, covariates=["z", "region"], eps=3.0)
    b = t.budget
    assert b.total == 3.0 and b.size == 0.0 and t.relation == "replace"  # n public with one record replaced
    assert {c: q.total for c, q in b.parts.items()} == pytest.approx({"income": 1.0, "visits": 1.0, "mode": 1.0})
    # each part carves a reference released from the data (10%) out of its share: the categorical one's DP level
    # counts; the others' references are each record's own (saturated), which cost nothing
    assert b.parts["mode"].reference == pytest.approx(0.1) and b.parts["income"].reference == 0.0
    assert sum(q.reference + q.draw for q in b.parts.values()) == pytest.approx(3.0)
    t = TableSynthesizer(table(40), TARGETS, covariates=["z", "region"], eps=3.0,
                         eps_split={"income": 4, "visits": 1, "mode": 1})
    assert [q.total for q in t.budget.parts.values()] == pytest.approx([2.0, 0.5, 0.5])
    removed = TableSynthesizer(table(40)[TARGETS], TARGETS, eps=3.0)
    assert removed.relation == "remove" and removed.budget.size == pytest.approx(0.15)  # the DP size: 5%, once
    assert sum(q.total for q in removed.budget.parts.values()) == pytest.approx(2.85)
    assert "eps = 3 with one record removed for the first released table" in removed.budget.plan_line("budget")


def test_a_table_file_is_not_a_one_column_synthesizer(fitted, tmp_path):
    path = fitted.save(tmp_path / "t.json")
    with pytest.raises(DataError, match="whole-table synthesizer; load it with dpsynth.TableSynthesizer.load"):
        Synthesizer.load(path)


# ----------------------------------------------------------------------------------- the release


@pytest.mark.slow
def test_a_three_column_release_composes_books_once_and_keeps_types(fitted):
    """Acceptance: one continuous, one count, one categorical column with public covariates at eps = 3."""
    p = fitted.privacy
    assert p.guarantee == "DP"  # (convergence is a confidential diagnostic; it decides nothing here)
    assert p.eps == pytest.approx(12.0) == sum(q.eps for q in p.parts)  # the total asked, under replacement
    assert [q.name for q in p.parts] == ["Censor_ref"] * 3
    assert [q.eps for q in p.parts] == pytest.approx([4.0] * 3)
    statement = p.statement()
    assert "strict DP eps = 12 with one record replaced" in statement and "Split: income:" in statement
    book = Ledger(fitted.dataset)
    before = len(book.releases())
    out = fitted.sample(allow_research=True, seed=2)
    recs = book.releases()
    assert len(recs) == before + 1  # booked once, with the total
    assert recs[-1]["spend"] == pytest.approx(12.0) and recs[-1]["guarantee"] == "DP"
    draws = recs[-1]["draw"]
    assert sorted(draws) == sorted(TARGETS) and all(isinstance(v, int) for v in draws.values())  # one per column
    assert out.attrs["draw"] == draws
    src = table()
    assert list(out.columns) == list(src.columns)
    assert out["income"].dtype == np.float64 and (out["income"] > 0).all()
    assert out["visits"].dtype == np.int64 and (out["visits"] >= 0).all()
    assert isinstance(out["mode"].dtype, pd.CategoricalDtype) and list(out["mode"].cat.categories) == LEVELS
    np.testing.assert_array_equal(out["z"], src["z"])  # public covariates carried through
    # a second release takes other draws and books only them: the references were paid once
    fitted.sample(allow_research=True, seed=3)
    last = Ledger(fitted.dataset).releases()[-1]
    assert all(last["draw"][t] != draws[t] for t in TARGETS) and last["spend"] == pytest.approx(p.eps_draw)
    assert p.eps_draw == pytest.approx(10.0)  # 4 + 4 + 2: only the categorical column released a reference


@pytest.mark.slow
def test_earlier_columns_enter_later_models_through_public_encodings_only(fitted):
    visits = fitted.parts["visits"]
    assert fitted.parts["income"].privacy.extra["reference_source"] == "record"
    # income: its public log transform, never centred or scaled by statistics of the data
    assert visits.plan.design.transforms["income"] == "log"
    assert "income" not in visits.plan.design.scaling
    mode = fitted.parts["mode"]
    assert mode.plan.design.levels.get("visits") is None and mode.plan.design.transforms["visits"] == "log1p"
    assert fitted.parts["mode"].encoding.levels == tuple(LEVELS)
    assert mode.privacy.extra["reference_source"] == "dp_counts"


@pytest.mark.slow
def test_save_load_release_and_an_edited_part_is_refused(fitted, tmp_path):
    path = fitted.save(tmp_path / "t.json")
    assert (path.stat().st_mode & 0o777) == 0o600
    doc = json.loads(path.read_text())
    assert doc["content"]["kind"] == "table"
    for part in doc["content"]["parts"].values():
        assert part["public_covariates"] == {}  # the earlier (confidential) columns are not saved
    assert "income" not in json.dumps(doc["content"]["public_covariates"])
    back = _TableSynthesizer.load(path)
    assert back.privacy.eps == pytest.approx(fitted.privacy.eps)
    out = back.release(tmp_path / "released.csv", seed=4, allow_research=True)
    assert len(out) == 400 and (tmp_path / "released.csv").is_file()
    # an adversary edits a part's censoring bound and re-hashes the file: its MAC refuses it
    doc["content"]["parts"]["visits"]["privacy"]["bound"] *= 2
    doc["sha256"] = digest(doc["content"])
    bad = tmp_path / "edited.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(ChecksumError, match="do not match their MAC"):
        _TableSynthesizer.load(bad)


@pytest.mark.slow
def test_the_joint_relation_is_kept_where_independent_columns_lose_it():
    """Acceptance: two columns with a known correlation (0.7 on the log scale): the table keeps it within Monte
    Carlo error; two one-column synthesizers (each column alone) lose it."""
    rng = np.random.default_rng(3)
    n = 600
    L = rng.multivariate_normal([1.0, 2.0], [[0.25, 0.7 * 0.5 * 0.4], [0.7 * 0.5 * 0.4, 0.16]], size=n)
    df = pd.DataFrame({"a": np.exp(L[:, 0]), "b": np.exp(L[:, 1])})
    truth = np.corrcoef(L.T)[0, 1]
    t = TableSynthesizer(df, ["a", "b"], eps=8.0, n_release=n, progress=False).fit(seed=5)  # 4 per column
    both = t.sample_unaccounted(seed=6)
    kept = np.corrcoef(np.log(both["a"]), np.log(both["b"]))[0, 1]
    alone = [
        Synthesizer(df[[c]], c, mechanism="censor_ref", eps=4.0, n_release=n, progress=False)
        .fit(seed=7 + k).sample_unaccounted(seed=10 + k)[c]
        for k, c in enumerate(("a", "b"))
    ]
    lost = np.corrcoef(np.log(alone[0]), np.log(alone[1]))[0, 1]
    se = (1 - truth**2) / np.sqrt(n)  # the sampling sd of a correlation
    assert abs(kept - truth) < 4 * se + 0.05, (kept, truth)
    assert abs(lost) < 4 / np.sqrt(n), lost


def test_the_report_of_a_released_table(fitted, tmp_path):
    """The data holder's page: the composed statement, each column, the pairs, the regressions, the pMSE."""
    from dpsynth.table_report import TABLE_FILES

    released = fitted.sample_unaccounted(seed=5)
    path = fitted.report(released, tmp_path / "rep")
    assert sorted(p.name for p in path.parent.iterdir()) == sorted(TABLE_FILES)
    html = path.read_text(encoding="utf-8")
    assert fitted.privacy.statement().split(":")[0] in html and "income" in html and "Cramér" in html
    assert fitted.kinds() == {"income": "continuous", "visits": "count", "mode": "categorical", "z": "continuous",
                              "region": "categorical"}
    with pytest.raises(DataError, match="lacks the synthesizer's column"):
        fitted.report(released.drop(columns="mode"), tmp_path / "rep2")


@pytest.mark.slow
def test_a_part_books_into_the_tables_ledger_and_not_without_a_public_frame(fitted):
    """Acceptance: t.parts[...].sample(...) goes through the table's ledger (one budget), and a part's own rows (which
    hold the table's earlier confidential columns) are never released."""
    part = fitted.parts["visits"]
    assert part.dataset == fitted.dataset and part.part_of == fitted.dataset
    with pytest.raises(DataError, match="releases through its table"):
        part.sample(allow_research=True, seed=1)
    book = Ledger(fitted.dataset)
    before = book.total()
    frame = pd.DataFrame({"z": [0.0, 1.0] * 10, "region": ["north", "south"] * 10, "income": [3.0] * 20})
    out = part.sample(allow_research=True, seed=1, data=frame)
    assert len(out) == 20 and book.releases()[-1]["synthesizer"] == part.checksum
    assert book.total() > before  # booked in the table's ledger, with the part's charges


def test_a_table_at_eps_is_stated_at_eps_before_the_fit():
    """Acceptance: a table's eps is its total; the plan is known (and printable) before any fit."""
    t = TableSynthesizer(table(60), TARGETS, covariates=["z", "region"], eps=1.0)
    b = t.budget
    assert b.total == 1.0 and sum(q.total for q in b.parts.values()) == pytest.approx(1.0)
    assert "eps = 1 with one record replaced" in b.plan_line("budget")


@pytest.mark.slow
def test_auto_chooses_by_kind_and_public_bounds_and_cells_follow_the_earlier_releases():
    df = table(300)[["visits", "mode", "income"]]
    t = _TableSynthesizer(df, ["visits", "mode", "income"], eps=6.0, bounds={"visits": (0, 15), "income": (0.1, 80.0)},
                          mode="research", progress=False, sampler={"draws": 300, "tune": 300})
    assert t.mechanisms == {"visits": "noise_aware", "mode": "noise_aware", "income": "censor_ref"}
    assert t.calibrate["income"] == {"lower": 0.1, "upper": 80.0} and set(t.choices) == {"visits", "mode", "income"}
    assert t.budget.parts["visits"].model_free and t.budget.parts["income"].marginal > 0
    t.fit(seed=1)
    cells = t.parts["mode"].plan.params
    assert list(cells["cells"]) == ["visits"] and len(cells["cell_edges"]["visits"]) >= 1  # tertiles of a DP release
    assert t.parts["mode"].confidential_covariates == ["visits"]
    assert t.parts["income"].state.calibration is not None
    assert "any number" in t.budget.plan_line("T") or t.budget.draw < t.budget.total
    out = t.sample_unaccounted(seed=2)
    assert out["income"].between(0.1, 80.0).all() and out["visits"].between(0, 15).all()
    assert t.privacy.eps == pytest.approx(6.0)


def test_undeclared_levels_are_asked_for_in_the_tables_own_argument():
    """A text column's levels are asked for as the table declares them: a dict keyed by the column."""
    df = pd.DataFrame({"sex": ["F", "M"] * 20, "wage": np.linspace(1.0, 40.0, 40)})
    with pytest.raises(DataError, match=r"levels are not declared.*target_levels=\{'sex': \[\.\.\.\]\}"):
        _TableSynthesizer(df, ["sex", "wage"], eps=1.0, progress=False)


def _wide(n: int = 200, seed: int = 3) -> pd.DataFrame:
    """A table with a zero-inflated spending column and a real-valued one with negatives."""
    rng = np.random.default_rng(seed)
    g = rng.choice(["a", "b"], n)
    spend = np.where(rng.random(n) < 0.25, 0.0, np.round(rng.lognormal(4.0 + 0.5 * (g == "b"), 1.0, n), 2))
    return pd.DataFrame({"g": pd.Categorical(g), "spend": spend, "diff": rng.normal(-0.5, 1.0, n)})


def test_a_column_its_family_cannot_take_is_refused_before_any_fit_naming_the_column_and_the_fix(monkeypatch):
    """Every column is checked when the table is built: nothing is compiled or fitted, and the message names the
    column, its place in the chain and the family that takes it."""
    from dpsynth import fitting

    before = fitting.compile_count()
    with pytest.raises(DataError, match=r"column 'spend' \(column 2 of 3\) does not fit the lognormal_regression "
                                        r"family.*Nothing was fitted.*bounds=\{'spend': \(lower, upper\)\}.*ordinal"):
        _TableSynthesizer(_wide(), ["g", "spend", "diff"], eps=3.0, progress=False)
    assert fitting.compile_count() == before
    # named a family by hand: the fix is the ordinal model on the bounds given
    with pytest.raises(DataError, match=r"column 'diff'.*models=\{'diff': 'ordinal'\}.*between its bounds -10 and 10"):
        _TableSynthesizer(_wide(), ["g", "spend", "diff"], eps=3.0, progress=False,
                          models={"diff": "lognormal_regression"}, bounds={"spend": (0, 5000), "diff": (-10, 10)})


def test_public_bounds_that_take_zero_or_negatives_give_the_ordinal_family_and_the_plan_keeps_it():
    from dpsynth.table_synthesizer_plan import TablePlan

    t = _TableSynthesizer(_wide(), ["g", "spend", "diff"], eps=3.0, progress=False,
                          bounds={"spend": (0, 5000), "diff": (-10, 10)})
    assert t.model_of("spend") == t.model_of("diff") == "ordinal" and t.model_of("g") is None
    assert "ordinal" in t.choices["spend"] and t.calibrate["diff"] == {"lower": -10.0, "upper": 10.0}
    assert TablePlan.from_dict(json.loads(json.dumps(t.plan.to_dict()))).models == t.plan.models
    positive = _TableSynthesizer(table(200)[["income", "mode"]], ["income", "mode"], eps=3.0, progress=False,
                                 bounds={"income": (0.1, 80.0)})
    assert positive.model_of("income") is None  # a lower bound above 0: the default family, as before


@pytest.mark.slow
def test_a_table_with_zeros_and_negatives_releases_with_defaults_and_public_bounds():
    df = _wide()
    t = _TableSynthesizer(df, ["g", "spend", "diff"], eps=3.0, bounds={"spend": (0, 5000), "diff": (-10, 10)},
                          progress=False, sampler={"draws": 300, "tune": 300})
    t.fit(seed=1)
    assert t.parts["spend"].model == "ordinal" and t.parts["spend"].family().n_bins > 10
    out = t.sample_unaccounted(seed=2)
    assert out["spend"].between(0, 5000).all() and out["diff"].between(-10, 10).all()
    assert (out["spend"] == 0).mean() > 0.05 and (out["diff"] < 0).mean() > 0.2  # zeros and negatives released
    assert t.privacy.eps == pytest.approx(3.0)

"""The release ledger: one per data set under one relation, a keyed hash chain with an authenticated head."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import subprocess

import numpy as np
import pandas as pd
import pytest

from dpsynth.release.ledger import HEADS_FILE, BudgetExceeded, Ledger, LedgerError, RelationMismatch, dataset_id
from dpsynth.validation import DataError


def _release(**kw) -> dict:
    spend = kw.pop("spend", 1.0)
    guarantee = kw.get("guarantee", "DP")
    draw = kw.get("draw", 0)
    rec = {"relation": "remove", "mechanism": "censor_uw", "name": "Censor_uw", "guarantee": guarantee, "eps": 1.0,
           "charges": [[f"fit:w:draw:{draw}", f"posterior draw {draw}", spend, guarantee]],
           "spend": spend if guarantee == "DP" else 0.0, "adp_eps": spend if guarantee == "aDP" else 0.0,
           "draw": draw, "rows": 10, "output": "a.csv", "synthesizer": "abc", "overrides": []}
    rec.update(kw)
    return rec


def _book(led: Ledger, **kw) -> dict:
    with led.locked() as b:
        return b.append(**_release(**kw))


@pytest.fixture
def led(tmp_path) -> Ledger:
    return Ledger("a1b2c3", folder=tmp_path / "ledgers")  # its high-water record beside it, in tmp_path


# ----------------------------------------------------------------------------------- the data set id


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"wage": rng.lognormal(6, 0.5, 50), "region": rng.choice(["a", "b"], 50),
                         "age": rng.integers(20, 60, 50)})


def test_dataset_id_depends_on_the_records_only():
    """Acceptance: row order, column order and names, and lossless re-encodings keep the id; a record does not."""
    df = _frame()
    a = dataset_id(df, ["wage", "region", "age"])
    assert len(a) == 32 and a.isalnum()
    same = [
        df.sample(frac=1.0, random_state=1),  # row order
        df[["age", "wage", "region"]],  # column order
        df.rename(columns={"wage": "pay"}),  # a renamed column
        df.assign(wage=df["wage"].astype(np.float32).astype(np.float64)),  # a float32 round trip
        df.assign(wage=np.nextafter(df["wage"].to_numpy(), np.inf)),  # one ulp in every value
        df.assign(age=df["age"].astype(float)),  # integers written as floats
        df.assign(region=df["region"].astype("category")),  # strings as categories
    ]
    for other in same:
        cols = [{"pay": "pay"}.get(c, c) for c in other.columns]
        assert dataset_id(other, cols) == a
    assert dataset_id(df.assign(wage=df["wage"] * 1.001), ["wage", "region", "age"]) != a
    assert dataset_id(df.iloc[1:], ["wage", "region", "age"]) != a  # one record removed
    assert dataset_id(df, ["wage", "region"]) != a  # another set of columns


def test_a_release_through_csv_and_parquet_keeps_the_id(tmp_path):
    df = _frame()
    df.to_csv(tmp_path / "d.csv", index=False)
    df.to_parquet(tmp_path / "d.parquet", index=False)
    ids = {dataset_id(pd.read_csv(tmp_path / "d.csv"), list(df.columns)),
           dataset_id(pd.read_parquet(tmp_path / "d.parquet"), list(df.columns)), dataset_id(df, list(df.columns))}
    assert len(ids) == 1


# ----------------------------------------------------------------------------------- totals, budgets, relation


def test_total_sums_strict_dp_spend_only(led):
    assert led.releases() == [] and led.total() == 0.0 and led.relation is None
    _book(led, spend=1.1)
    _book(led, spend=2.0, draw=1)
    _book(led, name="Censor_w", guarantee="aDP", spend=3.0, draw=2)
    assert led.total() == pytest.approx(3.1) and led.relation == "remove"
    assert [r["name"] for r in led.adp_records()] == ["Censor_w"]
    recs = led.records()
    assert recs[0]["kind"] == "open" and [r["seq"] for r in recs] == [0, 1, 2, 3]
    assert "aDP (not summed" in led.summary() and "total eps = 3.1" in led.summary()
    with led.locked() as b:
        assert b.charged() == {"fit:w:draw:0": 1.1, "fit:w:draw:1": 2.0, "fit:w:draw:2": 3.0}


def test_one_data_set_has_one_relation(led):
    """Acceptance: a release under the other relation cannot open a second budget for the same data."""
    _book(led)
    with pytest.raises(RelationMismatch, match="counts under one record removed.*neighbours='remove'"):
        _book(led, relation="replace", draw=1)
    assert len(led.releases()) == 1


def test_budget_refuses_and_writes_nothing(led):
    _book(led, spend=3.0)
    before = led.path.read_bytes()
    with pytest.raises(BudgetExceeded, match="total 4.5 > budget 4"), led.locked() as b:
        b.check_budget("DP", 1.5, 4.0)
    with pytest.raises(BudgetExceeded, match="strict-DP releases only"), led.locked() as b:
        b.check_budget("aDP", 0.0, 4.0)
    assert led.path.read_bytes() == before


def test_spend_must_be_the_sum_of_its_charges(led):
    with pytest.raises(DataError, match="not the sum of its strict-DP charges"):
        _book(led, spend=1.0, charges=[["k", "draw", 0.5, "DP"]])


# ----------------------------------------------------------------------------------- edits


def _lines(led: Ledger) -> list[dict]:
    return [json.loads(t) for t in led.path.read_text().splitlines()]


def _write(led: Ledger, lines: list[dict]) -> None:
    led.path.write_text("".join(json.dumps(r) + "\n" for r in lines))


def _head_from(led: Ledger, line: dict) -> None:
    """The head file rewritten from one line, as an adversary without the key would (its MAC recomputed unkeyed)."""
    import hashlib

    heads_path = led.path.parent / HEADS_FILE
    heads = json.loads(heads_path.read_text())["heads"]
    heads[led.dataset] = [line["seq"], line["mac"]]
    tag = hashlib.sha256(json.dumps(heads, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    heads_path.write_text(json.dumps({"heads": heads, "mac": tag}))


# every edit an adversary (or an accident) makes stops the next release with a one-line error
EDITS = {
    "emptied": lambda led, lines: led.path.write_text(""),
    "deleted": lambda led, lines: led.path.unlink(),
    "negative spend": lambda led, lines: _write(led, [*lines[:2], {**lines[2], "spend": -100.0}, *lines[3:]]),
    "string spend": lambda led, lines: _write(led, [*lines[:2], {**lines[2], "spend": "1"}, *lines[3:]]),
    "last line removed": lambda led, lines: _write(led, lines[:-1]),
    "middle line removed": lambda led, lines: _write(led, [lines[0], lines[2]]),
    "a bare line added": lambda led, lines: led.path.write_text(led.path.read_text() + '{"guarantee": "DP"}\n'),
    "not JSON": lambda led, lines: led.path.write_text(led.path.read_text() + "oops\n"),
    # issue 27: cut to its first line, and the head rewritten from that line (no key needed before)
    "cut to the first line, head rewritten": lambda led, lines: (_write(led, lines[:1]), _head_from(led, lines[0])),
    "head file removed": lambda led, lines: (led.path.parent / HEADS_FILE).unlink(),
    "ledger and its head entry removed": lambda led, lines: (led.path.unlink(), _head_from(led, {"seq": -1,
                                                                                                 "mac": ""})),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edited_ledger_stops_the_next_release(led, edit):
    _book(led, spend=1.0)
    _book(led, spend=1.0, draw=1)
    EDITS[edit](led, _lines(led))
    with pytest.raises(LedgerError) as err:
        _book(led, spend=1.0, draw=2)
    msg = str(err.value)
    assert "\n" not in msg and "no release" in msg and "backup" not in msg.lower()
    with pytest.raises(LedgerError):
        led.total()


def test_the_homes_head_file_cannot_be_removed_with_every_ledger(tmp_path, monkeypatch):
    """In a home (not a test folder), a missing head file was removed: it is written with the key."""
    import shutil

    from dpsynth.release.home import secret_key
    from dpsynth.release.ledger import ledger_folder

    monkeypatch.setenv("DPSYNTH_HOME", str(tmp_path / "home"))
    with pytest.warns(UserWarning, match="new home"):
        secret_key()
    led = Ledger("cafe01")
    _book(led)
    shutil.rmtree(ledger_folder())  # every ledger and the head file
    with pytest.raises(LedgerError, match="head file .* is missing"):
        Ledger("cafe01").total()


def test_relabelling_dp_as_adp_with_sed_is_caught(led):
    _book(led, spend=1.0)
    _book(led, spend=1.0, draw=1)
    subprocess.run(["sed", "-i", 's/"guarantee": "DP"/"guarantee": "aDP"/', str(led.path)], check=True)
    with pytest.raises(LedgerError, match="line 2: does not match its MAC"):
        led.records()


def test_a_recomputed_plain_hash_does_not_pass(led):
    """The chain is keyed: re-hashing an edited line with SHA-256 (no key) is still caught."""
    import hashlib

    _book(led, spend=1.0)
    lines = _lines(led)
    lines[1]["spend"] = 0.0
    lines[1]["charges"][0][2] = 0.0
    body = {k: v for k, v in lines[1].items() if k != "mac"}
    lines[1]["mac"] = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    _write(led, lines)
    with pytest.raises(LedgerError, match="does not match its MAC"):
        led.total()


def test_unknown_guarantee_and_missing_field_are_refused(led):
    _book(led)
    with pytest.raises(DataError, match="unknown guarantee 'strict'"):
        _book(led, guarantee="strict", charges=[])
    with pytest.raises(DataError, match="spend = -1.0"):
        _book(led, spend=-1.0)
    with pytest.raises(DataError, match="lacks field"), led.locked() as b:
        b.append(relation="remove", name="x")


def test_bad_arguments():
    with pytest.raises(DataError, match="data set id"):
        Ledger("../etc")


def _release_under_budget(folder, worker: int, k: int, budget: float) -> None:
    led = Ledger("feedbeef", folder=folder)
    for i in range(k):
        try:
            with led.locked() as b:
                b.check_budget("DP", 1.0, budget)
                b.append(**_release(draw=worker * 1000 + i))
        except BudgetExceeded:
            return


def test_concurrent_releases_are_serialised_and_never_overspend(tmp_path):
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_release_under_budget, args=(tmp_path / "ledgers", w, 40, 50.0)) for w in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    led = Ledger("feedbeef", folder=tmp_path / "ledgers")
    recs = led.records()  # the chain verifies: no line interleaved or lost
    assert len(recs) == 51 and led.total() == pytest.approx(50.0)
    assert np.all(np.diff([r["seq"] for r in recs]) == 1)


# ----------------------------------------------------------------------------------- the high-water record


PUT_BACK = {
    "the ledger and its head file": ("a1b2c3.jsonl", HEADS_FILE),
    "the ledger alone": ("a1b2c3.jsonl",),
    "the head file alone": (HEADS_FILE,),
}


@pytest.mark.parametrize("what", list(PUT_BACK))
def test_an_older_copy_is_refused(led, tmp_path, what):
    """Acceptance (c): a ledger or a head file older than the home's record (outside the ledgers folder) is refused in
    one line saying what happened."""
    import shutil

    _book(led, spend=1.0)
    earlier = tmp_path / "earlier"
    shutil.copytree(led.path.parent, earlier)
    _book(led, spend=2.0, draw=1)
    for name in PUT_BACK[what]:
        shutil.copy2(earlier / name, led.path.parent / name)
    with pytest.raises(LedgerError) as err:
        led.total()
    msg = str(err.value)
    assert "\n" not in msg and "backup" not in msg.lower()
    if what == "the ledger and its head file":  # consistent with each other: only the record tells
        assert "reached line 3 (total eps = 3)" in msg and "older copy" in msg
    if what == "the head file alone":
        assert "records line 2 of ledger" in msg and "the head file was replaced by an older copy" in msg
    with pytest.raises(LedgerError):
        _book(led, spend=1.0, draw=2)


def test_a_ledger_written_group_readable_becomes_owner_only(led):
    _book(led)
    os.chmod(led.path, 0o644)
    _book(led, draw=1)
    for p in led.path.parent.iterdir():
        assert p.stat().st_mode & 0o777 == 0o600, p
    assert led.path.parent.stat().st_mode & 0o777 == 0o700


def test_linked_ledgers_count_together(tmp_path, monkeypatch):
    """A data set's ids under two keys of one home: a synthesizer that knows both (``linked``), or a link a fit
    recorded in the home, sums both ledgers; their relations must agree."""
    from dpsynth.release.home import NewHomeWarning, secret_key
    from dpsynth.release.ledger import link_datasets

    monkeypatch.setenv("DPSYNTH_HOME", str(tmp_path / "home"))
    with pytest.warns(NewHomeWarning):
        secret_key()
    _book(Ledger("aa11"), spend=1.0)
    _book(Ledger("bb22"), spend=2.0)
    assert Ledger("aa11").total() == 1.0 and Ledger("aa11", linked=["bb22"]).total() == 3.0
    with Ledger("aa11", linked=["bb22"]).locked() as b:
        assert b.total() == 3.0 and len(b.charged()) == 1  # both books' charges (the same key in both here)
    link_datasets(["bb22", "aa11"])
    assert Ledger("aa11").total() == Ledger("bb22").total() == 3.0 and Ledger("bb22").group() == ["bb22", "aa11"]
    assert "counted with the ledgers of the same data under the other keys of this home: aa11" in \
        Ledger("bb22").summary()
    _book(Ledger("cc33"), spend=1.0, relation="replace")
    with pytest.raises(RelationMismatch), Ledger("aa11", linked=["cc33"]).locked() as b:
        b.check_relation("remove")

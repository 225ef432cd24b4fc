"""The release ledger: one per data set and relation, a keyed hash chain that every edit breaks."""

from __future__ import annotations

import json
import multiprocessing as mp
import subprocess

import numpy as np
import pandas as pd
import pytest

from dpsynth.ledger import BudgetExceeded, Ledger, LedgerError, dataset_id
from dpsynth.validation import DataError


def _release(**kw) -> dict:
    rec = {"mechanism": "censor_uw", "name": "Censor_uw", "guarantee": "DP", "eps": 1.0, "eps_size": 0.0,
           "spend": 1.0, "adp_eps": 0.0, "draw": 0, "rows": 10, "output": "a.csv", "synthesizer": "abc",
           "overrides": []}
    rec.update(kw)
    return rec


def _book(led: Ledger, **kw) -> dict:
    with led.locked() as b:
        return b.append(**_release(**kw))


@pytest.fixture
def led(tmp_path) -> Ledger:
    return Ledger("a1b2c3", "remove", folder=tmp_path)


def test_dataset_id_depends_on_the_data_and_the_relation_only():
    df = pd.DataFrame({"wage": [1.0, 2.0, 3.0], "region": ["a", "b", "a"]})
    a = dataset_id(df, ["wage", "region"], "remove")
    assert a == dataset_id(df.copy(), ["wage", "region"], "remove") and len(a) == 32 and a.isalnum()
    assert a != dataset_id(df, ["wage", "region"], "replace")
    other = df.assign(wage=[1.0, 2.0, 3.5])
    assert a != dataset_id(other, ["wage", "region"], "remove")
    assert a != dataset_id(df.iloc[:2], ["wage", "region"], "remove")  # one record removed


def test_total_sums_strict_dp_spend_only(led):
    assert led.releases() == [] and led.total() == 0.0
    _book(led, spend=1.1, eps_size=0.1)
    _book(led, spend=2.0, eps=2.0, draw=1)
    _book(led, name="Censor_w", guarantee="aDP", eps=3.0, spend=0.0, adp_eps=3.0, draw=2)
    assert led.total() == pytest.approx(3.1)
    assert [r["name"] for r in led.adp_records()] == ["Censor_w"]
    recs = led.records()
    assert recs[0]["kind"] == "open" and [r["seq"] for r in recs] == [0, 1, 2, 3]
    assert "aDP (not summed" in led.summary() and "total eps = 3.1" in led.summary()


def test_budget_refuses_and_writes_nothing(led):
    _book(led, spend=3.0)
    before = led.path.read_bytes()
    with pytest.raises(BudgetExceeded, match="total 4.5 > budget 4"), led.locked() as b:
        b.check_budget("DP", 1.5, 4.0)
    with pytest.raises(BudgetExceeded, match="strict-DP releases only"), led.locked() as b:
        b.check_budget("aDP", 0.0, 4.0)
    assert led.path.read_bytes() == before


def _lines(led: Ledger) -> list[dict]:
    return [json.loads(t) for t in led.path.read_text().splitlines()]


def _write(led: Ledger, lines: list[dict]) -> None:
    led.path.write_text("".join(json.dumps(r) + "\n" for r in lines))


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
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edited_ledger_stops_the_next_release(led, edit):
    _book(led, spend=1.0)
    _book(led, spend=1.0, draw=1)
    EDITS[edit](led, _lines(led))
    with pytest.raises(LedgerError) as err:
        _book(led, spend=1.0, draw=2)
    msg = str(err.value)
    assert "\n" not in msg and f"ledger {led.path} line " in msg and "restore it" in msg
    with pytest.raises(LedgerError):
        led.total()


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
    body = {k: v for k, v in lines[1].items() if k != "mac"}
    lines[1]["mac"] = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    _write(led, lines)
    with pytest.raises(LedgerError, match="does not match its MAC"):
        led.total()


def test_unknown_guarantee_and_missing_field_are_refused(led):
    _book(led)
    with pytest.raises(DataError, match="unknown guarantee 'strict'"):
        _book(led, guarantee="strict")
    with pytest.raises(DataError, match="spend = -1.0"):
        _book(led, spend=-1.0)
    with pytest.raises(DataError, match="lacks field"):
        with led.locked() as b:
            b.append(name="x")


def test_bad_arguments():
    with pytest.raises(DataError, match="data set id"):
        Ledger("../etc", "remove")
    with pytest.raises(DataError, match="neighbours"):
        Ledger("abc", "swap")


def _release_under_budget(folder, worker: int, k: int, budget: float) -> None:
    led = Ledger("feedbeef", "remove", folder=folder)
    for i in range(k):
        try:
            with led.locked() as b:
                b.check_budget("DP", 1.0, budget)
                b.append(**_release(draw=worker * 1000 + i))
        except BudgetExceeded:
            return


def test_concurrent_releases_are_serialised_and_never_overspend(tmp_path):
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_release_under_budget, args=(tmp_path, w, 40, 50.0)) for w in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    led = Ledger("feedbeef", "remove", folder=tmp_path)
    recs = led.records()  # the chain verifies: no line interleaved or lost
    assert len(recs) == 51 and led.total() == pytest.approx(50.0)
    assert np.all(np.diff([r["seq"] for r in recs]) == 1)

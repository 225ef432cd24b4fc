"""The release ledger: records, the strict-DP total, aDP listed apart, budget, concurrent appends."""

from __future__ import annotations

import json
import multiprocessing as mp
import time

import pytest

from dpsynth.ledger import LEDGER_FIELDS, BudgetExceeded, Ledger
from dpsynth.validation import DataError


def record(guarantee: str = "DP", eps: float = 1.0, draw: int = 0, new_spend: float | None = None, **kw) -> dict:
    rec = dict(mechanism="censor_uw", name="Censor_uw", guarantee=guarantee, eps=eps, eps_replace=2 * eps, draw=draw,
               output="out.csv", synthesizer="abc", new_spend=eps if new_spend is None else new_spend)
    rec.update(kw)
    return rec


def test_total_sums_strict_dp_only(tmp_path):
    led = Ledger(tmp_path / "l.jsonl")
    assert led.records() == [] and led.total() == 0.0
    led.append(**record(eps=1.0, draw=0))
    led.append(**record(eps=0.5, draw=1))
    led.append(**record(guarantee="aDP", eps=3.0, draw=2, name="Censor_w", mechanism="censor_w"))
    led.append(**record(guarantee="none", eps=7.0, draw=3, name="Unweighted", mechanism="unweighted"))
    led.append(**record(eps=1.0, draw=0, new_spend=0.0))  # the same draw again: post-processing, no new spend
    assert led.total() == pytest.approx(1.5)
    assert led.total_replace() == pytest.approx(3.0)
    assert [r["name"] for r in led.adp_records()] == ["Censor_w"]
    assert len(led.dp_records()) == 3
    text = led.summary()
    assert "total eps = 1.5" in text and "aDP (not summed" in text and "not private: Unweighted" in text
    rec = led.records()[0]
    assert tuple(rec) == LEDGER_FIELDS and rec["relation"] == "remove" and rec["time"].endswith("+00:00")


def test_budget_refuses_and_writes_nothing(tmp_path):
    led = Ledger(tmp_path / "l.jsonl")
    led.append(**record(eps=1.0))
    before = led.path.read_bytes()
    with led.locked() as book:
        book.check_budget("DP", 1.0, 2.0)  # exactly at the budget: allowed
        with pytest.raises(BudgetExceeded, match="total 2.5 > budget 2"):
            book.check_budget("DP", 1.5, 2.0)
        with pytest.raises(BudgetExceeded, match="strict-DP releases only"):
            book.check_budget("aDP", 1.0, 10.0)
        with pytest.raises(DataError, match="`budget`"):
            book.check_budget("DP", 1.0, -1.0)
        book.check_budget("aDP", 1.0, None)  # no budget: anything goes
    assert led.path.read_bytes() == before


def test_corrupted_line_is_reported(tmp_path):
    p = tmp_path / "l.jsonl"
    p.write_text(json.dumps(record()) + "\n{not json\n")
    with pytest.raises(DataError, match="line 2 is not a JSON record"):
        Ledger(p).records()


def test_missing_field_is_refused(tmp_path):
    rec = record()
    del rec["draw"]
    with pytest.raises(DataError, match="draw"):
        Ledger(tmp_path / "l.jsonl").append(**rec)


def _append_many(path: str, worker: int, k: int) -> None:
    led = Ledger(path)
    for i in range(k):
        # long fields make a torn or interleaved write visible as an unparsable line
        led.append(**record(draw=worker * 10_000 + i, output=f"w{worker}-{i}-" + "x" * 2000))


def test_concurrent_appends_do_not_corrupt(tmp_path):
    path = str(tmp_path / "l.jsonl")
    k = 200
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_append_many, args=(path, w, k)) for w in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    recs = Ledger(path).records()  # every line parses
    assert len(recs) == 2 * k
    assert sorted(r["draw"] for r in recs) == sorted(w * 10_000 + i for w in range(2) for i in range(k))
    assert Ledger(path).total() == pytest.approx(2 * k)


def _release_under_budget(path: str, worker: int, k: int, budget: float) -> None:
    led = Ledger(path)
    for i in range(k):
        try:
            with led.locked() as book:
                book.check_budget("DP", 1.0, budget)
                time.sleep(0.002)  # a release samples and writes its output between the check and the append
                book.append(**record(draw=worker * 10_000 + i))
        except BudgetExceeded:
            pass


def test_concurrent_budget_checks_never_overspend(tmp_path):
    # the budget check and the append happen under one lock: two processes racing to spend
    # 2 x 40 releases of eps 1 under a budget of 50 stop at exactly 50
    path = str(tmp_path / "l.jsonl")
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_release_under_budget, args=(path, w, 40, 50.0)) for w in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert len(Ledger(path).records()) == 50 and Ledger(path).total() == pytest.approx(50.0)

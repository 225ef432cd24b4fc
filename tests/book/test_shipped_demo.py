"""Shipped demonstrations: run live, written with their parameters, or read back (never with other parameters)."""

from __future__ import annotations

import json

import pytest

from dpsynth_book.result_files import ShippedResultsError
from dpsynth_book.shipped_demo import demo_path, run_or_load


def _counting():
    calls = []

    def run():
        calls.append(1)
        return {"printed": f"run {len(calls)}"}

    return calls, run


def test_off_runs_live_and_writes_nothing(tmp_path):
    calls, run = _counting()
    d = run_or_load("x", {"a": 1}, run, mode="off", folder=tmp_path)
    assert d.live and d.output == {"printed": "run 1"} and calls == [1]
    assert "when this page was built" in d.when()
    assert not demo_path("x", tmp_path).exists()


def test_write_then_use_reads_what_was_printed_without_running(tmp_path):
    calls, run = _counting()
    run_or_load("x", {"a": 1, "steps": [["fit", "f.csv"]]}, run, mode="write", folder=tmp_path)
    stored = json.loads(demo_path("x", tmp_path).read_text())
    assert stored["output"] == {"printed": "run 1"} and stored["provenance"]["created"]
    d = run_or_load("x", {"a": 1, "steps": [["fit", "f.csv"]]}, run, mode="use", folder=tmp_path)
    assert not d.live and d.output == {"printed": "run 1"} and calls == [1]
    assert stored["provenance"]["created"][:10] in d.when()


def test_use_refuses_a_missing_file_or_other_parameters(tmp_path):
    calls, run = _counting()
    with pytest.raises(ShippedResultsError, match="make results"):
        run_or_load("x", {"a": 1}, run, mode="use", folder=tmp_path)
    run_or_load("x", {"a": 1}, run, mode="write", folder=tmp_path)
    with pytest.raises(ShippedResultsError, match="other parameters"):
        run_or_load("x", {"a": 2}, run, mode="use", folder=tmp_path)
    assert calls == [1]


def test_the_own_data_demonstrations_are_shipped_for_the_paper_scale():
    """The book (results "use") reads both demonstrations: made with the chapter's parameters, the CLI
    one shows the fit and the first release succeeding and the second refused by the budget."""
    from dpsynth_book.experiments.own_data import Params, demo

    p = Params.preset("paper")
    api = demo.api_demo(p, mode="use")
    assert api.output["records"] == demo.DEMO_RECORDS and "strict DP" in api.output["statement"]
    cli = demo.cli_demo(p, mode="use")
    codes = [s["returncode"] for s in cli.output["steps"]]
    assert codes == [0, 0, 2, 0], codes
    assert "refused" in cli.output["steps"][2]["shown"]
    assert "/tmp" not in demo.cli_markdown(cli)


def test_the_own_data_demonstrations_fit_the_text_column():
    """What the page shows of the demonstrations (code, printed lines, commands) is at most WIDTH characters a
    line, the width the book's text column holds in its code font, so no line is cut or wrapped mid-word."""
    from dpsynth_book.experiments.own_data import Params, demo

    p = Params.preset("paper")
    shown = [demo.api_code(), demo.api_text(demo.api_demo(p, mode="use")),
             demo.cli_markdown(demo.cli_demo(p, mode="use"))]
    long = [line for text in shown for line in text.splitlines() if len(line) > demo.WIDTH]
    assert not long, long
    assert demo.wrap_output("x " * 100, width=20).count("\n") >= 9

"""benchmarks/report.py renders BENCHMARKS.md from the records benchmarks/_record.py writes."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


report = load("report")
_record = load("_record")

MACHINE = {"cpu": "Test CPU 9000", "cores": 2, "ram_gib": 23.5, "python": "3.11.7",
           "os": "Debian GNU/Linux 12 (bookworm) (Linux 6.1)", "arch": "x86_64"}


def record(name: str, started: str, idle: bool, before: float, figures: list[dict], **extra) -> dict:
    return {"schema": 1, "benchmark": name, "script": f"benchmarks/{name}.py", "title": f"Title of {name}",
            "description": f"What {name} measures.", "command": [f"benchmarks/{name}.py"], "parameters": {},
            "started": started, "finished": started, "wall_seconds": 125.0, "machine": MACHINE,
            "git_commit": "abc1234", "git_dirty": False, "settle_seconds": 0.0,
            "load_average_before": [before, 0.4, 0.3], "load_average_after": [1.9, 1.2, 0.8],
            "other_cpu_cores": 0.02 if idle else 1.25,
            "idle": idle, "idle_rule": _record.idle_rule(2), "figures": figures, **extra}


@pytest.fixture
def rendered(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    refit = record("bench_refit", "2026-11-21T09:05:00+00:00", True, 0.32, [
        {"name": "refit, mean of 20", "value": 0.149, "unit": "s", "target": "< 0.5 s"},
        {"name": "censored records", "value": 3, "unit": "records"},
    ])
    paper = record("bench_paper_scale", "2026-11-22T17:40:00+01:00", False, 2.34, [
        {"name": "compile", "value": 12.5, "unit": "s", "group": "censoring"},
        {"name": "per replicate", "value": 4.25, "unit": "s", "group": "censoring"},
        {"name": "estimated", "value": 9.1, "unit": "min", "group": "all"},
    ], command=["benchmarks/bench_paper_scale.py", "--chapters", "censoring"])
    for rec in (refit, paper):
        (results / f"{rec['benchmark']}.json").write_text(json.dumps(rec))
    notes = tmp_path / "notes.md"
    notes.write_text("### A hand-kept note\n\nMeasured by hand on 23 November 2026.\n")
    out = tmp_path / "BENCHMARKS.md"
    report.main(["--results", str(results), "--notes", str(notes), "--out", str(out)])
    return out.read_text()


def test_one_dated_section_per_record(rendered):
    assert "## Title of bench_refit (`benchmarks/bench_refit.py`)" in rendered
    assert "## Title of bench_paper_scale (`benchmarks/bench_paper_scale.py`)" in rendered
    assert "21 November 2026, 09:05 UTC" in rendered
    assert "22 November 2026, 17:40 UTC+01:00" in rendered
    assert "2 min 5 s in all" in rendered


def test_machine_and_load(rendered):
    assert "Test CPU 9000, 2 cores, 23.5 GiB RAM, x86_64, Debian GNU/Linux 12 (bookworm) (Linux 6.1), " \
           "Python 3.11.7" in rendered
    assert "idle (load average 0.3 before the run, 1.9 after; other processes used 0.0 of 2 cores during it)" \
        in rendered
    assert "loaded (load average 2.3 before the run, 1.9 after; other processes used 1.2 of 2 cores during it)" \
        in rendered
    # each record's own state, in its own section
    refit, paper = (rendered.split("## Title of bench_refit")[1].split("## ")[0],
                    rendered.split("## Title of bench_paper_scale")[1].split("## ")[0])
    assert "idle (" in refit and "loaded (" not in refit
    assert "loaded (" in paper and "idle (" not in paper
    assert "below 0.5 per core" in rendered and "0.1 of each core" in rendered


def test_tables(rendered):
    assert "| Measure | Value | Target |" in rendered
    assert "| refit, mean of 20 | 0.149 s | < 0.5 s |" in rendered
    assert "| censored records | 3 records |  |" in rendered
    # grouped figures: one row per group, one column per figure
    assert "| | compile (s) | per replicate (s) | estimated (min) |" in rendered
    assert "| censoring | 12.5 | 4.25 |  |" in rendered
    assert "| all |  |  | 9.1 |" in rendered
    assert "Run as `benchmarks/bench_paper_scale.py --chapters censoring`." in rendered


def test_points_to_the_chapter_times_and_appends_the_notes(rendered):
    assert "notebooks/reproduce.ipynb" in rendered and "chapter_times" in rendered
    assert rendered.index("## Recorded by hand") > rendered.index("## Title of bench_refit")
    assert "Measured by hand on 23 November 2026." in rendered


def test_no_records(tmp_path):
    text = report.render([], None)
    assert "No benchmark records yet" in text and "Recorded by hand" not in text


def test_record_round_trip(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["bench_fake.py", "--small"])
    with _record.Record("benchmarks/bench_fake.py", "Fake", "A fake benchmark.", {"n": 3}, out_dir=tmp_path,
                        settle_seconds=0) as rec:
        rec.add("time", 1.5, "s", target="< 2 s")
        rec.add("rows", 7, "", group="a")
    data = json.loads((tmp_path / "bench_fake.json").read_text())
    assert data["benchmark"] == "bench_fake" and data["command"] == ["benchmarks/bench_fake.py", "--small"]
    assert set(data["machine"]) == {"cpu", "cores", "ram_gib", "python", "os", "arch"}
    assert len(data["load_average_before"]) == 3 and len(data["load_average_after"]) == 3
    assert data["idle"] == _record.is_idle(data["load_average_before"][0], data["other_cpu_cores"],
                                           data["machine"]["cores"])
    assert data["other_cpu_cores"] is None or data["other_cpu_cores"] >= 0
    assert data["figures"][0] == {"name": "time", "value": 1.5, "unit": "s", "target": "< 2 s"}
    text = report.render([data])
    assert "## Fake (`benchmarks/bench_fake.py`)" in text
    assert ("idle (load average" in text) == data["idle"]


def test_idle_rule():
    assert _record.is_idle(0.9, 0.1, 2) and _record.is_idle(0.9, None, 2)
    assert not _record.is_idle(1.0, 0.0, 2)  # load average before: 0.5 per core or more
    assert not _record.is_idle(0.2, 0.2, 2)  # others used 0.1 of each core or more during the run
    assert "0.5 per core" in _record.idle_rule(2) and "here 1 for 2 cores" in _record.idle_rule(2)


def test_failed_benchmark_writes_no_record(tmp_path):
    with pytest.raises(RuntimeError), _record.Record("bench_fail.py", "Fails", out_dir=tmp_path, settle_seconds=0):
        raise RuntimeError("boom")
    assert not (tmp_path / "bench_fail.json").exists()


def test_a_grouped_figure_names_its_unit_once():
    lines = report.figures_table([{"name": "fit (s)", "value": 1.5, "unit": "s", "group": "a"},
                                  {"name": "memory", "value": 2.0, "unit": "GiB", "group": "a"}])
    assert lines[0] == "| | fit (s) | memory (GiB) |"

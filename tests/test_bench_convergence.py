"""benchmarks/bench_convergence.py: its summarising functions on constructed fit records (no MCMC)."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def load(name: str):
    sys.path.insert(0, str(BENCH))  # the script imports its sibling _record
    try:
        spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCH))
    return module


bench = load("bench_convergence")
report = load("report")
_record = load("_record")


def fit(file="nmes1988", eps=1.0, seed=1, converged=True, retries=0, rhat=1.004, ess=600.0, div=0, cens=0.05,
        seconds=20.0, error=None) -> dict:
    if error is not None:
        return {"file": file, "eps": eps, "seed": seed, "error": error, "converged": False, "retries": 0, "log": [],
                "seconds": seconds}
    log = [f"the fit fit failed its checks (beta (R-hat 1.020, bulk ESS 150)); refitted with {2000 * 2**k} draws and "
           f"{2000 * 2**k} tuning steps per chain" for k in range(retries)]
    return {"file": file, "eps": eps, "seed": seed, "error": None, "converged": converged, "retries": retries,
            "log": log, "rhat_max": rhat, "ess_min": ess, "divergences": div, "censored_share": cens,
            "seconds": seconds}


@pytest.fixture
def fits():
    return [
        fit(seed=1, seconds=20.0), fit(seed=2, retries=1, rhat=1.008, seconds=50.0), fit(seed=3, seconds=22.0),
        fit(eps=5.0, seed=1, ess=420.0, cens=0.02, seconds=18.0),
        fit(eps=5.0, seed=2, converged=False, retries=2, rhat=1.05, ess=80.0, div=3, seconds=120.0),
        fit(eps=5.0, seed=3, error="DataError: boom", seconds=1.0),
        fit(file="fishing", seed=1, cens=0.096, seconds=40.0),
    ]


def test_parse_seeds():
    assert bench.parse_seeds("1-20") == list(range(1, 21))
    assert bench.parse_seeds("3") == [3]
    assert bench.parse_seeds("1,4,7-9,4") == [1, 4, 7, 8, 9]
    with pytest.raises(ValueError):
        bench.parse_seeds("5-2")
    with pytest.raises(ValueError):
        bench.parse_seeds(",")


def test_retries_of_counts_refits_only():
    log = ["the fit fit failed its checks (x); refitted with 2000 draws and 2000 tuning steps per chain",
           "the fit fit failed its checks (x); refitted with 4000 draws and 4000 tuning steps per chain",
           "the fit fit passed its checks after 2 retries"]
    assert bench.retries_of(log) == 2 and bench.retries_of([]) == 0


def test_summarise_one_row_per_file_and_eps(fits):
    rows = bench.summarise(fits)
    assert [(r["file"], r["eps"]) for r in rows] == [("nmes1988", 1.0), ("nmes1988", 5.0), ("fishing", 1.0)]
    a, b, c = rows
    assert (a["fits"], a["converged"], a["retried"], a["rescued"], a["retries"], a["errors"]) == (3, 3, 1, 1, 1, 0)
    assert a["rhat_max"] == 1.008 and a["ess_min"] == 600.0 and a["divergences"] == 0
    assert a["seconds_median"] == 22.0 and a["seconds_max"] == 50.0 and a["failed_seeds"] == []
    # a fit that raised counts as not converged and adds nothing to the diagnostics
    assert (b["fits"], b["converged"], b["retried"], b["rescued"], b["errors"]) == (3, 1, 1, 0, 1)
    assert b["failed_seeds"] == [2, 3]
    assert b["rhat_max"] == 1.05 and b["ess_min"] == 80.0 and b["divergences"] == 3
    assert b["censored_share_max"] == 0.05 and b["seconds_median"] == 69.0
    assert (c["fits"], c["converged"], c["censored_share_max"]) == (1, 1, 0.096)


def test_summarise_every_fit_raised():
    (row,) = bench.summarise([fit(error="RuntimeError: x"), fit(seed=2, error="RuntimeError: y")])
    assert row["converged"] == 0 and row["errors"] == 2 and row["failed_seeds"] == [1, 2]
    assert math.isnan(row["rhat_max"]) and math.isnan(row["seconds_median"])


def test_verdict_and_headline(fits):
    a, b, c = bench.summarise(fits)
    assert bench.verdict(a) == "3/3 converged, 1 needed a retry"
    assert bench.verdict(b) == "1/3 converged, 1 needed a retry (0 of them converged after it); " \
                               "not converged: seed(s) 2, 3 (1 raised)"
    assert bench.verdict(c) == "1/1 converged, none needed a retry"
    full = bench.summarise([fit(file=f, eps=e, seed=s) for f in ("a", "b", "c") for e in (1.0, 5.0)
                            for s in range(1, 21)])
    assert bench.headline(full) == "120 of 120 default fits converged (3 files x 2 eps x 20 seeds); 0 needed a retry"


def test_table(fits):
    text = bench.table(bench.summarise(fits))
    lines = text.splitlines()
    assert lines[0].split() == ["file", "eps", "converged", "retried", "R-hat", "max", "ESS", "min", "div",
                                "censored", "median", "s"]
    assert lines[2].split() == ["nmes1988", "1", "3/3", "1", "1.008", "600", "0", "5.0%", "22.0"]
    assert lines[3].split() == ["nmes1988", "5", "1/3", "1", "1.050", "80", "3", "5.0%", "69.0"]


def test_record_renders_one_row_per_file_and_eps(fits, tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["bench_convergence.py", "--seeds", "1-3"])
    rows = bench.summarise(fits)
    with _record.Record("benchmarks/bench_convergence.py", "Default fits converge", "What it measures.",
                        out_dir=tmp_path, settle_seconds=0) as rec:
        bench.add_figures(rec, rows)
        rec.data["fits"] = fits
    data = json.loads((tmp_path / "bench_convergence.json").read_text())
    assert len(data["fits"]) == len(fits)
    text = report.render([data])
    assert "| | converged | needed a retry | worst R-hat | min bulk ESS | divergences | most censored | " \
           "median fit (s) |" in text
    assert "| nmes1988, eps = 1 | 3/3 | 1 | 1.008 | 600 | 0 | 5.0% | 22.0 |" in text
    assert "| nmes1988, eps = 5 | 1/3 | 1 | 1.05 | 80 | 3 | 5.0% | 69.0 |" in text
    assert "| fishing, eps = 1 | 1/1 | 0 | 1.004 | 600 | 0 | 9.6% | 40.0 |" in text

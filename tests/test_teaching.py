"""dpsynth.teaching: the chapters' quick-scale times read from the benchmark record."""

from __future__ import annotations

import json

import pytest

from dpsynth import teaching


def _record(tmp_path, figures, **kw):
    rec = {"schema": 1, "started": "2026-11-25T13:00:00+00:00", "machine": {"cpu": "Xeon", "cores": 2},
           "load_average_before": [0.3, 0.2, 0.1], "idle": True, "figures": figures, **kw}
    p = tmp_path / "bench_quick_scale.json"
    p.write_text(json.dumps(rec), encoding="utf-8")
    return p


def test_times_per_chapter_in_the_record_order(tmp_path):
    p = _record(tmp_path, [{"name": "quick scale (s)", "value": 90.0, "unit": "s", "group": "tutorial"},
                           {"name": "quick scale (s)", "value": 30.0, "unit": "s", "group": "censoring"}])
    df, where = teaching.quick_scale_times(p)
    assert list(df.index) == ["tutorial", "censoring"]
    assert df.loc["tutorial", "minutes"] == pytest.approx(1.5)
    assert "25 November 2026" in where and "Xeon, 2 cores" in where and "idle" in where


def test_a_loaded_run_says_so(tmp_path):
    p = _record(tmp_path, [{"name": "quick scale (s)", "value": 1.0, "unit": "s", "group": "tutorial"}], idle=False,
                load_average_before=[2.5, 1, 1])
    assert "loaded: load average 2.5" in teaching.quick_scale_times(p)[1]


def test_missing_or_empty_record_says_how_to_make_it(tmp_path):
    with pytest.raises(FileNotFoundError, match="bench_quick_scale.py"):
        teaching.quick_scale_times(tmp_path / "none.json")
    with pytest.raises(ValueError, match="no chapter times"):
        teaching.quick_scale_times(_record(tmp_path, [{"name": "x", "value": 1.0, "unit": "s"}]))


def test_the_shipped_record_covers_every_chapter_of_the_book():
    """The teaching page's times come from benchmarks/results/bench_quick_scale.json: one per toc chapter."""
    import re

    from dpsynth.paths import project_root

    root = project_root()
    toc = (root / "_toc.yml").read_text(encoding="utf-8")
    names = re.findall(r"^[^#\n]*(?:root|file):\s*book/([A-Za-z0-9_.-]+)", toc, flags=re.M)
    chapters = [n for n in names if (root / "notebooks" / f"{n}.ipynb").exists()]
    times, _ = teaching.quick_scale_times()
    assert set(chapters) <= set(times.index) | {"teaching"}, sorted(set(chapters) - set(times.index))
    assert (times["seconds"] > 0).all()

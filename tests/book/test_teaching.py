"""dpsynth_book.teaching: the chapters' quick-scale times read from the benchmark record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dpsynth_book import teaching


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

    from dpsynth_book.paths import project_root

    root = project_root()
    toc = (root / "_toc.yml").read_text(encoding="utf-8")
    names = re.findall(r"^[^#\n]*(?:root|file):\s*book/([A-Za-z0-9_.-]+)", toc, flags=re.M)
    chapters = [n for n in names if (root / "notebooks" / f"{n}.ipynb").exists()]
    times, _ = teaching.quick_scale_times()
    assert set(chapters) <= set(times.index) | {"teaching"}, sorted(set(chapters) - set(times.index))
    assert (times["seconds"] > 0).all()


def test_odds_table_bounds_the_observers_odds():
    import numpy as np

    t = teaching.odds_table((1.0, 2.0), prior=0.5)
    assert t.loc[1.0, "odds multiplied by at most"] == pytest.approx(np.e)
    assert t.loc[1.0, "from 50% to at most"] == pytest.approx(np.e / (1 + np.e))
    assert t.index.name == "ε"
    with pytest.raises(ValueError, match="`eps_values`"):
        teaching.odds_table((0.0, 1.0))
    with pytest.raises(ValueError, match="`prior`"):
        teaching.odds_table((1.0,), prior=1.0)


def test_the_clamp_keeps_the_log_ratio_within_eps_and_without_it_it_is_not():
    import numpy as np

    x = np.random.default_rng(3).gamma(2.0, 1.0, size=300)
    for eps in (1.0, 6.0):
        d = teaching.clamp_demo(x, eps, 2.0)
        assert np.all(np.abs(d["log_ratio_clamped"]) <= eps + 1e-9)  # the window argument, exactly on the grid
        assert np.max(np.abs(d["log_ratio"])) > eps  # the largest record's term alone is not bounded
        assert d["removed"] == x.max() and d["M"] == eps / 2 and d["n"] == 300
    with pytest.raises(ValueError, match="`x`"):
        teaching.clamp_demo([1.0, -2.0, 3.0], 1.0, 2.0)
    with pytest.raises(ValueError, match="`eps`"):
        teaching.clamp_demo(x, 0.0, 2.0)


def test_clamp_figure_is_legible():
    import matplotlib

    matplotlib.use("Agg")
    import numpy as np

    from dpsynth_book import book, plots

    plots.use_style()
    axes = teaching.clamp_figure(teaching.clamp_demo(np.random.default_rng(1).gamma(2.0, 1.0, 200), 6.0, 2.0))
    assert len(axes) == 2 and book.smallest_text_px(axes[0].figure) >= book.MIN_TEXT_PX


def test_route_and_environment_times_from_their_records(tmp_path):
    route = {"started": "2026-11-26T15:00:00+00:00", "machine": {"cpu": "Xeon", "cores": 2}, "n": 500,
             "load_average_before": [2.5, 1, 1], "load_average_after": [3.0, 1, 1],
             "sections": [{"section": "Start", "seconds": 3.0}, {"section": "A release", "seconds": 8.5}]}
    p = tmp_path / "route.json"
    p.write_text(json.dumps(route), encoding="utf-8")
    df, where = teaching.route_times(p)
    assert list(df.index) == ["Start", "A release"] and df.loc["A release", "seconds"] == 8.5
    assert "26 November 2026" in where and "n = 500" in where and "load average 2.5" in where
    env = {"started": "2026-11-26T15:00:00+00:00", "python": "3.11.7", "machine": {"cpu": "Xeon", "cores": 2},
           "caches": "empty", "load_average_before": [0.3], "steps": [{"task": "venv", "what": "x", "seconds": 47.0}]}
    q = tmp_path / "env.json"
    q.write_text(json.dumps(env), encoding="utf-8")
    df, where = teaching.env_build_times(q)
    assert df.loc["venv", "seconds"] == 47.0 and "Python 3.11.7" in where
    with pytest.raises(FileNotFoundError, match="measure_route.py"):
        teaching.route_times(tmp_path / "none.json")
    with pytest.raises(FileNotFoundError, match="measure_env.py"):
        teaching.env_build_times(tmp_path / "none.json")


def test_the_shipped_route_record_covers_every_section_of_the_tutorial():
    """The teaching page's route times come from lab/route-times.json: one per ## section of the tutorial."""
    import re

    from dpsynth_book.paths import project_root

    nb = json.loads((project_root() / "notebooks" / "tutorial.ipynb").read_text(encoding="utf-8"))
    headings = [m.group(1).strip() for c in nb["cells"] if c["cell_type"] == "markdown"
                for m in re.finditer(r"^##\s+(.+)$", "".join(c["source"]), flags=re.M)]
    times, _ = teaching.route_times()
    assert list(times.index) == ["Start", *headings], "re-run lab/measure_route.py after changing the tutorial"
    assert times["seconds"].sum() > 0
    env, _ = teaching.env_build_times()
    assert set(env.index) == {"venv", "lab-env"} and (env["seconds"] > 0).all()


#: Terms of the tutorial a reader who knows regression has not met: each is defined (set in bold) where it first
#: appears in the page's text.
TUTORIAL_TERMS = ("synthesizer", "neighbours", "odds bound", "record term", "clamp", "censors", "Lipschitz",
                  "by-record bound", "local", "aDP", "LW", "Censor_uw", "Censor_w", "Censor_w-pub", "R-hat", "ESS",
                  "divergence", "violin", "ledger", "Censor_ref")


def test_the_tutorial_defines_each_term_where_it_first_appears():
    """Every term of :data:`TUTORIAL_TERMS` first appears in the tutorial's prose inside its bold definition."""
    import re

    import nbformat

    nb = nbformat.read(Path(__file__).resolve().parents[2] / "notebooks" / "tutorial.ipynb", as_version=4)
    text = "\n".join(line for c in nb.cells if c.cell_type == "markdown" for line in c.source.splitlines()
                     if not line.startswith(("#", ":::", "```", "(")))  # prose: no headings, fences or labels
    undefined = []
    for term in TUTORIAL_TERMS:
        first = re.search(rf"(?<![\w-]){re.escape(term)}(?![\w-])", text)
        assert first, f"{term!r} is not in the tutorial"
        before, after = text[:first.start()], text[first.end():]
        in_bold = before.count("**") % 2 == 1 and "**" in after
        if not in_bold:
            undefined.append(f"{term}: ...{text[max(0, first.start() - 60):first.end() + 30]!r}")
    assert not undefined, undefined

"""dpsynth_book.teaching: the chapters' quick-scale times read from the benchmark record; the tutorial's helpers."""

from __future__ import annotations

import json
import os
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
    def measurement(day, load, first, again):
        return {"started": f"2026-11-{day}T15:00:00+00:00", "machine": {"cpu": "Xeon", "cores": 2},
                "load_average_before": [2.5, 1, 1], "load_during": {"mean": load, "max": load + 1, "samples": 20},
                "runs": [{"run": "first", "sections": [{"section": "Start", "seconds": 3.0},
                                                       {"section": "A release", "seconds": first}]},
                         {"run": "exercise", "sections": [{"section": "A release", "seconds": again}]}]}

    route = {"schema": 3, "n": 500, "measurements": [measurement(26, 3.1, 8.5, 6.0)]}
    p = tmp_path / "route.json"
    p.write_text(json.dumps(route), encoding="utf-8")
    df, where = teaching.route_times(p)
    assert list(df.index) == ["Start", "A release"] and df.loc["A release", "first run (s)"] == 8.5
    assert df.loc["A release", "re-run (s)"] == 6.0 and df["re-run (s)"].isna().sum() == 1
    assert "26 November 2026" in where and "n = 500" in where and "make lab" in where
    assert "load average 2.5 before the run, 3.1 on average during it (at most 4.1)" in where
    route["measurements"].append(measurement(27, 6.0, 12.5, 8.0))  # the same tutorial under another load
    p.write_text(json.dumps(route), encoding="utf-8")
    df, where = teaching.route_times(p)
    assert df.loc["A release", "first run (s)"] == 10.5 and df.attrs["totals"] == {"first": [11.5, 15.5],
                                                                                  "re-run": [6.0, 8.0]}
    assert "2 measurements" in where and "from 3.1 to 6.0" in where and "26 November 2026 and 27" in where
    env = {"started": "2026-11-26T15:00:00+00:00", "python": "3.11.7", "machine": {"cpu": "Xeon", "cores": 2},
           "from": "a fresh clone", "caches": "empty", "load_average_before": [0.3],
           "disk_gib": {"venv": 1.1}, "steps": [{"task": "venv", "what": "x", "seconds": 47.0}]}
    q = tmp_path / "env.json"
    q.write_text(json.dumps(env), encoding="utf-8")
    df, where = teaching.env_build_times(q)
    assert df.loc["venv", "seconds"] == 47.0 and df.attrs["disk_gib"] == {"venv": 1.1}
    assert "Python 3.11.7" in where and "a fresh clone" in where and "load average 0.3 before the run" in where
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
    assert times["first run (s)"].sum() > 0 and times["re-run (s)"].sum() > 0
    env, _ = teaching.env_build_times()
    assert set(env.index) == {"venv", "lab-env", "lab"} and (env["seconds"] > 0).all()


#: Terms of the tutorial a reader who knows regression has not met: each is defined (set in bold) where it first
#: appears in the page's text.
TUTORIAL_TERMS = ("synthesizer", "neighbours", "odds bound", "record term", "clamp", "censors", "Lipschitz",
                  "by-record bound", "local", "aDP", "LW", "Censor_uw", "Censor_w", "Censor_w-pub", "R-hat", "ESS",
                  "divergence", "violin", "ledger", "Censor_ref", "research mode", "budget line", "calibration", "pMSE")


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


# --------------------------------------------------------------------------------------------------
# the tutorial's reading of its table: one draw is noisy; the window against the record terms
# --------------------------------------------------------------------------------------------------


def _result(cm, x, name, mu, sigma):
    """A mechanism's result whose posterior draws are given: ``mu`` and ``sigma`` of the lognormal, 200 draws."""
    from types import SimpleNamespace

    import numpy as np
    from fit_helpers import fit_from_draws

    rng = np.random.default_rng(0)
    fit = fit_from_draws(cm, x, {"mu": mu + 0.01 * rng.standard_normal(200), "sigma": np.full(200, sigma)})
    return SimpleNamespace(fit=fit, name=name, label=f"{name} (x)",
                           privacy=SimpleNamespace(eps=1.0, eps_replace=2.0, guarantee="DP"))


def test_ecdf_spread_gives_each_mechanisms_median_and_range_over_draws(lognormal_cm):
    import numpy as np

    x = np.exp(np.random.default_rng(1).normal(0.0, 1.0, 50))
    lognormal_cm.record_loglik({"mu": np.zeros(1), "sigma": np.ones(1)}, x)  # the compiled model takes these data
    good, bad = _result(lognormal_cm, x, "good", 0.0, 1.0), _result(lognormal_cm, x, "bad", 2.0, 1.0)
    spread = teaching.ecdf_spread([good, bad], x, seed=3, releases=15)
    assert list(spread.index) == ["good (x)", "bad (x)"] and spread.index.name == "synthesizer"
    assert (spread["low"] <= spread["median"]).all() and (spread["median"] <= spread["high"]).all()
    assert spread.loc["bad (x)", "low"] > spread.loc["good (x)", "high"]  # a shifted model is further at every draw
    assert spread.equals(teaching.ecdf_spread([good, bad], x, seed=3, releases=15))  # research mode: reproducible
    with pytest.raises(ValueError, match="`releases`"):
        teaching.ecdf_spread([good], x, seed=3, releases=1)


def test_censoring_cost_says_further_only_when_the_ranges_do_not_overlap():
    import pandas as pd

    def spread(u, uw, pub):
        return pd.DataFrame([u, uw, pub], index=["U", "UW", "PUB"], columns=["median", "low", "high"])

    counts = {"U": 0, "UW": 79, "PUB": 0}
    names = {"censored": "UW", "unweighted": "U", "public": "PUB"}
    apart = teaching.censoring_cost(spread((0.05, 0.03, 0.07), (0.2, 0.15, 0.25), (0.1, 0.08, 0.12)), counts, **names)
    assert apart["uw-vs-u"] == "further" and apart["pub-vs-uw"] == "closer"
    assert "costs utility" in apart["verdict"] and "fewer records than Censor_uw (0 against 79)" in apart["verdict"]
    close = teaching.censoring_cost(spread((0.05, 0.03, 0.09), (0.11, 0.08, 0.15), (0.1, 0.06, 0.13)), counts, **names)
    assert close["uw-vs-u"] == "overlap" and close["pub-vs-uw"] == "overlap"
    assert "either way" in close["verdict"] and "within one draw's luck" in close["verdict"]
    more = teaching.censoring_cost(spread((0.05, 0.03, 0.09), (0.11, 0.08, 0.15), (0.3, 0.2, 0.4)),
                                   {"U": 0, "UW": 3, "PUB": 9}, **names)
    assert more["pub-vs-uw"] == "further" and "censors more records than Censor_uw (9 against 3)" in more["verdict"]
    same = teaching.censoring_cost(spread((0.05, 0.03, 0.09), (0.5, 0.4, 0.6), (0.5, 0.4, 0.6)),
                                   {"U": 0, "UW": 500, "PUB": 500}, **names)
    assert "censors as many records as Censor_uw (500 against 500)" in same["verdict"]


def test_window_reach_is_the_largest_record_term_of_the_fit(lognormal_cm):
    import numpy as np
    from fit_helpers import fit_from_draws

    x = np.exp(np.random.default_rng(2).normal(0.0, 1.0, 50))
    fit = fit_from_draws(lognormal_cm, x, {"mu": np.zeros(5), "sigma": np.linspace(0.5, 2.0, 5)})
    reach = teaching.window_reach(fit)
    assert reach["top"] == pytest.approx(float(fit.loglik().max()))
    assert reach["eps_all"] == pytest.approx(max(0.0, -2 * reach["top"]))
    # a window narrower than eps_all lies above every term at every draw: every record is censored
    M = reach["eps_all"] / 2 * 0.99
    assert reach["top"] < -M or reach["eps_all"] == 0


# --------------------------------------------------------------------------------------------------
# the tutorial's files: a temporary home, removed when the kernel ends; the lab's folder for the report
# --------------------------------------------------------------------------------------------------


def test_class_files_make_a_new_quiet_home_each_run_and_remove_it_at_exit(tmp_path, monkeypatch):
    import subprocess
    import sys
    import warnings

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NewHomeWarning: the page makes its home on purpose
        first = teaching.class_files("tutorial", in_lab=False)
    assert first.home.parent == tmp_path and first.work.parent == tmp_path and first.work.is_absolute()
    assert os.environ["DPSYNTH_HOME"] == str(first.home) and any(first.home.iterdir())  # its key
    assert oct(first.home.stat().st_mode & 0o777) == "0o700"
    second = teaching.class_files("tutorial", in_lab=False)  # a re-run: a new, empty home; the last one is gone
    assert second.home != first.home and not first.home.exists() and not first.work.exists()
    teaching.remove_class_files()
    assert not second.home.exists() and not second.work.exists()
    # a kernel that ends removes its folders (atexit), and one killed leaves them to the next run
    code = ("from dpsynth_book import teaching; f = teaching.class_files('tutorial', in_lab=False); "
            "print(f.home)")
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    home = Path(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                               check=True).stdout.strip())
    assert home.parent == tmp_path and not home.exists()
    stale = tmp_path / "dpsynth-tutorial-home-999999999-abc"
    stale.mkdir()
    teaching.class_files("tutorial", in_lab=False)
    assert not stale.exists()
    teaching.remove_class_files()


def test_in_the_lab_the_files_go_beside_the_notebook_and_are_emptied_each_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr("tempfile.tempdir", None)
    files = teaching.class_files("tutorial", in_lab=True)
    assert files.work == Path("tutorial-files") and (tmp_path / "tutorial-files").is_dir()
    (files.work / "release1.csv").write_text("x\n")
    again = teaching.class_files("tutorial", in_lab=True)
    assert not (again.work / "release1.csv").exists()  # a re-run writes its release again
    teaching.remove_class_files()
    assert (tmp_path / "tutorial-files").is_dir()  # the lab's folder stays for the student; the home does not
    assert not again.home.exists()
    (tmp_path / "mine-files").mkdir()
    with pytest.raises(FileExistsError, match="not made by this page"):
        teaching.class_files("mine", in_lab=True)
    teaching.remove_class_files()


def test_a_page_prints_a_lab_path_as_the_file_browser_shows_it_and_never_a_temporary_folder(tmp_path):
    from pathlib import Path

    from dpsynth_book.teaching import ClassFiles

    lab = ClassFiles(work=Path("tutorial-files"), home=tmp_path / "home", in_lab=True)
    assert lab.shown(Path("tutorial-files") / "report1" / "report.html") == "tutorial-files/report1/report.html"
    book = ClassFiles(work=tmp_path / "work", home=tmp_path / "home", in_lab=False)
    shown = book.shown(tmp_path / "work" / "report1" / "report.html")
    assert shown.startswith("report1/report.html") and str(tmp_path) not in shown and "/tmp/" not in shown

"""Measure the 90-minute route of "Teaching with this book" as a class runs it: in the lab, cell by cell.

Starts ``make lab`` (``lab/lab_browser.py``) with an empty home (no PyTensor, Numba or Matplotlib cache:
a student's first run after the set-up), opens the tutorial in headless Chromium and presses Shift+Enter
once per cell, as the route says, timing each cell from the key press until it has run. Then it does
what exercise 1 asks (``eps = 4.0`` in "Your settings", then Shift+Enter from that cell to the end): the
time of a re-run. Adds a measurement to ``lab/route-times.json`` (which keeps the measurements of the
same tutorial, so that a machine's changing load shows as a range): the kernel's start, each section's
seconds in both runs, the date, the commit, the machine and its load (the 1-minute load average before,
after, and every 5 s during the runs), whether the page showed a placeholder, and whether ``git status``
was clean after the class; ``dpsynth_book.teaching.route_times`` reads it for the teaching page. Run it
from the repository root after changing the tutorial (``--fresh`` drops the earlier measurements)::

    .venv/bin/python lab/measure_route.py                        # this checkout's lab, a temporary lab-work/
    .venv/bin/python lab/measure_route.py --repo /tmp/x/clone --home /tmp/x/home   # after measure_env.py --keep
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "lab" / "route-times.json"
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "lab"))

from _record import load_average, machine  # noqa: E402  (the benchmarks' machine description)
from measure_env import LoadSampler, fresh_environment  # noqa: E402

#: The exercise whose re-run is timed: its setting, as the student types it.
EXERCISE = ("eps = 6.0", "eps = 4.0", "exercise 1: eps = 4.0 in Your settings, then Shift+Enter from that cell "
            "to the end")
#: What the page may not show once every cell has run.
PLACEHOLDER = re.compile(r"run the cells above|not shown yet|\{glue:|\{eval\}`")


def sections(rows: list[dict], start: float = 0.0) -> list[dict]:
    """``[{"section", "seconds", "cells"}]`` in the tutorial's order, from :meth:`NotebookPage.run_cell_by_cell`'s
    rows (cells before the first heading, and ``start`` seconds, count as "Start")."""
    out: dict[str, dict] = {}
    if start:
        out["Start"] = {"section": "Start", "seconds": start, "cells": 0}
    for r in rows:
        name = r["section"] or "Start"
        s = out.setdefault(name, {"section": name, "seconds": 0.0, "cells": 0})
        s["seconds"] += r["seconds"]
        s["cells"] += 1
    return [dict(s, seconds=round(s["seconds"], 1)) for s in out.values()]


def main(argv: list | None = None) -> int:
    from lab_browser import DevTools, LabServer, NotebookPage, find_chromium

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, default=None, help="the checkout whose `make lab` runs (default: this "
                        "one, serving a temporary lab-work/)")
    parser.add_argument("--home", type=Path, default=None, help="HOME of the run (default: a new, empty one)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--fresh", action="store_true", help="drop the record's earlier measurements")
    args = parser.parse_args(argv)
    chromium = find_chromium()
    if chromium is None:
        print("Chromium is needed (Debian: apt-get install chromium)", file=sys.stderr)
        return 1
    folder = Path(tempfile.mkdtemp(prefix="dpsynth-measure-route-"))
    repo = (args.repo or REPO).resolve()
    work = repo / "lab-work" if args.repo else folder / "lab-work"
    env = fresh_environment(args.home.resolve() if args.home else folder / "home")
    (work / "tutorial.ipynb").unlink(missing_ok=True)  # a first run starts from the book's notebook, as copied
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    before, started = load_average(), dt.datetime.now(dt.UTC).astimezone().isoformat(timespec="seconds")
    server = LabServer(folder / "server", repo / ".venv", work=work, repo=repo, environ=env,
                       extra=["--LabApp.expose_app_in_browser=True"],
                       settings={"@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"}})
    browser, runs = None, []
    with LoadSampler() as loads:
        try:
            server.wait(timeout=900)
            browser = DevTools(chromium, folder / "profile")
            page = NotebookPage(browser, server, "tutorial.ipynb")
            kernel = round(page.kernel_ready - page.opened, 1)
            first = page.run_cell_by_cell()
            text = page.text()
            runs.append({"run": "first", "what": "the whole tutorial, cell by cell with Shift+Enter, in a new kernel "
                         "with an empty home", "seconds": round(kernel + sum(r["seconds"] for r in first), 1),
                         "sections": sections(first, kernel)})
            idx = next(i for i in range(page.count()) if page.cell(i)["type"] == "code" and browser.js(
                f"[...jupyterapp.shell.widgets('main')].find(w => w.content && w.content.widgets).content.widgets[{i}]"
                f".model.sharedModel.getSource().includes({json.dumps(EXERCISE[0])})"))
            browser.js(f"(() => {{ const m = [...jupyterapp.shell.widgets('main')].find(w => w.content && "
                       f"w.content.widgets).content.widgets[{idx}].model.sharedModel; m.setSource(m.getSource()"
                       f".replace({json.dumps(EXERCISE[0])}, {json.dumps(EXERCISE[1])})); return true; }})()")
            again = page.run_cell_by_cell(start=idx)
            runs.append({"run": "exercise", "what": EXERCISE[2], "seconds": round(sum(r["seconds"] for r in again), 1),
                         "sections": sections(again)})
            page.save()
        finally:
            if browser is not None:
                browser.close()
            server.stop()
    n = re.search(r"n = ([\d,]+) records", text)
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout
    notebook = hashlib.sha256((repo / "notebooks" / "tutorial.ipynb").read_bytes()).hexdigest()
    measurement = {"started": started, "commit": commit, "home": "empty (no PyTensor, Numba or Matplotlib cache)",
                   "machine": machine(), "load_average_before": before, "load_average_after": load_average(),
                   "load_during": loads.summary(), "kernel_start_seconds": kernel, "runs": runs,
                   "placeholders": len(PLACEHOLDER.findall(text)), "git_status_clean": status == ""}
    try:
        old = json.loads(args.out.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        old = {}
    kept = [] if args.fresh or old.get("schema") != 3 or old.get("notebook_sha256") != notebook else old["measurements"]
    record = {"schema": 3, "script": "lab/measure_route.py", "notebook": "notebooks/tutorial.ipynb",
              "notebook_sha256": notebook, "scale": "quick", "n": int(n.group(1).replace(",", "")) if n else None,
              "how": "make lab, headless Chromium, Shift+Enter once per cell; each cell timed from the key press "
                     "until it had run", "measurements": [*kept, measurement]}
    args.out.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    for run in runs:
        print(f"== {run['run']}: {run['what']}")
        for s in run["sections"]:
            print(f"{s['seconds']:7.1f} s  {s['section']}")
        print(f"{run['seconds']:7.1f} s  in all")
    print(f"load average {before} before, {measurement['load_during']} during; placeholders "
          f"{measurement['placeholders']}; git status clean: {measurement['git_status_clean']} -> {args.out} "
          f"({len(record['measurements'])} measurement(s))")
    shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

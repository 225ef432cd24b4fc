"""Measure how long a student's laptop takes to build the environments of ``make lab``, from nothing.

Runs ``src/dpsynth_book/tasks.py`` (the cross-platform route; ``make`` installs the same locks the same
way) with this interpreter into a temporary folder, with empty pip and uv caches, so that every
package is downloaded from PyPI as on a fresh laptop: first ``venv`` (the project's environment,
``requirements.lock``), then ``lab-env`` (JupyterLab and jupyterlab-myst, ``lab/requirements-lab.lock``).
Writes ``lab/env-build.json`` (seconds per environment, the date, the machine and its load), which
the teaching page quotes. The download speed of the machine's network decides much of it. Run it
from the repository root::

    .venv/bin/python lab/measure_env.py
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "lab" / "env-build.json"
sys.path.insert(0, str(REPO / "benchmarks"))

from _record import load_average, machine  # noqa: E402  (the benchmarks' machine description)


def main() -> int:
    before = load_average()
    started = dt.datetime.now(dt.UTC).astimezone().isoformat(timespec="seconds")
    steps = []
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, UV_CACHE_DIR=str(Path(tmp) / "uv-cache"), PIP_NO_CACHE_DIR="1")
        tasks = [sys.executable, str(REPO / "src" / "dpsynth_book" / "tasks.py")]
        venvs = ["--venv", str(Path(tmp) / "venv"), "--lab-venv", str(Path(tmp) / "venv-lab")]
        for task, what in (("venv", "the project's environment (requirements.lock)"),
                           ("lab-env", "JupyterLab and jupyterlab-myst (lab/requirements-lab.lock)")):
            t0 = time.perf_counter()
            subprocess.run(tasks + [task] + venvs, env=env, check=True, stdout=subprocess.DEVNULL)
            steps.append({"task": task, "what": what, "seconds": round(time.perf_counter() - t0, 1)})
    record = {"schema": 1, "script": "lab/measure_env.py", "python": sys.version.split()[0], "started": started,
              "caches": "empty (every package downloaded from PyPI)", "machine": machine(),
              "load_average_before": before, "load_average_after": load_average(), "steps": steps}
    OUT.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    for s in steps:
        print(f"{s['seconds']:7.1f} s  {s['task']}: {s['what']}")
    print(f"load average {before} before, {record['load_average_after']} after -> {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

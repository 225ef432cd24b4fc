"""Measure what a lecturer's `make lab` costs from a fresh clone: environments, start, disk; as a class has it.

Clones this checkout's commit into a temporary folder, and there, with an empty home (``HOME`` a new
folder: no pip, uv, PyTensor or Matplotlib cache) and the machine's pip configuration switched off
(every package downloaded from PyPI, as on a laptop), runs ``make venv``, ``make lab-env`` and then
``make lab`` until the server answers; the three are what one ``make lab`` does from a fresh clone.
Writes ``lab/env-build.json``: the seconds of each step and in all, the environments' size on disk, the
date, the commit, the machine and its load (the 1-minute load average before, after, and sampled every
5 s during the run: its mean and maximum), which ``dpsynth_book.teaching.env_build_times`` reads for the
teaching page. The network's speed decides much of it. Run it from the repository root (at a commit:
the clone has no uncommitted change)::

    .venv/bin/python lab/measure_env.py                  # then: lab/env-build.json
    .venv/bin/python lab/measure_env.py --keep /tmp/x    # keep the clone and its home for lab/measure_route.py
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "lab" / "env-build.json"
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "lab"))

from _record import load_average, machine  # noqa: E402  (the benchmarks' machine description)


class LoadSampler:
    """The 1-minute load average every ``every`` seconds, in a thread, while a measurement runs."""

    def __init__(self, every: float = 5.0) -> None:
        self.every, self.samples, self._stop = every, [], threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append(load_average()[0])
            self._stop.wait(self.every)

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> dict:
        s = self.samples or [float("nan")]
        return {"mean": round(sum(s) / len(s), 2), "max": round(max(s), 2), "samples": len(self.samples)}


def fresh_environment(home: Path) -> dict:
    """The environment of a laptop that has never built the lab: an empty ``HOME``, no pip configuration or cache."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PIP_", "UV_", "XDG_", "PYTENSOR", "MPLCONFIGDIR", "NUMBA_", "DPSYNTH_"))}
    home.mkdir(parents=True, exist_ok=True)
    env.update(HOME=str(home), PIP_CONFIG_FILE=os.devnull)
    return env


def du_gib(path: Path) -> float:
    out = subprocess.run(["du", "-sk", str(path)], capture_output=True, text=True, check=True).stdout
    return round(int(out.split()[0]) / 2**20, 2)


def clone(dest: Path) -> str:
    """Clone this checkout's HEAD into ``dest``; return the commit."""
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True,
                            check=True).stdout.strip()
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(REPO), str(dest)], check=True)
    subprocess.run(["git", "checkout", "--quiet", commit], cwd=dest, check=True)
    return commit


def main(argv: list | None = None) -> int:
    from lab_browser import LabServer

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, default=None, help="build in this folder and keep it (clone/, home/)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    folder = args.keep.resolve() if args.keep else Path(tempfile.mkdtemp(prefix="dpsynth-measure-env-"))
    folder.mkdir(parents=True, exist_ok=True)
    repo, home = folder / "clone", folder / "home"
    commit = clone(repo)
    env = fresh_environment(home)
    before, started = load_average(), dt.datetime.now(dt.UTC).astimezone().isoformat(timespec="seconds")
    steps = []
    with LoadSampler() as loads:
        for task, what in (("venv", "the project's environment (.venv, requirements.lock), downloaded and installed"),
                           ("lab-env", "JupyterLab and jupyterlab-myst (.venv-lab, lab/requirements-lab.lock)")):
            t0 = time.perf_counter()
            subprocess.run(["make", "-s", task], cwd=repo, env=env, check=True, stdout=subprocess.DEVNULL)
            steps.append({"task": task, "what": what, "seconds": round(time.perf_counter() - t0, 1)})
        server = LabServer(folder / "server", repo / ".venv", work=repo / "lab-work", repo=repo, environ=env)
        try:
            answered = server.wait(timeout=900)
        finally:
            server.stop()
        steps.append({"task": "lab", "what": "make lab: dpsynth's sources compiled, the notebooks copied into "
                                             "lab-work/, JupyterLab started and answering",
                      "seconds": round(answered, 1)})
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True,
                           check=True).stdout
    record = {"schema": 2, "script": "lab/measure_env.py", "commit": commit, "python": sys.version.split()[0],
              "started": started, "from": "a fresh clone", "caches": "empty HOME (no pip, uv, PyTensor or Matplotlib "
              "cache), the machine's pip configuration off: every package downloaded from PyPI",
              "machine": machine(), "load_average_before": before, "load_average_after": load_average(),
              "load_during": loads.summary(), "steps": steps,
              "total_seconds": round(sum(s["seconds"] for s in steps), 1),
              "disk_gib": {"venv": du_gib(repo / ".venv"), "lab-env": du_gib(repo / ".venv-lab")},
              "peers_built": (repo / ".venv-peers").exists(), "git_status_clean": dirty == ""}
    args.out.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    for s in steps:
        print(f"{s['seconds']:7.1f} s  {s['task']}: {s['what']}")
    print(f"{record['total_seconds']:7.1f} s  in all; disk {record['disk_gib']} GiB; load {before} before, "
          f"{record['load_during']} during -> {args.out}")
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The record every ``benchmarks/bench_*.py`` writes: its figures, the machine and its load, as JSON.

A script wraps its measurement in :class:`Record` and adds its figures; on success the record is
written to ``benchmarks/results/<script stem>.json`` and ``benchmarks/report.py`` renders every
record into ``BENCHMARKS.md``::

    from _record import Record

    with Record(__file__, "Compile once, refit many times", "What it measures.", parameters={"n": 2000}) as rec:
        ...
        rec.add("refit on a new data set (mean of 20)", 0.149, "s", target="< 0.5 s")

Record format (``"schema": 1``): ``benchmark`` (the script stem), ``script``, ``title``,
``description``, ``command`` (the arguments it ran with), ``parameters``, ``started`` and
``finished`` (ISO 8601 with the UTC offset), ``wall_seconds``, ``machine`` (``cpu``, ``cores``,
``ram_gib``, ``python``, ``os``, ``arch``), ``git_commit`` and ``git_dirty``,
``load_average_before`` and ``load_average_after`` (1, 5 and 15 minutes), ``idle`` and
``idle_rule``, ``settle_seconds`` and ``figures``: a list of ``{"name", "value", "unit"}`` with
optional ``"target"`` (the goal, as text) and ``"group"`` (a row label, e.g. a chapter; figures
with groups are rendered as one row per group and one column per name).

Idle rule: the machine counts as idle if the 1-minute load average before the run is below
``IDLE_LOAD_PER_CORE`` (0.5) per core. Before measuring, a record waits up to ``SETTLE_SECONDS``
(120 s; environment variable ``DPSYNTH_BENCH_SETTLE``) for the load to fall below that, so that a
benchmark is not counted as loaded by the one that ran just before it; the wait is not measured.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

SCHEMA = 1
IDLE_LOAD_PER_CORE = 0.5
SETTLE_SECONDS = float(os.environ.get("DPSYNTH_BENCH_SETTLE", "120"))
RESULTS_DIR = Path(__file__).resolve().parent / "results"


def idle_rule(cores: int) -> str:
    return (f"idle if the 1-minute load average before the run is below {IDLE_LOAD_PER_CORE:g} per core "
            f"(here below {IDLE_LOAD_PER_CORE * cores:g} for {cores} cores)")


def load_average() -> list[float]:
    return [round(v, 2) for v in os.getloadavg()]


def _first_line_with(path: str, key: str, sep: str = ":") -> str | None:
    """The value of the first line of ``path`` that starts with ``key`` (after ``sep``), or None."""
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.startswith(key):
                    return line.split(sep, 1)[1].strip().strip('"')
    except OSError:
        return None
    return None


def machine() -> dict:
    """CPU model, cores, RAM (GiB), Python version, operating system and architecture of this machine."""
    cpu = _first_line_with("/proc/cpuinfo", "model name") or platform.processor() or platform.machine()
    mem_kb = _first_line_with("/proc/meminfo", "MemTotal")
    if mem_kb:
        ram = int(mem_kb.split()[0]) / 1024**2
    else:
        try:
            ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1024**3
        except (ValueError, OSError, AttributeError):
            ram = float("nan")
    distro = _first_line_with("/etc/os-release", "PRETTY_NAME=", sep="=")
    system = f"{platform.system()} {platform.release()}"
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "ram_gib": round(ram, 1),
        "python": platform.python_version(),
        "os": f"{distro} ({system})" if distro else system,
        "arch": platform.machine(),
    }


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=Path(__file__).resolve().parent, capture_output=True, text=True,
                             timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


def _now() -> str:
    return _dt.datetime.now().astimezone().isoformat(timespec="seconds")


class Record:
    """Collects a benchmark's figures and writes them, with the machine and its load, as JSON."""

    def __init__(self, script: str, title: str, description: str = "", parameters: dict | None = None,
                 out_dir: str | os.PathLike | None = None, settle_seconds: float | None = None):
        self.name = Path(script).stem
        self.data = {
            "schema": SCHEMA,
            "benchmark": self.name,
            "script": f"benchmarks/{Path(script).name}",
            "title": title,
            "description": description,
            "command": [f"benchmarks/{Path(script).name}", *sys.argv[1:]],
            "parameters": dict(parameters or {}),
            "figures": [],
        }
        self.out_dir = Path(out_dir) if out_dir is not None else RESULTS_DIR
        self.settle_seconds = SETTLE_SECONDS if settle_seconds is None else settle_seconds
        self.path = self.out_dir / f"{self.name}.json"

    def add(self, name: str, value, unit: str = "", *, target: str | None = None, group: str | None = None) -> None:
        fig = {"name": name, "value": value, "unit": unit}
        if target is not None:
            fig["target"] = target
        if group is not None:
            fig["group"] = group
        self.data["figures"].append(fig)

    def _settle(self, cores: int) -> float:
        t0 = time.monotonic()
        while os.getloadavg()[0] >= IDLE_LOAD_PER_CORE * cores and time.monotonic() - t0 < self.settle_seconds:
            time.sleep(min(5.0, max(self.settle_seconds - (time.monotonic() - t0), 0.0)))
        return round(time.monotonic() - t0, 1)

    def __enter__(self) -> Record:
        mach = machine()
        cores = mach["cores"] or 1
        settled = self._settle(cores)
        before = load_average()
        self.data.update({
            "machine": mach,
            "git_commit": _git("rev-parse", "--short", "HEAD"),
            "git_dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
            "settle_seconds": settled,
            "load_average_before": before,
            "idle": before[0] < IDLE_LOAD_PER_CORE * cores,
            "idle_rule": idle_rule(cores),
            "started": _now(),
        })
        print(f"[{self.name}] load average before: {before} "
              f"({'idle' if self.data['idle'] else 'loaded'}; waited {settled:g} s for it to settle)", flush=True)
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is not None:
            print(f"[{self.name}] failed: no record written", file=sys.stderr)
            return False
        self.data["wall_seconds"] = round(time.perf_counter() - self._t0, 1)
        self.data["finished"] = _now()
        self.data["load_average_after"] = load_average()
        self.write()
        print(f"[{self.name}] load average after: {self.data['load_average_after']}; record written to {self.path}",
              flush=True)
        return False

    def write(self) -> Path:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self.data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return self.path

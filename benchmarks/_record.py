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
``ram_gib``, ``python``, ``os``, ``arch``), ``git_commit`` and ``git_dirty`` (uncommitted changes
to ``src/`` or ``benchmarks/``),
``load_average_before`` and ``load_average_after`` (1, 5 and 15 minutes), ``other_cpu_cores``
(the CPU time other processes used during the run, in cores on average: the machine's busy time
from ``/proc/stat`` less this process's and its children's; null where it cannot be read),
``idle`` and ``idle_rule``, ``settle_seconds`` and ``figures``: a list of ``{"name", "value", "unit"}`` with
optional ``"target"`` (the goal, as text) and ``"group"`` (a row label, e.g. a chapter; figures
with groups are rendered as one row per group and one column per name).

Idle rule: the machine counts as idle if the 1-minute load average before the run was below
``IDLE_LOAD_PER_CORE`` (0.5) per core and, during the run, other processes used less than
``IDLE_OTHER_CPU_PER_CORE`` (0.1) of each core on average (a run that starts on an idle machine but
shares it later is loaded). Before measuring, a record waits up to ``SETTLE_SECONDS``
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
IDLE_OTHER_CPU_PER_CORE = 0.1
SETTLE_SECONDS = float(os.environ.get("DPSYNTH_BENCH_SETTLE", "120"))
RESULTS_DIR = Path(__file__).resolve().parent / "results"


def idle_rule(cores: int) -> str:
    return (f"idle if the 1-minute load average before the run was below {IDLE_LOAD_PER_CORE:g} per core "
            f"(here {IDLE_LOAD_PER_CORE * cores:g} for {cores} cores) and other processes used less than "
            f"{IDLE_OTHER_CPU_PER_CORE:g} of each core during it (here {IDLE_OTHER_CPU_PER_CORE * cores:g} cores)")


def is_idle(load_before: float, other_cpu_cores: float | None, cores: int) -> bool:
    """The idle rule (:func:`idle_rule`); other processes' CPU is not checked where it is unknown."""
    quiet = other_cpu_cores is None or other_cpu_cores < IDLE_OTHER_CPU_PER_CORE * cores
    return load_before < IDLE_LOAD_PER_CORE * cores and quiet


def busy_seconds() -> float | None:
    """CPU seconds the whole machine has been busy since boot (``/proc/stat``), or None."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = f.readline().split()
        # cpu user nice system idle iowait irq softirq steal ...: everything but idle and iowait
        ticks = [int(v) for v in fields[1:9]]
        return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def own_seconds() -> float:
    """CPU seconds of this process (every thread) and of its children that have ended."""
    import resource

    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


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
            # local changes to the measured code (the package or the benchmarks), not to documents
            "git_dirty": bool(_git("status", "--porcelain", "--untracked-files=no", "--", ":/src", ":/benchmarks")),
            "settle_seconds": settled,
            "load_average_before": before,
            "idle": before[0] < IDLE_LOAD_PER_CORE * cores,
            "idle_rule": idle_rule(cores),
            "started": _now(),
        })
        state = "idle" if self.data["idle"] else "loaded"
        print(f"[{self.name}] load average before: {before} ({state} so far; waited {settled:g} s for it to settle)",
              flush=True)
        self._busy0, self._own0 = busy_seconds(), own_seconds()
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is not None:
            print(f"[{self.name}] failed: no record written", file=sys.stderr)
            return False
        wall = time.perf_counter() - self._t0
        busy = busy_seconds()
        other = None
        if busy is not None and self._busy0 is not None and wall > 0:
            other = round(max(busy - self._busy0 - (own_seconds() - self._own0), 0.0) / wall, 2)
        cores = self.data["machine"]["cores"] or 1
        self.data["wall_seconds"] = round(wall, 1)
        self.data["finished"] = _now()
        self.data["load_average_after"] = load_average()
        self.data["other_cpu_cores"] = other
        self.data["idle"] = is_idle(self.data["load_average_before"][0], other, cores)
        self.write()
        print(f"[{self.name}] load average after: {self.data['load_average_after']}; other processes used {other} "
              f"cores during the run ({'idle' if self.data['idle'] else 'loaded'}); record written to {self.path}",
              flush=True)
        return False

    def write(self) -> Path:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self.data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return self.path

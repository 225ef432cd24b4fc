"""Benchmark: each chapter at quick scale, as a class runs it (the times on the "Teaching" page).

Every chapter notebook of the book (``_toc.yml`` entries with a ``notebooks/<name>.ipynb``) is
executed by papermill at ``scale = "quick"`` with a fresh result cache and ``DPSYNTH_RESULTS=off``,
so its studies are computed, not read from ``results/``: what a reader waits for after ``make lab``
or ``make notebooks SCALE=quick NOTEBOOKS=notebooks/<name>.ipynb``. One chapter at a time, one
kernel each, its studies using one process per core. The first chapter's time includes compiling
its models in a cold PyTensor cache only if the cache is cold (the record says which commit ran).

Run with ``make bench`` (or ``benchmarks/bench_quick_scale.py [--chapters a b ...]``); writes
``benchmarks/results/bench_quick_scale.json``, rendered into ``BENCHMARKS.md`` and read by
:func:`dpsynth_book.book.quick_scale_times` for the book's "Teaching with this book" page.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _record import Record

REPO = Path(__file__).resolve().parents[1]


def chapters() -> list[str]:
    """The toc's chapter notebooks, in the book's order."""
    toc = (REPO / "_toc.yml").read_text(encoding="utf-8")
    names = re.findall(r"^[^#\n]*(?:root|file):\s*book/([A-Za-z0-9_.-]+)", toc, flags=re.M)
    return [n for n in names if (REPO / "notebooks" / f"{n}.ipynb").exists()]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chapters", nargs="+", default=None, help="chapter names (default: every chapter notebook)")
    a = ap.parse_args(argv)
    names = a.chapters or chapters()
    papermill = str(Path(sys.executable).with_name("papermill"))
    with tempfile.TemporaryDirectory() as d, Record(
            __file__, "Each chapter at quick scale",
            "Each chapter notebook executed by papermill at quick scale, its studies computed (fresh result cache, "
            "DPSYNTH_RESULTS=off), one chapter at a time: what a class waits for per chapter.",
            parameters={"chapters": names}) as rec:
        env = {**os.environ, "DPSYNTH_RESULTS": "off", "DPSYNTH_HOME": str(Path(d) / "home"),
               "MPLBACKEND": "Agg"}
        for name in names:
            out = Path(d) / f"{name}.ipynb"
            t0 = time.perf_counter()
            done = subprocess.run([papermill, str(REPO / "notebooks" / f"{name}.ipynb"), str(out), "-p", "scale",
                                   "quick", "-p", "cache_dir", str(Path(d) / "cache"), "--kernel", "python3",
                                   "--no-progress-bar"], capture_output=True, text=True, env=env, cwd=REPO)
            seconds = time.perf_counter() - t0
            if done.returncode != 0:
                raise RuntimeError(f"{name} failed at quick scale: {done.stderr.strip()[-800:]}")
            load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
            rec.add("quick scale (s)", round(seconds, 1), "s", group=name)
            print(f"{name:20s} {seconds:7.1f} s  (load average {load})", flush=True)


if __name__ == "__main__":
    main()

"""Benchmark: `make book` in a fresh clone with an empty HOME, after its environment exists (goal: 180 s).

A clone of this repository's HEAD is made in a temporary folder; ``make venv`` builds its
environment (not timed: uv installs from its cache); then ``make book`` is timed with an empty
``HOME`` (no PyTensor or Numba compile cache), as a new reader meets it. The executed chapters'
times come from the ``== <name>: executed in N s`` lines ``make notebooks`` prints; the Sphinx build
is the rest.

Run with ``make bench`` (or ``python benchmarks/bench_book.py``); writes
``benchmarks/results/bench_book.json``, rendered into ``BENCHMARKS.md``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _record import Record

REPO = Path(__file__).resolve().parents[1]
GOAL_S = 180


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-book-") as d:
        clone = Path(d) / "c"
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
        env = {**os.environ, "HOME": str(Path(d) / "home")}
        Path(env["HOME"]).mkdir()
        subprocess.run(["make", "venv"], cwd=clone, env=env, check=True, capture_output=True)
        with Record(__file__, "make book in a fresh clone",
                    "`make book` in a fresh clone of HEAD with an empty HOME, after `make venv`: every chapter "
                    "rendered from the shipped results (two notebooks at a time), then the Sphinx build.",
                    parameters={"goal_s": GOAL_S}) as rec:
            t = time.perf_counter()
            done = subprocess.run(["make", "book"], cwd=clone, env=env, capture_output=True, text=True)
            total = time.perf_counter() - t
            if done.returncode != 0:
                raise RuntimeError(f"make book failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
            log = done.stdout + done.stderr
            pages = {m.group(1): int(m.group(2)) for m in re.finditer(r"== (\S+): executed in (\d+) s", log)}
            nb = re.search(r"== notebooks: \d+ executed in (\d+) s", log)
            notebooks = float(nb.group(1)) if nb else float("nan")
            rec.add("make book", round(total, 1), "s", target=f"<= {GOAL_S} s")
            rec.add("chapters executed (papermill, 2 at a time)", notebooks, "s")
            rec.add("Sphinx build (jupyter-book)", round(total - notebooks, 1), "s")
            for name, secs in sorted(pages.items(), key=lambda kv: -kv[1]):
                rec.add(f"chapter {name}", secs, "s")
            print(f"make book {total:.1f} s (goal {GOAL_S} s): chapters {notebooks:.0f} s, "
                  f"Sphinx {total - notebooks:.0f} s")
            for name, secs in sorted(pages.items(), key=lambda kv: -kv[1]):
                print(f"  {name:20s} {secs:4d} s")


if __name__ == "__main__":
    sys.exit(main())

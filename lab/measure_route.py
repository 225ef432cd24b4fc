"""Measure the 90-minute route of "Teaching with this book": the tutorial's compute time per section.

Runs ``notebooks/tutorial.ipynb`` with papermill at quick scale (the lab's scale) in a fresh
kernel, the way ``make lab`` runs it (``DPSYNTH_RESULTS=off``), and adds up papermill's time of the
code cells under each of its ``##`` headings (the cells before the first heading, the kernel's
imports and settings, count as "Start"). Writes ``lab/route-times.json``: the sections' seconds, the
whole run's wall time, the date, the machine and its load average before and after;
``dpsynth_book.teaching.route_times`` reads it for the teaching page. Run it from the repository root::

    .venv/bin/python lab/measure_route.py
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "lab" / "route-times.json"
sys.path.insert(0, str(REPO / "benchmarks"))

from _record import load_average, machine  # noqa: E402  (the benchmarks' machine description)


def sections(nb: dict) -> list[dict]:
    """``[{"section", "seconds", "cells"}]`` of an executed notebook, in its order."""
    out = [{"section": "Start", "seconds": 0.0, "cells": 0}]
    for cell in nb["cells"]:
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "markdown":
            m = re.search(r"^##\s+(.+)$", src, flags=re.M)
            if m:
                out.append({"section": m.group(1).strip(), "seconds": 0.0, "cells": 0})
            continue
        if cell["cell_type"] == "code":
            duration = (cell.get("metadata", {}).get("papermill", {}) or {}).get("duration")
            if duration is not None:
                out[-1]["seconds"] += float(duration)
                out[-1]["cells"] += 1
    return [dict(s, seconds=round(s["seconds"], 2)) for s in out]


def main() -> int:
    import papermill as pm

    before = load_average()
    started = dt.datetime.now(dt.UTC).astimezone().isoformat(timespec="seconds")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "tutorial.ipynb"
        os.environ["DPSYNTH_RESULTS"] = "off"
        t0 = time.perf_counter()
        pm.execute_notebook(str(REPO / "notebooks" / "tutorial.ipynb"), str(out), parameters={"scale": "quick"},
                            kernel_name="python3", progress_bar=False, cwd=str(REPO / "notebooks"))
        wall = time.perf_counter() - t0
        nb = json.loads(out.read_text(encoding="utf-8"))
    glued = {o["metadata"]["scrapbook"]["name"]: o["data"] for c in nb["cells"] if c["cell_type"] == "code"
             for o in c.get("outputs", []) if "scrapbook" in o.get("metadata", {})}
    n = glued.get("tutorial-n", {}).get("application/papermill.record/text/plain")
    record = {"schema": 1, "script": "lab/measure_route.py", "notebook": "notebooks/tutorial.ipynb", "scale": "quick",
              "n": int(n) if n else None, "started": started, "wall_seconds": round(wall, 1), "machine": machine(),
              "load_average_before": before, "load_average_after": load_average(), "sections": sections(nb)}
    OUT.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    for s in record["sections"]:
        print(f"{s['seconds']:7.1f} s  {s['section']}")
    print(f"{wall:7.1f} s  in all (with the kernel's start); load average {before} before, "
          f"{record['load_average_after']} after -> {OUT.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

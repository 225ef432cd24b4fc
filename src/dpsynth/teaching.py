"""The "Teaching with this book" page: how long each chapter takes at quick scale, from its measurement.

:func:`quick_scale_times` reads the record that ``benchmarks/bench_quick_scale.py`` writes
(``benchmarks/results/bench_quick_scale.json``: each chapter notebook executed by papermill at quick
scale with its studies computed) and returns one row per chapter with the seconds, and the machine,
date and load of the measurement, so that the page's times are measured, never typed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

from .paths import project_root

__all__ = ["QUICK_SCALE_RECORD", "quick_scale_record", "quick_scale_times"]

#: The benchmark record, relative to the repository root.
QUICK_SCALE_RECORD = Path("benchmarks") / "results" / "bench_quick_scale.json"


def quick_scale_record(path: str | os.PathLike | None = None) -> dict:
    """The benchmark record (``path`` or :data:`QUICK_SCALE_RECORD` in the repository).

    Raises
    ------
    FileNotFoundError
        If there is none, with the command that makes it.
    """
    p = Path(path) if path is not None else project_root() / QUICK_SCALE_RECORD
    if not p.exists():
        raise FileNotFoundError(f"no quick-scale record {p}: run `benchmarks/bench_quick_scale.py` (or `make bench`).")
    return json.loads(p.read_text(encoding="utf-8"))


def quick_scale_times(path: str | os.PathLike | None = None) -> tuple[pd.DataFrame, str]:
    """Per chapter, its quick-scale run time, and a sentence saying where and when it was measured.

    Returns
    -------
    (pandas.DataFrame, str)
        Index ``chapter`` (the book's order), columns ``seconds`` and ``minutes``; and e.g.
        "Measured on 25 November 2026 on Intel(R) Xeon(R) Processor, 2 cores (loaded: load average
        2.1 before the run)".
    """
    rec = quick_scale_record(path)
    rows = [(f["group"], float(f["value"])) for f in rec.get("figures", []) if f.get("group")]
    if not rows:
        raise ValueError(f"the quick-scale record has no chapter times: {sorted(rec)}")
    df = pd.DataFrame(rows, columns=["chapter", "seconds"]).set_index("chapter")
    df["minutes"] = df["seconds"] / 60.0
    m = rec.get("machine", {})
    when = str(rec.get("started", ""))[:10]
    try:
        when = pd.Timestamp(when).strftime("%-d %B %Y")
    except ValueError:
        pass
    load = rec.get("load_average_before") or [float("nan")]
    state = "idle" if rec.get("idle") else "loaded"
    where = f"{m.get('cpu', 'an unknown machine')}, {m.get('cores', '?')} cores"
    return df, f"Measured on {when} on {where} ({state}: load average {float(load[0]):.1f} before the run)"

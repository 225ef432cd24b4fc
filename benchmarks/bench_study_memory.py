"""Benchmark: peak memory of a 100-replicate study (censored Beta synthesizer, n = 2000).

Each replicate fits the Unweighted, LW and Censor_w mechanisms at eps = 4 and keeps
only per-replicate summaries, as the chapters do. Reports wall time and the process's peak
resident memory (``ru_maxrss``); writes them to ``benchmarks/results/bench_study_memory.json``.
"""

from __future__ import annotations

import json
import resource
import tempfile
import time
import warnings

from _record import Record

warnings.filterwarnings("ignore", category=FutureWarning)

from dpsynth_book.experiments.benchmark import PARAMS, replicate  # noqa: E402
from dpsynth_book.studies import run_study  # noqa: E402

R = 100


def main() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        ds = run_study("bench-memory", replicate, PARAMS, replicates=R, seed=1, cache_dir=tmp, workers=1,
                       progress=False)
        wall = time.perf_counter() - t
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"replicates": R, "wall_s": round(wall, 1), "peak_rss_mb": round(peak_mb, 1),
            "max_censor_w_delta": float(ds["delta"].sel(synthesizer="Censor_w").max())}


if __name__ == "__main__":
    p = PARAMS
    description = (f"A {R}-replicate study through dpsynth_book.studies.run_study on one worker: each replicate fits "
                   f"Unweighted, LW and Censor_w at eps = {p['eps']:g} on Beta data, n = {p['n']}, "
                   f"{p['chains']} chains x {p['draws']} draws after {p['tune']} tuning steps, and keeps only "
                   "per-replicate summaries, as the chapters do. Peak memory is the process's ru_maxrss.")
    with Record(__file__, "Memory of a 100-replicate study", description, {"replicates": R, **PARAMS}) as rec:
        res = main()
        rec.add(f"{R}-replicate study, wall time", res["wall_s"], "s")
        rec.add("peak resident memory (RSS)", res["peak_rss_mb"], "MB", target="< 2 GB")
        rec.add("largest Censor_w Delta over the replicates", round(res["max_censor_w_delta"], 4), "",
                target=f"<= eps/2 = {PARAMS['eps'] / 2:g}")
    print(json.dumps(res, indent=2))
    print(f"\n| {R}-replicate study: wall time | {res['wall_s']} s |\n| peak memory (RSS) | {res['peak_rss_mb']} MB |")

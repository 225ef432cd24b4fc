"""Benchmark: what a user waits for before anything is fitted, and a release of a saved synthesizer.

Measures, each in a new process as a user starts it (the median of five runs):
* ``import dpsynth`` and ``from dpsynth import Synthesizer`` (targets < 2 s: PyMC, ArviZ and
  OpenDP are imported only when a fit or a release needs them);
* ``dpsynth --help`` and ``dpsynth fit --help`` (target < 1 s);
* ``dpsynth release`` of a saved synthesizer for 3,000 rows, ledger included (target < 3 s);
and, once, ``dpsynth fit`` of that synthesizer (3,000 records, default mechanism), for scale.

Run with ``make bench``; writes ``benchmarks/results/bench_startup.json`` (``BENCHMARKS.md``).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _record import Record

N, RUNS = 3000, 5


def _timed(cmd: list[str], env: dict) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {done.stderr.strip()[-500:]}")
    return elapsed


def main() -> None:
    py = sys.executable
    cli = str(Path(py).with_name("dpsynth"))
    with tempfile.TemporaryDirectory() as d, Record(
            __file__, "Start-up and a release", "Commands a user waits for, each in a new process (median of "
            f"{RUNS} runs), and a release of a saved synthesizer for {N:,} rows.",
            parameters={"n": N, "runs": RUNS}) as rec:
        env = {**os.environ, "DPSYNTH_HOME": str(Path(d) / "home")}
        rng = np.random.default_rng(0)
        data = Path(d) / "wages.csv"
        pd.DataFrame({"wage": np.exp(6.0 + rng.normal(0.0, 0.5, N)),
                      "region": rng.choice(["north", "south", "west"], N)}).to_csv(data, index=False)
        synth = Path(d) / "s.json"
        fit = _timed([cli, "fit", str(data), "--target", "wage", "--covariates", "region", "--model",
                      "lognormal_regression", "--eps", "2", "--keep-draws", str(RUNS + 1), "--seed", "1", "--out",
                      str(synth)], env)

        def median(cmd_of) -> float:
            return statistics.median(_timed(cmd_of(i), env) for i in range(RUNS))

        figures = {
            "import dpsynth": (median(lambda i: [py, "-c", "import dpsynth"]), "< 2 s"),
            "from dpsynth import Synthesizer": (median(lambda i: [py, "-c", "from dpsynth import Synthesizer"]),
                                                "< 2 s"),
            "dpsynth --help": (median(lambda i: [cli, "--help"]), "< 1 s"),
            "dpsynth fit --help": (median(lambda i: [cli, "fit", "--help"]), "< 1 s"),
            f"dpsynth release, {N:,} rows": (median(lambda i: [cli, "release", str(synth), "--out",
                                                               str(Path(d) / f"r{i}.csv"), "--seed", str(i)]),
                                             "< 3 s"),
        }
        for name, (value, target) in figures.items():
            rec.add(name, round(value, 3), "s", target=target)
            print(f"{name:40s} {value:6.2f} s  [{target}]")
        rec.add(f"dpsynth fit, {N:,} records (compile included)", round(fit, 2), "s")
        print(f"{'dpsynth fit (compile included)':40s} {fit:6.2f} s")


if __name__ == "__main__":
    main()

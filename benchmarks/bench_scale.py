"""Benchmark: a default release of one million and ten million records: wall time and peak memory.

A generated wage file (a lognormal wage on two public covariates: a region with four levels and an
age) of ``n`` records goes through ``Synthesizer(df, "wage", covariates=[...], eps=1,
mechanism="censor_ref")`` with default settings otherwise, ``fit`` and one booked ``sample``, each
size in a process of its own, whose peak resident memory is read from ``getrusage`` at its end.
With one record replaced (covariates carried) and more than 200,000 records, the default fit sees a
random subsample of 100,000 records without replacement and spends the amplified eps on it
(:mod:`dpsynth.release.budget`); the record bounds are reduced a block of records at a time, so no ``S x
n`` matrix is held. Targets (issue 28): one million records in at most 60 s and 4 GB.

Run with ``make bench`` (or ``python benchmarks/bench_scale.py``); writes
``benchmarks/results/bench_scale.json``, rendered into ``BENCHMARKS.md``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

from _record import Record

SIZES = (1_000_000, 10_000_000)
TARGETS = {1_000_000: ("< 60 s", "< 4 GB")}

CHILD = r"""
import json, resource, sys, time, warnings
import numpy as np, pandas as pd
warnings.simplefilter("ignore")
n = int(sys.argv[1])
t0 = time.perf_counter()
rng = np.random.default_rng(0)
region = rng.choice(["north", "south", "east", "west"], n)
age = rng.integers(18, 70, n)
df = pd.DataFrame({"wage": np.exp(6 + 0.3 * (region == "south") + 0.01 * (age - 40) + rng.normal(0, 0.5, n)),
                   "region": region, "age": age})
t1 = time.perf_counter()
from dpsynth import Synthesizer
s = Synthesizer(df, "wage", covariates=["region", "age"], eps=1.0, mechanism="censor_ref", progress=False)
t2 = time.perf_counter()
s.fit(seed=1)
t3 = time.perf_counter()
out = s.sample(seed=2, allow_research=True)
t4 = time.perf_counter()
p = s.privacy
print(json.dumps({"generate": t1 - t0, "construct": t2 - t1, "fit": t3 - t2, "release": t4 - t3,
                  "peak_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
                  "converged": bool(p.converged), "fitted": int(p.n), "rows": len(out),
                  "eps": float(p.eps), "sample_rate": float(p.budget.sample_rate)}))
"""


def main() -> None:
    with Record(__file__, "A million and ten million records", "A default Synthesizer release (eps = 1, two public "
                "covariates) of a generated wage file, each size in its own process: wall time of the construction, "
                "the fit and one booked release, and the process's peak resident memory.",
                parameters={"sizes": list(SIZES)}) as rec, tempfile.TemporaryDirectory() as d:
        env = {**os.environ, "DPSYNTH_HOME": os.path.join(d, "home")}
        for n in SIZES:
            out = subprocess.run([sys.executable, "-c", CHILD, str(n)], capture_output=True, text=True, env=env,
                                 check=True, timeout=3600)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            t_total = r["construct"] + r["fit"] + r["release"]
            target_t, target_m = TARGETS.get(n, (None, None))
            group = f"{n:,} records"
            rec.add("construct (s)", round(r["construct"], 1), "s", group=group)
            rec.add("fit (s)", round(r["fit"], 1), "s", group=group)
            rec.add("release (s)", round(r["release"], 1), "s", group=group)
            rec.add("construct + fit + release", round(t_total, 1), "s", target=target_t, group=group)
            rec.add("peak memory", round(r["peak_gib"], 2), "GiB", target=target_m, group=group)
            rec.add("records fitted", r["fitted"], "", group=group)
            rec.add("converged", r["converged"], "", group=group)
            print(f"n={n:,}: {t_total:.1f} s, {r['peak_gib']:.2f} GiB, fitted {r['fitted']:,}", flush=True)


if __name__ == "__main__":
    main()

"""Benchmark: compile once, refit many times (censored Beta synthesizer, n = 2000).

Measures, on this machine:
* the first fit, compile included;
* the mean of 20 refits on new data sets (2 chains x 1000 draws after 1000 tuning steps);
* computing and reducing the S x n record log-likelihood matrix of one fit.

Run with ``make bench``; prints the figures and writes them to ``benchmarks/results/bench_refit.json``
(rendered into ``BENCHMARKS.md`` by ``benchmarks/report.py``).
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
import warnings

import numpy as np
from _record import Record

warnings.filterwarnings("ignore", category=FutureWarning)

from dpsynth.fitting import CompiledModel, SamplerConfig, compile_count  # noqa: E402
from dpsynth.models import BetaFamily  # noqa: E402
from dpsynth.privacy import record_bounds  # noqa: E402
from dpsynth_book.datasets import beta_data  # noqa: E402

N, REFITS, EPS = 2000, 20, 4.0
CFG = SamplerConfig(draws=1000, tune=1000, chains=2)


def main() -> dict:
    x0 = beta_data(N, 0)
    t0 = time.perf_counter()
    cm = CompiledModel(BetaFamily(), x0)
    cm.fit(x0, bound=EPS / 2, sampler=CFG, seed=0, keep_idata=False)
    first = time.perf_counter() - t0

    times = []
    for r in range(1, REFITS + 1):
        x = beta_data(N, r)
        t = time.perf_counter()
        fit = cm.fit(x, bound=EPS / 2, sampler=CFG, seed=r, keep_idata=False)
        times.append(time.perf_counter() - t)
        assert fit.privacy.delta <= EPS / 2 + 1e-9
    assert compile_count() == 1, "refits must not compile again"

    ll_times = []
    for _ in range(10):
        t = time.perf_counter()
        F = cm.record_loglik(fit.draws, fit.x)
        b = record_bounds(F, fit.weights, EPS / 2)
        del F
        ll_times.append(time.perf_counter() - t)
    out = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {sys.version.split()[0]}",
        "n": N,
        "draws": f"{CFG.chains} chains x {CFG.draws} draws after {CFG.tune} tuning steps",
        "first_fit_with_compile_s": round(first, 2),
        "refit_mean_s": round(float(np.mean(times)), 3),
        "refit_max_s": round(float(np.max(times)), 3),
        "loglik_matrix_shape": [fit.n_draws, N],
        "loglik_compute_and_reduce_s": round(float(np.median(ll_times)), 4),
        "censored_records_last_fit": b.n_censored,
    }
    return out


if __name__ == "__main__":
    description = (f"Censored Beta synthesizer (Censor_uw, eps = {EPS:g}), n = {N}, {CFG.chains} chains x {CFG.draws} "
                   f"draws after {CFG.tune} tuning steps (nutpie). The model is compiled once; the {REFITS} refits on "
                   "new data sets must not compile again (checked). A refit includes the R-hat/ESS check and the "
                   "reduction of the record log-likelihood matrix to by-record bounds.")
    params = {"n": N, "refits": REFITS, "eps": EPS, "chains": CFG.chains, "draws": CFG.draws, "tune": CFG.tune}
    with Record(__file__, "Compile once, refit many times", description, params) as rec:
        res = main()
        S = res["loglik_matrix_shape"][0]
        rec.add("first fit, compile included", res["first_fit_with_compile_s"], "s")
        rec.add(f"refit on a new data set, mean of {REFITS}", res["refit_mean_s"], "s", target="< 0.5 s")
        rec.add(f"refit on a new data set, slowest of {REFITS}", res["refit_max_s"], "s")
        rec.add(f"record log-likelihood matrix ({S} x {N}): compute and reduce, median of 10",
                res["loglik_compute_and_reduce_s"], "s", target="< 0.1 s")
        rec.add("censored records in the last refit", res["censored_records_last_fit"], "records")
    print(json.dumps(res, indent=2))
    print()
    print("| measure | value |\n|---|---|")
    print(f"| first fit, compile included | {res['first_fit_with_compile_s']} s |")
    print(f"| refit on a new data set (mean of {REFITS}) | {res['refit_mean_s']} s (max {res['refit_max_s']} s) |")
    print(f"| S x n log-likelihood matrix {res['loglik_matrix_shape']}: compute + reduce (median) "
          f"| {res['loglik_compute_and_reduce_s']} s |")

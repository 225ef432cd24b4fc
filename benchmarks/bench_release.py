"""Benchmark: a release of the whole CPS 1988 file (28,155 records) with the user's defaults, and where its time goes.

For Censor_uw, Censor_ref (the ``Synthesizer``'s default) and Censor_w, at eps = 1 with the file's
public covariates (``Synthesizer(df, "wage", covariates=..., eps=1, mechanism=...)``), this measures

* the first fit of the process (model compilation included) and the median of ``REFITS`` refits
  with new seeds (the compiled model is reused), each followed by one booked release
  (``sample()``, 28,155 synthetic rows);
* where a refit's time goes: the sampler (nutpie: tuning and draws of every chain, every fit the
  mechanism runs), the S x n record log-likelihood matrix and its reduction to by-record bounds, and
  the rest (the mechanism's own steps, ArviZ conversion, diagnostics);
* the gradient evaluations per fit (nutpie's leapfrog steps, tuning included) and the time of one;
* a lower bound on the time: the floating-point work of one gradient of this model (counted below)
  times the gradient evaluations, at the machine's peak rate on its cores (measured with a matrix
  product, which no elementwise likelihood reaches), and the achieved fraction of that limit.

Floating-point work of one gradient of the lognormal regression with k coefficients, per record:
``X_i beta`` (2k), the residual and its square and scale (4), the log-density's terms (4), the clamp
of a censored term (2), and the backward pass (the residual times ``X_i`` into the gradient, 2k, plus
4): ``4k + 14`` flops. Transcendental functions are counted as one flop, which flatters the limit.

Run with ``make bench`` (or ``python benchmarks/bench_release.py``); writes
``benchmarks/results/bench_release.json``, rendered into ``BENCHMARKS.md``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import warnings

import numpy as np
from _record import Record

warnings.filterwarnings("ignore", category=FutureWarning)

MECHANISMS = ("censor_uw", "censor_ref", "censor_w")
TARGETS = {"censor_uw": "< 10 s", "censor_ref": "< 10 s", "censor_w": "< 30 s"}
EPS = 1.0
REFITS = 3


class _Meter:
    """Times the sampler and the record log-likelihood reduction of every fit, and counts gradients."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.sampler_s = self.loglik_s = 0.0
        self.gradients = self.draws = self.fits = 0
        self.cores = 1

    def install(self) -> None:
        import nutpie

        import dpsynth.fitting as fitting

        sample, bounds, loglik = nutpie.sample, fitting.record_bounds, fitting.CompiledModel.record_loglik
        meter = self

        class TimedSampler:
            """nutpie's background sampler (dpsynth samples with ``blocking=False, return_raw_trace=True``),
            whose ``wait`` is timed and whose raw trace's sampler statistics are counted."""

            def __init__(self, inner, cores):
                self._inner, self._cores, self._t = inner, cores, time.perf_counter()

            def wait(self, *a, **k):
                raw = self._inner.wait(*a, **k)
                meter.sampler_s += time.perf_counter() - self._t
                draws, stats = raw.get_arrow_trace()
                for st in stats:  # every chain, tuning included
                    steps = fitting._arrow_column(st.column("n_steps"))
                    meter.gradients += int(np.sum(steps))
                    meter.draws += int(steps.size)
                meter.fits += 1
                meter.cores = max(meter.cores, self._cores)
                return fitting._ArrowTrace(draws, stats)

            def __getattr__(self, name):
                return getattr(self._inner, name)

        def timed_sample(*args, **kw):
            return TimedSampler(sample(*args, **kw), int(kw.get("cores") or 1))

        def timed_bounds(*args, **kw):
            t = time.perf_counter()
            out = bounds(*args, **kw)
            meter.loglik_s += time.perf_counter() - t
            return out

        def timed_loglik(self, *args, **kw):
            t = time.perf_counter()
            out = loglik(self, *args, **kw)
            meter.loglik_s += time.perf_counter() - t
            return out

        nutpie.sample = timed_sample
        fitting.record_bounds = timed_bounds
        fitting.CompiledModel.record_loglik = timed_loglik


def peak_flops(cores: int, size: int = 2000, repeats: int = 5) -> float:
    """The machine's peak double-precision rate on its cores: the best of a few matrix products (flop/s)."""
    a = np.random.default_rng(0).normal(size=(size, size))
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        a @ a
        best = min(best, time.perf_counter() - t)
    return 2.0 * size**3 / best


def main() -> None:
    os.environ.setdefault("DPSYNTH_HOME", tempfile.mkdtemp(prefix="bench-release-home-"))
    from dpsynth import Synthesizer
    from dpsynth_book.public_data import real_file

    meter = _Meter()
    meter.install()
    f = real_file("cps1988")
    df = f.load()
    n = len(df)
    with Record(__file__, "A release of the whole CPS 1988 file",
                f"Censor_uw, Censor_ref (the default) and Censor_w on the {n:,} records of CPS 1988 with its "
                f"public covariates, eps = {EPS:g}, the Synthesizer's default MCMC settings: the first fit "
                f"(compile included), the median of {REFITS} refits with a release each, where a refit's time "
                f"goes, and the achieved fraction of a floating-point limit.",
                parameters={"n": n, "eps": EPS, "refits": REFITS, "mechanisms": list(MECHANISMS)}) as rec:
        cores = os.cpu_count() or 1
        peak = peak_flops(cores)
        rec.add("peak rate (matrix product, all cores)", round(peak / 1e9, 1), "GFLOP/s")
        print(f"peak rate on {cores} cores: {peak / 1e9:.1f} GFLOP/s")
        for mech in MECHANISMS:
            meter.reset()
            s = Synthesizer(df, f.target, covariates=list(f.covariates), eps=EPS, mechanism=mech, progress=False)
            t = time.perf_counter()
            s.fit(seed=0)
            first = time.perf_counter() - t
            k = int(s._X.shape[1]) if s._X is not None else 1
            runs = []
            for r in range(1, REFITS + 1):
                s = Synthesizer(df, f.target, covariates=list(f.covariates), eps=EPS, mechanism=mech,
                                progress=False)
                meter.reset()
                t = time.perf_counter()
                s.fit(seed=r)
                fit_s = time.perf_counter() - t
                t = time.perf_counter()
                s.sample(seed=r, allow_research=True)
                release_s = time.perf_counter() - t
                runs.append(dict(fit=fit_s, release=release_s, sampler=meter.sampler_s, loglik=meter.loglik_s,
                                 gradients=meter.gradients, draws=meter.draws, fits=meter.fits, cores=meter.cores,
                                 converged=s.privacy.converged, censored=s.privacy.n_censored))
            mid = sorted(runs, key=lambda x: x["fit"] + x["release"])[len(runs) // 2]
            total = mid["fit"] + mid["release"]
            per_grad = mid["sampler"] * mid["cores"] / mid["gradients"]
            flops = (4 * k + 14) * n
            limit = flops * mid["gradients"] / peak
            name = s.privacy.name
            rows = [
                ("first fit and release (compile included)", round(first, 1), "s", None),
                ("fit and release, median of refits", round(total, 1), "s", TARGETS[mech]),
                ("sampler", round(mid["sampler"], 1), "s", None),
                ("S x n log-likelihood and bounds", round(mid["loglik"], 2), "s", None),
                ("other (mechanism steps, ArviZ, release)", round(total - mid["sampler"] - mid["loglik"], 2), "s",
                 None),
                ("MCMC fits per release", mid["fits"], "", None),
                ("gradient evaluations", mid["gradients"], "", None),
                ("gradients per iteration (tuning included)", round(mid["gradients"] / mid["draws"], 1), "", None),
                ("time per gradient (one core)", round(per_grad * 1e3, 3), "ms", None),
                ("floating-point limit", round(limit, 3), "s", None),
                ("achieved fraction of the limit", round(limit / total, 4), "", None),
                ("refits that converged", sum(x["converged"] for x in runs), f"of {REFITS}", None),
            ]
            for label, value, unit, target in rows:
                rec.add(label, value, unit, target=target, group=name)
            print(f"{name}: first {first:.1f} s; refit+release {total:.1f} s (sampler {mid['sampler']:.1f} s, "
                  f"S x n {mid['loglik']:.2f} s); {mid['fits']} fit(s), {mid['gradients']} gradients "
                  f"({mid['gradients'] / mid['draws']:.1f} per iteration), {per_grad * 1e3:.3f} ms each; limit "
                  f"{limit:.3f} s = {limit / total:.2%} achieved; converged {sum(x['converged'] for x in runs)}"
                  f"/{REFITS}; censored {mid['censored']} of {n}", flush=True)


if __name__ == "__main__":
    sys.exit(main())

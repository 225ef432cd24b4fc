"""Where the paper-scale time goes: each chapter's studies at its paper preset, 1 and 2 replicates.

For every chapter, runs ``run(Params.preset("paper", replicates=k))`` in a fresh cache: once with
k = 1 to compile the models (``compile``: the first run's extra time), then k = 1 and k = 2 with
the models compiled, so that

* each further replicate costs ``t2 - t1``, and
* the fixed cost (one-off studies such as illustrations, calibrations or release months) is
  ``t1`` minus that;

and extrapolates the paper-scale time with one worker, ``compile + fixed + R x per_replicate``. With
``--profile`` it also prints the 25 functions with the largest cumulative time of the
1-replicate run (cProfile), to find what to speed up.

Usage::

    .venv/bin/python benchmarks/bench_paper_scale.py [--chapters censoring reweighting ...] [--profile]

Run it on an otherwise idle machine; it prints the load average before and after and writes the
figures to ``benchmarks/results/bench_paper_scale.json`` (rendered into ``BENCHMARKS.md`` by
``benchmarks/report.py``). With ``--chapters`` the record holds those chapters only.
"""

from __future__ import annotations

import argparse
import cProfile
import importlib
import io
import pstats
import tempfile
import time
import warnings

from _record import Record

CHAPTERS = ("censoring", "reweighting", "range_restriction", "sdr_application")


def run_chapter(name: str, replicates: int, profile: bool = False) -> tuple[float, str]:
    module = importlib.import_module(f"dpsynth_book.experiments.{name}")
    params = module.Params.preset("paper", replicates=replicates)
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prof = cProfile.Profile() if profile else None
        t0 = time.perf_counter()
        if prof:
            prof.enable()
        module.run(params, cache_dir=tmp, progress=False)
        if prof:
            prof.disable()
        elapsed = time.perf_counter() - t0
    text = ""
    if prof:
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(25)
        text = buf.getvalue()
    return elapsed, text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chapters", nargs="*", default=list(CHAPTERS))
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    description = ("Each chapter's studies at the paper preset with 1 and 2 replicates, one worker, in a fresh "
                   "cache: the first run's extra time is compiling the models, each further replicate costs "
                   "t2 - t1, the fixed cost (one-off studies) is t1 minus that; the paper-scale estimate with one "
                   "worker is compile + fixed + R x per replicate (differences below 0 count as 0: on a shared "
                   "machine they are noise). `make results` runs one worker per core.")
    rows = []
    with Record(__file__, "Where the paper-scale time goes", description,
                {"chapters": args.chapters, "profile": args.profile}) as rec:
        for name in args.chapters:
            module = importlib.import_module(f"dpsynth_book.experiments.{name}")
            R = module.Params.paper().replicates
            t0, _ = run_chapter(name, 1)
            t1, prof = run_chapter(name, 1, profile=args.profile)
            t2, _ = run_chapter(name, 2)
            compile_s = max(t0 - t1, 0.0)
            per_rep = max(t2 - t1, 0.0)
            fixed = max(t1 - per_rep, 0.0)
            est = compile_s + fixed + R * per_rep
            rows.append((name, R, compile_s, per_rep, fixed, est))
            print(f"{name}: first run {t0:.1f} s, then 1 replicate {t1:.1f} s, 2 replicates {t2:.1f} s -> "
                  f"{per_rep:.1f} s per replicate, fixed {fixed:.1f} s, compile {compile_s:.1f} s; paper scale "
                  f"(R = {R}, one worker) about {est / 60:.1f} min", flush=True)
            if prof:
                print(prof)
            rec.add("replicates R", R, "", group=name)
            rec.add("first run, 1 replicate", round(t0, 1), "s", group=name)
            rec.add("then 1 replicate", round(t1, 1), "s", group=name)
            rec.add("2 replicates", round(t2, 1), "s", group=name)
            rec.add("compile", round(compile_s, 1), "s", group=name)
            rec.add("per replicate", round(per_rep, 1), "s", group=name)
            rec.add("fixed", round(fixed, 1), "s", group=name)
            rec.add("estimated paper scale, 1 worker", round(est / 60, 1), "min", group=name)
        total = sum(r[-1] for r in rows)
        rec.add("estimated paper scale, 1 worker", round(total / 60, 1), "min", group="all")
    print("\n| chapter | R | compile (s) | per replicate (s) | fixed (s) | estimated paper scale, 1 worker (min) |")
    print("|---|---|---|---|---|---|")
    for name, R, compile_s, per_rep, fixed, est in rows:
        print(f"| {name} | {R} | {compile_s:.1f} | {per_rep:.1f} | {fixed:.1f} | {est / 60:.1f} |")
    print(f"| all | | | | | {total / 60:.1f} |")


if __name__ == "__main__":
    main()

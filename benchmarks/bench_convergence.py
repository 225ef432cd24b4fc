"""Benchmark: do a newcomer's default fits converge whatever the seed, on each real file?

For each real file of :data:`dpsynth_book.public_data.REAL_FILES` (CPS 1988 wages, continuous; NMES
1987-88 physician visits, a count; the fishing mode, categorical), at eps = 1 and 5 and for seeds
1 to 20, it runs what a new user runs, with default settings but the mechanism::

    s = Synthesizer(df, f.target, covariates=list(f.covariates), eps=eps, mechanism="censor_ref", progress=False)
    s.fit(seed=seed)

(Censor_ref named, the default before ``mechanism="auto"``; the model chosen from the target's
type, covariates standardised, the default retries of a fit that fails its checks), and records per
fit whether the final fit passed its checks (R-hat, bulk ESS, no divergences), how many retries it
needed and what they were (the synthesizer's ``fit_log``), its worst R-hat, smallest bulk ESS,
divergences, censored share and fit time. It prints one line per file and eps ("20/20 converged, 2
needed a retry") and writes the summary and every fit to
``benchmarks/results/bench_convergence.json`` (``BENCHMARKS.md``).

Usage::

    python benchmarks/bench_convergence.py                       # all: 3 files x 2 eps x 20 seeds
    python benchmarks/bench_convergence.py --files fishing --seeds 1-3 --eps 1 --no-record   # a quick look

The first fit of each file includes the model's compilation (models are compiled once per process).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from pathlib import Path

from _record import Record

EPS = (1.0, 5.0)
SEEDS = tuple(range(1, 21))


# ---------------------------------------------------------------------------------------------- pure functions
def parse_seeds(text: str) -> list[int]:
    """``"1-20"``, ``"3"`` or ``"1,4,7-9"`` -> the seeds, in order, each once."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            a, b = (int(v) for v in part.split("-", 1))
            if b < a:
                raise ValueError(f"seed range {part!r} runs backwards")
            vals = range(a, b + 1)
        else:
            vals = [int(part)]
        out += [v for v in vals if v not in out]
    if not out:
        raise ValueError(f"no seeds in {text!r}")
    return out


def retries_of(log: list[str]) -> int:
    """Retries in a synthesizer's ``fit_log`` (one ``refitted`` line per retry, over every fit of the mechanism)."""
    return sum(1 for line in log if "refitted" in line)


def group_label(file: str, eps: float) -> str:
    return f"{file}, eps = {eps:g}"


def summarise(fits: list[dict]) -> list[dict]:
    """One row per (file, eps), in the order they first appear: what the fits did.

    Each fit is a dict with ``file``, ``eps``, ``converged`` (the final fit passed its checks),
    ``retries``, ``rhat_max``, ``ess_min``, ``divergences``, ``censored_share``, ``seconds`` and
    ``error`` (None, or why the fit raised). A fit that raised counts as not converged.
    """
    groups: dict[tuple, list[dict]] = {}
    for f in fits:
        groups.setdefault((f["file"], float(f["eps"])), []).append(f)
    rows = []
    for (file, eps), fs in groups.items():
        ran = [f for f in fs if f.get("error") is None]

        def finite(key, fs=ran):
            return [float(f[key]) for f in fs if f.get(key) is not None and f[key] == f[key]]

        rhat, ess, secs, cens = finite("rhat_max"), finite("ess_min"), finite("seconds"), finite("censored_share")
        rows.append({
            "file": file, "eps": eps, "fits": len(fs),
            "converged": sum(1 for f in ran if f["converged"]),
            "retried": sum(1 for f in ran if f["retries"] > 0),
            "rescued": sum(1 for f in ran if f["retries"] > 0 and f["converged"]),
            "retries": sum(int(f["retries"]) for f in ran),
            "errors": len(fs) - len(ran),
            "failed_seeds": [f["seed"] for f in fs if f.get("error") is not None or not f["converged"]],
            "rhat_max": max(rhat) if rhat else float("nan"),
            "ess_min": min(ess) if ess else float("nan"),
            "divergences": sum(int(f["divergences"]) for f in ran),
            "censored_share_max": max(cens) if cens else float("nan"),
            "seconds_median": statistics.median(secs) if secs else float("nan"),
            "seconds_max": max(secs) if secs else float("nan"),
        })
    return rows


def verdict(row: dict) -> str:
    """``"20/20 converged, 2 needed a retry"`` (and the seeds that failed, or raised)."""
    retried = row["retried"]
    text = f"{row['converged']}/{row['fits']} converged, "
    text += "none needed a retry" if retried == 0 else f"{retried} needed a retry"
    if row["rescued"] != retried:
        text += f" ({row['rescued']} of them converged after it)"
    if row["failed_seeds"]:
        text += f"; not converged: seed(s) {', '.join(map(str, row['failed_seeds']))}"
    if row["errors"]:
        text += f" ({row['errors']} raised)"
    return text


def table(rows: list[dict]) -> str:
    """A plain-text table of :func:`summarise`'s rows."""
    head = (f"{'file':10s} {'eps':>4s} {'converged':>9s} {'retried':>7s} {'R-hat max':>9s} {'ESS min':>7s} "
            f"{'div':>4s} {'censored':>8s} {'median s':>8s}")
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['file']:10s} {r['eps']:4g} {r['converged']:>4d}/{r['fits']:<4d} {r['retried']:7d} "
                     f"{r['rhat_max']:9.3f} {r['ess_min']:7.0f} {r['divergences']:4d} "
                     f"{r['censored_share_max']:8.1%} {r['seconds_median']:8.1f}")
    return "\n".join(lines)


def add_figures(rec, rows: list[dict]) -> None:
    """The record's figures: one row per file and eps (``BENCHMARKS.md`` renders a row per group)."""
    for r in rows:
        g = group_label(r["file"], r["eps"])
        rec.add("converged", f"{r['converged']}/{r['fits']}", group=g)
        rec.add("needed a retry", r["retried"], group=g)
        rec.add("worst R-hat", round(r["rhat_max"], 4), group=g)
        rec.add("min bulk ESS", round(r["ess_min"]), group=g)
        rec.add("divergences", r["divergences"], group=g)
        rec.add("most censored", f"{r['censored_share_max']:.1%}", group=g)
        rec.add("median fit", round(r["seconds_median"], 1), "s", group=g)


def headline(rows: list[dict]) -> str:
    """One sentence over every row, e.g. ``"120 of 120 default fits converged (3 files x 2 eps x 20 seeds); 4 needed
    a retry"``."""
    fits = sum(r["fits"] for r in rows)
    conv = sum(r["converged"] for r in rows)
    retried = sum(r["retried"] for r in rows)
    files = len({r["file"] for r in rows})
    eps = len({r["eps"] for r in rows})
    seeds = fits // max(files * eps, 1)
    return (f"{conv} of {fits} default fits converged ({files} files x {eps} eps x {seeds} seeds); "
            f"{retried} needed a retry")


# ---------------------------------------------------------------------------------------------- the fits
def fit_one(name: str, df, eps: float, seed: int) -> dict:
    """A newcomer's default fit of real file ``name`` at ``eps`` and ``seed``: what it did and how it ended."""
    from dpsynth import Synthesizer
    from dpsynth_book.public_data import REAL_FILES

    f = REAL_FILES[name]
    out = {"file": name, "eps": eps, "seed": seed, "error": None}
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            s = Synthesizer(df, f.target, covariates=list(f.covariates), eps=eps, mechanism="censor_ref",
                            progress=False)
            s.fit(seed=seed)
        except Exception as e:  # noqa: BLE001 - recorded: a fit that raises is a failure of the defaults
            out.update(seconds=round(time.perf_counter() - t0, 2), converged=False, retries=0, log=[],
                       error=f"{type(e).__name__}: {e}")
            return out
    out["seconds"] = round(time.perf_counter() - t0, 2)
    p = s.privacy  # the same whether or not the fit converged: the diagnostics say
    log = list(s.fit_log)
    out.update(
        model=s.model, mechanism=s.mechanism, converged=bool(p.converged), retries=retries_of(log), log=log,
        rhat_max=round(float(p.rhat_max), 4), ess_min=round(float(p.ess_min), 1), divergences=int(p.divergences),
        censored_share=round(float(p.censored_share), 4), n=int(p.n),
        warnings=sorted({type(w.message).__name__ for w in caught if not issubclass(w.category, FutureWarning)}),
    )
    return out


def main(argv: list[str] | None = None) -> list[dict]:
    from dpsynth_book.public_data import REAL_FILES

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", nargs="+", choices=list(REAL_FILES), default=list(REAL_FILES))
    ap.add_argument("--eps", nargs="+", type=float, default=list(EPS))
    ap.add_argument("--seeds", type=parse_seeds, default=list(SEEDS), help="e.g. 1-20, 3 or 1,4,7-9")
    ap.add_argument("--no-record", action="store_true", help="print only; do not write the JSON record")
    ap.add_argument("--jsonl", type=Path, help="also append each fit, as it ends, to this file (one JSON a line)")
    args = ap.parse_args(argv)

    description = (
        "A newcomer's fit of each real file (`dpsynth_book.public_data.REAL_FILES`) with default settings only: "
        "`Synthesizer(df, target, covariates=..., eps=eps, mechanism='censor_ref').fit(seed=seed)` (the model "
        "from the target's type, numeric covariates standardised, up to 2 retries with twice the draws and tuning "
        f"each). Seeds {args.seeds[0]}-{args.seeds[-1]} at eps = {', '.join(f'{e:g}' for e in args.eps)}. "
        "*Converged*: the final fit passed R-hat <= 1.01, bulk ESS >= 200 and had no divergences; *needed a retry*: "
        "its first run failed those checks; *most censored*: the largest share of records censored; the first fit "
        "of each file includes the model's compilation. Every fit, with its retry log, is in the JSON record.")
    params = {"files": args.files, "eps": args.eps, "seeds": args.seeds}
    rec = None if args.no_record else Record(__file__, "Default fits converge whatever the seed", description,
                                             params)
    fits: list[dict] = []

    def run() -> list[dict]:
        for name in args.files:
            df = REAL_FILES[name].load()
            for eps in args.eps:
                for seed in args.seeds:
                    r = fit_one(name, df, eps, seed)
                    fits.append(r)
                    state = "ok " if r["converged"] else "FAILED"
                    detail = r["error"] or (f"R-hat {r['rhat_max']:.3f}, ESS {r['ess_min']:.0f}, "
                                            f"{r['divergences']} div, {r['censored_share']:.1%} censored, "
                                            f"{r['retries']} retr.")
                    print(f"{name:9s} eps {eps:g} seed {seed:2d}: {state} {r['seconds']:6.1f} s  {detail}", flush=True)
                    for line in r["log"]:
                        print(f"    {line}", flush=True)
                    if args.jsonl:
                        with args.jsonl.open("a", encoding="utf-8") as fh:
                            fh.write(json.dumps(r) + "\n")
        return summarise(fits)

    if rec is None:
        rows = run()
    else:
        with rec:
            rows = run()
            add_figures(rec, rows)
            rec.data["headline"] = headline(rows)
            rec.data["fits"] = fits
    print()
    print(table(rows))
    for r in rows:
        print(f"{group_label(r['file'], r['eps'])}: {verdict(r)}")
    print(headline(rows))
    return fits


if __name__ == "__main__":
    sys.exit(main() and 0)

"""Benchmark: is the ordinal (cumulative-probability) model viable for any numeric column under Censor_ref?

The ordinal model (:mod:`dpsynth.models.ordinal`, Liu, Shepherd, Li and Harrell 2017) cuts a column
into public bins between public bounds and models each record's bin with a cumulative-logit
regression: every record term is a log probability (one-signed, no unit). This script measures, at
n = 500 and a total eps = 1 (one record removed), on six generated columns with public bounds,

* a real-valued column with negatives (a normal, bounds [-20, 20]);
* a spending column with 25% exact zeros (lognormal otherwise, bounds [0, 50,000]);
* a share in (0, 1) (a Beta(2, 5), bounds [0, 1]);
* a bimodal column (two normals at 20 and 50, bounds [0, 100]);
* integer hours heaped at 40 (half the records; bounds [0, 100], a count);
* a count from 0 to 200 (a negative binomial with mean 30, top-coded at 200, bounds [0, 200]),

three synthesizers, three seeds each (a new data set per seed):

* ``ordinal``: ``Synthesizer(df, target, model="ordinal", mechanism="censor_ref", eps=1, bounds=...,
  neighbours="remove")``, the bins cut between the bounds by the public rule
  :func:`dpsynth.models.ordinal.default_bins`;
* ``ordinal_cal``: the same with ``calibrate={"lower": ..., "upper": ...}``: the fit also releases the target's
  noise-aware DP marginal (its share out of the same eps), and the model's synthetic values are replaced, rank
  for rank, by values drawn from it (the model keeps the ranks, the marginal comes from the DP histogram);
* ``ph``: the perturbed histogram, ``mechanism="ph"`` with the same bounds (its default 30 bins);
* ``noise_aware``: the noise-aware marginal, ``mechanism="noise_aware"`` with the same bounds;

and reports the KS distance (largest distance between the empirical distribution functions) of one
synthetic data set (``sample_unaccounted``) against the data, the seconds per fit (the first fit of a
column's ordinal model includes its compilation, reported apart) and convergence (R-hat, bulk ESS,
divergences, the share of records censored at a typical draw). One more run fits the ordinal model of
a real-valued target on a binary and a numeric public covariate (``neighbours="replace"``) and compares
the regression of the target's rank (``rank / (n + 1)``, OLS on the covariates) in the synthetic data
with the data's.

Run with ``python benchmarks/bench_ordinal.py [--seeds 1-3] [--no-record]``; writes
``benchmarks/results/bench_ordinal.json``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from _home import temporary_home
from _record import Record
from bench_convergence import parse_seeds

N = 500
EPS = 1.0
SEEDS = (1, 2, 3)
METHODS = ("ordinal", "ordinal_cal", "ph", "noise_aware")


def column(name: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, tuple[float, float]]:
    """One generated column and its public bounds."""
    if name == "real":
        return rng.normal(-2.0, 4.0, n), (-20.0, 20.0)
    if name == "spending":
        return np.where(rng.random(n) < 0.25, 0.0, np.round(rng.lognormal(5.5, 1.2, n), 2)), (0.0, 50_000.0)
    if name == "share":
        return rng.beta(2.0, 5.0, n), (0.0, 1.0)
    if name == "bimodal":
        return np.where(rng.random(n) < 0.4, rng.normal(20.0, 3.0, n), rng.normal(50.0, 6.0, n)), (0.0, 100.0)
    if name == "hours":
        return np.where(rng.random(n) < 0.5, 40, rng.integers(0, 81, n)).astype(np.int64), (0.0, 100.0)
    if name == "count":
        return np.minimum(rng.negative_binomial(1.5, 1.5 / 31.5, n), 200).astype(np.int64), (0.0, 200.0)
    raise ValueError(name)


COLUMNS = ("real", "spending", "share", "bimodal", "hours", "count")


def ks_distance(a: np.ndarray, b: np.ndarray) -> float:
    """The largest distance between the empirical distribution functions of ``a`` and ``b`` (ties counted)."""
    grid = np.union1d(a, b)
    fa = np.searchsorted(np.sort(a), grid, side="right") / a.size
    fb = np.searchsorted(np.sort(b), grid, side="right") / b.size
    return float(np.max(np.abs(fa - fb)))


def synthesizer(df, target: str, method: str, bounds, covariates=None, neighbours="remove"):
    from dpsynth import Synthesizer

    kw = dict(eps=EPS, bounds=bounds, neighbours=neighbours, mode="research", progress=False)
    if method == "ordinal":
        return Synthesizer(df, target, covariates=covariates, model="ordinal", mechanism="censor_ref", **kw)
    if method == "ordinal_cal":  # the same, its values mapped rank for rank onto the target's noise-aware DP marginal
        lo, hi = bounds
        return Synthesizer(df, target, covariates=covariates, model="ordinal", mechanism="censor_ref",
                           calibrate={"lower": lo, "upper": hi}, **kw)
    return Synthesizer(df, target, covariates=covariates, mechanism=method, **kw)


def run_one(name: str, method: str, seed: int) -> dict:
    """Fit ``method`` on column ``name`` drawn with ``seed``; one synthetic set's KS and the fit's checks."""
    import pandas as pd

    from dpsynth.fitting import compile_count

    rng = np.random.default_rng([seed, COLUMNS.index(name)])
    x, bounds = column(name, N, rng)
    df = pd.DataFrame({"y": x})
    out = {"column": name, "method": method, "seed": seed}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = synthesizer(df, "y", method, bounds)
        c0 = compile_count()
        t0 = time.perf_counter()
        s.fit(seed=seed)
        out["seconds"] = round(time.perf_counter() - t0, 2)
        out["compiled"] = compile_count() > c0
        p = s.privacy  # the same whether or not the chains converged
        out.update(converged=bool(p.converged), rhat_max=round(float(p.rhat_max), 4),
                   ess_min=round(float(p.ess_min), 1), divergences=int(p.divergences),
                   censored_typical=round(float(p.censored_typical), 4), eps_remove=round(float(p.budget.total), 4))
        if method.startswith("ordinal"):
            fam = s.family()
            out.update(bins=fam.n_bins, tolerance=round(fam.reference_tolerance(), 3),
                       alpha=round(float(p.extra.get("alpha", np.nan)), 4))
        syn = s.sample_unaccounted(seed=seed)["y"].to_numpy(float)
        out["ks"] = round(ks_distance(x.astype(float), syn), 4)
        lo, hi = bounds
        out["inside_bounds"] = bool(((syn >= lo) & (syn <= hi)).all())
        if name == "spending":
            out["zeros"] = [round(float(np.mean(x == 0)), 3), round(float(np.mean(syn == 0)), 3)]
        if name == "hours":
            out["at_40"] = [round(float(np.mean(x == 40)), 3), round(float(np.mean(syn == 40)), 3)]
    out["warnings"] = sorted({str(w.message)[:100] for w in caught if not issubclass(w.category, FutureWarning)})
    return out


def rank_ols(y: np.ndarray, X: np.ndarray) -> np.ndarray:
    """OLS coefficients of ``rank(y) / (n + 1)`` on ``X`` (an intercept added)."""
    from scipy.stats import rankdata

    r = rankdata(y) / (y.size + 1)
    A = np.column_stack([np.ones(y.size), X])
    return np.linalg.lstsq(A, r, rcond=None)[0]


def run_covariates(seed: int, method: str = "ordinal") -> dict:
    """The ordinal model of a real-valued target on a binary and a numeric covariate, one record replaced."""
    import pandas as pd

    rng = np.random.default_rng([seed, 99])
    g = rng.random(N) < 0.4
    z = rng.normal(50.0, 10.0, N)  # a numeric covariate in its own unit (centred and scaled by the Synthesizer)
    y = -1.0 + 2.0 * g + 0.15 * (z - 50.0) + rng.normal(0.0, 2.0, N)
    df = pd.DataFrame({"y": y, "group": np.where(g, "b", "a"), "z": z})
    out = {"seed": seed, "method": method}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = synthesizer(df, "y", method, (-20.0, 20.0), covariates=["group", "z"], neighbours="replace")
        t0 = time.perf_counter()
        s.fit(seed=seed)
        out["seconds"] = round(time.perf_counter() - t0, 2)
        p = s.privacy
        out.update(converged=bool(p.converged), rhat_max=round(float(p.rhat_max), 4),
                   ess_min=round(float(p.ess_min), 1), divergences=int(p.divergences),
                   censored_typical=round(float(p.censored_typical), 4), alpha=round(float(p.extra["alpha"]), 4),
                   eps_replace=round(float(p.budget.total), 4))
        syn = s.sample_unaccounted(seed=seed)
        X = np.column_stack([g, (z - 50.0) / 10.0])
        Xs = np.column_stack([syn["group"].to_numpy() == "b", (syn["z"].to_numpy() - 50.0) / 10.0])
        out["rank_ols_data"] = [round(float(v), 4) for v in rank_ols(y, X)]
        out["rank_ols_synthetic"] = [round(float(v), 4) for v in rank_ols(syn["y"].to_numpy(float), Xs)]
        out["beta_posterior_mean"] = [round(float(v), 3) for v in np.mean(s.draws["beta"], axis=0)]
        out["ks"] = round(ks_distance(y, syn["y"].to_numpy(float)), 4)
    out["warnings"] = sorted({str(w.message)[:100] for w in caught if not issubclass(w.category, FutureWarning)})
    return out


def table(rows: list[dict]) -> str:
    """Median KS, seconds per fit and convergence by column and method."""
    lines = [f"{'column':9s} {'method':12s} {'KS (median, [min, max])':26s} {'s/fit':>7s} {'1st fit':>8s} "
             f"{'conv':>5s} {'R-hat':>6s} {'ESS':>6s} {'cens':>5s}"]
    for name in COLUMNS:
        for method in METHODS:
            g = [r for r in rows if r["column"] == name and r["method"] == method]
            if not g:
                continue
            ks = [r["ks"] for r in g]
            later = [r["seconds"] for r in g if not r["compiled"]] or [r["seconds"] for r in g]
            first = [r["seconds"] for r in g if r["compiled"]]
            rh = [r["rhat_max"] for r in g if np.isfinite(r["rhat_max"])]
            es = [r["ess_min"] for r in g if np.isfinite(r["ess_min"])]
            lines.append(
                f"{name:9s} {method:12s} {np.median(ks):.3f} [{min(ks):.3f}, {max(ks):.3f}]{'':8s} "
                f"{np.median(later):7.1f} {(f'{first[0]:8.1f}' if first else '       -')} "
                f"{sum(r['converged'] for r in g)}/{len(g):<3d} {(f'{max(rh):6.3f}' if rh else '     -')} "
                f"{(f'{min(es):6.0f}' if es else '     -')} {np.median([r['censored_typical'] for r in g]):5.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=parse_seeds, default=list(SEEDS))
    ap.add_argument("--columns", nargs="+", choices=COLUMNS, default=list(COLUMNS))
    ap.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    ap.add_argument("--no-covariates", action="store_true", help="skip the run with covariates")
    ap.add_argument("--no-record", action="store_true", help="print only; do not write the JSON record")
    args = ap.parse_args(argv)
    description = (
        f"n = {N}, total eps = {EPS:g} (one record removed; the covariate run: one replaced), seeds "
        f"{args.seeds[0]}-{args.seeds[-1]}, six generated columns with public bounds. `ordinal`: model='ordinal' "
        "(bins from the bounds by `default_bins`) with mechanism='censor_ref'; `ph` and `noise_aware` with the same "
        "bounds. KS: the largest distance between the empirical distribution functions of one synthetic data set "
        "(`sample_unaccounted`) and the data. Seconds per fit: a compiled model's fit (the first ordinal fit of a "
        "column includes its compilation, shown apart). Machine shared with other work: times are indicative.")
    rec = None if args.no_record else Record(__file__, "The ordinal model over public bins: feasibility",
                                             description, {"n": N, "eps": EPS, "seeds": args.seeds,
                                                           "columns": args.columns, "methods": args.methods})
    rows: list[dict] = []
    cov_rows: list[dict] = []

    def run() -> None:
        with temporary_home():
            for name in args.columns:
                for method in args.methods:
                    for seed in args.seeds:
                        r = run_one(name, method, seed)
                        rows.append(r)
                        print(f"{name:9s} {method:12s} seed {seed}: KS {r['ks']:.3f}  {r['seconds']:6.1f} s"
                              f"{' (compiled)' if r['compiled'] else ''}  converged {r['converged']}  R-hat "
                              f"{r['rhat_max']:.3f}  ESS {r['ess_min']:.0f}  div {r['divergences']}  censored "
                              f"{r['censored_typical']:.2f}" + "".join(f"  {k} {r[k]}" for k in ("zeros", "at_40")
                                                                      if k in r), flush=True)
            for method in ([] if args.no_covariates else [m for m in args.methods if m.startswith("ordinal")]):
                for seed in args.seeds:
                    r = run_covariates(seed, method)
                    cov_rows.append(r)
                    print(f"covariates {method} seed {seed}: rank OLS data {r['rank_ols_data']} synthetic "
                          f"{r['rank_ols_synthetic']}  beta {r['beta_posterior_mean']}  alpha {r['alpha']}  "
                          f"{r['seconds']:.1f} s  converged {r['converged']}", flush=True)

    if rec is None:
        run()
    else:
        with rec:
            run()
            for name in args.columns:
                for method in args.methods:
                    g = [r for r in rows if r["column"] == name and r["method"] == method]
                    later = [r["seconds"] for r in g if not r["compiled"]] or [r["seconds"] for r in g]
                    rec.add(f"{method}: median KS", round(float(np.median([r["ks"] for r in g])), 3), "", group=name)
                    rec.add(f"{method}: median s per fit", round(float(np.median(later)), 1), "s", group=name)
                    rec.add(f"{method}: converged", sum(r["converged"] for r in g), f"of {len(g)}", group=name)
            for r in cov_rows:
                group = f"covariates ({r['method']}), seed {r['seed']}"
                rec.add("rank OLS (group, z): data", r["rank_ols_data"][1:], "", group=group)
                rec.add("rank OLS (group, z): synthetic", r["rank_ols_synthetic"][1:], "", group=group)
                rec.add("KS", r["ks"], "", group=group)
            rec.data["runs"] = rows
            rec.data["covariate_runs"] = cov_rows
    print()
    print(table(rows))
    if cov_rows:
        print("\nrank regression on (intercept, group b, z in sd): data vs synthetic (censor_ref, one record replaced)")
        for r in cov_rows:
            print(f"  {r['method']:11s} seed {r['seed']}: data {r['rank_ols_data']}  synthetic "
                  f"{r['rank_ols_synthetic']}  KS {r['ks']:.3f}  converged {r['converged']}")
    return rows


if __name__ == "__main__":
    main()

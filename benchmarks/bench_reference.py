"""Benchmark: how often Censor_ref's default reference falls outside what its windows tolerate, on real files.

Censor_ref measures each record's term from a reference and clamps the difference to a window of
``K = M / alpha`` (2.5 by default) log-likelihood units on either side
(:mod:`dpsynth.mechanisms.censored_reference`). A reference *fails* a data set when, at the data's
own maximum-likelihood fit (what the censored fit is after), more than a quarter of the records'
differences ``f_theta(x_i) - r_i`` lie outside ``[-K, K]``: the fit would then censor a large part of
the data (the failure of a DP median reference that lands far off is that nearly every record lies
outside). Records far in a tail that the model does not fit lie outside any window; the 99th
percentile of the share outside is recorded beside the failures to show how many there are.

For each family's default reference this script draws 10,000 random subsamples of
``n`` records (without replacement) of real public files for each ``n`` in {50, 100, 200, 500, 3,000}
(where the file has that many) and counts the failures:

* a positive continuous column (a lognormal, each record at its own location with the public scale
  2): the CPS 1988 weekly wage (in dollars, thousands and millions: the reference is unit-free, so the
  three units give the same differences), ISLR's wage and the Windsor house prices;
* a count (a negative binomial, each record at its own mean with the public dispersion 1): NMES
  physician visits and chronic conditions, and the houses' bedrooms;
* a categorical column (each record at its level's share from DP counts, Laplace noise at eps = 0.1,
  the default share of a total eps of 1 under one record replaced, the noise drawn anew for every
  release): the fishing mode, ISLR's marital status and NMES's health.

The maximum-likelihood fits are the marginal ones (no covariates: the widest residuals). No MCMC is
run. Target (issue 28): at most 1 failure in 1,000 at every ``n >= 50``.

Run with ``make bench`` (or ``python benchmarks/bench_reference.py [--releases N]``); writes
``benchmarks/results/bench_reference.json``, rendered into ``BENCHMARKS.md``.
"""

from __future__ import annotations

import argparse

import numpy as np
from _record import Record
from scipy import optimize, special

NS = (50, 100, 200, 500, 3000)
RELEASES = 10_000
TOLERANCE = 2.5
OUTSIDE = 0.25  # a reference fails when more than this share of records lie outside their windows
REFERENCE_EPS, REPLACE_SENSITIVITY = 0.1, 2.0


def _lognormal_outside(t: np.ndarray) -> bool:
    from dpsynth.models.lognormal import REFERENCE_SD

    sigma = max(float(t.std()), 1e-12)
    z = (t - t.mean()) / sigma
    diff = np.log(REFERENCE_SD / sigma) - 0.5 * z**2  # the lognormal's term minus its saturated one (log x cancels)
    return float(np.mean(np.abs(diff) > TOLERANCE))


def _nb_loglik(x: np.ndarray, mu: float, phi: float) -> np.ndarray:
    return (special.gammaln(x + phi) - special.gammaln(phi) - special.gammaln(x + 1.0)
            + phi * np.log(phi / (phi + mu)) + special.xlogy(x, mu / (phi + mu)))


def _nb_outside(x: np.ndarray) -> bool:
    from dpsynth.models import NegBinomialRegression

    mu = max(float(x.mean()), 1e-9)  # the NB2 maximum-likelihood mean of an intercept-only model
    res = optimize.minimize_scalar(lambda lp: -_nb_loglik(x, mu, np.exp(lp)).sum(), bounds=(-8.0, 12.0),
                                   method="bounded")
    diff = _nb_loglik(x, mu, float(np.exp(res.x))) - NegBinomialRegression().reference_loglik(x)
    return float(np.mean(np.abs(diff) > TOLERANCE))


def _categorical_outside(codes: np.ndarray, levels: int, rng: np.random.Generator) -> bool:
    counts = np.bincount(codes, minlength=levels).astype(float)
    b = REPLACE_SENSITIVITY / REFERENCE_EPS
    smoothed = np.maximum(counts + rng.laplace(0.0, b, levels), 0.0) + b  # as level_shares releases them
    shares = smoothed / smoothed.sum()
    p_ml = counts / counts.sum()
    diff = np.log(p_ml[codes]) - np.log(shares[codes])
    return float(np.mean(np.abs(diff) > TOLERANCE))


def _files():
    import pandas as pd

    from dpsynth_book import public_data as pdata

    cps = pdata.cps1988("dollars")["wage"].to_numpy(dtype=float)
    house = pdata.house_prices()
    nmes = pdata.nmes1988()
    wage = pdata.islr_wage()
    fish = pdata.fishing()
    health = pd.Categorical(nmes["health"], categories=list(pdata.NMES_HEALTH_LEVELS))
    return [
        ("continuous", "CPS 1988 wage ($)", np.log(cps)),
        ("continuous", "CPS 1988 wage ($1000s)", np.log(cps / 1e3)),
        ("continuous", "CPS 1988 wage ($ millions)", np.log(cps / 1e6)),
        ("continuous", "ISLR wage", np.log(wage["wage"].to_numpy(dtype=float))),
        ("continuous", "house price", np.log(house["price"].to_numpy(dtype=float))),
        ("count", "NMES visits", nmes["visits"].to_numpy(dtype=float)),
        ("count", "NMES chronic conditions", nmes["chronic"].to_numpy(dtype=float)),
        ("count", "house bedrooms", house["bedrooms"].to_numpy(dtype=float)),
        ("categorical", "fishing mode", np.asarray(fish["mode"].cat.codes)),
        ("categorical", "ISLR marital status", np.asarray(wage["maritl"].cat.codes)),
        ("categorical", "NMES health", np.asarray(health.codes)),
    ]


def main(releases: int) -> None:
    with Record(__file__, "Censor_ref's reference on real files",
                f"Share of {releases:,} random subsamples of n records (a categorical column: of releases of its DP "
                f"counts) whose default reference leaves more than {OUTSIDE:.0%} of the records outside their "
                f"windows (K = {TOLERANCE:g}) at the data's maximum-likelihood fit. Target: at most 1 in 1,000.",
                parameters={"releases": releases, "ns": list(NS), "tolerance": TOLERANCE,
                            "reference_eps": REFERENCE_EPS}) as rec:
        rng = np.random.default_rng(20261126)
        for kind, name, values in _files():
            levels = int(values.max()) + 1 if kind == "categorical" else 0
            for n in NS:
                if n > values.size:
                    rec.add(f"n = {n}", float("nan"), "failures per 1,000", group=f"{kind}: {name}")
                    rec.add(f"n = {n}: 99th pct outside", float("nan"), "share", group=f"{kind}: {name}")
                    continue
                shares = np.empty(releases)
                for k in range(releases):
                    sub = values if n == values.size else values[rng.choice(values.size, n, replace=False)]
                    if kind == "continuous":
                        shares[k] = _lognormal_outside(sub)
                    elif kind == "count":
                        shares[k] = _nb_outside(sub)
                    else:
                        shares[k] = _categorical_outside(sub.astype(np.int64), levels, rng)
                fails = int((shares > OUTSIDE).sum())
                rec.add(f"n = {n}", 1000.0 * fails / releases, "failures per 1,000", target="<= 1",
                        group=f"{kind}: {name}")
                rec.add(f"n = {n}: 99th pct outside", float(np.quantile(shares, 0.99)), "share",
                        group=f"{kind}: {name}")
                print(f"{kind:12s} {name:28s} n={n:5d}: {fails} of {releases} (99th percentile outside "
                      f"{np.quantile(shares, 0.99):.3f})", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--releases", type=int, default=RELEASES)
    main(ap.parse_args().releases)

"""Seeded stand-ins for the SDR samples of the two papers, calibrated to their published summaries.

The 2017 SDR public use file cannot be downloaded on the machines that build this book.
:func:`standin_censoring` and :func:`standin_reweighting` generate seeded samples of the same
shape as :func:`dpsynth_book.sdr.loader.load_sdr` returns, whose salary distribution is calibrated to
the papers' published summaries (:data:`CENSORING_TARGETS`, :data:`REWEIGHTING_TARGETS`). They
are not the real data, and every figure or table made from them says so
(:data:`dpsynth_book.plots.STAND_IN_NOTE`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import optimize

from dpsynth.seeds import SeedLike, generator
from dpsynth.validation import DataError

from .design import AGE_LEVELS, PUBLIC_SALARY_BOUND, WEEKS_RANGE
from .loader import SDRData, salary_summary

__all__ = [
    "CENSORING_TARGETS",
    "REWEIGHTING_TARGETS",
    "AGE_PROBS",
    "AGE_EFFECT",
    "FEMALE_SHARE",
    "FEMALE_EFFECT",
    "WEEKS_52_SHARE",
    "WEEKS_EFFECT_PER_WEEK",
    "standin_censoring",
    "standin_reweighting",
]

#: Published summaries of the censoring paper's sample (mathematics and statistics faculty at
#: 4-year institutions), dollars.
CENSORING_TARGETS = {"mean": 91_019.0, "median": 80_000.0, "q15": 51_000.0, "q90": 150_000.0}
#: Published summaries of the re-weighting paper's sample (n = 1000), dollars.
REWEIGHTING_TARGETS = {"mean": 107_609.0, "median": 95_000.0, "sd": 69_718.0, "min": 0.0, "max": 509_000.0}



def _split_normal(u: np.ndarray, v: np.ndarray, s_left: float, s_right: float) -> np.ndarray:
    """Split-normal log-scale noise: half-normal left with sd ``s_left``, right with ``s_right``."""
    side = u < s_left / (s_left + s_right)
    return np.where(side, -s_left * np.abs(v), s_right * np.abs(v))


#: Covariate model of the censoring stand-in (log-salary effects). Documented in the chapter.
AGE_PROBS = (0.08, 0.14, 0.15, 0.14, 0.13, 0.12, 0.11, 0.08, 0.05)
AGE_EFFECT = (-0.25, -0.15, -0.05, 0.03, 0.10, 0.15, 0.18, 0.20, 0.15)
FEMALE_SHARE = 0.30
FEMALE_EFFECT = -0.06
WEEKS_52_SHARE = 0.85
WEEKS_EFFECT_PER_WEEK = 0.01


def _censoring_covariates(rng: np.random.Generator, n: int) -> dict[str, np.ndarray]:
    gender = np.where(rng.random(n) < FEMALE_SHARE, "F", "M")
    age = np.asarray(AGE_LEVELS)[rng.choice(len(AGE_LEVELS), size=n, p=AGE_PROBS)]
    weeks = np.where(rng.random(n) < WEEKS_52_SHARE, 52, rng.integers(36, 52, size=n))
    few = rng.random(n) < 0.01
    weeks = np.where(few, rng.integers(WEEKS_RANGE[0], 36, size=n), weeks)
    return {"gender": gender, "age_group": age.astype(int), "weeks": weeks.astype(int)}


def _covariate_effect(gender, age, weeks) -> np.ndarray:
    a = dict(zip(AGE_LEVELS, AGE_EFFECT))
    return (np.array([a[int(v)] for v in np.asarray(age)]) + FEMALE_EFFECT * (np.asarray(gender) == "F")
            + WEEKS_EFFECT_PER_WEEK * (np.asarray(weeks) - 52))


def _calibrate(make, targets: Mapping[str, float], keys: Sequence[str], starts) -> tuple[np.ndarray, tuple]:
    """Fit the noise sds ``(s_left, s_right)`` so that ``make(sl, sr)`` matches ``targets[keys]``.

    ``make`` sets the location itself so that the sample median equals the published one; the
    sds are fitted by a derivative-free search (quantiles are step functions) on the squared
    log ratios, from a few starting points.
    """
    def loss(p):
        st = salary_summary(make(np.exp(p[0]), np.exp(p[1]))[0])
        return float(sum(np.log(max(st[k], 1.0) / targets[k]) ** 2 for k in keys))

    best = None
    for x0 in starts:
        sol = optimize.minimize(loss, x0=np.log(np.asarray(x0, dtype=float)), method="Nelder-Mead",
                                options={"xatol": 1e-6, "fatol": 1e-12, "maxiter": 1000})
        if best is None or sol.fun < best.fun:
            best = sol
    sl, sr = float(np.exp(best.x[0])), float(np.exp(best.x[1]))
    s, m = make(sl, sr)
    return s, (m, sl, sr)


def standin_censoring(n: int = 1000, seed: SeedLike = 2017) -> SDRData:
    """Stand-in for the censoring paper's sample: salary, gender, age group, weeks worked.

    Covariates: 30% women, nine age groups (30-34 to 70-74, hump-shaped shares), 85% work 52
    weeks, the rest 36-51 (1% fewer than 36). Log salary = ``m`` + age, gender and weeks effects
    + split-normal noise (sds ``s_left``, ``s_right``). The random numbers are drawn once from
    ``seed``; then ``(m, s_left, s_right)`` are fitted (least squares on log ratios) so that this
    very sample's mean, median, 15th and 90th percentiles match the published ones. Salaries are
    rounded to whole dollars and capped below :data:`PUBLIC_SALARY_BOUND`.
    """
    if not isinstance(n, (int, np.integer)) or n < 2:
        raise DataError(f"`n` must be an integer >= 2; got {n!r}.")
    rng = generator(seed)
    cov = _censoring_covariates(rng, int(n))
    eff = _covariate_effect(cov["gender"], cov["age_group"], cov["weeks"])
    u, v = rng.random(int(n)), rng.standard_normal(int(n))

    def make(sl, sr):
        z = eff + _split_normal(u, v, sl, sr)
        m = np.log(CENSORING_TARGETS["median"]) - np.median(z)
        return np.round(np.minimum(np.exp(m + z), PUBLIC_SALARY_BOUND - 1.0)), float(m)

    s, (m, sl, sr) = _calibrate(make, CENSORING_TARGETS, ("mean", "median", "q15", "q90"),
                                [(0.4, 0.5), (0.3, 0.6), (0.5, 0.4)])
    frame = pd.DataFrame({"salary": s, **cov})
    desc = (f"stand-in for the censoring paper's SDR sample (n = {n}, seed {seed}; log salary = "
            f"{m:.3f} + effects + split-normal noise with sds {sl:.3f}/{sr:.3f})")
    return SDRData(frame=frame, source="stand-in", description=desc,
                   steps=[{"step": "generated", "n_before": int(n), "n_after": int(n)}],
                   targets=dict(CENSORING_TARGETS))


def standin_reweighting(n: int = 1000, seed: SeedLike = 2017) -> SDRData:
    """Stand-in for the re-weighting paper's salary sample (n = 1000).

    Log salary is split-normal, capped at the published maximum $509,000 and rounded to whole
    dollars; the published minimum ($0) and maximum ($509,000) are placed as the first two
    records, so the range matches. The random numbers are drawn once from ``seed``; then the
    split normal's ``(m, s_left, s_right)`` are fitted so that this very sample's mean, median and
    sd match the published ones.
    """
    if not isinstance(n, (int, np.integer)) or n < 3:
        raise DataError(f"`n` must be an integer >= 3; got {n!r}.")
    rng = generator(seed)
    t = REWEIGHTING_TARGETS
    u, v = rng.random(int(n)), rng.standard_normal(int(n))

    def make(sl, sr):
        z = _split_normal(u, v, sl, sr)
        z[:2] = (-np.inf, np.inf)  # the published minimum and maximum, placed below
        m = np.log(t["median"]) - np.median(z)
        s = np.round(np.minimum(np.exp(m + z), t["max"]))
        s[0], s[1] = t["min"], t["max"]
        return s, float(m)

    s, (m, sl, sr) = _calibrate(make, t, ("mean", "median", "sd"), [(0.45, 0.6), (0.3, 0.8), (0.6, 0.5)])
    desc = (f"stand-in for the re-weighting paper's SDR salary sample (n = {n}, seed {seed}; log salary "
            f"split-normal around {m:.3f} with sds {sl:.3f}/{sr:.3f}, range fixed at $0-$509,000)")
    return SDRData(frame=pd.DataFrame({"salary": s}), source="stand-in", description=desc,
                   steps=[{"step": "generated", "n_before": int(n), "n_after": int(n)}],
                   targets=dict(t))



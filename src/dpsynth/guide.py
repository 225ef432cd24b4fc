"""What a statistician at an agency needs to choose a mechanism: the decision table and how to read eps.

The decision table is built from the synthesizer registry (:mod:`dpsynth.registry`) plus what
each mechanism needs and costs; the odds table turns an epsilon into the largest change it
allows in an intruder's odds about one record.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from . import registry
from .validation import DataError

__all__ = ["NEEDS", "decision_table", "odds_table", "posterior_probability_bound"]

#: Per registry key: (what it needs besides the model, MCMC fits per release, when to use it).
NEEDS: dict[str, tuple[str, str, str]] = {
    "weighted": ("nothing else", "2 (unweighted, weighted)",
                 "best utility of the model-based mechanisms when a local, data-dependent guarantee is acceptable"),
    "lw": ("nothing else", "2 (unweighted, weighted)", "as Weighted (the re-weighting paper's name)"),
    "cw": ("a ball radius (matched to LW's bound by search)", "2-9 (radius search)",
           "when isolation in the data, not the model's fit, should decide the weights"),
    "sw": ("nothing else", "2-5 (scalar search)",
           "a single weight, i.e. the exponential mechanism: simplest to explain"),
    "lw_final": ("an LW fit", "3-10 (search over k)", "after LW, to give back utility to over-down-weighted records"),
    "cw_final": ("a CW fit", "3-10 (search over k)", "after CW, same as LW_final"),
    "weighted_e": ("a target eps", "3", "only to show what zeroing risky records does; it can end above eps/2"),
    "censor_w": ("a target eps", "2 (unweighted, censored)",
                 "as in the papers: Delta <= eps/2 holds, but the weights leak the data, so only aDP"),
    "censor_w_public": ("a target eps and a historical (public) data set for the weight rule",
                        "1 per release (+1 once, on the historical data)",
                        "regular releases of a survey with a public or earlier wave: strict DP with weights"),
    "censor_uw": ("a target eps", "1", "strict DP with no other data; expect many censored records at small eps"),
    "ph": ("a public bound [0, L] of the variable, a bin rule", "0 (no model)",
           "a bounded univariate variable; a strong baseline when n is large"),
    "ph_paper": ("as PH", "0", "the papers' calibration, shown for comparison (eps/2 under removal)"),
    "range_averaged": ("public ranges [a x_i, b x_i] an intruder is credited with", "2",
                       "when a range around each value is public knowledge"),
    "range_truncated": ("public ranges", "2", "as (A), with the range-truncated likelihood"),
    "range_truncated_whole": ("public ranges", "2", "reading (B') of the range-truncated likelihood"),
}


def decision_table(keys: Sequence[str] | None = None) -> pd.DataFrame:
    """The decision table: guarantee (from the registry), needs, fits per release, when to use.

    Parameters
    ----------
    keys : sequence of str, optional
        Registry keys to include (default: every private mechanism of :data:`NEEDS`).
    """
    ks = list(NEEDS) if keys is None else list(keys)
    rows = []
    for k in ks:
        s = registry.spec(k)
        if k not in NEEDS:
            raise DataError(f"no decision-table entry for {k!r}; known: {sorted(NEEDS)}.")
        needs, fits, when = NEEDS[k]
        name = s.name + ("a,b]" if s.pattern else "")
        rows.append({"mechanism": name, "guarantee": s.guarantee, "needs": needs, "MCMC fits": fits,
                     "use it when": when})
    return pd.DataFrame(rows).set_index("mechanism")


def posterior_probability_bound(prior: float | np.ndarray, eps: float | np.ndarray) -> np.ndarray:
    """Largest posterior probability an eps-DP release allows from a prior probability.

    An eps-DP release multiplies an intruder's odds about one record (e.g. "this person is in
    the data", or "their value is above c") by at most ``e^eps``: posterior odds <= prior odds
    times ``e^eps``.
    """
    p = np.asarray(prior, dtype=float)
    e = np.asarray(eps, dtype=float)
    if np.any((p <= 0) | (p >= 1)) or np.any(~np.isfinite(p)):
        raise DataError(f"`prior` must lie in (0, 1); got {prior!r}.")
    if np.any(e < 0) or np.any(~np.isfinite(e)):
        raise DataError(f"`eps` must be finite and >= 0; got {eps!r}.")
    odds = p / (1 - p) * np.exp(e)
    return odds / (1 + odds)


def odds_table(eps_grid: Sequence[float], priors: Sequence[float] = (0.01, 0.1, 0.5)) -> pd.DataFrame:
    """For each eps: the odds factor ``e^eps`` and the largest posterior probability per prior."""
    rows = {}
    for e in eps_grid:
        row = {"odds factor e^eps": float(np.exp(e))}
        for p in priors:
            row[f"prior {p:g} -> at most"] = float(posterior_probability_bound(p, e))
        rows[float(e)] = row
    return pd.DataFrame(rows).T.rename_axis("eps")

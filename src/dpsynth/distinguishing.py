"""Distinguishing games: an empirical lower bound on epsilon from outputs on two neighbouring data sets.

An adversary who sees one output of a mechanism run on ``D`` or on its neighbour ``D'`` decides
which it was with an event ``E`` (a refusal, a statistic above a threshold). If the mechanism is
``eps``-DP, ``P(E | D) <= e^eps P(E | D')`` for every event, so from ``k`` of ``n`` outputs in ``E``
on ``D`` and ``k'`` of ``n'`` on ``D'``,

.. math:: \\varepsilon \\ge \\log \\frac{\\underline{p}}{\\overline{p}'}

with a one-sided Clopper-Pearson lower bound of ``P(E | D)`` and upper bound of ``P(E | D')`` (each
at ``alpha / 2``), which holds with probability at least ``1 - alpha``. The bound is taken over the
event and its complement, in both directions (:func:`empirical_eps`). A test of a guarantee uses
it both ways: an honest mechanism's bound must stay below its claimed eps, and a control that
leaks (a refusal computed from a confidential figure, an unclamped likelihood) must exceed it,
so the game is shown able to detect what it tests for.

:func:`threshold_game` turns a real-valued statistic into an event without looking at the
outcomes it is scored on: the threshold is fitted on one half of the trials and scored on the other.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .validation import DataError

__all__ = ["clopper_pearson", "empirical_eps", "threshold_game"]


def clopper_pearson(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """One-sided ``1 - alpha`` Clopper-Pearson bounds ``(lower, upper)`` of a proportion ``k / n``."""
    from scipy.stats import beta

    if not (0 <= k <= n and n > 0):
        raise DataError(f"need 0 <= k <= n and n > 0; got k = {k!r}, n = {n!r}.")
    lo = 0.0 if k == 0 else float(beta.ppf(alpha, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - alpha, k + 1, n - k))
    return lo, hi


def empirical_eps(k: int, n: int, k_prime: int, n_prime: int, alpha: float = 0.05) -> float:
    """A lower bound on eps (``>= 0``) that holds with probability ``1 - alpha``, from ``k / n`` outputs in an event
    on ``D`` and ``k' / n'`` on ``D'`` (the event, its complement, either direction)."""
    out = 0.0
    for a, na, b, nb in ((k, n, k_prime, n_prime), (k_prime, n_prime, k, n),
                         (n - k, n, n_prime - k_prime, n_prime), (n_prime - k_prime, n_prime, n - k, n)):
        lo, _ = clopper_pearson(a, na, alpha / 2)
        _, hi = clopper_pearson(b, nb, alpha / 2)
        if lo > 0 and hi > 0:
            out = max(out, float(np.log(lo / hi)))
    return out


def threshold_game(stat: Sequence[float], stat_prime: Sequence[float], alpha: float = 0.05) -> float:
    """The empirical eps of the event ``statistic > threshold``, the threshold fitted on the first half of each
    sample (halfway between their medians) and scored on the second half."""
    a, b = np.asarray(stat, dtype=float), np.asarray(stat_prime, dtype=float)
    if a.size < 4 or b.size < 4:
        raise DataError("a threshold game needs at least 4 trials on each data set (half to fit, half to score).")
    ha, hb = a.size // 2, b.size // 2
    t = 0.5 * (np.median(a[:ha]) + np.median(b[:hb]))
    ea, eb = a[ha:], b[hb:]
    return empirical_eps(int((ea > t).sum()), ea.size, int((eb > t).sum()), eb.size, alpha)

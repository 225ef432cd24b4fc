"""Structured verdicts: a paper's claim, whether our results support it, and the evidence.

A chapter's "What this shows" section is a list of :class:`Verdict` objects computed by package
functions from the study's results; the notebook only renders them (:func:`verdicts_markdown`).
Tests assert on ``holds`` and ``numbers``, never on the rendered sentences.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = ["Verdict", "verdicts_markdown", "quoted_numbers_table", "CONTRACTION_DEFINITION", "CONTRACTION_MIN_DATASETS",
           "contraction_verdict"]


@dataclass(frozen=True)
class Verdict:
    """One claim checked against one set of results.

    Attributes
    ----------
    key : str
        Short identifier used by tests, e.g. ``"censored_within_bound"``.
    claim : str
        The claim in words (as the paper makes it).
    holds : bool or None
        Whether the results support it (``None``: the results cannot decide).
    evidence : str
        One or two sentences with the numbers behind the verdict (MyST Markdown).
    numbers : mapping
        The numbers themselves, for tests and for glue.
    """

    key: str
    claim: str
    holds: bool | None
    evidence: str
    numbers: Mapping = field(default_factory=dict)

    @property
    def word(self) -> str:
        """``"holds"``, ``"does not hold"`` or ``"undecided"``."""
        return {True: "holds", False: "does not hold", None: "undecided"}[self.holds]

    def markdown(self) -> str:
        """``*claim* — **holds**: evidence``."""
        return f"*{self.claim}* — **{self.word}**: {self.evidence}"


def verdicts_markdown(verdicts: Iterable[Verdict]) -> str:
    """A numbered Markdown list of verdicts."""
    return "\n".join(f"{i}. {v.markdown()}" for i, v in enumerate(verdicts, start=1))


def quoted_numbers_table(verdicts: Iterable[Verdict], figures: Mapping[str, Iterable[tuple[str, str]]]):
    """The numbers the verdicts quote that the page's other tables do not show, one row per figure.

    Parameters
    ----------
    verdicts : list of Verdict
        The verdicts as the page lists them (their place in the list numbers the rows).
    figures : mapping
        ``{verdict key: [(figure, value as the verdict writes it), ...]}``; keys of verdicts not in
        ``verdicts`` are skipped (a study that did not run).

    Returns
    -------
    pandas.DataFrame
        Indexed by ``verdict`` (its number in the list) and ``figure``; one column, ``value``.
    """
    import pandas as pd

    place = {v.key: i for i, v in enumerate(verdicts, start=1)}
    rows = [(place[k], name, value) for k, figs in figures.items() if k in place for name, value in figs]
    rows.sort(key=lambda r: r[0])
    return pd.DataFrame(rows, columns=["verdict", "figure", "value"]).set_index(["verdict", "figure"])


#: The book's one definition of aDP contraction (the re-weighting paper's Figures 14–17): as n grows, the
#: distribution of the local bound Delta over data sets concentrates, i.e. its spread (the interquartile
#: range over data sets) falls at every step from one sample size studied to the next.
CONTRACTION_DEFINITION = ("the distribution of the local bound Δ over data sets concentrates as n grows: its "
                          "interquartile range over data sets falls at every step from one sample size to the next")
#: Fewest data sets per sample size for :func:`contraction_verdict` to decide.
CONTRACTION_MIN_DATASETS = 3


def _iqr(v) -> float:
    import numpy as np

    q75, q25 = np.nanpercentile(np.asarray(v, dtype=float), [75, 25])
    return float(q75 - q25)


def _steps(ns, values, fmt: str = ".2f") -> tuple[list[tuple[int, int]], str]:
    """The steps ``(n, n')`` at which ``values`` does not fall, and a phrase naming them."""
    bad = [(ns[i], ns[i + 1]) for i in range(len(ns) - 1) if not values[i + 1] < values[i]]
    words = [f"{'rises' if values[i + 1] > values[i] else 'stays'} from {values[i]:{fmt}} at n = {ns[i]} to "
             f"{values[i + 1]:{fmt}} at n = {ns[i + 1]}"
             for i in range(len(ns) - 1) if not values[i + 1] < values[i]]
    return bad, " and ".join(words)


def _median_phrase(ns, med) -> str:
    """How the median (the level the bound would settle at) moves over the sizes, in words."""
    change = med[-1] / med[0] - 1 if med[0] else float("nan")
    ups = sum(b > a for a, b in zip(med, med[1:]))
    downs = sum(b < a for a, b in zip(med, med[1:]))
    arrow = " → ".join(f"{x:.2f}" for x in med)
    if ups == len(med) - 1:
        how = "rises at every step"
    elif downs == len(med) - 1:
        how = "falls at every step"
    else:
        how = "moves"
    return f"the median {how} ({arrow}, {change:+.0%} from n = {ns[0]} to n = {ns[-1]})"


def contraction_verdict(deltas: Mapping, *, who: str, key: str = "local_bound_contracts",
                        min_datasets: int = CONTRACTION_MIN_DATASETS) -> Verdict:
    """The aDP contraction verdict, the same in every chapter (:data:`CONTRACTION_DEFINITION`).

    It holds when, in every group, the interquartile range (IQR) of Δ over the data sets falls at
    **every** step from one sample size to the next (strictly); a rise (or no change) at any step makes it
    fail, and the evidence names each such step. The evidence also says how the median moves, the level
    a contracting bound would settle at (a median that keeps rising has not settled), but the median does
    not decide the verdict.

    Parameters
    ----------
    deltas : mapping
        ``{n: Delta over data sets}``, or ``{group: {n: Delta over data sets}}`` for several data
        models (the verdict holds if it holds in every group).
    who : str
        The mechanism whose local bound is examined (its display name, e.g. ``"LW"``).
    key : str
        The verdict's key.
    min_datasets : int
        Fewest data sets at a sample size to decide; with fewer, or with one sample size, the
        verdict is undecided (``holds`` is None) and says why.

    Returns
    -------
    Verdict
        ``numbers``: per group, ``n``, ``iqr`` and ``median`` lists (in increasing n), ``datasets``,
        ``iqr_not_falling`` (the steps ``(n, n')`` at which the IQR does not fall; empty when it falls
        at every step), ``contracts`` (per group: True, False or None) and ``median_change`` (the
        median's relative change from the smallest to the largest n).
    """
    import numpy as np

    first = next(iter(deltas.values()), None)
    groups = deltas if isinstance(first, Mapping) else {"": deltas}
    numbers, parts, decided = {}, [], []
    for g, by_n in groups.items():
        ns = sorted(int(n) for n in by_n)
        arrays = [np.asarray(by_n[n] if n in by_n else by_n[float(n)], dtype=float) for n in ns]
        counts = [int(np.isfinite(a).sum()) for a in arrays]
        iqr = [_iqr(a) for a in arrays]
        med = [float(np.nanmedian(a)) for a in arrays]
        bad, where = _steps(ns, iqr) if len(ns) > 1 else ([], "")
        row = {"n": ns, "iqr": iqr, "median": med, "datasets": min(counts) if counts else 0,
               "iqr_not_falling": bad,
               "median_change": (med[-1] / med[0] - 1) if len(ns) > 1 and med[0] else float("nan")}
        numbers[g or who] = row
        label = f" ({g})" if g else ""
        if len(ns) < 2 or min(counts, default=0) < min_datasets:
            why = "one sample size" if len(ns) < 2 else f"{min(counts)} data sets at a sample size"
            parts.append(f"{who}{label}: {why}, so the spread cannot be compared across n")  # in ``numbers``
            row["contracts"] = None
            decided.append(None)
            continue
        arrow = " → ".join(f"{x:.2f}" for x in iqr)
        sizes = " → ".join(str(n) for n in ns)
        head = (f"{who}{label}: the IQR of Δ over data sets goes {arrow} as n goes {sizes} "
                f"({min(counts)} data sets per n)")
        verdict_part = ("; it falls at every step" if not bad else f"; it does not fall at every step: it {where}")
        parts.append(head + verdict_part + f"; {_median_phrase(ns, med)}")
        row["contracts"] = not bad
        decided.append(not bad)
    holds = None if not decided or any(d is None for d in decided) else all(decided)
    return Verdict(key, f"The local bound contracts as n grows ({CONTRACTION_DEFINITION}).", holds,
                   "; ".join(parts) + ".", numbers)

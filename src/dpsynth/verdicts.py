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
#: range over data sets) is smaller at the largest n than at the smallest.
CONTRACTION_DEFINITION = ("the distribution of the local bound Δ over data sets concentrates as n grows: its "
                          "interquartile range over data sets is smaller at the largest n than at the smallest")
#: Fewest data sets per sample size for :func:`contraction_verdict` to decide.
CONTRACTION_MIN_DATASETS = 3


def _iqr(v) -> float:
    import numpy as np

    q75, q25 = np.nanpercentile(np.asarray(v, dtype=float), [75, 25])
    return float(q75 - q25)


def contraction_verdict(deltas: Mapping, *, who: str, key: str = "local_bound_contracts",
                        min_datasets: int = CONTRACTION_MIN_DATASETS) -> Verdict:
    """The aDP contraction verdict, the same in every chapter (:data:`CONTRACTION_DEFINITION`).

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
        ``numbers``: per group, ``n``, ``iqr`` and ``median`` lists (in increasing n) and ``datasets``.
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
        numbers[g or who] = {"n": ns, "iqr": iqr, "median": med, "datasets": min(counts) if counts else 0}
        label = f" ({g})" if g else ""
        if len(ns) < 2 or min(counts, default=0) < min_datasets:
            why = "one sample size" if len(ns) < 2 else f"{min(counts)} data sets at a sample size"
            parts.append(f"{who}{label}: {why}, so the spread cannot be compared across n")  # in ``numbers``
            decided.append(None)
            continue
        arrow = " → ".join(f"{x:.2f}" for x in iqr)
        marr = " → ".join(f"{x:.2f}" for x in med)
        parts.append(f"{who}{label}: IQR of Δ over data sets {arrow}, median {marr} as n goes "
                     f"{' → '.join(str(n) for n in ns)} ({min(counts)} data sets per n)")
        decided.append(iqr[-1] < iqr[0])
    holds = None if not decided or any(d is None for d in decided) else all(decided)
    return Verdict(key, f"The local bound contracts as n grows ({CONTRACTION_DEFINITION}).", holds,
                   "; ".join(parts) + ".", numbers)

"""Structured verdicts: a paper's claim, whether our results support it, and the evidence.

A chapter's "What this shows" section is a list of :class:`Verdict` objects computed by package
functions from the study's results; the notebook only renders them (:func:`verdicts_markdown`).
Tests assert on ``holds`` and ``numbers``, never on the rendered sentences.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = ["Verdict", "verdicts_markdown"]


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

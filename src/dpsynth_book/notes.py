"""Marked notes on the book's disagreements with the papers.

Each disagreement a chapter finds with a paper is tested by a package function that returns a
:class:`~dpsynth_book.verdicts.Verdict` whose claim is the explanation tested. :func:`disagreement_note`
renders it as a MyST admonition titled ``"Explained: …"`` when the test supports the explanation
(``holds`` is True) and ``"Open: …"`` otherwise, so a reader sees at once which disagreements are
understood. The notebook displays the Markdown; every number in it comes from the verdict.
"""

from __future__ import annotations

from .verdicts import Verdict

__all__ = ["MARKERS", "note_title", "disagreement_note"]

#: The two markers a disagreement note's title starts with.
MARKERS = ("Explained", "Open")


def note_title(verdict: Verdict, short: str) -> str:
    """``"Explained: <short>"`` if the verdict holds, else ``"Open: <short>"``."""
    return f"{MARKERS[0] if verdict.holds is True else MARKERS[1]}: {short}"


def disagreement_note(verdict: Verdict, short: str, body: str | None = None) -> str:
    """A MyST admonition (class ``note`` if explained, ``warning`` if open) on one disagreement.

    Parameters
    ----------
    verdict : Verdict
        The test of the explanation (its ``claim`` is the explanation).
    short : str
        A short description of the disagreement, used in the title.
    body : str, optional
        The note's text; default: the claim, the verdict's word and its evidence.
    """
    cls = "note" if verdict.holds is True else "warning"
    text = body if body is not None else (f"*Explanation tested: {verdict.claim}* — **{verdict.word}**. "
                                          f"{verdict.evidence}")
    return f":::{{admonition}} {note_title(verdict, short)}\n:class: {cls}\n{text}\n:::\n"

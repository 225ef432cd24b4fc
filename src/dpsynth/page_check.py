"""Does a chapter page agree with itself? The numbers its verdicts quote, against its tables.

A chapter's "What this shows" section renders :class:`dpsynth.verdicts.Verdict` objects
(:func:`dpsynth.verdicts.verdicts_markdown`: ``1. *claim* — **holds**: evidence``); its tables are
MyST ``{table}`` directives (:func:`dpsynth.book.show_table`) or HTML tables. A reader who checks a
verdict against the page should find each number it quotes in a table of that page, read from the
same results (the same replicate, the same scale). :func:`unheld_numbers` returns the quoted
numbers that no table cell holds, after rounding the cell to the precision quoted.

Exempt, and only these:

* the study's declared parameters (:func:`declared_numbers`: the eps grid, n, replicate and draw
  counts, seeds; the page's own settings, not results);
* integers from 0 to :data:`SMALL_INTEGER` (the "3 of 4 replicates" counts, ranks, replicate
  indices and the factors of ``2Δ`` and ``ε/2``, which describe the verdict's form rather than a
  measured figure);
* numbers inside references to the papers' items ("Figures 14–17", "Table 2", "Section 5.2",
  "Algorithm 3") and inside mechanism names with a range (``A[0.4,1.8]``).
"""

from __future__ import annotations

import html
import importlib
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["SMALL_INTEGER", "Quoted", "numbers_in", "verdict_evidence", "table_texts", "table_numbers",
           "declared_numbers", "page_declared", "unheld_numbers", "read_notebook"]

#: Integers up to this are exempt (counts out of a few replicates, ranks, replicate indices, the 2 of 2Δ).
SMALL_INTEGER = 10

#: A rendered verdict line: ``1. *claim* — **holds**: evidence``.
_VERDICT = re.compile(r"^\s*\d+\.\s+\*(?P<claim>.+?)\*\s+—\s+\*\*(?:holds|does not hold|undecided)\*\*:\s*"
                      r"(?P<evidence>.*)$")
#: A number as written: optional sign, thousands separators, decimals, exponent, percent.
_NUMBER = re.compile(r"(?<![\w.])(?P<sign>[-−]?)(?P<body>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
                     r"(?P<exp>e[-+]?\d+)?(?P<pct>\s?%)?(?![\w])")
#: References to the papers' items and range names, whose digits are not results.
_REFERENCES = re.compile(
    r"\b(?:Figures?|Tables?|Sections?|Algorithms?|Appendix|Chapters?|Eq\.?|Supplement)\s+"
    r"S?\d+(?:\.\d+)*(?:\s*(?:[–-]|,|and)\s*S?\d+(?:\.\d+)*)*"
    r"|[AB]'?\[[^\]]*\]"
)
#: A MyST table directive's body lines.
_TABLE_DIRECTIVE = re.compile(r"```\{table\}[^\n]*\n(?P<body>.*?)```", re.S)
_HTML_CELL = re.compile(r"<t[dh][^>]*>(.*?)</t[dh]>", re.S | re.I)
_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class Quoted:
    """A number as a page writes it.

    Attributes
    ----------
    text : str
        The number as written (``"4.83"``, ``"28,155"``, ``"12%"``).
    value : float
        Its value (a percentage as written: ``12`` for ``"12%"``).
    decimals : int
        Decimal places written (negative for a number written to the tens or more in exponent form).
    percent : bool
        Whether it is written as a percentage.
    """

    text: str
    value: float
    decimals: int
    percent: bool = False

    def matches(self, other: Quoted) -> bool:
        """Whether ``other`` (a table's number), rounded to this number's precision, is this number.

        Signs are ignored (a verdict may quote a fall of 0.05 that a table shows as −0.05); a
        percentage matches a fraction a hundred times smaller and vice versa.
        """
        candidates = [abs(other.value)]
        if self.percent and not other.percent:
            candidates.append(abs(other.value) * 100)
        if other.percent and not self.percent:
            candidates.append(abs(other.value) / 100)
        half = 0.5 * 10.0 ** (-self.decimals)
        return any(abs(c - abs(self.value)) <= half * (1 + 1e-9) + 1e-12 for c in candidates)


def numbers_in(text: str) -> list[Quoted]:
    """Every number written in ``text``, except in references to the papers' items and range names."""
    text = _REFERENCES.sub(" ", text.replace("\u2009", " ").replace("\u202f", " "))
    out = []
    for m in _NUMBER.finditer(text):
        body = m.group("body").replace(",", "")
        exp = int(m.group("exp")[1:]) if m.group("exp") else 0
        decimals = (len(body.split(".")[1]) if "." in body else 0) - exp
        value = float(body) * 10.0 ** exp
        out.append(Quoted(m.group(0).strip(), value, decimals, bool(m.group("pct"))))
    return out


def read_notebook(nb: Mapping | str | Path) -> Mapping:
    """An executed notebook as a mapping (a path is read as JSON)."""
    if isinstance(nb, (str, Path)):
        import json

        return json.loads(Path(nb).read_text(encoding="utf-8"))
    return nb


def _display(nb: Mapping, mime: str) -> Iterable[str]:
    """The ``mime`` outputs (``text/markdown``, ``text/html``) a page displays from its code cells (glued
    values, shown only where quoted, excluded)."""
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        for out in cell.get("outputs", []):
            if "scrapbook" in out.get("metadata", {}):
                continue
            data = out.get("data", {}).get(mime)
            if data:
                yield "".join(data) if isinstance(data, list) else data


def _display_markdown(nb: Mapping) -> Iterable[str]:
    return _display(nb, "text/markdown")


def _display_html(nb: Mapping) -> Iterable[str]:
    return _display(nb, "text/html")


def verdict_evidence(nb: Mapping | str | Path) -> list[tuple[str, str]]:
    """``(claim, evidence)`` of every verdict a page renders."""
    out = []
    for md in _display_markdown(read_notebook(nb)):
        for line in md.splitlines():
            m = _VERDICT.match(line)
            if m:
                out.append((m.group("claim"), m.group("evidence")))
    return out


def table_texts(nb: Mapping | str | Path) -> list[str]:
    """The text of every table cell a page shows (MyST table directives and HTML tables; not captions)."""
    nb = read_notebook(nb)
    cells = []
    for md in _display_markdown(nb):
        for m in _TABLE_DIRECTIVE.finditer(md):
            for line in m.group("body").splitlines():
                line = line.strip()
                if not line.startswith("|") or set(line) <= set("|-: "):
                    continue
                cells += [c.replace("\\|", "|").strip() for c in re.split(r"(?<!\\)\|", line.strip("|"))]
    for h in _display_html(nb):
        cells += [html.unescape(_TAG.sub(" ", c)).strip() for c in _HTML_CELL.findall(h)]
    return cells


def table_numbers(nb: Mapping | str | Path) -> list[Quoted]:
    """Every number in the page's table cells."""
    return [q for cell in table_texts(nb) for q in numbers_in(cell)]


def declared_numbers(params: Any) -> set[float]:
    """Every number among a study's settings (a chapter's ``Params``, or a mapping), nested lists included.

    These are what the page was asked to compute (the eps grid, n, replicates, draws, seed), so a
    verdict may quote them without a table.
    """
    if hasattr(params, "to_dict"):
        params = params.to_dict()
    out: set[float] = set()

    def walk(v: Any) -> None:
        if isinstance(v, bool) or v is None:
            return
        if isinstance(v, (int, float)):
            if math.isfinite(float(v)):
                out.add(abs(float(v)))
        elif isinstance(v, Mapping):
            for x in v.values():
                walk(x)
        elif isinstance(v, (list, tuple, set, frozenset)):
            for x in v:
                walk(x)

    walk(params)
    return out


def page_declared(nb: Mapping | str | Path, chapter: str) -> set[float]:
    """The declared parameters of an executed chapter page: its ``Params`` at the scale and overrides it ran with.

    The scale, replicates, seed and overrides are read from the papermill parameters stored in the
    notebook's metadata (the notebook's defaults where absent).
    """
    nb = read_notebook(nb)
    given = dict(nb.get("metadata", {}).get("papermill", {}).get("parameters", {}) or {})
    module = importlib.import_module(f"dpsynth.experiments.{chapter}")
    kw = {k: given[k] for k in ("replicates", "seed") if given.get(k) is not None}
    params = module.Params.preset(given.get("scale", "quick"), **kw, **dict(given.get("overrides") or {}))
    return declared_numbers(params)


def unheld_numbers(nb: Mapping | str | Path, declared: Iterable[float] = (), *,
                   small_integer: int = SMALL_INTEGER) -> list[tuple[str, str]]:
    """The numbers the page's verdicts quote that no table on the page holds.

    Parameters
    ----------
    nb : mapping or path
        An executed chapter notebook.
    declared : iterable of float
        The study's declared parameters (:func:`page_declared`), exempt.
    small_integer : int
        Integers from 0 to this are exempt (see the module's docstring).

    Returns
    -------
    list of (str, str)
        ``(number as written, the verdict's claim)`` for each quoted number no table cell holds
        at the precision quoted; empty if the page agrees with itself.
    """
    nb = read_notebook(nb)
    held = table_numbers(nb)
    exempt = {abs(float(d)) for d in declared}
    out = []
    for claim, evidence in verdict_evidence(nb):
        for q in numbers_in(evidence):
            if q.decimals <= 0 and q.value.is_integer() and (abs(q.value) <= small_integer or abs(q.value) in exempt):
                continue
            if any(q.matches(Quoted(str(d), d, 12)) for d in exempt):
                continue
            if not any(q.matches(t) for t in held):
                out.append((q.text, claim))
    return out

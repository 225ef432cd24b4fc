"""Does a chapter page agree with itself? The numbers its verdicts quote, against its tables.

A chapter's "What this shows" section renders :class:`dpsynth_book.verdicts.Verdict` objects
(:func:`dpsynth_book.verdicts.verdicts_markdown`: ``1. *claim* — **holds**: evidence``); its tables are
MyST ``{table}`` directives (:func:`dpsynth_book.book.show_table`) or HTML tables. A reader who checks a
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

**Page form.** What a reader of a page must not see, as rules the browser test (``tests/book/test_book.py``)
and the notebook tests apply:

* :func:`raw_myst_defects`: MyST source printed as text (a directive's fence or options, a role, ``$$``)
  instead of being rendered;
* :func:`caption_defects`: a caption (or a table's header) that shows Python literals (``True``,
  ``False``, ``None``) or identifiers with underscores (``match_max_iter``) outside code spans, other
  than the registry's mechanism names (``Censor_uw``);
* :func:`plumbing_cells`: a code cell shown with its input that is *plumbing* (:data:`PLUMBING_MODULES`),
  not code a reader learns from.
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
           "declared_numbers", "page_declared", "unheld_numbers", "read_notebook", "RAW_MYST", "raw_myst_defects",
           "pattern_defects",
           "caption_defects", "PLUMBING_MODULES", "STUDY_API", "HIDDEN_TAGS", "plumbing_names", "plumbing_reasons",
           "plumbing_cells"]

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
_TABLE_DIRECTIVE = re.compile(r"^(?P<fence>`{3,}|~{3,}|:{3,})\{table\}[^\n]*\n(?P<body>.*?)^(?P=fence)\s*$",
                              re.S | re.M)
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
    module = importlib.import_module(f"dpsynth_book.experiments.{chapter}")
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


# --------------------------------------------------------------------------------------------
# page form: raw MyST, captions, plumbing cells
# --------------------------------------------------------------------------------------------

#: MyST source that a rendered page must not show as text (code excluded), by kind.
RAW_MYST: dict[str, str] = {
    "directive fence": r"(?:`{3,}|~{3,}|:{3,})\s*\{[A-Za-z][\w:.-]*\}",
    "code fence": r"`{3,}|~{3,}",
    "directive option":
        r"(?<![\w:]):(?:name|label|class|align|width|widths|header-rows|caption|tags|figwidth):(?:\s|$)",
    "role": r"\{(?:glue(?::[a-z]+)?|numref|ref|doc|eq|cite(?::[a-z]+)?|prf:ref|term|math|download|abbr)\}",
    "label target": r"(?m)^\s*\([a-z][\w-]*\)=\s*$",
    "display maths": r"\$\$",
    "inline maths": r"(?<!\\)\$[^$\n]{0,200}?\\[A-Za-z]+[^$\n]{0,200}?\$",
}


def raw_myst_defects(text: str) -> list[str]:
    """The kinds of :data:`RAW_MYST` that the rendered ``text`` of a page shows, each with its context.

    ``text`` is what a reader sees, with code (cell inputs, code blocks, inline code) and typeset
    maths taken out: MyST in it was printed instead of being parsed (e.g. a table directive whose
    fence Markdown could not read).
    """
    return pattern_defects(text, RAW_MYST)


def pattern_defects(text: str, patterns: dict[str, str], after: int = 40) -> list[str]:
    """Each kind of ``patterns`` (kind -> regular expression) found in ``text``, with its first match in context
    (40 characters before it, ``after`` after it)."""
    found = []
    for kind, pattern in patterns.items():
        m = re.search(pattern, text)
        if m:
            found.append(f"{kind}: ...{text[max(0, m.start() - 40):m.end() + after]!r}...")
    return found


#: A Python literal in running text.
_LITERAL = re.compile(r"\b(?:True|False|None)\b")
#: A word with an underscore: an identifier (``match_max_iter``, ``eps_grid``), or plain-text subscript (``ε_x``).
_IDENTIFIER = re.compile(r"(?<![\w.-])[^\W\d]\w*_\w*")


def _mechanism_names() -> set[str]:
    from dpsynth import registry

    names = set()
    for s in registry.entries():
        names.add(s.name)
        names.update(n for n in (getattr(s, "shown_name", None),) if isinstance(n, str))
    return names


def caption_defects(text: str, allowed: Iterable[str] | None = None) -> list[str]:
    """Internal names a caption (or a table's header cell) shows: Python literals and identifiers.

    Parameters
    ----------
    text : str
        The caption as a reader sees it, without its code spans (code may name a parameter) and
        typeset maths.
    allowed : iterable of str, optional
        Words with underscores that are names a reader knows: by default the registry's mechanism
        names (``Censor_uw``, ``LW_final``).

    Returns
    -------
    list of str
        ``"Python literal: ...context..."`` for ``True``/``False``/``None`` other than at the start
        of a sentence (``None of the fits ...``), and ``"identifier: ..."`` for each word with an
        underscore that is not allowed; empty for a clean caption.
    """
    allowed = _mechanism_names() if allowed is None else set(allowed)
    out = []
    for m in _LITERAL.finditer(text):
        before = text[:m.start()].rstrip()
        if not before or before[-1] in ".!?:;(—–-":  # a sentence or clause that starts with the word
            continue
        out.append(f"Python literal {m.group(0)!r}: ...{text[max(0, m.start() - 50):m.end() + 10]}...")
    for m in _IDENTIFIER.finditer(text):
        word = m.group(0).rstrip("_")
        if word in allowed or word.split("-")[0] in allowed:
            continue
        out.append(f"identifier {word!r}: ...{text[max(0, m.start() - 50):m.end() + 10]}...")
    return out


#: Modules whose names are plumbing in a chapter's visible code: the display and glue machinery, the book's
#: helpers and a chapter's own study code (parameters, runs, tables, figures, verdicts, demos).
PLUMBING_MODULES = ("IPython", "myst_nb", "scrapbook", "papermill", "matplotlib", "dpsynth_book.book",
                    "dpsynth_book.page_check", "dpsynth_book.notes", "dpsynth_book.verdicts",
                    "dpsynth_book.experiments", "dpsynth_book.plots", "dpsynth_book.teaching", "dpsynth_book.shipped",
                    "dpsynth_book.shipped_demo", "dpsynth_book.result_files", "dpsynth_book.studies")
#: Names that are plumbing without an import (IPython puts ``display`` in every kernel's namespace).
_PLUMBING_BUILTINS = frozenset({"display", "get_ipython"})
#: Cell tags that hide a cell's input: myst-nb's, and the parameter cells, which the book's extension
#: ``book/_ext/compendium.py`` removes (:func:`compendium.hide_parameter_cells`).
HIDDEN_TAGS = frozenset({"remove-input", "remove-cell", "hide-input", "hide-cell", "parameters",
                         "injected-parameters"})


def _plumbing_module(module: str | None) -> bool:
    return bool(module) and any(module == m or module.startswith(m + ".") for m in PLUMBING_MODULES)


def _imports(tree) -> list[tuple[str, str | None]]:
    """``(module, name bound)`` of every import in a parsed cell."""
    import ast

    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                out.append((a.name, a.asname or a.name.split(".")[0]))
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            for a in node.names:
                # `from dpsynth_book import book`: the module dpsynth_book.book
                package = node.module in ("dpsynth", "dpsynth_book")
                out.append((f"{node.module}.{a.name}" if package else node.module, a.asname or a.name))
    return out


def _parse(source: str):
    import ast

    # IPython magics and shell escapes are not Python: blank them (a cell of magics is plumbing anyway)
    lines = ["" if re.match(r"\s*[%!]", line) else line for line in source.splitlines()]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def _source(cell: Mapping) -> str:
    s = cell.get("source", "")
    return "".join(s) if isinstance(s, list) else str(s)


#: A chapter's own ``Params`` and ``run`` are its public way to re-run it: the cell that runs the study shows them.
STUDY_API = frozenset({"Params", "run"})


def plumbing_names(nb: Mapping | str | Path) -> set[str]:
    """Every name a notebook binds by importing from a plumbing module (:data:`PLUMBING_MODULES`), but a
    chapter's :data:`STUDY_API` (``Params.preset(...)`` and ``run(params)`` are what a reader types to re-run it)."""
    names = set(_PLUMBING_BUILTINS)
    for cell in read_notebook(nb).get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        tree = _parse(_source(cell))
        if tree is not None:
            names.update(bound for module, bound in _imports(tree)
                         if _plumbing_module(module) and not (module.startswith("dpsynth_book.experiments")
                                                               and bound in STUDY_API))
    return names


def plumbing_reasons(source: str, names: Iterable[str] = ()) -> list[str]:
    """Why a code cell shown with its input is plumbing, not code a reader learns from (empty: it is not).

    The rule (CONTRIBUTING.md, "Page form"): a visible cell is plumbing if it

    * imports from a plumbing module (:data:`PLUMBING_MODULES`: IPython's display, myst-nb's glue,
      ``dpsynth_book.book``, a chapter's ``dpsynth_book.experiments`` modules, ...);
    * uses a name bound by such an import anywhere in the notebook (``names``, :func:`plumbing_names`:
      ``book``, ``Markdown``, ``demo``, ``Params``, ``run``), or IPython's ``display``;
    * consists of import statements only;
    * holds IPython magics or shell escapes.

    Code that uses the package's public API (``dpsynth.Synthesizer``, ``dpsynth.mechanisms``, a model
    written by the reader) is what a page shows.
    """
    import ast

    names = set(names) | _PLUMBING_BUILTINS
    if any(re.match(r"\s*[%!]", line) for line in source.splitlines()):
        return ["IPython magic or shell escape"]
    tree = _parse(source)
    if tree is None:
        return []
    reasons = []
    imported = _imports(tree)
    bad = sorted({module for module, _ in imported if _plumbing_module(module)})
    if bad:
        reasons.append(f"imports {', '.join(bad)}")
    used = sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} & names)
    if used:
        reasons.append(f"uses {', '.join(used)}")
    if tree.body and all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in tree.body):
        reasons.append("imports only")
    return reasons


def plumbing_cells(nb: Mapping | str | Path) -> list[tuple[int, str, list[str]]]:
    """The code cells of a notebook that a page shows with their input and that are plumbing.

    A cell is shown with its input unless it has one of :data:`HIDDEN_TAGS`.

    Returns
    -------
    list of (int, str, list of str)
        ``(cell index, first line of its source, reasons)`` from :func:`plumbing_reasons`.
    """
    nb = read_notebook(nb)
    names = plumbing_names(nb)
    out = []
    for i, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code" or HIDDEN_TAGS.intersection(cell.get("metadata", {}).get("tags", [])):
            continue
        source = _source(cell)
        if not source.strip():
            continue
        reasons = plumbing_reasons(source, names)
        if reasons:
            out.append((i, source.strip().splitlines()[0][:100], reasons))
    return out

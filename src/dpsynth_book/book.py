"""Numbered, captioned figures and tables for the book's chapters, and the environment cell.

A chapter notebook shows a figure with :func:`show_figure` and a table with :func:`show_table`.
Both emit MyST Markdown that Jupyter Book numbers ("Figure 2.3", "Table 2.1") and that the text
cross-references with ``{numref}`` by the label given. The cell that calls them carries the tag
``remove-input``, so the page shows the figure or table and its caption, not the code.

Numbers in a chapter's prose are written into its Markdown cells through myst-nb's glue:
:func:`glue_numbers` glues a dict of named numbers (a chapter's ``verdicts.*_numbers`` functions)
under a prefix, in a cell tagged ``remove-cell``, and the Markdown quotes them with the
``{glue:text}`` role and a key with a format (``censoring-release-c:.3f``); a list whose length
depends on the results is glued as a MyST string and quoted with the ``{glue:md}`` role
(``censoring-list-tally:myst``).

**In JupyterLab** (``make lab``, which sets ``DPSYNTH_LAB=1`` for its kernels and renders Markdown
as MyST with jupyterlab-myst): jupyterlab-myst has no glue, so :func:`show_figure` and
:func:`show_table` display the figure (an embedded PNG) or the table with its caption and its
number ("Fig. 1.2", as the book numbers it: :func:`lab_number`) instead of the book's directives,
and :func:`glue_numbers` also keeps each value in the kernel, where :func:`glued` formats it as
the ``{glue:text}`` role does: the lab's server extension (``lab/dpsynth_lab.py``) turns each glue
role of the Markdown into a MyST ``{eval}`` expression that calls it. :func:`lab_mode` says which.

Legibility: a figure is shown at most :data:`COLUMN_PX` pixels wide in a 1280-pixel browser
window, so its smallest text is scaled by ``COLUMN_PX / (width_in * dpi)`` when it is wider than
that. :func:`smallest_text_px` computes the smallest text size a reader will see; every figure
function of the package is tested to keep it at or above :data:`MIN_TEXT_PX`.
"""

from __future__ import annotations

import base64
import importlib.metadata
import io
import math
import numbers as _numbers
import os
import platform
import re
from collections.abc import Mapping
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from .result_files import machine_description, machine_text

__all__ = ["COLUMN_PX", "MIN_TEXT_PX", "LAB_ENV", "show_figure", "show_table", "figure_markdown", "table_markdown",
           "lab_mode", "lab_number", "lab_ref", "lab_figure_markdown", "lab_table_markdown", "chapter_number",
           "GluedText",
           "glue_values", "glue_numbers", "glued", "smallest_text_px", "environment", "provenance_table",
           "code_span", "code_index", "machine_text",
           "provenance_markdown"]

#: Width of the book's text column in a 1280-pixel window (sphinx-book-theme, sidebar open).
COLUMN_PX = 660
#: Smallest text size, in CSS pixels, a figure may show.
MIN_TEXT_PX = 9.0

_LABEL = re.compile(r"^[a-z][a-z0-9-]*$")


def _check_label(label: str) -> str:
    if not isinstance(label, str) or not _LABEL.match(label):
        raise ValueError(
            f"`label` must be lower-case letters, digits and dashes (e.g. 'fig-censoring-bounds'); got {label!r}."
        )
    return label


def _one_line(text: str) -> str:
    """``text`` on one line: every run of whitespace (newlines included) as one space."""
    return " ".join(str(text).split())


def _fence(char: str, content: str) -> str:
    """A fence of ``char`` longer than any run of it in ``content`` (at least three), so nothing inside closes it."""
    runs = re.findall(re.escape(char) + "+", content)
    return char * max(3, 1 + max((len(r) for r in runs), default=0))


def code_span(text) -> str:
    """``text`` as a Markdown code span: a name the reader types (a study, a chapter's notebook, a data loader).

    A table shows such names as code, not as prose with underscores.
    """
    text = str(text)
    ticks = "`" * (1 + max((len(r) for r in re.findall("`+", text)), default=0))
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def code_index(df: pd.DataFrame, level: int = 0) -> pd.DataFrame:
    """``df`` with the values of index level ``level`` shown as code spans (:func:`code_span`)."""
    out = df.copy()
    if isinstance(out.index, pd.MultiIndex):
        out.index = out.index.set_levels(out.index.levels[level].map(code_span), level=level)
    else:
        out.index = out.index.map(code_span)
    return out


def figure_markdown(label: str, caption: str) -> str:
    """The MyST ``glue:figure`` directive of a glued figure ``label`` with its caption.

    The caption is the directive's body, on one line; the fence is longer than any run of backticks
    in it, so a caption with code spans cannot close the directive early.
    """
    _check_label(label)
    caption = _one_line(caption)
    fence = _fence("`", caption)
    return f"{fence}{{glue:figure}} {label}\n:name: {label}\n\n{caption}\n{fence}"


#: Environment variable that ``make lab`` (and ``python -m dpsynth_book.tasks lab``) sets to ``1`` for the lab's
#: kernels.
LAB_ENV = "DPSYNTH_LAB"


def lab_mode() -> bool:
    """True in a kernel of ``make lab`` (``DPSYNTH_LAB=1``): figures and tables are shown for JupyterLab."""
    return os.environ.get(LAB_ENV, "").strip() not in ("", "0")


def chapter_number(toc_text: str, name: str) -> int | None:
    """The number Jupyter Book gives the chapter ``book/<name>`` in ``_toc.yml`` (``None``: not numbered).

    Every part whose ``numbered: true`` is set numbers its chapters from 1 (Sphinx numbers each
    numbered toctree on its own), so the first chapter of every numbered part is chapter 1.
    ``lab/dpsynth_lab.py`` applies the same rule to the references of the Markdown.
    """
    number, numbered, found = 0, False, None
    for line in toc_text.splitlines():
        code = line.split("#", 1)[0]
        if re.match(r"^\s*-\s*caption\s*:", code) or re.match(r"^\s*parts\s*:", code):
            number, numbered = 0, False
        elif re.match(r"^\s*numbered\s*:\s*true\b", code, flags=re.I):
            numbered = True
        m = re.match(r"^\s*-?\s*file\s*:\s*book/([A-Za-z0-9_.-]+)", code)
        if m:
            number += 1
            if m.group(1) == name:
                found = number if numbered else None
    return found


_LAB_NUMBERS: dict[str, dict[str, int]] = {"fig": {}, "tbl": {}}


def _lab_chapter() -> int | None:
    """The chapter number of the notebook this kernel runs (JupyterLab sets ``JPY_SESSION_NAME``)."""
    session = os.environ.get("JPY_SESSION_NAME", "")
    if not session:
        return None
    from .paths import project_root

    try:
        toc = (project_root() / "_toc.yml").read_text(encoding="utf-8")
    except OSError:
        return None
    return chapter_number(toc, Path(session).stem)


def lab_number(label: str) -> str:
    """The book's number of figure or table ``label`` in this kernel: "Fig. 1.2", "Table 3.1" or "Fig. 2".

    A label is numbered when it is first shown, in the order of the chapter's cells, as Sphinx
    numbers them; showing it again keeps its number.
    """
    kind = _check_label(label).split("-", 1)[0]
    seen = _LAB_NUMBERS.setdefault(kind, {})
    n = seen.setdefault(label, len(seen) + 1)
    chapter = _lab_chapter()
    word = "Fig." if kind == "fig" else "Table"
    return f"{word} {chapter}.{n}" if chapter else f"{word} {n}"


def lab_ref(spec: str) -> str:
    """The ``{numref}`` role in JupyterLab: the number of a figure or table shown in this kernel.

    ``spec`` is the role's content, ``"fig-x"`` or ``"Figure %s <fig-x>"``. ``lab/dpsynth_lab.py``
    reads most numbers from the notebook's code; this serves the labels built at run time.
    """
    m = re.match(r"^(?P<text>.*?)\s*<(?P<label>[^<>]+)>$", spec or "", flags=re.S)
    text, label = (m.group("text"), m.group("label")) if m else (None, (spec or "").strip())
    kind = _check_label(label).split("-", 1)[0]
    if label not in _LAB_NUMBERS.get(kind, {}):
        return f"[{label}: not shown yet]"
    number = lab_number(label)
    return text.replace("%s", number.split(" ", 1)[1]) if text else number


def _caption_line(number: str, caption: str) -> str:
    return f"**{number}.** {caption.strip()}"


def lab_figure_markdown(png: bytes, label: str, caption: str, number: str) -> str:
    """MyST for JupyterLab: the PNG ``png`` embedded, then its ``number`` and ``caption``."""
    _check_label(label)
    data = base64.b64encode(png).decode("ascii")
    return f"![{label}](data:image/png;base64,{data})\n\n{_caption_line(number, caption)}"


def show_figure(fig, label: str, caption: str) -> None:
    """Glue ``fig`` under ``label`` and display it as a numbered figure with ``caption``.

    For the book, the figure is glued and a ``glue:figure`` directive is displayed; in JupyterLab
    (:func:`lab_mode`) the figure itself is displayed with its number and caption. The figure is
    closed afterwards, so it is not shown a second time by the inline backend.
    """
    from IPython.display import Markdown, display
    from myst_nb import glue

    glue(_check_label(label), fig, display=False)
    if lab_mode():
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=fig.dpi, bbox_inches="tight")
        plt.close(fig)
        display(Markdown(lab_figure_markdown(buf.getvalue(), label, caption, lab_number(label))))
        return
    plt.close(fig)
    display(Markdown(figure_markdown(label, caption)))


def _cell_text(v) -> str:
    """A table cell's text for a Markdown pipe table: one line, ``|`` escaped."""
    return _one_line(v).replace("|", "\\|")


def _fmt(v, floatfmt: str) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (float, np.floating)):
        if np.isnan(v):
            return "–"
        if floatfmt.endswith("g") and 1e3 <= abs(v) < 1e15:
            return f"{float(v):,.0f}"  # 28,155 records or $7,365, not 2.82e+04
        return format(float(v), floatfmt)
    return str(v)


def _header(c) -> str:
    if isinstance(c, tuple):
        return " / ".join(str(x) for x in c if x is not None and str(x) != "")
    return "" if c is None else str(c)


def _pipe_table(df: pd.DataFrame, floatfmt: str, index: bool) -> str:
    """``df`` as a GitHub-flavoured pipe table that MyST parses whatever the cells hold.

    Every cell is on one line with ``|`` escaped; an unnamed index gets an empty header (not
    pandas' internal "index"); a frame without columns is an error (a pipe table needs one).
    """
    if index:
        names = [n if n is not None else "" for n in df.index.names]
        frame = df.copy()
        frame.index = frame.index.set_names([f"\x00index{i}" for i in range(len(names))])
        frame = frame.reset_index()
        cols = names + [_header(c) for c in df.columns]
    else:
        frame, cols = df, [_header(c) for c in df.columns]
    if not cols:
        raise ValueError("a table needs at least one column (or index=True with an index).")
    lines = ["| " + " | ".join(_cell_text(c) for c in cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(_cell_text(_fmt(v, floatfmt)) for v in row) + " |")
    return "\n".join(lines)


def table_markdown(df: pd.DataFrame, label: str, caption: str, *, floatfmt: str = ".3g", index: bool = True) -> str:
    """A MyST ``{table}`` directive holding ``df`` as a Markdown table.

    The caption is the directive's argument, so it is put on one line, and the fence is of tildes:
    CommonMark does not read a backtick fence whose first line holds a backtick (a caption with a
    code span), and then prints the directive as text above the table. The tilde fence is longer
    than any run of tildes in the table, so no cell can close it.
    """
    _check_label(label)
    body = _pipe_table(df, floatfmt, index)
    caption = _one_line(caption)
    if not caption:
        raise ValueError(f"table {label!r} needs a caption.")
    fence = _fence("~", caption + "\n" + body)
    return f"{fence}{{table}} {caption}\n:name: {label}\n\n{body}\n{fence}"


def lab_table_markdown(df: pd.DataFrame, label: str, caption: str, number: str, *, floatfmt: str = ".3g",
                       index: bool = True) -> str:
    """MyST for JupyterLab: ``number`` and ``caption``, then ``df`` as a Markdown table."""
    _check_label(label)
    return f"{_caption_line(number, caption)}\n\n{_pipe_table(df, floatfmt, index)}"


def show_table(df: pd.DataFrame, label: str, caption: str, *, floatfmt: str = ".3g", index: bool = True) -> None:
    """Display ``df`` as a numbered table with ``caption`` (MyST ``{table}`` directive; in JupyterLab,
    :func:`lab_mode`, the table under its number and caption)."""
    from IPython.display import Markdown, display

    if lab_mode():
        display(Markdown(lab_table_markdown(df, label, caption, lab_number(label), floatfmt=floatfmt, index=index)))
        return
    display(Markdown(table_markdown(df, label, caption, floatfmt=floatfmt, index=index)))


_GLUE_KEY = re.compile(r"^[a-z][a-z0-9.-]*$")


class GluedText(str):
    """A string glued for both ``{glue:text}`` (plain text) and ``{glue:md}`` (MyST Markdown)."""

    def _repr_markdown_(self) -> str:
        return str(self)


def _key_part(k) -> str:
    if isinstance(k, float):
        k = format(k, "g")
    return re.sub(r"[^a-z0-9.]+", "-", str(k).lower()).strip("-")


def _glue_value(key: str, v):
    if v is None:
        return math.nan
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, _numbers.Integral):
        return int(v)
    if isinstance(v, _numbers.Real):
        return float(v)
    if isinstance(v, str):
        return GluedText(v)
    raise TypeError(f"glue value {key!r} must be a number, a bool, a string or a mapping of them; "
                    f"got {type(v).__name__}.")


def glue_values(prefix: str, numbers: Mapping) -> dict[str, object]:
    """The glue keys and values :func:`glue_numbers` would glue, without gluing them.

    Parameters
    ----------
    prefix : str
        Lower-case letters, digits and dashes, e.g. ``"censoring-release"``.
    numbers : mapping
        Name -> number, bool, string or a nested mapping of them. Nested mappings are flattened;
        each key becomes a key part in lower case with every run of other characters than letters,
        digits and dots replaced by a dash (``"avg_ecdf"`` -> ``avg-ecdf``, ``"Censor_w (aDP)"`` ->
        ``censor-w-adp``, ``4.0`` -> ``4``), and the parts are joined by dashes.

    Returns
    -------
    dict
        ``"<prefix>-<key>"`` -> value, with numpy scalars as Python numbers (so that glue's
        ``text/plain`` can be formatted by the ``{glue:text}`` role), ``None`` as NaN and strings
        as :class:`GluedText`.
    """
    if not isinstance(prefix, str) or not _GLUE_KEY.match(prefix):
        raise ValueError(f"`prefix` must be lower-case letters, digits and dashes; got {prefix!r}.")
    if not isinstance(numbers, Mapping):
        raise TypeError(f"`numbers` must be a mapping; got {type(numbers).__name__}.")
    out: dict[str, object] = {}

    def walk(path: str, value) -> None:
        if isinstance(value, Mapping):
            for k, v in value.items():
                part = _key_part(k)
                if not part:
                    raise ValueError(f"glue key part of {k!r} under {path!r} is empty.")
                walk(f"{path}-{part}", v)
            return
        if path in out:
            raise ValueError(f"two names give the glue key {path!r}.")
        out[path] = _glue_value(path, value)

    walk(prefix, numbers)
    return out


def glue_numbers(prefix: str, numbers: Mapping) -> list[str]:
    """Glue every value of ``numbers`` under ``<prefix>-<name>`` (not displayed), for the Markdown cells.

    The keys are those of :func:`glue_values`. Markdown quotes a number with the ``{glue:text}``
    role, the key and a format (``<key>:.2f``, ``<key>:.0%``, ``<key>:g``; no format for an
    integer), and a string that is MyST Markdown (a list built by a chapter's ``tables`` module)
    with the ``{glue:md}`` role (``<key>:myst``). Call it in a cell tagged ``remove-cell``.

    Returns
    -------
    list of str
        The keys glued.
    """
    from myst_nb import glue

    values = glue_values(prefix, numbers)
    for key, value in values.items():
        glue(key, value, display=False)
    _GLUED.update(values)
    return list(values)


#: The values :func:`glue_numbers` glued in this kernel, for :func:`glued`.
_GLUED: dict[str, object] = {}


def glued(spec: str):
    """The value glued under a key, formatted as myst-nb's ``{glue:text}`` role formats it.

    JupyterLab has no glue: the lab's server extension (``lab/dpsynth_lab.py``) turns
    ``{glue:text}`key:.2f``` into an ``{eval}`` expression that calls ``glued("key:.2f")`` in the
    kernel, and ``{glue:md}`key:myst``` into ``glued("key:myst")``, which returns the glued
    Markdown.

    Parameters
    ----------
    spec : str
        ``"<key>"`` or ``"<key>:<format>"``, e.g. ``"censoring-release-c:.3f"``.

    Returns
    -------
    str or GluedText
        The formatted text; a glued Markdown string for the format ``myst``; or, before the cell
        that glues the key has run, a note saying so.
    """
    if not isinstance(spec, str) or not spec:
        raise ValueError(f"`spec` must be '<key>' or '<key>:<format>'; got {spec!r}.")
    key, _, fmt = spec.rpartition(":") if ":" in spec else (spec, "", "")
    if key not in _GLUED:
        return f"[{key}: run the cells above]"
    value = _GLUED[key]
    if fmt == "myst":
        return value if isinstance(value, GluedText) else GluedText(str(value))
    from IPython.core.formatters import format_display_data
    from myst_nb.core.variables import format_plain_text

    return format_plain_text(format_display_data(value)[0]["text/plain"], fmt)


def smallest_text_px(fig, column_px: float = COLUMN_PX) -> float:
    """Smallest visible text of ``fig``, in CSS pixels, as shown in the book's text column.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    column_px : float
        Width the figure is shown at most.
    """
    fig.canvas.draw()
    width_px = fig.get_figwidth() * fig.dpi
    scale = min(1.0, column_px / width_px)
    sizes = [t.get_fontsize() for t in fig.findobj(lambda a: hasattr(a, "get_text") and hasattr(a, "get_fontsize"))
             if t.get_visible() and str(t.get_text()).strip()]
    if not sizes:
        return float("inf")
    return float(min(sizes)) * fig.dpi / 72.0 * scale


def environment(packages=("dpsynth", "numpy", "scipy", "pandas", "xarray", "pymc", "pytensor", "nutpie", "arviz",
                          "matplotlib", "opendp")) -> pd.DataFrame:
    """Versions of Python and of the packages a chapter used (the chapter's last cell)."""
    rows = {"python": platform.python_version(), "platform": f"{platform.system()} {platform.machine()}"}
    for p in packages:
        try:
            rows[p] = importlib.metadata.version(p)
        except importlib.metadata.PackageNotFoundError:
            rows[p] = "not installed"
    return pd.DataFrame({"version": rows}).rename_axis("package")


def _minutes(seconds: float) -> str:
    if not np.isfinite(seconds):
        return "unknown"
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def provenance_table(studies) -> pd.DataFrame:
    """Where each study's results on a page come from, and how long they took to compute.

    Parameters
    ----------
    studies : mapping of str to xarray.Dataset
        Study name -> the result of :func:`dpsynth_book.studies.run_study`.

    Returns
    -------
    pandas.DataFrame
        One row per study: replicates, source (the shipped file, this build, or the result cache),
        when it was computed, its wall time, worker processes, load average, and the package
        version and commit (the machine is named once, by :func:`provenance_markdown`). Shipped
        files carry all of it (:func:`dpsynth_book.result_files.provenance`); a study computed in this build
        knows its time only.
    """
    rows = {}
    for name, ds in studies.items():
        a = ds.attrs
        if a.get("from_shipped"):
            source = f"shipped: results/{name}.nc"
        elif a.get("from_cache"):
            source = "result cache (data/cache)"
        else:
            source = "computed in this build"
        commit = str(a.get("git_commit", ""))
        rows[name] = {
            "replicates": int(ds.sizes.get("replicate", 1)),
            "source": source,
            "computed": str(a.get("created", "this build" if source.startswith("computed") else "unknown"))[:10],
            "wall time": _minutes(float(a.get("elapsed_seconds", float("nan")))),
            "workers": str(a.get("workers", "")) or "-",
            "load average at end": str(a.get("load_average_at_end", "-")),
            "dpsynth": f"{a.get('dpsynth_version', '')}" + (f" ({commit[:10]})" if commit else ""),
        }
    return code_index(pd.DataFrame.from_dict(rows, orient="index").rename_axis("study"))


def _parts_sentence(name: str, attrs) -> str:
    """How a shipped study computed in parts was made, as a sentence: its ``parts`` attribute (JSON, one item per
    part: ``runs`` or a description ``what``, ``git_commit``, ``created``, ``elapsed_seconds``,
    ``load_average_at_end``; :func:`dpsynth_book.result_files.merge_parts`) and ``parts_note``."""
    import json

    parts = json.loads(attrs["parts"])
    said = "; ".join(f"{p.get('what') or 'runs ' + str(p['runs'])} at commit `{str(p['git_commit'])[:10]}` on "
                     f"{str(p['created'])[:10]} "
                     f"({_minutes(float(p['elapsed_seconds']))}, load average at end {p['load_average_at_end']})"
                     for p in parts)
    why = attrs.get("parts_note", "")
    return f"{code_span(name)} was computed in {len(parts)} parts: {said}." + (f" {why}" if why else "")


def provenance_markdown(studies) -> str:
    """One sentence on where a page's results come from and their total computing time."""
    total = sum(float(ds.attrs.get("elapsed_seconds", float("nan"))) for ds in studies.values())
    machines = "; ".join(sorted({machine_text(ds.attrs.get("machine", machine_description()))
                                 for ds in studies.values()}))
    shipped = [n for n, ds in studies.items() if ds.attrs.get("from_shipped")]
    if shipped and len(shipped) == len(studies):
        parts = " ".join(_parts_sentence(n, ds.attrs) for n, ds in studies.items() if ds.attrs.get("parts"))
        return (f"Every result on this page was read from the shipped files (nothing was recomputed to build it). "
                f"Computing them took {_minutes(total)} of wall time in all, on {machines}, with the load listed; "
                f"`make results` recomputes them." + (f" {parts}" if parts else ""))
    return (f"The results on this page were computed for this build or loaded from the result cache; computing them "
            f"took {_minutes(total)} of wall time in all, on {machines}.")


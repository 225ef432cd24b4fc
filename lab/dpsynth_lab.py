"""The book's MyST in JupyterLab: what jupyterlab-myst cannot render, rewritten when a notebook opens.

`make lab` renders Markdown with jupyterlab-myst (admonitions, maths, MyST tables and figures), which
knows nothing of Sphinx and myst-nb: the chapters' glue roles, their references to figures and
tables shown by code cells, to other pages, sections, propositions and the bibliography would show
as bare labels. This module is the lab's contents manager (``make lab`` passes
``--ServerApp.contents_manager_class=dpsynth_lab.LabContentsManager`` with ``lab/`` on the path). When
the lab opens a notebook, each Markdown cell is rewritten for jupyterlab-myst (:func:`to_lab`); when
it saves one, the rewriting is undone (:func:`from_lab`), so the file keeps the book's source.

* ``{glue:text}`key:fmt``` and ``{glue:md}`key:myst``` become MyST ``{eval}`` expressions that call
  ``dpsynth_book.book.glued`` in the kernel (it formats the value as myst-nb does); jupyterlab-myst
  evaluates them when the Markdown cell is run (Run All runs every cell). Until then they show "…".
* ``{numref}`fig-x``` (a figure or table that a code cell shows) becomes its number as the book
  gives it ("Fig. 1.2"): the chapter's number in its numbered part of ``_toc.yml`` and the label's
  place among the labels of its kind in the code cells, the order in which ``dpsynth_book.book``
  numbers them in the kernel. Where a label is built at run time, the reference becomes an
  ``{eval}`` expression that asks the kernel (``dpsynth_book.book.lab_ref``). Other labels (defined in
  a Markdown cell) are left to jupyterlab-myst.
* ``{doc}``, ``{ref}``, ``{prf:ref}`` become the title of the page, section or proposition (a link
  when it is a notebook of the lab); ``{cite:p}`` and ``{cite:t}`` the authors and year from
  ``references.bib``; ``{class}``, ``{mod}``, ``{func}``, ``{meth}``, ``{attr}`` inline code.
* A code cell the book hides (tags ``remove-input``, ``remove-cell``, ``remove-output`` and their
  ``hide-`` forms) is shown collapsed, as JupyterLab collapses a cell (``jupyter.source_hidden``,
  ``jupyter.outputs_hidden``): its code (imports, the glue of the prose's numbers, the calls that show
  a figure or a table under the caption the reader sees) is one thin bar, and it still runs with
  Shift+Enter like any other cell.

**Pages with figures beside them.** JupyterLab's HTML viewer shows a page from a ``blob:`` URL, for which
Chromium sends no ``Referer``, so the server refuses the page's own relative images (403, "Blocking request
from unknown origin"): the tutorial's report would open without its figures. When the lab opens an HTML
file, :func:`inline_images` puts each image beside it into the page it is given (a ``data:`` URL); the
file on disk is not changed.

**Students work on copies.** ``make lab`` serves ``lab-work/`` (git-ignored), not ``notebooks/``:
:func:`copy_notebooks` copies each chapter's notebook there when it is missing, and replaces a copy
whose source changed in the repository as long as the student has not edited its cells (outputs do not
count); an edited copy is kept, and the command says how to start again. Saving, autosave and the
files a chapter writes (the tutorial's report) stay in that folder, so ``git status`` stays clean and
``git pull`` is never refused. ``python lab/dpsynth_lab.py copy notebooks lab-work`` is that step alone.

Standard library only (it runs in .venv-lab, which has no dpsynth); ``tests/book/test_lab.py`` tests it.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import re
import shutil
import sys
from pathlib import Path

__all__ = ["REPO", "EVAL_CALL", "HIDE_SOURCE", "HIDE_OUTPUTS", "to_lab", "from_lab", "copy_notebooks",
           "inline_images", "LabContentsManager"]

#: The repository (this file is lab/dpsynth_lab.py).
REPO = Path(__file__).resolve().parents[1]
#: The expression a glue role becomes; ``{spec}`` is the role's content (``key:format``).
EVAL_CALL = '__import__("dpsynth_book.book").book.glued("{spec}")'
#: The expression a reference becomes when its number cannot be read from the code (a label built at run time).
REF_CALL = '__import__("dpsynth_book.book").book.lab_ref("{spec}")'
#: What an expression shows before its Markdown cell has been run.
PENDING = "…"
META = "dpsynth_lab"
#: Tags of a code cell whose code the book does not show: collapsed in the lab.
HIDE_SOURCE = ("remove-input", "remove-cell", "hide-input", "hide-cell")
#: Tags of a code cell whose output the book does not show: collapsed in the lab.
HIDE_OUTPUTS = ("remove-output", "remove-cell", "hide-output", "hide-cell")

_ROLE = re.compile(r"\{(?P<role>[a-z][a-z:]*)\}`(?P<content>[^`]+)`")
_EVAL = re.compile(r'\{eval\}`__import__\("dpsynth_book\.book"\)\.book\.(?P<fn>glued|lab_ref)\("(?P<spec>[^"`]+)"\)`')
_EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", flags=re.S)
_CODE_ROLES = ("class", "mod", "func", "meth", "attr", "py:class", "py:func", "py:mod")


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _chapter_number(toc_text: str, name: str) -> int | None:
    # the rule of dpsynth_book.book.chapter_number (a numbered part numbers its chapters from 1)
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


def _numbers(nb: dict, chapter: int | None) -> dict[str, str]:
    """Label -> "Fig. 1.2" / "Table 1.1" for the fig-/tbl- labels the code cells show, in order.

    A label built at run time (``f"fig-{name}"``) cannot be read from the code: the labels of its
    kind from there on are left out (the kernel numbers them, :data:`REF_CALL`).
    """
    seen: dict[str, dict[str, int]] = {"fig": {}, "tbl": {}}
    stopped: set[str] = set()
    label = re.compile(r"""(?P<f>f?)(?P<q>["'])(?P<label>(?P<kind>fig|tbl)-[a-z0-9-]*)(?P<rest>[^"'\n]*)(?P=q)""")
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        for m in label.finditer(_source(cell)):
            kind = m.group("kind")
            if kind in stopped:
                continue
            if m.group("rest") or m.group("label").endswith("-"):  # built at run time
                stopped.add(kind)
                continue
            seen[kind].setdefault(m.group("label"), len(seen[kind]) + 1)
    out = {}
    for kind, word in (("fig", "Fig."), ("tbl", "Table")):
        for label, n in seen[kind].items():
            out[label] = f"{word} {chapter}.{n}" if chapter else f"{word} {n}"
    return out


def _pages(repo: Path) -> dict[str, tuple[str, str]]:
    """Page name -> (title, lab link or ""), for the notebooks and the book's Markdown pages."""
    pages = {}
    for path in sorted((repo / "notebooks").glob("*.ipynb")):
        try:
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        except (OSError, ValueError):
            continue
        text = "\n".join(_source(c) for c in cells if c.get("cell_type") == "markdown")
        m = re.search(r"^#\s+(.+)$", text, flags=re.M)
        pages[path.stem] = (m.group(1).strip() if m else path.stem, f"{path.stem}.ipynb")
    for path in sorted((repo / "book").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        m = re.search(r"^#\s+(.+)$", text, flags=re.M)
        pages.setdefault(path.stem, (m.group(1).strip() if m else path.stem, ""))
    return pages


def _targets(repo: Path, pages: dict[str, tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """Section labels ``(label)=`` and ``:label:`` of prf directives -> (title, lab link or "")."""
    texts = []
    for path in sorted((repo / "notebooks").glob("*.ipynb")):
        try:
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        except (OSError, ValueError):
            continue
        texts.append(("\n".join(_source(c) for c in cells if c.get("cell_type") == "markdown"), f"{path.stem}.ipynb"))
    for path in sorted((repo / "book").glob("*.md")):
        texts.append((path.read_text(encoding="utf-8"), ""))
    out = {}
    for text, link in texts:
        for m in re.finditer(r"^\((?P<label>[A-Za-z0-9_-]+)\)=\s*\n+#+\s+(?P<title>.+)$", text, flags=re.M):
            out[m.group("label")] = (m.group("title").strip(), link)
        for m in re.finditer(r"^[`:]{3,}\{prf:(?P<kind>[a-z]+)\}\s*(?P<title>[^\n]*)\n:label:\s*(?P<label>\S+)",
                             text, flags=re.M):
            title = m.group("title").strip()
            kind = m.group("kind").capitalize()
            out[m.group("label")] = (f"{kind} “{title}”" if title else kind, link)
    return out


def _bibliography(repo: Path) -> dict[str, tuple[list[str], str]]:
    """Citation key -> (authors' last names, year) from references.bib."""
    try:
        text = (repo / "references.bib").read_text(encoding="utf-8")
    except OSError:
        return {}
    out = {}
    for entry in re.split(r"(?m)^@", text)[1:]:
        m = re.match(r"\s*\w+\s*\{\s*([^,\s]+)\s*,", entry)
        if not m:
            continue
        authors = re.search(r"\bauthor\s*=\s*[{\"](.*?)[}\"]\s*,?\s*$", entry, flags=re.M | re.I)
        year = re.search(r"\byear\s*=\s*[{\"]?(\d{4})", entry, flags=re.I)
        names = []
        if authors:
            for a in re.split(r"\s+and\s+", authors.group(1)):
                a = a.replace("{", "").replace("}", "").strip()
                names.append(a.split(",")[0].strip() if "," in a else a.split()[-1])
        out[m.group(1)] = (names, year.group(1) if year else "n.d.")
    return out


def _authors(names: list[str]) -> str:
    if not names:
        return "?"
    if len(names) == 1:
        return names[0]
    if len(names) == 2:
        return f"{names[0]} and {names[1]}"
    return f"{names[0]} et al."


class _Context:
    def __init__(self, repo: Path, name: str, nb: dict) -> None:
        try:
            toc = (repo / "_toc.yml").read_text(encoding="utf-8")
        except OSError:
            toc = ""
        self.numbers = _numbers(nb, _chapter_number(toc, name))
        self.pages = _pages(repo)
        self.targets = _targets(repo, self.pages)
        self.bib = _bibliography(repo)

    @staticmethod
    def _link(text: str, link: str) -> str:
        return f"[{text}]({link})" if link else f"*{text}*"

    def render(self, role: str, content: str) -> str | None:
        """What jupyterlab-myst should show for ``{role}`content```; None: leave it."""
        m = _EXPLICIT.match(content)
        text, target = (m.group("text"), m.group("target")) if m else (None, content.strip())
        if role == "numref":
            number = self.numbers.get(target)
            if number is None:
                if re.match(r"^(fig|tbl)-", target) and '"' not in content:
                    return "{eval}`" + REF_CALL.format(spec=content) + "`"
                return None
            bare = number.split(" ", 1)[1]  # Sphinx puts the number alone into an explicit title
            return text.replace("%s", bare).replace("{number}", bare) if text else number
        if role == "doc":
            name = target.rsplit("/", 1)[-1]
            title, link = self.pages.get(name, (name, ""))
            return self._link(text or title, link)
        if role in ("ref", "prf:ref"):
            if target not in self.targets:
                return None
            title, link = self.targets[target]
            return self._link(text or title, link)
        if role in ("cite:p", "cite:t", "cite"):
            keys = [k.strip() for k in target.split(",") if k.strip()]
            if not keys or any(k not in self.bib for k in keys):
                return None
            if role == "cite:t":
                return "; ".join(f"{_authors(self.bib[k][0])} ({self.bib[k][1]})" for k in keys)
            return "(" + "; ".join(f"{_authors(self.bib[k][0])} {self.bib[k][1]}" for k in keys) + ")"
        if role in _CODE_ROLES:
            return f"`{target.lstrip('~')}`"
        return None


def _cell_to_lab(cell: dict, ctx: _Context) -> None:
    original = _source(cell)
    pairs: list[list[str]] = []

    def replace(m: re.Match) -> str:
        role, content = m.group("role"), m.group("content")
        if role in ("glue:text", "glue:md"):
            if '"' in content:
                return m.group(0)
            return "{eval}`" + EVAL_CALL.format(spec=content) + "`"
        shown = ctx.render(role, content)
        if shown is None:
            return m.group(0)
        if not shown.startswith("{eval}"):
            pairs.append([shown, m.group(0)])
        return shown

    shown = _ROLE.sub(replace, original)
    if shown == original:
        return
    cell["source"] = shown
    meta = cell.setdefault("metadata", {})
    meta[META] = {"source": original, "shown": shown, "roles": pairs}
    stored = {e.get("expression") for e in meta.get("user_expressions", []) if isinstance(e, dict)}
    exprs = [m.group(0)[len("{eval}`"):-1] for m in _EVAL.finditer(shown)]
    pending = [{"expression": e, "result": {"status": "ok", "data": {"text/plain": PENDING}, "metadata": {}}}
               for e in dict.fromkeys(exprs) if e not in stored]
    if pending:
        meta["user_expressions"] = [e for e in meta.get("user_expressions", []) if isinstance(e, dict)] + pending


def _code_to_lab(cell: dict) -> None:
    """Collapse what the book hides of a code cell (its tags), keeping the metadata it had."""
    meta = cell.setdefault("metadata", {})
    tags = set(meta.get("tags", []) or [])
    hide = {"source_hidden": bool(tags & set(HIDE_SOURCE)), "outputs_hidden": bool(tags & set(HIDE_OUTPUTS))}
    if not any(hide.values()):
        return
    before = meta.get("jupyter")
    meta[META] = {"jupyter": copy.deepcopy(before) if before is not None else None}
    meta["jupyter"] = {**(before or {}), **{k: True for k, v in hide.items() if v}}


def to_lab(nb: dict, name: str, repo: Path = REPO) -> dict:
    """A copy of notebook ``nb`` (the chapter ``name``) whose Markdown cells jupyterlab-myst renders, and whose
    code cells the book hides are collapsed."""
    out = copy.deepcopy(nb)
    ctx = _Context(repo, name, out)
    for cell in out.get("cells", []):
        if cell.get("cell_type") == "markdown":
            _cell_to_lab(cell, ctx)
        elif cell.get("cell_type") == "code":
            _code_to_lab(cell)
    return out


def _role_back(m: re.Match) -> str:
    spec = m.group("spec")
    if m.group("fn") == "lab_ref":
        return "{numref}`" + spec + "`"
    return ("{glue:md}`" if spec.endswith(":myst") else "{glue:text}`") + spec + "`"


def from_lab(nb: dict) -> dict:
    """A copy of ``nb`` with :func:`to_lab`'s rewriting undone (the book's source, any edits kept)."""
    out = copy.deepcopy(nb)
    for cell in out.get("cells", []):
        meta = cell.get("metadata", {})
        info = meta.pop(META, None)
        if cell.get("cell_type") == "code" and isinstance(info, dict) and "jupyter" in info:
            if info["jupyter"] is None:
                meta.pop("jupyter", None)
            else:
                meta["jupyter"] = info["jupyter"]
            continue
        if cell.get("cell_type") != "markdown" or not isinstance(info, dict):
            continue
        source = _source(cell)
        if source == info.get("shown"):
            source = info.get("source", source)
        else:  # edited in the lab: put each role back where its rendering still stands
            for shown, role in info.get("roles", []):
                source = source.replace(shown, role, 1)
            source = _EVAL.sub(_role_back, source)
        cell["source"] = source
        exprs = [e for e in meta.get("user_expressions", [])
                 if isinstance(e, dict) and not _EVAL.fullmatch("{eval}`" + str(e.get("expression")) + "`")]
        if exprs:
            meta["user_expressions"] = exprs
        else:
            meta.pop("user_expressions", None)
    return out


# --------------------------------------------------------------------------------------------------
# the students' copies (make lab serves lab-work/, never notebooks/)
# --------------------------------------------------------------------------------------------------

#: The record of the copies, in the working folder: each notebook's source digest and its cells' digest.
COPIES = ".dpsynth-lab-copies.json"


def _cells_digest(nb: dict) -> str:
    """A digest of a notebook's cells (type and source), not of its outputs or metadata: what a student edits."""
    h = hashlib.sha256()
    for cell in nb.get("cells", []):
        h.update(cell.get("cell_type", "").encode() + b"\0" + _source(cell).encode("utf-8") + b"\0")
    return h.hexdigest()


def copy_notebooks(source: Path, work: Path) -> list[str]:
    """Copy the notebooks of ``source`` into ``work`` for the lab; return one line per notebook on what was done.

    A notebook missing in ``work`` is copied. A copy whose source changed since it was copied is replaced by
    the new source if its cells are still those it was copied with (a run's outputs do not count: the contents
    manager saves the book's source of each cell); a copy the student edited is kept, and the line says how to
    get the new version. Nothing is ever written into ``source``.
    """
    source, work = Path(source).resolve(), Path(work).resolve()
    if work == source:
        raise ValueError(f"the working folder must not be the notebooks' folder {source}")
    work.mkdir(parents=True, exist_ok=True)
    record_path = work / COPIES
    try:
        record = json.loads(record_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        record = {}
    said = []
    for path in sorted(source.glob("*.ipynb")):
        text = path.read_text(encoding="utf-8")
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        cells = _cells_digest(json.loads(text))
        target = work / path.name
        known = record.get(path.name, {})
        if not target.exists():
            shutil.copyfile(path, target)
            said.append(f"{path.name}: copied")
        elif known.get("source") == digest:
            continue
        else:
            try:
                current = _cells_digest(json.loads(target.read_text(encoding="utf-8")))
            except (OSError, ValueError):
                current = None
            if current in (known.get("cells"), cells):
                shutil.copyfile(path, target)
                said.append(f"{path.name}: updated to the repository's version")
            else:
                said.append(f"{path.name}: kept with your edits; the repository's version changed (delete "
                            f"{target} and run make lab again to start from it)")
                continue
        record[path.name] = {"source": digest, "cells": cells}
    record_path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return said


def main(argv: list | None = None) -> int:
    """``python lab/dpsynth_lab.py copy SOURCE WORK``: :func:`copy_notebooks`, one line printed per change."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 3 or args[0] != "copy":
        print("usage: python lab/dpsynth_lab.py copy SOURCE_FOLDER WORKING_FOLDER", file=sys.stderr)
        return 2
    work = Path(args[2]).resolve()
    for line in copy_notebooks(Path(args[1]), work):
        print(f"{work.name}/{line}")
    return 0


# --------------------------------------------------------------------------------------------------
# an HTML page's images, for JupyterLab's HTML viewer
# --------------------------------------------------------------------------------------------------

_IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
                ".svg": "image/svg+xml", ".webp": "image/webp"}
#: Largest image put into a page (bytes).
MAX_INLINE = 20 * 2**20
_IMG_SRC = re.compile(r"""(<img\b[^>]*?\bsrc\s*=\s*)(["'])([^"'<>]+)\2""", flags=re.I)


def inline_images(html: str, folder: Path, root: Path) -> str:
    """``html`` with each ``<img src="...">`` that names an image file in ``folder`` (relative, inside ``root``)
    given as a ``data:`` URL; other images (absolute URLs, ``data:``, missing or large files) are left alone."""
    folder, root = Path(folder).resolve(), Path(root).resolve()

    def replace(m: re.Match) -> str:
        src = m.group(3)
        if re.match(r"^[a-z][a-z0-9+.-]*:|^/|^#", src, flags=re.I):
            return m.group(0)
        path = (folder / src.split("?", 1)[0].split("#", 1)[0]).resolve()
        kind = _IMAGE_TYPES.get(path.suffix.lower())
        try:
            inside = path.is_relative_to(root) and path.is_file() and path.stat().st_size <= MAX_INLINE
        except OSError:
            inside = False
        if kind is None or not inside:
            return m.group(0)
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        return f"{m.group(1)}{m.group(2)}data:{kind};base64,{data}{m.group(2)}"

    return _IMG_SRC.sub(replace, html)


try:  # the contents manager: only where jupyter_server is installed (.venv-lab)
    from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
except ImportError:  # pragma: no cover - the pure functions above are still importable
    AsyncLargeFileManager = None

if AsyncLargeFileManager is not None:
    from nbformat import from_dict

    class LabContentsManager(AsyncLargeFileManager):
        """JupyterLab's file manager, with :func:`to_lab` on opening a notebook and :func:`from_lab` on saving, and
        :func:`inline_images` on opening an HTML page."""

        async def get(self, path, content=True, type=None, format=None, **kwargs):
            model = await super().get(path, content=content, type=type, format=format, **kwargs)
            if model.get("type") == "notebook" and content and model.get("content") is not None:
                model["content"] = from_dict(to_lab(model["content"], Path(path).stem))
            elif (model.get("type") == "file" and model.get("format") == "text"
                  and isinstance(model.get("content"), str) and str(path).lower().endswith((".html", ".htm"))):
                root = Path(self.root_dir)
                model["content"] = inline_images(model["content"], (root / str(path).strip("/")).parent, root)
            return model

        async def save(self, model, path=""):
            if model.get("type") == "notebook" and model.get("content") is not None:
                model = {**model, "content": from_lab(model["content"])}
            return await super().save(model, path)


if __name__ == "__main__":
    sys.exit(main())

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

Standard library only (it runs in .venv-lab, which has no dpsynth); ``tests/book/test_lab.py`` tests it.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

__all__ = ["REPO", "EVAL_CALL", "to_lab", "from_lab", "LabContentsManager"]

#: The repository (this file is lab/dpsynth_lab.py).
REPO = Path(__file__).resolve().parents[1]
#: The expression a glue role becomes; ``{spec}`` is the role's content (``key:format``).
EVAL_CALL = '__import__("dpsynth_book.book").book.glued("{spec}")'
#: The expression a reference becomes when its number cannot be read from the code (a label built at run time).
REF_CALL = '__import__("dpsynth_book.book").book.lab_ref("{spec}")'
#: What an expression shows before its Markdown cell has been run.
PENDING = "…"
META = "dpsynth_lab"

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


def to_lab(nb: dict, name: str, repo: Path = REPO) -> dict:
    """A copy of notebook ``nb`` (the chapter ``name``) whose Markdown cells jupyterlab-myst renders."""
    out = copy.deepcopy(nb)
    ctx = _Context(repo, name, out)
    for cell in out.get("cells", []):
        if cell.get("cell_type") == "markdown":
            _cell_to_lab(cell, ctx)
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


try:  # the contents manager: only where jupyter_server is installed (.venv-lab)
    from jupyter_server.services.contents.largefilemanager import AsyncLargeFileManager
except ImportError:  # pragma: no cover - the pure functions above are still importable
    AsyncLargeFileManager = None

if AsyncLargeFileManager is not None:
    from nbformat import from_dict

    class LabContentsManager(AsyncLargeFileManager):
        """JupyterLab's file manager, with :func:`to_lab` on opening a notebook and :func:`from_lab` on saving."""

        async def get(self, path, content=True, type=None, format=None, **kwargs):
            model = await super().get(path, content=content, type=type, format=format, **kwargs)
            if model.get("type") == "notebook" and content and model.get("content") is not None:
                model["content"] = from_dict(to_lab(model["content"], Path(path).stem))
            return model

        async def save(self, model, path=""):
            if model.get("type") == "notebook" and model.get("content") is not None:
                model = {**model, "content": from_lab(model["content"])}
            return await super().save(model, path)

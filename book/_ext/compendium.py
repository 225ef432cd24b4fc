"""Small Sphinx fixes for this book (loaded through ``_config.yml``).

1. Drop duplicate ``<script>``/``<link>`` assets. Sphinx 7.x, which Jupyter Book 1
   requires, emits an inline script twice when an extension registers it with
   ``app.add_js_file(None, body=...)`` after the builder has been initialised (once
   with filename ``None`` and once with ``''``; sphinx-doc/sphinx#13402, fixed in
   Sphinx 8.2). sphinx-thebe does this for ``const THEBE_JS_URL = ...``, and the
   second copy makes browsers report "Uncaught SyntaxError: Identifier
   'THEBE_JS_URL' has already been declared" on every page.

2. Point the Binder and Colab launch buttons of a chapter at its source notebook
   ``notebooks/<name>.ipynb``. The page itself is built from the executed copy
   ``book/<name>.ipynb``, which papermill writes and which is not committed, so a
   link to it would not resolve in the repository.

3. Set the numbers that the chapters glue into their prose (``{glue:text}``, class
   ``pasted-text``) in the weight of the text around them; myst-nb's stylesheet makes them
   bold (``static/compendium.css``).

4. Hide the parameter cells of an executed chapter: the ``parameters`` cell of the source
   notebook and the ``injected-parameters`` cell papermill adds after it are tagged
   ``remove-cell`` as the page is read (papermill offers no way to tag the cell it injects).
   The page states its scale and settings in prose; the cells are still in the notebook that
   the download button gives.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

_EXECUTED = re.compile(r"(?<=/)book/(?P<name>[A-Za-z0-9_.-]+)\.ipynb\b")


def _key(asset: Any) -> tuple:
    filename = getattr(asset, "filename", asset) or ""
    attributes = getattr(asset, "attributes", {}) or {}
    return (str(filename), tuple(sorted((k, str(v)) for k, v in attributes.items())))


def _dedupe_assets(context: dict) -> None:
    for name in ("script_files", "css_files"):
        assets = context.get(name)
        if not assets:
            continue
        seen: set[tuple] = set()
        unique = []
        for asset in assets:
            key = _key(asset)
            if key not in seen:
                seen.add(key)
                unique.append(asset)
        if len(unique) != len(assets):
            assets[:] = unique  # in place: Sphinx restores the list after each page


def _retarget(node: Any) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "url" and isinstance(value, str):
                node[key] = _EXECUTED.sub(r"notebooks/\g<name>.ipynb", value)
            else:
                _retarget(value)
    elif isinstance(node, list):
        for item in node:
            _retarget(item)


def _on_page(app, pagename, templatename, context, doctree) -> None:
    _dedupe_assets(context)
    if pagename.startswith("book/") and context.get("page_source_suffix") == ".ipynb":
        for button in context.get("header_buttons", []):
            if button.get("label") == "launch-buttons":
                _retarget(button)


#: Tags of the cells that set a notebook's parameters (papermill's and the one it injects).
PARAMETER_TAGS = frozenset({"parameters", "injected-parameters"})


def hide_parameter_cells(text: str) -> str:
    """The notebook JSON ``text`` with ``remove-cell`` added to its parameter cells (unchanged if none)."""
    try:
        nb = json.loads(text)
    except ValueError:
        return text
    changed = False
    for cell in nb.get("cells", []):
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if PARAMETER_TAGS.intersection(tags) and "remove-cell" not in tags:
            tags.append("remove-cell")
            changed = True
    return json.dumps(nb, ensure_ascii=False) if changed else text


def _on_source_read(app, docname, source) -> None:
    path = app.env.doc2path(docname)
    if str(path).endswith(".ipynb"):
        source[0] = hide_parameter_cells(source[0])


def _add_static(app) -> None:
    app.config.html_static_path.append(str(Path(__file__).with_name("static")))


def setup(app) -> dict[str, Any]:
    # After the theme's own handlers (priority 500-501), which add assets and buttons.
    app.connect("html-page-context", _on_page, priority=900)
    app.connect("builder-inited", _add_static)
    app.connect("source-read", _on_source_read)
    app.add_css_file("compendium.css", priority=900)  # after myst-nb's mystnb.css
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}

"""Sphinx extension: drop duplicate inline ``<script>`` tags from HTML pages.

Sphinx 7.x (which Jupyter Book 1 requires) emits an inline script twice when an
extension registers it with ``app.add_js_file(None, body=...)`` after the builder
has been initialised: once with filename ``None`` and once with ``''``
(sphinx-doc/sphinx#13402, fixed in Sphinx 8.2). sphinx-thebe does this for
``const THEBE_JS_URL = ...``, and the second copy makes browsers report
"Uncaught SyntaxError: Identifier 'THEBE_JS_URL' has already been declared" on
every page. This extension removes such duplicates before each page is rendered.
"""

from __future__ import annotations

from typing import Any


def _key(asset: Any) -> tuple:
    filename = getattr(asset, "filename", asset) or ""
    attributes = getattr(asset, "attributes", {}) or {}
    return (str(filename), tuple(sorted((k, str(v)) for k, v in attributes.items())))


def _dedupe(app, pagename, templatename, context, doctree) -> None:
    for name in ("script_files", "css_files"):
        assets = context.get(name)
        if not assets:
            continue
        seen: set[tuple] = set()
        unique = []
        for asset in assets:
            key = _key(asset)
            if key in seen:
                continue
            seen.add(key)
            unique.append(asset)
        if len(unique) != len(assets):
            assets[:] = unique


def setup(app) -> dict[str, Any]:
    # Run after the other handlers of this event, which may add assets themselves.
    app.connect("html-page-context", _dedupe, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}

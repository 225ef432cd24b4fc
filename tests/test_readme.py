"""The entry documents: a README read in five minutes, and no relative link that leads nowhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_README_LINES = 150

# [text](target) and [text](<target>), images included; reference-style definitions "[x]: target"
INLINE = re.compile(r"!?\[[^\]]*\]\(\s*(?:<([^>]+)>|([^)\s]+))(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.MULTILINE)


def relative_links(text: str) -> list[str]:
    """Targets of Markdown links that point into the repository (no scheme, not only an anchor)."""
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)  # code blocks hold no links
    targets = [a or b for a, b in INLINE.findall(text)] + REFERENCE.findall(text)
    return [t for t in targets if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", t) and not t.startswith("#")]


def test_readme_is_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) < MAX_README_LINES, f"README.md has {len(lines)} lines; keep it under {MAX_README_LINES}"


@pytest.mark.parametrize("doc", ["README.md", "CONTRIBUTING.md", "BENCHMARKS.md"])
def test_relative_links_exist(doc):
    path = ROOT / doc
    if not path.exists():
        pytest.skip(f"{doc} does not exist")
    links = relative_links(path.read_text(encoding="utf-8"))
    if doc == "README.md":
        assert links, "README.md should link to the book's pages, CONTRIBUTING.md, BENCHMARKS.md and LICENSE"
    missing = [t for t in links if not (path.parent / t.split("#")[0]).exists()]
    assert not missing, f"{doc} links to files that do not exist: {missing}"


def test_readme_links_the_entry_documents():
    links = {t.split("#")[0] for t in relative_links((ROOT / "README.md").read_text(encoding="utf-8"))}
    assert {"CONTRIBUTING.md", "BENCHMARKS.md", "LICENSE"} <= links


def test_link_finder():
    text = ("See [the book](book/intro.md), [x](<notebooks/a b.ipynb>), [web](https://example.org), "
            "[top](#layout), ![img](docs/i.png \"title\"), [m](mailto:a@b.c).\n\n[ref]: CONTRIBUTING.md\n"
            "```console\n[not](a/link.md)\n```\n")
    assert relative_links(text) == ["book/intro.md", "notebooks/a b.ipynb", "docs/i.png", "CONTRIBUTING.md"]

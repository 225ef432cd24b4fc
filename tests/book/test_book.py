"""Build the Jupyter Book and load its pages in headless Chromium.

The book is built from a temporary copy of its sources (``_config.yml``,
``_toc.yml``, ``*.bib`` and ``book/``) into a temporary directory, with warnings
turned into errors, exactly as ``make book`` does. Chapters listed in ``_toc.yml``
whose executed copy ``book/<name>.ipynb`` has not been produced yet (by
``make notebooks``) are built from their unexecuted source
``notebooks/<name>.ipynb``: execution is off, so the page builds, without outputs.

The built HTML is then served on 127.0.0.1 and opened in headless Chromium, which
must render the pages without JavaScript errors. Chromium is installed by
``.ci/run``; the browser test is skipped with a reason when it is missing.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
BOOK_TITLE = "Differentially private Bayesian data synthesis"
PAGE_SUFFIXES = (".md", ".ipynb", ".rst", ".myst")

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    # Only the local server is reachable: anything else (e.g. the MathJax CDN)
    # fails at once instead of waiting for a network that is not there.
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
    # Let scripts run and the root index.html redirect before the DOM is dumped.
    "--virtual-time-budget=10000",
    # The window a reader of the book is assumed to have.
    "--window-size=1280,900",
    # Console messages, including uncaught JavaScript errors, go to stderr.
    "--enable-logging=stderr",
    "--v=0",
]


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------


def toc_files(toc: dict) -> list[str]:
    """Return every document named in a ``_toc.yml`` mapping (root first).

    Parameters
    ----------
    toc : dict
        The parsed ``_toc.yml`` (jb-book or jb-article format).

    Returns
    -------
    list of str
        Document paths without suffix, e.g. ``["book/intro", "book/api"]``.
    """
    found: list[str] = []

    def walk(node) -> None:
        if isinstance(node, dict):
            for key in ("root", "file"):
                if isinstance(node.get(key), str):
                    found.append(node[key])
            for value in node.values():
                if isinstance(value, (dict, list)):
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc)
    return list(dict.fromkeys(found))


def _strip_suffix(doc: str) -> str:
    for suffix in PAGE_SUFFIXES:
        if doc.endswith(suffix):
            return doc[: -len(suffix)]
    return doc


def prepare_book_source(repo: Path, dest: Path, executed: dict | None = None) -> list[str]:
    """Copy what the book build reads from ``repo`` into ``dest``.

    Every ``book/<name>`` entry of ``_toc.yml`` that has an executed notebook in
    ``executed`` (name -> path) gets it as ``book/<name>.ipynb``; an entry that has
    no page in ``book/`` but has a source notebook ``notebooks/<name>.ipynb`` gets
    that unexecuted notebook (execution is off at build time).

    Parameters
    ----------
    repo : Path
        The repository root.
    dest : Path
        An empty or missing directory to copy into.
    executed : dict, optional
        Executed chapter notebooks by name (the test suite's smoke runs).

    Returns
    -------
    list of str
        The toc entries that were filled from ``executed`` or ``notebooks/``.
    """
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy2(repo / name, dest / name)
    for bib in repo.glob("*.bib"):
        shutil.copy2(bib, dest / bib.name)
    shutil.copytree(
        repo / "book",
        dest / "book",
        ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"),
    )

    toc = yaml.safe_load((repo / "_toc.yml").read_text(encoding="utf-8"))
    filled = []
    for doc in toc_files(toc):
        doc = _strip_suffix(doc)
        name = Path(doc).name
        if executed and name in executed:
            shutil.copy2(executed[name], dest / f"{doc}.ipynb")
            filled.append(doc)
            continue
        if any((dest / f"{doc}{suffix}").exists() for suffix in PAGE_SUFFIXES):
            continue
        parts = Path(doc).parts
        if len(parts) == 2 and parts[0] == "book":
            source = repo / "notebooks" / f"{parts[1]}.ipynb"
            if source.exists():
                shutil.copy2(source, dest / f"{doc}.ipynb")
                filled.append(doc)
    return filled


def _jupyter_book_command() -> list[str]:
    script = Path(sys.executable).with_name("jupyter-book")
    if script.exists():
        return [str(script)]
    found = shutil.which("jupyter-book")
    if found:
        return [found]
    return [sys.executable, "-c", "from jupyter_book.cli.main import main; main()"]


def _find_chromium() -> str | None:
    if os.access("/usr/bin/chromium", os.X_OK):
        return "/usr/bin/chromium"
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _console_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]


# --------------------------------------------------------------------------
# fixtures
# --------------------------------------------------------------------------


def chapter_names() -> list[str]:
    """Toc entries ``book/<name>`` that are chapter notebooks ``notebooks/<name>.ipynb``."""
    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    names = [Path(_strip_suffix(d)).name for d in toc_files(toc)]
    return [n for n in names if (REPO / "notebooks" / f"{n}.ipynb").exists()]


@pytest.fixture(scope="module")
def built_book(tmp_path_factory, smoke_notebooks):
    """Build the book once per module from the chapters executed at smoke scale; return
    (returncode, html_dir, build log)."""
    source = tmp_path_factory.mktemp("book-src")
    output = tmp_path_factory.mktemp("book-out")
    executed = {name: smoke_notebooks.get(name)[1] for name in chapter_names()}
    prepare_book_source(REPO, source, executed)

    env = dict(os.environ)
    # autodoc imports dpsynth from this repository even if it is not installed.
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO / "src"), env.get("PYTHONPATH", "")) if p
    )
    env.setdefault("MPLBACKEND", "Agg")
    cmd = _jupyter_book_command() + [
        "build",
        str(source),
        "--path-output",
        str(output),
        "--warningiserror",
        "--keep-going",
    ]
    proc = subprocess.run(
        cmd, capture_output=True, text=True, env=env, timeout=1800, check=False
    )
    log = proc.stdout + "\n" + proc.stderr
    return proc.returncode, output / "_build" / "html", log


@pytest.fixture(scope="module")
def server(built_book):
    """Serve the built HTML on 127.0.0.1; yield the base URL."""
    returncode, html_dir, log = built_book
    if returncode != 0 or not (html_dir / "index.html").exists():
        pytest.fail(f"the book did not build, so it cannot be served:\n{log[-5000:]}")
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
         "--directory", str(html_dir)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"{base}/index.html", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("the local http.server did not start")
                time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="module")
def chromium():
    path = _find_chromium()
    if path is None:
        pytest.skip(
            "headless Chromium is not installed (Debian: apt-get install chromium; "
            ".ci/run installs it before running the tests)"
        )
    return path


@pytest.fixture
def browse(chromium, tmp_path):
    """Return a function that loads a URL in headless Chromium -> (dom, console lines)."""

    def load(url: str) -> tuple[str, list[str]]:
        profile = tmp_path / f"profile-{len(list(tmp_path.iterdir()))}"
        proc = subprocess.run(
            [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert proc.returncode == 0, f"chromium failed on {url}:\n{proc.stderr[-3000:]}"
        return proc.stdout, _console_lines(proc.stderr)

    return load


# --------------------------------------------------------------------------
# tests
# --------------------------------------------------------------------------


def test_toc_files_walks_nested_entries():
    toc = {
        "format": "jb-book",
        "root": "book/intro",
        "parts": [{"caption": "Studies", "chapters": [
            {"file": "book/censoring", "sections": [{"file": "book/censoring_extra"}]},
        ]}],
        "chapters": [{"file": "book/api.md"}, {"url": "https://example.org", "title": "x"}],
    }
    assert toc_files(toc) == [
        "book/intro", "book/censoring", "book/censoring_extra", "book/api.md",
    ]


def test_prepare_book_source_fills_missing_chapters_from_notebooks(tmp_path):
    repo = tmp_path / "repo"
    (repo / "book").mkdir(parents=True)
    (repo / "notebooks").mkdir()
    (repo / "_config.yml").write_text("title: t\n")
    (repo / "_toc.yml").write_text(
        "format: jb-book\nroot: book/intro\nchapters:\n"
        "- file: book/censoring\n- file: book/tutorial\n- file: book/api\n"
    )
    (repo / "refs.bib").write_text("")
    (repo / "book" / "intro.md").write_text("# Intro\n")
    (repo / "book" / "api.md").write_text("# API\n")
    (repo / "book" / "tutorial.ipynb").write_text('{"executed": true}')
    (repo / "notebooks" / "tutorial.ipynb").write_text('{"executed": false}')
    (repo / "notebooks" / "censoring.ipynb").write_text('{"source": true}')

    dest = tmp_path / "dest"
    filled = prepare_book_source(repo, dest)

    assert filled == ["book/censoring"]
    assert (dest / "book" / "censoring.ipynb").read_text() == '{"source": true}'
    # an executed copy is never replaced by its source
    assert (dest / "book" / "tutorial.ipynb").read_text() == '{"executed": true}'
    assert (dest / "refs.bib").exists() and (dest / "_config.yml").exists()


def test_toc_lists_only_existing_sources():
    """Every toc entry has a page in book/ or a source notebook in notebooks/."""
    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    docs = toc_files(toc)
    assert docs[0] == "book/intro"
    for doc in map(_strip_suffix, docs):
        name = Path(doc).name
        candidates = [REPO / f"{doc}{suffix}" for suffix in PAGE_SUFFIXES]
        candidates.append(REPO / "notebooks" / f"{name}.ipynb")
        assert any(c.exists() for c in candidates), f"{doc} in _toc.yml has no source"


@pytest.mark.slow
def test_book_builds_without_warnings(built_book):
    returncode, html_dir, log = built_book
    assert returncode == 0, f"jupyter-book build failed:\n{log[-8000:]}"
    warnings = [line for line in log.splitlines() if "WARNING" in line]
    assert not warnings, "the book build gave warnings:\n" + "\n".join(warnings)
    assert (html_dir / "index.html").exists()
    assert (html_dir / "book" / "intro.html").exists()
    assert (html_dir / "book" / "api.html").exists()


@pytest.mark.slow
def test_javascript_errors_are_detected(server, browse, built_book):
    """Guard for the console check below: a page that throws must be caught."""
    _, html_dir, _ = built_book
    (html_dir / "_canary.html").write_text(
        "<!doctype html><html><head><title>canary</title></head>"
        "<body><script>notDefinedAnywhere();</script></body></html>",
        encoding="utf-8",
    )
    try:
        _, console = browse(f"{server}/_canary.html")
    finally:
        (html_dir / "_canary.html").unlink()
    assert any("Uncaught" in line for line in console), console


@pytest.mark.slow
def test_index_renders_in_chromium(server, browse):
    dom, console = browse(f"{server}/index.html")
    # the root index.html redirects to the root page of the toc
    assert f"<title>{BOOK_TITLE}" in dom
    assert re.search(r"<h1[^>]*>\s*" + re.escape(BOOK_TITLE), dom), "missing h1"
    for text in ("The mechanisms", "Censor_w", "Weighted-e", "References", "Dimitrakakis"):
        assert text in dom, f"{text!r} not on the intro page"
    assert "Reproducing and re-running" in dom  # navigation to the other pages
    assert not [line for line in console if "Uncaught" in line], console


@pytest.mark.slow
def test_api_page_renders_in_chromium(server, browse):
    dom, console = browse(f"{server}/book/api.html")
    assert "<title>API reference" in dom
    modules = re.findall(
        r"^\.\. automodule:: (\S+)", (REPO / "book" / "api.md").read_text(), flags=re.M
    )
    assert "dpsynth.privacy" in modules
    for module in modules:
        assert f'id="module-{module}"' in dom, f"{module} is not documented"
    assert 'class="sig sig-object py"' in dom, "no function or class was documented"
    assert not [line for line in console if "Uncaught" in line], console


# --------------------------------------------------------------------------
# layout in a real browser: tables, equations, figures, text
# --------------------------------------------------------------------------

#: Injected into a copy of each page: waits for MathJax, measures the layout and writes the
#: result as JSON into <pre id="dpsynth-check">, which --dump-dom then prints.
CHECK_JS = r"""
(async function () {
  const out = {tables: [], equations: [], figures: [], text: "", column: 0};
  try { if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; } }
  catch (e) {}
  await new Promise(r => setTimeout(r, 300));
  const article = document.querySelector("article.bd-article") || document.querySelector("main") || document.body;
  const col = article.getBoundingClientRect();
  out.column = col.width;
  const acs = getComputedStyle(article);
  out.content = col.width - parseFloat(acs.paddingLeft || "0") - parseFloat(acs.paddingRight || "0");
  const scrolls = el => ["auto", "scroll"].includes(getComputedStyle(el).overflowX);
  const scroller = el => {
    for (let a = el; a && a !== article; a = a.parentElement) { if (scrolls(a)) return a; }
    return null;
  };
  for (const t of article.querySelectorAll("table")) {
    const box = scroller(t);
    const r = (box || t).getBoundingClientRect();
    const over = r.right > col.right + 1 || (!box && t.scrollWidth > t.clientWidth + 1);
    if (over) out.tables.push({id: t.id, caption: (t.caption ? t.caption.textContent : "").slice(0, 80),
                               right: r.right, column_right: col.right});
  }
  for (const m of article.querySelectorAll('mjx-container[display="true"], div.math')) {
    const r = m.getBoundingClientRect();
    const clipped = m.scrollWidth > m.clientWidth + 1 && !scrolls(m) && getComputedStyle(m).overflowX !== "visible";
    const outside = r.right > col.right + 1 && !scroller(m);
    if (clipped || outside) out.equations.push({text: m.textContent.slice(0, 80), scroll: m.scrollWidth,
                                                client: m.clientWidth, right: r.right});
  }
  for (const img of article.querySelectorAll(".cell_output img, figure img")) {
    out.figures.push({src: img.getAttribute("src"), natural: img.naturalWidth, shown: img.clientWidth});
  }
  out.text = article.innerText;
  // the prose and outputs without code: a copy of the article with code cells' input and code removed
  const prose = article.cloneNode(true);
  // maths elements are removed too: typeset or not, their LaTeX is MathJax's input, not raw text of ours
  for (const c of prose.querySelectorAll(".cell_input, pre, code, div.highlight, script, style, .math, " +
                                         "mjx-container, mjx-assistive-mml")) { c.remove(); }
  document.body.appendChild(prose);
  prose.style.position = "absolute"; prose.style.left = "-10000px";
  out.prose = prose.innerText;
  prose.remove();
  // captions whose text is cut: clipped by an overflow rule, or ending in an ellipsis
  out.cut_captions = [];
  for (const c of article.querySelectorAll("caption, figcaption, .caption-text")) {
    const st = getComputedStyle(c);
    const clipped = (c.scrollWidth > c.clientWidth + 1 || c.scrollHeight > c.clientHeight + 1) &&
                    ["hidden", "clip"].includes(st.overflowX) || ["hidden", "clip"].includes(st.overflowY) &&
                    c.scrollHeight > c.clientHeight + 1;
    const text = c.innerText.trim();
    if (clipped || st.textOverflow === "ellipsis" || /(\u2026|\.\.\.)$/.test(text)) {
      out.cut_captions.push(text.slice(0, 80));
    }
  }
  // ---- page form ----
  const left = col.left + parseFloat(acs.paddingLeft || "0"), right = col.right - parseFloat(acs.paddingRight || "0");
  const textOf = (node, drop) => {
    const copy = node.cloneNode(true);
    for (const c of copy.querySelectorAll(drop)) { c.remove(); }
    document.body.appendChild(copy);
    copy.style.position = "absolute"; copy.style.left = "-10000px"; copy.style.width = col.width + "px";
    const text = copy.innerText;
    copy.remove();
    return text.replace(/\s+/g, " ").trim();
  };
  const MATH = ".math, mjx-container, mjx-assistive-mml, script, style";
  // what a reader sees as text, code taken out: code cells' input, code blocks of the prose, inline code (printed
  // output stays: a directive printed by a cell is raw MyST too)
  const visible = article.cloneNode(true);
  for (const c of visible.querySelectorAll(".cell_input, " + MATH)) { c.remove(); }
  for (const c of visible.querySelectorAll("pre, div.highlight, code")) {
    if (!c.closest(".cell_output") || (c.tagName === "CODE" && !c.closest("pre"))) { c.remove(); }
  }
  document.body.appendChild(visible);
  visible.style.position = "absolute"; visible.style.left = "-10000px"; visible.style.width = col.width + "px";
  out.visible = visible.innerText;
  visible.remove();
  // empty code blocks and table rows: what a directive Markdown could not read leaves behind
  out.empty = [];
  for (const b of article.querySelectorAll("div.highlight, .cell_output pre")) {
    if (!b.innerText.trim()) out.empty.push("empty block " + b.className);
  }
  for (const row of article.querySelectorAll("tr")) {
    const cells = row.querySelectorAll("td, th");
    if (cells.length && [...cells].every(c => !c.innerText.trim())) {
      const table = row.closest("table");
      out.empty.push("empty row in " + (table && table.id ? table.id : "a table"));
    }
  }
  // anything reaching beyond the content area, unless a scroll container inside the area holds it
  const insideScroller = el => {
    for (let a = el.parentElement; a && a !== article; a = a.parentElement) {
      if (scrolls(a)) return a;
    }
    return null;
  };
  const describe = el => (el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
                          (el.className && typeof el.className === "string" ? "." + el.className.split(" ")[0] : "") +
                          ": " + (el.innerText || el.textContent || "").replace(/\s+/g, " ").trim().slice(0, 80));
  out.overflow = [];
  out.clipped = [];
  const reported = [];
  for (const el of article.querySelectorAll("*")) {
    if (el.closest("mjx-container, svg, .headerlink, script, style") && el.tagName !== "MJX-CONTAINER") continue;
    if (reported.some(r => r.contains(el))) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) continue;
    if (insideScroller(el)) continue;  // judged by its scroll container
    if (r.right > right + 1 || r.left < left - 1) {
      out.overflow.push({what: describe(el), left: Math.round(r.left), right: Math.round(r.right),
                         content: [Math.round(left), Math.round(right)]});
      reported.push(el);
      continue;
    }
    const st = getComputedStyle(el);
    if (["hidden", "clip"].includes(st.overflowX) && el.scrollWidth > el.clientWidth + 1 &&
        !el.matches("mjx-container, .math, .sd-card, img")) {
      out.clipped.push({what: describe(el), scroll: el.scrollWidth, client: el.clientWidth});
      reported.push(el);
    }
  }
  // captions must be readable where they are: inside the visible part of their scroll container
  out.hidden_captions = [];
  for (const c of article.querySelectorAll("caption, figcaption")) {
    const box = insideScroller(c) || scroller(c);
    // the caption's words and maths, not its permalink (a "#" shown on hover, which may sit past the last word)
    const rects = [];
    const walker = document.createTreeWalker(c, NodeFilter.SHOW_TEXT);
    for (let t = walker.nextNode(); t; t = walker.nextNode()) {
      if (t.parentElement.closest(".headerlink, mjx-container")) continue;
      const range = document.createRange();
      range.selectNodeContents(t);
      rects.push(...[...range.getClientRects()].filter(q => q.width > 0));
    }
    for (const m of c.querySelectorAll("mjx-container")) rects.push(m.getBoundingClientRect());
    if (!rects.length) continue;
    const lo = Math.min(...rects.map(q => q.left)), hi = Math.max(...rects.map(q => q.right));
    const b = box ? box.getBoundingClientRect() : {left: left, right: right};
    const vl = Math.max(b.left, left), vr = Math.min(b.right, right);
    if (lo < vl - 1 || hi > vr + 1) {
      out.hidden_captions.push({caption: c.innerText.replace(/\s+/g, " ").trim().slice(0, 80),
                                text: [Math.round(lo), Math.round(hi)], visible: [Math.round(vl), Math.round(vr)]});
    }
  }
  // printed output (statements, CLI lines) must wrap, and code shown must fit: no line that needs scrolling sideways
  out.unwrapped = [];
  for (const p of article.querySelectorAll(".cell_output pre, .output pre, div.highlight pre")) {
    if (p.scrollWidth > p.clientWidth + 1) {
      out.unwrapped.push({text: p.innerText.split("\n").reduce((a, b) => b.length > a.length ? b : a, "").slice(0, 100),
                          scroll: p.scrollWidth, client: p.clientWidth});
    }
  }
  // captions and table headers as read (code spans, maths and the numbers taken out), for the caption check
  out.captions = [];
  for (const c of article.querySelectorAll("caption, figcaption")) {
    out.captions.push(textOf(c, "code, .caption-number, .headerlink, " + MATH));
  }
  out.headers = [];
  for (const t of article.querySelectorAll("table")) {
    const cells = [...t.querySelectorAll("thead th")];
    for (const row of t.querySelectorAll("tbody tr")) { if (row.cells.length) cells.push(row.cells[0]); }
    for (const c of cells) {
      const text = textOf(c, "code, " + MATH);
      if (text) out.headers.push(text);
    }
    for (const c of t.querySelectorAll("td")) {
      if (/^(True|False|None)$/.test(c.innerText.trim()))
        out.headers.push("cell " + c.innerText.trim() + " in " + t.id);
    }
  }
  // the code a reader sees: every code cell's input that is shown
  out.inputs = [...article.querySelectorAll(".cell_input")].filter(c => c.getBoundingClientRect().height > 0)
                                                              .map(c => c.innerText);
  const pre = document.createElement("pre");
  pre.id = "dpsynth-check";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
"""


def style_min_text_px() -> float:
    """Smallest text of a figure at natural size, in pixels, from the book's style file."""
    import matplotlib as mpl

    from dpsynth_book import plots

    plots.use_style()
    pts = [mpl.rcParams[k] for k in ("font.size", "axes.titlesize", "axes.labelsize", "xtick.labelsize",
                                     "ytick.labelsize", "legend.fontsize")]
    sizes = [float(v) for v in pts if isinstance(v, (int, float))]
    return min(sizes) * float(mpl.rcParams["figure.dpi"]) / 72.0


def toc_pages() -> list[str]:
    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    return [_strip_suffix(d) for d in toc_files(toc)]


@pytest.fixture(scope="module")
def page_layout(built_book, server, chromium, tmp_path_factory):
    """Measure every toc page in Chromium at 1280 px: {page: measurements}."""
    import json

    _, html_dir, _ = built_book
    (html_dir / "_dpsynth_check.js").write_text(CHECK_JS, encoding="utf-8")
    profiles = tmp_path_factory.mktemp("chromium-profiles")
    found = {}
    for i, page in enumerate(toc_pages()):
        src = html_dir / f"{page}.html"
        html = src.read_text(encoding="utf-8")
        depth = "../" * page.count("/")
        probe = src.with_name(src.stem + ".layout-check.html")
        probe.write_text(html.replace("</body>", f'<script src="{depth}_dpsynth_check.js"></script></body>'),
                         encoding="utf-8")
        proc = subprocess.run(
            [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profiles / str(i)}", "--dump-dom",
             f"{server}/{page}.layout-check.html"],
            capture_output=True, text=True, timeout=180, check=False,
        )
        probe.unlink()
        m = re.search(r'<pre id="dpsynth-check"[^>]*>(.*?)</pre>', proc.stdout, flags=re.S)
        assert m, f"the layout check did not run on {page}:\n{proc.stderr[-2000:]}"
        import html as htmlmod

        found[page] = json.loads(htmlmod.unescape(m.group(1)))
    return found


@pytest.mark.slow
def test_no_table_or_equation_overflows_its_column(page_layout):
    bad = {p: {"tables": v["tables"], "equations": v["equations"]} for p, v in page_layout.items()
           if v["tables"] or v["equations"]}
    assert not bad, f"tables or equations overflow the text column (or are clipped) at 1280 px: {bad}"


@pytest.mark.slow
def test_figures_are_shown_large_enough_for_their_text(page_layout):
    from dpsynth_book.book import MIN_TEXT_PX

    smallest = style_min_text_px()
    small = []
    n_figures = 0
    for page, v in page_layout.items():
        for f in v["figures"]:
            n_figures += 1
            assert f["natural"] > 0, f"{page}: figure {f['src']} did not load"
            shown_px = smallest * f["shown"] / f["natural"]
            if shown_px < MIN_TEXT_PX:
                small.append((page, f["src"], round(shown_px, 1)))
    assert n_figures > 0
    assert not small, f"figures shown so small that their text is under {MIN_TEXT_PX} px: {small}"


#: Smallest width of a figure on the page, as a share of the text column.
MIN_FIGURE_SHARE = 0.9


@pytest.mark.slow
def test_figures_fill_the_column(page_layout):
    """Every figure is shown at least MIN_FIGURE_SHARE of the text column wide (none is a thumbnail)."""
    narrow = [(page, f["src"], round(f["shown"] / v["content"], 2)) for page, v in page_layout.items()
              for f in v["figures"] if v["content"] and f["shown"] < MIN_FIGURE_SHARE * v["content"]]
    assert not narrow, f"figures narrower than {MIN_FIGURE_SHARE:.0%} of the column: {narrow}"


@pytest.mark.slow
def test_pages_show_no_raw_warnings_paths_or_parameter_names(page_layout):
    patterns = [r"\b\w*Warning\b:", r"/tmp/", r"\bn = n\b", r"\bdownscale_eps\b", r"\bSPEC\b",
                r"(?i)the seeds", r"Unweighted \(aDP\)",
                # promises of later work: a page states what its results show, not what a later run will
                r"(?i)will be checked", r"(?i)in a later release", r"(?i)in a future (?:release|version)"]
    bad = {}
    for page, v in page_layout.items():
        if page.endswith("api"):
            continue
        hits = [p for p in patterns if re.search(p, v["text"])]
        if hits:
            bad[page] = hits
    assert not bad, f"pages show raw warnings, temporary paths or parameter names: {bad}"


#: Raw forms that the rendered prose (code excluded) must not show: maths is typeset everywhere.
RAW_TEXT = {
    "raw LaTeX": r"\\(?:var)?epsilon\b|\\Delta\b|\\alpha\b|\\theta\b|\\le(?:q)?\b",
    "plain eps =": r"\beps\s*(?:=|<|>|≤|≥)",
    "plain Delta <=": r"\bDelta\s*(?:<=|>=|<|>|≤|≥)",
    "plain <=": r"(?<![<=!])<=(?!=)",
}


def raw_text_defects(text: str) -> list[str]:
    """The kinds of :data:`RAW_TEXT` that ``text`` shows, each with the first match in its context."""
    from dpsynth_book.page_check import pattern_defects

    return pattern_defects(text, RAW_TEXT, after=20)


def test_raw_text_check_catches_each_defect():
    """Guard: each raw form is reported, typeset text and plain words are not."""
    for text in ("Neighbouring data sets: which \\epsilon", "at eps = 5 the fit", "Delta <= eps/2",
                 "when a <= b", "as \\Delta grows"):
        assert raw_text_defects(text), text
    for text in ("ε = 5 with one record removed", "Δ ≤ ε/2", "the epsilon of a release", "steps <- 3",
                 "Deltas of 2", "keeps rows"):
        assert not raw_text_defects(text), text


@pytest.mark.slow
def test_pages_typeset_their_maths(page_layout):
    """No page's prose, tables or captions show raw LaTeX or plain-text ε and Δ (code cells excepted)."""
    bad = {p: raw_text_defects(v["prose"]) for p, v in page_layout.items() if not p.endswith("api")}
    bad = {p: v for p, v in bad.items() if v}
    assert not bad, f"pages show raw LaTeX or plain-text maths: {bad}"


@pytest.mark.slow
def test_no_caption_is_cut(page_layout):
    bad = {p: v["cut_captions"] for p, v in page_layout.items() if v["cut_captions"]}
    assert not bad, f"captions cut on the page (clipped or ending in an ellipsis): {bad}"


@pytest.mark.slow
def test_parameter_cells_are_hidden(page_layout):
    """The chapters' parameter cells (papermill's and the injected one) are not shown."""
    cell = re.compile(r'\bcache_dir\s*=\s*""|\bscale\s*=\s*"(?:quick|paper|smoke)"')  # the cells' assignments
    bad = [p for p, v in page_layout.items() if not p.endswith("api") and cell.search(v["text"])]
    assert not bad, f"pages show their parameter cells: {bad}"


@pytest.mark.slow
def test_pages_show_no_raw_myst_and_no_empty_rows(page_layout):
    """No directive, option, role or fence printed as text; no empty table row or code block (what a directive
    that Markdown could not read leaves behind)."""
    from dpsynth_book.page_check import raw_myst_defects

    bad = {p: raw_myst_defects(v["visible"]) + v["empty"] for p, v in page_layout.items() if not p.endswith("api")}
    bad = {p: v for p, v in bad.items() if v}
    assert not bad, f"pages show raw MyST or empty rows: {bad}"


@pytest.mark.slow
def test_nothing_is_clipped_and_every_caption_is_readable(page_layout):
    """Nothing reaches beyond the text column unless a scroll box holds it, nothing is clipped, every caption is
    inside the visible part of its box, and printed output (statements, CLI lines) wraps."""
    keys = ("overflow", "clipped", "hidden_captions", "unwrapped")
    bad = {p: {k: v[k] for k in keys if v[k]} for p, v in page_layout.items()}
    bad = {p: v for p, v in bad.items() if v}
    assert not bad, f"clipped, overflowing or unwrapped content at 1280 px: {bad}"


@pytest.mark.slow
def test_captions_and_headers_show_no_internal_names(page_layout):
    """Captions and table headers name things as a reader does: no Python literals, no parameter names."""
    from dpsynth_book.page_check import caption_defects

    bad = {p: [d for c in v["captions"] + v["headers"] for d in caption_defects(c)]
           for p, v in page_layout.items() if not p.endswith("api")}
    bad = {p: v for p, v in bad.items() if v}
    assert not bad, f"captions or headers show internal names: {bad}"


def _check_probe(server, chromium, built_book, tmp_path, body: str) -> dict:
    """What the page check (:data:`CHECK_JS`) finds on a page whose 600-px article holds ``body``."""
    import html as htmlmod
    import json

    _, html_dir, _ = built_book
    (html_dir / "_dpsynth_check.js").write_text(CHECK_JS, encoding="utf-8")
    (html_dir / "_probe.html").write_text(
        "<!doctype html><html><body><main><article class='bd-article' style='width:600px'>"
        f"{body}</article></main><script src='_dpsynth_check.js'></script></body></html>", encoding="utf-8")
    proc = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'p'}", "--dump-dom",
                           f"{server}/_probe.html"], capture_output=True, text=True, timeout=120, check=False)
    (html_dir / "_probe.html").unlink()
    m = re.search(r'<pre id="dpsynth-check"[^>]*>(.*?)</pre>', proc.stdout, flags=re.S)
    assert m, proc.stderr[-2000:]
    return json.loads(htmlmod.unescape(m.group(1)))


def test_page_form_check_catches_each_defect(server, chromium, built_book, tmp_path):
    """Guard: raw MyST in the text, an empty row, a caption with a literal, an identifier in a header, an unwrapped
    output line, a code line past the column and a caption out of its scroll box's view are reported by the browser
    check."""

    long_line = "x" * 400
    wide = "".join(f"<td>column-{i}-with-long-content</td>" for i in range(40))
    found = _check_probe(server, chromium, built_book, tmp_path, (
        "<p>```{table} Every measure :name: tbl-x</p>"
        "<table id='t1'><caption>Fits converged: Unweighted True</caption><thead><tr><th>a</th></tr></thead>"
        "<tbody><tr><td>house_prices</td></tr><tr><td></td></tr></tbody></table>"
        f"<div class='cell_output'><pre style='white-space: pre; overflow-x: auto'>{long_line}</pre></div>"
        f"<div class='highlight'><pre style='white-space: pre; overflow-x: auto'>code = {long_line}</pre></div>"
        "<div style='overflow-x: auto'><table><caption>A caption as wide as its table, most of it out of view "
        f"until the reader scrolls: {'words ' * 60}</caption><tr>{wide}</tr></table></div>"))
    from dpsynth_book.page_check import caption_defects, raw_myst_defects

    assert raw_myst_defects(found["visible"]) and found["empty"]
    assert len(found["unwrapped"]) == 2  # the printed line and the code line
    assert found["hidden_captions"] and "as wide as its table" in found["hidden_captions"][0]["caption"]
    assert any(caption_defects(c) for c in found["captions"])
    assert any("house_prices" in d for c in found["headers"] for d in caption_defects(c))


def test_hiding_parameter_cells_tags_both_cells():
    """Guard: the book extension tags the parameters and injected-parameters cells remove-cell, nothing else."""
    import json
    import sys as _sys

    _sys.path.insert(0, str(REPO / "book" / "_ext"))
    try:
        from compendium import hide_parameter_cells
    finally:
        _sys.path.pop(0)
    nb = {"cells": [{"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": "scale = 'quick'"},
                    {"cell_type": "code", "metadata": {"tags": ["injected-parameters"]}, "source": "scale = 'paper'"},
                    {"cell_type": "code", "metadata": {}, "source": "run()"}]}
    out = json.loads(hide_parameter_cells(json.dumps(nb)))
    tags = [c["metadata"].get("tags", []) for c in out["cells"]]
    assert "remove-cell" in tags[0] and "remove-cell" in tags[1] and "remove-cell" not in tags[2]
    assert hide_parameter_cells("not json") == "not json"


def test_layout_check_catches_an_overflowing_table(server, chromium, built_book, tmp_path):
    """Guard: a page with a table wider than the column must be reported."""

    cells = "".join(f"<td>column-{i}-with-long-content</td>" for i in range(40))
    found = _check_probe(server, chromium, built_book, tmp_path, f"<table><tr>{cells}</tr></table>")
    assert found["tables"], "an overflowing table was not reported"


# --------------------------------------------------------------------------
# the confidential report of a release (dpsynth report), without the book
# --------------------------------------------------------------------------

#: Injected into a copy of a report: once the page and its images have loaded, records the images,
#: any text under 9 px and the banner as JSON in <pre id="dpsynth-check"> (the report itself has no script).
REPORT_CHECK_JS = r"""
(async function () {
  if (document.readyState !== "complete") { await new Promise(r => window.addEventListener("load", r)); }
  const out = {images: [], small: [], banner: "", title: document.title};
  for (const img of document.images) {
    out.images.push({src: img.getAttribute("src"), natural: img.naturalWidth, shown: img.clientWidth,
                     text_px: parseFloat(img.dataset.minTextPx || "0")});
  }
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const node = walk.currentNode;
    if (!node.textContent.trim()) continue;
    const px = parseFloat(getComputedStyle(node.parentElement).fontSize);
    if (px < 9) out.small.push({text: node.textContent.trim().slice(0, 60), px: px});
  }
  const banner = document.querySelector(".banner");
  out.banner = banner ? banner.innerText : "";
  const pre = document.createElement("pre");
  pre.id = "dpsynth-check";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
"""


@pytest.mark.slow
def test_a_release_report_renders_in_chromium(browse, tmp_path):
    """`dpsynth report` for a small CSV opens in Chromium: banner, every figure loaded, no text under 9 px."""
    import html as htmlmod
    import json

    import numpy as np
    import pandas as pd

    from dpsynth.cli import main
    from dpsynth.report import BANNER
    from dpsynth_book.book import MIN_TEXT_PX

    rng = np.random.default_rng(0)
    region = rng.choice(["north", "south", "west"], 200)
    wage = np.exp(0.2 + 0.4 * (region == "south") + rng.normal(0.0, 0.3, 200))
    data = tmp_path / "confidential.csv"
    pd.DataFrame({"wage": wage, "region": region, "age": rng.integers(20, 60, 200)}).to_csv(data, index=False)
    syn, released, out = tmp_path / "s.json", tmp_path / "released.csv", tmp_path / "report"
    # the perturbed histogram: no MCMC, so the test needs no model compilation
    assert main(["fit", str(data), "--target", "wage", "--covariates", "region", "age", "--model", "lognormal",
                 "--mechanism", "ph", "--eps", "1", "--lower", "0", "--upper", "20", "--seed", "1",
                 "--out", str(syn)]) == 0
    assert main(["release", "--allow-research", str(syn), "--out", str(released), "--seed", "2"]) == 0
    assert main(["report", str(syn), "--data", str(data), "--released", str(released), "--out", str(out)]) == 0

    page = out / "report.html"
    probe = page.with_name("report.layout-check.html")
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", f"<script>{REPORT_CHECK_JS}</script></body>"),
                     encoding="utf-8")
    dom, console = browse(probe.as_uri())
    m = re.search(r'<pre id="dpsynth-check"[^>]*>(.*?)</pre>', dom, flags=re.S)
    assert m, f"the check did not run on the report:\n{console}"
    found = json.loads(htmlmod.unescape(m.group(1)))
    assert found["title"].startswith("CONFIDENTIAL")
    assert " ".join(found["banner"].split()) == BANNER
    assert [i["src"] for i in found["images"]] == ["figure-1-ecdf.png", "figure-2-coefficients.png"]
    for img in found["images"]:
        assert img["natural"] > 0, f"{img['src']} did not load"
        shown_px = img["text_px"] * img["shown"] / img["natural"]
        assert shown_px >= MIN_TEXT_PX, f"{img['src']}: its smallest text is {shown_px:.1f} px as shown"
    assert not found["small"], f"text under 9 px: {found['small']}"
    assert not [line for line in console if "Uncaught" in line], console


def test_api_page_lists_every_module():
    """Every module of the library and of the compendium has its section on the API page, the library's first."""
    import pkgutil

    import dpsynth
    import dpsynth_book

    text = (REPO / "book" / "api.md").read_text()
    order = re.findall(r"^\.\. automodule:: (\S+)", text, flags=re.M)
    listed = set(order)
    modules = {m.name for package in (dpsynth, dpsynth_book)
               for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")}
    missing = sorted(m for m in modules if m not in listed and not m.endswith("__main__"))
    assert not missing, f"modules missing from book/api.md: {missing}"
    tops = [m.split(".")[0] for m in order]
    assert tops == sorted(tops, key=lambda top: top == "dpsynth_book"), "the library's modules come first"

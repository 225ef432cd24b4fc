"""`make lab`: JupyterLab from .venv-lab on the chapters' notebooks, rendered as the book renders them.

* ``lab/dpsynth_lab.py``, the lab's contents manager: what jupyterlab-myst cannot render (glue roles,
  references to figures, tables, pages, sections, propositions and the bibliography) is rewritten
  when a notebook opens and restored when it is saved (unit tests, no server).
* The server: ``make lab`` starts headless on a free local port with a token; its API status, kernel
  specifications and contents are read.
* The browser: ``make lab`` again, and headless Chromium, driven over the DevTools protocol
  (``lab/lab_browser.py``, which ``lab/measure_route.py`` uses too), opens the tutorial and runs it at
  quick scale as a student does, **cell by cell**: the first cell selected, Shift+Enter pressed once
  per cell, each cell waited for. The page must show no placeholder of a number not yet computed,
  figures, tables, glued numbers and no raw MyST (roles, directives, "Unknown Directive") or news
  pop-up; the report the tutorial writes must be served (200) and open from the lab's file browser;
  the run's saves land in the lab's working copy, never in ``notebooks/`` (``git status`` as before);
  and the temporary dpsynth home is gone once the lab has shut its kernel down. Screenshots go to the
  test's temporary folder.

The server tests need .venv-lab (`make lab-env`, which `.ci/run` builds) and the browser test
Chromium (Debian: `apt-get install chromium`); without them they are skipped with that reason.
"""

from __future__ import annotations

import importlib.util
import json
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LAB_PYTHON = REPO / ".venv-lab" / "bin" / "python"


def _lab_module(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "lab" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


lab = _lab_module("dpsynth_lab")
browsing = _lab_module("lab_browser")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as r:  # noqa: S310 (a local URL)
        return json.loads(r.read().decode())


# --------------------------------------------------------------------------------------------------
# the contents manager's rewriting (no server)
# --------------------------------------------------------------------------------------------------


def _nb(markdown: str, code: str = "") -> dict:
    return {"cells": [{"cell_type": "markdown", "metadata": {}, "source": markdown},
                      {"cell_type": "code", "metadata": {}, "source": code, "outputs": [], "execution_count": None}],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def test_glue_roles_become_eval_expressions_and_come_back_on_save():
    src = "Δ is {glue:text}`tutorial-fit-delta-u:.2f` and {glue:md}`censoring-list:myst`."
    shown = lab.to_lab(_nb(src), "tutorial")
    cell = shown["cells"][0]
    assert "{glue:" not in cell["source"]
    assert '{eval}`__import__("dpsynth_book.book").book.glued("tutorial-fit-delta-u:.2f")`' in cell["source"]
    # before the cell runs, each expression shows a placeholder, not its code
    exprs = {e["expression"]: e["result"]["data"]["text/plain"] for e in cell["metadata"]["user_expressions"]}
    assert set(exprs.values()) == {lab.PENDING} and len(exprs) == 2
    back = lab.from_lab(shown)
    assert back["cells"][0]["source"] == src
    assert back["cells"][0]["metadata"] == {}


def test_references_take_the_book_numbers_of_the_code_cells_labels():
    code = ('book.show_table(t, "tbl-tutorial-odds", "c")\nbook.show_figure(f, "fig-tutorial-clamp", "c")\n'
            'book.show_figure(g, "fig-tutorial-bounds", "c")')
    src = ("{numref}`fig-tutorial-bounds`, {numref}`tbl-tutorial-odds`, {numref}`Figure %s <fig-tutorial-clamp>`, "
           "{numref}`eq-unknown` and {doc}`own_data`.")
    shown = lab.to_lab(_nb(src, code), "tutorial")["cells"][0]["source"]
    # the tutorial is chapter 1 of its numbered part; censoring is chapter 1 of the next part
    assert shown.startswith("Fig. 1.2, Table 1.1, Figure 1.1, {numref}`eq-unknown` and [")
    assert "](own_data.ipynb)" in shown
    assert lab.to_lab(_nb("{numref}`fig-tutorial-bounds`", code), "reweighting")["cells"][0]["source"] == "Fig. 2.2"
    assert lab.to_lab(_nb("{numref}`fig-tutorial-bounds`", code), "teaching")["cells"][0]["source"] == "Fig. 2"
    assert lab.from_lab(lab.to_lab(_nb(src, code), "tutorial"))["cells"][0]["source"] == src


def test_sections_propositions_citations_and_api_names():
    src = ("{ref}`neighbours`, {prf:ref}`prop-window`, {cite:p}`hu2022censoring`, {cite:t}`hu2022censoring`, "
           "{mod}`dpsynth_book.book`")
    shown = lab.to_lab(_nb(src), "tutorial")["cells"][0]["source"]
    assert "{" not in shown.replace("{eval}", ""), shown
    assert "Proposition “The window, not its place”" in shown
    assert "(Hu et al. 2022)" in shown and "Hu et al. (2022)" in shown and "`dpsynth_book.book`" in shown


def test_an_edited_cell_keeps_the_edit_and_gets_its_roles_back():
    src = "See {numref}`fig-tutorial-clamp`: Δ = {glue:text}`tutorial-fit-delta-u:.2f`."
    shown = lab.to_lab(_nb(src, 'show_figure(f, "fig-tutorial-clamp", "c")'), "tutorial")
    shown["cells"][0]["source"] = "Look! " + shown["cells"][0]["source"]
    assert lab.from_lab(shown)["cells"][0]["source"] == "Look! " + src


def test_every_chapter_survives_the_round_trip():
    for path in sorted((REPO / "notebooks").glob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        for c in nb["cells"]:  # as the server reads it (nbformat joins the lines)
            c["source"] = "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        shown = lab.to_lab(nb, path.stem)
        assert lab.from_lab(shown) == nb, path.name
        raw = [m.group(0) for c in shown["cells"] if c["cell_type"] == "markdown"
               for m in re.finditer(r"\{(glue:text|glue:md|numref|doc)\}`[^`]*`", "".join(c["source"]))]
        # what is left to jupyterlab-myst: references to labels that Markdown cells define
        assert all(r.startswith("{numref}") and "fig-" not in r and "tbl-" not in r for r in raw), (path.name, raw)


def test_a_label_built_at_run_time_is_numbered_by_the_kernel():
    code = ('book.show_figure(a, "fig-x-first", "c")\nfor m in ("a", "b"):\n'
            '    book.show_figure(f, f"fig-x-{m}", "c")\n'
            'book.show_figure(b, "fig-x-last", "c")\nbook.show_table(t, "tbl-x-one", "c")')
    src = "{numref}`fig-x-first`, {numref}`fig-x-last`, {numref}`tbl-x-one`."
    shown = lab.to_lab(_nb(src, code), "tutorial")["cells"][0]["source"]
    assert shown == ('Fig. 1.1, {eval}`__import__("dpsynth_book.book").book.lab_ref("fig-x-last")`, Table 1.1.'), shown
    assert lab.from_lab(lab.to_lab(_nb(src, code), "tutorial"))["cells"][0]["source"] == src


def test_cells_the_book_hides_are_collapsed_in_the_lab_and_come_back_on_save():
    nb = _nb("text", "import x")
    nb["cells"] += [
        {"cell_type": "code", "metadata": {"tags": ["remove-input"]}, "source": "book.show_figure(f)", "outputs": [],
         "execution_count": None},
        {"cell_type": "code", "metadata": {"tags": ["remove-cell"], "jupyter": {"outputs_hidden": False}},
         "source": "glue()", "outputs": [], "execution_count": None},
        {"cell_type": "code", "metadata": {"tags": ["remove-stderr"]}, "source": "s.fit()", "outputs": [],
         "execution_count": None}]
    shown = lab.to_lab(nb, "tutorial")
    meta = [c["metadata"] for c in shown["cells"]]
    assert "jupyter" not in meta[1]  # a cell the book shows
    assert meta[2]["jupyter"] == {"source_hidden": True}  # the figure shows, its code does not
    assert meta[3]["jupyter"] == {"source_hidden": True, "outputs_hidden": True}  # the whole cell
    assert "jupyter" not in meta[4]  # stderr cannot be hidden alone: the tutorial writes none
    assert lab.from_lab(shown) == nb


def test_every_hidden_cell_of_the_tutorial_is_collapsed():
    nb = json.loads((REPO / "notebooks" / "tutorial.ipynb").read_text(encoding="utf-8"))
    shown = lab.to_lab(nb, "tutorial")
    for cell in shown["cells"]:
        tags = set(cell["metadata"].get("tags", []))
        if cell["cell_type"] == "code" and tags & {"remove-cell", "remove-input"}:
            assert cell["metadata"]["jupyter"]["source_hidden"], cell["source"]
    visible = ["".join(c["source"]) for c in shown["cells"] if c["cell_type"] == "code"
               and not c["metadata"].get("jupyter", {}).get("source_hidden")]
    assert not any("book.show_" in v or "glue_numbers" in v or "import dpsynth  #" in v for v in visible), visible


def _write_nb(path: Path, markdown: str) -> None:
    path.write_text(json.dumps(_nb(markdown, "x = 1")), encoding="utf-8")


def test_students_work_on_copies_that_follow_the_repository_until_they_edit_them(tmp_path):
    src, work = tmp_path / "notebooks", tmp_path / "lab-work"
    src.mkdir()
    _write_nb(src / "a.ipynb", "A")
    _write_nb(src / "b.ipynb", "B")
    assert lab.copy_notebooks(src, work) == ["a.ipynb: copied", "b.ipynb: copied"]
    assert lab.copy_notebooks(src, work) == []  # nothing changed
    # a run: the copy gets outputs (the contents manager saves the cells' book source), the student edits b
    ran = json.loads((work / "a.ipynb").read_text())
    ran["cells"][1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "1\n"}]
    (work / "a.ipynb").write_text(json.dumps(ran))
    edited = json.loads((work / "b.ipynb").read_text())
    edited["cells"][1]["source"] = "x = 2"
    (work / "b.ipynb").write_text(json.dumps(edited))
    # the repository changes both: a is updated (only outputs were lost), b keeps the student's edit
    _write_nb(src / "a.ipynb", "A, new")
    _write_nb(src / "b.ipynb", "B, new")
    said = lab.copy_notebooks(src, work)
    assert said[0] == "a.ipynb: updated to the repository's version"
    assert said[1].startswith("b.ipynb: kept with your edits") and "delete" in said[1]
    assert json.loads((work / "a.ipynb").read_text())["cells"][0]["source"] == "A, new"
    assert json.loads((work / "b.ipynb").read_text())["cells"][1]["source"] == "x = 2"
    (work / "b.ipynb").unlink()  # how a student starts again
    assert lab.copy_notebooks(src, work) == ["b.ipynb: copied"]
    assert json.loads((src / "b.ipynb").read_text())["cells"][0]["source"] == "B, new"  # the sources untouched
    with pytest.raises(ValueError, match="must not be the notebooks' folder"):
        lab.copy_notebooks(src, src)


def test_an_html_page_opens_in_the_lab_with_the_images_beside_it(tmp_path):
    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "fig.png").write_bytes(b"\x89PNG fake")
    (tmp_path / "secret.png").write_bytes(b"\x89PNG outside")
    html = ('<p><img src="fig.png" width="3"> <img src="missing.png"> <img src="http://x/y.png"> '
            '<img src=\'../secret.png\'> <img src="data:image/png;base64,AAAA"></p>')
    out = lab.inline_images(html, tmp_path / "report", tmp_path / "report")
    assert '<img src="data:image/png;base64,iVBORyBmYWtl" width="3">' in out  # the page's own figure, inlined
    assert '"missing.png"' in out and '"http://x/y.png"' in out and "'../secret.png'" in out  # outside: untouched
    assert "'data:image/png;base64," in lab.inline_images(html, tmp_path / "report", tmp_path)  # inside the root


def test_the_working_folder_is_ignored_by_git():
    import shutil

    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(["git", "check-ignore", "-q", "lab-work/tutorial.ipynb"], cwd=REPO)
    assert out.returncode == 0, "lab-work/ must be in .gitignore"


# --------------------------------------------------------------------------------------------------
# the server
# --------------------------------------------------------------------------------------------------

#: JupyterLab settings of the tests: every cell rendered (not only those in view), so that the page's text is whole.
SETTINGS = {"@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"}}


def _server(tmp: Path, *extra: str):
    if not LAB_PYTHON.exists():
        pytest.skip("no .venv-lab: run `make lab-env` (CI builds it) to test `make lab`")
    venv = Path(sys.executable).parent.parent  # the environment running these tests: its kernel
    return browsing.LabServer(tmp, venv, extra=extra, settings=SETTINGS)


@pytest.mark.slow
def test_make_lab_starts_jupyterlab_with_the_project_kernel_on_copies(tmp_path):
    before = _git_status()
    server = _server(tmp_path)
    try:
        server.wait()
        status = server.api("status")
        assert "started" in status and "kernels" in status
        specs = server.api("kernelspecs")
        kernel = specs["kernelspecs"][specs["default"]]["spec"]
        assert kernel["display_name"] == "Python 3 (dpsynth)", kernel
        assert Path(kernel["argv"][0]).parent.parent.resolve() == server.venv_resolved(), kernel["argv"]
        names = {c["name"] for c in server.api("contents")["content"]}
        assert {"censoring.ipynb", "tutorial.ipynb"} <= names, names  # the lab opens on copies of the chapters
        assert (server.work / "tutorial.ipynb").read_bytes() == (REPO / "notebooks" / "tutorial.ipynb").read_bytes()
        # the contents manager: the censoring chapter's glued numbers reach the lab as MyST expressions
        nb = server.api("contents/censoring.ipynb")["content"]
        md = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
        assert "{glue:text}" not in md and 'book.glued("censoring-' in md
        # no news: JupyterLab is told never to fetch it, so it never asks (the pop-up of a first open)
        status, body = browsing.get(f"{server.base}/lab/api/settings/@jupyterlab/apputils-extension:notification"
                                    f"?token={server.token}")
        defaults = {k: v.get("default") for k, v in json.loads(body)["schema"]["properties"].items()}
        assert status == 200 and defaults["fetchNews"] == "false" and defaults["checkForUpdates"] is False, defaults
    finally:
        server.stop()
    assert "venv-peers" not in server.output()  # the lab does not build the peers' environment
    assert _git_status() == before


def _git_status() -> str:
    import shutil

    if shutil.which("git") is None or not (REPO / ".git").exists():
        return ""
    return subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True).stdout


# --------------------------------------------------------------------------------------------------
# the browser
# --------------------------------------------------------------------------------------------------

#: What the rendered notebook may not show: MyST source that was not rendered, a number not yet computed.
RAW_MYST = re.compile(r"\{(?:glue:text|glue:md|glue:figure|numref|doc|ref|eval)\}`|```\{|:::\{|Unknown Directive|"
                      r"Unknown Role|run the cells above|not shown yet")

#: Found in the page: the tutorial's figures (images in rendered Markdown outputs), tables, collapsed cells, toasts.
PROBE = r"""
(() => {
  const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  const out = {figures: [], tables: [], collapsed: 0, code_shown: 0, toasts: []};
  if (!nb) return out;
  for (const img of nb.querySelectorAll('.jp-OutputArea-output img')) {
    out.figures.push({src: img.getAttribute('src').slice(0, 22), natural: img.naturalWidth, shown: img.clientWidth});
  }
  for (const t of nb.querySelectorAll('.jp-OutputArea-output table')) {
    out.tables.push(Array.from(t.querySelectorAll('th')).map(th => th.innerText.trim()));
  }
  for (const c of nb.querySelectorAll('.jp-CodeCell')) {
    if (c.querySelector('.jp-InputPlaceholder')) out.collapsed += 1; else out.code_shown += 1;
  }
  out.toasts = Array.from(document.querySelectorAll('.Toastify__toast, .jp-Notification-Toast')).map(t => t.innerText);
  return out;
})()
"""

#: The report open in the lab's HTML viewer: its text and its images.
REPORT = r"""
(() => {
  const f = document.querySelector('.jp-HTMLViewer:not(.lm-mod-hidden) iframe');
  const d = f && f.contentDocument;
  if (!d || !d.body) return null;
  return {text: d.body.innerText, images: Array.from(d.images).map(i => i.naturalWidth)};
})()
"""


@pytest.fixture
def chromium_path():
    path = browsing.find_chromium()
    if path is None:
        pytest.skip("headless Chromium is not installed (Debian: apt-get install chromium; .ci/run installs it)")
    return path


@pytest.mark.slow
def test_a_student_runs_the_tutorial_cell_by_cell_and_opens_the_report(tmp_path, chromium_path):
    before = _git_status()
    server = _server(tmp_path, "--LabApp.expose_app_in_browser=True")
    browser, report_path, report, served = None, None, None, None
    try:
        server.wait()
        browser = browsing.DevTools(chromium_path, tmp_path / "profile")
        page = browsing.NotebookPage(browser, server, "tutorial.ipynb")
        browser.screenshot(tmp_path / "lab-opened.png")
        ran = page.run_cell_by_cell()
        (tmp_path / "cells.json").write_text(json.dumps(ran, indent=1), encoding="utf-8")
        found, text = browser.js(PROBE), page.text()
        (tmp_path / "lab-text.txt").write_text(text, encoding="utf-8")  # what the student saw, for a failure's report
        for what, selector in (("table", "table"), ("figure", "img")):
            browser.js(f"(() => {{ const e = [...document.querySelectorAll('.jp-OutputArea-output {selector}')]"
                       ".find(e => e.closest('.jp-Cell')); if (e) e.scrollIntoView(); return true; })()")
            time.sleep(1)
            browser.screenshot(tmp_path / f"lab-{what}.png")
        # the report: the path the tutorial prints, served by the lab and opened from its file browser
        m = re.search(r"report: (\S+/report\.html)", text)
        report_path = m and m.group(1)
        if report_path:
            served = server.files(report_path)
            folder = report_path.rsplit("/", 1)[0]
            browser.js(f"jupyterapp.commands.execute('filebrowser:go-to-path', {{path: '/{folder}/'}})"
                       ".then(() => true)")
            deadline = time.monotonic() + 60
            while report is None and time.monotonic() < deadline:
                browser.js("(() => { const i = [...document.querySelectorAll('.jp-DirListing-item')]"
                           ".find(i => i.innerText.includes('report.html')); if (i) i.dispatchEvent("
                           "new MouseEvent('dblclick', {bubbles: true})); return !!i; })()")
                time.sleep(2)
                report = browser.js(REPORT)
                if report and (not report["images"] or min(report["images"]) == 0):
                    report = None  # the viewer is open, its figures still loading
            browser.screenshot(tmp_path / "lab-report.png")
        page.save()
    finally:
        if browser is not None:
            browser.close()
        server.stop()
    assert "Error" not in text.replace("ECDF", ""), text[text.find("Error") - 500:text.find("Error") + 500]
    assert [r["index"] for r in ran] == list(range(len(ran))) and ran[-1]["section"] == "Environment"
    # no placeholder: every number of the text was computed above it, and evaluated when its cell ran
    assert not RAW_MYST.search(text), RAW_MYST.search(text).group(0)
    assert re.search(r"Δ = \d+\.\d\d on this data set", text), text[:3000]
    assert re.search(r"the odds grow at most \d\.\d\d times, so 50% becomes at most \d+%", text)
    assert re.search(r"the largest value, \d", text) and re.search(r"M = 0\.5, not ε/2", text)
    assert re.search(r"In Table 1\.2 the unweighted posterior", text)
    # figures: PNGs embedded by dpsynth_book.book.show_figure, shown wide enough to read, with their numbers
    figures = [f for f in found["figures"] if f["src"].startswith("data:image/png")]
    assert len(figures) >= 3 and all(f["natural"] > 300 and f["shown"] > 300 for f in figures), found["figures"]
    assert all(f"Fig. 1.{k}." in text for k in (1, 2, 3)) and all(f"Table 1.{k}." in text for k in (1, 2))
    assert any("max-ECDF" in head and "Δ" in head for head in found["tables"]), found["tables"]
    # the lab hides what the book hides (collapsed), and shows no pop-up
    assert found["collapsed"] >= 10 and found["code_shown"] <= 10, found
    assert not any("news" in t.lower() for t in found["toasts"]), found["toasts"]
    # the report: printed as the file browser shows it, served, and open in the lab
    assert report_path and report_path.startswith("tutorial-files/"), report_path
    assert served[0] == 200 and b"Release report" in served[1], served[0]
    assert report and "Release report" in report["text"] and len(report["images"]) >= 2, report
    # the run was saved into the lab's copy, never into notebooks/; the temporary home is gone with the kernel
    saved = json.loads((server.work / "tutorial.ipynb").read_text(encoding="utf-8"))
    assert sum(bool(c.get("outputs")) for c in saved["cells"] if c["cell_type"] == "code") >= 10
    assert _git_status() == before
    assert not list(server.tmpdir.glob("dpsynth-tutorial-*")), list(server.tmpdir.iterdir())

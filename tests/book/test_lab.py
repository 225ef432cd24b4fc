"""`make lab`: JupyterLab from .venv-lab on the chapters' notebooks, rendered as the book renders them.

* ``lab/dpsynth_lab.py``, the lab's contents manager: what jupyterlab-myst cannot render (glue roles,
  references to figures, tables, pages, sections, propositions and the bibliography) is rewritten
  when a notebook opens and restored when it is saved (unit tests, no server).
* The server: ``make lab`` starts headless on a free local port with a token; its API status, kernel
  specifications and contents are read.
* The browser: ``make lab`` again, and headless Chromium, driven over the DevTools protocol, opens
  the tutorial, runs it at quick scale (*Run All Cells*) and must show a figure, a table and a
  glued number, and no raw MyST (roles, directives, "Unknown Directive"). Screenshots go to the
  test's temporary folder.

The server tests need .venv-lab (`make lab-env`, which `.ci/run` builds) and the browser test
Chromium (Debian: `apt-get install chromium`); without them they are skipped with that reason.
"""

from __future__ import annotations

import base64
import importlib.util
import itertools
import json
import os
import re
import secrets
import signal
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


def _lab_module():
    spec = importlib.util.spec_from_file_location("dpsynth_lab", REPO / "lab" / "dpsynth_lab.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


lab = _lab_module()


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


def test_the_working_folder_is_ignored_by_git():
    import shutil

    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(["git", "check-ignore", "-q", "lab-work/tutorial.ipynb"], cwd=REPO)
    assert out.returncode == 0, "lab-work/ must be in .gitignore"


# --------------------------------------------------------------------------------------------------
# the server
# --------------------------------------------------------------------------------------------------


class Lab:
    """`make lab` on a free port with a token, its configuration and workspaces in ``tmp``."""

    def __init__(self, tmp: Path, *extra: str) -> None:
        if not LAB_PYTHON.exists():
            pytest.skip("no .venv-lab: run `make lab-env` (CI builds it) to test `make lab`")
        self.port, self.token = _free_port(), secrets.token_hex(16)
        self.venv = Path(sys.executable).parent.parent  # the environment running these tests: its kernel
        settings = tmp / "settings" / "@jupyterlab" / "notebook-extension"
        settings.mkdir(parents=True)
        # render every cell, not only those in view, so that the test reads the whole notebook
        (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}), encoding="utf-8")
        # and never save: the run's outputs must not be written into notebooks/ of the checkout
        docmanager = tmp / "settings" / "@jupyterlab" / "docmanager-extension"
        docmanager.mkdir(parents=True)
        (docmanager / "plugin.jupyterlab-settings").write_text(json.dumps({"autosave": False}), encoding="utf-8")
        env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp / "config"), "JUPYTER_RUNTIME_DIR": str(tmp / "rt"),
               "JUPYTERLAB_SETTINGS_DIR": str(tmp / "settings"), "JUPYTERLAB_WORKSPACES_DIR": str(tmp / "ws")}
        args = " ".join([f"--no-browser --ServerApp.ip=127.0.0.1 --ServerApp.port={self.port}",
                         f"--IdentityProvider.token={self.token}", *extra])
        self.proc = subprocess.Popen(["make", "-s", "lab", f"VENV={self.venv}", f"LAB_ARGS={args}"], cwd=REPO,
                                     env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)
        self.base = f"http://127.0.0.1:{self.port}"

    def wait(self) -> dict:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                return self.api("status")
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(1)
        out = self.proc.stdout.read() if self.proc.poll() is not None else "(still running)"
        pytest.fail(f"`make lab` did not answer on /api/status within 300 s:\n{out[-3000:]}")

    def api(self, path: str) -> dict:
        return _get(f"{self.base}/api/{path}?token={self.token}")

    def stop(self) -> None:
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)


@pytest.mark.slow
def test_make_lab_starts_jupyterlab_with_the_project_kernel(tmp_path):
    server = Lab(tmp_path)
    try:
        status = server.wait()
        assert "started" in status and "kernels" in status
        specs = server.api("kernelspecs")
        kernel = specs["kernelspecs"][specs["default"]]["spec"]
        assert kernel["display_name"] == "Python 3 (dpsynth)", kernel
        assert Path(kernel["argv"][0]).parent.parent.resolve() == server.venv.resolve(), kernel["argv"]
        names = {c["name"] for c in server.api("contents")["content"]}
        assert "censoring.ipynb" in names, names  # the lab opens on the chapters' notebooks
        # the contents manager: the censoring chapter's glued numbers reach the lab as MyST expressions
        nb = server.api("contents/censoring.ipynb")["content"]
        md = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
        assert "{glue:text}" not in md and 'book.glued("censoring-' in md
    finally:
        server.stop()


# --------------------------------------------------------------------------------------------------
# the browser
# --------------------------------------------------------------------------------------------------


class DevTools:
    """Headless Chromium driven over the DevTools protocol (a websocket; tornado's client)."""

    def __init__(self, chromium: str, profile: Path) -> None:
        from test_book import CHROMIUM_FLAGS  # the book test's flags: offline, headless, 1280 px
        from tornado.ioloop import IOLoop
        from tornado.websocket import websocket_connect

        flags = [f for f in CHROMIUM_FLAGS if not f.startswith(("--virtual-time-budget", "--enable-logging", "--v="))]
        self.proc = subprocess.Popen([chromium, *flags, f"--user-data-dir={profile}", "--remote-debugging-port=0",
                                      "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        port, deadline = None, time.monotonic() + 60
        while port is None and time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            m = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            port = int(m.group(1)) if m else None
            if not line and self.proc.poll() is not None:
                break
        assert port, "Chromium did not open its DevTools port"
        pages = _get(f"http://127.0.0.1:{port}/json/list")
        url = next(p["webSocketDebuggerUrl"] for p in pages if p["type"] == "page")
        self.loop = IOLoop()
        self.ws = self.loop.run_sync(lambda: websocket_connect(url, max_message_size=2**28))
        self.ids = itertools.count(1)

    def send(self, method: str, timeout: float = 60, **params):
        i = next(self.ids)

        async def call():
            await self.ws.write_message(json.dumps({"id": i, "method": method, "params": params}))
            while True:
                msg = await self.ws.read_message()
                if msg is None:
                    raise RuntimeError("Chromium closed the DevTools connection")
                reply = json.loads(msg)
                if reply.get("id") == i:
                    if "error" in reply:
                        raise RuntimeError(f"{method}: {reply['error']}")
                    return reply["result"]

        return self.loop.run_sync(call, timeout=timeout)

    def js(self, expression: str, timeout: float = 60):
        r = self.send("Runtime.evaluate", timeout=timeout, expression=expression, awaitPromise=True,
                      returnByValue=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression[:80]}: {r['exceptionDetails'].get('exception', r['exceptionDetails'])}")
        return r["result"].get("value")

    def screenshot(self, path: Path) -> None:
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"]))

    def close(self) -> None:
        self.ws.close()
        self.loop.close()
        self.proc.terminate()
        self.proc.wait(timeout=30)


#: What the rendered notebook may not show: MyST source that was not rendered.
RAW_MYST = re.compile(r"\{(?:glue:text|glue:md|glue:figure|numref|doc|ref|eval)\}`|```\{|:::\{|Unknown Directive|"
                      r"Unknown Role|run the cells above")

#: Found in the page: the tutorial's figures (images in rendered Markdown outputs), tables, and text.
PROBE = r"""
(() => {
  const nb = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
  const out = {figures: [], tables: [], text: nb ? nb.innerText : "", prompts: 0, busy: 0};
  if (!nb) return out;
  for (const img of nb.querySelectorAll('.jp-OutputArea-output img')) {
    out.figures.push({src: img.getAttribute('src').slice(0, 22), natural: img.naturalWidth, shown: img.clientWidth});
  }
  for (const t of nb.querySelectorAll('.jp-OutputArea-output table')) {
    out.tables.push(Array.from(t.querySelectorAll('th')).map(th => th.innerText.trim()));
  }
  const prompts = Array.from(nb.querySelectorAll('.jp-InputArea-prompt'));
  out.prompts = prompts.filter(p => /\[\d+\]/.test(p.innerText)).length;
  out.busy = prompts.filter(p => p.innerText.includes('*')).length;
  return out;
})()
"""


@pytest.fixture
def chromium_path():
    from test_book import _find_chromium

    path = _find_chromium()
    if path is None:
        pytest.skip("headless Chromium is not installed (Debian: apt-get install chromium; .ci/run installs it)")
    return path


@pytest.mark.slow
def test_the_lab_runs_the_tutorial_and_shows_figures_tables_and_glued_numbers(tmp_path, chromium_path):
    server = Lab(tmp_path, "--LabApp.expose_app_in_browser=True")
    browser = None
    try:
        server.wait()
        browser = DevTools(chromium_path, tmp_path / "profile")
        browser.send("Page.enable")
        browser.send("Page.navigate", url=f"{server.base}/lab/tree/tutorial.ipynb?reset&token={server.token}")
        deadline = time.monotonic() + 120
        while not browser.js("!!(window.jupyterapp && document.querySelector("
                             "'.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell'))"):
            assert time.monotonic() < deadline, "JupyterLab did not open the tutorial within 120 s"
            time.sleep(1)
        # wait for the kernel, then Run All Cells (the menu's command)
        kernel = ("(() => { const w = [...jupyterapp.shell.widgets('main')].find(w => w.sessionContext);"
                  " const k = w && w.sessionContext.session && w.sessionContext.session.kernel;"
                  " return k ? k.status : null; })()")
        while browser.js(kernel) != "idle":
            assert time.monotonic() < deadline, "the tutorial's kernel did not start within 120 s"
            time.sleep(1)
        browser.screenshot(tmp_path / "lab-opened.png")
        browser.js("jupyterapp.commands.execute('notebook:run-all-cells').then(() => true)", timeout=60)
        deadline, found = time.monotonic() + 600, None
        while time.monotonic() < deadline:
            time.sleep(3)
            found = browser.js(PROBE)
            if found["busy"] == 0 and found["prompts"] > 0 and browser.js(kernel) == "idle":
                time.sleep(3)  # the Markdown cells' expressions, evaluated after the last code cell
                found = browser.js(PROBE)
                break
        else:
            pytest.fail(f"the tutorial did not finish running in the lab within 600 s: {found and found['busy']} busy")
        browser.js("(() => { const t = [...document.querySelectorAll('.jp-OutputArea-output table')]"
                   ".find(t => t.innerText.includes('max-ECDF')); if (t) t.scrollIntoView(); })()")
        time.sleep(1)
        browser.screenshot(tmp_path / "lab-table.png")
        browser.js("(() => { const i = document.querySelector('.jp-OutputArea-output img');"
                   " if (i) i.scrollIntoView(); })()")
        time.sleep(1)
        browser.screenshot(tmp_path / "lab-figure.png")
    finally:
        if browser is not None:
            browser.close()
        server.stop()
    text = found["text"]
    (tmp_path / "lab-text.txt").write_text(text, encoding="utf-8")  # what the reader saw, for a failure's report
    assert "Error" not in text.replace("ECDF", ""), text[text.find("Error") - 500:text.find("Error") + 500]
    # figures: PNGs embedded by dpsynth_book.book.show_figure, shown wide enough to read, with their numbers
    figures = [f for f in found["figures"] if f["src"].startswith("data:image/png")]
    assert len(figures) >= 3 and all(f["natural"] > 300 and f["shown"] > 300 for f in figures), found["figures"]
    assert "Fig. 1.1." in text and "Fig. 1.3." in text
    # a table: the mechanisms' table rendered as an HTML table, with its number
    assert any("max-ECDF" in head and "Δ" in head for head in found["tables"]), found["tables"]
    assert "Table 1.2." in text
    # glued numbers in the prose, and the references to figures and tables resolved
    assert re.search(r"Δ = \d+\.\d\d on this data set", text), text[:3000]
    assert re.search(r"the odds grow at most \d\.\d\d times, so 50% becomes at most \d+%", text)
    assert re.search(r"In Table 1\.2 the unweighted posterior", text)
    assert not RAW_MYST.search(text), RAW_MYST.search(text).group(0)

"""`make lab` in headless Chromium, as a student uses it: the server, the browser, Shift+Enter cell by cell.

Shared by ``tests/book/test_lab.py`` (the browser test) and ``lab/measure_route.py`` (the times the
teaching page quotes), so that what is tested and what is measured is one and the same way of running
the tutorial.

* :class:`LabServer` starts ``make lab`` (``VENV=``, ``LAB_WORK=``, ``LAB_ARGS=``) on a free local port
  with a token, its JupyterLab settings, workspaces and temporary folder (``TMPDIR``) in a folder of
  its own, and stops it as a user does (the server's shutdown: each kernel is asked to end, so what it
  registered to run at exit runs).
* :class:`DevTools` drives headless Chromium over the DevTools protocol (a websocket; tornado's client).
* :class:`NotebookPage` opens a notebook in the lab, waits for its kernel, selects the first cell and
  presses Shift+Enter once per cell (real key events, as a student does), waiting after each press
  until the cell has run (a code cell: a new execution count and an idle kernel; a Markdown cell: its
  inline expressions evaluated) and timing it.

Runs in the project's environment (.venv: tornado); needs Chromium (Debian: ``apt-get install chromium``).
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: Headless Chromium, offline but for the local server, at the width a reader is assumed to have.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
                  "--window-size=1280,900"]


def find_chromium() -> str | None:
    """The Chromium program, or None."""
    if os.access("/usr/bin/chromium", os.X_OK):
        return "/usr/bin/chromium"
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str, timeout: float = 10) -> tuple[int, bytes]:
    """``(status, body)`` of a GET (an HTTP error's status too)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:  # noqa: S310 (a local URL)
            return r.status, r.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


class LabServer:
    """``make lab`` on a free port with a token; its settings, workspaces and ``TMPDIR`` in ``folder``.

    Parameters
    ----------
    folder : Path
        A folder of the caller's (settings, workspaces, runtime files, the kernels' temporary folder).
    venv : Path
        The project's environment (``make lab VENV=``): its kernel runs the notebooks.
    work : Path, optional
        The folder the lab serves (``make lab LAB_WORK=``); default ``folder / "lab-work"``.
    repo : Path
        The checkout whose ``make lab`` runs.
    extra : sequence of str
        More options for ``jupyter lab``.
    settings : dict, optional
        JupyterLab user settings ``{"<plugin id>": {...}}`` (e.g. the notebook's windowing mode).
    environ : dict, optional
        The environment ``make lab`` runs in (default: this process's), e.g. with an empty ``HOME``.
    """

    def __init__(self, folder: Path, venv: Path, *, work: Path | None = None, repo: Path = REPO, extra=(),
                 settings: dict | None = None, environ: dict | None = None) -> None:
        self.folder, self.repo, self.venv = Path(folder), Path(repo), Path(venv)
        self.work = Path(work) if work is not None else self.folder / "lab-work"
        self.tmpdir = self.folder / "tmpdir"
        self.tmpdir.mkdir(parents=True, exist_ok=True)
        self.port, self.token = free_port(), secrets.token_hex(16)
        for plugin, values in (settings or {}).items():
            package, name = plugin.rsplit(":", 1)
            d = self.folder / "settings" / package
            d.mkdir(parents=True, exist_ok=True)
            (d / f"{name}.jupyterlab-settings").write_text(json.dumps(values), encoding="utf-8")
        env = {**(os.environ if environ is None else environ), "JUPYTER_CONFIG_DIR": str(self.folder / "config"),
               "JUPYTER_RUNTIME_DIR": str(self.folder / "rt"), "JUPYTERLAB_SETTINGS_DIR": str(self.folder / "settings"),
               "JUPYTERLAB_WORKSPACES_DIR": str(self.folder / "ws"), "TMPDIR": str(self.tmpdir)}
        args = " ".join([f"--no-browser --ServerApp.ip=127.0.0.1 --ServerApp.port={self.port}",
                         f"--IdentityProvider.token={self.token}", *extra])
        self.log = open(self.folder / "make-lab.log", "w", encoding="utf-8")  # noqa: SIM115 (closed by stop)
        self.started = time.monotonic()
        self.proc = subprocess.Popen(["make", "-s", "lab", f"VENV={venv}", f"LAB_WORK={self.work}",
                                      f"LAB_ARGS={args}"], cwd=self.repo, env=env, stdout=self.log,
                                     stderr=subprocess.STDOUT, text=True, start_new_session=True)
        self.base = f"http://127.0.0.1:{self.port}"

    def venv_resolved(self) -> Path:
        return self.venv.resolve()

    def output(self) -> str:
        if not self.log.closed:
            self.log.flush()
        return (self.folder / "make-lab.log").read_text(encoding="utf-8", errors="replace")

    def wait(self, timeout: float = 300) -> float:
        """Seconds from the start of ``make lab`` until the server answers; RuntimeError if it does not."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                self.api("status")
                return time.monotonic() - self.started
            except (urllib.error.URLError, ConnectionError, TimeoutError, ValueError):
                time.sleep(0.5)
        raise RuntimeError(f"`make lab` did not answer on /api/status within {timeout:.0f} s:\n{self.output()[-3000:]}")

    def api(self, path: str) -> dict:
        status, body = get(f"{self.base}/api/{path}?token={self.token}")
        if status != 200:
            raise urllib.error.URLError(f"/api/{path}: {status}")
        return json.loads(body.decode())

    def files(self, path: str) -> tuple[int, bytes]:
        """The server's ``/files/<path>`` (what the lab's file browser opens), as ``(status, body)``."""
        return get(f"{self.base}/files/{urllib.request.quote(path)}?token={self.token}")

    def stop(self, timeout: float = 60) -> None:
        """Shut the server down as a user does (``/api/shutdown``: each kernel is asked to end), else kill it."""
        if self.proc.poll() is None:
            req = urllib.request.Request(f"{self.base}/api/shutdown?token={self.token}", method="POST")
            try:
                urllib.request.urlopen(req, timeout=10).close()  # noqa: S310 (a local URL)
                self.proc.wait(timeout=timeout)
            except (urllib.error.URLError, ConnectionError, TimeoutError, subprocess.TimeoutExpired):
                pass
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=30)
        self.log.close()


class DevTools:
    """Headless Chromium driven over the DevTools protocol (a websocket; tornado's client)."""

    def __init__(self, chromium: str, profile: Path) -> None:
        from tornado.ioloop import IOLoop
        from tornado.websocket import websocket_connect

        self.proc = subprocess.Popen([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}",
                                      "--remote-debugging-port=0", "about:blank"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        port, deadline = None, time.monotonic() + 60
        while port is None and time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            m = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            port = int(m.group(1)) if m else None
            if not line and self.proc.poll() is not None:
                break
        if not port:
            raise RuntimeError("Chromium did not open its DevTools port")
        pages = json.loads(get(f"http://127.0.0.1:{port}/json/list")[1])
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

    def key(self, key: str = "Enter", *, shift: bool = False, ctrl: bool = False) -> None:
        """Press and release a key as the keyboard does (``Enter`` with Shift: run the cell and select the next)."""
        codes = {"Enter": 13, "Escape": 27}
        mods = (8 if shift else 0) | (2 if ctrl else 0)
        base = {"key": key, "code": key, "windowsVirtualKeyCode": codes[key], "nativeVirtualKeyCode": codes[key],
                "modifiers": mods}
        self.send("Input.dispatchKeyEvent", type="rawKeyDown", **base)
        self.send("Input.dispatchKeyEvent", type="keyUp", **base)

    def screenshot(self, path: Path) -> None:
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", format="png")["data"]))

    def close(self) -> None:
        self.ws.close()
        self.loop.close()
        self.proc.terminate()
        self.proc.wait(timeout=30)


#: The notebook in the lab's main area, its kernel's status, and the state of cell ``i``.
_PANEL = "[...jupyterapp.shell.widgets('main')].find(w => w.sessionContext && w.content && w.content.widgets)"
_KERNEL = (f"(() => {{ const w = {_PANEL}; const k = w && w.sessionContext.session && w.sessionContext.session.kernel;"
           " return k ? k.status : null; })()")
_CELL = f"""
((i) => {{
  const w = {_PANEL}; const c = w.content.widgets[i];
  const prompt = c.node.querySelector('.jp-InputArea-prompt');
  const exprs = c.model.getMetadata ? (c.model.getMetadata('user_expressions') || []) : [];
  return {{type: c.model.type, count: c.model.type === 'code' ? c.model.executionCount : null,
          ran: (window.__dpsynthRan || {{}})[c.model.id] || 0,
          busy: !!(prompt && prompt.innerText.includes('*')), active: w.content.activeCellIndex,
          mode: w.content.mode, pending: exprs.filter(e => !e.result || e.result.status !== 'ok' ||
            JSON.stringify(e.result.data || {{}}).includes('\\u2026')).length, n: w.content.widgets.length,
          heading: c.model.type === 'markdown' ?
            ((c.model.sharedModel.getSource().match(/^##\\s+(.+)$/m) || [])[1] || null) : null}};
}})"""


class NotebookPage:
    """A notebook open in the lab, run cell by cell with Shift+Enter."""

    def __init__(self, browser: DevTools, server: LabServer, path: str, *, timeout: float = 300) -> None:
        self.browser, self.server, self.path = browser, server, path
        browser.send("Page.enable")
        browser.send("Page.navigate", url=f"{server.base}/lab/tree/{path}?reset&token={server.token}")
        deadline = time.monotonic() + timeout
        while not browser.js(f"!!(window.jupyterapp && {_PANEL} && document.querySelector("
                             "'.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell'))"):
            if time.monotonic() > deadline:
                raise RuntimeError(f"JupyterLab did not open {path} within {timeout:.0f} s")
            time.sleep(0.5)
        self.opened = time.monotonic()
        while self.kernel() != "idle":
            if time.monotonic() > deadline:
                raise RuntimeError(f"the kernel of {path} did not start within {timeout:.0f} s")
            time.sleep(0.5)
        self.kernel_ready = time.monotonic()

    def kernel(self):
        return self.browser.js(_KERNEL)

    def cell(self, i: int) -> dict:
        return self.browser.js(f"{_CELL}({i})")

    def count(self) -> int:
        return int(self.browser.js(f"{_PANEL}.content.widgets.length"))

    def select(self, i: int) -> None:
        """Select cell ``i`` in command mode with the keyboard's focus on the notebook (a click on its prompt)."""
        self.browser.js(f"(() => {{ const w = {_PANEL}; w.content.activeCellIndex = {i}; w.content.mode = 'command';"
                        " jupyterapp.shell.activateById(w.id); w.content.node.focus(); return true; })()")

    def _watch(self, i: int) -> None:
        """Count the executions of cell ``i`` that end with an execution count (a saved count may repeat)."""
        self.browser.js(f"""((i) => {{ const c = {_PANEL}.content.widgets[i]; const id = c.model.id;
          window.__dpsynthRan = window.__dpsynthRan || {{}}; window.__dpsynthRan[id] = 0;
          if (!c.__dpsynthWatch) {{ c.__dpsynthWatch = (m, a) => {{ if (a.name === 'executionCount' &&
            a.newValue !== null) window.__dpsynthRan[id] = (window.__dpsynthRan[id] || 0) + 1; }};
            c.model.stateChanged.connect(c.__dpsynthWatch); }}
          return true; }})({i})""")

    def _wait_ran(self, i: int, before: dict, timeout: float) -> dict:
        deadline, idle_since = time.monotonic() + timeout, None
        while True:
            now, state = time.monotonic(), self.cell(i)
            done = not state["busy"] and state["pending"] == 0
            if state["type"] == "code":
                done = done and state["count"] is not None and state["ran"] > 0
            if done and self.kernel() == "idle":
                idle_since = idle_since or now
                if now - idle_since >= 0.4:  # the kernel stays idle: a Markdown cell's expressions are in
                    return state
            else:
                idle_since = None
            if now > deadline:
                raise RuntimeError(f"cell {i} did not finish within {timeout:.0f} s: {state}")
            time.sleep(0.2)

    def run_cell_by_cell(self, start: int = 0, stop: int | None = None, timeout: float = 900,
                         on_cell=None) -> list[dict]:
        """Select cell ``start`` and press Shift+Enter once per cell up to ``stop`` (the last: Ctrl+Enter, which
        runs it without adding a cell). Returns, per cell, its index, type, section (the last ``##`` heading)
        and the seconds from the key press until it had run."""
        n = self.count()
        stop = n if stop is None else stop
        section = next((h for h in (self.cell(j)["heading"] for j in range(start - 1, -1, -1)) if h), None)
        self.select(start)
        out = []
        for i in range(start, stop):
            before = self.cell(i)
            if before["active"] != i:
                raise RuntimeError(f"Shift+Enter left cell {before['active']} selected, not {i}")
            section = before["heading"] or section
            if before["type"] == "code":
                self._watch(i)
            t0 = time.monotonic()
            self.browser.key("Enter", shift=i < n - 1, ctrl=i == n - 1)
            state = self._wait_ran(i, before, timeout)
            row = {"index": i, "type": state["type"], "section": section, "seconds": round(time.monotonic() - t0, 2)}
            out.append(row)
            if on_cell is not None:
                on_cell(row)
        return out

    def text(self) -> str:
        return self.browser.js("(() => { const n = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) "
                               ".jp-Notebook'); return n ? n.innerText : ''; })()")

    def save(self) -> None:
        """Save the notebook (as Ctrl+S does with it in front)."""
        self.browser.js(f"(async () => {{ const w = {_PANEL}; jupyterapp.shell.activateById(w.id);"
                        " await w.context.save(); return true; })()", timeout=60)

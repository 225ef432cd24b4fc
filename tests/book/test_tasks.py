"""dpsynth_book.tasks: the Makefile's lab, book and test targets without make (Windows, macOS, conda).

The pure parts are tested everywhere (paths of a Windows environment, the message for an
unsupported Python, the lab's environment and command line, that the script parses with Python
3.9's grammar so it can say what to install). The slow test runs the route as a student would, on
this (Linux) machine: ``python src/dpsynth_book/tasks.py lab`` in this environment (the conda route: the
running interpreter's environment is the kernel), building a fresh lab environment from
``lab/requirements-lab.lock`` in a temporary folder, then checks the lab's API, its kernel and its
contents manager, and stops it. Windows and macOS themselves are not available here.
"""

from __future__ import annotations

import ast
import json
import os
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

from dpsynth_book import tasks

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "src" / "dpsynth_book" / "tasks.py"


def test_the_script_parses_with_python_3_9_so_that_it_can_say_what_to_install():
    ast.parse(SCRIPT.read_text(encoding="utf-8"), feature_version=(3, 9))


def test_an_unsupported_python_is_refused_with_what_to_do():
    for version in ((3, 9, 6), (3, 10, 14), (3, 14, 0)):
        with pytest.raises(tasks.TaskError, match=r"needs Python 3\.11, 3\.12 or 3\.13") as exc:
            tasks.check_python(version)
        assert ".".join(map(str, version)) in str(exc.value) and "py -3.12" in str(exc.value)
    tasks.check_python((3, 12, 1))


def test_environment_paths_on_windows_and_elsewhere():
    v = Path("repo") / ".venv"
    assert tasks.venv_python(v, "Windows") == v / "Scripts" / "python.exe"
    assert tasks.venv_python(v, "Darwin") == v / "bin" / "python"
    assert tasks.venv_bin(v, "Linux") == v / "bin"


def test_the_lab_gets_the_environment_and_command_line_of_make_lab(tmp_path):
    env = tasks.lab_environment(tmp_path / "venv", "off", {"PATH": "/usr/bin", "PYTHONPATH": "/x"})
    assert env["DPSYNTH_LAB"] == "1" and env["DPSYNTH_RESULTS"] == "off"
    assert env["JUPYTER_PATH"] == str(tmp_path / "venv" / "share" / "jupyter")
    assert env["PYTHONPATH"] == os.pathsep.join([str(REPO / "lab"), "/x"])
    assert env["PATH"].startswith(str(tasks.venv_bin(tmp_path / "venv")) + os.pathsep)  # `dpsynth` in terminals
    cmd = tasks.lab_command(tmp_path / "lab", ["--no-browser"], as_root=True)
    assert cmd[1:3] == ["-m", "jupyterlab"]
    assert "--ServerApp.contents_manager_class=dpsynth_lab.LabContentsManager" in cmd
    assert f"--notebook-dir={REPO / 'lab-work'}" in cmd  # the students' copies, never notebooks/
    assert f"--LabApp.app_settings_dir={REPO / 'lab' / 'settings'}" in cmd  # no news pop-up
    assert cmd[-2:] == ["--allow-root", "--no-browser"]


def test_a_bad_task_is_refused_by_the_parser(capsys):
    with pytest.raises(SystemExit):
        tasks.main(["make-coffee"])
    assert "invalid choice" in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_the_lab_route_builds_its_environment_and_starts_the_lab(tmp_path):
    """`python src/dpsynth_book/tasks.py lab` from this environment (the conda route's shape)."""
    port, token = _free_port(), secrets.token_hex(16)
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "ws")}
    cmd = [sys.executable, str(SCRIPT), "lab", "--no-peers", "--lab-venv", str(tmp_path / "venv-lab"), "--",
           "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", f"--IdentityProvider.token={token}"]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    base = f"http://127.0.0.1:{port}/api"
    try:
        status, deadline = None, time.monotonic() + 600
        while status is None and time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"{base}/status?token={token}", timeout=5) as r:  # noqa: S310 (local)
                    status = json.loads(r.read())
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(2)
        if status is None:
            out = proc.stdout.read() if proc.poll() is not None else "(still running)"
            pytest.fail(f"the lab route did not answer within 600 s:\n{out[-4000:]}")
        assert (tmp_path / "venv-lab" / ".installed").exists()
        with urllib.request.urlopen(f"{base}/kernelspecs?token={token}", timeout=10) as r:  # noqa: S310
            specs = json.loads(r.read())
        kernel = specs["kernelspecs"][specs["default"]]["spec"]
        assert kernel["display_name"] == "Python 3 (dpsynth)"
        assert Path(kernel["argv"][0]).parent.parent.resolve() == Path(sys.prefix).resolve()
        with urllib.request.urlopen(f"{base}/contents/tutorial.ipynb?token={token}", timeout=10) as r:  # noqa: S310
            nb = json.loads(r.read())["content"]
        md = "\n".join(c["source"] for c in nb["cells"] if c["cell_type"] == "markdown")
        assert 'book.glued("tutorial-' in md and "{glue:text}" not in md  # the contents manager is on
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)

"""`make lab`: JupyterLab from .venv-lab on the chapters' notebooks, with the project's kernel.

The test starts it headless on a free local port with a token, reads the server's API status and
its kernel specifications, and stops it. It needs .venv-lab (`make lab-env`, which `.ci/run`
builds); without it the test is skipped with that reason.
"""

from __future__ import annotations

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

REPO = Path(__file__).resolve().parents[1]
LAB_PYTHON = REPO / ".venv-lab" / "bin" / "python"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as r:  # noqa: S310 (a local URL)
        return json.loads(r.read().decode())


@pytest.mark.slow
def test_make_lab_starts_jupyterlab_with_the_project_kernel(tmp_path):
    if not LAB_PYTHON.exists():
        pytest.skip("no .venv-lab: run `make lab-env` (CI builds it) to test `make lab`")
    port, token = _free_port(), secrets.token_hex(16)
    venv = Path(sys.executable).parent.parent  # the environment running these tests: its kernel
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt")}
    args = f"--no-browser --ServerApp.ip=127.0.0.1 --ServerApp.port={port} --IdentityProvider.token={token}"
    proc = subprocess.Popen(["make", "-s", "lab", f"VENV={venv}", f"LAB_ARGS={args}"], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        status, deadline = None, time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                status = _get(f"http://127.0.0.1:{port}/api/status?token={token}")
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                time.sleep(1)
        if status is None:
            out = proc.stdout.read() if proc.poll() is not None else "(still running)"
            pytest.fail(f"`make lab` did not answer on /api/status within 180 s:\n{out[-3000:]}")
        assert "started" in status and "kernels" in status
        specs = _get(f"http://127.0.0.1:{port}/api/kernelspecs?token={token}")
        kernel = specs["kernelspecs"][specs["default"]]["spec"]
        assert kernel["display_name"] == "Python 3 (dpsynth)", kernel
        assert Path(kernel["argv"][0]).parent.parent.resolve() == venv.resolve(), kernel["argv"]
        contents = _get(f"http://127.0.0.1:{port}/api/contents?token={token}")
        names = {c["name"] for c in contents["content"]}
        assert "censoring.ipynb" in names, names  # the lab opens on the chapters' notebooks
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)

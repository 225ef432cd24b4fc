"""The interpreter search .ci/find-python (used by the Makefile), on a fake PATH of stub interpreters.

Each stub is a shell script that prints what the real probe would (``<X.Y.Z> <executable>``) or
fails; the PATH holds only the stubs and the two tools the script needs (``ls``, ``sort``), so
the interpreters of this machine never answer.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / ".ci" / "find-python"
BASH = shutil.which("bash") or "/bin/bash"


def stub(folder: Path, name: str, version: str | None, message: str = "") -> Path:
    """An executable ``folder/name`` that reports Python ``version``, or fails (``version=None``)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    if version is None:
        body = f'echo "{message or "broken"}" >&2\nexit 127\n'
    else:
        body = f'printf "%s %s\\n" "{version}" "$0"\n'
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


@pytest.fixture
def env(tmp_path):
    """A PATH with stubs in ``bin/`` and only ``ls`` and ``sort`` besides; no pyenv."""
    tools = tmp_path / "tools"
    tools.mkdir()
    for tool in ("ls", "sort"):
        found = shutil.which(tool)
        assert found, f"{tool} is needed by .ci/find-python"
        (tools / tool).symlink_to(found)
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("PYENV", "SUPPORTED_PYTHONS", "MAKE", "MFLAGS"))}
    e["PATH"] = f"{bin_}:{tools}"
    return tmp_path, bin_, e


def find(e: dict, *names: str) -> str:
    out = subprocess.run([BASH, str(SCRIPT), *names], env=e, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


CANDIDATES = ("python3", "python3.13", "python3.12", "python3.11")


def test_script_is_executable():
    assert os.access(SCRIPT, os.X_OK)


def test_first_supported_candidate(env):
    _, bin_, e = env
    py = stub(bin_, "python3", "3.12.4")
    assert find(e, *CANDIDATES) == f"3.12.4 {py}"


def test_skips_unsupported_and_failing(env):
    _, bin_, e = env
    stub(bin_, "python3", "3.10.13")
    stub(bin_, "python3.13", None)
    py = stub(bin_, "python3.12", "3.12.1")
    assert find(e, *CANDIDATES) == f"3.12.1 {py}"


@pytest.mark.parametrize("version", ["3.11.0", "3.13.9"])
def test_both_ends_of_the_range(env, version):
    _, bin_, e = env
    py = stub(bin_, "python3", version)
    assert find(e, "python3") == f"{version} {py}"


def test_none_says_what_each_name_was(env):
    _, bin_, e = env
    stub(bin_, "python3", "3.10.13")
    stub(bin_, "python3.13", "3.14.0")
    stub(bin_, "python3.12", None)
    assert find(e, *CANDIDATES) == (
        "none python3 is Python 3.10.13; python3.13 is Python 3.14.0; python3.12 not found or does not run; "
        "python3.11 not found or does not run")


def test_not_confused_by_version_prefixes(env):
    # "3.1" is not "3.11", and "3.111" is not "3.11"
    _, bin_, e = env
    stub(bin_, "python3", "3.1.5")
    stub(bin_, "python3.13", "3.111.0")
    assert find(e, "python3", "python3.13") == "none python3 is Python 3.1.5; python3.13 is Python 3.111.0"


def test_a_path(env):
    tmp, _, e = env
    py = stub(tmp / "elsewhere", "python-custom", "3.13.1")
    old = stub(tmp / "elsewhere", "python2.7", "2.7.18")
    assert find(e, str(py)) == f"3.13.1 {py}"
    assert find(e, str(old)) == f"none {old} is Python 2.7.18"
    assert find(e, "/nonexistent") == "none /nonexistent not found or does not run"


def test_pyenv_shim_of_a_version_not_selected(env):
    tmp, _, e = env
    root = tmp / "pyenv"
    stub(root / "shims", "python3.13", None, "pyenv: python3.13: command not found")
    stub(root / "versions" / "3.13.0" / "bin", "python3.13", "3.13.0")
    e["PATH"] = f"{root / 'shims'}:{e['PATH']}"
    out = find(e, "python3.13")
    version, exe = out.split(" ", 1)
    assert version == "3.13.0"
    assert Path(exe).resolve() == (root / "versions" / "3.13.0" / "bin" / "python3.13").resolve()


def test_pyenv_newest_supported_version(env):
    # versions are tried newest first; an unsupported newer one is passed over
    tmp, _, e = env
    root = tmp / "pyenv"
    stub(root / "shims", "python3", None, "pyenv: python3: command not found")
    for v in ("3.9.18", "3.11.7", "3.12.1", "3.14.0"):
        stub(root / "versions" / v / "bin", "python3", v)
    e["PATH"] = f"{root / 'shims'}:{e['PATH']}"
    assert find(e, "python3").startswith("3.12.1 ")


def test_pyenv_root_from_the_environment(env):
    tmp, _, e = env
    root = tmp / "elsewhere-pyenv"
    stub(root / "versions" / "3.11.7" / "bin", "python3.11", "3.11.7")
    e["PYENV_ROOT"] = str(root)
    assert find(e, "python3.11").startswith("3.11.7 ")


def test_pyenv_only_unsupported_versions(env):
    tmp, _, e = env
    root = tmp / "pyenv"
    stub(root / "shims", "python3", None, "pyenv: python3: command not found")
    stub(root / "versions" / "3.9.18" / "bin", "python3", "3.9.18")
    e["PATH"] = f"{root / 'shims'}:{e['PATH']}"
    assert find(e, "python3") == "none python3 is Python 3.9.18"


def test_supported_versions_from_the_environment(env):
    _, bin_, e = env
    py = stub(bin_, "python3", "3.14.0")
    assert find(e, "python3").startswith("none ")
    e["SUPPORTED_PYTHONS"] = "3.13 3.14"
    assert find(e, "python3") == f"3.14.0 {py}"


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_makefile_uses_the_script(env):
    tmp, bin_, e = env
    py = stub(bin_, "python-stub", "3.12.4")
    e["PATH"] = f"{e['PATH']}:{os.environ['PATH']}"
    run = lambda *args: subprocess.run(["make", "-s", "-C", str(ROOT), "which-python", *args], env=e,
                                       capture_output=True, text=True, timeout=60)
    ok = run(f"PYTHON={py}")
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip() == f"Python 3.12.4 ({py}), environment .venv-3.12"
    bad = run(f"PYTHON={stub(bin_, 'python-old', '2.7.18')}")
    assert bad.returncode != 0
    assert "is Python 2.7.18" in bad.stderr and "dpsynth supports Python 3.11, 3.12, 3.13" in bad.stderr

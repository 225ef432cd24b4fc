"""``make`` without make: the Makefile's lab, book and test targets for Windows, macOS and Linux.

Windows has no ``make`` (and the Makefile needs bash); macOS's ``python3`` is often 3.9, which dpsynth
does not support. This script does what ``make venv``, ``make lab-env``, ``make peers``, ``make lab``,
``make notebooks``, ``make book`` and ``make test`` do, with the Python that runs it, from the same
locks, on any operating system. It uses the standard library only and parses with Python 3.9, so
that it runs (and says what to install) before anything is installed::

    python src/dpsynth_book/tasks.py lab              # from a fresh clone: builds .venv and .venv-lab, opens JupyterLab
    python -m dpsynth_book.tasks lab                   # the same once dpsynth is installed
    python -m dpsynth_book.tasks book                  # the book from the shipped results (--scale quick: recompute)
    python -m dpsynth_book.tasks test -- -k tutorial   # ruff, then pytest with these arguments

Run it with a supported Python (3.11, 3.12 or 3.13; ``py -3.12`` on Windows, a python.org or conda
Python on macOS). Environments: ``.venv`` (the project's, from ``requirements.lock``, with the
kernel "Python 3 (dpsynth)"), ``.venv-lab`` (JupyterLab and jupyterlab-myst, from
``lab/requirements-lab.lock``) and, only when asked (``peers``), ``.venv-peers`` (SmartNoise's MST and AIM,
for the whole-table chapter at quick scale; not built on Windows, where that chapter is read from the
shipped results): the lab does not need it. Each is rebuilt when its lock changes; ``uv`` (pinned as in
the Makefile) installs the exact versions. Like ``make lab``, ``lab`` serves ``lab-work/`` (copies of
``notebooks/``, git-ignored; ``lab/dpsynth_lab.py copy``), so a class leaves the checkout clean.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

SUPPORTED = ((3, 11), (3, 12), (3, 13))
#: The uv that resolved the locks (the Makefile's UV_VERSION).
UV_VERSION = "0.13.9"
REPO = Path(__file__).resolve().parents[2]
#: The folder the lab serves: copies of notebooks/ (the Makefile's LAB_WORK).
LAB_WORK = REPO / "lab-work"
LAB_ENV_VARS = ("DPSYNTH_LAB", "DPSYNTH_RESULTS", "JUPYTER_PATH", "PYTHONPATH", "PATH")

__all__ = ["SUPPORTED", "UV_VERSION", "check_python", "venv_python", "venv_bin", "lab_environment", "lab_command",
           "main"]


class TaskError(RuntimeError):
    """A task cannot run; the message says why and what to do."""


def check_python(version: tuple = tuple(sys.version_info[:3])) -> None:
    """Raise :class:`TaskError` unless ``version`` is a supported Python (3.11, 3.12 or 3.13)."""
    if tuple(version[:2]) not in SUPPORTED:
        shown = ".".join(str(v) for v in version)
        raise TaskError(
            f"this is Python {shown}; dpsynth needs Python 3.11, 3.12 or 3.13. Install one (python.org, "
            f"`brew install python@3.12`, `conda env create -f environment.yml`, or on Windows `winget install "
            f"Python.Python.3.12`) and run this script with it, e.g. `python3.12 src/dpsynth_book/tasks.py lab` "
            f"(Windows: `py -3.12 src\\dpsynth_book\\tasks.py lab`).")


def venv_bin(venv: Path, system: str | None = None) -> Path:
    """The folder of a virtual environment's programs: ``Scripts`` on Windows, ``bin`` elsewhere."""
    return venv / ("Scripts" if (system or platform.system()) == "Windows" else "bin")


def venv_python(venv: Path, system: str | None = None) -> Path:
    """A virtual environment's interpreter."""
    return venv_bin(venv, system) / ("python.exe" if (system or platform.system()) == "Windows" else "python")


def _run(cmd, **kw) -> None:
    print("+", " ".join(str(c) for c in cmd), flush=True)
    proc = subprocess.run([str(c) for c in cmd], **kw)
    if proc.returncode != 0:
        raise TaskError(f"command failed with exit status {proc.returncode}: {' '.join(str(c) for c in cmd)}")


def _digest(*paths: Path) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.read_bytes())
    return h.hexdigest()


def _ensure_venv(venv: Path, lock: Path, *, editable: bool = False, kernel: bool = False) -> Path:
    """Create ``venv`` with this interpreter (if needed) and install ``lock`` exactly, once per lock."""
    stamp = venv / ".installed"
    inputs = [lock] + ([REPO / "pyproject.toml"] if editable else [])
    want = f"python {platform.python_version()} {sys.executable}\nlock {_digest(*inputs)}\n"
    py = venv_python(venv)
    if py.exists() and stamp.exists() and stamp.read_text(encoding="utf-8") == want:
        return py
    if py.exists():
        probe = subprocess.run([str(py), "-c", "import platform; print(platform.python_version())"],
                               capture_output=True, text=True)
        if probe.stdout.strip() != platform.python_version():
            print(f"{venv} was built by another Python; rebuilding it with Python {platform.python_version()}")
            shutil.rmtree(venv)
    if not py.exists():
        _run([sys.executable, "-m", "venv", venv])
    _run([py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", f"uv=={UV_VERSION}"])
    uv = venv_bin(venv) / ("uv.exe" if platform.system() == "Windows" else "uv")
    _run([uv, "pip", "sync", "--compile-bytecode", "--python", py, lock])
    if editable:
        _run([uv, "pip", "install", "--python", py, "--no-deps", "-e", REPO])
    if kernel:
        _run([py, "-m", "ipykernel", "install", "--sys-prefix", "--name", "python3", "--display-name",
              "Python 3 (dpsynth)"])
    stamp.write_text(want, encoding="utf-8")
    return py


def ensure_project(venv: Path) -> Path:
    """``make venv``: the project's environment from requirements.lock, dpsynth editable, its kernel."""
    return _ensure_venv(venv, REPO / "requirements.lock", editable=True, kernel=True)


def current_environment() -> Path | None:
    """This interpreter's environment if it is one with this checkout's dpsynth installed (a conda
    environment from ``environment.yml``, or ``.venv`` itself), else ``None``."""
    import importlib.util

    in_env = sys.prefix != getattr(sys, "base_prefix", sys.prefix) or bool(os.environ.get("CONDA_PREFIX"))
    spec = importlib.util.find_spec("dpsynth")
    library = Path(__file__).parent.parent / "dpsynth"  # the library beside this package, in this checkout
    here = spec is not None and spec.origin is not None and Path(spec.origin).resolve().parent == library
    return Path(sys.prefix) if in_env and here else None


def ensure_lab(venv: Path) -> Path:
    """``make lab-env``: JupyterLab and jupyterlab-myst from lab/requirements-lab.lock."""
    return _ensure_venv(venv, REPO / "lab" / "requirements-lab.lock")


def ensure_peers(venv: Path) -> Path | None:
    """``make peers`` (SmartNoise's MST and AIM); None on Windows, where the whole-table study is read."""
    if platform.system() == "Windows":
        print("The peers (SmartNoise's MST and AIM) are not built on Windows: open the chapter 'Releasing a whole "
              "table' on the shipped results (scale set to \"paper\" in its parameters cell, the lab started with "
              "DPSYNTH_RESULTS=use).")
        return None
    return _ensure_venv(venv, REPO / "peers" / "requirements-peers.lock")


def lab_environment(project: Path, results: str = "off", environ: dict | None = None) -> dict:
    """The environment ``make lab`` gives the lab server (and so its kernels and terminals).

    ``JUPYTER_PATH`` puts the project's kernel first; ``DPSYNTH_LAB=1`` makes :mod:`dpsynth_book.book` show
    figures and tables for JupyterLab; ``lab/`` on ``PYTHONPATH`` holds the contents manager
    (``lab/dpsynth_lab.py``); the project's programs (``dpsynth``) come first on ``PATH``.
    """
    env = dict(os.environ if environ is None else environ)
    sep = os.pathsep
    env["JUPYTER_PATH"] = str(project / "share" / "jupyter")
    env["DPSYNTH_RESULTS"] = results
    env["DPSYNTH_LAB"] = "1"
    env["PYTHONPATH"] = str(REPO / "lab") + (sep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PATH"] = str(venv_bin(project)) + (sep + env["PATH"] if env.get("PATH") else "")
    return env


def lab_command(lab: Path, extra: list | None = None, *, as_root: bool = False, work: Path = LAB_WORK) -> list:
    """The ``jupyter lab`` command line of ``make lab`` (serving ``work``, the copies of the notebooks)."""
    cmd = [str(venv_python(lab)), "-m", "jupyterlab", f"--notebook-dir={work}",
           "--ServerApp.contents_manager_class=dpsynth_lab.LabContentsManager",
           f"--LabApp.app_settings_dir={REPO / 'lab' / 'settings'}", "--LabApp.news_url=None",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if as_root:
        cmd.append("--allow-root")
    return cmd + list(extra or [])


def _toc_chapters() -> list[str]:
    import re

    text = (REPO / "_toc.yml").read_text(encoding="utf-8")
    names = re.findall(r"^[^#\n]*(?:root|file):\s*book/([A-Za-z0-9_.-]+)", text, flags=re.M)
    return [n for n in names if (REPO / "notebooks" / f"{n}.ipynb").exists()]


def task_notebooks(py: Path, scale: str, results: str) -> None:
    """``make notebooks``: papermill each chapter of the toc into book/."""
    (REPO / "book").mkdir(exist_ok=True)
    env = dict(os.environ, DPSYNTH_RESULTS=results)
    for name in _toc_chapters():
        _run([py, "-m", "papermill", REPO / "notebooks" / f"{name}.ipynb", REPO / "book" / f"{name}.ipynb",
              "-p", "scale", scale, "--kernel", "python3", "--no-progress-bar"], env=env, cwd=REPO)


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dpsynth_book.tasks", description=__doc__.split("\n\n")[0],
                                     epilog="Arguments after -- go to jupyter lab (lab) or pytest (test).")
    parser.add_argument("task", choices=["venv", "lab-env", "peers", "lab", "notebooks", "book", "test"])
    parser.add_argument("--venv", type=Path, default=None,
                        help="the project's environment (default: this interpreter's environment if dpsynth is "
                             "installed in it from this checkout, as in the conda route; else .venv)")
    parser.add_argument("--lab-venv", type=Path, default=REPO / ".venv-lab", help="the lab's environment (.venv-lab)")
    parser.add_argument("--no-peers", action="store_true", help=argparse.SUPPRESS)  # the lab no longer builds them
    parser.add_argument("--scale", default="paper", choices=["paper", "quick"], help="book, notebooks: the scale")
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    argv, extra = argv[:cut], argv[cut + 1:]  # after --: arguments for jupyter lab (lab) or pytest (test)
    args = parser.parse_args(argv)
    try:
        check_python()
        here = current_environment() if args.venv is None else None
        if here is not None:  # e.g. conda env create -f environment.yml: the kernel is this environment's
            project, py = here, Path(sys.executable)
            _run([py, "-m", "ipykernel", "install", "--sys-prefix", "--name", "python3", "--display-name",
                  "Python 3 (dpsynth)"])
        else:
            project = (args.venv or REPO / ".venv").resolve()
            py = ensure_project(project)
        if args.task == "venv":
            return 0
        if args.task == "lab-env":
            ensure_lab(args.lab_venv.resolve())
            return 0
        if args.task == "peers":
            ensure_peers(REPO / ".venv-peers")
            return 0
        if args.task == "lab":
            lab = ensure_lab(args.lab_venv.resolve())
            _run([py, "-m", "compileall", "-q", REPO / "src"])  # every kernel would compile them again
            _run([lab, REPO / "lab" / "dpsynth_lab.py", "copy", REPO / "notebooks", LAB_WORK])
            results = os.environ.get("DPSYNTH_RESULTS", "off")
            root = hasattr(os, "geteuid") and os.geteuid() == 0
            print(f"JupyterLab on lab-work/ (copies of notebooks/) with the kernel 'Python 3 (dpsynth)' of {project}; "
                  f"DPSYNTH_RESULTS={results} (quick scale by default)", flush=True)
            cmd = lab_command(lab.parent.parent, extra, as_root=root)
            return subprocess.call(cmd, env=lab_environment(project, results), cwd=LAB_WORK)
        results = "use" if args.scale == "paper" else "off"
        if args.task in ("notebooks", "book"):
            task_notebooks(py, args.scale, results)
            if args.task == "book":
                _run([py, "-c", "from jupyter_book.cli.main import main; main()", "build", REPO, "--warningiserror",
                      "--keep-going"], cwd=REPO)
                print(f"Book built: {REPO / '_build' / 'html' / 'index.html'}")
            return 0
        if args.task == "test":
            _run([py, "-m", "ruff", "check", "src", "tests", "benchmarks", "peers"], cwd=REPO)
            return subprocess.call([str(py), "-m", "pytest", *extra], cwd=REPO)
    except TaskError as exc:
        print(f"dpsynth_book.tasks {args.task}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

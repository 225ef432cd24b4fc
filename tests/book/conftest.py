"""Fixtures of the compendium's tests (``tests/book``): the chapters' notebooks, executed once per session.

The fixtures of both folders (compiled models, the xdist scheduling) are in ``tests/conftest.py``; the
study replicate functions that :func:`dpsynth_book.studies.run_study` ships to other processes are in
``study_replicates.py`` (importable by name), and the small MCMC settings in ``tests/fit_helpers.py``.
"""

from __future__ import annotations

import os

import pytest

# --------------------------------------------------------------------------------------------
# chapter notebooks executed once per session at smoke scale (smoke test and book test share them)
# --------------------------------------------------------------------------------------------


#: chapters whose notebooks run Monte Carlo studies (and take a ``workers`` parameter)
STUDY_CHAPTERS = ("censoring", "reweighting", "range_restriction", "sdr_application")


class SmokeNotebooks:
    """Executes ``notebooks/<name>.ipynb`` at ``scale="smoke"`` on first request, once per test run.

    Under pytest-xdist every worker has its own session, so the executed notebooks live in a folder
    shared by the workers, and a file lock per chapter makes the first worker that asks execute it
    while the others wait and read the executed file (or the failure it left behind).
    """

    def __init__(self, folder):
        self.folder = folder
        self.cache_dir = folder / "cache"
        self._done: dict = {}

    def _execute(self, name: str):
        from notebook_runner import run_notebook

        failed = self.folder / f"{name}.failed"
        done = self.folder / f"{name}.done"
        if failed.exists():
            raise RuntimeError(f"the smoke run of {name} failed in another test worker:\n{failed.read_text()}")
        path = self.folder / f"{name}.ipynb"
        if done.exists():
            from notebook_runner import read_executed

            return read_executed(path), path
        try:
            # one process per worker: the test session already keeps both cores busy
            extra = {"workers": 1} if name in STUDY_CHAPTERS else {}
            nb = run_notebook(name, self.folder, scale="smoke", cache_dir=str(self.cache_dir), **extra)
        except BaseException as err:
            import traceback

            failed.write_text("".join(traceback.format_exception(err))[-20000:])
            raise
        done.touch()
        return nb, path

    def get(self, name: str):
        """``(ExecutedNotebook, path of the executed .ipynb)``; re-raises a failure every time."""
        from filelock import FileLock

        if name not in self._done:
            try:
                with FileLock(str(self.folder / f"{name}.lock")):
                    self._done[name] = self._execute(name)
            except BaseException as err:  # noqa: BLE001 - remembered and re-raised for every caller
                self._done[name] = err
        out = self._done[name]
        if isinstance(out, BaseException):
            raise out
        return out


@pytest.fixture(scope="session")
def smoke_notebooks(tmp_path_factory) -> SmokeNotebooks:
    if not os.environ.get("PYTEST_XDIST_WORKER"):  # no xdist: this session's own folder
        return SmokeNotebooks(tmp_path_factory.mktemp("smoke-notebooks"))
    # under xdist the base temp folder is per worker; its parent is shared by the run's workers
    shared = tmp_path_factory.getbasetemp().parent / "smoke-notebooks"
    shared.mkdir(exist_ok=True)
    return SmokeNotebooks(shared)

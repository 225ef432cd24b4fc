"""The suite's pytest-xdist scheduling (``tests/xdist_scheduling.py``): a module's fixtures are made once.

A real two-worker pytest-xdist run of a small suite written here: a module whose module-scoped
fixture records every time it is made, small modules, and a module whose tests are shared out one by
one (collected first, so its first two tests go one to each worker). Under ``--dist loadgroup`` with
``xdist_group`` marks, pytest 9.2 and xdist 3.8 made that fixture on both workers
(pytest-dev/pytest-xdist#1386).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from xdist_scheduling import work_unit

TESTS = Path(__file__).resolve().parent

CONFTEST = f'''
import sys
sys.path.insert(0, {str(TESTS)!r})
import pytest

@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    from xdist_scheduling import module_scheduler
    return module_scheduler(config, log, ("test_a_split.py",))
'''

SHARED = '''
import os, time, pytest

@pytest.fixture(scope="module")
def made():
    with open(os.environ["MADE_LOG"], "a") as f:
        f.write(os.environ.get("PYTEST_XDIST_WORKER", "main") + "\\n")
    return 1

''' + "".join(f"def test_{i}(made):\n    time.sleep(0.05)\n\n" for i in range(8))


def test_a_test_belongs_to_its_module_unless_its_module_is_split():
    split = ("test_shipped.py",)
    assert work_unit("tests/book/test_book.py::test_index", split) == "tests/book/test_book.py"
    assert work_unit("tests/book/test_book.py::Test::test_x[a::b]", split) == "tests/book/test_book.py"
    assert work_unit("tests/book/test_shipped.py::test_current[own_data]", split) == \
        "tests/book/test_shipped.py::test_current[own_data]"
    # a chapter's tests of the modules that read its smoke-executed notebook are one unit, across them
    split, chapters = ("test_notebooks.py", "test_page_check.py"), ("test_notebooks.py", "test_page_check.py")
    units = {work_unit(n, split, chapters) for n in ("tests/book/test_notebooks.py::test_runs[own_data]",
                                                     "tests/book/test_notebooks.py::test_glued[own_data]",
                                                     "tests/book/test_page_check.py::test_held[own_data]")}
    assert units == {"chapter own_data"}
    assert work_unit("tests/book/test_notebooks.py::test_runs[censoring]", split, chapters) == "chapter censoring"
    plain = "tests/book/test_page_check.py::test_plain"
    assert work_unit(plain, split, chapters) == plain


def test_a_module_s_fixture_is_made_once_under_two_workers(tmp_path):
    pytest.importorskip("xdist")
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    (suite / "test_shared.py").write_text(SHARED, encoding="utf-8")
    # collected first: its first two tests go one to each worker
    (suite / "test_a_split.py").write_text(
        "import time, pytest\n\n@pytest.mark.parametrize('i', range(6))\ndef test_s(i):\n    time.sleep(0.1)\n",
        encoding="utf-8")
    for m in range(3):
        (suite / f"test_small{m}.py").write_text("def test_x():\n    pass\n\ndef test_y():\n    pass\n",
                                                  encoding="utf-8")
    log = tmp_path / "made.log"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "-p", "no:cacheprovider", "-v", str(suite)],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "MADE_LOG": str(log)},
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "20 passed" in proc.stdout
    made = log.read_text().split()
    assert len(made) == 1, f"the module fixture was made {len(made)} times, on {made}"
    # the split module's tests are units of their own: the first two went one to each worker
    workers = {line.split("]")[0].strip("[") for line in proc.stdout.splitlines()
               if "test_a_split.py::test_s" in line and line.startswith("[gw") and "PASSED" in line}
    assert workers == {"gw0", "gw1"}, proc.stdout[-3000:]

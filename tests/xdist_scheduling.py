"""How ``make test`` shares the suite between pytest-xdist workers: whole modules, in collection order.

A test module runs whole on one worker, so that its module-scoped fixtures (the book build, the page
measurements in Chromium, the module-scoped fits) are made once; the modules of independent slow tests
(``SPLIT_MODULES`` in ``tests/conftest.py``) are shared out test by test. The units are handed out in
the order of the collection, which ``tests/conftest.py`` sorts longest modules first.

This is pytest-xdist's ``loadscope`` scheduling with that unit and without its reordering by size
(which would leave the long single tests for last). It replaces ``--dist loadgroup`` with
``xdist_group`` marks, which pytest 9.2 silently ignores: xdist 3.8 groups by rewriting a test's node
id, which pytest 9.2 no longer reads (pytest-dev/pytest-xdist#1386), so every test went to whichever
worker was free and a module's fixtures were made on both workers (the book was built twice).
"""

from __future__ import annotations

from collections.abc import Iterable

#: The ``--dist`` modes this scheduling replaces (``load`` is the default of ``-n``); others are left to xdist.
REPLACED_MODES = ("load", "loadscope", "loadgroup")


def work_unit(nodeid: str, split_modules: Iterable[str]) -> str:
    """The unit a test belongs to: its module's path, or the test itself in a module of ``split_modules``."""
    module = nodeid.split("::", 1)[0]
    return nodeid if module.rsplit("/", 1)[-1] in tuple(split_modules) else module


def module_scheduler(config, log, split_modules: Iterable[str]):
    """A scheduler for ``pytest_xdist_make_scheduler``, or None (xdist's own) for another ``--dist`` mode."""
    if config.getvalue("dist") not in REPLACED_MODES:
        return None
    from xdist.scheduler import LoadScopeScheduling

    split = tuple(split_modules)

    class ModuleScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid, split)

    config.option.loadscopereorder = False
    return ModuleScheduling(config, log)

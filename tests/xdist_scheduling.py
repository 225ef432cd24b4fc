"""How ``make test`` shares the suite between pytest-xdist workers: whole modules, in collection order.

A test module runs whole on one worker, so that its module-scoped fixtures (the book build, the page
measurements in Chromium, the module-scoped fits) are made once; the modules of independent slow tests
(``SPLIT_MODULES`` in ``tests/conftest.py``) are shared out test by test, except that the tests of
one chapter's smoke-executed notebook (``BY_CHAPTER``) run together on the worker that executes it.
The units are handed out in the order of the collection, which ``tests/conftest.py`` sorts longest
modules first.

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


def work_unit(nodeid: str, split_modules: Iterable[str], by_chapter: Iterable[str] = ()) -> str:
    """The unit a test belongs to.

    Parameters
    ----------
    nodeid : str
        The test's pytest node id.
    split_modules : iterable of str
        Modules (file names) whose tests are units of their own.
    by_chapter : iterable of str
        Modules whose tests are parametrised by a chapter and read its smoke-executed notebook: their
        tests of one chapter, across these modules, are one unit (``"chapter <name>"``), so the worker
        that executes the notebook runs the chapter's other tests on it, instead of the other worker
        waiting for it behind the notebook's file lock. Their unparametrised tests are units of their own.

    Returns
    -------
    str
        The module's path, the node id, or ``"chapter <name>"``.
    """
    module = nodeid.split("::", 1)[0]
    name = module.rsplit("/", 1)[-1]
    if name in tuple(by_chapter):
        test = nodeid.split("::", 1)[-1]
        return f"chapter {test[test.index('[') + 1:-1]}" if test.endswith("]") and "[" in test else nodeid
    return nodeid if name in tuple(split_modules) else module


def module_scheduler(config, log, split_modules: Iterable[str], by_chapter: Iterable[str] = ()):
    """A scheduler for ``pytest_xdist_make_scheduler`` (units of :func:`work_unit`), or None for another ``--dist``.

    With ``--dist`` other than ``load`` (the default of ``-n``), ``loadscope`` or ``loadgroup``, xdist's own.
    """
    if config.getvalue("dist") not in REPLACED_MODES:
        return None
    from xdist.scheduler import LoadScopeScheduling

    split, chapters = tuple(split_modules), tuple(by_chapter)

    class ModuleScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid, split, chapters)

    config.option.loadscopereorder = False
    return ModuleScheduling(config, log)

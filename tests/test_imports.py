"""The library stands alone: no import cycle in ``src/dpsynth``, and nothing of it imports or names the compendium.

The import graph is read with ``ast`` (:mod:`import_graph`: written imports, lazy ones included).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from import_graph import SRC, find_cycle, import_graph


def test_dpsynth_has_no_import_cycle():
    graph = import_graph(SRC, "dpsynth")
    assert "dpsynth.release.protocol" in graph and "dpsynth.synthesizer" in graph
    assert "dpsynth.release.ledger" in graph["dpsynth.release.protocol"]  # relative imports resolved
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle in src/dpsynth: " + " -> ".join(cycle)


def test_the_checker_finds_a_cycle_through_lazy_and_relative_imports(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("VERSION = '1'\n")
    (pkg / "a.py").write_text("from . import VERSION\nfrom .sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("def f():\n    from ..c import g\n    return g\n")
    (pkg / "c.py").write_text("import os\n")
    graph = import_graph(tmp_path, "pkg")
    # a name from a package is an edge to its __init__; a submodule is an edge to the submodule;
    # no edge to a parent package that the import machinery runs
    assert graph == {"pkg": set(), "pkg.a": {"pkg", "pkg.sub.b"}, "pkg.c": set(), "pkg.sub": set(),
                     "pkg.sub.b": {"pkg.c"}}
    assert find_cycle(graph) is None
    # a lazy import inside a function closes the cycle a -> sub.b -> c -> a
    (pkg / "c.py").write_text("def h():\n    import pkg.a\n")
    assert find_cycle(import_graph(tmp_path, "pkg")) == ["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]
    # so does the package __init__ importing a module that imports a name from it
    (pkg / "c.py").write_text("import os\n")
    (pkg / "__init__.py").write_text("VERSION = '1'\n\ndef __getattr__(name):\n    from . import a\n")
    assert find_cycle(import_graph(tmp_path, "pkg")) == ["pkg", "pkg.a", "pkg"]
    assert find_cycle({"x": {"y"}, "y": {"x"}}) == ["x", "y", "x"]


def test_importing_every_module_of_the_library_leaves_the_book_out():
    """``import dpsynth`` and every submodule (pkgutil.walk_packages), in a fresh interpreter: ``dpsynth_book`` is
    never imported."""
    code = textwrap.dedent(
        """
        import importlib, pkgutil, sys
        import dpsynth
        names = [m.name for m in pkgutil.walk_packages(dpsynth.__path__, "dpsynth.") if m.name != "dpsynth.__main__"]
        for name in names:
            importlib.import_module(name)
        from dpsynth import Synthesizer, TableSynthesizer, weighted_loglik  # the lazy attributes too
        import dpsynth.release
        for name in dpsynth.release.__all__:
            getattr(dpsynth.release, name)
        book = sorted(m for m in sys.modules if m == "dpsynth_book" or m.startswith("dpsynth_book."))
        print(len(names), "modules;", "book:", book)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    count, rest = out.stdout.split(" modules;")
    assert int(count) > 60 and rest.strip() == "book: []", out.stdout


def test_no_file_of_the_library_names_the_book():
    """No file under ``src/dpsynth`` (source, docstrings, data) contains ``dpsynth_book``: the library does not
    know it."""
    library = SRC / "dpsynth"
    files = [p for p in library.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    assert len([p for p in files if p.suffix == ".py"]) > 60
    naming = [str(p.relative_to(SRC)) for p in files if b"dpsynth_book" in p.read_bytes()]
    assert not naming, naming

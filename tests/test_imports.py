"""No import cycle: every written import of ``src/dpsynth`` and ``src/dpsynth_book``, read with ``ast``.

Every ``import`` and ``from ... import`` statement counts, at the top of a module or inside a
function (a lazy import hides a cycle, it does not remove it). Relative imports are resolved;
``from . import x`` where ``x`` is a submodule is an edge to that submodule, and an import of a
name from a package is an edge to the package's ``__init__``. Only written imports are edges:
that importing ``a.b.c`` first runs ``a`` and ``a.b`` is Python's doing, not a dependency of the
module. Imports under ``if TYPE_CHECKING:`` are for type checkers only and never run, so they are
not edges. Dynamic imports (``importlib.import_module``) are not seen.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def module_names(root: Path, package: str) -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package ``__init__``) of every module of ``package`` under ``root``."""
    out = {}
    for f in sorted((root / package).rglob("*.py")):
        parts = list(f.relative_to(root).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        out[".".join(parts)] = (f, is_pkg)
    return out


def _known(name: str, modules: Iterable[str]) -> str | None:
    """``name`` if it is a module, else its longest prefix that is one (``None`` if none is)."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        cand = ".".join(parts[:i])
        if cand in modules:
            return cand
    return None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def imports_of(module: str, path: Path, is_pkg: bool, modules: Mapping) -> set[str]:
    """The modules of ``modules`` that ``module`` imports, anywhere in its source."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    here = module if is_pkg else module.rpartition(".")[0]
    targets: set[str] = set()
    typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If) and _is_type_checking(block.test)
                   for stmt in block.body for n in ast.walk(stmt)}
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            targets |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")
                base = base[:len(base) - (node.level - 1)] if node.level > 1 else base
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            for a in node.names:
                sub = f"{source}.{a.name}"
                targets.add(sub if a.name != "*" and sub in modules else source)
    edges = {_known(t, modules) for t in targets}
    return {t for t in edges if t is not None and t != module}


def import_graph(root: Path, *packages: str) -> dict[str, set[str]]:
    """Module -> the modules of ``packages`` it imports (written imports only)."""
    modules = {m: v for package in packages for m, v in module_names(root, package).items()}
    return {m: imports_of(m, f, is_pkg, modules) for m, (f, is_pkg) in modules.items()}


def find_cycle(graph: Mapping[str, Iterable[str]]) -> list[str] | None:
    """One cycle of ``graph`` as ``[a, b, ..., a]``, or ``None`` if it has none (depth-first search)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def test_dpsynth_has_no_import_cycle():
    graph = import_graph(SRC, "dpsynth")
    assert "dpsynth.release.protocol" in graph and "dpsynth.synthesizer" in graph
    assert "dpsynth.release.ledger" in graph["dpsynth.release.protocol"]  # relative imports resolved
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle in src/dpsynth: " + " -> ".join(cycle)


def test_the_book_has_no_import_cycle_and_the_library_never_imports_it():
    graph = import_graph(SRC, "dpsynth", "dpsynth_book")
    assert "dpsynth_book.studies" in graph["dpsynth_book.experiments.censoring"]  # relative imports resolved
    assert "dpsynth.registry" in graph["dpsynth_book.plots"]  # the library, imported by its absolute name
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle in src/: " + " -> ".join(cycle)
    into_book = sorted(f"{m} -> {t}" for m, targets in graph.items() if m.split(".")[0] == "dpsynth"
                       for t in targets if t.split(".")[0] == "dpsynth_book")
    assert not into_book, into_book


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


def _reach(graph: Mapping[str, Iterable[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_result_files_studies_and_shipped_are_layered():
    """Result files at the bottom, the study driver above them, the list of shipped studies on top."""
    graph = import_graph(SRC, "dpsynth", "dpsynth_book")
    assert "dpsynth_book.result_files" in graph["dpsynth_book.studies"]
    assert "dpsynth_book.studies" in graph["dpsynth_book.shipped"]
    assert not {"dpsynth_book.shipped", "dpsynth_book.studies", "dpsynth"} & _reach(graph, "dpsynth_book.result_files")
    assert "dpsynth_book.shipped" not in _reach(graph, "dpsynth_book.studies")

"""The import graph of the packages under ``src/``: every written import, read with ``ast``.

Every ``import`` and ``from ... import`` statement counts, at the top of a module or inside a
function (a lazy import hides a cycle, it does not remove it). Relative imports are resolved;
``from . import x`` where ``x`` is a submodule is an edge to that submodule, and an import of a
name from a package is an edge to the package's ``__init__``. Only written imports are edges:
that importing ``a.b.c`` first runs ``a`` and ``a.b`` is Python's doing, not a dependency of the
module. Imports under ``if TYPE_CHECKING:`` are for type checkers only and never run, so they are
not edges. Dynamic imports (``importlib.import_module``) are not seen.

Used by ``tests/test_imports.py`` (the library) and ``tests/book/test_book_imports.py`` (the compendium).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

__all__ = ["SRC", "module_names", "imports_of", "import_graph", "find_cycle", "reach"]

#: The folder of the packages.
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


def reach(graph: Mapping[str, Iterable[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen

"""The compendium's imports: no cycle through the library, the library imported by its name, layered study code."""

from __future__ import annotations

from import_graph import SRC, find_cycle, import_graph, reach


def test_the_book_has_no_import_cycle_and_the_library_never_imports_it():
    graph = import_graph(SRC, "dpsynth", "dpsynth_book")
    assert "dpsynth_book.studies" in graph["dpsynth_book.experiments.censoring"]  # relative imports resolved
    assert "dpsynth.registry" in graph["dpsynth_book.plots"]  # the library, imported by its absolute name
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle in src/: " + " -> ".join(cycle)
    into_book = sorted(f"{m} -> {t}" for m, targets in graph.items() if m.split(".")[0] == "dpsynth"
                       for t in targets if t.split(".")[0] == "dpsynth_book")
    assert not into_book, into_book


def test_result_files_studies_and_shipped_are_layered():
    """Result files at the bottom, the study driver above them, the list of shipped studies on top."""
    graph = import_graph(SRC, "dpsynth", "dpsynth_book")
    assert "dpsynth_book.result_files" in graph["dpsynth_book.studies"]
    assert "dpsynth_book.studies" in graph["dpsynth_book.shipped"]
    assert not {"dpsynth_book.shipped", "dpsynth_book.studies", "dpsynth"} & reach(graph, "dpsynth_book.result_files")
    assert "dpsynth_book.shipped" not in reach(graph, "dpsynth_book.studies")

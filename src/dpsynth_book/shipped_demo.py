"""Shipped demonstrations: what a live demonstration on a book page printed, kept with the shipped results.

A page that shows a tool at work (a fit, the commands a user types) would spend most of its build
compiling and sampling. Like a study, a demonstration follows the results mode
(:func:`dpsynth_book.result_files.results_mode`):

* ``"off"`` (quick and smoke scale): it runs, live;
* ``"write"`` (``make results``): it runs and what it printed is written to
  ``results/<name>.json`` with its parameters and provenance;
* ``"use"`` (``make book``): the shipped file is read, after checking that it was made with the
  same parameters, so the page shows what the demonstration printed when the results were computed,
  and says when.

What is shipped is only what the page shows (printed text, a table's first rows), never data.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from dpsynth.paths import atomic_write

from .result_files import ShippedResultsError, machine_text, provenance, results_dir, results_mode

__all__ = ["Demo", "run_or_load", "demo_path"]


@dataclass(frozen=True)
class Demo:
    """What a demonstration printed, and whether it ran now or is read from the shipped results.

    Attributes
    ----------
    output : dict
        The demonstration's JSON-able output.
    live : bool
        True if it ran in this process (modes ``"off"`` and ``"write"``).
    created : str
        When it ran (ISO 8601, UTC) for a shipped one; empty when live.
    machine : str
        The machine it ran on, for a shipped one.
    """

    output: dict
    live: bool
    created: str = ""
    machine: str = ""

    def when(self) -> str:
        """``"when this page was built"`` or ``"when the shipped results were computed (<date>, ...)"``."""
        if self.live:
            return "when this page was built"
        return (f"when the shipped results were computed ({self.created[:10]}, {machine_text(self.machine)}; "
                f"`make results` runs them again, and `make book SCALE=quick` runs them live)")


def demo_path(name: str, folder: str | Path | None = None) -> Path:
    """The shipped file of demonstration ``name``: ``results/<name>.json``."""
    return (Path(folder) if folder is not None else results_dir()) / f"{name}.json"


def run_or_load(name: str, params: Mapping, run: Callable[[], dict], *, mode: str | None = None,
         folder: str | Path | None = None) -> Demo:
    """Run demonstration ``name`` or read what it printed from the shipped results.

    Parameters
    ----------
    name : str
        File stem of the shipped demonstration, e.g. ``"own_data-cli"``.
    params : mapping
        Everything the demonstration depends on (JSON-able); a shipped file made with other
        parameters is refused.
    run : callable
        Runs the demonstration and returns its JSON-able output.
    mode : {"off", "write", "use"}, optional
        Default: :func:`dpsynth_book.result_files.results_mode`.
    folder : path-like, optional
        Folder of the shipped files (default ``results/``).

    Raises
    ------
    ShippedResultsError
        In mode ``"use"``, if the file is missing or was made with other parameters.
    """
    m = results_mode(mode)
    path = demo_path(name, folder)
    key = json.loads(json.dumps(dict(params), sort_keys=True, default=str))
    if m == "use":
        if not path.exists():
            raise ShippedResultsError(
                f"no shipped demonstration {path.name} in {path.parent.name}/: run `make results`, or build at "
                f"quick scale with `make book SCALE=quick` (which runs it live).")
        stored = json.loads(path.read_text())
        if stored.get("params") != key:
            raise ShippedResultsError(
                f"the shipped demonstration {path.name} was made with other parameters ({stored.get('params')}, "
                f"not {key}): recompute it with `make results`.")
        prov = stored.get("provenance", {})
        return Demo(stored["output"], live=False, created=prov.get("created", ""), machine=prov.get("machine", ""))
    import time

    t0 = time.perf_counter()
    output = run()
    if m == "write":
        record = {"params": key, "output": output,
                  "provenance": provenance({}, replicates=1, seed=0, elapsed_seconds=time.perf_counter() - t0,
                                           workers=1)}
        text = json.dumps(record, indent=1, sort_keys=True, default=str)
        atomic_write(path, lambda tmp: Path(tmp).write_text(text))
    return Demo(output, live=True)

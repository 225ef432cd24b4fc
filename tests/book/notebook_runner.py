"""Run a chapter notebook through papermill and collect its outputs (for the smoke tests)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import nbformat
import papermill

from dpsynth import registry

REPO = Path(__file__).resolve().parents[2]


@dataclass
class ExecutedNotebook:
    """Outputs of an executed notebook, grouped by kind."""

    outputs: list

    def _data(self, mime: str) -> str:
        return "\n".join(
            "".join(o["data"].get(mime, "")) for o in self.outputs if "data" in o
        )

    @property
    def stream_text(self) -> str:
        return "\n".join("".join(o.get("text", "")) for o in self.outputs if o["output_type"] == "stream")

    @property
    def markdown(self) -> str:
        return self._data("text/markdown")

    @property
    def html(self) -> str:
        return self._data("text/html")

    @property
    def plain(self) -> str:
        return self._data("text/plain")

    @property
    def n_images(self) -> int:
        return sum("image/png" in o.get("data", {}) for o in self.outputs)


def read_executed(path: Path) -> ExecutedNotebook:
    """The outputs of an executed notebook file; asserts that no output is an error."""
    nb = nbformat.read(path, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o["output_type"] == "error"]
    return ExecutedNotebook(outputs)


def run_notebook(name: str, tmp_path: Path, *, use_cache: bool = True, **parameters) -> ExecutedNotebook:
    """Execute ``notebooks/<name>.ipynb`` with ``parameters`` into ``tmp_path``.

    With ``use_cache`` the study cache goes to ``tmp_path/cache`` unless ``cache_dir`` is given.
    The cache folder reaches the kernel as ``$DPSYNTH_CACHE`` (which :func:`dpsynth_book.paths.cache_dir`
    reads), not as a parameter, so no temporary path is written into the page.
    Raises if a cell fails (papermill) and asserts that no output is an error.
    """
    import os

    cache = parameters.pop("cache_dir", str(tmp_path / "cache") if use_cache else None)
    out = tmp_path / f"{name}.ipynb"
    before = os.environ.get("DPSYNTH_CACHE")
    try:
        if cache is not None:
            os.environ["DPSYNTH_CACHE"] = str(cache)
        papermill.execute_notebook(
            str(REPO / "notebooks" / f"{name}.ipynb"), str(out), parameters=parameters,
            kernel_name="python3", cwd=str(REPO), progress_bar=False,
        )
    finally:
        if before is None:
            os.environ.pop("DPSYNTH_CACHE", None)
        else:
            os.environ["DPSYNTH_CACHE"] = before
    executed = read_executed(out)
    nb = nbformat.read(out, as_version=4)
    text = "\n".join([executed.stream_text, executed.markdown, executed.html, executed.plain]
                      + ["".join(c.source) for c in nb.cells if c.cell_type == "markdown"])
    assert_registry_labels(text)
    return executed


def assert_registry_labels(text: str) -> None:
    """Every "Name (guarantee)" label in ``text`` carries the registry's guarantee for that name."""
    wrong = []
    for s in registry.SYNTHESIZERS:
        if s.pattern or s.guarantee is None:
            continue
        for m in re.finditer(re.escape(s.name) + r" \((none|aDP|DP)\)", text):
            # "Censor_w (aDP)" must not match inside "Censor_w-pub (DP)": the name is followed by " ("
            if m.group(1) != s.guarantee:
                wrong.append(m.group(0))
    assert not wrong, f"labels that disagree with the registry: {sorted(set(wrong))}"

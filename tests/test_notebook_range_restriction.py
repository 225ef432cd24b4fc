"""Smoke test: the range-restriction chapter runs end to end with tiny parameters."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "notebooks" / "range_restriction.ipynb"


@pytest.mark.slow
def test_range_restriction_notebook_runs(tmp_path):
    papermill = pytest.importorskip("papermill")
    out = tmp_path / "range_restriction.ipynb"
    papermill.execute_notebook(
        str(NOTEBOOK), str(out), kernel_name="python3", progress_bar=False, cwd=str(REPO),
        parameters=dict(R=2, n=40, ns=[40, 80], draws=200, tune=200, cache_dir=str(tmp_path / "cache")),
    )
    nb = nbformat.read(out, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "\n".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "privacy invariants hold" in text
    assert sum("image/png" in o.get("data", {}) for o in outputs) >= 4
    md = "\n".join(o["data"].get("text/markdown", "") for o in outputs if "data" in o)
    assert "Where the slides' inequalities hold" in md and "whole-term reading B'" in md
    assert list((tmp_path / "cache").glob("range_restriction-*.nc"))

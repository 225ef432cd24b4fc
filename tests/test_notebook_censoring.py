"""Smoke test: the censoring chapter runs end to end with tiny parameters (papermill)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_censoring_notebook_runs(tmp_path):
    papermill = pytest.importorskip("papermill")
    out = tmp_path / "censoring.ipynb"
    papermill.execute_notebook(
        str(REPO / "notebooks" / "censoring.ipynb"),
        str(out),
        parameters=dict(n=300, R=2, eps_grid=[4, 3], draws=150, tune=150, chains=2, downscale_eps=4,
                        fig1_eps=1.0, release_eps=3, release_months=1, seed=3,
                        cache_dir=str(tmp_path / "cache"), workers=1),
        kernel_name="python3",
        cwd=str(REPO),
        progress_bar=False,
    )
    import nbformat

    nb = nbformat.read(out, as_version=4)
    text = "\n".join(
        o.get("text", "") + str(o.get("data", {}).get("text/markdown", "")) + str(o.get("data", {}).get("text/plain", ""))
        for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
    )
    assert "Delta <= eps/2 in all 2 replicates" in text
    assert "failed R-hat or ESS" in text

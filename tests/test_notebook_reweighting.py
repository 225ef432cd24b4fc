"""Smoke test: the re-weighting chapter runs end to end with tiny parameters."""

from __future__ import annotations

import pytest

from notebook_runner import run_notebook


@pytest.mark.slow
def test_reweighting_notebook_runs(tmp_path):
    nb = run_notebook(
        "reweighting", tmp_path, n=120, replicates=2, draws=150, tune=150, contraction_draws=150,
        contraction_tune=150, contraction_ns=[60, 120], n_syn=4, tol=0.05,
    )
    assert "re-weighting invariants hold" in nb.stream_text
    assert nb.n_images >= 8
    assert "**Figure 11.**" in nb.markdown and "Re-weighting CW" in nb.markdown
    assert list((tmp_path / "cache").glob("reweighting-*.nc"))

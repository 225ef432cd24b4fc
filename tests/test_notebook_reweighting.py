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
    # privacy figures name the neighbour relation; eps under both relations; composed eps of the n_syn sets
    assert "one record removed" in nb.markdown and "one record replaced" in nb.markdown
    assert "eps (remove)" in nb.html and "eps (replace)" in nb.html
    assert "4 × eps" in nb.markdown
    # one draw per synthetic data set, compared with record-wise mixing
    assert "**Table 1b.**" in nb.markdown and "distinct draws" in nb.markdown
    # registry labels: Unweighted is not private
    assert "Unweighted (none)" in nb.html and "Unweighted (aDP)" not in nb.html + nb.markdown
    # divergences in the results and in the convergence table
    assert "divergences" in nb.html and "divergent transitions" in nb.markdown
    assert list((tmp_path / "cache").glob("reweighting-*.nc"))

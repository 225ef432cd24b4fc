"""Smoke test: the range-restriction chapter runs end to end with tiny parameters."""

from __future__ import annotations

import pytest

from notebook_runner import run_notebook


@pytest.mark.slow
def test_range_restriction_notebook_runs(tmp_path):
    nb = run_notebook("range_restriction", tmp_path, R=2, n=40, ns=[40, 80], draws=200, tune=200)
    assert "privacy invariants hold" in nb.stream_text
    assert nb.n_images >= 4
    assert "Where the slides' inequalities hold" in nb.markdown and "whole-term reading B'" in nb.markdown
    # eps under both neighbour relations, named
    assert "eps (remove)" in nb.html and "eps (replace)" in nb.html
    assert "one record removed" in nb.markdown and "one record replaced" in nb.markdown
    # registry labels: Unweighted is not private, the range variants are aDP
    assert "Unweighted (none)" in nb.html and "A[0.4,1.8] (aDP)" in nb.html and "B'[0.6,1.2] (aDP)" in nb.html
    assert "Unweighted (aDP)" not in nb.html + nb.markdown + nb.plain
    # divergences in the convergence table; one draw per synthetic data set
    assert "divergences (total)" in nb.html and "divergent" in nb.markdown
    assert "One draw per data set" in nb.markdown
    assert "SPEC" not in nb.markdown + nb.html
    assert list((tmp_path / "cache").glob("range_restriction-*.nc"))

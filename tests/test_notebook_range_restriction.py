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
    assert list((tmp_path / "cache").glob("range_restriction-*.nc"))

"""Smoke test: the tutorial notebook runs end to end through papermill with tiny parameters."""

from __future__ import annotations

import pytest

from notebook_runner import run_notebook


@pytest.mark.slow
def test_tutorial_runs_with_tiny_parameters(tmp_path):
    nb = run_notebook("tutorial", tmp_path, use_cache=False, n=150, draws=200, tune=200, eps=4.0, seed=3)
    assert "What this shows" in nb.markdown
    assert "failed the R-hat, ESS or divergence checks" in nb.stream_text
    assert "Censor_w-pub (DP)" in nb.plain and "Unweighted (none)" in nb.plain
    assert nb.n_images == 2

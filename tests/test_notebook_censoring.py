"""Smoke test: the censoring chapter runs end to end with tiny parameters (papermill)."""

from __future__ import annotations

import pytest

from notebook_runner import run_notebook


@pytest.mark.slow
def test_censoring_notebook_runs(tmp_path):
    nb = run_notebook(
        "censoring", tmp_path, n=300, R=2, eps_grid=[4, 3], draws=150, tune=150, chains=2, downscale_eps=4,
        fig1_eps=1.0, release_eps=3, release_months=1, mix_eps=4, seed=3, workers=1,
    )
    text = nb.stream_text + nb.markdown + nb.plain
    assert "Delta <= eps/2 in all 2 replicates" in text
    assert "failed (R-hat, ESS or divergences)" in text
    assert "eps (remove)" in text and "eps (replace)" in text
    assert "Censor_w-pub (DP)" in text and "PH-paper (DP)" in text
    assert "Figure 9." in text and "record-wise-mixed" in text
    assert "posterior draw picked at random for each record" not in text
    assert list((tmp_path / "cache").glob("censoring*.nc"))

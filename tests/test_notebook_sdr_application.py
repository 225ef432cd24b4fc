"""Smoke test: the SDR application chapter runs end to end with tiny parameters."""

from __future__ import annotations

import pytest

from notebook_runner import run_notebook


@pytest.mark.slow
def test_sdr_application_notebook_runs(tmp_path):
    nb = run_notebook(
        "sdr_application", tmp_path, scale="quick", n1=60, n2=60, draws1=100, tune1=100,
        draws2=100, tune2=100, n_syn=3, replicates1=2, tol=0.05,
    )
    assert "privacy invariants hold" in nb.stream_text
    assert "Table 2 at eps = 5" in nb.html and "stand-in" in nb.html
    assert "one record removed" in nb.html and "one record replaced" in nb.html
    assert "PH-paper (DP)" in nb.html and "Censor_w (aDP)" in nb.html and "Unweighted (none)" in nb.html
    assert "Unweighted (aDP)" not in nb.html + nb.markdown
    assert "divergences" in nb.html
    assert "Privacy (Part 1)" in nb.markdown and "one posterior draw" in nb.markdown
    assert nb.n_images == 6
    assert list((tmp_path / "cache").glob("sdr_censoring-*.nc"))

"""Smoke test: the tutorial notebook runs end to end through papermill with tiny parameters."""

from __future__ import annotations

import json
from pathlib import Path

import papermill as pm
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_tutorial_runs_with_tiny_parameters(tmp_path):
    out = tmp_path / "tutorial.ipynb"
    pm.execute_notebook(
        str(ROOT / "notebooks" / "tutorial.ipynb"), str(out),
        parameters={"n": 150, "draws": 200, "tune": 200, "eps": 4.0, "seed": 3},
        kernel_name="python3", cwd=str(ROOT / "notebooks"), progress_bar=False,
    )
    nb = json.loads(out.read_text())
    texts = [
        "".join(o.get("data", {}).get("text/markdown", ""))
        for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])
    ]
    assert any("What this shows" in t for t in texts)
    images = [o for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert len(images) == 2

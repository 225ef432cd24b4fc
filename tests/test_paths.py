"""Project paths."""

from __future__ import annotations

from pathlib import Path

from dpsynth import paths


def test_project_root_is_the_checkout():
    root = paths.project_root()
    assert (root / "pyproject.toml").exists()
    assert (root / "src" / "dpsynth" / "paths.py").exists()
    assert root == Path(__file__).resolve().parents[1]


def test_cache_dir_default(monkeypatch):
    monkeypatch.delenv("DPSYNTH_CACHE", raising=False)
    assert paths.cache_dir() == paths.project_root() / "data" / "cache"


def test_cache_dir_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("DPSYNTH_CACHE", str(tmp_path))
    assert paths.cache_dir() == tmp_path

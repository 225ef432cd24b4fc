"""The checkout's folders: the repository root and the study cache (``dpsynth_book.paths``)."""

from __future__ import annotations

from pathlib import Path

from dpsynth_book import paths


def test_project_root_is_the_checkout():
    root = paths.project_root()
    assert (root / "pyproject.toml").exists()
    assert (root / "src" / "dpsynth_book" / "paths.py").exists() and (root / "src" / "dpsynth" / "paths.py").exists()
    assert root == Path(__file__).resolve().parents[2]


def test_cache_dir_default(monkeypatch):
    monkeypatch.delenv("DPSYNTH_CACHE", raising=False)
    assert paths.cache_dir() == paths.project_root() / "data" / "cache"


def test_cache_dir_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("DPSYNTH_CACHE", str(tmp_path))
    assert paths.cache_dir() == tmp_path

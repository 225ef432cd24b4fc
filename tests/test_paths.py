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


def test_atomic_write_writes_all_or_nothing(tmp_path):
    import stat

    import pytest

    from dpsynth.paths import atomic_write

    target = tmp_path / "sub" / "out.txt"
    atomic_write(target, lambda tmp: open(tmp, "w").write("done"))
    assert target.read_text() == "done" and stat.S_IMODE(target.stat().st_mode) == 0o644

    def fails(tmp):
        open(tmp, "w").write("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        atomic_write(target, fails)
    assert target.read_text() == "done"  # the old file is untouched
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.txt"]  # no temporary file left
    secret = atomic_write(tmp_path / "secret.json", lambda tmp: open(tmp, "w").write("{}"), mode=0o600)
    assert stat.S_IMODE(secret.stat().st_mode) == 0o600

"""This user's dpsynth folder and the atomic file writer (``dpsynth.paths``)."""

from __future__ import annotations

from dpsynth import paths


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


def test_home_is_made_owner_only_where_the_environment_says(monkeypatch, tmp_path):
    import stat

    monkeypatch.setenv(paths.HOME_ENV, str(tmp_path / "home"))
    home = paths.dpsynth_home()
    assert home == tmp_path / "home" and home.is_dir() and stat.S_IMODE(home.stat().st_mode) == 0o700

"""The home's secret key: created loudly, named by a public id, and moved only on purpose."""

from __future__ import annotations

import json

import pytest

from dpsynth.release.home import (
    KEY_FILE,
    KeyMismatchError,
    NewHomeWarning,
    check_key_id,
    has_key,
    import_home,
    key_id,
    mac,
    secret_key,
)
from dpsynth.validation import DataError


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DPSYNTH_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_a_new_home_is_never_silent(home):
    assert not has_key()
    with pytest.warns(NewHomeWarning, match="new secret key .*releases booked in another home do not count here"):
        key = secret_key()
    assert len(key) == 32 and (home / KEY_FILE).stat().st_mode & 0o077 == 0
    assert (home / "ledgers" / "HEADS.json").exists()  # written with the key: removed later, it is noticed
    first = key_id()
    assert len(first) == 16 and key_id() == first  # public, stable
    assert mac("a", b"x") != mac("b", b"x")  # purposes are separated


def test_an_edited_key_is_refused(home):
    with pytest.warns(NewHomeWarning):
        secret_key()
    (home / KEY_FILE).write_bytes(b"short")
    with pytest.raises(DataError, match="not 32 bytes"):
        secret_key()


def test_another_key_is_refused_with_the_fix(home, tmp_path, monkeypatch):
    with pytest.warns(NewHomeWarning):
        old = key_id()
    monkeypatch.setenv("DPSYNTH_HOME", str(tmp_path / "other"))
    with pytest.raises(KeyMismatchError, match=f"key {old}, and this home .* has no key yet.*dpsynth home import"):
        check_key_id(old, "syn.json")
    with pytest.warns(NewHomeWarning):
        new = key_id()
    with pytest.raises(KeyMismatchError, match=f"key {old}, but this home .* holds key {new}"):
        check_key_id(old, "syn.json")
    import_home(home)
    assert key_id() == old
    aside = tmp_path / "other" / f"replaced-{new}"
    assert (aside / KEY_FILE).exists()  # the replaced key is kept, not destroyed
    json.loads((tmp_path / "other" / "ledgers" / "HEADS.json").read_text())  # the moved home's head file


def test_import_refuses_what_is_not_a_home(home, tmp_path):
    with pytest.raises(DataError, match="not a dpsynth home"):
        import_home(tmp_path)

"""The home: its keys created loudly and kept owner-only, moved only by a merge that never lowers a total,
the moved home sealed, and no ledger rolled back behind the home's own record."""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpsynth
from dpsynth.release.home import (
    KEY_FILE,
    RECORD_FILE,
    SEAL_FILE,
    HomeSealedError,
    KeyMismatchError,
    NewHomeWarning,
    check_key_id,
    has_key,
    key_id,
    keyring,
    mac,
    secret_key,
)
from dpsynth.release.ledger import BudgetExceeded, Ledger, LedgerError, import_home
from dpsynth.validation import DataError


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DPSYNTH_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def use(monkeypatch, folder: Path) -> Path:
    """Work in the home ``folder`` from now on."""
    monkeypatch.setenv("DPSYNTH_HOME", str(folder))
    return folder


def new_home(monkeypatch, folder: Path) -> Path:
    use(monkeypatch, folder)
    with pytest.warns(NewHomeWarning):
        secret_key()
    return folder


def book(dataset: str, spend: float, relation: str = "remove") -> dict:
    """Book one strict-DP release of ``spend`` in this home's ledger of ``dataset`` (a charge never booked before)."""
    rec = {"relation": relation, "mechanism": "ph", "name": "PH", "guarantee": "DP", "eps": spend,
           "charges": [[f"{secrets.token_hex(4)}:draw:0", "release", spend, "DP"]], "spend": spend, "adp_eps": 0.0,
           "draw": 0, "rows": 10, "output": "<in memory>", "synthesizer": "abc", "overrides": []}
    with Ledger(dataset).locked() as b:
        return b.append(**rec)


def wages(n: int = 60, seed: int = 0) -> pd.DataFrame:
    return pd.DataFrame({"wage": np.random.default_rng(seed).lognormal(6, 0.5, n)})


def ph(df: pd.DataFrame, eps: float = 1.0):
    """A cheap strictly DP synthesizer (no model fit): its first release spends ``eps``."""
    return dpsynth.Synthesizer(df, "wage", mechanism="ph", eps=eps, bounds=(0, 20000), progress=False,
                               mode="research")


# ----------------------------------------------------------------------------------- the key


def test_a_new_home_is_never_silent(home):
    assert not has_key()
    with pytest.warns(NewHomeWarning, match="new secret key .*releases booked in another home do not count here"):
        key = secret_key()
    assert len(key) == 32 and (home / KEY_FILE).stat().st_mode & 0o077 == 0
    assert (home / "ledgers" / "HEADS.json").exists()  # written with the key: removed later, it is noticed
    assert (home / RECORD_FILE).exists()  # the high-water record, outside the ledgers folder
    first = key_id()
    assert len(first) == 16 and key_id() == first  # public, stable
    assert mac("a", b"x") != mac("b", b"x")  # purposes are separated


def test_an_edited_key_is_refused(home):
    with pytest.warns(NewHomeWarning):
        secret_key()
    (home / KEY_FILE).write_bytes(b"short")
    with pytest.raises(DataError, match="not 32 bytes") as err:
        secret_key()
    assert "backup" not in str(err.value) and "\n" not in str(err.value)


def test_a_key_open_to_group_or_others_is_refused_naming_chmod(home):
    """Acceptance (B): as ssh refuses a private key others can read."""
    with pytest.warns(NewHomeWarning):
        secret_key()
    path = home / KEY_FILE
    for mode in (0o644, 0o640, 0o606):
        os.chmod(path, mode)
        with pytest.raises(DataError, match=rf"secret key {re.escape(str(path))} is open to group or others .*"
                                            rf"Run `chmod 600 {re.escape(str(path))}`") as err:
            key_id()
        assert "\n" not in str(err.value)
    os.chmod(path, 0o600)
    key_id()


def test_every_file_the_home_writes_is_owner_only(home, tmp_path):
    """Acceptance (B): the key, the ledgers, the head file, the record and the lock are 0o600, the folders 0o700,
    whatever the umask."""
    old = os.umask(0o022)
    try:
        with pytest.warns(NewHomeWarning):
            s = ph(wages()).fit(seed=1)
        s.sample(seed=2, allow_research=True)
        book("cafe01", 1.0)
    finally:
        os.umask(old)
    seen = set()
    for p in [home, *home.rglob("*")]:
        mode = p.stat().st_mode & 0o777
        assert mode == (0o700 if p.is_dir() else 0o600), f"{p} has mode {mode:o}"
        seen.add(p.name)
    assert {KEY_FILE, "ledgers", "HEADS.json", "HEADS.lock", RECORD_FILE, f"{s.dataset}.jsonl"} <= seen


def test_another_key_is_refused_then_joins_the_keyring(home, tmp_path, monkeypatch):
    with pytest.warns(NewHomeWarning):
        old = key_id()
    use(monkeypatch, tmp_path / "other")
    with pytest.raises(KeyMismatchError, match=f"key {old}, and this home .* has no key yet.*dpsynth home import"):
        check_key_id(old, "syn.json")
    with pytest.warns(NewHomeWarning):
        new = key_id()
    with pytest.raises(KeyMismatchError, match=f"key {old}, but this home .* holds key {new}"):
        check_key_id(old, "syn.json")
    import_home(home)
    assert key_id() == new  # new fits keep this home's primary key
    assert list(keyring()) == [new, old] and check_key_id(old, "syn.json") == keyring()[old]
    assert (tmp_path / "other" / "keys" / f"{old}.key").stat().st_mode & 0o777 == 0o600
    assert not list((tmp_path / "other").glob("replaced-*"))  # nothing is moved aside


def test_import_refuses_what_is_not_a_home(home, tmp_path):
    with pytest.raises(DataError, match="not a dpsynth home"):
        import_home(tmp_path)


# ----------------------------------------------------------------------------------- import merges (A)


def test_importing_a_copy_of_this_homes_key_never_lowers_a_total(home, tmp_path, monkeypatch):
    """Acceptance (A1): a folder holding only a copy of this home's key is this home: importing it keeps every ledger
    (it used to move them aside, and the next release showed a total of 1 after 3.85 had been spent)."""
    new_home(monkeypatch, home)
    book("d1", 2.0)
    book("d1", 1.85)
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy2(home / KEY_FILE, copy / KEY_FILE)
    import_home(copy)
    assert Ledger("d1").total() == pytest.approx(3.85)
    book("d1", 1.0)
    assert Ledger("d1").total() == pytest.approx(4.85)
    assert sorted(p.name for p in home.iterdir()) == sorted([KEY_FILE, "ledgers", RECORD_FILE])
    assert (copy / SEAL_FILE).exists()


def test_a_fork_of_this_home_is_merged_keeping_every_release(home, tmp_path, monkeypatch):
    """Acceptance (A): two copies of one home that both released: the merge keeps every release of both, says so in
    the ledger, and the chain verifies."""
    new_home(monkeypatch, home)
    book("d1", 1.0)
    book("d1", 1.0)
    fork = tmp_path / "fork"
    shutil.copytree(home, fork)
    book("d1", 0.85)  # here, after the copy
    use(monkeypatch, fork)
    book("d1", 1.9)  # there
    book("d2", 0.5)  # a data set released there only
    use(monkeypatch, home)
    lines = import_home(fork)
    assert any("d1: the two ledgers forked after line 3" in line for line in lines)
    assert any("d2: copied" in line for line in lines)
    led = Ledger("d1")
    assert led.total() == pytest.approx(1.0 + 1.0 + 0.85 + 1.9)  # every release of both homes
    kinds = [r["kind"] for r in led.records()]
    assert kinds == ["open", "release", "release", "release", "merge", "release"]
    assert "merged fork" in led.summary()
    assert Ledger("d2").total() == pytest.approx(0.5)
    book("d1", 0.25)  # the merged chain goes on
    assert led.total() == pytest.approx(4.75 + 0.25)
    with pytest.raises(HomeSealedError, match=f"moved to {re.escape(str(home.resolve()))}"):
        use(monkeypatch, fork) and book("d1", 1.0)


def test_a_copy_extended_elsewhere_is_taken_whole(home, tmp_path, monkeypatch):
    new_home(monkeypatch, home)
    book("d1", 1.0)
    copy = tmp_path / "copy"
    shutil.copytree(home, copy)
    use(monkeypatch, copy)
    book("d1", 2.0)
    use(monkeypatch, home)
    assert any("extended by 1 line" in line for line in import_home(copy))
    led = Ledger("d1")
    assert led.total() == pytest.approx(3.0) and "merge" not in [r["kind"] for r in led.records()]


def test_a_moved_home_is_sealed(home, tmp_path, monkeypatch):
    """Acceptance (A2): after home B imports home A, A can neither fit, release, save nor book (it used to stay live,
    each home showing 3.85 while 4.8 was spent in all); the seal names B."""
    a = new_home(monkeypatch, tmp_path / "a")
    s = ph(wages()).fit(seed=1)
    s.sample(seed=1, allow_research=True)
    book("d1", 3.85)
    b = use(monkeypatch, tmp_path / "b")
    import_home(a)
    assert Ledger("d1").total() == pytest.approx(3.85) and Ledger(s.dataset).total() == pytest.approx(1.0)
    use(monkeypatch, a)
    where = re.escape(str(b.resolve()))
    for action, run in [("ledger append", lambda: book("d1", 0.95)), ("fit", lambda: ph(wages(seed=2)).fit(seed=3)),
                        ("release", lambda: s.sample(seed=2, allow_research=True)),
                        ("save", lambda: s.save(tmp_path / "s.json"))]:
        with pytest.raises(HomeSealedError, match=rf"no {action} here: .* was moved to {where} on .*DPSYNTH_HOME="
                                                  rf"{where}") as err:
            run()
        assert "\n" not in str(err.value)
    assert not (tmp_path / "s.json").exists()
    assert Ledger("d1").total() == pytest.approx(3.85)  # reading is allowed, nothing was booked
    seal = json.loads((a / SEAL_FILE).read_text())
    (a / SEAL_FILE).write_text(json.dumps({**seal, "moved_to": "/elsewhere"}))
    with pytest.raises(HomeSealedError, match="does not verify"):  # an edited seal still seals
        book("d1", 0.95)
    (a / SEAL_FILE).write_text(json.dumps(seal))
    use(monkeypatch, tmp_path / "c")
    with pytest.raises(DataError, match=rf"was moved to {where} .* already .* Import {where} instead"):
        import_home(a)


def test_a_home_with_another_key_keeps_both_ledgers_live(home, tmp_path, monkeypatch):
    """Acceptance (A): homes A and B (two keys) both released from the same data. After B imports A, both keys'
    ledgers count; a fit in B links the data set's two ids, and from then on a release from a file saved in either
    home sums both ledgers."""
    df = wages()
    a = new_home(monkeypatch, tmp_path / "a")
    sa = ph(df, eps=1.0).fit(seed=1)
    sa.sample(seed=1, allow_research=True)
    sa.save(tmp_path / "sa.json")
    new_home(monkeypatch, tmp_path / "b")
    sb = ph(df, eps=2.0).fit(seed=1)
    sb.sample(seed=1, allow_research=True)
    assert sb.dataset != sa.dataset and sb.linked == []  # two keys: two ids of the same data
    with pytest.raises(KeyMismatchError):
        dpsynth.Synthesizer.load(tmp_path / "sa.json")
    import_home(a)
    loaded = dpsynth.Synthesizer.load(tmp_path / "sa.json")  # A's key is in B's keyring
    assert Ledger(sa.dataset).total() == pytest.approx(1.0) and Ledger(sb.dataset).total() == pytest.approx(2.0)
    again = ph(df, eps=0.5)
    assert again.dataset == sb.dataset and again.linked == [sa.dataset]  # the data at hand, named under both keys
    again.fit(seed=2)  # records the link
    out = again.sample(seed=3, allow_research=True)
    assert "total is now 3.5" in out.attrs["privacy_statement"]
    assert Ledger(sa.dataset).total() == pytest.approx(3.5) == Ledger(sb.dataset).total()
    with pytest.raises(BudgetExceeded, match="has spent eps = 3.5"):  # a file saved in A counts B's releases too
        ph(df, eps=0.1).fit(seed=4).sample(seed=4, budget=3.55, allow_research=True)
    before = Ledger(sa.dataset).total()
    # paid before: its release adds nothing, and it books in A's ledger under A's key
    loaded.sample(seed=5, allow_research=True)
    assert Ledger(sa.dataset).total() == before


# ----------------------------------------------------------------------------------- no rollback (C)


def test_an_older_copy_of_the_ledgers_is_refused(home, tmp_path, monkeypatch):
    """Acceptance (A3): the ledgers folder put back from an earlier copy, head file and all, used to roll a total of
    5.75 back to 3.85; the home's own record refuses it, saying what happened."""
    new_home(monkeypatch, home)
    book("d1", 2.0)
    book("d1", 1.85)
    shutil.copytree(home / "ledgers", tmp_path / "earlier")
    book("d1", 1.9)
    assert Ledger("d1").total() == pytest.approx(5.75)
    shutil.rmtree(home / "ledgers")
    shutil.copytree(tmp_path / "earlier", home / "ledgers")
    with pytest.raises(LedgerError, match=r"holds 3 line\(s\) \(strict-DP total eps = 3.85\), but this home's "
                                          r"own record .* says it reached line 4 \(total eps = 5.75\): .*older "
                                          r"copy") as err:
        Ledger("d1").total()
    msg = str(err.value)
    assert "\n" not in msg and "backup" not in msg.lower()
    with pytest.raises(LedgerError, match="older copy"):
        book("d1", 0.1)


def test_the_record_cannot_be_removed_or_edited(home, monkeypatch):
    new_home(monkeypatch, home)
    book("d1", 1.0)
    record = home / RECORD_FILE
    doc = json.loads(record.read_text())
    doc["record"]["ledgers"]["d1"] = [0, 0.0]
    record.write_text(json.dumps(doc))
    with pytest.raises(LedgerError, match="record .* does not match its MAC"):
        Ledger("d1").total()
    record.unlink()
    with pytest.raises(LedgerError, match="record .* is missing: it was removed"):
        Ledger("d1").total()


def test_a_home_from_before_the_record_gets_one(home, monkeypatch):
    """A home written before the high-water record (an unmarked head file, no record) gets its record at its next
    append, holding every ledger as it verifies then."""
    from dpsynth.release.home import canon

    new_home(monkeypatch, home)
    book("d1", 1.0)
    book("d2", 2.0)
    heads_path = home / "ledgers" / "HEADS.json"
    heads = {d: h for d, h in json.loads(heads_path.read_text())["heads"].items() if d.isalnum()}
    heads_path.write_text(json.dumps({"heads": heads, "mac": mac("dpsynth-ledger-heads", canon(heads))}))
    (home / RECORD_FILE).unlink()
    assert Ledger("d1").total() == pytest.approx(1.0)  # the old home still reads
    book("d1", 0.5)
    record = json.loads((home / RECORD_FILE).read_text())["record"]["ledgers"]
    assert record == {"d1": [2, 1.5], "d2": [1, 2.0]}
    assert json.loads(heads_path.read_text())["heads"]["+record"] is True


# ----------------------------------------------------------------------------------- messages (d) and the CLI


def test_no_message_suggests_restoring_from_a_backup():
    """Acceptance (d): restoring ledgers or keys from a backup is what rolls a total back; no message says to."""
    root = Path(dpsynth.__file__).parent
    found = [f"{p.relative_to(root)}:{i}" for p in root.rglob("*.py")
             for i, line in enumerate(p.read_text().splitlines(), 1)
             if re.search(r"backup|restore (it|them|the)", line, flags=re.IGNORECASE)]
    assert found == []


def test_home_command_imports_and_shows(home, tmp_path, monkeypatch, capsys):
    from dpsynth.cli import run

    new_home(monkeypatch, home)
    book("d1", 3.85)
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy2(home / KEY_FILE, copy / KEY_FILE)
    assert run(["home", "import", str(copy)]) == 0
    out = capsys.readouterr().out
    assert f"merged {copy}" in out and f"sealed: {copy}" in out
    assert Ledger("d1").total() == pytest.approx(3.85)
    assert run(["home"]) == 0
    assert f"key id {key_id()}" in capsys.readouterr().out
    use(monkeypatch, copy)
    assert run(["home"]) == 0
    assert f"sealed: moved to {home.resolve()}" in capsys.readouterr().out
    assert run(["home", "import", str(copy), "--force"]) == 2  # nothing to force: an import merges

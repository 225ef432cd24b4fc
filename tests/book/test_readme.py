"""The entry documents: a README read in five minutes, and no relative link that leads nowhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MAX_README_LINES = 150

# [text](target) and [text](<target>), images included; reference-style definitions "[x]: target"
INLINE = re.compile(r"!?\[[^\]]*\]\(\s*(?:<([^>]+)>|([^)\s]+))(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.MULTILINE)


def relative_links(text: str) -> list[str]:
    """Targets of Markdown links that point into the repository (no scheme, not only an anchor)."""
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)  # code blocks hold no links
    targets = [a or b for a, b in INLINE.findall(text)] + REFERENCE.findall(text)
    return [t for t in targets if not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", t) and not t.startswith("#")]


def test_readme_is_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) < MAX_README_LINES, f"README.md has {len(lines)} lines; keep it under {MAX_README_LINES}"


@pytest.mark.parametrize("doc", ["README.md", "CONTRIBUTING.md", "BENCHMARKS.md"])
def test_relative_links_exist(doc):
    path = ROOT / doc
    if not path.exists():
        pytest.skip(f"{doc} does not exist")
    links = relative_links(path.read_text(encoding="utf-8"))
    if doc == "README.md":
        assert links, "README.md should link to the book's pages, CONTRIBUTING.md, BENCHMARKS.md and LICENSE"
    missing = [t for t in links if not (path.parent / t.split("#")[0]).exists()]
    assert not missing, f"{doc} links to files that do not exist: {missing}"


def test_readme_links_the_entry_documents():
    links = {t.split("#")[0] for t in relative_links((ROOT / "README.md").read_text(encoding="utf-8"))}
    assert {"CONTRIBUTING.md", "BENCHMARKS.md", "LICENSE"} <= links


def test_link_finder():
    text = ("See [the book](book/intro.md), [x](<notebooks/a b.ipynb>), [web](https://example.org), "
            "[top](#layout), ![img](docs/i.png \"title\"), [m](mailto:a@b.c).\n\n[ref]: CONTRIBUTING.md\n"
            "```console\n[not](a/link.md)\n```\n")
    assert relative_links(text) == ["book/intro.md", "notebooks/a b.ipynb", "docs/i.png", "CONTRIBUTING.md"]


def _block(lang: str, contains: str = "") -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(rf"```{lang}\n(.*?)```", text, flags=re.DOTALL) if contains in b]
    assert blocks, f"README.md has no {lang} block with {contains!r}"
    return blocks[0]


@pytest.fixture
def new_user(tmp_path, monkeypatch):
    """A new user's folder and home."""
    from dpsynth.release.home import NewHomeWarning, secret_key

    monkeypatch.setenv("DPSYNTH_HOME", str(tmp_path / "home"))
    with pytest.warns(NewHomeWarning):
        secret_key()
    return tmp_path


@pytest.mark.slow
def test_the_readmes_python_example_runs_as_written(new_user, monkeypatch, capsys):
    """Acceptance (issue 27): the README's example runs, its budget included, and publishes the eps it asks for."""
    work = new_user / "python"
    work.mkdir()
    monkeypatch.chdir(work)
    code = _block("python")
    exec(compile(code, "README.md", "exec"), {})  # noqa: S102 - the README's own code
    out = capsys.readouterr().out
    assert "budget: eps = 2 with one record replaced" in out
    assert "eps = 2 with one record replaced for one released file" in out
    assert (work / "release1.csv").exists() and (work / "report1" / "report.html").exists()


@pytest.mark.slow
def test_the_readmes_commands_run_as_written(new_user):
    """Acceptance (issue 27): every command of the README's console block exits 0, in order, budgets included."""
    import shlex

    from dpsynth_book.public_data import fishing, islr_wage
    from dpsynth_book.shell import shell

    work = new_user / "shell"
    work.mkdir()
    islr_wage()[["wage", "education", "jobclass", "race", "year"]].to_csv(work / "wages.csv", index=False)
    fishing()[["mode", "income"]].to_csv(work / "trips.csv", index=False)
    for line in _block("console", "dpsynth fit").strip().splitlines():
        args = shlex.split(line)
        assert args[0] == "dpsynth"
        res = shell(args[1:], cwd=work)
        assert res.returncode == 0, (line, res.stderr[-2000:])
        if args[1] == "release":
            assert "eps = 2 with one record replaced" in res.stdout


def test_the_readme_s_guarantee_lists_are_the_registry_s():
    """The README's claim "Guarantees come from each mechanism's spec: none (...), aDP (...), DP (...)" restates the
    registry: every strictly DP mechanism a user can run is in its DP list, and nothing else is."""
    import re

    from dpsynth import mechanisms

    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    m = re.search(r"`DP` \(([^)]*)\)", text)
    assert m, "the README no longer lists the DP mechanisms"
    listed = {x.strip() for x in m.group(1).split(",")}
    dp = {s.name for s in mechanisms.specs() if s.guarantee == "DP" and s.alias_of is None and s.runnable
          and s.key != "ph_paper"}  # the papers' calibration of PH, shown for comparison only
    assert listed == dp, f"README lists {sorted(listed)}, the registry's DP mechanisms are {sorted(dp)}"

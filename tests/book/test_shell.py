"""``dpsynth`` commands run as a user would, shown on a book page (``dpsynth_book.shell``)."""

from __future__ import annotations

from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.fixture
def src_on_path(monkeypatch):
    """The subprocess imports this checkout's package, whatever the working directory."""
    monkeypatch.setenv("PYTHONPATH", SRC)


def test_shell_reports_an_error_as_one_line_and_exit_code_2(tmp_path, src_on_path):
    from dpsynth_book.shell import ShellResult, shell

    res = shell(["ledger", "missing.json"], cwd=tmp_path)
    assert isinstance(res, ShellResult)
    assert res.returncode == 2 and res.command == "dpsynth ledger missing.json"
    assert res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("dpsynth: error: ") and "'missing.json' does not exist" in lines[0]
    assert sorted(tmp_path.iterdir()) == []  # nothing written


def test_shell_runs_in_cwd(tmp_path, src_on_path):
    from dpsynth_book.shell import shell

    (tmp_path / "book.json").write_text("")  # named relative to cwd: found, and refused as no synthesizer
    res = shell(["ledger", "book.json"], cwd=tmp_path)
    assert res.returncode == 2 and "book.json is not a saved synthesizer" in res.stderr


def test_shell_help_exits_0(src_on_path):
    from dpsynth_book.shell import shell

    res = shell(["--help"])
    assert res.returncode == 0 and res.command == "dpsynth --help"
    assert res.stdout.startswith("usage: dpsynth") and "{fit,release,ledger,report,home}" in res.stdout
    assert "one\nconfidential column" not in res.stdout and "whole table" in " ".join(res.stdout.split())
    md = res.markdown()
    assert "$ dpsynth --help" in md and "usage: dpsynth" in md and "exit code" not in md


def test_shell_quotes_arguments_with_spaces(tmp_path, src_on_path):
    import shlex

    from dpsynth_book.shell import shell

    res = shell(["ledger", "my synth.json"], cwd=tmp_path)
    assert res.command == "dpsynth ledger 'my synth.json'"
    assert shlex.split(res.command) == ["dpsynth", "ledger", "my synth.json"]
    # the name reached the program as one argument
    assert res.returncode == 2 and "'my synth.json' does not exist" in res.stderr
    assert "$ dpsynth ledger 'my synth.json'" in res.markdown()


def test_shell_result_markdown_shows_the_command_output_and_a_failure():
    from dpsynth_book.shell import ShellResult

    ok = ShellResult(
        "dpsynth fit data.csv --out s.json",
        0,
        "Censor_uw (strict DP): eps = 4\n",
        "dpsynth: fitting ...\ndpsynth: done in 1.0 s\n\n",
    )
    md = ok.markdown()
    assert md == (
        "```console\n$ dpsynth fit data.csv --out s.json\nCensor_uw (strict DP): eps = 4\n"
        "dpsynth: fitting ...\ndpsynth: done in 1.0 s\n```"
    )
    bad = ShellResult("dpsynth ledger x.json", 2, "", "dpsynth: error: 'x.json' does not exist.\n")
    md = bad.markdown()
    assert md.startswith("```console\n$ dpsynth ledger x.json\ndpsynth: error: 'x.json' does not exist.\n```")
    assert md.endswith("(exit code 2)")
    quiet = ShellResult("dpsynth --help", 0, "", " \n").markdown()
    assert quiet.startswith("```console\n$ dpsynth --help\n") and quiet.endswith("```") and "exit code" not in quiet


def test_shell_markdown_shows_paths_as_a_user_reads_them(tmp_path):
    """A book page's console block names no temporary folder: the working folder is '.', ledgers $DPSYNTH_HOME."""
    from dpsynth.paths import dpsynth_home
    from dpsynth_book.shell import ShellResult

    r = ShellResult(command="dpsynth ledger s.json", returncode=0,
                    stdout=f"wrote {tmp_path}/release.csv\nledger {dpsynth_home()}/ledgers/abc.jsonl\n", stderr="",
                    cwd=str(tmp_path))
    md = r.markdown()
    assert str(tmp_path) not in md and str(dpsynth_home()) not in md
    assert "wrote ./release.csv" in md and "ledger $DPSYNTH_HOME/ledgers/abc.jsonl" in md

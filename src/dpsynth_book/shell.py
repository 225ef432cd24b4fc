"""``dpsynth`` commands run as a user at a terminal would, shown on a page as console blocks.

The book's pages show the command line at work (the chapter "Your own data", the README's commands in
the tests): :func:`shell` runs ``dpsynth <args>`` in a separate process and returns a :class:`ShellResult`,
whose :meth:`~ShellResult.markdown` is a console block (:func:`console_markdown`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["shell", "ShellResult", "console_markdown"]


@dataclass(frozen=True)
class ShellResult:
    """One ``dpsynth`` command run in a subprocess (:func:`shell`)."""

    command: str
    returncode: int
    stdout: str
    stderr: str

    cwd: str = ""

    def shown(self) -> str:
        """What it printed (stdout, then stderr's progress lines), with paths as a user reads them.

        The working folder is shown as ``.`` and this user's dpsynth folder (ledgers) as
        ``$DPSYNTH_HOME``, not as the temporary folders a book page runs in.
        """
        from dpsynth.paths import dpsynth_home

        out = "\n".join(t.rstrip() for t in (self.stdout, self.stderr) if t.strip())
        for folder, shown in ((self.cwd, "."), (str(dpsynth_home()), "$DPSYNTH_HOME")):
            if folder:
                out = out.replace(folder.rstrip("/") + "/", shown + "/").replace(folder, shown)
        return out

    def markdown(self) -> str:
        """The command and what it printed, as a console block (progress lines from stderr included)."""
        return console_markdown(self.command, self.shown(), self.returncode)


def console_markdown(command: str, shown: str, returncode: int = 0) -> str:
    """A console block: ``$ command`` and what it printed, then the exit code if it is not 0."""
    return f"```console\n$ {command}\n{shown}\n```" + (f"\n\n(exit code {returncode})" if returncode else "")


def shell(args: Sequence[str], *, cwd: str | Path | None = None) -> ShellResult:
    """Run ``dpsynth <args>`` as a separate process, as a user at a terminal would.

    The command is ``python -m dpsynth`` with this interpreter (the ``dpsynth`` script of the same
    installation); ``command`` shows it as ``dpsynth ...``.
    """
    import shlex
    import subprocess

    argv = [str(a) for a in args]
    done = subprocess.run(
        [sys.executable, "-m", "dpsynth", *argv], cwd=cwd, capture_output=True, text=True, check=False
    )
    return ShellResult(
        command=" ".join(["dpsynth", *map(shlex.quote, argv)]),
        returncode=done.returncode,
        stdout=done.stdout,
        stderr=done.stderr,
        cwd=str(Path(cwd).resolve()) if cwd is not None else "",
    )

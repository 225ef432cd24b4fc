"""The "Your own data" chapter's demonstrations: the Python API and the command line on CPS records.

Both fit the wage model on the first :data:`DEMO_RECORDS` records of the chapter's frame (fewer at
smoke scale) and show what a user sees. They are demonstrations, not studies: at paper scale the
page reads what they printed when the shipped results were computed (:mod:`dpsynth.shipped_demo`),
so the book build runs no MCMC; at quick and smoke scale they run live.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from ...shipped_demo import Demo, run_or_load
from .params import OwnDataParams
from .replicate import chapter_frame

__all__ = ["DEMO_RECORDS", "COVARIATES", "api_demo", "cli_demo", "cli_steps", "cli_markdown"]

#: Records of the demonstrations (the chapter frame's first ones).
DEMO_RECORDS = 2000
#: The covariates of the demonstrations' wage model.
COVARIATES = ("educ", "exper", "exper2", "ethnicity", "smsa", "region", "parttime")
#: MCMC settings of the demonstrations' fits.
DEMO_SAMPLER = {"draws": 1000, "tune": 500}


@contextlib.contextmanager
def _fresh_home():
    """A new, empty dpsynth folder (ledgers) for the demonstration, as a new user has: no release made
    elsewhere with the same records is in its ledger. Processes started meanwhile inherit it."""
    from ...paths import HOME_ENV

    before = os.environ.get(HOME_ENV)
    os.environ[HOME_ENV] = tempfile.mkdtemp(prefix="dpsynth-demo-home-")
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(HOME_ENV, None)
        else:
            os.environ[HOME_ENV] = before


def _frame(p: OwnDataParams):
    return chapter_frame(p, "dollars").head(DEMO_RECORDS)


def _params(p: OwnDataParams, **extra) -> dict:
    return {"scale": p.scale, "n": p.n, "records": DEMO_RECORDS, "covariates": list(COVARIATES),
            "sampler": DEMO_SAMPLER, **extra}


def api_demo(p: OwnDataParams, *, eps: float = 5.0, mode: str | None = None) -> Demo:
    """Fit ``Synthesizer(frame, "wage", covariates=..., eps=eps)`` and release one data set, with a new ledger.

    Output: ``records``, ``statement`` (the release's public statement), ``diagnostics`` (for the
    data holder), and ``head`` (the first synthetic rows, as ``{"columns", "rows"}``).
    """

    def run() -> dict:
        from ... import Synthesizer

        frame = _frame(p)
        with _fresh_home():
            synth = Synthesizer(frame, "wage", covariates=list(COVARIATES), model="lognormal_regression", eps=eps,
                                sampler=DEMO_SAMPLER, progress=False).fit(seed=1)
            synthetic = synth.sample(seed=2)
        head = synthetic.head()
        return {"records": len(frame), "statement": synthetic.attrs["privacy_statement"],
                "diagnostics": synth.privacy.diagnostics(),
                "head": {"columns": [str(c) for c in head.columns],
                         "rows": head.astype(object).where(head.notna(), None).values.tolist()}}

    return run_or_load("own_data-api", _params(p, eps=eps), run, mode=mode)


def cli_steps(covariates=COVARIATES, *, eps: float = 2.0, budget: float = 5.0) -> list[list[str]]:
    """The commands of the command-line demonstration: fit, two releases under a budget, the ledger."""
    return [
        ["fit", "wages.csv", "--target", "wage", "--covariates", *covariates, "--model", "lognormal_regression",
         "--eps", f"{eps:g}", "--draws", str(DEMO_SAMPLER["draws"]), "--tune", str(DEMO_SAMPLER["tune"]),
         "--seed", "3", "--out", "censor_ref.json"],
        ["release", "censor_ref.json", "--out", "release-1.csv", "--seed", "4", "--budget", f"{budget:g}"],
        ["release", "censor_ref.json", "--out", "release-2.csv", "--seed", "5", "--budget", f"{budget:g}"],
        ["ledger", "censor_ref.json"],
    ]


def cli_demo(p: OwnDataParams, *, mode: str | None = None) -> Demo:
    """Run :func:`cli_steps` with ``dpsynth`` in a scratch folder with a new ledger (each a new process, as at a
    terminal).

    Output: ``steps``, a list of ``{"command", "returncode", "stdout", "stderr"}`` with the scratch
    folder shown as ``.`` and the user's dpsynth folder as ``$DPSYNTH_HOME``.
    """
    steps = cli_steps()

    def run() -> dict:
        from ...cli import shell

        work = Path(tempfile.mkdtemp(prefix="dpsynth-cps-"))
        _frame(p).to_csv(work / "wages.csv", index=False)
        out = []
        with _fresh_home():
            for s in steps:
                r = shell(s, cwd=work)
                out.append({"command": r.command, "returncode": r.returncode, "shown": r.shown()})
        return {"records": len(_frame(p)), "steps": out}

    return run_or_load("own_data-cli", _params(p, steps=steps), run, mode=mode)


def cli_markdown(d: Demo) -> str:
    """The demonstration's commands and what they printed, as console blocks."""
    from ...cli import console_markdown

    return "\n\n".join(console_markdown(s["command"], s["shown"], s["returncode"]) for s in d.output["steps"])
